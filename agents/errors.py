"""One way every command answers bad input: one line saying what was wrong and what is allowed,
exit status 2, no traceback.

The Python API raises the exception itself (a :class:`~agents.policy_io.CheckpointError` for a
damaged checkpoint or policy folder, a :class:`~agents.ladder.LadderError` for a ladder file, a
:class:`~agents.records.RecordError` for a game record, an :class:`~envs.core.errors.StateError` for a
saved state, a :class:`~envs.core.errors.ConfigError` for a config value); a command prints the same
text after its own name, as argparse does for a bad flag:

    python -m training.league: error: checkpoints/sequence_v0/ppo-v4/policy.safetensors is not a valid ...

An error raised in a worker process (a league's games) comes back as the same exception type with
the same text, so it is answered the same way.
"""

from __future__ import annotations

import sys
from typing import Any, Callable, Sequence

from agents.ladder import LadderError
from agents.policy_io import CheckpointError
from agents.records import RecordError
from envs.core.errors import ConfigError, StateError

class InputError(ValueError):
    """Something a command was given that it cannot use and that no other error here names (a file
    that is not JSON, a file too large to be what it claims)."""


#: The errors that mean "something given to the command is wrong", never a bug of ours.
BAD_INPUT: tuple[type[BaseException], ...] = (CheckpointError, LadderError, RecordError, StateError, ConfigError,
                                               InputError)
#: The exit status of a command refusing its input (argparse's for a bad flag).
EXIT_BAD_INPUT = 2


def one_line(exc: BaseException) -> str:
    """The exception's text on one line."""
    return " ".join(str(exc).split())


def run_command(main: Callable[[Sequence[str] | None], Any], prog: str, argv: Sequence[str] | None = None,
                also: tuple[type[BaseException], ...] = ()) -> int:
    """Run a command's ``main``; bad input (:data:`BAD_INPUT`, and ``also``) is answered with one line
    on standard error and exit status 2. Returns the exit status."""
    try:
        result = main(argv)
    except BAD_INPUT + also as exc:
        # Ray raises a task's error as a subclass of its type whose text carries the remote traceback;
        # the error itself is its ``cause``
        cause = getattr(exc, "cause", None)
        print(f"{prog}: error: {one_line(cause if isinstance(cause, BaseException) else exc)}", file=sys.stderr)
        return EXIT_BAD_INPUT
    return result if isinstance(result, int) else 0

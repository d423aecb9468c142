"""``python -m training.evaluate``: the old name of the league command, ``python -m training.league``.

It runs the same command with the same options after a deprecation note; the old name goes in a
later minor version. Importing this module gives the league command's names, with a
``DeprecationWarning``.
"""

from __future__ import annotations

import sys
import warnings
from typing import Sequence

from training.league.__main__ import *  # noqa: F403  (the names the old module offered)
from training.league.__main__ import main as league_main

NOTE = ("python -m training.evaluate is now python -m training.league (same options); "
        "the old name will be removed in a later minor version")

if __name__ != "__main__":
    warnings.warn(f"training.evaluate is now training.league: {NOTE}", DeprecationWarning, stacklevel=2)


def main(argv: Sequence[str] | None = None) -> int:
    """The league command (:mod:`training.league`), after a deprecation note on standard error."""
    print(f"note: {NOTE}.", file=sys.stderr)
    return league_main(argv)


if __name__ == "__main__":
    sys.exit(main())

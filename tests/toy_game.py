"""The toy game (Nim with a hidden die), used to test the core without any real game.

Its files are laid out under ``tests/toy/`` exactly as ``docs/adding_a_game.md`` describes
(``envs/nim/rules.py``, ``envs/nim/game.py``, ``envs/nim/RULES.md``, ``envs/nim_v0.py``,
``agents/nim.py``). Importing this module puts those folders on the ``envs`` and ``agents``
package paths, so that ``envs.nim_v0`` imports like a real game; it is not in ``envs.NAMES``
unless a test adds it (see ``tests/test_adding_a_game.py``).
"""

from __future__ import annotations

import pathlib

import agents
import envs

TOY_ROOT = pathlib.Path(__file__).resolve().parent / "toy"
for _package, _folder in ((envs, TOY_ROOT / "envs"), (agents, TOY_ROOT / "agents")):
    if str(_folder) not in _package.__path__:
        _package.__path__.append(str(_folder))

from envs.nim.rules import NimState  # noqa: E402
from envs.nim_v0 import Game as NimGame  # noqa: E402
from envs.nim_v0 import env, raw_env  # noqa: E402

__all__ = ["TOY_ROOT", "NimGame", "NimState", "env", "raw_env"]

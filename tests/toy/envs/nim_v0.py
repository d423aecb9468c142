"""Nim with a hidden die (``nim_v0``): the toy game that tests/test_adding_a_game.py adds.

==================  ================================================================
Agents              ``player_0``, ``player_1``
Action space        ``Discrete(3)``: action ``k`` takes ``k + 1`` counters
Observation         ``Box(0, 1, (2,), float32)``: heap / starting heap, own die / 5
Rewards             +1 to whoever takes the last counter, −1 to the other
State               ``state()``: seat 0's observation, the seat to act (3), the other die / 5
Config keywords     ``heap`` (default 15)
Rules               ``envs/nim/RULES.md``
==================  ================================================================
"""

from envs.core.env import make_env_factories, make_parallel_env
from envs.nim.game import NimGame as Game

env, raw_env = make_env_factories(Game)
parallel_env = make_parallel_env(env, Game)

__all__ = ["Game", "env", "parallel_env", "raw_env"]

"""Players for every game, created by versioned id.

>>> import agents, envs
>>> agents.available("sequence_v0")
['sequence_v0/heuristic-v1', 'sequence_v0/random-v0', ...]
>>> bot = agents.make("sequence_v0/random-v0", seed=0)
>>> env = envs.make("sequence_v0", raw=True); env.reset(seed=0)
>>> bot.reset(seat=0, game=env.unwrapped.game)
>>> action = bot.act(env.observe("player_0"), env.unwrapped.player_view("player_0"))

Whole games are played by :func:`play_game` (or step by step with :class:`agents.runner.Runner`), and
:func:`ladder` says which agent of a game is strongest and how strong each one is.
Each game's own players live in ``agents/<game>.py`` (``sequence_v0`` -> ``agents/sequence.py``)
and register themselves when this package is imported.
"""

from __future__ import annotations

import importlib
import importlib.util

import envs
from agents.base import Agent, RandomAgent
from agents.registry import available, describe, make, register
from agents.runner import GameRecord, Runner, RunnerHooks, play_game


def agent_module(game_name: str) -> str:
    """Module holding a game's own players: ``"sequence_v0"`` -> ``"agents.sequence"``."""
    return f"agents.{game_name.rsplit('_v', 1)[0]}"


def load_game_agents(game_name: str) -> list[str]:
    """Register a game's players: its own module's (if it has one) and the random player.

    Called on import for every game in ``envs.NAMES``; returns the game's agent ids.
    """
    if importlib.util.find_spec(agent_module(game_name)) is not None:
        importlib.import_module(agent_module(game_name))
    register(f"{game_name}/random-v0", RandomAgent, "uniformly random among legal actions (seeded)")
    return available(game_name)


for _game in envs.NAMES:
    load_game_agents(_game)

# OpenSpiel's IS-MCTS at every game, where the openspiel extra is installed (left out otherwise).
from agents.ismcts import register_ismcts  # noqa: E402

register_ismcts(envs.NAMES)

# Search over any agent, and the shipped <game>/search-v1 ids.
import agents.rollout_search  # noqa: E402, F401

# Trained policies listed in checkpoints/index.json (loaded lazily, on first use).
from agents.checkpoint import register_index  # noqa: E402

register_index()

# Each game's rated agents: ``agents.ladder("pans_trial_v0")`` (the function; its module is
# ``agents.ladder`` for ``from agents.ladder import ...``).
from agents.ladder import LadderError, ladder  # noqa: E402

__all__ = [
    "Agent", "GameRecord", "LadderError", "RandomAgent", "Runner", "RunnerHooks", "agent_module", "available",
    "describe", "ladder", "load_game_agents", "make", "play_game", "register",
]

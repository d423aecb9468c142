"""Players for every game, created by versioned id.

>>> import agents
>>> agents.available("sequence_v0")
['sequence_v0/heuristic-v1', 'sequence_v0/random-v0', ...]
>>> bot = agents.make("sequence_v0/random-v0", seed=0)
>>> bot.reset(seat=0, config=env.unwrapped.game.config)
>>> action = bot.act(env.observe("player_0"), env.unwrapped.player_view("player_0"))
"""

from __future__ import annotations

import importlib
import importlib.util

import envs
from agents.base import Agent, RandomAgent
from agents.play import GameRecord, play_game
from agents.registry import available, describe, make, register

# Each game's own players (heuristics, search, trained checkpoints) register themselves on import.
for _package in ("sequence", "pans_trial", "dojo", "wizard_arena"):
    if importlib.util.find_spec(f"agents.{_package}") is not None:
        importlib.import_module(f"agents.{_package}")

for _game in envs.NAMES:
    register(f"{_game}/random-v0", RandomAgent, "uniformly random among legal actions (seeded)")

# Trained policies listed in checkpoints/index.json (loaded lazily, on first use).
from agents.checkpoint import register_index  # noqa: E402

register_index()

__all__ = ["Agent", "GameRecord", "RandomAgent", "available", "describe", "make", "play_game", "register"]

"""Nim with a hidden die: the Game (config, facts, observation, names)."""

from __future__ import annotations

import random

import numpy as np

from envs.core import Game
from envs.nim.rules import NUM_ACTIONS, NimState


class NimGame(Game):
    name = "nim_v0"
    state_class = NimState
    default_max_cycles = 50
    config_families = {"default": {}, "small heap": {"heap": 4}}
    benchmark_configs = {"default": {}}
    rule_variants = {"heap 21": {"heap": 21}}
    fuzz_games = 10
    fuzz_max_actions = 100
    # What the front ends draw (optional: without it, play/ shows text and move buttons)
    picture_module = "envs.nim.picture"

    def __init__(self, **config):
        super().__init__(**config)
        self.num_players = 2
        self.num_actions = NUM_ACTIONS
        self.observation_shape = (2,)

    def _validate_config(self, config):
        self.reject_unknown(config, {"heap"})
        heap = config.get("heap", 15)
        if isinstance(heap, bool) or not isinstance(heap, int) or heap < 1:
            raise self.config_error("heap", heap, "an integer >= 1")
        return {"heap": heap}

    def state_from_view(self, view, rng):
        secret = [rng.randrange(6), rng.randrange(6)]
        secret[view["seat"]] = view["my_secret"]
        s = NimState(self, random.Random(rng.random()), view["heap"], view["player"], secret)
        s.winner = view["winner"]
        return s

    def observe(self, state, player):
        return np.array([state.heap / self.config["heap"], state.secret[player] / 5], dtype=np.float32)

    # state(): the referee block of encode_state (seat 0's observation shows only its own die)
    referee_block_size = 1

    def encode_referee_block(self, state):
        return np.array([state.secret[1] / 5], dtype=np.float32)

    def action_to_string(self, action):
        return f"take {action + 1}"

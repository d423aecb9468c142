"""A tiny game (misère-free Nim with a hidden die) used to test the core without any real game."""

from __future__ import annotations

import random

import numpy as np

from envs.core import TERMINAL, Game, State
from envs.core.env import make_env_factories
from envs.core.fields import Field, Int, List, Optional, Record, Rng


class NimState(State):
    def __init__(self, game, rng, heap, player, secret):
        super().__init__(game)
        self.rng, self.heap, self.player, self.secret = rng, heap, player, secret
        self.winner = None

    def current_player(self):
        return TERMINAL if self.winner is not None else self.player

    def _legal_mask(self):
        mask = np.zeros(3, dtype=np.int8)
        if self.winner is None:
            mask[: min(3, self.heap)] = 1
        return mask

    def _apply(self, action):
        self.heap -= action + 1
        self.secret[self.player] = self.rng.randrange(6)
        if self.heap == 0:
            self.winner = self.player
        self.player = 1 - self.player

    def is_terminal(self):
        return self.winner is not None

    def returns(self):
        if self.winner is None:
            return [0.0, 0.0]
        return [1.0 if p == self.winner else -1.0 for p in range(2)]

    @property
    def phase(self):
        return "over" if self.winner is not None else "take"

    def player_view(self, player):
        return {"heap": self.heap, "player": self.player, "my_secret": self.secret[player], "seat": player,
                "winner": self.winner}

    def clone(self):
        other = NimState(self.game, random.Random(), self.heap, self.player, list(self.secret))
        other.rng.setstate(self.rng.getstate())
        other.winner = self.winner
        return other

    @classmethod
    def deal(cls, game, rng):
        return cls(game, rng, game.config["heap"], 0, [rng.randrange(6), rng.randrange(6)])

    @classmethod
    def saved_fields(cls, game):
        return Record(
            Field("rng", Rng()),
            Field("heap", Int(0, game.config["heap"])),
            Field("player", Int(0, 1)),
            Field("secret", List(Int(0, 5), size=2)),
            Field("winner", Optional(Int(0, 1))),
        )

    @classmethod
    def from_fields(cls, game, values):
        state = cls(game, values["rng"], values["heap"], values["player"], values["secret"])
        state.winner = values["winner"]
        return state

    def check_invariants(self):
        return [] if (self.heap == 0) == (self.winner is not None) else ["winner: set exactly when the heap is empty"]


class NimGame(Game):
    name = "nim_v0"
    state_class = NimState
    default_max_cycles = 50

    def __init__(self, **config):
        super().__init__(**config)
        self.num_players = 2
        self.num_actions = 3
        self.observation_shape = (2,)

    def _validate_config(self, config):
        self.reject_unknown(config, {"heap"})
        heap = config.get("heap", 15)
        if not isinstance(heap, int) or heap < 1:
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

    def action_to_string(self, action):
        return f"take {action + 1}"


env, raw_env = make_env_factories(NimGame)

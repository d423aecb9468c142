"""Nim with a hidden die: the state and the rules (standard library, numpy and envs.core only).

Two players take 1-3 counters from a heap in turn; whoever takes the last counter wins. After each
move the mover rolls a secret die that only they see (it changes nothing: it is there to test that
hidden information stays hidden).
"""

from __future__ import annotations

import random

import numpy as np

from envs.core import TERMINAL, State
from envs.core.fields import Field, Int, List, Optional, Record, Rng

TAKE_1, TAKE_2, TAKE_3 = 0, 1, 2
NUM_ACTIONS = 3


class NimState(State):
    def __init__(self, game, rng, heap, player, secret):
        super().__init__(game)
        self.rng, self.heap, self.player, self.secret = rng, heap, player, secret
        self.winner = None

    def current_player(self):
        return TERMINAL if self.winner is not None else self.player

    def _legal_mask(self):
        mask = np.zeros(NUM_ACTIONS, dtype=np.int8)
        if self.winner is None:
            mask[: min(NUM_ACTIONS, self.heap)] = 1
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

    def check_invariants(self):
        problems = []
        if not 0 <= self.heap <= self.game.config["heap"]:
            problems.append(f"heap {self.heap} outside [0, {self.game.config['heap']}]")
        if (self.heap == 0) != (self.winner is not None):
            problems.append("the game ends exactly when the heap is empty")
        return problems

    def clone(self):
        other = NimState(self.game, random.Random(), self.heap, self.player, list(self.secret))
        other.rng.setstate(self.rng.getstate())
        other.winner = self.winner
        return other

    # The two ways to make a state: deal a fresh game, or load the declared fields of a saved one
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

"""Players for the toy Nim: ``nim_v0/heuristic-v1`` leaves a multiple of four when it can."""

from __future__ import annotations

import numpy as np

from agents.base import Agent
from agents.registry import register
from envs.nim.rules import TAKE_1


class NimHeuristic(Agent):
    def act(self, observation, view):
        legal = np.flatnonzero(observation["action_mask"]).tolist()
        best = view["heap"] % 4 - 1 + TAKE_1
        return best if best in legal else legal[self.rng.randrange(len(legal))]


register("nim_v0/heuristic-v1", NimHeuristic, "takes the heap down to a multiple of four when it can")

"""The interface every player kind shares: random, heuristic, search and trained agents.

An agent only ever sees what its seat may know:

* ``observation`` is the environment's observation dict for that seat
  (``{"observation": ndarray, "action_mask": int8 ndarray}``);
* ``view`` is ``env.unwrapped.player_view(agent_name)``, a JSON-compatible dict.

It must return a legal action id. ``reset(seat, config)`` is called before every game with the
seat index (0 for ``player_0``) and the game's full config dict.
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np


class Agent:
    """Base class. Subclasses override :meth:`act` (and :meth:`reset` if they keep state)."""

    #: Versioned registry id, e.g. ``"sequence_v0/random-v0"`` (set by the registry).
    agent_id: str = ""

    def __init__(self, game_name: str, seed: int | None = None) -> None:
        self.game_name = game_name
        self.seed = seed
        self.rng = random.Random(seed)
        self.seat = 0
        self.config: dict[str, Any] = {}

    def reset(self, seat: int, config: dict[str, Any]) -> None:
        self.seat = seat
        self.config = dict(config)

    def act(self, observation: dict[str, np.ndarray], view: dict[str, Any]) -> int:
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.agent_id or self.game_name}>"


class RandomAgent(Agent):
    """Uniformly random among the legal actions given by the mask; seeded."""

    def act(self, observation: dict[str, np.ndarray], view: dict[str, Any]) -> int:
        legal = np.flatnonzero(observation["action_mask"])
        if len(legal) == 0:
            raise ValueError(f"{self.agent_id}: asked to act with an empty action mask")
        return int(legal[self.rng.randrange(len(legal))])

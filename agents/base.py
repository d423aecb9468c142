"""The interface every player kind shares: random, heuristic, search and trained agents.

An agent only ever sees what its seat may know:

* ``observation`` is the environment's observation dict for that seat
  (``{"observation": ndarray, "action_mask": int8 ndarray}``);
* ``view`` is ``env.unwrapped.player_view(agent_name)``, a JSON-compatible dict.

It must return a legal action id. ``reset(seat, game)`` is called before every game with the seat
index (0 for ``player_0``) and the configured :class:`~envs.core.game.Game`: its ``config`` (every
keyword filled in), its facts (``num_players``, ``num_teams``, ``team_of(seat)``) and its action
names (``action_to_string``). The ``Game`` holds no position: an agent never sees the true state.
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np

from envs.core.game import Game


class Agent:
    """Base class. Subclasses override :meth:`act` (and :meth:`reset` if they keep state)."""

    #: Versioned registry id, e.g. ``"sequence_v0/random-v0"`` (set by the registry).
    agent_id: str = ""
    #: False for an agent that decides from the observation alone: runners that step many tables
    #: (``training.ppo``, ``training.vector_env``) then hand it an empty ``view`` instead of building one.
    reads_view: bool = True

    def __init__(self, game_name: str, seed: int | None = None) -> None:
        self.game_name = game_name
        self.seed = seed
        self.rng = random.Random(seed)
        self.seat = 0
        self.game: Game | None = None
        self.config: dict[str, Any] = {}

    def reset(self, seat: int, game: Game) -> None:
        """Get ready to play ``seat`` of ``game`` (a configured :class:`Game`, never a dict)."""
        if not isinstance(game, Game):
            raise TypeError(
                f"{self.agent_id or type(self).__name__}.reset(seat, game) takes the configured Game "
                f"(env.unwrapped.game or envs.make_game(name, **config)), got {type(game).__name__}"
            )
        if game.name != self.game_name:
            raise ValueError(
                f"{self.agent_id or type(self).__name__} plays {self.game_name}, not {game.name}"
            )
        if isinstance(seat, bool) or not isinstance(seat, (int, np.integer)) or not 0 <= seat < game.num_players:
            raise ValueError(f"seat must be an integer in [0, {game.num_players}) for {game!r}, got {seat!r}")
        self.seat = int(seat)
        self.game = game
        self.config = game.config

    def act(self, observation: dict[str, np.ndarray], view: dict[str, Any]) -> int:
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.agent_id or self.game_name}>"


class RandomAgent(Agent):
    """Uniformly random among the legal actions given by the mask; seeded."""

    reads_view = False

    def act(self, observation: dict[str, np.ndarray], view: dict[str, Any]) -> int:
        legal = np.flatnonzero(observation["action_mask"])
        if len(legal) == 0:
            raise ValueError(f"{self.agent_id}: asked to act with an empty action mask")
        return int(legal[self.rng.randrange(len(legal))])

"""OpenSpiel's information-set Monte Carlo tree search as a tabletop agent: ``<game>/ismcts-v0``.

The agent plays any seat of any config of its game. At each decision it builds an OpenSpiel state
from its seat's view (:func:`envs.openspiel.state_from_view`) and asks OpenSpiel's Python
``ISMCTSBot`` (:func:`envs.openspiel.ismcts_bot`) for a move: every simulation starts from a fresh
guess at what the seat cannot see (the engine's ``state_from_view``), walks the tree by UCT and ends
with one random rollout (:class:`envs.openspiel.RolloutEvaluator`). It sees only what its seat may know.

The ids are registered only where OpenSpiel is installed (the ``openspiel`` extra): without it,
``agents.available()`` leaves them out and the rest of the package works as before.

The settings of ``ismcts-v0`` are fixed (an id keeps meaning the same player): :data:`SIMULATIONS`
simulations a move, UCT constant :data:`UCT_C`, random rollouts of :data:`ROLLOUT_ACTIONS` actions. The
search does not know how many actions the table has already taken, so it plans as if the step limit
were a whole game away.
"""

from __future__ import annotations

import importlib.util
import random
from typing import Any

import numpy as np

from agents.base import Agent
from agents.registry import register

#: Simulations per move of ``ismcts-v0``.
SIMULATIONS = 100
#: Exploration constant of the tree policy (UCT).
UCT_C = 2.0
#: Actions in each random rollout before it is scored (zeros for a game not over by then).
ROLLOUT_ACTIONS = 100
KIND = "ismcts-v0"


def openspiel_installed() -> bool:
    """Whether OpenSpiel (``pyspiel``) can be imported here."""
    return importlib.util.find_spec("pyspiel") is not None


class ISMCTSAgent(Agent):
    """OpenSpiel's ``ISMCTSBot`` at a tabletop seat; see the module docstring."""

    def __init__(self, game_name: str, seed: int | None = None, num_simulations: int = SIMULATIONS) -> None:
        super().__init__(game_name, seed=seed)
        if isinstance(num_simulations, bool) or not isinstance(num_simulations, int) or num_simulations < 1:
            raise ValueError(f"num_simulations must be an integer >= 1, got {num_simulations!r}")
        self.num_simulations = num_simulations
        self._openspiel_game: Any = None
        self._bot: Any = None

    def reset(self, seat: int, game: Any) -> None:
        from envs import openspiel

        super().reset(seat, game)
        search_seed = self.rng.randrange(2**31)
        self._openspiel_game = openspiel.load(game)
        self._bot = openspiel.ismcts_bot(self._openspiel_game, self.seat, self.num_simulations, search_seed,
                                         uct_c=UCT_C, rollout_actions=ROLLOUT_ACTIONS)
        self._guesses = random.Random(search_seed)

    def act(self, observation: dict[str, np.ndarray], view: dict[str, Any]) -> int:
        from envs import openspiel

        if self._bot is None:
            raise RuntimeError(f"{self.agent_id or 'ISMCTSAgent'}: call reset(seat, game) before act()")
        legal = np.flatnonzero(observation["action_mask"])
        if len(legal) == 1:
            return int(legal[0])
        state = openspiel.state_from_view(self._openspiel_game, view, self._guesses)
        return int(self._bot.step(state))


def register_ismcts(game_names: tuple[str, ...]) -> list[str]:
    """Register ``<game>/ismcts-v0`` for each game where OpenSpiel is installed; returns the ids."""
    if not openspiel_installed():
        return []
    ids = []
    for name in game_names:
        agent_id = f"{name}/{KIND}"
        register(agent_id, ISMCTSAgent,
                 f"OpenSpiel's information-set MCTS ({SIMULATIONS} simulations a move, random rollouts of "
                 f"{ROLLOUT_ACTIONS} actions; needs the openspiel extra)", searches=True)
        ids.append(agent_id)
    return ids

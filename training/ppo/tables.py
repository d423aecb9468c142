"""Many games stepped together on the engines, the learner's team against opponents.

The trainer and the evaluation use :class:`Tables` through a narrow interface: ``observe(rows)``,
``apply(i, action)``, ``advance(snapshot_act)``, ``learner_seat(i)``, and the ``finished``,
``active``, ``opp``, ``states``, ``dealt`` and ``*_seconds`` attributes. ``envs.vector`` is meant to
replace it behind the same interface.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

import agents
from agents.runner import seat_inputs
from agents.scoring import score_teams


class Outcome(NamedTuple):
    """One finished game, seen from the learner's team."""

    kind: str
    """the opponent kind it was dealt"""
    reward: float
    """the learner's final return"""
    won: bool
    """the learner's team took first place (a shared first place counts)"""
    draw: bool
    """no team won (a truncated game, or every team tied)"""
    rank: float
    """the learner team's fractional rank (1 = best), as ``agents.scoring.score_teams`` gives it"""
    truncated: bool
    """cut at the action limit before the end"""
    length: int
    """actions played"""
    side: int
    """the learner's team (side 0 moves first)"""


class Tables:
    """``n`` games in which one team is the learner and every other seat an opponent.

    ``deal(g) -> (seed, kind, opponent, team)`` sets up the ``g``-th game dealt (counting from
    ``first_game``): its deal seed, the opponent kind's name, the opponent (a factory
    ``seed -> Agent`` or ``("snapshot", index)``) and the learner's team. :meth:`advance` plays every
    non-learner seat until each table awaits a learner decision. A finished game is recorded in
    ``self.finished`` as an :class:`Outcome` and replaced by a new one, until ``max_games`` have been
    dealt (then the table goes idle).
    """

    def __init__(
        self,
        game: Any,
        n: int,
        deal: Callable[[int], tuple[int, str, Any, int]],
        max_actions: int,
        first_game: int = 0,
        max_games: int | None = None,
    ) -> None:
        self.game = game
        self.n = n
        self.deal = deal
        self.max_actions = max_actions
        self.dealt = first_game
        self.max_games = max_games
        self.num_players = game.num_players
        self.states: list[Any] = [None] * n
        self.learner: list[frozenset[int]] = [frozenset()] * n
        self.team: list[int] = [0] * n
        self.kind: list[str] = [""] * n
        self.opp: list[Any] = [None] * n  # dict seat -> Agent, or ("snapshot", index)
        self.length = [0] * n
        self.active = [True] * n
        self.finished: list[Outcome] = []
        self.agent_cache: dict[tuple[int, str, int], agents.Agent] = {}
        #: CPU seconds spent in agent opponents' decisions (views included) and snapshot forwards.
        self.opponent_seconds = 0.0
        self.snapshot_seconds = 0.0
        for i in range(n):
            self._new_game(i)

    def _new_game(self, i: int) -> None:
        if self.max_games is not None and self.dealt >= self.max_games:
            self.active[i] = False
            return
        seed, kind, opponent, team = self.deal(self.dealt)
        self.dealt += 1
        self.states[i] = self.game.new_initial_state(seed)
        self.team[i] = team
        self.learner[i] = frozenset(s for s in range(self.num_players) if self.game.team_of(s) == team)
        self.kind[i] = kind
        self.length[i] = 0
        if callable(opponent):  # an agent factory: one agent per opponent seat, reused between games
            seats = {}
            for s in range(self.num_players):
                if s in self.learner[i]:
                    continue
                key = (i, kind, s)
                agent = self.agent_cache.get(key)
                if agent is None:
                    agent = self.agent_cache[key] = opponent(seed * 31 + s)
                else:
                    agent.rng.seed(seed * 31 + s)
                agent.reset(s, self.game)
                seats[s] = agent
            self.opp[i] = seats
        else:
            self.opp[i] = opponent

    def learner_seat(self, i: int) -> int:
        return self.states[i].current_player()

    def _finish(self, i: int) -> tuple[float, bool]:
        """Record game ``i``; returns (learner reward, done)."""
        state = self.states[i]
        truncated = not state.is_terminal()
        returns = state.truncation_returns() if truncated else state.returns()
        winners, ranks = score_teams(self.game.team_returns(returns), decided=not truncated)
        reward = float(returns[min(self.learner[i])])
        team = self.team[i]
        self.finished.append(
            Outcome(self.kind[i], reward, team in winners, not winners, ranks[team], truncated, self.length[i], team)
        )
        self._new_game(i)
        return reward, True

    def _over(self, i: int) -> bool:
        return self.states[i].is_terminal() or self.length[i] >= self.max_actions

    def apply(self, i: int, action: int) -> None:
        self.states[i].apply_action(int(action))
        self.length[i] += 1

    def advance(self, snapshot_act: Callable[[int, list[int]], list[int]]) -> list[tuple[float, bool]]:
        """Play opponents everywhere; per table, the (reward, done) of the learner's last decision."""
        outcome = [(0.0, False)] * self.n
        pending = [i for i in range(self.n) if self.active[i]]
        while pending:
            waiting_snap: dict[int, list[int]] = {}
            still = []
            for i in pending:
                state = self.states[i]
                if self._over(i):
                    reward, done = self._finish(i)
                    if outcome[i][1] is False:
                        outcome[i] = (reward, done)
                    if self.active[i]:
                        still.append(i)
                    continue
                seat = state.current_player()
                if seat in self.learner[i]:
                    continue
                opp = self.opp[i]
                if isinstance(opp, dict):
                    t0 = time.process_time()
                    obs, view = seat_inputs(state, seat)
                    action = opp[seat].act(obs, view)
                    self.opponent_seconds += time.process_time() - t0
                    self.apply(i, action)
                    still.append(i)
                else:
                    waiting_snap.setdefault(opp[1], []).append(i)
            for index, tables in waiting_snap.items():
                t0 = time.process_time()
                actions = snapshot_act(index, tables)
                self.snapshot_seconds += time.process_time() - t0
                for i, a in zip(tables, actions):
                    self.apply(i, a)
                still.extend(tables)
            pending = still
        return outcome

    def observe(self, rows: list[int]) -> tuple[np.ndarray, np.ndarray]:
        obs = np.stack([self.game.observe(self.states[i], self.states[i].current_player()) for i in rows])
        mask = np.stack([self.states[i].legal_mask() for i in rows]).astype(bool)
        return obs, mask



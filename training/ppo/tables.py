"""The learner's team against opponents on many tables, stepped through ``envs.vector``.

The game states, their stacked observations and masks and the cap on actions live in an
:class:`envs.vector.PythonBackend`; this module adds what a trainer needs on top: who sits where
(the learner's team, opponent agents or a snapshot of the network), the deal of each new game, and
the record of finished games. The trainer and the evaluation use :class:`Tables` through a narrow
interface: ``observe(rows)``, ``play(rows, actions)``, ``advance(snapshot_act)``, ``learner_seat(i)``,
and the ``finished``, ``active``, ``opp``, ``states``, ``dealt`` and ``*_seconds`` attributes.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

import agents
from agents.scoring import score_teams
from envs.vector import PythonBackend, illegal_action


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
    dealt (then the table goes idle). Games are cut after ``max_actions`` actions.

    Each pass of :meth:`advance` moves every waiting table once in one ``backend.step_rows`` (agents and
    snapshot forwards choose first); the backend writes the observation and mask of each table's next
    seat, which the learner, the snapshots and the agents all read.
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
        self.backend = PythonBackend(game, n, max_steps=max_actions)
        #: the game at each table ended (by the rules or the cap) with the last action played there
        self.ended = [False] * n
        self.learner: list[frozenset[int]] = [frozenset()] * n
        self.team: list[int] = [0] * n
        self.kind: list[str] = [""] * n
        self.opp: list[Any] = [None] * n  # dict seat -> Agent, or ("snapshot", index)
        self.active = [True] * n
        self.finished: list[Outcome] = []
        self.agent_cache: dict[tuple[int, str, int], agents.Agent] = {}
        #: CPU seconds spent in agent opponents' decisions (views included) and snapshot forwards.
        self.opponent_seconds = 0.0
        self.snapshot_seconds = 0.0
        for i in range(n):
            self._new_game(i)

    @property
    def states(self) -> list[Any]:
        """The engine state at each table (the backend's own; an idle table keeps its last game)."""
        return self.backend.states

    def _new_game(self, i: int) -> None:
        if self.max_games is not None and self.dealt >= self.max_games:
            self.active[i] = False
            return
        seed, kind, opponent, team = self.deal(self.dealt)
        self.dealt += 1
        self.backend.reset_tables([i], [seed])
        self.ended[i] = False
        self.team[i] = team
        self.learner[i] = frozenset(s for s in range(self.num_players) if self.game.team_of(s) == team)
        self.kind[i] = kind
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
        return int(self.backend.current_seat[i])

    def _finish(self, i: int) -> tuple[float, bool]:
        """Record game ``i``; returns (learner reward, done)."""
        state = self.states[i]
        truncated = not state.is_terminal()
        returns = state.truncation_returns() if truncated else state.returns()
        winners, ranks = score_teams(self.game.team_returns(returns), decided=not truncated)
        reward = float(returns[min(self.learner[i])])
        team = self.team[i]
        length = self.backend.steps[i]
        self.finished.append(Outcome(self.kind[i], reward, team in winners, not winners, ranks[team], truncated,
                                     length, team))
        self._new_game(i)
        return reward, True

    def play(self, rows: list[int], actions: list[int]) -> None:
        """Table ``rows[j]`` plays ``actions[j]`` for its seat to act, all in one backend step.

        Raises :class:`~envs.core.errors.IllegalActionError` naming the table (before any table moves)
        if an action is not legal there."""
        if not rows:
            return
        backend = self.backend
        legal = backend.action_mask[rows, actions]
        if not legal.all():
            j = int(np.flatnonzero(legal == 0)[0])
            raise illegal_action(backend, rows[j], int(actions[j]))
        for i in backend.step_rows(rows, actions):
            self.ended[i] = True

    def advance(self, snapshot_act: Callable[[int, list[int]], list[int]]) -> list[tuple[float, bool]]:
        """Play opponents everywhere; per table, the (reward, done) of the learner's last decision."""
        outcome = [(0.0, False)] * self.n
        backend = self.backend
        pending = [i for i in range(self.n) if self.active[i]]
        while pending:
            waiting_snap: dict[int, list[int]] = {}
            still, rows, actions = [], [], []
            for i in pending:
                if self.ended[i]:
                    reward, done = self._finish(i)
                    if outcome[i][1] is False:
                        outcome[i] = (reward, done)
                    if self.active[i]:
                        still.append(i)
                    continue
                seat = int(backend.current_seat[i])
                if seat in self.learner[i]:
                    continue
                opp = self.opp[i]
                if isinstance(opp, dict):
                    t0 = time.process_time()
                    obs = {"observation": backend.observation[i].copy(), "action_mask": backend.action_mask[i].copy()}
                    agent = opp[seat]
                    action = agent.act(obs, self.states[i].player_view(seat) if agent.reads_view else {})
                    self.opponent_seconds += time.process_time() - t0
                    rows.append(i)
                    actions.append(action)
                    still.append(i)
                else:
                    waiting_snap.setdefault(opp[1], []).append(i)
            for index, tables in waiting_snap.items():
                t0 = time.process_time()
                snap_actions = snapshot_act(index, tables)
                self.snapshot_seconds += time.process_time() - t0
                rows.extend(tables)
                actions.extend(snap_actions)
                still.extend(tables)
            self.play(rows, actions)
            pending = still
        return outcome

    def observe(self, rows: list[int]) -> tuple[np.ndarray, np.ndarray]:
        """The stacked observations (float32) and legal masks (bool) of the seat to act at ``rows``."""
        return self.backend.observation[rows], self.backend.action_mask[rows].astype(bool)

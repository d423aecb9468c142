"""The one batch-play layer: a learner's team against opponents on many tables of :mod:`envs.vector`.

Everything that plays a learner against opponents in a batch stands on it: ``training.ppo``'s rollouts,
``training.evaluation``'s games, and the Gymnasium / SB3 views at the bottom of this module.

* :class:`Tables` — ``n`` tables of one :func:`envs.vector.make` batch (any backend: ``python``, the
  reference engines, or a faster one such as Sequence's ``numpy``), with autoreset off so that the caller
  deals each game: its seed, the opponent kind, the opponents and the learner's team, from
  ``deal(g)`` for the ``g``-th game. The learner is every seat of one team (or one seat); every other
  seat is played inside :meth:`Tables.advance` until each table awaits the learner again (conventions,
  point 11): agent opponents one decision at a time, frozen snapshots of the learner batched per
  snapshot. A finished game is recorded as an :class:`Outcome` and a new one dealt.
* :class:`SelfPlayVectorEnv` — the batched ``SelfPlayEnv``: a Gymnasium ``VectorEnv`` over :class:`Tables`
  with one learning seat per table, and :class:`SB3VecEnv`, its SB3 adapter (SB3 is imported only when
  that class is first used).

The Gymnasium view: at every table one seat learns and every other seat (team-mates included) is played by an opponent
from the pool *inside* ``step()``, until each table awaits the learner again; the learner sees only its
own decisions and receives its own final return. The tables are a :class:`Tables` with a one-seat learner.

>>> import agents, numpy as np
>>> from training.vector_env import SelfPlayVectorEnv, SB3VecEnv
>>> venv = SelfPlayVectorEnv("sequence_v0", 8, opponent_pool=[lambda: agents.make("sequence_v0/random-v0")])
>>> obs, infos = venv.reset(seed=0)                 # obs (8, 710); infos["seat"]: the learner's seat per table
>>> masks = venv.action_masks()                     # (8, 349) bool: the learner's legal actions
>>> obs, rewards, terminations, truncations, infos = venv.step(masks.argmax(axis=1))
>>> model = sb3_contrib.MaskablePPO("MlpPolicy", SB3VecEnv(venv))   # MaskablePPO reads action_masks()

* Seeding: ``reset(seed=s)`` makes everything that follows reproducible: each episode's deal, learner
  seat and opponents come from one generator seeded from ``s``; a later ``reset()`` without a seed deals
  on from that stream (Gymnasium's convention). The learner's seat is drawn afresh for every episode, so
  a policy learns every seat.
* Autoreset is same-step (Gymnasium's ``AutoresetMode.SAME_STEP``): where an episode ended, the
  observation returned is the next episode's first decision. ``infos["final_obs"]`` holds, where an
  episode ended, the learner's observation at its **last decision** of that episode (the batch deals the
  next game at once and keeps no observation of the final position), so a value bootstrapped on a
  truncated episode reads the learner's last decision, not the position the cap cut.
* ``infos``: ``"seat"`` (the learner's seat per table), ``"final_obs"`` / ``"_final_obs"`` and
  ``"episode_decisions"`` / ``"_episode_decisions"`` (the learner's decisions in the episode that ended).
* Deals where the game ends before the learner's first decision are thrown away and dealt again
  (``skipped_episodes`` counts them), as ``SelfPlayEnv`` does.
* Opponents are :class:`agents.base.Agent` objects from zero-argument factories, one per seat and
  episode, each asked with the seat's observation and view. Agents decide one position at a time, so
  they are asked table by table; all tables where an opponent is to act then move in one batch step.
* Actions must be legal (``action_masks()``): an illegal one raises
  :class:`~envs.core.errors.IllegalActionError` naming the table. MaskablePPO never proposes one.
"""

from __future__ import annotations

import time
from typing import Any, Callable, NamedTuple, Sequence

import numpy as np
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

import agents
import envs.vector
from agents.base import Agent
from agents.scoring import score_teams
from envs.core.game import Game, State

#: What ``deal(g)`` returns for the ``g``-th game: its seed, the opponent kind's name, the opponents (a
#: factory ``seed -> Agent``, one agent per opponent seat; a dict ``seat -> Agent`` of agents already reset
#: for their seats; or ``("snapshot", index)``) and the learner's team (its seat, for ``learner="seat"``).
Deal = tuple[int, str, Any, int]


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
    """the learner's team (side k is team k)"""


class Tables:
    """``n`` games of ``game`` in which one team is the learner and every other seat an opponent.

    ``deal(g)`` sets up the ``g``-th game dealt (counting from ``first_game``; see :data:`Deal`).
    :meth:`advance` plays every non-learner seat until each table awaits a learner decision. A
    finished game is recorded in ``finished`` as an :class:`Outcome` and replaced by a new one, until
    ``max_games`` have been dealt (then the table goes idle: ``active[i]`` False). Games are cut after
    ``max_actions`` actions. ``backend`` is the :mod:`envs.vector` backend the tables run on. The learner
    is every seat of its team (``learner="team"``), or one seat, its team-mates played as opponents
    (``learner="seat"``).

    The interface the trainer and the evaluation use: ``observe(rows)``, ``play(rows, actions)``,
    ``advance(snapshot_act)``, ``learner_seat(i)``, ``encode_state(rows)`` (the whole position, for a
    centralised critic), ``seat_inputs(rows)`` (what a teacher at the seat to act
    is handed), ``state(i)``, and the attributes ``n``, ``finished``, ``active``, ``opp``, ``learner``,
    ``team``, ``dealt`` and the CPU seconds ``opponent_seconds`` / ``snapshot_seconds``.

    Each pass of :meth:`advance` moves every waiting table once in one batch step (agents and snapshot
    forwards choose first); the batch writes the observation and mask of each table's next seat, which
    the learner, the snapshots and the agents all read.
    """

    def __init__(
        self,
        game: Game,
        n: int,
        deal: Callable[[int], Deal],
        max_actions: int,
        first_game: int = 0,
        max_games: int | None = None,
        backend: str = "python",
        learner: str = "team",
    ) -> None:
        if learner not in ("team", "seat"):
            raise ValueError(f"learner must be 'team' or 'seat', got {learner!r}")
        self.learns_seat = learner == "seat"
        self.batch = envs.vector.make(game.name, n, backend=backend, max_steps=max_actions, autoreset=False,
                                      copy=False, **game.config)
        self.game = self.batch.game
        self.n = n
        self.deal = deal
        self.max_actions = max_actions
        self.dealt = first_game
        self.max_games = max_games
        self.num_players = game.num_players
        self.learner: list[frozenset[int]] = [frozenset()] * n
        self.team: list[int] = [0] * n
        self.kind: list[str] = [""] * n
        self.opp: list[Any] = [None] * n  # dict seat -> Agent, or ("snapshot", index)
        self.active = [True] * n
        self.finished: list[Outcome] = []
        self.agent_cache: dict[tuple[int, str, int], agents.Agent] = {}
        #: (final returns, truncated, actions) of each table's game that ended in the last step, until recorded
        self._ended: dict[int, tuple[np.ndarray, bool, int]] = {}
        #: CPU seconds spent in agent opponents' decisions (views included) and snapshot forwards.
        self.opponent_seconds = 0.0
        self.snapshot_seconds = 0.0
        buffers = self.batch.observe()  # the batch's own buffers (copy=False), rewritten by every step
        self._observation, self._mask = buffers["observation"], buffers["action_mask"]
        for i in range(n):
            self._new_game(i)

    def _new_game(self, i: int) -> None:
        if self.max_games is not None and self.dealt >= self.max_games:
            self.active[i] = False
            return
        seed, kind, opponent, team = self.deal(self.dealt)
        self.dealt += 1
        self.batch.deal([i], [seed])
        if self.learns_seat:
            self.learner[i], team = frozenset((team,)), self.game.team_of(team)
        else:
            self.learner[i] = frozenset(s for s in range(self.num_players) if self.game.team_of(s) == team)
        self.team[i] = team
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
        """The seat to act at table ``i`` (one of the learner's while it awaits a learner decision)."""
        return int(self.batch.current_seat[i])

    def state(self, i: int) -> State:
        """A copy of table ``i``'s game as a reference engine state (changing it changes nothing here)."""
        return self.game.load(self.batch.save_state(i))

    def _finish(self, i: int) -> Outcome:
        """Record the game that ended at table ``i`` and deal the next."""
        returns, truncated, length = self._ended.pop(i)
        winners, ranks = score_teams(self.game.team_returns(returns.tolist()), decided=not truncated)
        reward = float(returns[min(self.learner[i])])
        team = self.team[i]
        outcome = Outcome(self.kind[i], reward, team in winners, not winners, ranks[team], truncated, length, team)
        self.finished.append(outcome)
        self._new_game(i)
        return outcome

    def play(self, rows: list[int], actions: list[int]) -> None:
        """Table ``rows[j]`` plays ``actions[j]`` for its seat to act, all in one batch step.

        Raises :class:`~envs.core.errors.IllegalActionError` naming the table (before any table moves)
        if an action is not legal there."""
        if not rows:
            return
        full = np.zeros(self.n, dtype=np.int64)
        full[rows] = actions
        active = np.zeros(self.n, dtype=bool)
        active[rows] = True
        _, rewards, _, truncations, infos = self.batch.step(full, active=active)
        for i in np.flatnonzero(infos["_final_returns"]).tolist():
            self._ended[i] = (infos["final_returns"][i].copy(), bool(truncations[i]), int(infos["episode_length"][i]))

    def advance(self, snapshot_act: Callable[[int, list[int]], list[int]]) -> list[Outcome | None]:
        """Play opponents everywhere until every table awaits the learner; per table, the first game that
        ended there since the learner's last decision (None where none did). Games that end before the
        learner's first decision in them are in ``finished`` too."""
        first: list[Outcome | None] = [None] * self.n
        pending = [i for i in range(self.n) if self.active[i]]
        while pending:
            waiting_snap: dict[int, list[int]] = {}
            still, rows, actions = [], [], []
            seats = self.batch.current_seat
            for i in pending:
                if i in self._ended:
                    outcome = self._finish(i)
                    if first[i] is None:
                        first[i] = outcome
                    if self.active[i]:
                        still.append(i)
                    continue
                seat = int(seats[i])
                if seat in self.learner[i]:
                    continue
                opp = self.opp[i]
                if isinstance(opp, dict):
                    t0 = time.process_time()
                    obs = {"observation": self._observation[i].copy(), "action_mask": self._mask[i].copy()}
                    agent = opp[seat]
                    action = agent.act(obs, self.batch.player_view(i) if agent.reads_view else {})
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
        return first

    def observe(self, rows: list[int]) -> tuple[np.ndarray, np.ndarray]:
        """The stacked observations (float32) and legal masks (bool) of the seat to act at ``rows``."""
        return self._observation[rows], self._mask[rows].astype(bool)

    def encode_state(self, rows: list[int]) -> np.ndarray:
        """The whole position (``Game.encode_state``, hidden information included) at each of ``rows``,
        stacked float32 ``(len(rows), *game.state_shape)``: a centralised critic's input, never a seat's."""
        return self.batch.encode_state(rows)

    def seat_inputs(self, rows: list[int]) -> list[tuple[int, int, dict[str, np.ndarray], dict[str, Any]]]:
        """``(table, seat, observation dict, player view)`` of the seat to act at each of ``rows``: what an
        agent there is handed (the teachers' input)."""
        seats = self.batch.current_seat
        return [(i, int(seats[i]), {"observation": self._observation[i].copy(), "action_mask": self._mask[i].copy()},
                 self.batch.player_view(i)) for i in rows]


class SelfPlayVectorEnv(VectorEnv):
    """``num_envs`` tables of ``game_name``; one learning seat each, opponents from ``opponent_pool``.

    A Gymnasium view of :class:`Tables` with a one-seat learner: each episode's deal seed, learner seat and
    opponents are drawn from one generator seeded by ``reset(seed=...)``."""

    metadata = {"autoreset_mode": AutoresetMode.SAME_STEP}

    def __init__(self, game_name: str, num_envs: int, config: dict[str, Any] | None = None,
                 opponent_pool: Sequence[Callable[[], Agent]] = (), seed: int = 0,
                 max_cycles: int | None = None, backend: str = "python") -> None:
        self.pool = list(opponent_pool)
        if not self.pool or not all(callable(f) for f in self.pool):
            raise ValueError("SelfPlayVectorEnv needs opponent_pool: a non-empty list of zero-argument agent factories")
        # The batch's own checks of the settings, and its spaces and cap (the tables are made at reset).
        probe = envs.vector.make(game_name, num_envs, backend=backend, max_cycles=max_cycles, **dict(config or {}))
        self.game = probe.game
        self.num_envs = probe.num_envs
        self.max_actions = probe.max_steps
        self.backend = probe.backend
        self.single_observation_space = probe.single_observation_space["observation"]
        self.single_action_space = probe.single_action_space
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self._rng = np.random.default_rng(seed)
        self.tables: Tables | None = None
        self.decisions = np.zeros(self.num_envs, dtype=np.int64)  # the learner's decisions in each table's episode
        self.skipped_episodes = 0

    def _deal(self, g: int) -> Deal:
        """Episode ``g``: a deal seed, the learner's seat and an opponent from the pool for every other seat."""
        rng, seats = self._rng, self.game.num_players
        seed = int(rng.integers(2**63))
        learner = int(rng.integers(seats))
        table: dict[int, Agent] = {}
        for s in range(seats):
            if s != learner:
                agent = self.pool[int(rng.integers(len(self.pool)))]()
                agent.rng.seed(int(rng.integers(2**63)))
                agent.reset(s, self.game)
                table[s] = agent
        return seed, "pool", table, learner

    @staticmethod
    def _no_snapshots(_index: int, _rows: list[int]) -> list[int]:
        raise RuntimeError("SelfPlayVectorEnv's opponents are agents from its pool, not snapshots")

    @property
    def learner(self) -> np.ndarray:
        """The learner's seat at every table."""
        self._need_reset("learner")
        return np.array([min(seats) for seats in self.tables.learner], dtype=np.int64)

    def _observe(self) -> np.ndarray:
        obs, self._masks = self.tables.observe(list(range(self.num_envs)))
        return obs.copy()

    # ----------------------------------------------------------------------------------------------
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        if seed is not None:  # a seed starts the stream; a reset without one deals on from where it is
            self._rng = np.random.default_rng(seed)
        self.tables = Tables(self.game, self.num_envs, self._deal, self.max_actions, backend=self.backend,
                             learner="seat")
        self.tables.advance(self._no_snapshots)
        self.skipped_episodes += len(self.tables.finished)  # games over before the learner's first decision
        self.tables.finished = []
        self.decisions[:] = 0
        self._learner_obs = self._observe()
        return self._learner_obs.copy(), {"seat": self.learner}

    def step(self, actions: Any):
        self._need_reset("step")
        tables, n = self.tables, self.num_envs
        tables.play(list(range(n)), np.asarray(actions).tolist())
        self.decisions += 1
        ended = tables.advance(self._no_snapshots)
        self.skipped_episodes += len(tables.finished) - sum(o is not None for o in ended)
        tables.finished = []
        done = np.array([o is not None for o in ended])
        rewards = np.array([o.reward if o else 0.0 for o in ended], dtype=np.float32)
        truncations = np.array([bool(o and o.truncated) for o in ended])
        final_obs = np.where(done[:, None], self._learner_obs.reshape(n, -1), 0.0).reshape(self._learner_obs.shape)
        episode_decisions = np.where(done, self.decisions, 0)
        self.decisions[done] = 0
        self._learner_obs = self._observe()
        infos = {"seat": self.learner, "final_obs": final_obs.astype(np.float32), "_final_obs": done.copy(),
                 "episode_decisions": episode_decisions, "_episode_decisions": done.copy()}
        return self._learner_obs.copy(), rewards, done & ~truncations, truncations, infos

    def action_masks(self) -> np.ndarray:
        """The learner's legal actions at every table, bool (N, A)."""
        self._need_reset("action_masks")
        return self._masks.copy()

    def _need_reset(self, what: str) -> None:
        if self.tables is None:
            raise RuntimeError(f"call reset() before {what}()")

    def close_extras(self, **kwargs: Any) -> None:
        pass


def _sb3_vec_env() -> type:
    """The SB3 adapter's class, made on first use: SB3 is imported only by those who adapt to it (the
    trainers and the evaluation import this module without it)."""
    from stable_baselines3.common.vec_env import VecEnv

    class SB3VecEnv(VecEnv):
        """SB3's ``VecEnv`` over a :class:`SelfPlayVectorEnv`; MaskablePPO finds ``action_masks()`` here."""

        def __init__(self, venv: SelfPlayVectorEnv) -> None:
            self.venv = venv
            super().__init__(venv.num_envs, venv.single_observation_space, venv.single_action_space)
            self._actions: np.ndarray | None = None
            self._seed: int | None = None

        def reset(self) -> np.ndarray:
            obs, _ = self.venv.reset(seed=self._seed)
            self._seed = None
            self.reset_infos = [{} for _ in range(self.num_envs)]
            return obs

        def seed(self, seed: int | None = None):
            self._seed = seed
            return [seed] * self.num_envs

        def step_async(self, actions: np.ndarray) -> None:
            self._actions = np.asarray(actions, dtype=np.int64)

        def step_wait(self):
            obs, rewards, terms, truncs, infos = self.venv.step(self._actions)
            dones = terms | truncs
            out = []
            for i in range(self.num_envs):
                info: dict[str, Any] = {}
                if dones[i]:
                    info["terminal_observation"] = infos["final_obs"][i]
                    info["TimeLimit.truncated"] = bool(truncs[i] and not terms[i])
                    info["episode"] = {"r": float(rewards[i]), "l": int(infos["episode_decisions"][i])}
                out.append(info)
            return obs, rewards, dones, out

        def action_masks(self) -> np.ndarray:
            return self.venv.action_masks()

        def close(self) -> None:
            self.venv.close()

        def get_attr(self, attr_name: str, indices: Any = None) -> list[Any]:
            return [getattr(self.venv, attr_name)] * len(self._indices(indices))

        def set_attr(self, attr_name: str, value: Any, indices: Any = None) -> None:
            setattr(self.venv, attr_name, value)

        def env_method(self, method_name: str, *args: Any, indices: Any = None, **kwargs: Any) -> list[Any]:
            if method_name == "action_masks":
                return list(self.venv.action_masks()[self._indices(indices)])
            raise AttributeError(f"SB3VecEnv has no per-table method {method_name!r}")

        def env_is_wrapped(self, wrapper_class: type, indices: Any = None) -> list[bool]:
            return [False] * len(self._indices(indices))

        def _indices(self, indices: Any) -> list[int]:
            if indices is None:
                return list(range(self.num_envs))
            if isinstance(indices, int):
                return [indices]
            return list(indices)

    SB3VecEnv.__qualname__ = "SB3VecEnv"
    return SB3VecEnv


def __getattr__(name: str) -> Any:
    if name == "SB3VecEnv":
        cls = globals()["SB3VecEnv"] = _sb3_vec_env()
        return cls
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["Deal", "Outcome", "SB3VecEnv", "SelfPlayVectorEnv", "Tables"]  # noqa: F822 (SB3VecEnv: __getattr__)

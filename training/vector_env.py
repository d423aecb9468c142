"""A single-agent vector view of many tables, for Gymnasium and SB3: the batched ``SelfPlayEnv``.

At every table one seat learns and every other seat (team-mates included) is played by an opponent
from the pool *inside* ``step()``, until each table awaits the learner again; the learner sees only its
own decisions and receives its own final return. The tables are one :mod:`envs.vector` batch.

>>> import agents, numpy as np
>>> from training.vector_env import SelfPlayVectorEnv, SB3VecEnv
>>> venv = SelfPlayVectorEnv("sequence_v0", 8, opponent_pool=[lambda: agents.make("sequence_v0/random-v0")])
>>> obs, infos = venv.reset(seed=0)                 # obs (8, 710); infos["seat"]: the learner's seat per table
>>> masks = venv.action_masks()                     # (8, 349) bool: the learner's legal actions
>>> obs, rewards, terminations, truncations, infos = venv.step(masks.argmax(axis=1))
>>> model = sb3_contrib.MaskablePPO("MlpPolicy", SB3VecEnv(venv))   # MaskablePPO reads action_masks()

* Seeding: ``reset(seed=s)`` makes everything that follows reproducible: the deals (the batch seed
  of :mod:`envs.vector`), each episode's learner seat and opponents (one generator seeded from ``s``).
  The learner's seat is drawn afresh for every episode, so a policy learns every seat.
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

from typing import Any, Callable, Sequence

import numpy as np
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space
from stable_baselines3.common.vec_env import VecEnv

import envs.vector
from agents.base import Agent


class SelfPlayVectorEnv(VectorEnv):
    """``num_envs`` tables of ``game_name``; one learning seat each, opponents from ``opponent_pool``."""

    metadata = {"autoreset_mode": AutoresetMode.SAME_STEP}

    def __init__(self, game_name: str, num_envs: int, config: dict[str, Any] | None = None,
                 opponent_pool: Sequence[Callable[[], Agent]] = (), seed: int = 0,
                 max_cycles: int | None = None, backend: str = "python") -> None:
        self.pool = list(opponent_pool)
        if not self.pool or not all(callable(f) for f in self.pool):
            raise ValueError("SelfPlayVectorEnv needs opponent_pool: a non-empty list of zero-argument agent factories")
        self.tables = envs.vector.make(game_name, num_envs, seed=seed, backend=backend, max_cycles=max_cycles,
                                       **dict(config or {}))
        self.game = self.tables.game
        self.num_envs = self.tables.num_envs
        self.single_observation_space = self.tables.single_observation_space["observation"]
        self.single_action_space = self.tables.single_action_space
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        n = self.num_envs
        self.learner = np.zeros(n, dtype=np.int64)
        self.decisions = np.zeros(n, dtype=np.int64)  # the learner's decisions in each table's episode
        self.opponents: list[dict[int, Agent]] = [{} for _ in range(n)]
        self._rng = np.random.default_rng(seed)
        self._obs: dict[str, np.ndarray] | None = None
        self.skipped_episodes = 0

    # ----------------------------------------------------------------------------------------------
    def _new_episode(self, i: int) -> None:
        seats = self.game.num_players
        learner = int(self._rng.integers(seats))
        self.learner[i] = learner
        self.decisions[i] = 0
        table: dict[int, Agent] = {}
        for s in range(seats):
            if s != learner:
                agent = self.pool[int(self._rng.integers(len(self.pool)))]()
                agent.rng.seed(int(self._rng.integers(2**63)))
                agent.reset(s, self.game)
                table[s] = agent
        self.opponents[i] = table

    def _play_opponents(self, rewards: np.ndarray, terminations: np.ndarray, truncations: np.ndarray,
                        final_obs: np.ndarray, ended: np.ndarray) -> None:
        """Let opponents move until every table awaits its learner; episodes that end are recorded in
        the arrays (the first end per table in this call) and replaced."""
        tables = self.tables
        obs = self._obs
        while True:
            waiting = tables.current_seat != self.learner
            if not waiting.any():
                return
            actions = np.zeros(self.num_envs, dtype=np.int64)
            for i in np.flatnonzero(waiting).tolist():
                seat = int(tables.current_seat[i])
                observation = {"observation": obs["observation"][i], "action_mask": obs["action_mask"][i]}
                agent = self.opponents[i][seat]
                actions[i] = agent.act(observation, tables.player_view(i) if agent.reads_view else {})
            obs, _, terms, truncs, infos = tables.step(actions, active=waiting)
            self._obs = obs
            self._record(infos, terms, truncs, rewards, terminations, truncations, final_obs, ended)

    def _record(self, infos: dict[str, Any], terms: np.ndarray, truncs: np.ndarray, rewards: np.ndarray,
                terminations: np.ndarray, truncations: np.ndarray, final_obs: np.ndarray, ended: np.ndarray) -> None:
        for i in np.flatnonzero(infos["_final_returns"]).tolist():
            if ended[i]:
                self.skipped_episodes += 1  # the next deal ended before the learner's first decision
            else:
                ended[i] = True
                rewards[i] = infos["final_returns"][i, self.learner[i]]
                terminations[i], truncations[i] = terms[i], truncs[i]
                final_obs[i] = self._learner_obs[i]
                self._episode_decisions[i] = self.decisions[i]
            self._new_episode(i)

    # ----------------------------------------------------------------------------------------------
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        self._obs, _ = self.tables.reset(seed=seed)
        for i in range(self.num_envs):
            self._new_episode(i)
        n = self.num_envs
        scratch = (np.zeros(n, dtype=np.float32), np.zeros(n, dtype=bool), np.zeros(n, dtype=bool))
        self._learner_obs = np.zeros((n, *self.single_observation_space.shape), dtype=np.float32)
        ended = np.zeros(n, dtype=bool)
        self._episode_decisions = np.zeros(n, dtype=np.int64)
        self._play_opponents(*scratch, self._learner_obs.copy(), ended)
        self.skipped_episodes += int(ended.sum())  # games over before the learner's first decision
        self._learner_obs = self._obs["observation"].copy()
        return self._learner_obs.copy(), {"seat": self.learner.copy()}

    def step(self, actions: Any):
        if self._obs is None:
            raise RuntimeError("call reset() before step()")
        n = self.num_envs
        rewards = np.zeros(n, dtype=np.float32)
        terminations = np.zeros(n, dtype=bool)
        truncations = np.zeros(n, dtype=bool)
        final_obs = np.zeros((n, *self.single_observation_space.shape), dtype=np.float32)
        ended = np.zeros(n, dtype=bool)
        self.decisions += 1
        self._episode_decisions = np.zeros(n, dtype=np.int64)
        obs, _, terms, truncs, infos = self.tables.step(np.asarray(actions))
        self._obs = obs
        self._record(infos, terms, truncs, rewards, terminations, truncations, final_obs, ended)
        self._play_opponents(rewards, terminations, truncations, final_obs, ended)
        self._learner_obs = self._obs["observation"].copy()
        out_infos = {"seat": self.learner.copy(), "final_obs": final_obs, "_final_obs": ended.copy(),
                     "episode_decisions": self._episode_decisions, "_episode_decisions": ended.copy()}
        return self._learner_obs.copy(), rewards, terminations, truncations, out_infos

    def action_masks(self) -> np.ndarray:
        """The learner's legal actions at every table, bool (N, A)."""
        if self._obs is None:
            raise RuntimeError("call reset() before action_masks()")
        return self._obs["action_mask"].astype(bool)

    def close_extras(self, **kwargs: Any) -> None:
        pass


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


__all__ = ["SB3VecEnv", "SelfPlayVectorEnv"]

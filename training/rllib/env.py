"""What RLlib needs around our games: a seat-roles adapter for its PettingZoo wrapper, and a masked module.

Only :mod:`training.rllib.trainer` and the Ray workers it starts use this module. The adapter and the
policy mapping are plain Python; RLlib's wrapper (:func:`make_env`) and :class:`MaskedPolicyModule` need
``ray[rllib]`` (the ``rllib`` extra).

The adapter
-----------
:class:`SeatRolesEnv` is a PettingZoo AEC environment around a game's strict ``raw_env``. RLlib's
``PettingZooEnv`` wraps it (see :func:`make_env`), so what RLlib steps is our AEC env through RLlib's
own wrapper; the adapter only decides, once per episode, who plays which seat:

* one team, drawn per episode, is the **learning team**: every one of its seats is exposed to RLlib as
  ``"learner:player_<i>"`` and mapped to the one trained module ``"learner"`` (Sequence seat ``i`` is
  on team ``i % num_teams``; in games without teams every seat is its own team);
* every other seat draws one opponent kind from ``opponents``: a rule-based agent id
  (``"random-v0"``, ``"heuristic-v1"`` …) plays *inside* ``step()`` as part of the environment — RLlib
  never sees that seat — while the kind ``"self"`` exposes the seat as ``"snapshot:player_<i>"``,
  mapped by :func:`map_agent_to_module` to one of the frozen snapshot modules (earlier copies of the
  learner, never trained).

Observations are renamed for RLlib's action-masking module shape: ``{"observations": ...,
"action_mask": ...}`` instead of the environment's ``{"observation": ..., "action_mask": ...}``.
Rewards are the game's returns at the end, to every exposed seat. A deal that ends before any exposed
seat had a decision is dealt again (counted in ``skipped_episodes``).

The module
----------
:class:`MaskedPolicyModule` is an RLlib ``TorchRLModule`` whose policy network is the registered
``"mlp"`` architecture of :mod:`agents.policy_io` — so the trained policy exports to our safe policy
format without any conversion — with masked-out actions set to the smallest float before sampling, and
a separate value network of the same shape for PPO.
"""

from __future__ import annotations

import random
import zlib
from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv

import agents
from agents.registry import qualify
import envs
from agents.architectures import build_architecture
from training.settings import SELF

LEARNER = "learner"
"""Module id of the trained policy, and role prefix of the learning team's seats."""
SNAPSHOT = "snapshot"
"""Role prefix of seats played by a frozen snapshot module (the opponent kind ``"self"``)."""
ROLES = (LEARNER, SNAPSHOT)
OBS_KEY = "observations"
"""Observation key of RLlib's action-masking module shape (the env's own key is "observation")."""
ENV_NAME = "tabletop_rllib"


def exposed_id(role: str, seat_name: str) -> str:
    """RLlib's agent id of a seat played by ``role``: ``"learner:player_2"``."""
    return f"{role}:{seat_name}"


def split_id(agent_id: str) -> tuple[str, str]:
    """Inverse of :func:`exposed_id`: ``(role, seat_name)``."""
    role, _, seat_name = agent_id.partition(":")
    return role, seat_name


def snapshot_module_ids(slots: int) -> list[str]:
    return [f"{SNAPSHOT}_{k}" for k in range(slots)]


def map_agent_to_module(agent_id: str, episode: Any = None, *, slots: int = 0, **kwargs: Any) -> str:
    """RLlib's policy mapping: learning seats to ``"learner"``, snapshot seats to one frozen slot.

    The slot is drawn from the episode id and the seat (stable within an episode, spread across them).
    """
    role, seat_name = split_id(agent_id)
    if role == LEARNER:
        return LEARNER
    if role != SNAPSHOT or slots < 1:
        raise ValueError(f"agent {agent_id!r} has no module: roles are {ROLES}, snapshot slots {slots}")
    key = f"{getattr(episode, 'id_', '')}/{seat_name}".encode()
    return snapshot_module_ids(slots)[zlib.crc32(key) % slots]


def observation_space(game: str, config: dict[str, Any]) -> spaces.Dict:
    """The renamed observation space every exposed agent has."""
    inner = envs.make(game, raw=True, **config)
    space = inner.observation_space(inner.possible_agents[0])
    return spaces.Dict({OBS_KEY: space["observation"], "action_mask": space["action_mask"]})


def check_opponents(game: str, opponents: Sequence[str]) -> list[str]:
    """The opponent kinds, validated: agent kinds of ``game`` (ids without the game prefix) or "self"."""
    kinds = list(opponents)
    if not kinds:
        raise ValueError(f"at least one opponent kind is needed (e.g. random-v0, heuristic-v1, {SELF})")
    known = [a.split("/", 1)[1] for a in agents.available(game)]
    for kind in kinds:
        if kind != SELF and kind not in known:
            raise ValueError(f"unknown opponent {kind!r} for {game}; use {SELF!r} or one of {known}")
    return kinds


class SeatRolesEnv(AECEnv):
    """AEC view of one game in which only the learning team's and snapshot seats are agents.

    ``game``/``config``: the game and its config; ``opponents``: kinds drawn per opponent seat and
    episode (see the module docstring); ``seed``: seed of every draw (deals, teams, opponents);
    ``max_cycles``: the environment's truncation cap (None: the game's default).
    """

    metadata: ClassVar[dict[str, Any]] = {"name": ENV_NAME, "is_parallelizable": False, "render_modes": []}

    def __init__(
        self,
        game: str,
        config: dict[str, Any] | None = None,
        opponents: Sequence[str] = ("random-v0",),
        seed: int = 0,
        max_cycles: int | None = None,
    ) -> None:
        super().__init__()
        self.game_name = game
        self.config = dict(config or {})
        kwargs = dict(self.config)
        if max_cycles is not None:
            kwargs["max_cycles"] = max_cycles
        self.inner = envs.make(game, raw=True, **kwargs)
        self.opponent_kinds = check_opponents(game, opponents)
        self.num_players, self.num_teams = self.inner.game.num_players, self.inner.game.num_teams
        seats = self.inner.possible_agents
        self.possible_agents = [exposed_id(role, s) for s in seats for role in ROLES]
        space = observation_space(game, kwargs)
        self.observation_spaces = {a: space for a in self.possible_agents}
        self.action_spaces = {a: self.inner.action_space(seats[0]) for a in self.possible_agents}
        self.rng = random.Random(seed)
        self.skipped_episodes = 0
        self._exposed: dict[str, str] = {}
        self._bots: dict[str, agents.Agent] = {}

    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    # ------------------------------------------------------------------------------------------
    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        if seed is not None:
            self.rng = random.Random(seed)
        while True:
            self._deal()
            if self.agents and not self._game_over():
                return
            # The game ended before any exposed seat had a decision: nothing to learn from.
            self.skipped_episodes += 1

    def _deal(self) -> None:
        inner = self.inner
        inner.reset(seed=self.rng.randrange(2**31))
        learning_team = self.rng.randrange(self.num_teams)
        self._exposed, self._bots = {}, {}
        for seat, name in enumerate(inner.possible_agents):
            if self.inner.game.team_of(seat) == learning_team:
                self._exposed[name] = exposed_id(LEARNER, name)
                continue
            kind = self.opponent_kinds[self.rng.randrange(len(self.opponent_kinds))]
            if kind == SELF:
                self._exposed[name] = exposed_id(SNAPSHOT, name)
            else:
                bot = agents.make(qualify(self.game_name, kind), seed=self.rng.randrange(2**31))
                bot.reset(seat, inner.game)
                self._bots[name] = bot
        self.agents = list(self._exposed.values())
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.infos = {a: {} for a in self.agents}
        self._play_bots()

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        seen = self.inner.observe(split_id(agent)[1])
        return {OBS_KEY: seen["observation"], "action_mask": seen["action_mask"]}

    def step(self, action: Any) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            # The dead step of PettingZoo's protocol: the finished agent leaves.
            self.agents.remove(agent)
            for table in (self.rewards, self._cumulative_rewards, self.terminations, self.truncations, self.infos):
                del table[agent]
            if self.agents:
                self.agent_selection = self.agents[0]
            return
        self._cumulative_rewards[agent] = 0.0
        self.inner.step(int(action))  # strict: a masked-out action raises IllegalActionError
        self._play_bots()

    # ------------------------------------------------------------------------------------------
    def _game_over(self) -> bool:
        inner = self.inner
        name = inner.agent_selection
        return inner.terminations[name] or inner.truncations[name]

    def _play_bots(self) -> None:
        """Rule-based seats move until an exposed seat is to act or the game is over."""
        inner = self.inner
        while not self._game_over() and inner.agent_selection in self._bots:
            name = inner.agent_selection
            inner.step(int(self._bots[name].act(inner.observe(name), inner.player_view(name))))
        if not self._game_over():
            self.agent_selection = self._exposed[inner.agent_selection]
            return
        truncated = bool(inner.truncations[inner.agent_selection])
        for name, agent in self._exposed.items():
            # The raw env sets every seat's final return in ``rewards`` when the game ends.
            self.rewards[agent] = float(inner.rewards[name])
            self._cumulative_rewards[agent] = self.rewards[agent]
            self.terminations[agent] = not truncated
            self.truncations[agent] = truncated
        self.agent_selection = self.agents[0]


def _episode_agents_wrapper():
    from ray.rllib.env.wrappers.pettingzoo_env import PettingZooEnv

    class EpisodeAgentsPettingZooEnv(PettingZooEnv):
        """RLlib's ``PettingZooEnv`` for an AEC env whose agents differ from one episode to the next.

        RLlib's wrapper reads the agents and their spaces once, from its first reset; here every
        ``possible_agents`` id has its spaces, and ``agents`` is the current episode's set.
        """

        def __init__(self, env: AECEnv) -> None:
            super().__init__(env)
            self.possible_agents = list(env.possible_agents)
            self._agent_ids = set(self.possible_agents)
            self.observation_spaces = {a: env.observation_space(a) for a in self.possible_agents}
            self.action_spaces = {a: env.action_space(a) for a in self.possible_agents}
            self.observation_space = spaces.Dict(self.observation_spaces)
            self.action_space = spaces.Dict(self.action_spaces)
            self.agents = list(env.agents)

        def reset(self, *, seed: int | None = None, options: dict | None = None):
            result = super().reset(seed=seed, options=options)
            self.agents = list(self.env.agents)
            return result

    return EpisodeAgentsPettingZooEnv


def make_env(env_config: dict[str, Any]):
    """RLlib's env creator: our AEC game, seat roles assigned, inside RLlib's ``PettingZooEnv``.

    ``env_config`` holds ``game``, ``config``, ``opponents``, ``seed`` and ``max_cycles``; each env
    runner (``worker_index``) and vector slot (``vector_index``) gets its own seed.
    """
    worker = int(getattr(env_config, "worker_index", 0))
    vector = int(getattr(env_config, "vector_index", 0))
    seed = int(env_config.get("seed", 0)) * 1_000_003 + 1_000 * worker + vector
    adapter = SeatRolesEnv(
        env_config["game"],
        env_config.get("config", {}),
        opponents=env_config.get("opponents", ("random-v0",)),
        seed=seed,
        max_cycles=env_config.get("max_cycles"),
    )
    return _episode_agents_wrapper()(adapter)


# ----------------------------------------------------------------------------------------------
# The masked module (RLlib's action-masking RLModule shape)
try:
    from ray.rllib.core.rl_module.apis.value_function_api import ValueFunctionAPI as _ValueFunctionAPI
    from ray.rllib.core.rl_module.torch import TorchRLModule as _TorchRLModule
except ImportError as missing:  # the adapter above works without Ray; the module needs it
    _RAY_MISSING: ImportError | None = missing
else:
    _RAY_MISSING = None


if _RAY_MISSING is None:

    class MaskedPolicyModule(_TorchRLModule, _ValueFunctionAPI):
        """PPO module over ``{"observations", "action_mask"}``: masked policy logits and a value estimate.

        ``model_config``: ``hidden`` (list of layer widths, default ``[256, 256]``) and ``activation``
        (``"tanh"`` or ``"relu"``, default ``"tanh"``). ``pi`` is :mod:`agents.policy_io`'s ``"mlp"`` with
        :attr:`policy_arch_kwargs`; ``vf`` is the same shape with one output.
        """

        def setup(self) -> None:
            from ray.rllib.utils.torch_utils import FLOAT_MIN

            obs_space = self.observation_space[OBS_KEY]
            hidden = [int(w) for w in self.model_config.get("hidden", [256, 256])]
            activation = str(self.model_config.get("activation", "tanh"))
            obs_dim = int(np.prod(obs_space.shape))
            self.policy_arch_kwargs = {
                "obs_dim": obs_dim,
                "hidden": hidden,
                "num_actions": int(self.action_space.n),
                "activation": activation,
            }
            self.pi = build_architecture("mlp", **self.policy_arch_kwargs)
            self.vf = build_architecture("mlp", obs_dim=obs_dim, hidden=hidden, num_actions=1, activation=activation)
            self._float_min = FLOAT_MIN

        def _forward(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
            from ray.rllib.core.columns import Columns

            obs = batch[Columns.OBS]
            logits = self.pi(obs[OBS_KEY].float())
            legal = obs["action_mask"].bool()
            return {Columns.ACTION_DIST_INPUTS: logits.masked_fill(~legal, self._float_min)}

        def compute_values(self, batch: dict[str, Any], embeddings: Any = None):
            from ray.rllib.core.columns import Columns

            return self.vf(batch[Columns.OBS][OBS_KEY].float()).squeeze(-1)

else:

    def __getattr__(name: str) -> Any:
        if name == "MaskedPolicyModule":
            raise ImportError("training.rllib.env.MaskedPolicyModule needs ray[rllib]: pip install -e '.[rllib]'") \
                from _RAY_MISSING
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

"""A single-agent Gymnasium view of any game, for MaskablePPO and self-play.

One seat learns; every other seat is played by an opponent agent *inside* ``step()``, until it is the
learner's turn again or the game ends. The learner therefore only ever sees its own decisions and
receives its own final reward — never a stream in which one model plays both sides, which would credit
the loser's last move with the winner's reward.

In team games the learner's team-mates are played by opponents from the pool as well: the learner
controls exactly one seat. The learner's seat changes every episode (drawn from the wrapper's seed), so
a policy learns every seat of the table.

>>> import agents
>>> from training.sb3.selfplay import SelfPlayEnv
>>> env = SelfPlayEnv("sequence_v0", {}, opponent_pool=[lambda: agents.make("sequence_v0/random-v0")])
>>> obs, info = env.reset(seed=0)              # info: {"seat": "player_1", "episode_seed": ...}
>>> mask = env.action_masks()                  # legal actions of the learner (bool array)
>>> obs, reward, terminated, truncated, info = env.step(int(mask.argmax()))

The games are played by :class:`agents.runner.Runner`, with the learner's seat played from outside.
"""

from __future__ import annotations

import random
from typing import Any, Callable, Sequence

import gymnasium as gym
import numpy as np

import envs
from agents.base import Agent
from agents.runner import Runner


class SelfPlayEnv(gym.Env):
    """``gymnasium.Env`` for one learning seat of ``game_name``; opponents come from ``opponent_pool``.

    ``opponent_pool`` is a list of zero-argument callables returning fresh :class:`~agents.base.Agent` objects
    (so frozen snapshots of the learner can be added while training); one is drawn per other seat
    and per episode. ``action_masks()`` gives MaskablePPO the legal actions. ``reset(seed=s)``
    makes the whole sequence of episodes that follows reproducible: the deals, the learner's seat,
    which opponents sit where, and the opponents' own random choices. Every opponent a factory builds
    is reseeded from the wrapper's seed (its ``rng`` replaced, whatever seed the factory gave it), so
    ``lambda: agents.make(name)`` and ``lambda: agents.make(name, seed=7)`` play the same games.

    An illegal action (outside the mask) is never replaced by a legal one: with
    ``illegal_action="penalize"`` (the default, as PettingZoo's ``env()`` does) it ends the episode
    with the lowest return for the learner and ``info["illegal_action"]`` saying what happened;
    with ``"raise"`` it raises :class:`~envs.core.errors.IllegalActionError`.
    """

    metadata = {"render_modes": ["ansi"]}

    def __init__(
        self,
        game_name: str,
        config: dict[str, Any] | None = None,
        opponent_pool: Sequence[Callable[[], Agent]] = (),
        seed: int = 0,
        max_cycles: int | None = None,
        illegal_action: str = "penalize",
    ) -> None:
        super().__init__()
        if illegal_action not in ("penalize", "raise"):
            raise ValueError(f"illegal_action={illegal_action!r}; use 'penalize' or 'raise'")
        self.illegal_action = illegal_action
        self.game_name = game_name
        self.config = dict(config or {})
        self.env_config = dict(self.config)
        if max_cycles is not None:
            self.env_config["max_cycles"] = max_cycles
        self.pool: list[Callable[[], Agent]] = list(opponent_pool)
        if not self.pool:
            raise ValueError("SelfPlayEnv needs at least one opponent factory in opponent_pool")
        self.aec = envs.make(game_name, raw=True, **self.env_config)
        agent0 = self.aec.possible_agents[0]
        self.observation_space = self.aec.observation_space(agent0)["observation"]
        self.action_space = self.aec.action_space(agent0)
        self.rng = random.Random(seed)
        self.learner = agent0
        self.runner: Runner | None = None
        self._episode_over = True
        self._episode_seed = seed
        self.last_episode: dict[str, Any] = {}
        #: Deals thrown away because the game ended before the learner's first decision.
        self.skipped_episodes = 0

    # --------------------------------------------------------------------------------------------
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        super().reset(seed=seed)
        if seed is not None:
            self.rng = random.Random(seed)
        while True:
            self._new_episode()
            self._episode_over = self.runner.finished
            if not self.runner.finished:
                return self._obs(), {"seat": self.learner, "episode_seed": self._episode_seed}
            # The game ended before the learner had a single decision (in Wizard Arena a bot can join
            # a party as a follower before its first turn): nothing to learn from, deal again.
            self.skipped_episodes += 1

    def _new_episode(self) -> None:
        self._episode_seed = self.rng.randrange(2**31)
        n = len(self.aec.possible_agents)
        learner_seat = self.rng.randrange(n)
        self.learner = self.aec.agent_of(learner_seat)
        seats: list[Agent | None] = [None] * n
        for i in range(n):
            if i != learner_seat:
                factory = self.pool[self.rng.randrange(len(self.pool))]
                seats[i] = _seeded(factory(), self.rng.randrange(2**63))
        self.runner = Runner(self.game_name, seats, seed=self._episode_seed, env=self.aec)
        self.runner.advance()

    def step(self, action: int):
        runner = self.runner
        if runner is None or self._episode_over or runner.seat_to_act != self.aec.seat_of(self.learner):
            raise RuntimeError("step() called when the learner is not to act; call reset()")
        action = int(action)
        if self.illegal_action == "penalize" and not (
            0 <= action < self.action_space.n and runner.state.legal_mask()[action]
        ):
            self._episode_over = True
            reward = float(self.aec.game.reward_range[0])
            name = self.aec.game.action_to_string(action) if 0 <= action < self.action_space.n else "out of range"
            info = {"seat": self.learner, "episode_seed": self._episode_seed,
                    "illegal_action": f"{action} ({name}) in phase {runner.state.phase!r}"}
            self.last_episode = {"reward": reward, "length": runner.num_steps, "truncated": False}
            return self._obs(), reward, True, False, info
        runner.apply(action)
        runner.advance()
        reward = 0.0
        terminated = truncated = False
        info: dict[str, Any] = {}
        if runner.finished:
            self._episode_over = True
            record = runner.record
            reward = self.aec.cumulative_reward(self.learner)
            truncated = record.truncated
            terminated = not truncated
            info = {"seat": self.learner, "episode_seed": self._episode_seed}
            self.last_episode = {"reward": reward, "length": record.length, "truncated": truncated}
        return self._obs(), reward, terminated, truncated, info

    def action_masks(self) -> np.ndarray:
        if self.runner is None or self._episode_over:
            return np.ones(self.action_space.n, dtype=bool)  # never used: the episode is over
        return self.runner.state.legal_mask().astype(bool)

    def render(self) -> str | None:
        if self.runner is None:
            return None
        return self.aec.game.render_text(self.runner.state)

    def _obs(self) -> np.ndarray:
        return self.runner.inputs(self.aec.seat_of(self.learner))[0]["observation"]


def _seeded(agent: Agent, seed: int) -> Agent:
    """``agent`` with its random generator (the one every agent draws from) reset to ``seed``."""
    if not isinstance(agent, Agent):
        raise TypeError(f"an opponent factory must return an agents.base.Agent (SelfPlayEnv seeds its rng), "
                        f"got {type(agent).__name__}")
    agent.seed = seed
    agent.rng = random.Random(seed)
    return agent

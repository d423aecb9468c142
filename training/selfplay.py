"""A single-agent Gymnasium view of any game, for MaskablePPO and self-play.

One seat learns; every other seat is played by an opponent agent *inside* ``step()``, until it is the
learner's turn again or the game ends. The learner therefore only ever sees its own decisions and
receives its own final reward — never a stream in which one model plays both sides, which would credit
the loser's last move with the winner's reward.

In team games the learner's team-mates are played by opponents from the pool as well: the learner
controls exactly one seat. The learner's seat changes every episode (drawn from the wrapper's seed), so
a policy learns every seat of the table.
"""

from __future__ import annotations

import random
from typing import Any, Callable, Sequence

import gymnasium as gym
import numpy as np

import envs
from agents.base import Agent


class SelfPlayEnv(gym.Env):
    """``gymnasium.Env`` for one learning seat of ``game_name``; opponents come from ``opponent_pool``.

    ``opponent_pool`` is a list of zero-argument callables returning fresh :class:`Agent` objects
    (so frozen snapshots of the learner can be added while training); one is drawn per other seat
    and per episode. ``action_masks()`` gives MaskablePPO the legal actions.
    """

    metadata = {"render_modes": ["ansi"]}

    def __init__(
        self,
        game_name: str,
        config: dict[str, Any] | None = None,
        opponent_pool: Sequence[Callable[[], Agent]] = (),
        seed: int = 0,
        max_cycles: int | None = None,
    ) -> None:
        super().__init__()
        self.game_name = game_name
        self.config = dict(config or {})
        kwargs = dict(self.config)
        if max_cycles is not None:
            kwargs["max_cycles"] = max_cycles
        self.aec = envs.make(game_name, raw=True, **kwargs)
        self.pool: list[Callable[[], Agent]] = list(opponent_pool)
        if not self.pool:
            raise ValueError("SelfPlayEnv needs at least one opponent factory in opponent_pool")
        agent0 = self.aec.possible_agents[0]
        self.observation_space = self.aec.observation_space(agent0)["observation"]
        self.action_space = self.aec.action_space(agent0)
        self.rng = random.Random(seed)
        self.learner = agent0
        self.opponents: dict[str, Agent] = {}
        self._episode_seed = seed
        self.last_episode: dict[str, Any] = {}
        #: Deals thrown away because the game ended before the learner's first decision.
        self.skipped_episodes = 0

    # --------------------------------------------------------------------------------------------
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        if seed is not None:
            self.rng = random.Random(seed)
        while True:
            self._new_episode()
            if not self._done():
                return self._obs(), {"seat": self.learner}
            # The game ended before the learner had a single decision (in Wizard Arena a bot can join
            # a party as a follower before its first turn): nothing to learn from, deal again.
            self.skipped_episodes += 1

    def _new_episode(self) -> None:
        aec = self.aec
        self._episode_seed = self.rng.randrange(2**31)
        aec.reset(seed=self._episode_seed)
        seats = aec.possible_agents
        self.learner = seats[self.rng.randrange(len(seats))]
        config = aec.game.config
        self.opponents = {}
        for i, name in enumerate(seats):
            if name != self.learner:
                bot = self.pool[self.rng.randrange(len(self.pool))]()
                bot.reset(i, config)
                self.opponents[name] = bot
        self._play_opponents()

    def step(self, action: int):
        aec = self.aec
        if aec.agent_selection != self.learner or self._done():
            raise RuntimeError("step() called when the learner is not to act; call reset()")
        aec.step(int(action))
        self._play_opponents()
        done = self._done()
        reward = 0.0
        terminated = truncated = False
        info: dict[str, Any] = {}
        if done:
            reward = float(aec._cumulative_rewards.get(self.learner, 0.0))
            terminated = bool(aec.terminations.get(self.learner, False)) and not aec.truncations.get(self.learner, False)
            truncated = not terminated
            info = {"seat": self.learner, "episode_seed": self._episode_seed}
            self.last_episode = {"reward": reward, "length": aec._steps, "truncated": truncated}
        return self._obs(), reward, terminated, truncated, info

    def action_masks(self) -> np.ndarray:
        if self._done():
            return np.ones(self.action_space.n, dtype=bool)  # never used: the episode is over
        return self.aec.game_state.legal_mask().astype(bool)

    # --------------------------------------------------------------------------------------------
    def _done(self) -> bool:
        aec = self.aec
        return aec.terminations.get(self.learner, True) or aec.truncations.get(self.learner, True)

    def _play_opponents(self) -> None:
        aec = self.aec
        while not self._done() and aec.agent_selection != self.learner:
            name = aec.agent_selection
            bot = self.opponents[name]
            action = bot.act(aec.observe(name), aec.player_view(name))
            aec.step(int(action))

    def _obs(self) -> np.ndarray:
        return self.aec.game.observe(self.aec.game_state, self.aec._agent_index[self.learner])

"""The one PettingZoo AEC environment, written once, that drives every game.

A game module (``envs/sequence_v0.py`` and its siblings) only calls :func:`make_env_factories`
with its :class:`~envs.core.game.Game` subclass and gets back PettingZoo-style ``env`` and
``raw_env`` factories.

Behaviour shared by every game
------------------------------
* Agents are ``player_0 … player_{n-1}``; ``agent_selection`` is whichever seat the engine says
  must act, so a seat deciding out of turn (a defender, a simultaneous choice) simply comes next.
* Observations are ``{"observation": ndarray, "action_mask": int8 ndarray}``; the mask is all
  zeros for a seat that is not to act and once the game is over. Every agent has identical spaces.
* Rewards are zero until the game ends; then every seat receives the engine's return, whoever
  made the last move. ``max_cycles`` truncates the episode after ``max_cycles × num_agents``
  actions in total; truncated seats receive ``State.truncation_returns()`` (zeros for most games).
* ``raw_env`` is strict: an illegal action raises :class:`~envs.core.errors.IllegalActionError`.
  ``env()`` behaves like PettingZoo's standard wrapping (``TerminateIllegalWrapper(-1)``,
  ``AssertOutOfBoundsWrapper``, ``OrderEnforcingWrapper``), implemented natively for speed apart
  from the order-enforcing layer: an illegal move ends the game with −1 for the offender and 0 for
  everyone else, and ``infos[agent]["illegal_action"]`` says what happened.
* Seeds follow Gymnasium: ``reset(seed=s)`` deals the game of ``s`` (``Game.new_initial_state(s)``;
  ``s`` an integer >= 0: a negative seed is refused, since it would replay the game of ``-s``) and
  seeds the stream that every later plain ``reset()`` draws its game from (game ``k`` after it is
  dealt from ``envs.core.rng.stream_seed(s, k)``), so one seeded reset makes the whole run the same
  in any process. A first reset without a seed starts a stream from the operating system's
  entropy; ``episode_seed`` names the seed the current game was dealt from.
* ``unwrapped.save_state()`` returns a JSON-compatible dict and ``reset(options={"state": saved})``
  continues from it exactly, into any environment of the same game and config, reset before or
  not. Other option keys are ignored. The save records the step count and the ``max_cycles`` it was
  made under; on restore the step count carries over but **the restoring environment's own**
  ``max_cycles`` **wins** (a cap is a property of the environment a user built, like its render
  mode; the saved value is only checked to be an integer >= 1). So an episode saved after 30
  actions and restored into ``raw_env(max_cycles=10)`` of a two-seat game is truncated at once
  (30 >= 10 x 2). Restoring draws nothing from the stream; ``reset(seed=s, options={"state":
  saved})`` restores and seeds the stream with ``s``.
* Actions are Python or numpy integers, or 0-d integer arrays; anything else (a float, even
  ``1.0``, a string, bytes, a bool, a ``Decimal``) raises :class:`~envs.core.errors.IllegalActionError`
  naming it, in ``raw_env`` and ``env`` alike, as does an id outside ``Discrete(num_actions)``.
* ``state()`` is the whole position as the referee sees it (hidden hands and secrets included: for
  centralised critics), a float32 array in ``state_space`` built by ``Game.encode_state``: seat 0's
  observation, the seat to act, then the game's referee block (layout in each game module).
* ``parallel_env(**config)`` in every game module is ``env(**config)`` through PettingZoo's
  ``turn_based_aec_to_parallel`` (:func:`make_parallel_env`), registered for ``pettingzoo.make("parallel", ...)``.
* ``metadata`` is the class's own dict (never shared between games) and every instance copies it, so a
  wrapper that edits an instance's ``render_modes`` changes nothing else.
* ``step``, ``last``, ``observe``, ``state``, ``save_state``, ``player_view`` and ``render`` before the
  first ``reset()`` raise a ``RuntimeError`` that says to call ``reset()`` first.

Public accessors for tools (runners, self-play, front ends) on the unwrapped environment:
``game`` (the configured :class:`~envs.core.game.Game`), ``engine_state`` (the full state: never
hand it to an agent), ``num_steps`` (actions taken this episode), ``episode_seed``, ``cumulative_reward(agent)``,
``seat_of(agent)`` / ``agent_of(seat)``, ``player_view(agent)``, ``save_state()`` and
``action_to_string(action)``.
"""

from __future__ import annotations

import sys
from typing import Any, Callable

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv, ParallelEnv
from pettingzoo.utils import wrappers

from envs.core.errors import ConfigError, IllegalActionError, StateError, UnknownKeywordError
from envs.core.fields import MAX_COUNT, show
from envs.core.game import Game, State, action_id
from envs.core.rng import check_seed, fresh_seed, stream_seed

RENDER_MODES = ("human", "ansi", "rgb_array")
ILLEGAL_MODES = ("raise", "penalize")
#: The keywords the environment takes beside the game's own, as an unknown keyword's error lists them.
ENV_KEYWORDS = {
    "max_cycles": "an integer >= 1, the truncation cap in cycles",
    "render_mode": f"None or one of {list(RENDER_MODES)}",
    "illegal_action": f"raw_env only: one of {list(ILLEGAL_MODES)}",
}


class TabletopEnv(AECEnv):
    """Generic AEC environment over any :class:`Game`. Use a game's ``raw_env``/``env``."""

    game_cls: type[Game]
    #: Each game's ``raw_env`` class owns a copy (``make_env_factories``) and every instance gets its
    #: own with a fresh ``render_modes`` list, so a wrapper that edits an instance's metadata (PettingZoo's
    #: ``CaptureStdoutWrapper`` appends to ``render_modes``) never changes a class or another instance.
    metadata: dict[str, Any] = {
        "render_modes": RENDER_MODES,
        "name": "tabletop",
        "is_parallelizable": False,
        "render_fps": 2,
    }

    def __init__(
        self,
        render_mode: str | None = None,
        max_cycles: int | None = None,
        illegal_action: str = "raise",
        **config: Any,
    ) -> None:
        super().__init__()
        self.metadata = dict(type(self).metadata, render_modes=list(RENDER_MODES))
        try:
            self.game: Game = self.game_cls(**config)
        except UnknownKeywordError as error:
            raise error.with_keywords(ENV_KEYWORDS) from None
        if render_mode is not None and render_mode not in RENDER_MODES:
            raise ConfigError(
                f"{self.game.name}: render_mode={render_mode!r} is not allowed; "
                f"use None or one of {list(RENDER_MODES)}"
            )
        if max_cycles is None:
            max_cycles = self.game_cls.default_max_cycles
        if isinstance(max_cycles, bool) or not isinstance(max_cycles, (int, np.integer)) or max_cycles < 1:
            raise ConfigError(
                f"{self.game.name}: max_cycles={max_cycles!r} is not allowed; it must be an integer >= 1"
            )
        if illegal_action not in ILLEGAL_MODES:
            raise ConfigError(
                f"{self.game.name}: illegal_action={illegal_action!r} is not allowed; "
                f"use one of {list(ILLEGAL_MODES)}"
            )
        self.render_mode = render_mode
        self.max_cycles = int(max_cycles)
        self.illegal_action = illegal_action
        game = self.game
        n = game.num_players
        self.possible_agents = [f"player_{i}" for i in range(n)]
        self._seat = {a: i for i, a in enumerate(self.possible_agents)}
        self._max_steps = self.max_cycles * n
        obs_box = spaces.Box(
            low=game.observation_low,
            high=game.observation_high,
            shape=tuple(game.observation_shape),
            dtype=game.observation_dtype,
        )
        mask_box = spaces.Box(low=0, high=1, shape=(game.num_actions,), dtype=np.int8)
        self.observation_spaces = {
            a: spaces.Dict({"observation": obs_box, "action_mask": mask_box}) for a in self.possible_agents
        }
        self.action_spaces = {a: spaces.Discrete(game.num_actions) for a in self.possible_agents}
        state_low, state_high = game.state_bounds()
        self.state_space = spaces.Box(low=state_low, high=state_high, dtype=np.float32)
        self._zero_mask = np.zeros(game.num_actions, dtype=np.int8)
        self._state: State | None = None
        self._steps = 0
        # The seed stream plain resets draw from: (the seed that started it, games dealt from it since).
        self._stream: tuple[int, int] | None = None
        self._episode_seed: int | None = None
        self._returns: dict[str, float] = {}

    # ------------------------------------------------------------------------------------------
    # PettingZoo API
    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        saved = options.get("state") if isinstance(options, dict) else None
        if seed is not None:
            seed = check_seed(seed)
            self._stream = (seed, 0)
        if saved is not None:
            self._restore(saved)
            self._episode_seed = None
        else:
            if seed is None:
                if self._stream is None:
                    seed = fresh_seed()
                    self._stream = (seed, 0)
                else:
                    first, dealt = self._stream
                    self._stream = (first, dealt + 1)
                    seed = stream_seed(first, dealt + 1)
            self._state = self.game.new_initial_state(seed)
            self._episode_seed = seed
            self._steps = 0
        self.agent_selection = self.possible_agents[0]  # replaced by _advance (a finished save too)
        self._state.set_step_limit(self._max_steps)
        self.agents = list(self.possible_agents)
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self._returns = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.infos = {a: {} for a in self.agents}
        self._skip_agent_selection = None
        self.agent_selection = self.possible_agents[0]  # replaced below; a restored final position needs one
        self._advance()

    def state(self) -> np.ndarray:
        """The whole position as the referee sees it (hidden hands and secrets included: for
        centralised critics, never for a seat's policy), a float32 array in ``state_space``; the
        layout is ``Game.encode_state``'s, detailed in each game module's docstring."""
        return self.game.encode_state(self._reset_state("state"))

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        state = self._state
        if state is None:
            self._reset_state("observe")  # raises
        obs = state.seat_observation(self._seat[agent])
        if self.truncations.get(agent, False) or self.terminations.get(agent, False):
            obs["action_mask"] = self._zero_mask.copy()
        return obs

    def step(self, action: Any) -> None:
        state = self._state
        if state is None:
            self._reset_state("step")  # raises
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        num_actions = self.game.num_actions
        if type(action) is not int:  # a plain int, the usual case, needs no converting
            action = action_id(action, self.game)
        if not 0 <= action < num_actions:
            # AssertOutOfBoundsWrapper semantics: out of the space is a programming error.
            raise IllegalActionError(
                f"{self.game.name}: action {action!r} from {agent} is outside Discrete({num_actions})"
            )
        if self.illegal_action == "penalize" and not state.legal_mask()[action]:
            self._penalize(agent, action)
            return
        # Rewards are non-zero only once the episode is over, so there is nothing to clear here.
        self._cumulative_rewards[agent] = 0.0
        state.apply_action(action)  # raises IllegalActionError for a masked-out action
        self._steps += 1
        self._advance()

    def last(self, observe: bool = True) -> tuple:
        # PettingZoo's ``AECEnv.last`` written out: one call fewer in every step of an AEC loop.
        if self._state is None:
            self._reset_state("last")  # raises
        agent = self.agent_selection
        assert agent is not None
        return (
            self.observe(agent) if observe else None,
            self._cumulative_rewards[agent],
            self.terminations[agent],
            self.truncations[agent],
            self.infos[agent],
        )

    def render(self) -> Any:
        if self.render_mode is None:
            import gymnasium

            gymnasium.logger.warn("You are calling render method without specifying any render mode.")
            return None
        self._reset_state("render")
        if self.render_mode == "rgb_array":
            return self.game.render_rgb(self._state)
        text = self.game.render_text(self._state)
        if self.render_mode == "human":
            print(text, file=sys.stdout)
            return None
        return text

    def close(self) -> None:
        pass

    # ------------------------------------------------------------------------------------------
    # Extras shared by all games
    def player_view(self, agent: str) -> dict[str, Any]:
        """JSON-compatible dict of everything ``agent`` may know (the agents' ``view`` argument)."""
        return self._reset_state("player_view").player_view(self._seat[agent])

    def save_state(self) -> dict[str, Any]:
        """JSON-compatible save of the game and the episode counters; see ``reset(options=...)``."""
        data = self.game.save(self._reset_state("save_state"))
        data["env"] = {"steps": self._steps, "max_cycles": self.max_cycles}
        return data

    def action_to_string(self, action: int) -> str:
        return self.game.action_to_string(int(action))

    @property
    def engine_state(self) -> State:
        """The engine state (the full, all-knowing state: never hand it to an agent)."""
        if self._state is None:
            raise RuntimeError(f"{self.game.name}: there is no state before reset()")
        return self._state

    @property
    def num_steps(self) -> int:
        """Actions taken in this episode (a restored state continues its saved count)."""
        return self._steps

    @property
    def episode_seed(self) -> int | None:
        """The seed this episode's game was dealt from (``game.new_initial_state(episode_seed)`` deals
        it again), or None for a game restored from a save."""
        self._reset_state("episode_seed")
        return self._episode_seed

    @property
    def max_steps(self) -> int:
        """The truncation cap in actions: ``max_cycles`` x number of seats."""
        return self._max_steps

    def cumulative_reward(self, agent: str) -> float:
        """``agent``'s return so far this episode (its final return once it is done, also after
        PettingZoo's dead steps have removed it from ``agents``). Unknown names raise ValueError."""
        self.seat_of(agent)
        self._reset_state("cumulative_reward")
        return float(self._returns[agent])

    def seat_of(self, agent: str) -> int:
        """Seat index of an agent name: ``"player_2"`` -> 2."""
        try:
            return self._seat[agent]
        except KeyError:
            raise ValueError(f"{self.game.name}: no agent named {agent!r}; agents: {self.possible_agents}") from None

    def agent_of(self, seat: int) -> str:
        """Agent name of a seat index: 2 -> ``"player_2"``."""
        if isinstance(seat, bool) or not isinstance(seat, (int, np.integer)) or not 0 <= seat < len(self.possible_agents):
            raise ValueError(f"{self.game.name}: seat must be an integer in [0, {len(self.possible_agents)}), got {seat!r}")
        return self.possible_agents[seat]

    # ------------------------------------------------------------------------------------------
    def _reset_state(self, what: str) -> State:
        """The current state, or a clear error when the environment was never reset (the calls made on
        every step test ``self._state`` themselves and call this only to raise the error)."""
        state = self._state
        if state is None:
            raise RuntimeError(f"{self.game.name}: call reset() before {what}()")
        return state

    def _restore(self, saved: Any) -> None:
        state = self.game.load(saved)
        env_part = saved.get("env", {"steps": 0})
        if not isinstance(env_part, dict) or not set(env_part) <= {"steps", "max_cycles"}:
            raise StateError(f"saved state's 'env' part must be a dict with 'steps' and 'max_cycles', "
                             f"got {show(env_part)}")
        steps = env_part.get("steps", 0)
        if type(steps) is not int or not 0 <= steps <= MAX_COUNT:
            raise StateError(f"saved state's env.steps must be an integer in [0, {MAX_COUNT}], got {show(steps)}")
        cycles = env_part.get("max_cycles", 1)
        if type(cycles) is not int or not 1 <= cycles <= MAX_COUNT:
            raise StateError(f"saved state's env.max_cycles must be an integer in [1, {MAX_COUNT}], "
                             f"got {show(cycles)} (it is recorded only: this environment's own max_cycles applies)")
        self._state = state
        self._steps = steps

    def _advance(self) -> None:
        """After a reset or an action: end the episode, or hand the turn to the seat that must act."""
        state = self._state
        if state.is_terminal():
            self._finish(state.returns(), truncated=False)
        elif self._steps >= self._max_steps:
            self._finish(state.truncation_returns(), truncated=True)
        else:
            self.agent_selection = self.possible_agents[state.current_player()]

    def _finish(self, returns: list[float], truncated: bool) -> None:
        for i, a in enumerate(self.possible_agents):
            if a in self.rewards:
                self.rewards[a] = float(returns[i])
        flags = self.truncations if truncated else self.terminations
        for a in self.agents:
            flags[a] = True
        self._accumulate_rewards()
        self._returns.update(self._cumulative_rewards)
        # Hand the turn to the first finished agent (PettingZoo's dead-step order).
        self._deads_step_first()

    def _penalize(self, agent: str, action: int) -> None:
        state = self._state
        self.infos[agent] = dict(
            self.infos[agent],
            illegal_action=f"{action} ({self.game.action_to_string(action)}) in phase {state.phase!r}",
        )
        self._cumulative_rewards[agent] = 0.0
        self.rewards = {a: 0.0 for a in self.agents}
        self.rewards[agent] = -1.0
        for a in self.agents:
            self.terminations[a] = True
            self.truncations[a] = True
        self._accumulate_rewards()
        self._returns.update(self._cumulative_rewards)
        self._deads_step_first()


def make_env_factories(game_cls: type[Game]) -> tuple[Callable[..., AECEnv], type[TabletopEnv]]:
    """Build the PettingZoo-style ``(env, raw_env)`` pair for a game class.

    ``raw_env(**config)`` is the strict environment class; ``env(**config)`` is the standard
    wrapped environment (illegal moves penalised with −1, order of calls enforced).
    """
    metadata = dict(TabletopEnv.metadata, name=game_cls.name)  # the class's own dict
    raw_env = type("raw_env", (TabletopEnv,), {"game_cls": game_cls, "metadata": metadata})
    raw_env.__qualname__ = f"{game_cls.name}.raw_env"
    raw_env.__module__ = f"envs.{game_cls.name}"

    def env(*, render_mode: str | None = None, max_cycles: int | None = None, **config: Any) -> AECEnv:
        if "illegal_action" in config:
            raise ConfigError("env() always penalises illegal actions; use raw_env() to choose")
        inner = raw_env(render_mode=render_mode, max_cycles=max_cycles, illegal_action="penalize", **config)
        return wrappers.OrderEnforcingWrapper(inner)

    # Named as the game module's own, so that the API reference lists it there with its docstring.
    env.__module__ = raw_env.__module__
    env.__qualname__ = env.__name__ = "env"
    env.__doc__ = _FACTORY_DOC.format(
        summary=f"The standard {game_cls.name} environment: PettingZoo's AEC API, an illegal action "
                "ends the game with −1 for the player who made it, and calls out of order are refused.",
        extra="", returns="the environment, wrapped in PettingZoo's ``OrderEnforcingWrapper``.")
    raw_env.__doc__ = _FACTORY_DOC.format(
        summary=f"The strict {game_cls.name} environment class: an illegal action raises "
                ":class:`~envs.core.errors.IllegalActionError` naming the action and the state.",
        extra="    illegal_action: ``\"raise\"`` (the default) or ``\"penalize\"`` (as ``env()``).\n",
        returns="",
    ).split("\n\nReturns:")[0]
    return env, raw_env


_FACTORY_DOC = """{summary}

Args:
    render_mode: ``None``, ``"ansi"`` (``render()`` returns the board as text), ``"rgb_array"`` (an
        image array) or ``"human"`` (the text printed).
    max_cycles: the episode is truncated after ``max_cycles`` × the number of seats actions; ``None``
        for the game's default.
{extra}    **config: the game's config keywords, each checked (the table "Config keywords" in the module
        docstring); an unknown keyword or a value out of range raises
        :class:`~envs.core.errors.ConfigError` saying what is allowed.

Returns:
    {returns}
"""


def make_parallel_env(env: Callable[..., AECEnv], game_cls: type[Game]) -> Callable[..., Any]:
    """A game's ``parallel_env(**config)``: its standard ``env(**config)`` seen through PettingZoo's
    ``turn_based_aec_to_parallel``. Each ``step(actions)`` takes an action from the one agent that
    must act (every other agent's entry is ignored) and returns everyone's observations; the games
    stay turn-based, so the seat to act is the one whose ``action_mask`` is not all zeros."""
    from pettingzoo.utils.conversions import turn_based_aec_to_parallel

    def parallel_env(
        *, render_mode: str | None = None, max_cycles: int | None = None, **config: Any
    ) -> ParallelEnv:
        return turn_based_aec_to_parallel(env(render_mode=render_mode, max_cycles=max_cycles, **config))

    parallel_env.__doc__ = _FACTORY_DOC.format(
        summary=f"The {game_cls.name} environment in PettingZoo's parallel API, turn-based: each "
                "``step(actions)`` reads only the action of the seat to act (see "
                ":func:`envs.core.env.make_parallel_env`).",
        extra="", returns="``env(**config)`` through PettingZoo's ``turn_based_aec_to_parallel``.")
    parallel_env.__module__ = f"envs.{game_cls.name}"
    return parallel_env

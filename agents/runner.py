"""The one way to play a game between seats: agents, humans, snapshots.

Evaluation, tournaments, the designer simulator, self-play and the play front ends all run their
games here, through the strict ``raw_env`` (an agent that returns an illegal action raises
:class:`~envs.core.errors.IllegalActionError`; nothing is silently replaced).

* :func:`play_game` plays one whole game between agents and returns a :class:`GameRecord`.
* :class:`Runner` is the same loop, step by step, for front ends and learners: a seat given
  ``None`` instead of an agent is played from outside. ``seat_to_act`` says which seat must act,
  ``apply(action, seat)`` plays that seat's move, ``advance()`` lets every agent seat move until an
  outside seat must act or the game ends; ``restore(saved)`` goes back to a saved position (undo,
  resume).
* :class:`RunnerHooks` is called at the start, before and after every action and at the end
  (progress bars, traces, statistics, game records, a front end's move list), so a tool never
  writes its own episode loop.

>>> import agents
>>> from agents.runner import Runner
>>> bots = [agents.make("sequence_v0/random-v0", seed=s) for s in range(2)]
>>> agents.play_game("sequence_v0", bots, seed=1).returns
>>> runner = Runner("sequence_v0", [None, bots[1]], seed=1)   # seat 0 is played from outside
>>> runner.advance()                      # -> 0: seat 0 must act (or None: the game is over)
>>> observation, view = runner.inputs(0)
>>> runner.apply(int(observation["action_mask"].argmax()), seat=0)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

import envs
from agents.base import Agent
from agents.registry import make
from envs.core import IllegalActionError
from envs.core.env import TabletopEnv
from envs.core.game import Game, State

#: ``GameRecord.end_reason`` of a game cut by the ``max_cycles`` cap.
TRUNCATED = "truncated"


@dataclass
class GameRecord:
    """The outcome of one game.

    ``returns`` per seat; ``length`` the number of actions; ``truncated`` whether the cycle cap cut
    it; ``end_reason`` why it ended (``"truncated"``, or the engine's ``State.end_reason()``:
    ``"rules"``, ``"no-progress"``, ...); ``actions`` every action in order when recorded;
    ``final_state`` the environment's save of the last position when kept.
    """

    returns: list[float]
    length: int
    truncated: bool
    end_reason: str = "rules"
    actions: list[int] = field(default_factory=list)
    final_state: dict[str, Any] | None = None
    seed: int | None = None
    config: dict[str, Any] = field(default_factory=dict)


class RunnerHooks:
    """Per-game callbacks; override the ones you need (all do nothing by default)."""

    def on_start(self, runner: Runner) -> None:
        """The game is set up (agents reset), no action taken yet."""

    def before_step(self, runner: Runner, seat: int, action: int) -> None:
        """``seat`` is about to play ``action``; ``runner.state`` is still the position before it.

        The action is not checked yet: if the rules forbid it, :meth:`Runner.apply` raises and no
        ``on_step`` follows.
        """

    def on_step(self, runner: Runner, seat: int, action: int) -> None:
        """``seat`` played ``action``; ``runner.state`` is the position after it."""

    def on_end(self, runner: Runner, record: GameRecord) -> None:
        """The game is over; ``record`` is what :func:`play_game` returns."""


class Runner:
    """One game between seats, played step by step (see the module docstring).

    ``seats[i]`` is the :class:`~agents.base.Agent` of seat ``i``, or ``None`` for a seat played from outside
    (a human, a learner). Agents are reset with the configured :class:`Game` here. ``state`` (a
    save from ``env.save_state()``) continues a saved game instead of dealing a new one. ``env``
    reuses a strict ``raw_env`` of the game (it is reset here) instead of making a new one; its
    ``config`` then comes from that environment.
    """

    def __init__(
        self,
        game_name: str,
        seats: Sequence[Agent | None],
        seed: int | None = None,
        config: dict[str, Any] | None = None,
        *,
        hooks: Sequence[RunnerHooks] = (),
        record_actions: bool = False,
        keep_final_state: bool = False,
        state: dict[str, Any] | None = None,
        env: TabletopEnv | None = None,
    ) -> None:
        self.game_name = game_name
        self.config = dict(config or {})
        self.seed = seed
        if env is None:
            env = envs.make(game_name, raw=True, **self.config)
        elif env.game.name != game_name or env.illegal_action != "raise":
            raise ValueError(f"Runner needs a strict raw_env of {game_name}, got {env!r}")
        self.env = env
        self.env.reset(seed=seed, options={"state": state} if state is not None else None)
        self.game: Game = self.env.game
        if len(seats) != self.game.num_players:
            raise ValueError(
                f"{game_name} with config {self.config} has {self.game.num_players} seats, "
                f"got {len(seats)} agents"
            )
        self.seats: list[Agent | None] = list(seats)
        for seat, agent in enumerate(self.seats):
            if agent is not None:
                agent.reset(seat, self.game)
        self.hooks = list(hooks)
        self.record_actions = record_actions
        self.keep_final_state = keep_final_state
        self.actions: list[int] = []
        self.record: GameRecord | None = None
        for hook in self.hooks:
            hook.on_start(self)
        if self.finished:  # a game may be over before anyone acts (a restored final position)
            self._finish()

    # -- what front ends ask ----------------------------------------------------------------------
    @property
    def state(self) -> State:
        """The full engine state (for rendering and tools; never hand it to an agent)."""
        return self.env.engine_state

    @property
    def finished(self) -> bool:
        env = self.env
        agent = env.agent_selection
        return env.terminations[agent] or env.truncations[agent]

    @property
    def seat_to_act(self) -> int | None:
        """The seat that must act now, or None once the game is over."""
        if self.finished:
            return None
        return self.env.seat_of(self.env.agent_selection)

    @property
    def num_steps(self) -> int:
        return self.env.num_steps

    @property
    def end_reason(self) -> str | None:
        """Why the game ended (see :attr:`GameRecord.end_reason`), or None while it goes on."""
        if not self.finished:
            return None
        env = self.env
        if any(env.truncations.values()) and not env.engine_state.is_terminal():
            return TRUNCATED
        return env.engine_state.end_reason() or "illegal"

    def legal_actions(self) -> list[int]:
        """The legal action ids of the seat to act, in increasing order ([] once the game is over)."""
        if self.finished:
            return []
        return np.flatnonzero(self.env.engine_state.legal_mask()).tolist()

    def inputs(self, seat: int) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        """What the agent at ``seat`` is handed: its observation dict and its player view."""
        name = self.env.agent_of(seat)
        return self.env.observe(name), self.env.player_view(name)

    def is_outside(self, seat: int) -> bool:
        """Whether ``seat`` is played from outside (no agent)."""
        return self.seats[seat] is None

    # -- moving -----------------------------------------------------------------------------------
    def apply(self, action: int, seat: int | None = None) -> None:
        """Play ``action`` for the seat to act (``seat``, when given, must be that seat)."""
        to_act = self.seat_to_act
        if to_act is None:
            raise RuntimeError(f"{self.game_name}: the game is over; no seat may act")
        if seat is not None and seat != to_act:
            raise RuntimeError(f"{self.game_name}: seat {seat} may not act now; seat {to_act} must")
        for hook in self.hooks:
            hook.before_step(self, to_act, action)
        self.env.step(action)  # raises IllegalActionError for anything the rules forbid
        action = int(action)
        if self.record_actions:
            self.actions.append(action)
        for hook in self.hooks:
            hook.on_step(self, to_act, action)
        if self.finished:
            self._finish()

    def step(self) -> int:
        """Let the agent of the seat to act choose and play; returns its action."""
        seat = self.seat_to_act
        if seat is None:
            raise RuntimeError(f"{self.game_name}: the game is over; no seat may act")
        agent = self.seats[seat]
        if agent is None:
            raise RuntimeError(f"{self.game_name}: seat {seat} is played from outside; use apply()")
        observation, view = self.inputs(seat)
        action = agent.act(observation, view)
        self.apply(action, seat)
        return int(action)

    def advance(self) -> int | None:
        """Let agent seats move until an outside seat must act (returned) or the game ends (None)."""
        while True:
            seat = self.seat_to_act
            if seat is None or self.seats[seat] is None:
                return seat
            self.step()

    def restore(self, state: dict[str, Any], actions: Sequence[int] = ()) -> None:
        """Continue from ``state`` (a save from ``env.save_state()``), as the ``state`` argument does.

        For undo and resume: the agents are reset (an agent's memory of the abandoned line goes),
        ``record`` is cleared and ``actions`` (the actions that led to ``state``, when recorded)
        replaces the recorded actions. Hooks are not started again; if ``state`` is a final
        position, ``on_end`` is called at once.
        """
        self.env.reset(options={"state": state})
        for seat, agent in enumerate(self.seats):
            if agent is not None:
                agent.reset(seat, self.game)
        self.actions = [int(a) for a in actions]
        self.record = None
        if self.finished:
            self._finish()

    def run(self) -> GameRecord:
        """Play to the end (every seat must have an agent) and return the record."""
        seat = self.advance()
        if seat is not None:
            raise RuntimeError(f"{self.game_name}: seat {seat} has no agent; run() needs one per seat")
        assert self.record is not None
        return self.record

    def _finish(self) -> None:
        env = self.env
        returns = [env.cumulative_reward(name) for name in env.possible_agents]
        reason = self.end_reason
        self.record = GameRecord(
            returns=returns,
            length=env.num_steps,
            truncated=reason == TRUNCATED,
            end_reason=reason,
            actions=self.actions,
            final_state=env.save_state() if self.keep_final_state else None,
            seed=self.seed,
            config=dict(self.game.config),
        )
        for hook in self.hooks:
            hook.on_end(self, self.record)


def play_game(
    game_name: str,
    seat_agents: Sequence[Agent],
    seed: int | None = None,
    config: dict[str, Any] | None = None,
    hooks: Sequence[RunnerHooks] = (),
    record_actions: bool = False,
    keep_final_state: bool = False,
) -> GameRecord:
    """Play one seeded game, seat ``i`` played by ``seat_agents[i]``; raises if an agent cheats."""
    runner = Runner(
        game_name, seat_agents, seed=seed, config=config, hooks=hooks,
        record_actions=record_actions, keep_final_state=keep_final_state,
    )
    return runner.run()


def seat_inputs(state: State, seat: int) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """What an agent at ``seat`` is handed in ``state``, exactly as the environment builds it:
    the observation dict (mask only for the seat to act) and the player view."""
    return state.seat_observation(seat), state.player_view(seat)


def decide(agent_id: str, state: State, seed: int | None = None) -> int:
    """The action a freshly made ``agent_id`` chooses for the seat to act in ``state``.

    For tools and tests that ask "what does this agent play here?" about a built position. Raises
    :class:`~envs.core.errors.IllegalActionError` if the agent picks a masked-out action.
    """
    seat = state.current_player()
    bot = make(agent_id, seed=seed)
    bot.reset(seat, state.game)
    observation, view = seat_inputs(state, seat)
    action = bot.act(observation, view)
    if not observation["action_mask"][action]:
        raise IllegalActionError(
            f"{agent_id} chose {action} ({state.game.action_to_string(int(action))}), "
            f"illegal for player {seat} in phase {state.phase!r}"
        )
    return int(action)

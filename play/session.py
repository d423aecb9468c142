"""A play session: one game, human seats and agent seats, the record, save/resume and undo.

Both front ends (``play.terminal`` and ``play.web``) sit on :class:`Session`. A session

* holds the environment, which seats are human (``"human"``) and which are agents (any registered
  id: random, heuristic, checkpoint), and the :class:`~agents.records.Record` of every move;
* shows a seat only its ``player_view`` (:meth:`Session.view`) and names another seat's move to it
  only when that seat could tell the move from the alternatives (:meth:`Session.events_for`): a
  face-down choice (Pan's Trial's first Appeasing card, Dojo's kept Tecnica) reads "made a hidden
  choice";
* saves to a JSON dict (the environment's ``save_state`` plus the record) and resumes from it,
  checking that the record replays to exactly the saved state. A save holds the whole position,
  deck and seed included: it is for resuming on your own machine, not for hiding anything;
* undoes the last human move by restoring the state before it — refused once that seat (or any
  human seat) has learnt something since that it could not have known before: a card drawn, a die
  rolled, a hidden card of another seat. The test is exact in spirit and generic: the moves since
  are replayed from several deals consistent with what the human knew before the move; if any of
  them shows the human something different from what they see now, new information was revealed
  and undo is refused. (So in Sequence, where every card played draws a new one, undo is refused
  after a play; stepping one square in Dojo or moving in Wizard Arena can be undone until dice or
  cards decide something.) With several human seats (hot seat), undo takes back the most recent
  human move, whoever made it. Undo history survives save and resume.

The environment is driven through its public API by :class:`EnvAdapter` alone — the one place to
switch to ``agents.runner.Runner`` once it lands.
"""

from __future__ import annotations

import importlib
import random
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

import agents
import envs
from agents.records import (
    HUMAN,
    Move,
    Record,
    RecordError,
    engine_state,
    env_result,
    new_record,
    replay,
)
from envs.core import ConfigError, IllegalActionError, StateError

SESSION_FORMAT = "tabletop-rl/session"
#: Deals sampled when deciding whether undo would reveal hidden information.
UNDO_SAMPLES = 6


class SessionError(ValueError):
    """A request the session cannot honour (not your turn, illegal move, bad save, ...)."""


class UndoRefused(SessionError):
    """Undo is not possible here; the message says why."""


# ----------------------------------------------------------------------------------------------
class EnvAdapter:
    """Drives one strict environment through its public API.

    Everything the session needs from a runner, in one place: reset / restore / save, whose turn
    it is, the legal actions, one seat's observation and view, applying an action, the result and
    the full engine state (for the session's own checks; never handed to a seat).
    """

    def __init__(self, game_name: str, config: dict[str, Any] | None = None, max_cycles: int | None = None,
                 render_mode: str | None = None) -> None:
        kwargs = dict(config or {})
        if max_cycles is not None:
            kwargs["max_cycles"] = max_cycles
        self.env = envs.make(game_name, raw=True, render_mode=render_mode, **kwargs)
        self.game = self.env.game
        self.game_name = game_name
        self.num_seats = len(self.env.possible_agents)

    @classmethod
    def around(cls, env) -> EnvAdapter:
        """Wrap an environment already built and reset (e.g. by a record replay)."""
        self = cls.__new__(cls)
        self.env = env
        self.game = env.game
        self.game_name = env.game.name
        self.num_seats = len(env.possible_agents)
        return self

    def reset(self, seed: int) -> None:
        self.env.reset(seed=seed)

    def restore(self, saved: dict[str, Any]) -> None:
        self.env.reset(options={"state": saved})

    def save(self) -> dict[str, Any]:
        return self.env.save_state()

    @property
    def state(self):
        return engine_state(self.env)

    @property
    def over(self) -> bool:
        agent = self.env.agent_selection
        return bool(self.env.terminations[agent] or self.env.truncations[agent])

    def to_act(self) -> int | None:
        return None if self.over else self.env.possible_agents.index(self.env.agent_selection)

    def legal_actions(self) -> list[int]:
        if self.over:
            return []
        return np.flatnonzero(self.env.observe(self.env.agent_selection)["action_mask"]).tolist()

    def observation(self, seat: int) -> dict[str, np.ndarray]:
        return self.env.observe(self.env.possible_agents[seat])

    def view(self, seat: int) -> dict[str, Any]:
        return self.env.player_view(self.env.possible_agents[seat])

    def step(self, action: int) -> None:
        self.env.step(int(action))

    def name(self, action: int) -> str:
        return self.env.action_to_string(int(action))

    def result(self) -> dict[str, Any]:
        return env_result(self.env)

    def render(self) -> Any:
        return self.env.render()


def reset_agent(agent, seat: int, game) -> None:
    """Hand an agent its seat and the game (the ``reset(seat, game)`` shape, or today's config dict)."""
    try:
        agent.reset(seat, game)
    except (TypeError, AttributeError, KeyError):
        agent.reset(seat, dict(game.config))


def has_hidden_information(game_name: str) -> bool:
    module = importlib.import_module(f"envs.{game_name}")
    return bool(getattr(module, "HIDDEN_INFORMATION", True))


def resolve_config(game_name: str, config: str | dict[str, Any] | None) -> dict[str, Any]:
    """A config given as a family name of the game (``"2x2"``), a dict, or None (the default)."""
    if config is None:
        return {}
    if isinstance(config, dict):
        return dict(config)
    families = getattr(envs.game_class(game_name), "config_families", None) or \
        getattr(importlib.import_module(f"envs.{game_name}"), "CONFIGS", {})
    if config not in families:
        raise SessionError(f"{game_name} has no config named {config!r}; known: {sorted(families)}")
    return dict(families[config])


def config_families(game_name: str) -> dict[str, dict[str, Any]]:
    families = getattr(envs.game_class(game_name), "config_families", None)
    if not isinstance(families, dict):
        families = getattr(importlib.import_module(f"envs.{game_name}"), "CONFIGS", {})
    return {k: dict(v) for k, v in families.items()}


@dataclass
class Event:
    """One move as the session saw it: who, what, and for each human seat whether it may see which."""

    index: int  # 1-based move number in the record
    seat: int
    action: int
    name: str
    visible_to: dict[int, bool]
    phase: str


# ----------------------------------------------------------------------------------------------
class Session:
    """One game between human seats and agents; see the module docstring."""

    def __init__(self, game_name: str, seats: Sequence[str], config: str | dict[str, Any] | None = None,
                 seed: int | None = None, max_cycles: int | None = None, agent_seed: int | None = None,
                 meta: dict[str, Any] | None = None, _env=None) -> None:
        if game_name not in envs.NAMES:
            raise SessionError(f"unknown game {game_name!r}; games: {list(envs.NAMES)}")
        self.game_name = game_name
        config = resolve_config(game_name, config)
        if _env is None:
            try:
                self.adapter = EnvAdapter(game_name, config, max_cycles=max_cycles)
            except ConfigError as exc:
                raise SessionError(str(exc)) from None
        else:
            self.adapter = EnvAdapter.around(_env)
        self.game = self.adapter.game
        n = self.adapter.num_seats
        seats = list(seats)
        if len(seats) != n:
            raise SessionError(f"{game_name} with config {self.game.config} has {n} seats; got {len(seats)} "
                               f"seat assignments ({seats})")
        known = agents.available(game_name)
        for i, who in enumerate(seats):
            if who != HUMAN and who not in known:
                raise SessionError(f"seat {i}: {who!r} is neither 'human' nor an agent of {game_name}; "
                                   f"agents: {known}")
        self.seats = seats
        self.hidden = has_hidden_information(game_name)
        if seed is None:
            seed = secrets.randbits(31)
        if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**63:
            raise SessionError(f"seed must be an integer in [0, 2**63), got {seed!r}")
        self.seed = seed
        self.agent_seed = seed if agent_seed is None else agent_seed
        self.agents = {i: agents.make(who, seed=self.agent_seed + i) for i, who in enumerate(seats) if who != HUMAN}
        for i, agent in self.agents.items():
            reset_agent(agent, i, self.game)
        if _env is None:
            self.adapter.reset(seed)
        self.record: Record = new_record(self.adapter.env, seed, seats, meta={"source": "play", **(meta or {})})
        self.events: list[Event] = []
        #: (saved state before the move, number of moves before it) for each human move, newest last
        self._undo: list[tuple[dict[str, Any], int]] = []
        self.undos = 0

    # ------------------------------------------------------------------------------------------
    # What anyone may ask
    @property
    def humans(self) -> list[int]:
        return [i for i, who in enumerate(self.seats) if who == HUMAN]

    @property
    def over(self) -> bool:
        return self.adapter.over

    def to_act(self) -> int | None:
        return self.adapter.to_act()

    def human_to_act(self) -> int | None:
        seat = self.to_act()
        return seat if seat is not None and self.seats[seat] == HUMAN else None

    def view(self, seat: int) -> dict[str, Any]:
        """Everything ``seat`` may know (its ``player_view``)."""
        self._check_seat(seat)
        return self.adapter.view(seat)

    def legal_moves(self) -> list[tuple[int, str]]:
        """The legal actions of the seat to act, with their names."""
        return [(a, self.adapter.name(a)) for a in self.adapter.legal_actions()]

    def result(self) -> dict[str, Any]:
        return self.adapter.result()

    def describe_result(self) -> str:
        result = self.result()
        if not result["over"]:
            return "the game is not over"
        returns = result["returns"]
        best = max(returns)
        if result["truncated"]:
            head = "cut off at the move limit"
        elif all(r == returns[0] for r in returns):
            head = "a draw"
        else:
            winners = [i for i, r in enumerate(returns) if r == best]
            head = " and ".join(f"player_{i}" for i in winners) + (" win" if len(winners) > 1 else " wins")
        scores = ", ".join(f"player_{i} {r:+g}" for i, r in enumerate(returns))
        return f"{head} ({scores})"

    def seat_label(self, seat: int) -> str:
        who = self.seats[seat]
        return f"player_{seat} ({'you' if who == HUMAN and len(self.humans) == 1 else who})"

    def events_for(self, seat: int, since: int = 0) -> list[dict[str, Any]]:
        """Moves from record index ``since`` on, as ``seat`` may see them: hidden choices unnamed."""
        self._check_seat(seat)
        out = []
        for ev in self.events[since:]:
            visible = ev.seat == seat or ev.visible_to.get(seat, True)
            out.append({
                "index": ev.index, "seat": ev.seat, "phase": ev.phase,
                "action": ev.action if visible else None,
                "name": ev.name if visible else None,
                "text": f"{self.seat_label(ev.seat)}: {ev.name}" if visible
                else f"{self.seat_label(ev.seat)} made a hidden choice ({ev.phase})",
            })
        return out

    # ------------------------------------------------------------------------------------------
    # Moves
    def play(self, seat: int, action: Any) -> Event:
        """A human seat's move; refused unless it is that seat's turn and the action is legal."""
        self._check_seat(seat)
        if self.over:
            raise SessionError("the game is over; no more moves")
        if self.seats[seat] != HUMAN:
            raise SessionError(f"player_{seat} is played by {self.seats[seat]}, not by a human")
        to_act = self.to_act()
        if seat != to_act:
            raise SessionError(f"it is player_{to_act}'s turn, not player_{seat}'s")
        if isinstance(action, bool) or not isinstance(action, (int, np.integer)):
            raise SessionError(f"a move is an action id (an integer), got {action!r}")
        legal = self.adapter.legal_actions()
        if int(action) not in legal:
            name = self.adapter.name(action) if 0 <= int(action) < self.game.num_actions else "no such action"
            raise SessionError(f"action {action} ({name}) is not legal now; legal: "
                               f"{', '.join(self.adapter.name(a) for a in legal[:12])}"
                               f"{' ...' if len(legal) > 12 else ''}")
        self._undo.append((self.adapter.save(), len(self.record.moves)))
        return self._apply(seat, int(action))

    def step_agent(self) -> Event | None:
        """Let the agent to act make one move; None if a human is to act or the game is over."""
        seat = self.to_act()
        if seat is None or self.seats[seat] == HUMAN:
            return None
        agent = self.agents[seat]
        action = int(agent.act(self.adapter.observation(seat), self.adapter.view(seat)))
        if action not in self.adapter.legal_actions():
            raise SessionError(f"{self.seats[seat]} at player_{seat} chose an illegal action {action}")
        return self._apply(seat, action)

    def run_agents(self, limit: int | None = None) -> list[Event]:
        """Agents move until a human is to act, the game ends, or ``limit`` moves were made."""
        out = []
        while limit is None or len(out) < limit:
            ev = self.step_agent()
            if ev is None:
                break
            out.append(ev)
        return out

    def hint(self, agent_id: str | None = None) -> tuple[int, str, str]:
        """What ``agent_id`` (default: the game's best heuristic) would play for the seat to act."""
        seat = self.to_act()
        if seat is None:
            raise SessionError("the game is over; nothing to hint")
        agent_id = agent_id or default_hint_agent(self.game_name)
        if agent_id not in agents.available(self.game_name):
            raise SessionError(f"no agent {agent_id!r} for {self.game_name}; agents: {agents.available(self.game_name)}")
        bot = agents.make(agent_id, seed=self.agent_seed + 1000 + len(self.record.moves))
        reset_agent(bot, seat, self.game)
        action = int(bot.act(self.adapter.observation(seat), self.adapter.view(seat)))
        return action, self.adapter.name(action), agent_id

    def _apply(self, seat: int, action: int) -> Event:
        state = self.adapter.state
        phase = state.phase
        visible = {h: self._visible(state, seat, action, h) for h in self.humans if h != seat}
        self.adapter.step(action)
        move = Move(seat, action, self.adapter.name(action))
        self.record.moves.append(move)
        event = Event(len(self.record.moves), seat, action, move.name, visible, phase)
        self.events.append(event)
        if self.over:
            self.record.result = self.result()
        return event

    def _visible(self, state, mover: int, action: int, viewer: int) -> bool:
        """Could ``viewer`` tell ``action`` from every other legal action of ``mover``?"""
        if not self.hidden:
            return True
        after = state.clone()
        after.apply_action(action)
        seen = after.player_view(viewer)
        for other in np.flatnonzero(state.legal_mask()).tolist():
            if other == action:
                continue
            alt = state.clone()
            alt.apply_action(other)
            if alt.player_view(viewer) == seen:
                return False
        return True

    # ------------------------------------------------------------------------------------------
    # Undo
    def can_undo(self) -> str | None:
        """None if undo is possible now, else the reason it is refused."""
        if not self._undo:
            return "there is no human move to undo"
        saved, count = self._undo[-1]
        moves = self.record.moves[count:]
        if not self.hidden:
            return None
        before = self.game.load(saved)
        for h in self.humans:
            now = self.adapter.view(h)
            known = before.player_view(h)
            for k in range(UNDO_SAMPLES):
                try:
                    state = self.game.state_from_view(known, random.Random(k))
                    for m in moves:
                        state.apply_action(m.action)
                except (IllegalActionError, StateError, ValueError, KeyError, IndexError):
                    # an alternative deal in which the same moves are impossible (or cannot be built)
                    return self._revealed(h)
                if state.player_view(h) != now:
                    return self._revealed(h)
        return None

    def _revealed(self, seat: int) -> str:
        return (f"since that move player_{seat} has seen something that was hidden before "
                "(a card drawn, a die rolled or another seat's hidden card)")

    def undo(self) -> int:
        """Restore the state before the last human move (and the agents' moves after it).

        Returns how many moves were taken back; raises :class:`UndoRefused` saying why not.
        """
        reason = self.can_undo()
        if reason is not None:
            raise UndoRefused(reason)
        saved, count = self._undo.pop()
        taken = len(self.record.moves) - count
        self.adapter.restore(saved)
        del self.record.moves[count:]
        del self.events[count:]
        self.record.result = None
        self.undos += 1
        self.record.meta["undos"] = self.undos
        return taken

    # ------------------------------------------------------------------------------------------
    # Save and resume
    def save(self) -> dict[str, Any]:
        """A JSON-compatible dict: the environment's saved state plus the record so far."""
        return {"format": SESSION_FORMAT, "state": self.adapter.save(), "record": self.record.to_dict(),
                "agent_seed": self.agent_seed, "undos": self.undos}

    @classmethod
    def load(cls, data: Any, seats: Sequence[str] | None = None) -> Session:
        """Resume a saved session. The record must replay to exactly the saved state.

        ``seats`` may reassign who plays each seat (e.g. take over a seat from an agent).
        """
        if not isinstance(data, dict) or data.get("format") != SESSION_FORMAT:
            raise SessionError(f"not a saved play session (expected format {SESSION_FORMAT!r})")
        unknown = sorted(set(data) - {"format", "state", "record", "agent_seed", "undos"})
        if unknown:
            raise SessionError(f"saved session has unknown keys {unknown}")
        try:
            record = Record.from_dict(data.get("record"))
        except RecordError as exc:
            raise SessionError(f"saved session's record is invalid: {exc}") from None
        agent_seed = data.get("agent_seed", record.seed)
        undos = data.get("undos", 0)
        for key, value in (("agent_seed", agent_seed), ("undos", undos)):
            if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 2**63:
                raise SessionError(f"saved session's {key} must be an integer >= 0, got {value!r}")
        record.result = None  # recomputed below
        befores: list[dict[str, Any]] = []
        previous: list[dict[str, Any]] = []

        def remember(i: int, move: Move, env) -> None:
            befores.append(previous[0])
            previous[0] = env.save_state()

        try:
            from agents.records import make_env
            previous.append(make_env(record).save_state())
            env = replay(record, on_move=remember)
        except RecordError as exc:
            raise SessionError(f"saved session's record does not replay: {exc}") from None
        saved_state = data.get("state")
        if env.save_state() != saved_state:
            try:
                env.game.load(saved_state)
            except StateError as exc:
                raise SessionError(f"saved session's state is invalid: {exc}") from None
            raise SessionError("saved session's state is not the state its record replays to; "
                               "the file was edited or made by another version")
        session = cls(record.game, list(seats) if seats is not None else record.seats, seed=record.seed,
                      agent_seed=agent_seed, _env=env)
        session.record.moves = list(record.moves)
        session.record.meta = dict(record.meta, resumed=True)
        session.record.max_cycles = record.max_cycles
        session.undos = undos
        for i, move in enumerate(record.moves):
            session.events.append(Event(i + 1, move.seat, move.action, move.name,
                                        {h: False for h in session.humans}, "earlier"))
            if session.seats[move.seat] == HUMAN:
                session._undo.append((befores[i], i))
        if session.over:
            session.record.result = session.result()
        return session

    # ------------------------------------------------------------------------------------------
    def _check_seat(self, seat: Any) -> None:
        if isinstance(seat, bool) or not isinstance(seat, int) or not 0 <= seat < len(self.seats):
            raise SessionError(f"seat must be an integer in [0, {len(self.seats)}), got {seat!r}")


def default_hint_agent(game_name: str) -> str:
    """The strongest shipped heuristic of a game (highest version), else its random agent."""
    ids = [a for a in agents.available(game_name) if "/heuristic-v" in a]
    if ids:
        return max(ids, key=lambda a: int(a.rsplit("-v", 1)[1]))
    return f"{game_name}/random-v0"


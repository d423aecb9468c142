"""A play session: one game, human seats and agent seats, the record, save/resume and undo.

Both front ends (``play.terminal`` and ``play.web``) sit on :class:`Session`. A session

* holds the environment, which seats are human (``"human"``) and which are agents (any registered
  id: random, heuristic, checkpoint), and the :class:`~agents.records.Record` of every move;
* shows a seat only its ``player_view`` (:meth:`Session.view`) and names another seat's move to it
  only when that seat could tell the move from the alternatives (:meth:`Session.events_for`): a
  face-down choice (Pan's Trial's first Appeasing card, Dojo's kept Tecnica) reads "made a hidden
  choice";
* tells each human seat what every move caused, in the game's words (:mod:`play.story`, from that
  seat's own views), names moves for people (``legal_moves``), says why a seat cannot act for a
  while (:meth:`Session.waiting`) and lets the agents play on to the next decision (:meth:`Session.skip`);
* saves to a JSON dict (the environment's ``save_state`` plus the record) and resumes from it,
  checking that the record replays to exactly the saved state (the earlier moves are told again as
  they were told the first time, hidden choices hidden and nothing else). A save holds the whole position,
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

The game runs in :class:`agents.runner.Runner`, the loop every tool plays in: a human seat is a
seat played from outside (``None``), the agents' seats move in ``Runner.step``, the
:class:`~agents.records.Recorder` hook writes the record and the session's own hook notes each
move for the move list. Undo goes back to the saved position with ``Runner.restore``; resume starts
the runner from the saved position.
"""

from __future__ import annotations

import json
import random
import secrets
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

import agents
import envs
from agents.records import HUMAN, Move, Record, Recorder, RecordError, env_result, make_env, replay
from agents.runner import TRUNCATED, Runner, RunnerHooks, decide
from agents.policy_io import CheckpointError
from envs.core import ConfigError, Game, IllegalActionError, StateError
from play.story import ending, label, score_text, tell, waiting_reason

SESSION_FORMAT = "tabletop-rl/session"
#: Deals sampled when deciding whether undo would reveal hidden information.
UNDO_SAMPLES = 6
#: The most agent moves one "skip" plays before it answers (a page asks again if the game goes on).
SKIP_LIMIT = 20_000
#: How the result line names the ways a game can end (``Runner.end_reason``).
END_TEXT = {"no-progress": "ended by the no-progress rule", TRUNCATED: "cut off at the move limit"}


class SessionError(ValueError):
    """A request the session cannot honour (not your turn, illegal move, bad save, ...)."""


def value_words(value: Any) -> str:
    """A value someone sent, in words for the message that refuses it: "nothing", "a boolean",
    ``"abc"`` (text, quoted and cut short), ``2.5``, "a list", ... — never a Python repr."""
    if value is None:
        return "nothing"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        return f"{float(value):g}"
    if isinstance(value, str):
        return f'"{value[:40]}{"..." if len(value) > 40 else ""}"' if value else "empty text"
    if isinstance(value, (list, tuple)):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return "a value of another kind"


def listed(items: Sequence[Any]) -> str:
    """Items for a message: ``a, b, c`` (no brackets, no quotes)."""
    return ", ".join(str(item) for item in items) or "none"


class UndoRefused(SessionError):
    """Undo is not possible here; the message says why."""


# ----------------------------------------------------------------------------------------------
def config_families(game_name: str) -> dict[str, dict[str, Any]]:
    """The game's named configs (``Game.config_families``)."""
    return {k: dict(v) for k, v in envs.game_class(game_name).config_families.items()}


def resolve_config(game_name: str, config: str | dict[str, Any] | None) -> dict[str, Any]:
    """A config given as a family name of the game (``"2x2"``), a dict, or None (the default)."""
    if config is None:
        return {}
    if isinstance(config, dict):
        return dict(config)
    families = config_families(game_name)
    if config not in families:
        raise SessionError(f"{game_name} has no config named {value_words(config)}; its configs: {listed(sorted(families))}")
    return families[config]


def agent_misfit(agent_id: str, game: Game) -> str | None:
    """Why ``agent_id`` cannot sit at a table of ``game`` (a configured game), or None if it can.

    A trained policy plays only at a table with the rules it was trained for (its game config,
    differing at most in the game's ``observation_keys``: ``Game.same_rules``); heuristics and
    random agents sit at any table of their game. An agent that cannot even be made (a broken
    checkpoint entry) answers what is wrong with it.
    """
    try:
        agent = agents.make(agent_id, seed=0)
    except (CheckpointError, ValueError) as exc:
        return str(exc)
    trained_config = getattr(agent, "trained_config", None)
    if not trained_config:
        return None
    trained = envs.make_game(game.name, **trained_config)
    if trained.same_rules(game):
        return None
    differ = trained.rule_differences(game)
    return (f"{agent_id} was trained for another table: it was trained with "
            f"{listed(f'{k}={json.dumps(trained.config.get(k))}' for k in differ)}, "
            f"this table has {listed(f'{k}={json.dumps(game.config.get(k))}' for k in differ)}")


def agents_for(game_name: str, config: str | dict[str, Any] | None = None) -> list[str]:
    """The agents of ``game_name`` that can sit at a table with ``config`` (see :func:`agent_misfit`)."""
    game = make_game(game_name, config)
    return [a for a in agents.available(game_name) if agent_misfit(a, game) is None]


def unknown_game(game_name: Any) -> SessionError:
    """The refusal of a game that is not one of ours, naming the games."""
    if game_name is None:
        return SessionError(f"no game given; the games: {listed(envs.NAMES)}")
    return SessionError(f"unknown game {value_words(game_name)}; the games: {listed(envs.NAMES)}")


def make_game(game_name: str, config: str | dict[str, Any] | None = None) -> Game:
    """The configured game; an unknown game or a bad config is a :class:`SessionError`."""
    if game_name not in envs.NAMES:
        raise unknown_game(game_name)
    try:
        return envs.make_game(game_name, **resolve_config(game_name, config))
    except ConfigError as exc:
        raise SessionError(str(exc)) from None


def seat_count(game_name: str, config: dict[str, Any] | None = None) -> int:
    """How many seats ``game_name`` has with ``config``; a bad config is a :class:`SessionError`."""
    return make_game(game_name, config or {}).num_players


@dataclass
class Event:
    """One move as the session saw it: who, what, and for each human seat whether it may see which."""

    index: int  # 1-based move number in the record
    seat: int
    action: int
    name: str
    visible_to: dict[int, bool]
    phase: str
    #: The move's name for a person (``play.story.label``), as its mover saw it.
    label: str = ""
    #: The move's name for each human seat that could tell it apart, from that seat's own view (a
    #: name built from the mover's view could hold what only the mover knows).
    labels: dict[int, str] = field(default_factory=dict)
    #: What the move caused, told to each human seat from its own views (``play.story``); with no
    #: human seat, told to the mover (key: the seat the story is told to).
    story: dict[int, list[str]] = field(default_factory=dict)


# ----------------------------------------------------------------------------------------------
class _MoveNotes(RunnerHooks):
    """The session's runner hook: each move as an :class:`Event`, with who among the humans may see it."""

    def __init__(self, session: Session) -> None:
        self.session = session
        self.before = None

    def before_step(self, runner: Runner, seat: int, action: int) -> None:
        self.before = runner.state.clone()

    def on_step(self, runner: Runner, seat: int, action: int) -> None:
        before, self.before = self.before, None
        self.session._note(len(self.session.record.moves), before, runner.state, seat, action)


class Session:
    """One game between human seats and agents; see the module docstring.

    ``runner`` is the :class:`~agents.runner.Runner` the game is played in (its ``state`` is the
    full position: for the session's own checks and a spectator, never shown to a seat).
    ``state`` continues a saved position (``env.save_state()``) instead of dealing a new one.
    """

    def __init__(self, game_name: str, seats: Sequence[str], config: str | dict[str, Any] | None = None,
                 seed: int | None = None, max_cycles: int | None = None, agent_seed: int | None = None,
                 meta: dict[str, Any] | None = None, state: dict[str, Any] | None = None) -> None:
        if game_name not in envs.NAMES:
            raise unknown_game(game_name)
        self.game_name = game_name
        config = resolve_config(game_name, config)
        n = seat_count(game_name, config)
        seats = list(seats)
        if len(seats) != n:
            raise SessionError(f"{game_name} with this config has {n} seats; got {len(seats)} "
                               f"seat assignments ({listed(seats)})")
        known = agents.available(game_name)
        for i, who in enumerate(seats):
            if who != HUMAN and who not in known:
                raise SessionError(f"seat {i}: {value_words(who)} is neither 'human' nor an agent of {game_name}; "
                                   f"agents for this table: {listed(agents_for(game_name, config))}")
        table = make_game(game_name, config)
        for i, who in enumerate(seats):
            misfit = agent_misfit(who, table) if who != HUMAN else None
            if misfit is not None:
                raise SessionError(f"seat {i}: {misfit}; agents for this table: {listed(agents_for(game_name, config))}")
        self.seats = seats
        self.hidden = envs.game_class(game_name).hidden_information
        if seed is None:
            seed = secrets.randbits(31)
        if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**63:
            raise SessionError(f"the seed must be a whole number from 0 to 2**63 - 1; got {value_words(seed)}")
        self.seed = seed
        self.agent_seed = seed if agent_seed is None else agent_seed
        self.agents = {i: agents.make(who, seed=self.agent_seed + i) for i, who in enumerate(seats) if who != HUMAN}
        self.events: list[Event] = []
        #: (saved state before the move, number of moves before it) for each human move, newest last
        self._undo: list[tuple[dict[str, Any], int]] = []
        self.undos = 0
        self._recorder = Recorder(seats, meta={"source": "play", **(meta or {})})
        if max_cycles is not None:
            config = dict(config, max_cycles=max_cycles)
        try:
            self.runner = Runner(game_name, [self.agents.get(i) for i in range(n)], seed=seed, config=config,
                                 hooks=[self._recorder, _MoveNotes(self)], state=state)
        except ConfigError as exc:
            raise SessionError(str(exc)) from None
        self.game = self.runner.game

    # ------------------------------------------------------------------------------------------
    # What anyone may ask
    @property
    def record(self) -> Record:
        """The record of every move so far (its ``result`` is set once the game is over)."""
        assert self._recorder.record is not None
        return self._recorder.record

    @property
    def humans(self) -> list[int]:
        return [i for i, who in enumerate(self.seats) if who == HUMAN]

    @property
    def over(self) -> bool:
        return self.runner.finished

    @property
    def phase(self) -> str:
        """The phase of the game (public: every seat's view names it)."""
        return self.runner.state.phase

    @property
    def end_reason(self) -> str | None:
        """Why the game ended (``Runner.end_reason``: ``"rules"``, ``"no-progress"``, ``"truncated"``,
        ...), None while it goes on."""
        return self.runner.end_reason

    def to_act(self) -> int | None:
        return self.runner.seat_to_act

    def human_to_act(self) -> int | None:
        seat = self.to_act()
        return seat if seat is not None and self.seats[seat] == HUMAN else None

    def view(self, seat: int) -> dict[str, Any]:
        """Everything ``seat`` may know (its ``player_view``)."""
        self._check_seat(seat)
        return self.runner.inputs(seat)[1]

    def legal_moves(self) -> list[tuple[int, str]]:
        """The legal actions of the seat to act, with their names for a person (``play.story.label``:
        players by name, squares and cards by what they are)."""
        seat = self.to_act()
        if seat is None:
            return []
        view = self.runner.state.player_view(seat)
        return [(a, label(self.game, view, a)) for a in self.runner.legal_actions()]

    def result(self) -> dict[str, Any]:
        return env_result(self.runner.env)

    def describe_result(self) -> str:
        result = self.result()
        if not result["over"]:
            return "the game is not over"
        returns = result["returns"]
        best = max(returns)
        reason = self.runner.end_reason
        if reason == TRUNCATED:
            head = END_TEXT[TRUNCATED]
        else:
            if all(r == returns[0] for r in returns):
                head = "a draw"
            else:
                winners = [i for i, r in enumerate(returns) if r == best]
                head = " and ".join(f"player_{i}" for i in winners) + (" win" if len(winners) > 1 else " wins")
            if reason in END_TEXT:
                head += f", {END_TEXT[reason]}"
        scores = ", ".join(f"player_{i} {score_text(r)}" for i, r in enumerate(returns))
        return f"{head} ({scores})"

    def end_text(self) -> str:
        """Why the game ended and who won, in words: the game's story (``play.story.ending``), else its
        ``end_texts`` for the engine's reason, or the move limit ("" while the game goes on). The
        terminal and the browser say it this way."""
        reason = self.runner.end_reason
        if reason is None:
            return ""
        if reason == TRUNCATED:
            return "the move limit was reached before the rules ended the game, so nobody wins"
        # The game's story names the winner and the reason; else the game's words for the reason.
        told = ending(self.game, self.runner.state.player_view(self.humans[0] if self.humans else 0))
        if told:
            return told
        text = self.game.end_texts.get(reason)
        return text.format(**self.game.config) if text else f"{reason}"

    def waiting(self, seat: int) -> str:
        """Why ``seat`` (a human seat) cannot act for a while, in words: its bot follows a party, it is out
        of the game, ... ("" when it simply waits for its turn, or the game is over)."""
        self._check_seat(seat)
        if self.to_act() is None or self.to_act() == seat:
            return ""
        return waiting_reason(self.game, self.view(seat))

    def skip(self, seat: int, limit: int = SKIP_LIMIT) -> list[Event]:
        """Agents move until ``seat`` (or another human) is to act or the game ends (at most ``limit``
        moves: a game cut off at its move limit ends well before)."""
        self._check_seat(seat)
        return self.run_agents(limit)

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
                "text": f"{self.seat_label(ev.seat)}: {ev.labels.get(seat) or ev.label or ev.name}" if visible
                else f"{self.seat_label(ev.seat)} made a hidden choice",
                "story": list(ev.story.get(seat, ())),
            })
        return out

    def _note(self, index: int, before: Any, after: Any, seat: int, action: int) -> Event:
        """Note move ``index`` (``action`` of ``seat``, from state ``before`` to ``after``) as an
        :class:`Event`: who among the humans may tell the move apart, and what it caused for each."""
        visible = {h: not self.hidden or self._visible(before, seat, action, h) for h in self.humans if h != seat}
        viewers = self.humans or [seat]
        story, labels = {}, {}
        for v in viewers:
            known = v == seat or visible.get(v, True)
            story[v] = tell(self.game, before, after, seat, action if known else None, v)
            if known:
                labels[v] = label(self.game, before.player_view(v), action)
        event = Event(index, seat, action, self.game.action_to_string(action), visible, before.phase,
                      label=label(self.game, before.player_view(seat), action), labels=labels, story=story)
        self.events.append(event)
        return event

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
            raise SessionError(f"a move is an action number; got {value_words(action)}")
        legal = self.legal_moves()
        shown = f"{'; '.join(name for _, name in legal[:12])}{' ...' if len(legal) > 12 else ''}"
        if not 0 <= int(action) < self.game.num_actions:
            raise SessionError(f"there is no action number {int(action)} in {self.game_name} (they run from 0 to "
                               f"{self.game.num_actions - 1}); the legal moves now: {shown}")
        if int(action) not in {a for a, _ in legal}:
            name = label(self.game, self.runner.state.player_view(seat), int(action))
            raise SessionError(f"action {int(action)} ({name}) is not legal now; the legal moves: {shown}")
        self._undo.append((self.runner.env.save_state(), len(self.record.moves)))
        self.runner.apply(int(action), seat)
        return self.events[-1]

    def step_agent(self) -> Event | None:
        """Let the agent to act make one move; None if a human is to act or the game is over."""
        seat = self.to_act()
        if seat is None or self.seats[seat] == HUMAN:
            return None
        try:
            self.runner.step()
        except IllegalActionError as exc:
            raise SessionError(f"{self.seats[seat]} at player_{seat} chose an illegal action: {exc}") from None
        return self.events[-1]

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
        if self.to_act() is None:
            raise SessionError("the game is over; nothing to hint")
        agent_id = agent_id or default_hint_agent(self.game_name)
        if agent_id not in agents.available(self.game_name):
            raise SessionError(f"no agent {value_words(agent_id)} for {self.game_name}; agents for this table: "
                               f"{listed(agents_for(self.game_name, self.game.config))}")
        try:
            action = decide(agent_id, self.runner.state, seed=self.agent_seed + 1000 + len(self.record.moves))
        except IllegalActionError as exc:
            raise SessionError(f"no hint: {exc}") from None
        return action, label(self.game, self.runner.state.player_view(self.to_act()), action), agent_id

    def _visible(self, state, mover: int, action: int, viewer: int) -> bool:
        """Could ``viewer`` tell ``action`` from every other legal action of ``mover`` in ``state``?"""
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
            now = self.view(h)
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
        self.runner.restore(saved)
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
        return {"format": SESSION_FORMAT, "state": self.runner.env.save_state(), "record": self.record.to_dict(),
                "agent_seed": self.agent_seed, "undos": self.undos}

    @classmethod
    def load(cls, data: Any, seats: Sequence[str] | None = None) -> Session:
        """Resume a saved session. The record must replay to exactly the saved state.

        ``seats`` may reassign who plays each seat (e.g. take over a seat from an agent).
        """
        if not isinstance(data, dict) or data.get("format") != SESSION_FORMAT:
            raise SessionError(f"not a saved play session (a saved session has the format {SESSION_FORMAT})")
        unknown = sorted(set(data) - {"format", "state", "record", "agent_seed", "undos"})
        if unknown:
            raise SessionError(f"the saved session has fields this version does not know: {listed(unknown)}")
        try:
            record = Record.from_dict(data.get("record"))
        except RecordError as exc:
            raise SessionError(f"saved session's record is invalid: {exc}") from None
        agent_seed = data.get("agent_seed", record.seed)
        undos = data.get("undos", 0)
        for key, value in (("agent_seed", agent_seed), ("undos", undos)):
            if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 2**63:
                raise SessionError(f"the saved session's {key} must be a whole number >= 0; got {value_words(value)}")
        record.result = None  # recomputed below
        befores: list[dict[str, Any]] = []
        previous: list[dict[str, Any]] = []
        states: list[Any] = []

        def remember(i: int, move: Move, env) -> None:
            befores.append(previous[0])
            previous[0] = env.save_state()
            states.append(env.unwrapped.engine_state.clone())

        try:
            first = make_env(record)
            previous.append(first.save_state())
            states.append(first.unwrapped.engine_state.clone())
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
        session = cls(record.game, list(seats) if seats is not None else record.seats, config=record.config,
                      seed=record.seed, max_cycles=record.max_cycles, agent_seed=agent_seed, state=saved_state)
        session.record.moves = list(record.moves)
        session.record.meta = dict(record.meta, resumed=True)
        session.undos = undos
        for i, move in enumerate(record.moves):
            # Each earlier move as it was told then: named to whoever could tell it apart, its story too.
            session._note(i + 1, states[i], states[i + 1], move.seat, move.action)
            if session.seats[move.seat] == HUMAN:
                session._undo.append((befores[i], i))
        return session

    # ------------------------------------------------------------------------------------------
    def _check_seat(self, seat: Any) -> None:
        if isinstance(seat, bool) or not isinstance(seat, int) or not 0 <= seat < len(self.seats):
            raise SessionError(f"the seat must be a whole number from 0 to {len(self.seats) - 1}; got {value_words(seat)}")


def default_hint_agent(game_name: str) -> str:
    """The strongest shipped heuristic of a game (highest version), else its random agent."""
    ids = [a for a in agents.available(game_name) if "/heuristic-v" in a]
    if ids:
        return max(ids, key=lambda a: int(a.rsplit("-v", 1)[1]))
    return f"{game_name}/random-v0"


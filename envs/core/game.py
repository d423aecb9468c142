"""The engine contract every game implements.

Two classes, in the spirit of OpenSpiel's python games:

* :class:`Game` holds a validated configuration and the facts that follow from it (number of
  players and actions, observation shape, reward bounds). It builds states, decodes saved states,
  encodes observations and renders. A game instance is immutable and shared by all its states.
* :class:`State` is one position. It knows whose turn it is, which actions are legal (a fixed-length
  ``int8`` mask), applies actions (raising :class:`~envs.core.errors.IllegalActionError` for
  anything the rules forbid), tells when the game is over and what each player earned, describes
  what one seat may know (``player_view``), clones itself and saves to a JSON-compatible dict that
  includes its RNG.

The generic PettingZoo environment in :mod:`envs.core.env` drives any pair of subclasses; so do the
agents, the evaluation harness, the tests and the benchmarks. Nothing in this module knows any
particular game.
"""

from __future__ import annotations

import abc
import functools
import importlib
import json
import random
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from envs.core.errors import ConfigError, IllegalActionError, StateError, UnknownKeywordError
from envs.core.fields import Record, show
from envs.core.rng import GENERATORS, draw_seed, make_rng

if TYPE_CHECKING:
    from envs.core.picture import Picture

TERMINAL = -1
"""``State.current_player()`` once the game is over."""

SAVE_FORMAT = "tabletop-rl/state"

#: The words a ``Game.turn_structure`` is made of.
TURN_KINDS = ("sequential", "out-of-turn decisions", "simultaneous choices")


class Game(abc.ABC):
    """Static facts and factories for one configured game.

    Subclasses declare the class attributes below, implement :meth:`_validate_config` to turn the
    user's keywords into a complete, JSON-compatible ``config`` dict (raising
    :class:`ConfigError` with the allowed values on anything wrong), and set the instance facts
    ``num_players``, ``num_actions`` and ``observation_shape`` in ``__init__``.

    Every fact about a game is declared here, once: the generic tests, the benchmarks, the agents
    and the tools read these attributes and nothing else (no module globals, no ``getattr``
    defaults). A game with teams sets ``num_teams`` in ``__init__`` and overrides :meth:`team_of`.

    States are made in two ways only, both provided here: :meth:`new_initial_state` deals a fresh
    game (``state_class.deal``) and :meth:`load_state` loads a saved one (the fields that
    ``state_class.saved_fields`` declares, then the game's invariants).
    """

    #: Module name of the environment, e.g. ``"sequence_v0"``.
    name: ClassVar[str]
    #: Bumped whenever rules, actions or observations change incompatibly.
    version: ClassVar[int] = 0
    #: Bounds of any single player's return.
    reward_range: ClassVar[tuple[float, float]] = (-1.0, 1.0)
    #: Truncation cap in cycles (one cycle = one action per agent) when the user gives none.
    default_max_cycles: ClassVar[int] = 1000
    observation_low: ClassVar[float] = 0.0
    observation_high: ClassVar[float] = 1.0
    observation_dtype: ClassVar[type] = np.float32
    #: Whether a seat's observation leaves out something another seat or the deck knows (hands, deck
    #: order); the generic tests then prove that changing the hidden part leaves it unchanged.
    hidden_information: ClassVar[bool] = True
    #: Where the board sits in the flat observation, for networks that convolve over it (None: no
    #: board there). Keys: ``channels``, ``height``, ``width``; ``layout`` "planes" (plane-major,
    #: ``obs[c * H * W + square]``) or "squares" (square-major, ``obs[square * C + c]``); ``circular``
    #: (the board is a torus); ``square_heads``, the ``[first_action, count]`` ranges whose action
    #: ``first_action + square`` is about that square (count equals H * W). A game whose board size
    #: depends on its config sets it per instance in ``__init__``.
    board_layout: ClassVar[dict[str, Any] | None] = None
    #: Where a table of like entities (one row per player, piece, ...) sits in the flat observation,
    #: for networks that read every row with the same weights (None: no table). Keys: ``offset``,
    #: ``rows``, ``row_len`` (row ``j`` is ``obs[offset + j * row_len : offset + (j + 1) * row_len]``);
    #: ``row_actions``, ``[start, first_action, count]`` ranges of a row whose value ``start + i`` is
    #: about action ``first_action + i`` (e.g. what each move does to the distance to that row's
    #: entity); ``action_blocks``, ``[offset, first_action, count]`` ranges outside the table that are
    #: about actions in the same way. A game whose table depends on its config sets it per instance.
    table_layout: ClassVar[dict[str, Any] | None] = None
    #: Config keywords that change only what a seat observes, never the rules, the actions or the
    #: returns (Wizard Arena's ``observation_version``). A policy trained with other values of these
    #: keywords can still sit at this game's tables: it encodes its own observation from the seat's
    #: view (:meth:`observe_view`). See :meth:`same_rules`.
    observation_keys: ClassVar[tuple[str, ...]] = ()
    #: Named configurations (keyword dicts) that the generic tests, golden files and tools cover.
    config_families: ClassVar[dict[str, dict[str, Any]]] = {"default": {}}
    #: Configurations timed by ``python -m benchmarks.run`` (label -> keywords).
    benchmark_configs: ClassVar[dict[str, dict[str, Any]]] = {"default": {}}
    #: Random games the generic fuzz test plays per configuration family, the action budget of each,
    #: and whether random play may fail to finish any of them within that budget.
    #: Rule variants a designer compares against the default (label -> config keywords), used by
    #: ``python -m tools.simulate``; when empty, the simulator flips every boolean keyword.
    rule_variants: ClassVar[dict[str, dict[str, Any]]] = {}
    fuzz_games: ClassVar[int] = 40
    fuzz_max_actions: ClassVar[int] = 3000
    fuzz_may_not_finish: ClassVar[bool] = False

    # The game's type, as the properties table (``python -m tools.properties``,
    # docs/reference/properties.md) shows it; tests/test_properties.py holds them to the code.
    #: How turns go, a tuple of :data:`TURN_KINDS`: "sequential" (seats act in turn),
    #: "out-of-turn decisions" (a seat not on turn is asked, e.g. to defend or to accept an
    #: alliance), "simultaneous choices" (seats commit without seeing each other's choice; the
    #: environment asks them one after the other and hides the first choice from the second).
    turn_structure: ClassVar[tuple[str, ...]]
    #: Whether the game has chance (shuffles, dice, generated maps): different seeds deal differently.
    chance: ClassVar[bool]
    #: The rewards in words: when they are paid and how much.
    reward_structure: ClassVar[str]
    #: Whether the seats' returns sum to zero in every game. A game where that depends on the config
    #: sets it per instance in ``__init__`` (Sequence: only with two teams).
    zero_sum: ClassVar[bool]

    #: The game's :class:`State` subclass (dealt by :meth:`new_initial_state`, loaded by :meth:`load_state`).
    state_class: ClassVar[type[State]]

    num_players: int
    num_actions: int
    observation_shape: tuple[int, ...]
    #: Length of the game's referee block in :meth:`encode_state` (what no seat's reference
    #: observation shows: other hands, deck contents, secret cards); set in ``__init__`` when the
    #: game has one, with :meth:`encode_referee_block` to fill it.
    referee_block_size: int = 0

    def __init__(self, **config: Any) -> None:
        self.config: dict[str, Any] = self._validate_config(dict(config))

    # ----------------------------------------------------------------------------------------
    # To implement
    @abc.abstractmethod
    def _validate_config(self, config: dict[str, Any]) -> dict[str, Any]:
        """Return the complete config (defaults filled in); raise ConfigError on a bad keyword."""

    @abc.abstractmethod
    def state_from_view(self, view: dict[str, Any], rng: random.Random) -> State:
        """A full state consistent with one seat's ``player_view``; hidden parts drawn from rng."""

    @abc.abstractmethod
    def observe(self, state: State, player: int) -> np.ndarray:
        """The observation tensor of ``player`` (only what that seat may know)."""

    @abc.abstractmethod
    def action_to_string(self, action: int) -> str:
        """A short, stable, human-readable name for an action id."""

    def encode_referee_block(self, state: State) -> np.ndarray:
        """The game's part of :meth:`encode_state`: ``referee_block_size`` float32 values in [0, 1]
        holding what :meth:`observe` for seat 0 leaves out. Default: nothing (no hidden state)."""
        return np.zeros(0, dtype=np.float32)

    def play_statistics(self, state: State) -> dict[str, float]:
        """Counts a game designer looks at in a finished game (turns, fights, ...); default none."""
        return {}

    def render_text(self, state: State) -> str:
        """A text picture of the state (used by the ``ansi`` and ``human`` render modes)."""
        return json.dumps(state.to_dict(), sort_keys=True)

    def render_rgb(self, state: State) -> np.ndarray:
        """An ``(H, W, 3)`` uint8 image of the state. Default: the text drawn with Pillow."""
        from envs.core.render import text_to_image

        return text_to_image(self.render_text(state))

    # Front ends (play/). See envs.core.picture and docs/adding_a_game.md.
    #: The module that draws this game's board for the front ends: it defines ``picture(game, view)``
    #: and ``action_square(game, view, action)``, read by :meth:`picture` and :meth:`action_square`.
    #: None: the front ends show the seat's view as text, and the moves as buttons (a numbered list).
    picture_module: ClassVar[str | None] = None
    #: What each ``State.end_reason()`` of this game means, in words for the front ends' "how it ended"
    #: line; ``{keyword}`` fields are filled from the config.
    end_texts: ClassVar[dict[str, str]] = {"rules": "the rules ended the game"}
    #: What the colours and letters of :meth:`render_rgb` mean, written under replay pictures ("": none).
    image_legend: ClassVar[str] = ""

    def picture(self, view: dict[str, Any]) -> Picture | None:
        """The board as one seat sees it, built from that seat's ``player_view`` alone; None: no picture."""
        if self.picture_module is None:
            return None
        return importlib.import_module(self.picture_module).picture(self, view)

    def action_square(self, view: dict[str, Any], action: int) -> tuple[int, int] | None:
        """The ``(row, col)`` of :meth:`picture` that ``action`` is about (a chip's square, a step's
        target), or None for a move that is not about a square (or a game without a picture)."""
        if self.picture_module is None:
            return None
        return importlib.import_module(self.picture_module).action_square(self, view, int(action))

    # ----------------------------------------------------------------------------------------
    # Provided
    @functools.cached_property
    def num_teams(self) -> int:
        """Number of sides that share a result. Default: every seat is its own team; a team game
        assigns ``self.num_teams`` in ``__init__`` and overrides :meth:`team_of`."""
        return self.num_players

    def team_of(self, seat: int) -> int:
        """The team (``0 .. num_teams-1``) that ``seat`` plays for. Default: seat ``i`` is team ``i``."""
        return seat

    def team_seats(self, team: int) -> list[int]:
        """The seats of ``team``, in seat order."""
        return [s for s in range(self.num_players) if self.team_of(s) == team]

    def team_returns(self, returns: list[float]) -> list[float]:
        """Per-team result from per-seat returns: the mean over the team's seats (team-mates always
        share a result in the games here, so this is also each member's return)."""
        out = []
        for t in range(self.num_teams):
            seats = self.team_seats(t)
            out.append(sum(returns[s] for s in seats) / len(seats))
        return out

    # ----------------------------------------------------------------------------------------
    # The whole position as one array (PettingZoo's ``state()``)
    @property
    def state_shape(self) -> tuple[int]:
        """Shape of :meth:`encode_state`: the observation size + ``num_players + 1`` + the referee block."""
        return (int(np.prod(self.observation_shape)) + self.num_players + 1 + self.referee_block_size,)

    def state_bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """Per-value ``(low, high)`` float32 arrays of :meth:`encode_state` (the state space's bounds):
        the observation's bounds, then [0, 1] for the seat to act and the referee block."""
        obs_len = int(np.prod(self.observation_shape))
        low = np.zeros(self.state_shape, dtype=np.float32)
        high = np.ones(self.state_shape, dtype=np.float32)
        low[:obs_len], high[:obs_len] = self.observation_low, self.observation_high
        return low, high

    def encode_state(self, state: State) -> np.ndarray:
        """The whole position as the referee sees it, as one flat float32 array of :attr:`state_shape`
        (a pure function of the position: equal saved states give equal arrays). Three blocks:

        1. seat 0's observation (:meth:`observe`, the public position from seat 0's side and seat 0's
           own secrets), laid out as the game's observation table;
        2. ``num_players + 1`` values: one-hot of the seat to act, the last value set once the game is over;
        3. the referee block (:meth:`encode_referee_block`): what seat 0 cannot see, such as the other
           hands, the deck's contents and secret choices, as each game's module docstring lays out.

        The random generator is never encoded: future chance is not part of the position."""
        to_act = np.zeros(self.num_players + 1, dtype=np.float32)
        to_act[state.current_player()] = 1.0  # TERMINAL (-1) is the last value
        block = np.asarray(self.encode_referee_block(state), dtype=np.float32)
        if block.shape != (self.referee_block_size,):
            raise ValueError(f"{self.name}: the referee block has shape {block.shape}, "
                             f"declared ({self.referee_block_size},)")
        obs = np.asarray(self.observe(state, 0), dtype=np.float32).ravel()
        return np.concatenate((obs, to_act, block))

    @functools.cached_property
    def _name_to_action(self) -> dict[str, int]:
        return {self.action_to_string(a): a for a in range(self.num_actions)}

    def string_to_action(self, text: str) -> int:
        """Inverse of :meth:`action_to_string`; raises ValueError naming a few valid spellings."""
        table = self._name_to_action
        try:
            return table[text]
        except KeyError:
            examples = ", ".join(list(table)[:5])
            raise ValueError(
                f"{self.name}: no action is named {text!r}; names look like: {examples}, ..."
            ) from None

    def new_initial_state(self, seed: int | random.Random | np.random.Generator | None = None) -> State:
        """A fresh game whose every random draw comes from ``seed``: an integer >= 0; a generator
        (``random.Random`` or ``numpy.random.Generator``), from which the game's seed is drawn, so
        that a generator seeded alike deals the same run of games in any process; or None for a
        seed drawn from the operating system."""
        if isinstance(seed, GENERATORS):
            seed = draw_seed(seed)
        return self.state_class.deal(self, make_rng(seed))

    @property
    def saved_fields(self) -> Record:
        """The declaration of this game's saved state (built once per configured game)."""
        spec = self.__dict__.get("_saved_fields")
        if spec is None:
            spec = self.__dict__["_saved_fields"] = self.state_class.saved_fields(self)
        return spec

    def load_state(self, data: Any) -> State:
        """The one way to load a state: the ``"state"`` part of a save, or a full dict built by a
        tool (``state_from_view``). Every declared field is checked (type, range, size), then the
        game's invariants and the contract (a game that is not over has a seat to act and a legal
        action). Anything else raises :class:`StateError` naming the field."""
        values = self.saved_fields.load(data, "state")
        try:
            state = self.state_class.from_fields(self, values)
            problems = state.check_invariants()
            if not problems:
                mask = state.legal_mask()
                if state.is_terminal():
                    if mask.any():
                        problems.append("the game is over but actions are legal")
                elif not 0 <= state.current_player() < self.num_players:
                    problems.append(f"the seat to act, {state.current_player()}, does not exist")
                elif not mask.any():
                    problems.append(f"the game goes on but no action is legal (phase {state.phase!r})")
        except StateError:
            raise
        except (LookupError, TypeError, ValueError, ArithmeticError) as exc:
            raise StateError(
                f"saved state for {self.name} is inconsistent: {type(exc).__name__}: {exc}"
            ) from exc
        if problems:
            raise StateError(f"saved state for {self.name} is inconsistent: {'; '.join(problems)}")
        return state

    def save(self, state: State) -> dict[str, Any]:
        """A JSON-compatible dict holding everything needed to continue ``state`` exactly."""
        return {
            "format": SAVE_FORMAT,
            "game": self.name,
            "version": self.version,
            "config": dict(self.config),
            "state": state.to_dict(),
        }

    def load(self, data: Any) -> State:
        """Inverse of :meth:`save`. Raises :class:`StateError` that says what is wrong."""
        if not isinstance(data, dict):
            raise StateError(f"a saved state must be a dict, got {type(data).__name__}")
        missing = [k for k in ("format", "game", "version", "config", "state") if k not in data]
        if missing:
            raise StateError(f"saved state is missing the keys {missing}")
        if data["format"] != SAVE_FORMAT:
            raise StateError(f"saved state has format {show(data['format'])}, expected {SAVE_FORMAT!r}")
        if data["game"] != self.name:
            raise StateError(
                f"saved state belongs to game {show(data['game'])}, but this is {self.name!r}"
            )
        if type(data["version"]) is not int or data["version"] != self.version:
            raise StateError(
                f"saved state is version {show(data['version'])} of {self.name}; "
                f"this engine reads version {self.version}"
            )
        if not isinstance(data["config"], dict):
            raise StateError(f"saved state's config must be a dict, got {show(data['config'])}")
        diff = self.config_differences(data["config"])
        if diff:
            raise StateError(
                f"saved state was made with a different config (keys differing: {diff[:10]}); "
                f"saved {show(data['config'])}, this game has {self.config!r}"
            )
        return self.load_state(data["state"])

    @property
    def default_config(self) -> dict[str, Any]:
        """This version's config when no keyword is given (a copy; computed once per game object)."""
        defaults = self.__dict__.get("_default_config")
        if defaults is None:
            defaults = self.__dict__["_default_config"] = self._validate_config({})
        return dict(defaults)

    def config_differences(self, saved: dict[str, Any]) -> list[str]:
        """The keywords whose values differ between a config stored in a file (a saved state, a game
        record) and this game's, compared as JSON values where types count. A keyword the file lacks
        reads as this version's default, so files written before a keyword existed still load: a
        keyword is only ever added with a default that plays as the game did before it (otherwise
        the game's version goes up). A keyword this version does not know always differs."""
        return sorted(str(k) for k in _differing_keys({**self.default_config, **saved}, self.config))

    def config_error(self, key: str, value: Any, allowed: str) -> ConfigError:
        """Helper: a ConfigError saying what was wrong and what is allowed."""
        return ConfigError(f"{self.name}: {key}={value!r} is not allowed; {key} must be {allowed}")

    def int_option(self, config: dict[str, Any], key: str, default: int | None, lo: int, hi: int,
                   allowed: str | None = None) -> int:
        """``config[key]`` (or ``default``) as a Python int in ``[lo, hi]``. Python and numpy
        integers are accepted (numpy ones become ``int``, so the config stays JSON-compatible);
        bools, floats (even ``2.0``) and strings are refused with a ConfigError naming the range."""
        value = config.get(key, default)
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) \
                or not lo <= value <= hi:
            raise self.config_error(key, value, allowed or f"an integer from {lo} to {hi}")
        return int(value)

    def bool_option(self, config: dict[str, Any], key: str, default: bool) -> bool:
        """``config[key]`` (or ``default``) as True or False; anything else is a ConfigError."""
        value = config.get(key, default)
        if value is not True and value is not False:
            raise self.config_error(key, value, "True or False")
        return value

    def reject_unknown(self, config: dict[str, Any], known: set[str] | list[str]) -> None:
        """Raise :class:`~envs.core.errors.UnknownKeywordError` for any keyword of ``config`` not in ``known``."""
        unknown = sorted(map(str, set(config) - set(known)))
        if unknown:
            raise UnknownKeywordError(self.name, unknown, [str(k) for k in known])

    def rule_differences(self, other: Game) -> list[str]:
        """The config keywords, :attr:`observation_keys` aside, whose values differ between this game
        and ``other`` (of the same class), compared as JSON values where types count."""
        return _differing_keys(self.config, other.config, skip=set(self.observation_keys))

    def same_rules(self, other: Game) -> bool:
        """Whether ``other`` is this game with at most its :attr:`observation_keys` set differently:
        the same rules, actions and returns, observed through another encoding."""
        return type(other) is type(self) and not self.rule_differences(other)

    def observe_view(self, view: dict[str, Any], seat: int, table_game: Game,
                     table_observation: np.ndarray) -> np.ndarray:
        """This game's observation for ``seat`` in the position that ``view`` describes, at a table
        of ``table_game`` (the same rules, other :attr:`observation_keys`) that gave the seat
        ``table_observation``. The position is rebuilt from the view; what that draws at random is
        hidden from the seat, so the observation does not depend on it. A game whose observation
        carries a table setting the view lacks (Wizard Arena's step limit) copies it over from
        ``table_observation`` in an override."""
        if not self.same_rules(table_game):
            raise ValueError(
                f"{self!r} re-encodes observations only from a table with the same rules (differing at "
                f"most in {list(self.observation_keys)}), not from {table_game!r}"
            )
        return self.observe(self.state_from_view(view, random.Random(0)), seat)

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.config.items())
        return f"{type(self).__name__}({args})"


def _differing_keys(a: dict[str, Any], b: dict[str, Any], skip: set[str] = frozenset()) -> list[str]:
    """The keys (``skip`` aside; ``a``'s order, then ``b``'s own) whose values differ between two configs,
    compared as JSON values where types count; a key only one side has always differs."""
    missing = object()
    keys = [k for k in a if k not in skip] + [k for k in b if k not in skip and k not in a]
    return [k for k in keys if not _same_json(a.get(k, missing), b.get(k, missing))]


def _same_json(a: Any, b: Any) -> bool:
    """Equality of JSON values where types count (``True`` is not ``1``, ``2.0`` is not ``2``)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same_json(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same_json(x, y) for x, y in zip(a, b))
    return a == b


def action_id(action: Any, game: Game) -> int:
    """``action`` as a Python int if it is a Python or numpy integer (or a 0-d integer array);
    otherwise IllegalActionError naming it. Range and legality are the caller's to check."""
    if type(action) is int:
        return action
    value = action[()] if isinstance(action, np.ndarray) and action.ndim == 0 else action
    if isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_)):
        return int(value)
    kind = type(action).__name__ + (f" of dtype {action.dtype}" if isinstance(action, np.ndarray) else "")
    raise IllegalActionError(
        f"{game.name}: an action must be an integer in [0, {game.num_actions}) (a Python or numpy "
        f"integer, or a 0-d integer array); got {show(action)} of type {kind}"
    )


class State(abc.ABC):
    """One position of a game. Subclasses implement the abstract methods below.

    The base class caches the legal-action mask between moves, validates actions before handing
    them to :meth:`_apply`, and formats illegal-action errors the same way for every game.
    """

    __slots__ = ("game", "_mask")

    def __init__(self, game: Game) -> None:
        self.game = game
        self._mask: np.ndarray | None = None

    # ----------------------------------------------------------------------------------------
    # To implement
    @abc.abstractmethod
    def current_player(self) -> int:
        """The seat that must act now (possibly out of turn), or ``TERMINAL``."""

    @abc.abstractmethod
    def _legal_mask(self) -> np.ndarray:
        """int8 array of length ``game.num_actions``; all zeros once terminal."""

    @abc.abstractmethod
    def _apply(self, action: int) -> None:
        """Apply an action already known to be legal (the public entry is :meth:`apply_unchecked`)."""

    @abc.abstractmethod
    def is_terminal(self) -> bool: ...

    @abc.abstractmethod
    def returns(self) -> list[float]:
        """Per-player returns; meaningful once terminal (zeros before)."""

    @property
    @abc.abstractmethod
    def phase(self) -> str:
        """Name of the current phase or sub-phase, used in messages and observations."""

    @abc.abstractmethod
    def player_view(self, player: int) -> dict[str, Any]:
        """A JSON-compatible dict of everything ``player`` may know, and nothing more."""

    @abc.abstractmethod
    def clone(self) -> State: ...

    @classmethod
    @abc.abstractmethod
    def deal(cls, game: Game, rng: random.Random) -> State:
        """A fresh game of ``game`` whose every random draw comes from ``rng`` (the state keeps it)."""

    @classmethod
    @abc.abstractmethod
    def saved_fields(cls, game: Game) -> Record:
        """The saved state's declaration for ``game``'s configuration: every field with its type,
        range or size and nesting (see :mod:`envs.core.fields`). Saving, loading and the field
        checks follow from it; the game's invariants live in :meth:`check_invariants`."""

    @classmethod
    def from_fields(cls, game: Game, values: dict[str, Any]) -> State:
        """Build a state from checked field values (``saved_fields(game).load``): a fresh
        ``cls(game)`` with every field's attribute set, then :meth:`after_load`. A game whose
        constructor needs more overrides this; nothing here validates (the caller did)."""
        state = cls(game)  # type: ignore[call-arg]
        for field in game.saved_fields:
            setattr(state, field.attr, values[field.name])
        state.after_load()
        return state

    def after_load(self) -> None:  # noqa: B027 - an optional hook, empty by default
        """Rebuild what is derived from the saved fields (numpy mirrors, caches). Default: nothing."""

    def to_dict(self) -> dict[str, Any]:
        """JSON-compatible dict of the whole state, RNG included (the declared fields, in order)."""
        return self.game.saved_fields.dump(self)

    # ----------------------------------------------------------------------------------------
    # Optional hooks
    def truncation_returns(self) -> list[float]:
        """Returns handed out when the episode is cut by the cycle cap (default: zeros)."""
        return [0.0] * self.game.num_players

    def check_invariants(self) -> list[str]:
        """Descriptions of every broken invariant (cards conserved, counts consistent, ...)."""
        return []

    def set_step_limit(self, limit: int) -> None:
        """The environment's cap on actions in this episode (``max_cycles`` x seats), told after every
        reset and restore. A game whose observation shows the time left keeps it (and passes it on
        to clones); the default ignores it."""
        return None

    def end_reason(self) -> str | None:
        """Why the game ended: None while it goes on; ``"rules"`` once terminal by the rules. A game
        with further ways to end (for example ``"no-progress"``) overrides this."""
        return "rules" if self.is_terminal() else None

    # ----------------------------------------------------------------------------------------
    # Provided
    def legal_mask(self) -> np.ndarray:
        mask = self._mask
        if mask is None:
            mask = self._mask = self._legal_mask()
        return mask

    def legal_actions(self) -> list[int]:
        """The legal action ids (the move generator of search agents), ascending by default. A game
        may override this with a faster generator that lists the same set in another order; the
        generic tests check it against the mask."""
        return np.flatnonzero(self.legal_mask()).tolist()

    def apply_unchecked(self, action: int) -> None:
        """Apply ``action`` without checking that it is legal: for search agents that take actions
        from :meth:`legal_actions`. Anything else must use :meth:`apply_action`."""
        self._mask = None
        self._apply(action)

    def set_legal_mask(self, mask: np.ndarray | None) -> None:
        """Store the legal mask when the rules already know it (a clone sharing its original's mask,
        a precomputed table); None forgets it. Masks are never written in place, so sharing is safe."""
        self._mask = mask

    def cached_legal_mask(self) -> np.ndarray | None:
        """The stored legal mask, or None if it has not been computed since the last action."""
        return self._mask

    def seat_observation(self, seat: int) -> dict[str, np.ndarray]:
        """What the agent at ``seat`` is handed: ``{"observation": tensor, "action_mask": int8}``,
        the mask a fresh copy for the seat to act and all zeros for every other seat."""
        game = self.game
        if seat == self.current_player():
            mask = self.legal_mask().copy()
        else:
            mask = np.zeros(game.num_actions, dtype=np.int8)
        return {"observation": game.observe(self, seat), "action_mask": mask}

    def apply_action(self, action: int) -> None:
        """Apply ``action`` for the current player, or raise IllegalActionError explaining why not.

        ``action`` is a Python or numpy integer, or a 0-d numpy integer array; anything else (a
        float, a string, bytes, a bool, a Decimal) is refused rather than converted."""
        if type(action) is not int:  # a plain int, the usual case, needs no converting
            action = action_id(action, self.game)
        mask = self._mask
        if mask is None:
            mask = self.legal_mask()
        if not (0 <= action < len(mask) and mask[action]):
            raise self._illegal(action)
        self._mask = None
        self._apply(action)

    def _illegal(self, action: Any) -> IllegalActionError:
        game = self.game
        if self.is_terminal():
            return IllegalActionError(
                f"{game.name}: action {action!r} was given but the game is over (phase {self.phase!r})"
            )
        if not (isinstance(action, (int, np.integer)) and 0 <= action < game.num_actions):
            return IllegalActionError(
                f"{game.name}: action {action!r} is outside the action space [0, {game.num_actions})"
            )
        legal = self.legal_actions()
        shown = ", ".join(f"{a} ({game.action_to_string(a)})" for a in legal[:12])
        more = f" and {len(legal) - 12} more" if len(legal) > 12 else ""
        return IllegalActionError(
            f"{game.name}: action {int(action)} ({game.action_to_string(int(action))}) is illegal "
            f"for player {self.current_player()} in phase {self.phase!r}; legal actions: {shown}{more}"
        )

    def observation(self, player: int) -> np.ndarray:
        return self.game.observe(self, player)

    def __str__(self) -> str:
        return self.game.render_text(self)

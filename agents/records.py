"""Game records: one JSON file per game, replayed exactly.

A record holds everything needed to play a game again move by move — the game and its version,
the full config, the seed, who sat where (``"human"`` or an agent id), every action with its
name, the result, and what wrote it (the library version and a provenance block,
:func:`envs.provenance.provenance`)::

    {"format": "tabletop-rl/record", "format_version": 2, "library_version": "0.1.0",
     "game": "sequence_v0", "game_version": 0, "config": {...}, "max_cycles": 500, "seed": 7,
     "seats": ["human", "sequence_v0/heuristic-v1"],
     "moves": [{"seat": 0, "action": 25, "name": "place 5D r2c5"}, ...],
     "result": {"over": true, "truncated": false, "returns": [1.0, -1.0], "position": "3f9a…"},
     "meta": {"source": "play", "created": "2026-11-30T20:00:00Z"},
     "provenance": {"package": "tabletop-rl", "version": "0.1.0", "environments": {"sequence_v0": 0},
                    "commit": "580b63f…", "dirty": false}}

``result.position`` is a fingerprint (SHA-256 of the saved state's JSON) of the position the game
stopped in, so a record whose moves still replay legally after a rule change, but lead somewhere
else, is refused as well. Records written before it existed (no ``position``) still replay.

Format versions: version 2 (written now) adds ``provenance``, required and checked by
:func:`envs.provenance.check_provenance`; its ``environments`` must name the record's game at
the record's ``game_version``. Version 1 records (written before provenance existed) have no
``provenance`` key and still load and replay: what made them is unknown, and
:attr:`Record.provenance` is ``None``. Provenance is information about the record, not a condition
for replaying it: a record from another commit or a dirty tree replays as long as its moves and
final position do.

Every game runs in :class:`agents.runner.Runner`, and :class:`Recorder` is the runner hook that
writes its record move by move: play sessions (``play/``), evaluation (``python -m
training.evaluate --records DIR``) and tournaments (``python -m tools.tournament --records DIR``)
all use it; :func:`record_game` writes the record of a game already played from its actions.
:func:`replay` plays a record again in the runner, every seat played from the record, and refuses
it with a :class:`RecordError` naming the first move that does not replay (another seat to act, an
action id that has another name in this version, an illegal action, a different result).

Records from outside are data: :func:`load_record` reads at most :data:`MAX_RECORD_BYTES`, and
:meth:`Record.from_dict` checks every field's type and range before anything is built from it.
Nothing in a record is executed; a config naming a file (Dojo's ``board_file``) is refused.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import math
import pathlib
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import envs
from agents.runner import Runner, RunnerHooks
from envs.core import ConfigError, IllegalActionError, StateError
from envs.provenance import check_provenance, provenance

RECORD_FORMAT = "tabletop-rl/record"
RECORD_FORMAT_VERSION = 2
#: Format versions this library reads (1: before records carried provenance).
READABLE_FORMAT_VERSIONS = (1, 2)
#: Largest record file read (bytes) and most moves accepted.
MAX_RECORD_BYTES = 8 * 1024 * 1024
MAX_MOVES = 200_000
MAX_META_BYTES = 16 * 1024
HUMAN = "human"
_AGENT_ID = re.compile(r"^[a-z0-9_]+_v\d+/[a-z0-9_.-]+-v\d+$")
_KEYS = ("format", "format_version", "library_version", "game", "game_version", "config", "max_cycles",
         "seed", "seats", "moves", "result", "meta")
#: Config keys naming a file on the reading machine: never followed from a record.
_PATH_KEYS = ("board_file",)


class RecordError(ValueError):
    """A record that is malformed, or whose moves do not replay in this version."""


def library_version() -> str:
    """The version of the tabletop-rl code that is running (``envs.__version__``, the one version
    string): right for an installed wheel and for a source checkout alike, where the installed
    package's metadata may be missing or belong to another copy."""
    return envs.__version__


@dataclass
class Move:
    """One action: the seat that took it, its id and its name (``action_to_string``)."""

    seat: int
    action: int
    name: str

    def to_dict(self) -> dict[str, Any]:
        return {"seat": self.seat, "action": self.action, "name": self.name}


@dataclass
class Record:
    """One game, replayable; see the module docstring for the JSON layout."""

    game: str
    config: dict[str, Any]
    seed: int
    seats: list[str]
    moves: list[Move] = field(default_factory=list)
    result: dict[str, Any] | None = None
    max_cycles: int | None = None
    game_version: int = 0
    library_version: str = ""
    meta: dict[str, Any] = field(default_factory=dict)
    #: what made the record (:func:`envs.provenance.provenance`); None only for a version 1
    #: record read from a file. Written as this process's provenance when None.
    provenance: dict[str, Any] | None = None

    # ------------------------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """The record as JSON data, in the current format (version 2, with provenance)."""
        return {
            "format": RECORD_FORMAT,
            "format_version": RECORD_FORMAT_VERSION,
            "library_version": self.library_version or library_version(),
            "game": self.game,
            "game_version": self.game_version,
            "config": dict(self.config),
            "max_cycles": self.max_cycles,
            "seed": self.seed,
            "seats": list(self.seats),
            "moves": [m.to_dict() for m in self.moves],
            "result": None if self.result is None else dict(self.result),
            "meta": dict(self.meta),
            "provenance": dict(self.provenance or provenance(self.game)),
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=1, allow_nan=False)

    def save(self, path: str | pathlib.Path) -> pathlib.Path:
        path = pathlib.Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(self.to_json() + "\n")
        return path

    @property
    def actions(self) -> list[int]:
        return [m.action for m in self.moves]

    # ------------------------------------------------------------------------------------------
    @classmethod
    def from_dict(cls, data: Any) -> Record:
        """Validate a decoded record (types, ranges, sizes) and build it; raises RecordError."""
        if not isinstance(data, dict):
            raise RecordError(f"a record must be a JSON object, got {type(data).__name__}")
        missing = [k for k in _KEYS if k not in data]
        if missing:
            raise RecordError(f"record is missing the keys {missing}")
        if data["format"] != RECORD_FORMAT:
            raise RecordError(f"record format is {data['format']!r}, expected {RECORD_FORMAT!r}")
        version = data["format_version"]
        if isinstance(version, bool) or version not in READABLE_FORMAT_VERSIONS:
            raise RecordError(f"record format_version {version!r} is not readable; "
                              f"this library reads versions {list(READABLE_FORMAT_VERSIONS)}")
        allowed = _KEYS + (("provenance",) if version >= 2 else ())
        unknown = sorted(set(data) - set(allowed))
        if unknown:
            raise RecordError(f"record has unknown keys {unknown}; format_version {version} allows: {list(allowed)}")
        if version >= 2 and "provenance" not in data:
            raise RecordError(f"record format_version {version} must carry 'provenance' (what wrote it)")
        _check_str("library_version", data["library_version"], 64)
        game = data["game"]
        if game not in envs.NAMES:
            raise RecordError(f"record game {game!r} is unknown; games: {list(envs.NAMES)}")
        game_version = _check_int("game_version", data["game_version"], 0, 10_000)
        engine_version = envs.game_class(game).version
        if game_version != engine_version:
            raise RecordError(f"record was made with {game} version {game_version}; "
                              f"this engine is version {engine_version}")
        config = data["config"]
        if not isinstance(config, dict) or len(config) > 64:
            raise RecordError("record config must be a JSON object with at most 64 keys")
        for key, value in config.items():
            _check_json_value(f"config[{key!r}]", value)
            if key in _PATH_KEYS and value is not None:
                raise RecordError(f"record config {key}={value!r} names a file; records may not "
                                  "refer to files on this machine (use the standard board)")
        max_cycles = data["max_cycles"]
        if max_cycles is not None:
            max_cycles = _check_int("max_cycles", max_cycles, 1, 10**7)
        seed = _check_int("seed", data["seed"], 0, 2**63 - 1)
        seats = data["seats"]
        if not isinstance(seats, list) or not 1 <= len(seats) <= 64:
            raise RecordError("record seats must be a list of 1 to 64 entries")
        for i, who in enumerate(seats):
            if not isinstance(who, str) or not (who == HUMAN or _AGENT_ID.match(who)):
                raise RecordError(f"record seats[{i}] = {who!r} must be 'human' or an agent id "
                                  "like 'sequence_v0/heuristic-v1'")
        moves_data = data["moves"]
        if not isinstance(moves_data, list) or len(moves_data) > MAX_MOVES:
            raise RecordError(f"record moves must be a list of at most {MAX_MOVES} moves")
        moves = []
        for i, m in enumerate(moves_data, 1):
            if not isinstance(m, dict) or set(m) != {"seat", "action", "name"}:
                raise RecordError(f"record move {i} must be an object with exactly 'seat', 'action', 'name'")
            moves.append(Move(
                seat=_check_int(f"move {i} seat", m["seat"], 0, len(seats) - 1),
                action=_check_int(f"move {i} action", m["action"], 0, 10**6),
                name=_check_str(f"move {i} name", m["name"], 200),
            ))
        result = data["result"]
        if result is not None:
            result = _check_result(result, len(seats))
        meta = data["meta"]
        if not isinstance(meta, dict):
            raise RecordError("record meta must be a JSON object")
        _check_json_value("meta", meta)
        if len(json.dumps(meta)) > MAX_META_BYTES:
            raise RecordError(f"record meta is larger than {MAX_META_BYTES} bytes")
        made_by = None if version < 2 else _check_record_provenance(data["provenance"], game, game_version)
        return cls(game=game, config=dict(config), seed=seed, seats=list(seats), moves=moves, result=result,
                   max_cycles=max_cycles, game_version=game_version, library_version=data["library_version"],
                   meta=dict(meta), provenance=made_by)


# ----------------------------------------------------------------------------------------------
# Validation helpers
def _check_int(what: str, value: Any, lo: int, hi: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
        raise RecordError(f"record {what} must be an integer in [{lo}, {hi}], got {value!r}")
    return value


def _check_str(what: str, value: Any, limit: int) -> str:
    if not isinstance(value, str) or len(value) > limit:
        raise RecordError(f"record {what} must be a string of at most {limit} characters, got {value!r:.80}")
    return value


def _check_json_value(what: str, value: Any, depth: int = 0) -> None:
    if depth > 8:
        raise RecordError(f"record {what} is nested too deeply")
    if value is None or isinstance(value, (bool, int, str)):
        return
    if isinstance(value, float):
        if not math.isfinite(value):
            raise RecordError(f"record {what} holds a non-finite number")
        return
    if isinstance(value, list):
        for v in value:
            _check_json_value(what, v, depth + 1)
        return
    if isinstance(value, dict):
        for k, v in value.items():
            if not isinstance(k, str):
                raise RecordError(f"record {what} has a non-string key")
            _check_json_value(what, v, depth + 1)
        return
    raise RecordError(f"record {what} holds a {type(value).__name__}, not JSON data")


def _check_record_provenance(block: Any, game: str, game_version: int) -> dict[str, Any]:
    """A record's provenance block, checked, naming the record's own game at its version."""
    try:
        block = check_provenance(block, "record provenance")
    except StateError as exc:
        raise RecordError(str(exc)) from None
    if block["environments"].get(game) != game_version:
        raise RecordError(f"record provenance.environments is {block['environments']!r}; it must give "
                          f"{game!r} at the record's game_version {game_version}")
    return dict(block, environments=dict(block["environments"]))


_FINGERPRINT = re.compile(r"^[0-9a-f]{64}$")


def position_fingerprint(state: Any) -> str:
    """SHA-256 (hex) of a state's saved JSON (``Game.save``: ``state.to_dict()``), canonical form
    (keys sorted, no spaces): equal exactly when the saved states are."""
    text = json.dumps(state.to_dict(), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def _check_result(result: Any, num_seats: int) -> dict[str, Any]:
    keys = {"over", "truncated", "returns"}
    if not isinstance(result, dict) or not keys <= set(result) <= keys | {"position"}:
        raise RecordError("record result must be null or an object with 'over', 'truncated', 'returns' "
                          "and optionally 'position'")
    if not isinstance(result["over"], bool) or not isinstance(result["truncated"], bool):
        raise RecordError("record result 'over' and 'truncated' must be true or false")
    returns = result["returns"]
    if not isinstance(returns, list) or len(returns) != num_seats or any(
        isinstance(r, bool) or not isinstance(r, (int, float)) or not math.isfinite(r) for r in returns
    ):
        raise RecordError(f"record result 'returns' must be {num_seats} finite numbers, got {returns!r:.200}")
    checked = {"over": result["over"], "truncated": result["truncated"], "returns": [float(r) for r in returns]}
    if "position" in result:
        if not isinstance(result["position"], str) or not _FINGERPRINT.match(result["position"]):
            raise RecordError(f"record result 'position' must be 64 lowercase hex digits (a SHA-256), "
                              f"got {result['position']!r:.80}")
        checked["position"] = result["position"]
    return checked


# ----------------------------------------------------------------------------------------------
def load_record(path: str | pathlib.Path) -> Record:
    """Read and validate a record file (at most MAX_RECORD_BYTES); raises RecordError."""
    path = pathlib.Path(path)
    with open(path, "rb") as handle:
        raw = handle.read(MAX_RECORD_BYTES + 1)
    if len(raw) > MAX_RECORD_BYTES:
        raise RecordError(f"{path}: larger than {MAX_RECORD_BYTES} bytes; not read")
    return parse_record(raw, source=str(path))


def parse_record(raw: bytes | str, source: str = "record") -> Record:
    """Decode and validate the JSON text of a record."""
    if len(raw) > MAX_RECORD_BYTES:
        raise RecordError(f"{source}: larger than {MAX_RECORD_BYTES} bytes")

    def no_constants(name: str) -> Any:
        raise RecordError(f"{source}: {name} is not allowed in a record")

    try:
        data = json.loads(raw, parse_constant=no_constants)
    except RecordError:
        raise
    except (ValueError, RecursionError) as exc:
        raise RecordError(f"{source}: not valid JSON ({exc})") from None
    return Record.from_dict(data)


def make_env(record: Record, render_mode: str | None = None):
    """The strict environment a record is replayed in, reset to the record's seed."""
    kwargs: dict[str, Any] = dict(record.config)
    if record.max_cycles is not None:
        kwargs["max_cycles"] = record.max_cycles
    try:
        env = envs.make(record.game, raw=True, render_mode=render_mode, **kwargs)
    except ConfigError as exc:
        raise RecordError(f"record config is not valid for {record.game}: {exc}") from None
    diff = env.game.config_differences(record.config)
    if diff:
        raise RecordError(f"record config {record.config!r} does not match the config it builds in this version "
                          f"({env.game.config!r}; keys differing: {diff[:10]})")
    if len(env.possible_agents) != len(record.seats):
        raise RecordError(f"record lists {len(record.seats)} seats; this config has {len(env.possible_agents)}")
    env.reset(seed=record.seed)
    return env


def env_result(env) -> dict[str, Any]:
    """The ``result`` part of a record for an environment stopped at its last move (finished or not)."""
    agent = env.agent_selection
    truncated = bool(env.truncations.get(agent, False)) and not env.terminations.get(agent, False)
    state = env.unwrapped.engine_state
    if state.is_terminal():
        result = {"over": True, "truncated": False, "returns": [float(r) for r in state.returns()]}
    elif truncated:
        result = {"over": True, "truncated": True, "returns": [float(r) for r in state.truncation_returns()]}
    else:
        result = {"over": False, "truncated": False, "returns": [0.0] * len(env.possible_agents)}
    result["position"] = position_fingerprint(state)
    return result


def replay(record: Record, on_move: Callable[[int, Move, Any], None] | None = None,
           render_mode: str | None = None):
    """Play ``record`` again in the runner (every seat played from the record); return the environment.

    ``on_move(i, move, env)`` is called after move ``i`` (1-based) has been applied. Raises
    :class:`RecordError` naming the first move that does not replay, or saying how the result
    differs from the recorded one.
    """
    env = make_env(record, render_mode=render_mode)
    runner = Runner(record.game, [None] * len(record.seats), seed=record.seed, env=env)
    for i, move in enumerate(record.moves, 1):
        where = f"move {i} (player_{move.seat}, {move.name!r})"
        seat = runner.seat_to_act
        if seat is None:
            raise RecordError(f"{where} does not replay: the game was already over")
        if move.seat != seat:
            raise RecordError(f"{where} does not replay: player_{seat} is to act there")
        if not 0 <= move.action < env.game.num_actions:
            raise RecordError(f"{where} does not replay: action {move.action} is outside "
                              f"Discrete({env.game.num_actions})")
        name = env.action_to_string(move.action)
        if name != move.name:
            raise RecordError(f"{where} does not replay: action {move.action} is named {name!r} in this version")
        try:
            runner.apply(move.action, seat)
        except IllegalActionError as exc:
            raise RecordError(f"{where} does not replay: {exc}") from None
        if on_move is not None:
            on_move(i, move, env)
    if record.result is not None:
        got = env_result(env)
        if got["over"] != record.result["over"] or got["truncated"] != record.result["truncated"] or any(
            abs(a - b) > 1e-9 for a, b in zip(got["returns"], record.result["returns"])
        ):
            raise RecordError(f"record result {record.result} differs from the replayed result {got}")
        if "position" in record.result and record.result["position"] != got["position"]:
            raise RecordError(
                f"the moves replay, but reach another position than recorded (fingerprint {got['position'][:12]}… "
                f"instead of {record.result['position'][:12]}…): the rules or the deal changed since the record "
                "was written"
            )
    return env


def new_record(env, seed: int, seats: Sequence[str], meta: dict[str, Any] | None = None) -> Record:
    """An empty record for a freshly reset environment (moves are appended as they are played)."""
    game = env.game
    return Record(game=game.name, config=dict(game.config), seed=int(seed), seats=list(seats),
                  max_cycles=env.max_cycles, game_version=game.version, library_version=library_version(),
                  provenance=provenance(game.name),
                  meta={"created": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
                        **(meta or {})})


class Recorder(RunnerHooks):
    """A runner hook that writes the :class:`Record` of the game it watches, move by move.

    ``seats`` names who plays each seat (``"human"`` or an agent id); ``meta`` is added to the
    record's ``meta``. The record (``recorder.record``) starts when the runner starts, gains a
    :class:`Move` after every action and its ``result`` when the game ends; the runner must be
    seeded (a record replays from its seed)::

        recorder = Recorder(ids, meta={"source": "evaluate"})
        agents.play_game(game, seat_agents, seed=7, hooks=[recorder])
        recorder.record.save("game.json")
    """

    def __init__(self, seats: Sequence[str], meta: dict[str, Any] | None = None) -> None:
        self.seats = list(seats)
        self.meta = dict(meta or {})
        self.record: Record | None = None

    def on_start(self, runner: Runner) -> None:
        if runner.seed is None:
            raise RecordError(f"{runner.game_name}: a record needs a seeded game (seed=None was given); "
                              "a record replays from its seed")
        if len(self.seats) != runner.game.num_players:
            raise RecordError(f"{runner.game_name} has {runner.game.num_players} seats; the recorder names "
                              f"{len(self.seats)} ({self.seats})")
        self.record = new_record(runner.env, runner.seed, self.seats, self.meta)

    def on_step(self, runner: Runner, seat: int, action: int) -> None:
        assert self.record is not None
        self.record.moves.append(Move(seat, action, runner.game.action_to_string(action)))

    def on_end(self, runner: Runner, record: Any) -> None:
        assert self.record is not None
        self.record.result = env_result(runner.env)


def record_game(game_name: str, seats: Sequence[str], seed: int, actions: Sequence[int],
                config: dict[str, Any] | None = None, max_cycles: int | None = None,
                meta: dict[str, Any] | None = None) -> Record:
    """A record of a game already played (e.g. by ``play_game(..., record_actions=True)``).

    The actions are played again in the runner to name them, attribute them to seats and fill in
    the result, so a record written here always replays. (To record a game while it is played,
    hand the runner a :class:`Recorder`.)
    """
    kwargs = dict(config or {})
    if max_cycles is not None:
        kwargs["max_cycles"] = max_cycles
    recorder = Recorder(seats, meta)
    runner = Runner(game_name, [None] * len(recorder.seats), seed=seed, config=kwargs, hooks=[recorder])
    for action in actions:
        runner.apply(int(action))
    assert recorder.record is not None
    recorder.record.result = env_result(runner.env)
    return recorder.record


__all__ = ["HUMAN", "MAX_MOVES", "MAX_RECORD_BYTES", "READABLE_FORMAT_VERSIONS", "RECORD_FORMAT_VERSION",
           "Move", "Record", "RecordError", "Recorder", "env_result",
           "library_version", "load_record", "make_env", "new_record", "parse_record", "position_fingerprint",
           "record_game", "replay"]

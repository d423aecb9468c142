"""Every agent of a game on one Elo scale: which to play, and how strong it is.

>>> import agents
>>> top = agents.ladder("pans_trial_v0")[0]
>>> top["id"], top["elo"], top["elo_low"], top["elo_high"], top["seconds_per_move"]

The ladders ship with the package (``agents/ladders/<table>.json``), one per game at its default
config and one per config family that has agents of its own (Sequence's 2 teams of 2). Each was
made by one command, ``python -m training.league --make-ladder GAME`` (:mod:`training.league.ladder`
describes its games), and names what made it (package and environment versions, commit).
:func:`ladder` returns the rows strongest first; each row has:

* ``id``: the agent id (``agents.make(id)``);
* ``elo``, ``elo_low``, ``elo_high``: the rating and its 95% interval, ``heuristic-v1`` at 1500
  (a bound is None where it is open-ended: an agent that never lost has no finite upper bound);
* ``games``: the games behind the rating (agents that search at play time play fewer);
* ``seconds_per_move``: CPU seconds per decision, measured in the ladder's games on the machine
  that made it;
* ``superseded_by``: None for a current agent, else the id that replaces it in the default lists;
* ``searches``: whether it searches at play time; ``description``: what it is.

A ladder file that is missing, damaged, or made for another version of the environment is refused
with a :class:`LadderError` naming the file: a ladder is never silently empty.
"""

from __future__ import annotations

import json
import math
import os
import pathlib
from typing import Any

import envs

LADDER_DIR = pathlib.Path(__file__).resolve().parent / "ladders"
FORMAT = "tabletop-rl ladder"
FORMAT_VERSION = 1
MAX_BYTES = 4 << 20
#: Each row's fields and their types (None allowed where listed).
ROW_FIELDS: dict[str, tuple[type, ...]] = {
    "id": (str,),
    "elo": (float, int),
    "elo_low": (float, int, type(None)),
    "elo_high": (float, int, type(None)),
    "games": (int,),
    "seconds_per_move": (float, int),
    "superseded_by": (str, type(None)),
    "searches": (bool,),
    "description": (str,),
}


class LadderError(ValueError):
    """A ladder file that cannot be used: missing, damaged, or made for another environment version."""


def row_fields() -> list[str]:
    """The fields every ladder row has."""
    return list(ROW_FIELDS)


def ladder_table(game_name: str, config: dict[str, Any] | None) -> dict[str, Any]:
    """The table ``config`` sits at: its keywords that differ from the game's defaults (observation keywords aside);
    an unknown game or a bad value raises the error :func:`envs.make_game` gives."""
    game = envs.make_game(game_name, **dict(config or {}))
    default = envs.make_game(game_name).config
    skip = set(getattr(game, "observation_keys", ()))
    return {k: v for k, v in game.config.items() if k not in skip and default.get(k) != v}


def table_label(game_name: str, config: dict[str, Any]) -> str:
    """The name of a table's ladder file: the game, then any keywords set (as the league names tables)."""
    return game_name + "".join(f"-{k}={v if isinstance(v, str) else json.dumps(v)}" for k, v in sorted(config.items()))


def ladder_path(game_name: str, config: dict[str, Any] | None = None,
                folder: pathlib.Path | None = None) -> pathlib.Path:
    """The file holding the ladder of ``game_name`` at ``config``."""
    return (folder or ladder_dir()) / f"{table_label(game_name, ladder_table(game_name, config))}.json"


def ladder_dir() -> pathlib.Path:
    """Where ladders are read: ``$TABLETOP_LADDERS`` if set, else the folder shipped with the package."""
    return pathlib.Path(os.environ.get("TABLETOP_LADDERS") or LADDER_DIR)


def ladder_configs(game_name: str) -> list[dict[str, Any]]:
    """The configs a ladder ships for (``{}`` is the default), from the files' names."""
    envs.game_class(game_name)  # an unknown game: the registry's error
    out = []
    for path in sorted(ladder_dir().glob(f"{game_name}*.json")):
        rest = path.stem[len(game_name):]
        if rest and not rest.startswith("-"):
            continue
        config = {}
        for part in filter(None, rest.split("-")):
            key, _, value = part.partition("=")
            try:
                config[key] = json.loads(value)
            except ValueError:
                config[key] = value
        out.append(config)
    return sorted(out, key=lambda c: (len(c), table_label(game_name, c)))


def load_ladder(path: str | os.PathLike[str], game_name: str | None = None) -> dict[str, Any]:
    """Read and check a ladder file; anything wrong raises a :class:`LadderError` naming the file."""
    from envs.provenance import environment_version

    path = pathlib.Path(path)

    def refuse(what: str) -> LadderError:
        return LadderError(f"ladder file {path}: {what}")

    if not path.is_file():
        raise refuse("no such file")
    if path.stat().st_size > MAX_BYTES:
        raise refuse(f"larger than {MAX_BYTES} bytes")
    try:
        data = json.loads(path.read_bytes().decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise refuse(f"not valid JSON ({exc})") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise refuse(f"not a ladder (a JSON object with \"format\": {FORMAT!r})")
    if data.get("format_version") != FORMAT_VERSION:
        raise refuse(f"format version {data.get('format_version')!r}; this library reads {FORMAT_VERSION}")
    game = data.get("game")
    if game not in envs.NAMES or (game_name is not None and game != game_name):
        raise refuse(f"made for game {game!r:.60}, expected {game_name or 'one of ' + ', '.join(envs.NAMES)}")
    version = environment_version(game)
    if data.get("environment_version") != version:
        raise refuse(f"made for {game[:game.rindex('_v')]}_v{data.get('environment_version')!r:.20}, this is "
                     f"{game}; remake it with python -m training.league --make-ladder {game}")
    if not isinstance(data.get("config"), dict):
        raise refuse("its config is not a JSON object")
    rows = data.get("rows")
    if not isinstance(rows, list) or not rows:
        raise refuse("it holds no rows")
    seen = set()
    for n, row in enumerate(rows):
        if not isinstance(row, dict) or set(row) != set(ROW_FIELDS):
            raise refuse(f"row {n} must have exactly the fields {', '.join(ROW_FIELDS)}")
        for key, types in ROW_FIELDS.items():
            value = row[key]
            if not isinstance(value, types) or (isinstance(value, bool) and bool not in types):
                raise refuse(f"row {n}: {key} has the wrong type ({type(value).__name__})")
            if isinstance(value, float) and not math.isfinite(value):
                raise refuse(f"row {n}: {key} is not a finite number")
        if not row["id"].startswith(f"{game}/") or row["id"] in seen:
            raise refuse(f"row {n}: id {row['id']!r:.80} is not a new id of {game}")
        seen.add(row["id"])
        if row["games"] < 0 or row["seconds_per_move"] < 0:
            raise refuse(f"row {n}: games and seconds_per_move must be 0 or more")
    if [r["elo"] for r in rows] != sorted((r["elo"] for r in rows), reverse=True):
        raise refuse("its rows are not sorted strongest first")
    return data


def move_time_text(seconds: float) -> str:
    """A ladder row's time a move for people: ``"0.7 ms"``, ``"130 ms"``, ``"2.1 s"``."""
    if seconds >= 1:
        return f"{seconds:.1f} s"
    ms = 1000 * seconds
    return f"{ms:.0f} ms" if ms >= 10 else f"{ms:.1f} ms"


def ladder(game_name: str, config: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """The rated agents of ``game_name`` at ``config`` (default: the game's defaults), strongest first.

    Each row is a dict (fields in the module's documentation). An unknown game or config value
    raises the error :func:`envs.make` gives; a config with no ladder raises a :class:`LadderError`
    listing the configs that have one.
    """
    table = ladder_table(game_name, config)
    path = ladder_path(game_name, table)
    if not path.is_file():
        shipped = ladder_configs(game_name)
        if table in shipped:
            raise LadderError(f"ladder file {path}: no such file")
        words = ", ".join(json.dumps(c) if c else "the default config" for c in shipped) or "none"
        raise LadderError(f"no ladder of {game_name} for config {json.dumps(table)}; ladders exist for: {words}")
    return [dict(row) for row in load_ladder(path, game_name)["rows"]]


def ladder_info(game_name: str, config: dict[str, Any] | None = None) -> dict[str, Any]:
    """The whole ladder file of ``game_name`` at ``config`` (rows, design, provenance, command), checked."""
    ladder(game_name, config)  # the errors of a missing ladder
    return load_ladder(ladder_path(game_name, config), game_name)


def strongest(game_name: str, config: dict[str, Any] | None = None) -> str:
    """The id at the top of the ladder."""
    return ladder(game_name, config)[0]["id"]

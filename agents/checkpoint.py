"""Trained policies as agents, loaded by versioned id from a checkpoint folder's ``index.json``.

The checkpoint folder (``checkpoints/`` of this project, installed with the package; set
``TABLETOP_CHECKPOINTS`` to use another) holds ``index.json``::

    {"checkpoints": [
        {"id": "sequence_v0/ppo-v1", "game": "sequence_v0", "config": {...},
         "format": "policy", "path": "sequence_v0/ppo-v1",
         "args": "sequence_v0/ppo-v1/args.json", "eval": "sequence_v0/ppo-v1/eval.json",
         "description": "..."}
    ]}

An entry may name the id that replaces it in the default lists, ``"superseded_by": "<game>/<id>"``
(it still loads, and keeps its place on the ladder). An entry may also carry ``"search": {...}``: the policy then plays through
:class:`agents.search.SearchPolicyAgent` (determinized lookahead on the network's policy and value)
with those settings, checked like everything else (:func:`agents.search.check_search_settings`).

``path`` is the folder (relative to the checkpoint folder) holding ``policy.json`` and
``policy.safetensors`` as written by :func:`agents.policy_io.save_policy`. Loading reads JSON and
safetensors only — nothing in a checkpoint is ever unpickled or executed. Paths must stay inside the
checkpoint folder: absolute paths, ``..`` and symlinks that lead out are refused.

Each listed id is registered at ``import agents`` so ``agents.make("sequence_v0/ppo-v1")`` works like
any other agent. A malformed index never breaks the import: every usable entry is registered, an
entry that is wrong is registered as an id that raises :class:`CheckpointError` saying what is wrong
when it is made, and problems that belong to no id (the file is not JSON, an entry without an id)
are reported with a :class:`CheckpointWarning`. Nothing is ever loaded by "newest file".

New checkpoints are added with :func:`register_checkpoint`, which refuses an id that already exists:
an id, once shipped, keeps meaning the same weights.

torch is imported only when a policy is first used.
"""

from __future__ import annotations

import contextlib
import json
import os
import pathlib
import shutil
import tempfile
import warnings
from functools import partial
from typing import Any, Iterator

import envs
from agents.base import Agent
from agents.policy_agent import PolicyAgent, load_checkpoint
from agents.policy_io import SPEC_FILE, WEIGHTS_FILE, CheckpointError, inside, load_policy, read_policy_spec
from agents.registry import available, parse_id, register, register_policy_folders

DEFAULT_DIR = pathlib.Path(__file__).resolve().parents[1] / "checkpoints"
INDEX_FILE = "index.json"
#: Held while ``index.json`` is read and rewritten by :func:`register_checkpoint`.
LOCK_FILE = ".index.lock"
#: The only entry format this library loads (policy.json + policy.safetensors).
FORMAT = "policy"
MAX_INDEX_BYTES = 1 << 20
#: Files copied from a training run folder when a checkpoint is registered (the policy files are required).
#: ``curve.csv``/``curve.png`` are what the trainers write now (:mod:`training.report`); checkpoints
#: registered before that carry ``learning_curve.*`` and keep it.
CHECKPOINT_FILES = (SPEC_FILE, WEIGHTS_FILE, "args.json", "eval.json", "curve.csv", "curve.png",
                    "learning_curve.csv", "learning_curve.png")

__all__ = [
    "CheckpointError",
    "CheckpointWarning",
    "PolicyAgent",
    "checkpoint_dir",
    "inside",
    "load_checkpoint",
    "policy_folder",
    "read_index",
    "register_checkpoint",
    "register_index",
    "scan_index",
]


class CheckpointWarning(UserWarning):
    """A problem in ``index.json`` that belongs to no usable id (reported at import, never raised)."""


def checkpoint_dir() -> pathlib.Path:
    """The checkpoint folder: ``$TABLETOP_CHECKPOINTS`` if set, else the one shipped with the package."""
    return pathlib.Path(os.environ.get("TABLETOP_CHECKPOINTS") or DEFAULT_DIR)


# -------------------------------------------------------------------------------------------------
# The index: read, validated entry by entry
def _read_index_file(folder: pathlib.Path) -> list[Any]:
    """The raw ``checkpoints`` list of ``folder/index.json`` ([] if there is no index)."""
    path = folder / INDEX_FILE
    if not path.exists():
        return []
    if not path.is_file():
        raise CheckpointError(f"{path} is not a regular file")
    if path.stat().st_size > MAX_INDEX_BYTES:
        raise CheckpointError(f"{path} is larger than {MAX_INDEX_BYTES} bytes")
    try:
        data = json.loads(path.read_bytes().decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise CheckpointError(f"{path} is not valid JSON: {exc}") from exc
    entries = data.get("checkpoints") if isinstance(data, dict) else None
    if not isinstance(entries, list):
        raise CheckpointError(f"{path} must hold a JSON object {{\"checkpoints\": [...]}}")
    return entries


def check_entry(entry: Any, folder: pathlib.Path) -> dict[str, Any]:
    """The entry, if it is a usable index entry of ``folder``; otherwise a :class:`CheckpointError`."""
    if not isinstance(entry, dict):
        raise CheckpointError(f"an entry must be a JSON object, got {type(entry).__name__} {entry!r:.60}")
    agent_id = entry.get("id")
    try:
        id_game, _, _ = parse_id(agent_id)
    except ValueError as exc:
        raise CheckpointError(str(exc)) from None
    missing = [k for k in ("game", "config", "path") if k not in entry]
    if missing:
        raise CheckpointError(f"the entry lacks {missing} (an entry has id, game, config, format, path)")
    if entry.get("format") != FORMAT:
        raise CheckpointError(
            f"format {entry.get('format', '(none given)')!r:.60} is not loaded by this library; only {FORMAT!r} "
            "(policy.json + policy.safetensors) is. Stable-Baselines3 zips are refused because loading "
            "them runs code stored in the file; convert zips you made yourself with "
            "`python -m training.sb3.convert`"
        )
    if entry["game"] not in envs.NAMES:
        raise CheckpointError(f"game {entry['game']!r:.60} is not one of {list(envs.NAMES)}")
    if id_game != entry["game"]:
        raise CheckpointError(f"id {agent_id!r} does not start with its game {entry['game']!r}")
    if not isinstance(entry["config"], dict):
        raise CheckpointError(f"config must be a JSON object, got {entry['config']!r:.80}")
    if "description" in entry and not isinstance(entry["description"], str):
        raise CheckpointError("description must be a string")
    if "search" in entry:
        from agents.search import check_search_settings

        check_search_settings(entry["search"], f"{agent_id}: search")
    if "superseded_by" in entry:
        newer = entry["superseded_by"]
        if not _is_id(newer) or parse_id(newer)[0] != id_game or newer == agent_id:
            raise CheckpointError(f"superseded_by must be another agent id of {id_game}, got {newer!r:.80}")
    inside(folder, entry["path"], "path")
    for key in ("args", "eval"):
        if key in entry:
            inside(folder, entry[key], key)
    return entry


def _is_id(value: Any) -> bool:
    try:
        parse_id(value)
    except ValueError:
        return False
    return True


def scan_index(folder: pathlib.Path | None = None) -> tuple[list[dict[str, Any]], dict[str, str], list[str]]:
    """Read ``index.json`` without raising: ``(usable entries, {id: problem}, problems without an id)``."""
    folder = folder or checkpoint_dir()
    try:
        raw = _read_index_file(folder)
    except CheckpointError as exc:
        return [], {}, [str(exc)]
    good: list[dict[str, Any]] = []
    bad: dict[str, str] = {}
    loose: list[str] = []
    seen: set[str] = set()
    for n, entry in enumerate(raw):
        agent_id = entry.get("id") if isinstance(entry, dict) else None
        named = _is_id(agent_id)
        try:
            check_entry(entry, folder)
            if agent_id in seen:
                raise CheckpointError("the id is listed more than once")
        except CheckpointError as exc:
            problem = f"{folder / INDEX_FILE}, entry {n} ({agent_id if named else 'no usable id'}): {exc}"
            if named:
                bad.setdefault(agent_id, problem)
                good = [e for e in good if e["id"] != agent_id]
            else:
                loose.append(problem)
        else:
            if agent_id not in bad:
                good.append(entry)
        if named:
            seen.add(agent_id)
    return good, bad, loose


def read_index(folder: pathlib.Path | None = None) -> list[dict[str, Any]]:
    """The entries of ``index.json``, all validated; any problem raises :class:`CheckpointError`."""
    good, bad, loose = scan_index(folder)
    problems = loose + list(bad.values())
    if problems:
        raise CheckpointError("; ".join(problems))
    return good


def policy_folder(ref: str | os.PathLike[str], root: pathlib.Path | None = None) -> pathlib.Path:
    """The policy folder that ``ref`` names, for tools that take "a policy" on the command line.

    ``ref`` is a checkpoint id listed in ``root``'s index (the checkpoint folder by default), a
    folder holding ``policy.json`` or a training run folder (its ``policy/``). Anything else raises a
    :class:`CheckpointError` saying which of the three was looked for. The folder's files are not
    read here; load them with :func:`agents.policy_io.load_policy`.
    """
    root = root or checkpoint_dir()
    text = os.fspath(ref)
    good, bad, _ = scan_index(root)
    if text in bad:
        raise CheckpointError(bad[text])
    for entry in good:
        if entry["id"] == text:
            return inside(root, entry["path"], "path")
    path = pathlib.Path(text)
    for folder in (path, path / "policy"):
        if (folder / SPEC_FILE).is_file():
            return folder
    ids = sorted(e["id"] for e in good)
    raise CheckpointError(
        f"{text!r} is neither a checkpoint id of {root / INDEX_FILE} ({', '.join(ids) or 'none listed'}) "
        f"nor a folder holding {SPEC_FILE} (a policy folder, or a run folder with policy/{SPEC_FILE})"
    )


def _policy_path(path: str | os.PathLike[str]) -> pathlib.Path:
    """The policy folder a path names: the folder itself if it holds ``policy.json``, else its ``policy/``;
    a :class:`CheckpointError` naming what is missing otherwise."""
    path = pathlib.Path(path)
    for folder in (path, path / "policy"):
        if (folder / SPEC_FILE).is_file():
            if not (folder / WEIGHTS_FILE).is_file():
                raise CheckpointError(f"{folder} holds {SPEC_FILE} but no {WEIGHTS_FILE}; a policy folder holds both")
            return folder
    raise CheckpointError(f"{path} is not a policy folder: it holds no {SPEC_FILE} (nor policy/{SPEC_FILE}, as a "
                          f"training run folder does); a policy folder holds {SPEC_FILE} + {WEIGHTS_FILE}")


def check_policy_path(path: str | os.PathLike[str], game_name: str) -> pathlib.Path:
    """The policy folder at ``path``, checked as a checkpoint is (its spec read and validated, a policy
    of ``game_name``); a :class:`CheckpointError` naming what is wrong otherwise."""
    folder = _policy_path(path)
    spec = read_policy_spec(folder)
    if spec["game"] != game_name:
        raise CheckpointError(f"{folder} holds a policy for {spec['game']!r}, not {game_name!r}")
    return folder


def folder_agent(path: str | os.PathLike[str], seed: int | None = None, **kwargs: Any) -> PolicyAgent:
    """The agent that plays the policy folder at ``path`` (:func:`agents.make` with a path)."""
    folder = _policy_path(path)
    spec = read_policy_spec(folder)
    return PolicyAgent(spec["game"], seed=seed, path=folder, config=spec["config"], root=folder, **kwargs)


register_policy_folders(folder_agent, check_policy_path)


# -------------------------------------------------------------------------------------------------
# Registering the index's ids as agents
def _make_policy_agent(game_name: str, seed: int | None = None, *, entry: dict[str, Any], root: pathlib.Path,
                       **kwargs: Any) -> PolicyAgent:
    policy_folder = inside(root, entry["path"], "path")
    if not (policy_folder / SPEC_FILE).is_file():
        raise CheckpointError(
            f"{entry['id']}: {policy_folder} holds no {SPEC_FILE}; a checkpoint folder holds "
            f"{SPEC_FILE} + {WEIGHTS_FILE}"
        )
    inside(root, (policy_folder / SPEC_FILE).relative_to(root).as_posix(), SPEC_FILE)
    spec = read_policy_spec(policy_folder)  # cheap: JSON only, so make() already refuses a bad spec
    if spec["game"] != game_name:
        raise CheckpointError(f"{entry['id']}: {policy_folder} holds a policy for {spec['game']!r}")
    try:
        envs.make_game(game_name, **entry["config"])
    except Exception as exc:  # a ConfigError naming the key and the allowed values
        raise CheckpointError(f"{entry['id']}: config {entry['config']} is not valid: {exc}") from exc
    if "search" in entry:
        from agents.search import SearchPolicyAgent

        return SearchPolicyAgent(game_name, seed=seed, path=policy_folder, config=entry["config"], root=root,
                                 search=entry["search"], **kwargs)
    return PolicyAgent(game_name, seed=seed, path=policy_folder, config=entry["config"], root=root, **kwargs)


def _refuse(game_name: str, seed: int | None = None, *, problem: str, **kwargs: Any) -> Agent:
    raise CheckpointError(problem)


def register_index(folder: pathlib.Path | None = None) -> list[str]:
    """Register every id of the index as an agent; returns the usable ids. Never raises for a bad index."""
    folder = folder or checkpoint_dir()
    good, bad, loose = scan_index(folder)
    ids = []
    for entry in good:
        try:
            register(entry["id"], partial(_make_policy_agent, entry=entry, root=folder),
                     entry.get("description", "trained policy"), searches=bool(entry.get("search")),
                     superseded_by=entry.get("superseded_by"))
            ids.append(entry["id"])
        except ValueError as exc:  # the id belongs to another agent already
            loose.append(f"{folder / INDEX_FILE}: {entry['id']}: {exc}")
    for agent_id, problem in bad.items():
        try:
            register(agent_id, partial(_refuse, problem=problem), f"unusable checkpoint entry: {problem}")
        except ValueError as exc:
            loose.append(f"{problem} ({exc})")
    for problem in loose:
        warnings.warn(problem, CheckpointWarning, stacklevel=2)
    return ids


# -------------------------------------------------------------------------------------------------
# Adding a checkpoint
def register_checkpoint(
    checkpoint_id: str,
    source: str | os.PathLike,
    *,
    description: str,
    folder: str | os.PathLike | None = None,
    search: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Copy the policy in ``source`` into the checkpoint folder as ``checkpoint_id`` and list it in the index.

    ``source`` is a folder holding ``policy.json`` + ``policy.safetensors`` (a training run's output;
    ``args.json``, ``eval.json`` and the learning curve, ``curve.csv`` and ``curve.png``, are copied too
    when present). The policy
    is loaded once to check it. ``search`` (settings of :class:`agents.search.SearchPolicyAgent`)
    makes the id play with determinized lookahead on top of the network. An id that exists already —
    in the index, as a folder, or as another agent — is refused: an id, once shipped, keeps meaning
    the same weights, so a retrained policy gets a new version number. Registrations into one folder
    from several processes take turns (:func:`index_lock`), so none of their entries is lost. Returns
    the new index entry.
    """
    root = pathlib.Path(folder) if folder is not None else checkpoint_dir()
    source = pathlib.Path(source)
    try:
        id_game, kind, _ = parse_id(checkpoint_id)
    except ValueError as exc:
        raise CheckpointError(str(exc)) from None
    root.mkdir(parents=True, exist_ok=True)
    with index_lock(root):  # another process registering into the same folder waits: no entry is lost
        return _register_locked(checkpoint_id, id_game, kind, source, root, description, search)


@contextlib.contextmanager
def index_lock(root: pathlib.Path) -> Iterator[None]:
    """Hold the checkpoint folder's lock (``.index.lock``, an advisory ``flock``) while reading and
    rewriting ``index.json``. Where ``fcntl`` does not exist (Windows) registering is not locked."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not on POSIX
        yield
        return
    with open(root / LOCK_FILE, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _register_locked(checkpoint_id: str, id_game: str, kind: str, source: pathlib.Path, root: pathlib.Path,
                     description: str, search: dict[str, Any] | None) -> dict[str, Any]:
    raw = _read_index_file(root)  # a malformed index is reported, never overwritten
    existing = {e.get("id") for e in raw if isinstance(e, dict)}
    if checkpoint_id in existing or checkpoint_id in available(id_game):
        taken = sorted(i for i in existing | set(available(id_game)) if isinstance(i, str)
                       and i.startswith(f"{id_game}/{kind}-v"))
        raise CheckpointError(
            f"checkpoint id {checkpoint_id!r} already exists (taken: {taken}); an id keeps meaning the "
            "same weights, so register the new policy under a new version"
        )
    if search is not None:
        from agents.search import check_search_settings

        search = check_search_settings(search, f"{checkpoint_id}: search")
    spec = read_policy_spec(source)
    game = spec["game"]
    if game != id_game:
        raise CheckpointError(f"{source} holds a policy for {game!r}, but the id {checkpoint_id!r} is for {id_game!r}")
    config = envs.make_game(game, **spec["config"]).config
    load_policy(source, game=game)  # the weights load and fit
    dest = root / checkpoint_id
    if dest.exists():
        raise CheckpointError(f"{dest} exists already; refusing to overwrite it")
    dest.mkdir(parents=True)
    for name in CHECKPOINT_FILES:
        if (source / name).is_file():
            shutil.copyfile(source / name, dest / name)
    rel = dest.relative_to(root).as_posix()
    entry: dict[str, Any] = {"id": checkpoint_id, "game": game, "config": config, "format": FORMAT, "path": rel}
    for key, name in (("args", "args.json"), ("eval", "eval.json")):
        if (dest / name).is_file():
            entry[key] = f"{rel}/{name}"
    entry["description"] = description
    if search is not None:
        entry["search"] = search
    check_entry(entry, root)
    entries = sorted([*raw, entry], key=lambda e: str(e.get("id")) if isinstance(e, dict) else "")
    with tempfile.NamedTemporaryFile("w", dir=root, suffix=".tmp", delete=False) as tmp:
        tmp.write(json.dumps({"checkpoints": entries}, indent=2) + "\n")
    os.replace(tmp.name, root / INDEX_FILE)
    return entry

"""Agents are created by versioned id from one registry: ``agents.make("sequence_v0/random-v0")``.

An id is ``<game>/<kind>-v<version>``. A new behaviour gets a new version; an id, once shipped,
keeps meaning the same player.
"""

from __future__ import annotations

import re
from typing import Any, Callable

from agents.base import Agent

_ID = re.compile(r"^(?P<game>[a-z0-9_]+_v\d+)/(?P<kind>[a-z0-9_.-]+)-v(?P<version>\d+)$")
_REGISTRY: dict[str, Callable[..., Agent]] = {}
_DESCRIPTIONS: dict[str, str] = {}
_SEARCHES: set[str] = set()
_SUPERSEDED_BY: dict[str, str] = {}
#: How a policy folder's path becomes an agent, and how it is checked: set by :mod:`agents.checkpoint`
#: (which owns the policy files) when ``agents`` is imported, as ``(make, check)``.
_POLICY_FOLDERS: list[tuple[Callable[..., Agent], Callable[[str, str], Any]]] = []


def register_policy_folders(make_agent: Callable[..., Agent], check: Callable[[str, str], Any]) -> None:
    """Let ``make`` and ``resolve`` take a policy folder's path: ``make_agent(path, seed=..., **kwargs)``
    builds the agent, ``check(path, game_name)`` raises what is wrong with the folder."""
    _POLICY_FOLDERS[:] = [(make_agent, check)]


def register(agent_id: str, factory: Callable[..., Agent], description: str = "", *, searches: bool = False,
             superseded_by: str | None = None) -> None:
    """Register ``factory(game_name, seed=...) -> Agent`` under ``agent_id``.

    ``searches`` declares an agent that searches at play time (tenths of a second to seconds a
    move, where the others take milliseconds). ``superseded_by`` names the id of the same game that
    replaces this one in the default lists (play, the quick league, the game pages); the superseded
    id keeps loading and keeps its place on the ladder.
    """
    match = _ID.match(agent_id)
    if not match:
        raise ValueError(
            f"agent id {agent_id!r} is malformed; ids look like 'sequence_v0/heuristic-v1' "
            "(<game>/<kind>-v<version>)"
        )
    if agent_id in _REGISTRY and _REGISTRY[agent_id] is not factory:
        raise ValueError(f"agent id {agent_id!r} is already registered")
    if superseded_by is not None:
        if parse_id(superseded_by)[0] != match.group("game") or superseded_by == agent_id:
            raise ValueError(f"{agent_id!r} can only be superseded by another id of its game, got {superseded_by!r}")
        _SUPERSEDED_BY[agent_id] = superseded_by
    _REGISTRY[agent_id] = factory
    _DESCRIPTIONS[agent_id] = description
    if searches:
        _SEARCHES.add(agent_id)


def make(agent_id: str, seed: int | None = None, **kwargs: Any) -> Agent:
    """Create the agent registered as ``agent_id``, seeded with ``seed``; a policy folder's path (a
    folder holding ``policy.json``, or a training run folder with ``policy/``) plays that policy."""
    if agent_id not in _REGISTRY and is_policy_path(agent_id) and _POLICY_FOLDERS:
        agent = _POLICY_FOLDERS[0][0](agent_id, seed=seed, **kwargs)
        agent.agent_id = agent_id
        return agent
    if agent_id not in _REGISTRY:
        match = _ID.match(agent_id)
        game = match.group("game") if match else agent_id.split("/")[0]
        known = available(game) if match else sorted(_REGISTRY)
        raise ValueError(f"no agent registered as {agent_id!r}; available: {known}")
    game = _ID.match(agent_id).group("game")
    agent = _REGISTRY[agent_id](game, seed=seed, **kwargs)
    agent.agent_id = agent_id
    return agent


def is_policy_path(spec: object) -> bool:
    """Whether ``spec`` names a folder on disk rather than an agent id (ids are never folders here)."""
    if not isinstance(spec, str) or _ID.match(spec):
        return False
    import os

    return os.path.isdir(spec)


def qualify(game_name: str, kind: str) -> str:
    """An agent as ``make`` takes it: ``heuristic-v1`` -> ``<game>/heuristic-v1``; a full id or a policy
    folder's path as it is."""
    return kind if "/" in kind else f"{game_name}/{kind}"


def resolve(game_name: str, spec: str) -> str:
    """What a command was given as an agent, checked: a registered id (``heuristic-v1`` is short for
    ``<game>/heuristic-v1``) or the path of a policy folder of ``game_name``, validated as a checkpoint
    is. Anything else raises a ``ValueError`` saying what was looked for."""
    full = qualify(game_name, spec)
    kinds = ", ".join(a.split("/", 1)[1] for a in available(game_name))
    if full in _REGISTRY:
        if full.split("/", 1)[0] != game_name:
            raise ValueError(f"{full!r} plays {full.split('/', 1)[0]}, not {game_name}; agents of {game_name}: {kinds}")
        return full
    if is_policy_path(spec) and _POLICY_FOLDERS:
        _POLICY_FOLDERS[0][1](spec, game_name)
        return spec
    raise ValueError(f"no agent {spec!r} for {game_name}: give an agent id ({kinds}) or the path of a policy folder "
                     "(a folder holding policy.json, or a training run folder with policy/policy.json)")


def available(game_name: str | None = None) -> list[str]:
    """Every registered id, or only those of ``game_name`` (e.g. ``"sequence_v0"``)."""
    if game_name is None:
        return sorted(_REGISTRY)
    return sorted(a for a in _REGISTRY if a.split("/", 1)[0] == game_name)


def describe(agent_id: str) -> str:
    return _DESCRIPTIONS.get(agent_id, "")


def searches_at_play_time(agent_id: str) -> bool:
    """Whether ``agent_id`` was registered as an agent that searches at play time."""
    return agent_id in _SEARCHES


def superseded_by(agent_id: str) -> str | None:
    """The current id that replaces ``agent_id`` (followed to the end of a chain: v1 -> v2 -> v3
    gives v3), or None for a current agent."""
    newer, seen = _SUPERSEDED_BY.get(agent_id), {agent_id}
    while newer in _SUPERSEDED_BY and newer not in seen:
        seen.add(newer)
        newer = _SUPERSEDED_BY[newer]
    return newer


def current(agent_ids: list[str]) -> list[str]:
    """``agent_ids`` without the superseded ones (order kept)."""
    return [a for a in agent_ids if superseded_by(a) is None]


def parse_id(agent_id: object) -> tuple[str, str, int]:
    """``(game, kind, version)`` of a well-formed agent id; a ``ValueError`` showing the shape otherwise."""
    match = _ID.match(agent_id) if isinstance(agent_id, str) else None
    if not match:
        raise ValueError(
            f"agent id {agent_id!r:.80} is malformed; ids look like 'sequence_v0/ppo-v1' (<game>/<kind>-v<version>)"
        )
    return match.group("game"), match.group("kind"), int(match.group("version"))

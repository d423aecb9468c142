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
    """Create the agent registered as ``agent_id``, seeded with ``seed``."""
    if agent_id not in _REGISTRY:
        match = _ID.match(agent_id)
        game = match.group("game") if match else agent_id.split("/")[0]
        known = available(game) if match else sorted(_REGISTRY)
        raise ValueError(f"no agent registered as {agent_id!r}; available: {known}")
    game = _ID.match(agent_id).group("game")
    agent = _REGISTRY[agent_id](game, seed=seed, **kwargs)
    agent.agent_id = agent_id
    return agent


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

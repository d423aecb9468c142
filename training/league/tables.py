"""Which tables a game is played at, and which agents can sit at each.

A game's *tables* are its default config plus every config family that shipped checkpoints were
trained for and cannot leave (Sequence's 2 teams of 2). Every registered agent that can sit at a
table is played there. The league (``--all``, ``--game`` without ``--agents``) and the ladder both
start from :func:`game_tables`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import agents
import envs
from agents.ladder import table_label
from training.league.matches import ENV_KEYWORDS


@dataclass
class Table:
    """One table of a game: its label (and output folder name), the config keywords that differ
    from the game's defaults, the agents that can sit there, and those left out with the reason."""

    game: str
    label: str
    config: dict[str, Any]
    agents: list[str]
    left_out: dict[str, str] = field(default_factory=dict)


def config_words(game_name: str, config: dict[str, Any]) -> str:
    """A table's config in words, for titles: ``"2 teams of 2"``, ``"6 players"``, ``"default config"``;
    any other keyword as ``key = value``."""
    if not config:
        return "default config"
    full = envs.make_game(game_name, **{k: v for k, v in config.items() if k not in ENV_KEYWORDS}).config
    words, rest = [], dict(config)
    if "num_teams" in rest or "players_per_team" in rest:
        rest.pop("num_teams", None), rest.pop("players_per_team", None)
        words.append(f"{full['num_teams']} teams of {full['players_per_team']}")
    if "num_players" in rest:
        words.append(f"{rest.pop('num_players')} players")
    words += [f"{k.replace('_', ' ')} = {v if isinstance(v, str) else json.dumps(v)}" for k, v in sorted(rest.items())]
    return ", ".join(words)


def table_title(game_name: str, config: dict[str, Any]) -> str:
    """``"sequence_v0, 2 teams of 2"`` (just the game at its default config)."""
    return game_name if not config else f"{game_name}, {config_words(game_name, config)}"


def check_seat(agent_id: str, game_name: str, config: dict[str, Any]) -> None:
    """Make ``agent_id`` and seat it at ``game_name`` with ``config`` (a checkpoint's weights are read
    and checked here), raising what the agent raises: before any game, so that a damaged file is
    answered before a worker meets it."""
    engine_config = {k: v for k, v in config.items() if k not in ENV_KEYWORDS}
    agents.make(agent_id, seed=0).reset(0, envs.make_game(game_name, **engine_config))


def cannot_play(agent_id: str, game_name: str, config: dict[str, Any]) -> str | None:
    """Why ``agent_id`` cannot sit at ``game_name`` with ``config`` (None if it can)."""
    try:
        check_seat(agent_id, game_name, config)
    except Exception as exc:
        return f"{type(exc).__name__}: {exc}"
    return None


def game_tables(game_name: str) -> list[Table]:
    """The game's tables, the default config first, each with every registered agent that can sit
    there (random first).

    A checkpoint that cannot sit at the default table because it was trained for another config
    gets a table of that config (the keywords that differ from the defaults), shared with every
    checkpoint of the same config and every agent that can sit there. What cannot sit at the
    default table is listed in its ``left_out`` with the reason.
    """
    from agents.checkpoint import scan_index

    random_id = f"{game_name}/random-v0"
    everyone = [random_id] + [a for a in agents.available(game_name) if a != random_id]
    trained_for = {entry["id"]: entry["config"] for entry in scan_index()[0] if entry["game"] == game_name}
    default = envs.make_game(game_name).config
    configs: list[dict[str, Any]] = [{}]
    at_default = {agent_id: cannot_play(agent_id, game_name, {}) for agent_id in everyone}
    own_table: dict[str, str] = {}  # checkpoint id -> the label of the table of its own config
    for agent_id in everyone:
        if agent_id in trained_for and at_default[agent_id]:
            own = {k: v for k, v in trained_for[agent_id].items() if default.get(k) != v}
            if own and cannot_play(agent_id, game_name, own) is None:
                own_table[agent_id] = table_label(game_name, own)
                if own not in configs:
                    configs.append(own)
    tables = []
    for table_config in configs:
        table = Table(game_name, table_label(game_name, table_config), table_config, [])
        for agent_id in everyone:
            problem = cannot_play(agent_id, game_name, table_config) if table_config else at_default[agent_id]
            if problem is None:
                table.agents.append(agent_id)
            elif not table_config:  # said once, at the default table
                if agent_id in own_table:
                    problem = f"trained for another config; plays at its own table, {own_table[agent_id]}"
                table.left_out[agent_id] = problem
        tables.append(table)
    return tables


def table_at(game_name: str, config: dict[str, Any]) -> Table:
    """The one table of ``config``, with every registered agent that can sit there (random first)."""
    random_id = f"{game_name}/random-v0"
    table = Table(game_name, table_label(game_name, config), dict(config), [])
    for agent_id in [random_id] + [a for a in agents.available(game_name) if a != random_id]:
        problem = cannot_play(agent_id, game_name, config)
        if problem is None:
            table.agents.append(agent_id)
        else:
            table.left_out[agent_id] = problem
    return table

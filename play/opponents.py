"""The opponents both front ends offer: the agents that can sit at the table, in the ladder's order.

Each entry carries the ladder's numbers (Elo and its interval, CPU time a move) so a player sees
how strong and how quick an opponent is before choosing; superseded versions come after the current
agents, marked ``older``; an agent the ladder does not rate (one of your own checkpoints) comes last.
"""

from __future__ import annotations

from typing import Any

from agents.ladder import ladder, ladder_configs, ladder_table, move_time_text
from agents.registry import superseded_by
from play.session import agents_for, resolve_config


def opponents(game_name: str, config: str | dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """``[{"id", "elo", "elo_low", "elo_high", "seconds_per_move", "older", "label"}, ...]``: current
    agents strongest first, then the older versions strongest first, then the unrated."""
    fit = agents_for(game_name, config)
    table = resolve_config(game_name, config)
    # a table without a ladder of its own lists its agents unrated; a ladder file that is there but
    # damaged is refused (LadderError), never shown as an empty ladder
    has_ladder = ladder_table(game_name, table) in ladder_configs(game_name)
    rated = {row["id"]: row for row in ladder(game_name, table)} if has_ladder else {}
    order = {agent_id: n for n, agent_id in enumerate(rated)}
    entries = []
    for agent_id in fit:
        row = rated.get(agent_id, {})
        entries.append({
            "id": agent_id,
            "elo": row.get("elo"),
            "elo_low": row.get("elo_low"),
            "elo_high": row.get("elo_high"),
            "seconds_per_move": row.get("seconds_per_move"),
            "older": superseded_by(agent_id) is not None,
            "label": label(agent_id, row),
        })
    entries.sort(key=lambda e: (e["older"], e["id"] not in order, order.get(e["id"], 0), e["id"]))
    return entries


def label(agent_id: str, row: dict[str, Any], full: bool = False) -> str:
    """``"search-v1 (Elo 1790, 120 ms a move)"`` (``full``: with the game, as the command line takes it)."""
    name = agent_id if full else agent_id.split("/", 1)[-1]
    if not row:
        return f"{name} (not on the ladder)"
    return f"{name} (Elo {row['elo']:.0f}, {move_time_text(row['seconds_per_move'])} a move)"


def listing(game_name: str, config: str | dict[str, Any] | None = None) -> str:
    """The opponents as lines of text for the terminal, older versions folded under their own heading."""
    lines, folded = [], False
    for entry in opponents(game_name, config):
        if entry["older"] and not folded:
            lines.append("older versions:")
            folded = True
        row = {} if entry["elo"] is None else entry
        lines.append(("    " if entry["older"] else "  ") + label(entry["id"], row, full=True))
    return "\n".join(lines)

"""Replaying recorded agent games move for move (shared by the heuristics' pinned-decision tests).

A heuristic that is an opponent or a teacher must not change a single decision when its code is
only made faster. Each game file holds ``games``: the seed, config, agent seeds (and agent ids,
when not all the same), the actions and the returns of games recorded before such a change."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import agents
from agents.runner import play_game


def load_games(path: Path) -> list[dict[str, Any]]:
    return json.loads(path.read_text())["games"]


def assert_replays(game_name: str, game: dict[str, Any], agent_id: str | None = None) -> None:
    """Play ``game`` again with the same agents and seeds; fail at the first action that differs."""
    ids = game.get("agents") or [agent_id] * len(game["agent_seeds"])
    bots = [agents.make(i, seed=s) for i, s in zip(ids, game["agent_seeds"])]
    record = play_game(game_name, bots, seed=game["seed"], config=game["config"], record_actions=True)
    actions = [int(a) for a in record.actions]
    first_diff = next((i for i, (a, b) in enumerate(zip(actions, game["actions"])) if a != b), None)
    assert first_diff is None and len(actions) == len(game["actions"]), (
        f"the games part at action {first_diff} (lengths {len(actions)} and {len(game['actions'])})")
    assert list(record.returns) == pytest.approx(game["returns"])

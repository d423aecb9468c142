"""heuristic-v1 is the Wizard Arena teacher and the opponent every result is measured against, so a
speed-up of its code (or of the map's path searches it uses) must not change a single decision. Three
seeded self-play games (6 bots, 16 bots, no health with Gary roaming), recorded before the
breadth-first search was rewritten, are replayed move for move."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import agents
from agents.runner import play_game

GAMES = json.loads((Path(__file__).parent / "data" / "heuristic_v1_games.json").read_text())["games"]


@pytest.mark.parametrize("game", GAMES, ids=lambda g: f"seed{g['seed']}")
def test_heuristic_games_replay_move_for_move(game):
    bots = [agents.make("wizard_arena_v0/heuristic-v1", seed=s) for s in game["agent_seeds"]]
    record = play_game("wizard_arena_v0", bots, seed=game["seed"], config=game["config"], record_actions=True)
    actions = [int(a) for a in record.actions]
    first_diff = next((i for i, (a, b) in enumerate(zip(actions, game["actions"])) if a != b), None)
    assert first_diff is None and len(actions) == len(game["actions"]), (
        f"the games part at action {first_diff} (lengths {len(actions)} and {len(game['actions'])})")
    assert list(record.returns) == pytest.approx(game["returns"])

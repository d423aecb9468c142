"""The endings measurement (``python -m benchmarks.arena_endings``) counts what it plays."""

from __future__ import annotations

import json

import pytest

from benchmarks import arena_endings


def test_a_field_is_counted_game_by_game(tmp_path, capsys):
    out = tmp_path / "endings.json"
    results = arena_endings.main(["--fields", "3+3 mixed", "--games", "3", "--seed", "7", "--no-progress-bar",
                                  "--max-cycles", "30", "--out", str(out),
                                  "--plot", str(tmp_path / "endings.png")])
    (r,) = results
    assert (r.field, r.games, r.first_seed, r.max_cycles) == ("3+3 mixed", 3, 7, 30)
    assert r.by_rules + r.truncated == 3 and 0 <= r.by_no_progress <= r.by_rules
    assert r.truncated >= 1  # 30 cycles are too few for most games: the cap is counted as such
    assert 0 < r.median_actions <= r.longest_actions <= r.cap_actions == 30 * 6
    saved = json.loads(out.read_text())
    assert saved["fields"][0]["field"] == "3+3 mixed" and saved["fields"][0]["truncated"] == r.truncated
    assert "3+3 mixed" in capsys.readouterr().out
    assert (tmp_path / "endings.png").stat().st_size > 1000


def test_bad_input_is_refused_with_a_message():
    with pytest.raises(ValueError, match="unknown field"):
        arena_endings.play_field("7 goblins", 1, 0, progress=False)
    with pytest.raises(SystemExit):
        arena_endings.main(["--fields", "7 goblins"])
    with pytest.raises(SystemExit):
        arena_endings.main(["--games", "0"])

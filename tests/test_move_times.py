"""``python -m benchmarks.move_times``: what the game pages' "time a move" column is made from."""

from __future__ import annotations

import json

import pytest

from benchmarks import move_times


def test_times_a_checkpoint_and_writes_its_row(tmp_path):
    pytest.importorskip("torch", reason="checkpoints need the train extra")
    out = tmp_path / "times.json"
    move_times.main(["--ids", "dojo_v0/ppo-v1", "--games", "1", "--out", str(out)])
    report = json.loads(out.read_text())
    row = report["checkpoints"]["dojo_v0/ppo-v1"]
    assert row["moves"] > 0 and row["games"] == 1 and 0 < row["median_ms"] and 0 < row["ms_per_move"]
    assert report["provenance"]["package"] == "tabletop-rl" and report["command"].endswith("--ids dojo_v0/ppo-v1 --games 1")


def test_refuses_an_unknown_id_and_a_games_count_below_one(tmp_path, capsys):
    with pytest.raises(SystemExit):
        move_times.main(["--ids", "dojo_v0/ppo-v99", "--out", str(tmp_path / "x.json")])
    assert "dojo_v0/ppo-v99" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        move_times.main(["--games", "0", "--out", str(tmp_path / "x.json")])
    assert "--games must be at least 1" in capsys.readouterr().err


def test_the_committed_times_cover_every_checkpoint():
    index = json.loads((move_times.ROOT / "checkpoints" / "index.json").read_text(encoding="utf-8"))
    times = json.loads(move_times.DEFAULT_OUT.read_text(encoding="utf-8"))["checkpoints"]
    assert {e["id"] for e in index["checkpoints"]} <= set(times)

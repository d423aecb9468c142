"""The benchmark runs end to end (it reports speeds; no test ever asserts a time)."""

from __future__ import annotations

import json

import envs
from benchmarks import run as bench


def test_benchmark_reports_every_ratio_for_a_game(tmp_path):
    report = bench.run(["sequence_v0"], seconds=0.05, repeats=1, progress=False)
    rows = report["results"]
    assert [r["config"] for r in rows] == ["2 players", "2 teams of 2", "3 teams"]
    for row in rows:
        assert set(row["ratios"]) == {"raw_env", "env", "engine", "clone"}
        assert row["clone"]["clones_per_s"] > 0
        assert row["raw_env"]["steps_per_s"] > 0 and row["c4_raw_env"]["steps_per_s"] > 0
    bench.print_table(report)
    bench.plot(report, tmp_path / "b.png")
    assert (tmp_path / "b.png").stat().st_size > 0
    json.dumps(report)


def test_vector_benchmark_reports_every_backend_beside_raw_env(tmp_path):
    from benchmarks import vector

    report = vector.run(["dojo_v0"], seconds=0.05, repeats=1, num_envs=[2, 4])
    rows = report["results"]
    configs = list(envs.game_class("dojo_v0").benchmark_configs)
    assert [(r["config"], r["num_envs"]) for r in rows] == [(c, n) for c in configs for n in (2, 4)]
    for row in rows:
        assert set(row["ratios"]) == {"python"} and row["python"]["steps_per_s"] > 0
        assert set(row["ratios"]["python"]) == {"c4_raw_env", "raw_env", "raw_env_prefix", "raw_env_tables"}
        assert row["raw_env_tables"]["num_envs"] == row["num_envs"]
        assert row["raw_env_tables"]["prefix"] == row["python"]["calls"]
        assert row["ratios"]["python"]["raw_env"] == row["python"]["steps_per_s"] / row["raw_env"]["steps_per_s"]
    assert list(report["provenance"]["environments"]) == ["dojo_v0"]
    vector.print_table(report)
    json.dumps(report)

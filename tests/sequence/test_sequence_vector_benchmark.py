"""The vector Sequence benchmark runs end to end and writes its report (it never asserts a speed)."""

from __future__ import annotations

import json

from benchmarks import vector_sequence


def test_the_benchmark_reports_ratios_with_provenance(tmp_path, capsys):
    vector_sequence.main(["--num-envs", "16", "--seconds", "0.05", "--repeats", "1", "--out", str(tmp_path),
                          "--config", "num_teams=3"])
    report = json.loads((tmp_path / "vector_sequence.json").read_text())
    assert report["config"] == {"num_teams": 3} and report["num_envs"] == 16
    assert report["table_steps_per_s"] > 0 and report["ratio"] > 0 and report["step_only_ratio"] > 0
    assert report["provenance"]["environments"] == {"sequence_v0": 0}
    assert "x connect_four raw_env" in capsys.readouterr().out

"""benchmarks.exit_curve: evaluation reports in, a curve with provenance and a summary out; bad input refused."""

from __future__ import annotations

import json

import pytest

from benchmarks import exit_curve
from tests.test_ppo import tiny_run


def test_points_from_reports_make_a_curve_and_a_summary(tmp_path):
    from PIL import Image

    run = tiny_run(tmp_path, "pans_trial_v0", "--opponents", "random-v0", "--teacher", "", "--hidden", "32", steps=64)
    report = run / "eval.json"
    r = json.loads(report.read_text())["results"]["random-v0"]
    out = tmp_path / "curve"
    summary = exit_curve.main(["--opponent", "random-v0", "--point", f"start,0,{report}",
                               "--point", f"a,64,{report}", "--point", f"b,128,{report}", "--out", str(out)])
    assert [(p["series"], p["labels"]) for p in summary["points"]] == [("start", 0), ("a", 64), ("b", 128)]
    assert all(p["wins"] == r["wins"] and p["games"] == r["games"] for p in summary["points"])
    assert json.loads(out.with_suffix(".json").read_text())["provenance"]["environments"] == {"pans_trial_v0": 0}
    image = Image.open(out.with_suffix(".png"))
    assert "pans_trial_v0" in image.text["Comment"]
    assert summary["xlabel"] == "labels cloned"  # neutral: a control series clones a heuristic
    assert summary["ylabel"] == "wins vs random-v0 (%)"
    exit_curve.main(["--opponent", "random-v0", "--point", f"start,0,{report}", "--xlabel",
                     "search-v1 labels cloned", "--ylabel", "first places (%)", "--out", str(tmp_path / "named")])
    named = json.loads((tmp_path / "named.json").read_text())
    assert (named["xlabel"], named["ylabel"]) == ("search-v1 labels cloned", "first places (%)")


def test_bad_points_are_refused(tmp_path):
    broken = tmp_path / "broken.json"
    broken.write_text('{"format": "something else"}')
    with pytest.raises(SystemExit, match="SERIES,LABELS,FILE"):
        exit_curve.main(["--point", "a,many,x.json", "--out", str(tmp_path / "c")])
    with pytest.raises(SystemExit, match="not a readable evaluation report"):
        exit_curve.main(["--point", f"a,1,{broken}", "--out", str(tmp_path / "c")])

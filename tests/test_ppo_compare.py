"""``python -m benchmarks.ppo_compare``: the runs it makes, how it lines seeds up, and one real tiny run."""

from __future__ import annotations

import pathlib

import pytest

from benchmarks import ppo_compare as pc
from training.report import read_csv


def _flags(argv: list[str]) -> dict[str, str]:
    return {a: b for a, b in zip(argv, argv[1:]) if a.startswith("--")}


def test_the_reference_study_gives_every_trainer_the_same_task_budget_and_update_settings():
    runs = pc.commands("reference", rllib_python="/x/python", samples=4096)
    assert len({(g, o, v, s) for g, o, v, s, _ in runs}) == len(runs)
    assert {v for _, _, v, _, _ in runs} == {"ppo", "ppo-matched", "sb3", "rllib"}
    assert {(g, o) for g, o, _, _, _ in runs} == set(pc.REFERENCE_TASKS)
    matched = dict(zip(pc.MATCHED[::2], pc.MATCHED[1::2]))
    for game, opponent, variant, seed, argv in runs:
        flags = _flags(argv)
        assert flags["--game"] == game and flags["--seed"] == str(seed)
        assert flags["--opponents"] == opponent
        if variant != "ppo":  # the matched variants all take SB3's update settings
            assert all(flags[k] == v for k, v in matched.items()), variant
        if variant == "rllib":
            assert argv[0] == "/x/python" and int(flags["--iterations"]) * int(flags["--train-batch"]) >= 4096
            assert int(flags["--iterations"]) % int(flags["--eval-every"]) == 0  # the last iteration is evaluated
        else:
            assert flags["--total-timesteps"] == "4096" and flags["--eval-opponents"] == opponent


def test_seeds_line_up_by_evaluation_and_sb3s_own_final_reaches_itself():
    rows = []
    for seed, wins in ((1, [0.5, 0.7, 0.9]), (2, [0.4, 0.6, 0.8])):
        for k, (samples, win) in enumerate(zip([20000, 40000, 40960], wins)):
            for variant in ("sb3", "ppo"):
                rows.append({"game": "g", "opponent": "o", "variant": variant, "seed": seed, "samples": samples,
                             "cpu_seconds": 10.0 * (k + 1), "win_rate": win if variant == "sb3" else win - 0.3,
                             "win_low": 0, "win_high": 1, "approx_kl": float("nan"), "clipfrac": float("nan")})
    points = pc.aligned(rows, "g", "o", "sb3")
    assert [p["samples"] for p in points] == [20000, 40000, 40960]
    assert [round(p["win_rate"], 3) for p in points] == [0.45, 0.65, 0.85]
    summary = {s["variant"]: s for s in pc.summarize(rows, samples=40000)}
    assert summary["sb3"]["final_win_rate"] == 0.85 and summary["sb3"]["samples_to_sb3_final"] == 40960
    assert summary["ppo"]["samples_to_sb3_final"] == "never"


@pytest.mark.slow
def test_a_tiny_settings_run_writes_its_tables_and_plot(tmp_path):
    pc.main(["settings", "--out", str(tmp_path), "--samples", "1024", "--only", "old-defaults"])
    block, (row,) = read_csv(tmp_path / "settings_summary.csv")  # the provenance line every CSV starts with
    assert block["environments"] == {"pans_trial_v0": 0, "sequence_v0": 0}
    assert row["variant"] == "old-defaults" and row["seeds"] == "3" and 0 <= float(row["final_win_rate"]) <= 1
    assert (tmp_path / "settings_sequence_v0.png").stat().st_size > 0
    # a finished run is not run again
    before = (tmp_path / "settings" / "sequence_v0-random-v0" / "old-defaults-s1" / "curve.csv").stat().st_mtime
    pc.main(["settings", "--out", str(tmp_path), "--samples", "1024", "--only", "old-defaults"])
    assert (tmp_path / "settings" / "sequence_v0-random-v0" / "old-defaults-s1" / "curve.csv").stat().st_mtime == before


def test_the_published_tables_start_with_their_provenance():
    from envs.provenance import check_provenance

    docs = pathlib.Path(__file__).resolve().parents[1] / "docs" / "guide" / "ppo_compare"
    tables = sorted(docs.glob("*.csv"))
    assert len(tables) == 4
    for path in tables:
        block, rows = read_csv(path)
        check_provenance(block, path.name)
        assert block["environments"] == {"pans_trial_v0": 0, "sequence_v0": 0} and rows, path.name


def test_any_seed_can_be_run_and_a_filter_that_matches_nothing_says_what_there_is(tmp_path, capsys):
    runs = pc.commands("reference", rllib_python=None, samples=4096, seeds=(4,))
    assert {s for _, _, _, s, _ in runs} == {4} and all(_flags(argv)["--seed"] == "4" for *_, argv in runs)
    with pytest.raises(SystemExit, match="matches none of the reference study's runs: pans_trial_v0/heuristic"):
        pc.run_all("reference", tmp_path, None, "chess", 4096, seeds=[4])
    with pytest.raises(SystemExit, match=r"no such variant; choose from \['ppo', 'ppo-matched', 'sb3'\]"):
        pc.run_all("reference", tmp_path, None, None, 4096, variants=["nope"])
    with pytest.raises(SystemExit):
        pc.main(["reference", "--seed", "-1"])
    assert "--seed must be a whole number >= 0" in capsys.readouterr().err

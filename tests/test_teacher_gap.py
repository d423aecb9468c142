"""benchmarks.teacher_gap: where a network departs from its teachers, by kind of decision."""
from __future__ import annotations

import json

import pytest

import agents
import torch

from benchmarks import teacher_gap

torch.set_num_threads(1)


def test_summarise_counts_agreements_and_value_given_up_per_kind():
    rows = [
        {"kind": "move", "net": 1, "teacher": 1, "teacher_again": 1, "search": 2, "search_again": 2,
         "net_lost": 0.5, "teacher_lost": 0.5},
        {"kind": "move", "net": 3, "teacher": 1, "teacher_again": 2, "search": 3, "search_again": 1,
         "net_lost": 0.0, "teacher_lost": 0.25},
        {"kind": "draft", "net": 0, "teacher": 0, "teacher_again": 0, "search": 0, "search_again": 0,
         "net_lost": 0.0, "teacher_lost": 0.0},
    ]
    s = teacher_gap.summarise(rows)
    assert list(s) == ["all", "move", "draft"]
    assert s["move"] == {"decisions": 2, "net_is_teacher": 0.5, "teacher_self": 0.5, "net_is_search": 0.5,
                         "search_self": 0.5, "teacher_is_search": 0.0, "net_lost_mean": 0.25,
                         "teacher_lost_mean": 0.375, "net_lost_total": 0.5, "teacher_lost_total": 0.75}
    assert s["all"]["decisions"] == 3 and s["all"]["net_is_teacher"] == pytest.approx(2 / 3)
    assert s["draft"]["search_self"] == 1.0


def test_a_short_run_writes_a_report_with_provenance(tmp_path):
    out = tmp_path / "gap.json"
    report = teacher_gap.main(["pans_trial_v0/ppo-v3", "--games", "1", "--search-setting", "simulations=1",
                               "--out", str(out)])
    assert json.loads(out.read_text()) == json.loads(json.dumps(report))
    assert report["teacher"] == "pans_trial_v0/heuristic-v1" and report["search"] == "pans_trial_v0/search-v1"
    assert report["search_settings"] == {"simulations": 1} and report["provenance"]["environments"] == {"pans_trial_v0": 0}
    every = report["by_kind"]["all"]
    assert every["decisions"] == sum(s["decisions"] for k, s in report["by_kind"].items() if k != "all") > 0
    for s in report["by_kind"].values():
        assert all(0.0 <= s[k] <= 1.0 for k in teacher_gap.COUNTS[1:])
        assert s["net_lost_mean"] >= 0.0 and s["teacher_lost_mean"] >= 0.0


@pytest.mark.parametrize("argv,needle", [
    (["checkpoints/pans_trial_v0/ppo-v3"], "--game is needed when NETWORK is a policy folder"),
    (["pans_trial_v0/ppo-v3", "--games", "0"], "--games must be at least 1"),
    (["nogame_v0/ppo-v1"], "unknown game 'nogame_v0'"),
    (["pans_trial_v0/ppo-v3", "--search-base", "no-such-agent"], "no agent registered as 'pans_trial_v0/no-such-agent'"),
])
def test_bad_arguments_are_refused_saying_why(argv, needle, tmp_path, capsys):
    with pytest.raises(SystemExit):
        teacher_gap.main([*argv, "--out", str(tmp_path / "x.json")])
    assert needle in capsys.readouterr().err


def test_a_search_that_is_not_a_rollout_search_is_refused(tmp_path):
    with pytest.raises(SystemExit, match="not a rollout search agent"):
        teacher_gap.main(["pans_trial_v0/ppo-v3", "--search", "heuristic-v1", "--games", "1",
                          "--out", str(tmp_path / "x.json")])


def test_search_base_makes_the_search_over_that_agent_and_is_recorded(tmp_path, monkeypatch):
    made: list[dict] = []
    real_make = agents.make

    def spy(agent_id, **kwargs):
        if agent_id.endswith("/search-v1"):
            made.append(dict(kwargs))
        return real_make(agent_id, **kwargs)

    monkeypatch.setattr(teacher_gap.agents, "make", spy)
    report = teacher_gap.main(["pans_trial_v0/ppo-v3", "--search-base", "random-v0", "--games", "1",
                               "--search-setting", "simulations=1", "--out", str(tmp_path / "gap.json")])
    assert made and all(k["base"] == "random-v0" and k["search"] == {"simulations": 1} for k in made)
    assert report["search_base"] == "random-v0" and report["by_kind"]["all"]["decisions"] > 0

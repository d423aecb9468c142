"""benchmarks.search_noise: two searches value the same positions; identical searches show no noise."""

from __future__ import annotations

import json

import pytest

import agents
from benchmarks import search_noise


def test_two_searches_of_one_seed_agree_exactly_and_the_report_has_provenance(tmp_path):
    rows: list[dict] = []
    same = [agents.make("dojo_v0/search-v1", seed=3, search={"simulations": 1}) for _ in range(2)]
    probe = search_noise.Probe(agents.make("dojo_v0/heuristic-v1", seed=0), same, per_game=3, rows=rows)
    seats = [probe] + [agents.make("dojo_v0/heuristic-v1", seed=s) for s in (1, 2, 3)]
    agents.play_game("dojo_v0", seats, seed=11)
    assert len(rows) == 3
    assert all(r["noise"] == 0.0 and r["offset"] == 0.0 and r["same_choice"] for r in rows)
    assert all(r["spread"] >= r["gap"] >= 0.0 and r["moves_tried"] >= 2 for r in rows)

    out = tmp_path / "noise.json"
    report = search_noise.main(["dojo_v0/search-v1", "--search-setting", "simulations=1", "--games", "2",
                                "--per-game", "2", "--out", str(out)])
    saved = json.loads(out.read_text())
    assert saved["summary"] == report["summary"] and saved["summary"]["decisions"] == len(saved["decisions"]) == 4
    assert saved["provenance"]["environments"] == {"dojo_v0": 0} and saved["search_settings"] == {"simulations": 1}


def test_bad_arguments_are_refused(tmp_path):
    out = str(tmp_path / "x.json")
    with pytest.raises(SystemExit, match="not a rollout search agent"):
        search_noise.main(["dojo_v0/heuristic-v1", "--out", out])
    with pytest.raises(SystemExit):
        search_noise.main(["chess_v0/search-v1", "--out", out])
    with pytest.raises(SystemExit):
        search_noise.main(["dojo_v0/search-v1", "--games", "0", "--out", out])


def test_base_option_searches_over_that_agent_and_is_recorded(tmp_path, monkeypatch):
    made: list[dict] = []
    real_make = agents.make

    def spy(agent_id, **kwargs):
        if "search-v1" in agent_id:
            made.append(dict(kwargs))
        return real_make(agent_id, **kwargs)

    monkeypatch.setattr(search_noise.agents, "make", spy)
    out = tmp_path / "noise.json"
    report = search_noise.main(["dojo_v0/search-v1", "--base", "random-v0", "--search-setting", "simulations=1",
                                "--games", "1", "--per-game", "1", "--out", str(out)])
    assert made and all(k["base"] == "random-v0" and k["search"] == {"simulations": 1} for k in made)
    assert json.loads(out.read_text())["base"] == report["base"] == "random-v0"
    with pytest.raises(SystemExit):
        search_noise.main(["dojo_v0/search-v1", "--base", "no-such-agent", "--out", str(out)])

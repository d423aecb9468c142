"""benchmarks.search_eval: seats rotated, parts, resuming, a base given by folder, and what it writes."""

from __future__ import annotations

import json

import pytest

from benchmarks import search_eval

CHEAP = ["--search", "simulations=1", "--search", "turns=1", "--search", "max_candidates=2"]


def test_games_rotate_seats_resume_and_parts_add_up(tmp_path, capsys):
    out0, out1 = tmp_path / "p0.jsonl", tmp_path / "p1.jsonl"
    first = search_eval.main(["pans_trial_v0/search-v1", "--games", "3", "--part", "0/2", "--out", str(out0), *CHEAP])
    rows = [json.loads(line) for line in out0.read_text().splitlines()]
    assert [r["index"] for r in rows] == [0, 2] and [r["seat"] for r in rows] == [0, 0]
    assert all(r["provenance"]["environments"] == {"pans_trial_v0": 0} for r in rows)
    assert first["games"] == 2 and first["search"] == {"simulations": 1, "turns": 1, "max_candidates": 2}
    again = search_eval.main(["pans_trial_v0/search-v1", "--games", "3", "--part", "0/2", "--out", str(out0), *CHEAP])
    assert len(out0.read_text().splitlines()) == 2 and again["wins"] == first["wins"]  # nothing replayed
    search_eval.main(["pans_trial_v0/search-v1", "--games", "3", "--part", "1/2", "--out", str(out1), *CHEAP])
    both = search_eval.main(["pans_trial_v0/search-v1", "--out", str(out0), "--summary", str(out1)])
    assert both["games"] == 3 and both["fair_share"] == 0.5
    assert both["wins"] == sum(json.loads(line)["won"] for f in (out0, out1) for line in f.read_text().splitlines())
    low, high = both["wilson95"]
    assert low <= both["win_rate"] <= high and both["moves_with_choice"] > 0
    assert both["provenance"]["package"]


def test_a_policy_folder_is_a_base(tmp_path):
    import torch

    from tests.test_search_agent import write_actor_critic

    torch.set_num_threads(1)
    folder = write_actor_critic(tmp_path / "net", game_name="pans_trial_v0")
    result = search_eval.main(["pans_trial_v0/search-v1", "--games", "1", "--base", str(folder),
                               "--out", str(tmp_path / "r.jsonl"), *CHEAP])
    assert result["base"] == str(folder) and result["games"] == 1


def test_rollout_twice_switches_policies_and_a_heuristic_can_be_measured(tmp_path, capsys):
    """--rollout A --rollout B hands the search both continuations; a heuristic in the measured seat plays
    the same deals (its rows keep no move times), and search settings for it are refused by name."""
    out = tmp_path / "s.jsonl"
    result = search_eval.main(["wizard_arena_v0/search-v2", "--games", "1", "--rollout", "heuristic-v1",
                               "--rollout", "lone-wolf-v1", "--search", "simulations=1", "--search", "turns=1",
                               "--search", "max_candidates=2", "--out", str(out)])
    assert result["rollout"] == ["heuristic-v1", "lone-wolf-v1"] and result["moves_with_choice"] > 0
    plain = search_eval.main(["wizard_arena_v0/lone-wolf-v1", "--games", "2", "--out", str(tmp_path / "h.jsonl")])
    rows = [json.loads(line) for line in (tmp_path / "h.jsonl").read_text().splitlines()]
    assert [r["seat"] for r in rows] == [0, 1] and all(r["move_times"] == [] for r in rows)
    assert plain["games"] == 2 and plain["moves_with_choice"] == 0
    with pytest.raises(SystemExit):
        search_eval.main(["wizard_arena_v0/heuristic-v1", "--base", "random-v0", "--out", str(tmp_path / "x.jsonl")])
    assert "apply to search agents only" in capsys.readouterr().err


@pytest.mark.parametrize("argv,needle", [(["--part", "2/2"], "--part must be K/M"), (["--games", "0"], "at least 1")])
def test_bad_arguments_are_refused(tmp_path, argv, needle, capsys):
    with pytest.raises(SystemExit):
        search_eval.main(["pans_trial_v0/search-v1", "--out", str(tmp_path / "x.jsonl"), *argv])
    assert needle in capsys.readouterr().err


def test_published_search_results_match_their_summaries():
    """The guide's table of the shipped search agents says what the committed summaries hold."""
    import pathlib

    from agents.stats import wilson_interval

    docs = pathlib.Path(__file__).resolve().parents[1] / "docs" / "guide"
    page = (docs / "search.md").read_text()
    files = sorted((docs / "search_results").glob("*.json"))
    assert {f.stem for f in files} >= {"pans_trial_v0-search-v1", "dojo_v0-search-v1", "wizard_arena_v0-search-v1"}
    for path in files:
        name = path.stem
        summary = json.loads(path.read_text())
        assert summary["agent"] == name.replace("-search", "/search", 1) and summary["provenance"]["package"] == "tabletop-rl"
        games, wins = summary["games"], summary["wins"]
        assert sum(w for w, _ in summary["by_seat"].values()) == wins
        assert sum(n for _, n in summary["by_seat"].values()) == games
        low, high = wilson_interval(wins, games)
        assert summary["wilson95"] == [round(low, 4), round(high, 4)]
        assert f"| {games} | {wins} | {100 * wins / games:.1f}% [{100 * low:.1f}, {100 * high:.1f}] |" in page, name

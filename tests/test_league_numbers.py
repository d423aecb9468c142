"""League numbers that say how much they hold: the fair share, Elo with a bootstrap interval, open
ends for unbeaten records, full agent names, the count behind every heat-map cell, notes for
shared first places and for few games, and a time budget that says when it was overrun."""

from __future__ import annotations

import io
import json

import pytest
from rich.console import Console

from agents.stats import bootstrap_elo_interval, bradley_terry, pairwise_counts
from training.league import __main__ as ev
from training.league import matches as m
from training.league import output

RANDOM = "sequence_v0/random-v0"
HEURISTIC = "sequence_v0/heuristic-v1"


def _game(lineup, teams, returns, length=10, truncated=False, index=0):
    return {"lineup": lineup, "index": index, "seed": index, "teams": list(teams), "team_returns": list(returns),
            "length": length, "truncated": truncated, "end_reason": "truncated" if truncated else "rules"}


def _report(results, lineups, num_teams, game="sequence_v0"):
    """A report as :func:`training.league.matches.evaluate` builds it, from made-up results."""
    counts = [sum(1 for r in results if r["lineup"] == li) for li in range(len(lineups))]
    return {"game": game, "config": {}, "num_players": num_teams, "num_teams": num_teams, "games_per_lineup": counts,
            "games_scheduled_per_lineup": counts, "stop_reason": "every scheduled game was played",
            "end_reasons": {"rules": len(results)}, "seconds": 1.0, "workers": 1,
            **m.league_statistics(results, lineups, num_teams)}


def _printed(report, width=100):
    out = io.StringIO()
    output.print_report(report, Console(file=out, width=width, color_system=None))
    return out.getvalue()


# ----------------------------------------------------------------------------------------------
# Fair share


def test_fair_share_is_a_half_in_two_team_games_everywhere_it_is_written(tmp_path, monkeypatch):
    monkeypatch.setattr(ev, "league_tables", lambda name, quick, summary, console: [
        ("sequence_v0", {}, [RANDOM, HEURISTIC])])
    monkeypatch.setattr(ev.envs, "NAMES", ("sequence_v0",))
    assert ev.main(["--all", "--games", "2", "--workers", "1", "--no-progress", "--out", str(tmp_path)]) == 0
    summary = json.loads((tmp_path / "summary.json").read_text())
    results = json.loads((tmp_path / "sequence_v0" / "results.json").read_text())
    for line in [*summary["games"]["sequence_v0"]["agents"].values(), *results["agents"].values(),
                 *(a for lineup in results["lineups"] for a in lineup["agents"])]:
        assert line["games"] == 2 and line["fair_share"] == 0.5, line


def test_fair_share_over_lineups_is_the_mean_share_of_the_tables_an_agent_sat_at():
    """``a b b`` gives a a third and b two thirds; over both lineups each agent averages a half."""
    results = [_game(0, "abb", [1, -1, -1], index=0), _game(1, "baa", [-1, 1, -1], index=1)]
    report = m.league_statistics(results, [("a", "b", "b"), ("b", "a", "a")], 3)
    first = report["lineups"][0]["agents"]
    assert [line["agent"] for line in first] == ["a", "b"]
    assert [line["fair_share"] for line in first] == pytest.approx([1 / 3, 2 / 3])
    assert report["agents"]["a"]["fair_share"] == pytest.approx(0.5)
    assert report["agents"]["b"]["fair_share"] == pytest.approx(0.5)


# ----------------------------------------------------------------------------------------------
# Elo intervals


def _games(a, b, wins, n):
    return [[(a, b, 1.0 if k < wins else 0.0)] for k in range(n)]


def test_the_bootstrap_interval_is_seeded_covers_the_rating_and_narrows_with_games():
    few = _games("x", "y", 6, 10)
    many = _games("x", "y", 60, 100)
    assert bootstrap_elo_interval(["x", "y"], few) == bootstrap_elo_interval(["x", "y"], few)
    assert bootstrap_elo_interval(["x", "y"], few, seed=1) != bootstrap_elo_interval(["x", "y"], few)
    for games in (few, many):
        elo = bradley_terry(["x", "y"], [o for g in games for o in g])
        interval = bootstrap_elo_interval(["x", "y"], games)
        for name in ("x", "y"):
            lo, hi = interval[name]
            assert lo < elo[name] < hi
    width = {len(g): bootstrap_elo_interval(["x", "y"], g)["x"] for g in (few, many)}
    assert width[100][1] - width[100][0] < (width[10][1] - width[10][0]) / 2


def test_an_unbeaten_record_has_an_open_ended_interval_and_says_so():
    """20-0 gives a finite rating (the prior), but no finite upper bound, and the loser no lower bound."""
    results = [_game(0, ("w", "l"), [1, -1], index=k) for k in range(20)]
    report = _report(results, [("w", "l")], 2)
    league = report["league"]
    assert league["elo"]["w"] > league["elo"]["l"]
    assert league["elo_ci95"]["w"][1] is None and league["elo_ci95"]["l"][0] is None
    assert league["elo_ci95"]["w"][0] is not None and league["elo_ci95"]["l"][1] is not None
    json.dumps(league, allow_nan=False)  # open ends are null, not Infinity
    text = _printed(report)
    assert f"{league['elo_ci95']['w'][0]:.0f}–∞" in text and "20-0-0" in text


def test_the_league_json_and_summary_carry_the_interval(tmp_path, monkeypatch):
    out = tmp_path / "league"
    assert ev.main(["--agents", "random-v0", "heuristic-v1", "heuristic-noisy-v1", "--games", "2",
                    "--workers", "1", "--out", str(out), "--no-progress"]) == 0
    league = json.loads((out / "results.json").read_text())["league"]
    assert set(league["elo_ci95"]) == set(league["elo"])
    assert "bootstrap" in league["elo_interval"]
    assert league["pairwise_games"] == pairwise_counts(list(league["elo"]), [
        o for g in json.loads((out / "results.json").read_text())["games"] for o in m.pairwise_outcomes(g)])


# ----------------------------------------------------------------------------------------------
# What the printed tables and the heat map say


def test_agent_names_are_printed_whole_in_a_narrow_terminal():
    """Wizard Arena's heuristic-noisy-v1 and heuristic-v1 were cut to 'heuristic-n…' / 'heuristic…'."""
    names = ("wizard_arena_v0/heuristic-noisy-v1", "wizard_arena_v0/heuristic-v1")
    lineups = [(names[0],) + (names[1],) * 5, (names[1],) + (names[0],) * 5]
    results = [_game(li, lineup, [1, -1, -1, -1, -1, -1], index=li) for li, lineup in enumerate(lineups)]
    for width in (100, 120):  # 120: the width of a report written to a file or a pipe
        text = _printed(_report(results, lineups, 6, "wizard_arena_v0"), width=width)
        rows = [line.split("│")[1].strip() for line in text.splitlines() if line.startswith("│   ")]
        assert sorted(set(rows)) == ["heuristic-noisy-v1", "heuristic-v1"], text


def test_shared_first_places_are_explained_when_wins_exceed_games():
    results = [_game(0, "abb", [1, 1, -1], index=k) for k in range(3)]  # a and one b share first place
    text = _printed(_report(results, [("a", "b", "b")], 3))
    assert "6 wins in 3 games" in text and "shared" in text
    assert "wins in" not in _printed(_report([_game(0, "ab", [1, -1])], [("a", "b")], 2))


def test_few_games_get_a_warning_and_enough_games_none():
    assert output.few_games_note([2, 40]) and "played 2" in output.few_games_note([2, 40])
    assert output.few_games_note([output.FEW_GAMES] * 3) is None


def test_every_heat_map_cell_shows_how_many_comparisons_it_holds(tmp_path, monkeypatch):
    import matplotlib.axes

    results = [_game(li, pair, [1, -1], index=k) for li, pair in enumerate(["ab", "ac", "bc"]) for k in range(li + 1)]
    report = _report(results, [("a", "b"), ("a", "c"), ("b", "c")], 2)
    texts = []
    real = matplotlib.axes.Axes.text
    monkeypatch.setattr(matplotlib.axes.Axes, "text", lambda ax, x, y, s, *a, **k: texts.append(s) or real(ax, x, y, s, *a, **k))
    output.plot_league(report, tmp_path / "league.png")
    assert sorted(t.split("n=")[1] for t in texts) == ["1", "1", "2", "2", "3", "3"]


# ----------------------------------------------------------------------------------------------
# Time budgets


def test_the_quick_budget_is_per_game_and_an_explicit_budget_wins():
    assert ev.budget_for("pans_trial_v0", None, quick=True) == ev.QUICK_BUDGET_BY_GAME["pans_trial_v0"]
    assert ev.budget_for("sequence_v0", None, quick=True) == ev.QUICK_BUDGET_S
    assert ev.budget_for("pans_trial_v0", 5.0, quick=True) == 5.0
    assert ev.budget_for("pans_trial_v0", None, quick=False) is None


def test_a_budget_overrun_by_the_guaranteed_rotations_is_reported(monkeypatch):
    monkeypatch.setattr(m, "OVERRUN_S", 0.0)
    report = m.evaluate("sequence_v0", [(HEURISTIC, RANDOM)], games=20, progress=False, budget_s=0.0, min_cycles=1)
    assert report["games_per_lineup"] == [2]
    assert "past the budget" in report["stop_reason"] and "first 1 whole seat rotation" in report["stop_reason"]
    assert "past the budget" not in m.evaluate("sequence_v0", [(HEURISTIC, RANDOM)], games=2, progress=False,
                                               budget_s=None)["stop_reason"]

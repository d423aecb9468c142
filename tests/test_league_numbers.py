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


def _printed(report, width=100, terminal=False):
    out = io.StringIO()
    output.print_report(report, Console(file=out, width=width, color_system=None, force_terminal=terminal))
    return out.getvalue()


# ----------------------------------------------------------------------------------------------
# Fair share


def test_fair_share_is_a_half_in_two_team_games_everywhere_it_is_written(tmp_path, monkeypatch):
    monkeypatch.setattr(ev, "league_tables", lambda name, quick, summary, console, config=None: [
        ("sequence_v0", {}, [RANDOM, HEURISTIC], None)])
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
    lower, upper = league["elo_ci95"]["w"][0], league["elo_ci95"]["l"][1]
    assert f"≥ {lower:.0f}" in text and f"≤ {upper:.0f}" in text and "20-0-0" in text
    # the footnote describes the open ends the way the table prints them
    footnote = " ".join(text[text.index("Elo 95% CI:"):].split())
    assert "≥ x: no finite upper bound" in footnote and "≤ x: no finite lower bound" in footnote
    assert "∞" not in text and "null: open-ended" not in text


def test_the_elo_footnote_mentions_open_ends_only_when_the_table_shows_one():
    closed = _printed(_report([_game(0, "ab", [1, -1], index=0), _game(0, "ab", [-1, 1], index=1)], [("a", "b")], 2))
    assert "Elo 95% CI: 95% percentile bootstrap" in closed and "no finite" not in closed
    assert output.elo_interval_text([1380.2, 1420.3]) == "1380–1420"
    assert output.elo_interval_text([None, None]) == "open"


def test_the_league_json_and_summary_carry_the_interval(tmp_path, monkeypatch):
    out = tmp_path / "league"
    assert ev.main(["--agents", "random-v0", "heuristic-v1", "heuristic-noisy-v1", "--games", "2",
                    "--workers", "1", "--out", str(out), "--no-progress"]) == 0
    league = json.loads((out / "results.json").read_text())["league"]
    assert set(league["elo_ci95"]) == set(league["elo"])
    assert "bootstrap" in league["elo_interval"]
    assert league["pairwise_comparisons"] == pairwise_counts(list(league["elo"]), [
        o for g in json.loads((out / "results.json").read_text())["games"] for o in m.pairwise_outcomes(g)])


# ----------------------------------------------------------------------------------------------
# What the printed tables and the heat map say


def test_agent_names_are_printed_whole_in_a_narrow_terminal():
    """Wizard Arena's heuristic-noisy-v1 and heuristic-v1 were cut to 'heuristic-n…' / 'heuristic…'."""
    names = ("wizard_arena_v0/heuristic-noisy-v1", "wizard_arena_v0/heuristic-v1")
    lineups = [(names[0],) + (names[1],) * 5, (names[1],) + (names[0],) * 5]
    results = [_game(li, lineup, [1, -1, -1, -1, -1, -1], index=li) for li, lineup in enumerate(lineups)]
    for width, terminal in ((100, True), (120, False)):  # 120: the width of a report written to a file or a pipe
        text = _printed(_report(results, lineups, 6, "wizard_arena_v0"), width=width, terminal=terminal)
        rows = [line.split("│")[1].strip() for line in text.splitlines() if line.startswith("│   ")]
        assert sorted(set(rows)) == ["5× heuristic-noisy-v1", "5× heuristic-v1", "heuristic-noisy-v1",
                                     "heuristic-v1"], text


def test_a_table_too_wide_for_120_columns_is_printed_whole_when_redirected():
    """Wizard Arena's six sides make its table wider than the 120 columns of redirected output: every
    row still ends with the table's right border (nothing cut at the edge)."""
    names = ("wizard_arena_v0/heuristic-noisy-v1", "wizard_arena_v0/random-v0")
    lineups = [(names[0],) + (names[1],) * 5]
    results = [_game(0, lineup[k:] + lineup[:k], [-1] * k + [1] + [-1] * (5 - k), index=k, length=1234)
               for k, lineup in enumerate(lineups * 6)]
    report = _report(results, lineups, 6, "wizard_arena_v0")
    for line in report["lineups"][0]["agents"]:
        line["win_rate_by_side"] = [1.0] * 6  # the widest the by-side column gets: "100 100 100 100 100 100"
    text = _printed(report, width=120)
    rows = [line for line in text.splitlines() if line.startswith(("│", "┃"))]
    assert rows and all(line.rstrip().endswith(("│", "┃")) for line in rows), text
    assert max(len(line) for line in rows) > 120  # it did need more than the console's width
    assert "100 100 100 100 100 100" in text


def test_an_agent_holding_several_teams_is_marked_and_its_row_explained():
    """``a vs 3× b``: b wins every game (100%) while each of its sides wins only when it is that
    side's team that comes first; the row says 3× and a note says why both are right."""
    lineup = ("a", "b", "b", "b")
    results = []
    for k in range(4):  # a rotates over the four sides; the b team after a's side always wins
        teams = lineup[-k:] + lineup[:-k] if k else lineup
        returns = [-1.0] * 4
        returns[(teams.index("a") + 1) % 4] = 1.0
        results.append(_game(0, teams, returns, index=k))
    text = _printed(_report(results, [lineup], 4), width=160)
    row = next(line for line in text.splitlines() if "3× b" in line and "100.0%" in line)
    assert "75.0%" in row  # its fair share
    words = " ".join(text.split())
    assert "3× agent: one agent holding 3 of the 4 teams" in words and "fair share (3/4 = 75%)" in words
    assert "1/4 = 25% each" in words
    plain = _printed(_report([_game(0, "ab", [1, -1])], [("a", "b")], 2))
    assert "holding" not in plain


def test_every_end_reason_says_what_it_means():
    from training.league.matches import TRUNCATED_TEXT, end_reason_texts, table_game

    texts = end_reason_texts(table_game("pans_trial_v0", {}), ["damage", "truncated", "something-else"])
    assert texts["damage"].startswith("a player's damage reached 25")  # the threshold filled from the config
    assert texts["truncated"] == TRUNCATED_TEXT and texts["something-else"] == "something-else"
    report = m.evaluate("sequence_v0", [(HEURISTIC, RANDOM)], games=2, config={"max_cycles": 2}, progress=False)
    assert report["end_reason_texts"] == {"truncated": TRUNCATED_TEXT}
    assert f"2 truncated ({TRUNCATED_TEXT})" in " ".join(_printed(report).split())


def test_the_games_line_is_short_when_every_lineup_played_alike():
    results = [_game(li, pair, [1, -1], index=k) for li, pair in enumerate(["ab", "ac", "bc"]) for k in range(2)]
    report = _report(results, [("a", "b"), ("a", "c"), ("b", "c")], 2)
    assert "6 games in 1.0 s with 1 worker(s): 2 per lineup in each of 3 lineups;" in output.games_line(report)
    report["games_scheduled_per_lineup"] = [4, 4, 4]
    assert "2 per lineup in each of 3 lineups (of 4 scheduled)" in output.games_line(report)


def test_shared_first_places_are_explained_when_wins_exceed_games():
    results = [_game(0, "abb", [1, 1, -1], index=k) for k in range(3)]  # a and one b share first place
    text = _printed(_report(results, [("a", "b", "b")], 3))
    assert "6 wins in 3 games" in text and "shared" in text
    assert "wins in" not in _printed(_report([_game(0, "ab", [1, -1])], [("a", "b")], 2))


def test_few_games_get_a_warning_and_enough_games_none():
    assert output.few_games_note([2, 40]) and "played 2" in output.few_games_note([2, 40])
    assert output.few_games_note([output.FEW_GAMES] * 3) is None


def test_every_heat_map_cell_shows_how_many_games_it_holds(tmp_path, monkeypatch):
    import matplotlib.axes

    results = [_game(li, pair, [1, -1], index=k) for li, pair in enumerate(["ab", "ac", "bc"]) for k in range(li + 1)]
    report = _report(results, [("a", "b"), ("a", "c"), ("b", "c")], 2)
    texts = []
    real = matplotlib.axes.Axes.text
    monkeypatch.setattr(matplotlib.axes.Axes, "text", lambda ax, x, y, s, *a, **k: texts.append(s) or real(ax, x, y, s, *a, **k))
    output.plot_league(report, tmp_path / "league.png")
    assert sorted(t.split("n=")[1] for t in texts) == ["1", "1", "2", "2", "3", "3"]


def test_a_heat_map_cell_counts_games_not_comparisons_when_one_agent_faces_a_field(tmp_path, monkeypatch):
    """``a b b b``: three comparisons of a with b a game, but the cell says how many games they met in."""
    import matplotlib.axes

    results = [_game(0, "abbb", [1, -1, -1, -1], index=k) for k in range(4)]
    report = _report(results, [("a", "b", "b", "b")], 4)
    assert report["league"]["pairwise_comparisons"]["a"]["b"] == 12
    assert report["league"]["pairwise_games"]["a"]["b"] == report["league"]["pairwise_games"]["b"]["a"] == 4
    texts = []
    real = matplotlib.axes.Axes.text
    monkeypatch.setattr(matplotlib.axes.Axes, "text", lambda ax, x, y, s, *a, **k: texts.append(s) or real(ax, x, y, s, *a, **k))
    output.plot_league(report, tmp_path / "league.png")
    assert sorted(t.split("n=")[1] for t in texts) == ["4", "4"]


# ----------------------------------------------------------------------------------------------
# Time budgets


def test_a_budget_never_cuts_the_floor_of_games_rounded_up_to_whole_rotations():
    pairs = m.evaluate("sequence_v0", [(HEURISTIC, RANDOM), (RANDOM, HEURISTIC)], games=40, progress=False,
                       budget_s=0.0, min_games=5)
    assert pairs["games_per_lineup"] == [6, 6] and pairs["min_games"] == 5  # three cycles of both seat orders
    three = m.evaluate("sequence_v0", [(HEURISTIC, RANDOM, RANDOM)], games=30, config={"num_teams": 3},
                       progress=False, budget_s=0.0, min_games=4)
    assert three["games_per_lineup"] == [6]  # two cycles of the three sides


def test_the_quick_league_plays_a_fixed_number_of_games_whatever_the_time(tmp_path):
    out = tmp_path / "quick"
    assert ev.main(["--game", "sequence_v0", "--lineup", "heuristic-v1", "random-v0", "--quick",
                    "--workers", "1", "--no-progress", "--out", str(out)]) == 0
    report = json.loads((out / "results.json").read_text())
    assert report["games_per_lineup"] == [ev.QUICK_GAMES] == [output.FEW_GAMES]
    assert report["budget_s"] is None and report["stop_reason"] == "every scheduled game was played"
    assert output.few_games_note(report["games_per_lineup"]) is None
    with pytest.raises(SystemExit, match="min-games"):
        ev.main(["--game", "sequence_v0", "--lineup", "heuristic-v1", "random-v0", "--min-games", "-1"])


def test_a_budget_overrun_by_the_guaranteed_rotations_is_reported(monkeypatch):
    monkeypatch.setattr(m, "OVERRUN_S", 0.0)
    report = m.evaluate("sequence_v0", [(HEURISTIC, RANDOM)], games=20, progress=False, budget_s=0.0, min_cycles=1)
    assert report["games_per_lineup"] == [2]
    assert "past the budget" in report["stop_reason"] and "its first 2 games (whole seat" in report["stop_reason"]
    assert "past the budget" not in m.evaluate("sequence_v0", [(HEURISTIC, RANDOM)], games=2, progress=False,
                                               budget_s=None)["stop_reason"]
    floor = m.evaluate("sequence_v0", [(HEURISTIC, RANDOM)], games=20, progress=False, budget_s=0.0, min_games=4)
    assert floor["games_per_lineup"] == [4] and "its first 4 games" in floor["stop_reason"]

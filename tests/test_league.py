"""The league: statistics, seat rotation, scoring and the command line (sequence_v0 only)."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from collections import Counter

import pytest

import agents
import envs
from agents.scoring import score_teams
from training.league import __main__ as ev
from training.league import matches as m
from training.league.output import side_rates
from agents.stats import bradley_terry, expected_score, pairwise_table, wilson_interval

RANDOM = "sequence_v0/random-v0"
HEURISTIC = "sequence_v0/heuristic-v1"
NOISY = "sequence_v0/heuristic-noisy-v1"


# ----------------------------------------------------------------------------------------------
# Statistics


@pytest.mark.parametrize(
    "wins,n,lo,hi",
    [
        (5, 10, 0.2366, 0.7634),
        (8, 10, 0.4902, 0.9433),
        (0, 10, 0.0, 0.2775),
        (10, 10, 0.7225, 1.0),
        (50, 100, 0.4038, 0.5962),
        (90, 100, 0.8256, 0.9448),
    ],
)
def test_wilson_interval_matches_published_values(wins, n, lo, hi):
    got = wilson_interval(wins, n)
    assert got[0] == pytest.approx(lo, abs=1e-4)
    assert got[1] == pytest.approx(hi, abs=1e-4)


def test_wilson_interval_edge_cases():
    assert wilson_interval(0, 0) == (0.0, 1.0)
    with pytest.raises(ValueError):
        wilson_interval(3, 2)
    narrow = wilson_interval(360, 400)
    assert narrow[1] - narrow[0] < 0.10  # 400 games: under +-5 points around 90%


def _games(a, b, wins_a, total):
    return [(a, b, 1.0)] * wins_a + [(a, b, 0.0)] * (total - wins_a)


def test_bradley_terry_orders_a_synthetic_league():
    outcomes = _games("A", "B", 70, 100) + _games("B", "C", 70, 100) + _games("A", "C", 85, 100)
    outcomes += [("C", "A", 0.5)] * 10  # draws count half each way
    ratings = bradley_terry(["A", "B", "C"], outcomes)
    assert ratings["A"] > ratings["B"] > ratings["C"]
    assert sum(ratings.values()) / 3 == pytest.approx(1500.0)
    assert expected_score(ratings["A"], ratings["C"]) > 0.75


def test_bradley_terry_recovers_the_elo_gap_of_a_known_win_rate():
    # 75% against one opponent is a strength ratio of 3: 400 * log10(3) = 190.8 points.
    ratings = bradley_terry(["x", "y"], _games("x", "y", 750, 1000), prior_games=0)
    assert ratings["x"] - ratings["y"] == pytest.approx(400 * math.log10(3), abs=0.5)
    even = bradley_terry(["x", "y"], _games("x", "y", 50, 100))
    assert even["x"] == pytest.approx(even["y"], abs=1e-6)


def test_bradley_terry_keeps_an_unbeaten_agent_finite():
    ratings = bradley_terry(["strong", "weak"], _games("strong", "weak", 40, 40))
    assert math.isfinite(ratings["strong"]) and ratings["strong"] > ratings["weak"] + 300


def test_pairwise_table_is_antisymmetric():
    table = pairwise_table(["a", "b"], _games("a", "b", 3, 4) + [("b", "a", 0.5)])
    assert table["a"]["b"] == pytest.approx(3.5 / 5)
    assert table["a"]["b"] + table["b"]["a"] == pytest.approx(1.0)


# ----------------------------------------------------------------------------------------------
# Scheduling and seat rotation


def test_two_teams_of_two_share_one_agent_per_team_and_alternate_sides():
    config = {"players_per_team": 2}
    players, teams = m.table_facts("sequence_v0", config)
    assert (players, teams) == (4, 2)
    tasks, counts = m.schedule("sequence_v0", config, [(HEURISTIC, RANDOM)], games=8, seed=5)
    assert counts == [8]
    sides = Counter()
    deals = Counter()
    for task in tasks:
        seats = m.seat_agents(task.teams, m.table_game("sequence_v0", config))
        assert seats[0] == seats[2] and seats[1] == seats[3] and seats[0] != seats[1]
        sides[(seats[0], "team 0")] += 1
        sides[(seats[1], "team 1")] += 1
        deals[(task.deal_seed, task.teams)] += 1
    assert sides == {(HEURISTIC, "team 0"): 4, (RANDOM, "team 0"): 4, (HEURISTIC, "team 1"): 4, (RANDOM, "team 1"): 4}
    # Duplicate style: every deal seed is played once with each side assignment.
    assert sorted({seed for seed, _ in deals}) == [5, 6, 7, 8]
    assert all(n == 1 for n in deals.values()) and len(deals) == 8


def test_three_teams_rotate_the_lone_agent_over_every_side_and_round_up():
    config = {"num_teams": 3, "players_per_team": 2}
    players, teams = m.table_facts("sequence_v0", config)
    assert (players, teams) == (6, 3)
    tasks, counts = m.schedule("sequence_v0", config, [(HEURISTIC, RANDOM, RANDOM)], games=4)
    assert counts == [6]  # rounded up to two full cycles of the three orderings
    hero_side = Counter()
    for task in tasks:
        seats = m.seat_agents(task.teams, m.table_game("sequence_v0", config))
        for s in range(players):
            assert seats[s] == seats[s % 3]  # seat -> team is seat % num_teams
        hero_side[seats.index(HEURISTIC)] += 1
        assert seats.count(HEURISTIC) == 2
    assert hero_side == {0: 2, 1: 2, 2: 2}


def test_round_robin_lineups():
    assert m.round_robin(["a", "b", "c"], 2) == [("a", "b"), ("a", "c"), ("b", "c")]
    three = m.round_robin(["a", "b"], 3)
    assert three == [("a", "b", "b"), ("b", "a", "a")]
    with pytest.raises(ValueError):
        m.round_robin(["a", "a"], 2)
    assert len(m.orderings(("a", "b", "c"))) == 6


def test_results_do_not_depend_on_the_number_of_workers():
    lineups = [(HEURISTIC, RANDOM)]
    one = m.evaluate("sequence_v0", lineups, games=4, workers=1, progress=False)
    two = m.evaluate("sequence_v0", lineups, games=4, workers=2, progress=False)
    assert one["games"] == two["games"]


def test_spawned_workers_rebuild_agents_from_ids_and_seeds():
    lineups = [(NOISY, RANDOM)]
    inline = m.evaluate("sequence_v0", lineups, games=2, workers=1, progress=False)
    spawned = m.evaluate("sequence_v0", lineups, games=2, workers=2, progress=False, start_method="spawn")
    assert inline["games"] == spawned["games"]


def test_time_budget_keeps_whole_rotation_cycles_only():
    tasks, _ = m.schedule("sequence_v0", {"num_teams": 3}, [(HEURISTIC, RANDOM, RANDOM)], games=30)
    assert m.play_all(tasks, progress=False, budget_s=0.0) == []  # nothing starts after the deadline
    report = m.evaluate("sequence_v0", [(HEURISTIC, RANDOM, RANDOM)], games=3000, config={"num_teams": 3},
                         progress=False, budget_s=1.0)
    played = report["games_per_lineup"][0]
    assert 0 < played < 3000 and played % 3 == 0
    sides = Counter(g["teams"].index(HEURISTIC) for g in report["games"])
    assert sides[0] == sides[1] == sides[2]
    assert report["games_scheduled_per_lineup"] == [3000] and "time budget" in report["stop_reason"]


@pytest.mark.parametrize("workers", [1, 2])
def test_a_budget_never_cuts_the_first_min_cycles_rotations(workers):
    """The quick league's guarantee: even when the budget is spent before the first game ends, every
    lineup plays its first ``min_cycles`` whole rotation cycles (and the pool stops soon after)."""
    lineups = [(HEURISTIC, RANDOM), (NOISY, RANDOM), (HEURISTIC, NOISY)]
    report = m.evaluate("sequence_v0", lineups, games=40, progress=False, budget_s=0.0, min_cycles=2,
                        workers=workers)
    assert report["games_per_lineup"] == [4, 4, 4]  # two cycles of both seat orders each
    assert "time budget" in report["stop_reason"]
    for li in range(3):
        assert sorted(g["index"] for g in report["games"] if g["lineup"] == li) == [0, 1, 2, 3]
    with pytest.raises(SystemExit, match="min-cycles"):
        ev.main(["--game", "sequence_v0", "--lineup", "heuristic-v1", "random-v0", "--min-cycles", "-1"])


def test_time_budget_gives_every_lineup_of_a_game_the_same_count():
    lineups = [(HEURISTIC, RANDOM), (NOISY, RANDOM), (HEURISTIC, NOISY)]
    tasks, counts = m.schedule("sequence_v0", {}, lineups, games=40)
    assert counts == [40, 40, 40]
    # when the deadline struck: lineup 0 had 3 whole cycles, lineup 1 two, lineup 2 one and a half
    whole = {0: 3, 1: 2, 2: 1}
    results = [{"lineup": t.lineup_index, "index": t.game_index} for t in tasks
               if t.cycle < whole[t.lineup_index] or (t.lineup_index == 2 and t.cycle == 1 and t.game_index % 2 == 0)]
    kept = m.equal_cut(tasks, results)
    assert Counter(r["lineup"] for r in kept) == {0: 2, 1: 2, 2: 2}
    for li in range(3):  # each kept lineup is one whole cycle: both seat orders of one deal
        assert sorted(r["index"] for r in kept if r["lineup"] == li) == [0, 1]


def test_the_heuristic_team_is_the_one_that_wins_in_team_games():
    report = m.evaluate("sequence_v0", [(HEURISTIC, RANDOM)], games=6, config={"players_per_team": 2},
                         progress=False)
    line = {a["agent"]: a for a in report["lineups"][0]["agents"]}
    assert line[HEURISTIC]["wins"] >= 5 and line[RANDOM]["losses"] >= 5
    for game in report["games"]:
        assert len(game["team_returns"]) == 2


# ----------------------------------------------------------------------------------------------
# Scoring


def test_scoring_rules():
    assert score_teams([1.0, -1.0], decided=True) == ([0], [1.0, 2.0])
    assert score_teams([0.0, 0.0], decided=True) == ([], [1.5, 1.5])  # a drawn game
    assert score_teams([0.0, 0.0], decided=False)[0] == []
    assert score_teams([-1.0, 1.0, -1.0], decided=True) == ([1], [2.5, 1.0, 2.5])
    assert score_teams([0.0, 0.0, 0.0], decided=True)[0] == []  # all tied: nobody wins
    assert score_teams([5.0, 2.0, 0.0], decided=False) == ([], [2.0, 2.0, 2.0])  # multi: no win


def test_pairwise_comparisons_skip_team_mates_of_one_agent():
    game = {"teams": [HEURISTIC, RANDOM, RANDOM], "team_returns": [-1.0, 1.0, -1.0], "truncated": False}
    assert m.pairwise_outcomes(game) == [(HEURISTIC, RANDOM, 0.0), (HEURISTIC, RANDOM, 0.5)]
    assert m.pairwise_outcomes(dict(game, truncated=True)) == [(HEURISTIC, RANDOM, 0.5)] * 2
    two = {"teams": [RANDOM, HEURISTIC], "team_returns": [-1.0, 1.0], "truncated": False}
    assert m.pairwise_outcomes(two) == [(RANDOM, HEURISTIC, 0.0)]
    assert m.pairwise_outcomes(dict(two, team_returns=[0.0, 0.0])) == [(RANDOM, HEURISTIC, 0.5)]


@pytest.mark.parametrize("config", [{}, {"num_teams": 3}], ids=["2p", "3teams"])
def test_truncated_games_are_draws_not_wins(config):
    players, teams = m.table_facts("sequence_v0", config)
    lineup = (HEURISTIC,) + (RANDOM,) * (teams - 1)
    report = m.evaluate("sequence_v0", [lineup], games=teams * 2, config=dict(config, max_cycles=1),
                         progress=False)
    assert all(g["truncated"] for g in report["games"])
    for line in report["lineups"][0]["agents"]:
        assert line["wins"] == 0 and line["losses"] == 0 and line["draws"] == line["games"]
    assert report["league"]["pairwise_score"][HEURISTIC][RANDOM] == pytest.approx(0.5)
    ratings = report["league"]["elo"]
    assert ratings[HEURISTIC] == pytest.approx(ratings[RANDOM])


# ----------------------------------------------------------------------------------------------
# Command line


def test_parse_config_reads_json_values():
    got = ev.parse_config(["num_teams=3", "layout=generated", "sequences_to_win=null", "dead_cards=false"])
    assert got == {"num_teams": 3, "layout": "generated", "sequences_to_win": None, "dead_cards": False}
    with pytest.raises(SystemExit):
        ev.parse_config(["oops"])


def test_command_line_end_to_end(tmp_path):
    out = tmp_path / "random"
    done = subprocess.run(
        [sys.executable, "-m", "training.league", "--game", "sequence_v0", "--lineup", "random-v0", "random-v0",
         "--games", "4", "--workers", "1", "--out", str(out), "--no-progress"],
        capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "random-v0" in done.stdout
    report = json.loads((out / "results.json").read_text())
    assert report["game"] == "sequence_v0" and report["games_per_lineup"] == [4]
    assert len(report["games"]) == 4
    assert (out / "winrates.png").read_bytes()[:4] == b"\x89PNG"


def test_command_line_league_writes_heat_map(tmp_path, capsys):
    out = tmp_path / "league"
    code = ev.main(["--agents", "random-v0", "heuristic-v1", "heuristic-noisy-v1", "--games", "4",
                    "--workers", "1", "--out", str(out), "--no-progress", "--config", "players_per_team=2"])
    assert code == 0
    report = json.loads((out / "results.json").read_text())
    assert report["config"] == {"players_per_team": 2}
    assert len(report["lineups"]) == 3
    elo = report["league"]["elo"]
    assert elo[HEURISTIC] > elo[RANDOM] and elo[NOISY] > elo[RANDOM]
    assert (out / "league.png").exists() and (out / "winrates.png").exists()
    assert "league" in capsys.readouterr().out


def test_charts_cut_a_long_policy_path_and_keep_their_axes(tmp_path):
    """An agent named by a long policy folder (a run under a deep folder) gets its path cut from the left in
    the charts, so the layout fits without a warning; the tables keep the whole path."""
    import warnings

    from training.league.output import _chart_name, write_outputs

    long_path = "/home/someone/experiments/2026/december/pans_trial/runs/ppo/pans_trial_v0-exit-conf/policy"
    assert _chart_name("pans_trial_v0/ppo-v4") == "ppo-v4"
    cut = _chart_name(long_path)
    assert len(cut) == 40 and cut.startswith("…") and cut.endswith("pans_trial_v0-exit-conf/policy")
    out = tmp_path / "league"
    assert ev.main(["--agents", "random-v0", "heuristic-v1", "heuristic-noisy-v1", "--games", "4", "--workers", "1",
                    "--out", str(out), "--no-progress"]) == 0
    text = (out / "results.json").read_text().replace(f'"{HEURISTIC}"', json.dumps(long_path))
    report = json.loads(text)
    assert long_path in report["league"]["elo"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # matplotlib warns when tight_layout cannot fit the labels
        paths = write_outputs(report, tmp_path / "charts")
    assert [p.name for p in paths] == ["results.json", "winrates.png", "league.png"]


def test_all_mode_covers_every_listed_game(tmp_path, monkeypatch):
    monkeypatch.setattr(envs, "NAMES", ("sequence_v0",))  # other games may be unfinished
    code = ev.main(["--all", "--games", "2", "--workers", "1", "--out", str(tmp_path), "--no-progress"])
    assert code == 0
    summary = json.loads((tmp_path / "summary.json").read_text())
    # the default table, and one for the config the shipped team checkpoints were trained for
    teams = "sequence_v0-players_per_team=2"
    assert set(summary["games"]) == {"sequence_v0", teams}
    assert (tmp_path / "sequence_v0" / "results.json").exists() and (tmp_path / teams / "results.json").exists()
    assert RANDOM in summary["games"]["sequence_v0"]["elo"]
    assert summary["games"][teams]["config"] == {"players_per_team": 2}
    team_players = set(summary["games"][teams]["elo"])
    assert {RANDOM, HEURISTIC, "sequence_v0/ppo-teams-v1", "sequence_v0/ppo-teams-search-v1"} <= team_players
    assert "sequence_v0/ppo-v4" not in team_players and "sequence_v0/ppo-teams-v1" not in summary["games"]["sequence_v0"]["elo"]
    assert "plays at its own table, " + teams in summary["left_out"]["sequence_v0/ppo-teams-v1"]


@pytest.mark.parametrize(
    "argv,message",
    [
        (["--agents", "nosuch-v1", "random-v0"], "give an agent id \\(heuristic-noisy-v1, heuristic-v1"),
        (["--agents", "random-v0"], "two different agents"),
        (["--lineup", "random-v0", "random-v0", "--config", "num_teams=3"], "3 teams"),
        (["--agents", "random-v0", "heuristic-v1", "--config", "num_teams=7"], "num_teams"),
        (["--game", "nosuch_v0", "--agents", "random-v0", "heuristic-v1"], "unknown game"),
        (["--all", "--config", "num_teams=3"], "default config"),
    ],
)
def test_command_line_errors_say_what_is_wrong(argv, message):
    with pytest.raises(SystemExit, match=message):
        ev.main(argv + ["--games", "2", "--workers", "1", "--no-progress"])


def test_superseded_versions_are_declared_in_the_registry_and_still_load():
    from agents.registry import current, superseded_by

    assert superseded_by("pans_trial_v0/ppo-search-v1") == "pans_trial_v0/ppo-search-v6"
    assert superseded_by("dojo_v0/search-v1") == "dojo_v0/search-v3"  # v1 -> v3 directly, v2 -> v3
    assert superseded_by("pans_trial_v0/heuristic-v1") is None and superseded_by("pans_trial_v0/search-v1") is None
    assert "pans_trial_v0/ppo-v3" not in current(agents.available("pans_trial_v0"))
    assert agents.make("pans_trial_v0/ppo-v1", seed=0) is not None  # an id keeps loading forever
    with pytest.raises(ValueError, match="another id of its game"):
        agents.register("sequence_v0/x-v1", agents.RandomAgent, superseded_by="dojo_v0/heuristic-v1")


def test_quick_league_plays_current_agents_and_the_ladder_top_and_says_what_it_left_out(tmp_path, monkeypatch,
                                                                                        capsys):
    from agents.ladder import ladder
    from agents.registry import superseded_by

    monkeypatch.setattr(envs, "NAMES", ("pans_trial_v0",))
    monkeypatch.setattr(ev, "QUICK_GAMES", 2)
    monkeypatch.setattr(ev, "QUICK_TOP_GAMES", 2)
    code = ev.main(["--all", "--quick", "--workers", "1", "--out", str(tmp_path), "--no-progress"])
    assert code == 0
    summary = json.loads((tmp_path / "summary.json").read_text())
    report = json.loads((tmp_path / "pans_trial_v0" / "results.json").read_text())
    played = {agent for line in report["lineups"] for agent in line["teams"]}
    top = ladder("pans_trial_v0")[0]["id"]
    searching = ev.searches_at_play_time(agents.available("pans_trial_v0"))
    assert "pans_trial_v0/ppo-search-v6" in searching and "pans_trial_v0/ppo-v3" not in searching
    for agent_id in agents.available("pans_trial_v0"):
        newer = superseded_by(agent_id)
        if newer:
            assert agent_id not in played and "superseded by " + newer in summary["left_out"][agent_id]
        elif agent_id in searching and agent_id != top:
            assert agent_id not in played and "searches at play time" in summary["left_out"][agent_id]
        else:
            assert agent_id in played, agent_id
    if top in searching:  # the ladder's top plays heuristic-v1 alone, in its own fewer games
        lineups = [line["teams"] for line in report["lineups"] if top in line["teams"]]
        assert lineups == [[top, "pans_trial_v0/heuristic-v1"]]
    out = " ".join(capsys.readouterr().out.split())
    assert "plays current agents" in out and "leaves out the agents that search at play time" in out


def test_all_mode_leaves_out_agents_that_cannot_sit_at_the_table():
    assert ev.cannot_play(HEURISTIC, "sequence_v0", {}) is None
    assert "no agent registered" in ev.cannot_play("sequence_v0/nosuch-v1", "sequence_v0", {})


def test_a_budget_that_allows_no_game_still_reports_and_says_why(tmp_path):
    from training.league import output

    report = m.evaluate("sequence_v0", [(HEURISTIC, RANDOM)], games=4, progress=False, budget_s=0.0)
    assert report["games_per_lineup"] == [0] and report["games_scheduled_per_lineup"] == [4]
    assert "time budget" in report["stop_reason"] and "before any lineup finished" in report["stop_reason"]
    paths = output.write_outputs(report, tmp_path)
    assert all(p.exists() for p in paths)


def test_wins_by_side_add_up_and_match_the_self_play_side_rates():
    """Each agent's games and wins by team side add up to its totals when it holds one side per
    game, and an agent playing itself wins from each side exactly as often as that side wins."""
    report = m.evaluate("sequence_v0", [(HEURISTIC, RANDOM, RANDOM), (RANDOM, RANDOM, RANDOM)], games=6,
                        config={"num_teams": 3}, progress=False)
    mixed, self_play = report["lineups"]
    lone = next(a for a in mixed["agents"] if a["agent"] == HEURISTIC)
    assert lone["games_by_side"] == [2, 2, 2]  # rotated over all three sides
    assert sum(lone["wins_by_side"]) == lone["wins"] >= 1
    pair = next(a for a in mixed["agents"] if a["agent"] == RANDOM)
    assert pair["games_by_side"] == [4, 4, 4]  # two sides a game, six games
    assert all(w == wins / n for w, wins, n in zip(pair["win_rate_by_side"], pair["wins_by_side"], pair["games_by_side"]))
    only = self_play["agents"][0]
    assert only["games_by_side"] == [6, 6, 6]
    assert [w / 6 for w in only["wins_by_side"]] == pytest.approx(self_play["side_win_rates"])
    total = report["agents"][RANDOM]
    assert total["games_by_side"] == [10, 10, 10]
    assert total["wins_by_side"] == [a + b for a, b in zip(pair["wins_by_side"], only["wins_by_side"])]
    assert side_rates(lone) == " ".join(f"{100 * w / 2:.0f}" for w in lone["wins_by_side"])
    assert side_rates({"win_rate_by_side": [0.5, None]}) == "50 -"

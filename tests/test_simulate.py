"""The designer simulator (tools.simulate) for any game: variants, turn-order positions, bad input."""

from __future__ import annotations

import json

import pytest

from tools import simulate


def test_positions_count_from_the_seat_that_acted_first():
    games = [
        {"length": 10, "end_reason": "rules", "winning_seats": [2], "first_seat": 2, "stats": {}},
        {"length": 12, "end_reason": "rules", "winning_seats": [0], "first_seat": 2, "stats": {}},
        {"length": 14, "end_reason": "truncated", "winning_seats": [], "first_seat": 1, "stats": {}},
    ]
    report = simulate.summarise("default", {}, 3, games)
    assert [w["wins"] for w in report["win_rate_by_seat"]] == [1, 0, 1]
    assert [w["wins"] for w in report["win_rate_by_position"]] == [1, 1, 0]  # seat 0 after first seat 2: position 1
    assert report["first_player_advantage"] == pytest.approx(1 / 3 - 1 / 3)
    assert report["end_reasons"] == {"rules": 2, "truncated": 1} and report["no_winner"] == 1
    assert report["length"]["mean"] == pytest.approx(12.0)


def test_the_report_says_how_ties_and_games_without_a_winner_count():
    games = [
        {"length": 10, "end_reason": "rules", "winning_seats": [0, 2], "first_seat": 0, "stats": {}},  # shared first
        {"length": 10, "end_reason": "rules", "winning_seats": [1], "first_seat": 0, "stats": {}},
        {"length": 10, "end_reason": "rules", "winning_seats": [], "first_seat": 0, "stats": {}},  # all tied
    ]
    report = simulate.summarise("default", {}, 3, games)
    assert report["shared_first"] == 1 and report["no_winner"] == 1
    text = simulate.how_counted(report)
    assert "(1 such games)" in text and "add up to 3 over 2 games with a winner" in text


def test_help_lists_every_games_variant_labels(capsys):
    import envs

    with pytest.raises(SystemExit):
        simulate.main(["--help"])
    out = capsys.readouterr().out.replace("\n      ", " ")
    for name in envs.NAMES:
        for label in envs.game_class(name).rule_variants:
            assert repr(label) in out, (name, label)


@pytest.mark.parametrize("game", ["sequence_v0", "pans_trial_v0", "wizard_arena_v0"])
def test_every_game_simulates_with_its_declared_variants(game, tmp_path, capsys):
    out = tmp_path / "sim.png"
    config = ["num_bots=3", "map_size=8"] if game == "wizard_arena_v0" else []
    argv = [game, "--games", "2", "--agents", "random", "--variants", "all", "--out", str(out), "--no-progress",
            "--max-cycles", "60", "--json", str(tmp_path / "r.json")]
    for item in config:
        argv += ["--config", item]
    result = simulate.main(argv)
    assert out.exists()
    import envs

    assert [v["label"] for v in result["variants"]] == list(envs.game_class(game).rule_variants)
    assert json.loads((tmp_path / "r.json").read_text())["game"] == game
    assert "first-player advantage" in capsys.readouterr().out


def test_vary_adds_one_variant_per_value(tmp_path):
    result = simulate.main(["pans_trial_v0", "--games", "1", "--agents", "random", "--vary", "damage_threshold=15,25",
                            "--out", str(tmp_path / "p.png"), "--no-progress"])
    assert [v["config"]["damage_threshold"] for v in result["variants"]] == [15, 25]


def test_variants_with_another_number_of_positions_plot_side_by_side(tmp_path):
    """--vary num_teams=2,3 gives rows with 2 and 3 turn-order positions; each is drawn with its own."""
    result = simulate.main(["sequence_v0", "--games", "2", "--agents", "random", "--vary", "num_teams=2,3",
                            "--out", str(tmp_path / "s.png"), "--no-progress"])
    assert [len(v["win_rate_by_position"]) for v in result["variants"]] == [2, 3]
    assert (tmp_path / "s.png").stat().st_size > 0


@pytest.mark.parametrize(
    "argv,message",
    [
        (["chess"], "unknown game"),
        (["dojo", "--variants", "no_such_switch"], "unknown variant"),
        (["dojo", "--config", "num_players=9"], "num_players"),
        (["dojo", "--agents", "telepath"], "no agent"),
        (["dojo", "--games", "0"], "--games must be at least 1"),
    ],
)
def test_bad_input_is_a_one_line_error(argv, message, tmp_path):
    with pytest.raises(SystemExit) as info:
        simulate.main(argv + ["--no-progress", "--out", str(tmp_path / "x.png")])
    assert message in str(info.value.code) and str(info.value.code).startswith("error: ")


def test_the_seat_table_gives_every_configurations_rates_intervals_and_spread():
    games = [{"length": 5, "end_reason": "rules", "winning_seats": [w], "first_seat": 0, "stats": {}}
             for w in (0, 0, 0, 1)]
    base = simulate.summarise("default", {}, 3, games)
    other = simulate.summarise("ties: random", {}, 3, games[1:])
    assert base["seat_spread"] == pytest.approx(0.75) and other["seat_spread"] == pytest.approx(2 / 3)
    lines = simulate.seat_table([base, other])
    assert lines[1].split() == ["configuration", "seat", "0", "seat", "1", "seat", "2", "spread"]
    assert lines[2].split() == ["default", "75.0", "25.0", "0.0", "75.0"]
    assert lines[3].split()[0] == "30-95"  # Wilson 95% for 3 of 4
    assert lines[4].split()[:3] == ["ties:", "random", "66.7"]

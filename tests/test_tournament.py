"""The Wizard Arena tournament command (tools.tournament) runs end to end with a tiny budget."""

from __future__ import annotations

import pytest

from tools import tournament


def test_tournament_plays_games_and_prints_boards(tmp_path, capsys):
    image = tmp_path / "final.png"
    entrants = tournament.main([
        "--bot", "ann=wizard_arena_v0/random-v0", "--bot", "bob", "--bot", "cy=wizard_arena_v0/random-v0",
        "--games", "2", "--boards", "-H", "3", "--map-size", "8", "--max-cycles", "40", "--plain",
        "--no-progress", "--map-image", str(image),
    ])
    out = capsys.readouterr().out
    assert "Game 1" in out and "Game 2" in out and "Summary over 2 games (health 3)" in out
    assert "2 game(s): " in out and "cut at the cycle cap" in out and "no-progress" in out
    assert "🥇" in out
    for name in ("ann", "bob", "cy"):
        assert name in out
    assert [len(e.ranks) for e in entrants] == [2, 2, 2]
    for k in range(2):  # ranks of one game are a permutation's mean ranks: they sum to 1+2+3
        assert sum(e.ranks[k] for e in entrants) == pytest.approx(6.0)
        assert sum(e.rewards[k] for e in entrants) == pytest.approx(0.0)
    assert image.exists() and image.stat().st_size > 100


def test_tournament_rejects_duplicate_names():
    with pytest.raises(SystemExit):
        tournament.main(["--bot", "a", "--bot", "a", "--no-progress"])


def test_winners_share_first_place_and_an_all_tied_game_has_none():
    from tools.tournament import winners

    assert winners([{"who": 0, "rank": 1.0}, {"who": 1, "rank": 2.0}, {"who": 2, "rank": 3.0}]) == {0}
    assert winners([{"who": 0, "rank": 1.5}, {"who": 1, "rank": 1.5}, {"who": 2, "rank": 3.0}]) == {0, 1}
    assert winners([{"who": w, "rank": 2.0} for w in range(3)]) == set()


@pytest.mark.parametrize(
    "argv,message",
    [
        (["--num-bots", "17"], "num_bots=17"),
        (["-H", "-3"], "health=-3"),
        (["--bot", "ann=wizard_arena_v0/nosuch-v1"], "no agent"),
        (["--bot", "ann=sequence_v0/random-v0"], "plays sequence_v0, not wizard_arena_v0"),
        (["--games", "0"], "--games must be at least 1"),
        (["--bot", "a", "--bot", "b", "--bot", "c", "--num-bots", "2"], "fewer than the 3 bots"),
    ],
)
def test_bad_input_is_a_one_line_error(argv, message):
    with pytest.raises(SystemExit) as info:
        tournament.main(argv + ["--no-progress"])
    text = str(info.value.code)
    assert text.startswith("error: ") and message in text and "\n" not in text


def test_long_agent_ids_are_never_cut_at_80_columns(monkeypatch, capsys):
    import agents

    long_id = "wizard_arena_v0/random-with-a-very-long-descriptive-name-for-the-table-v0"
    if long_id not in agents.available("wizard_arena_v0"):
        agents.register(long_id, agents.RandomAgent, "the random agent under a long id")
    monkeypatch.setenv("COLUMNS", "80")
    tournament.main(["--bot", f"a-bot-with-a-long-name={long_id}", "--bot", "b", "--games", "2",
                     "--map-size", "8", "--max-cycles", "5", "--no-progress"])
    out = capsys.readouterr().out
    assert long_id in out and "a-bot-with-a-long-name" in out


def test_tied_places_are_marked_and_named(capsys):
    rows = [
        {"place": 1, "tied": False, "name": "ann", "letter": "A", "alive": True, "score": 3, "strength": 1.0,
         "hp": 5, "max_hp": 10, "party_text": "solo"},
        {"place": 2, "tied": True, "name": "bob", "letter": "B", "alive": True, "score": 1, "strength": 1.0,
         "hp": 5, "max_hp": 10, "party_text": "solo"},
        {"place": 2, "tied": True, "name": "cy", "letter": "c", "alive": True, "score": 1, "strength": 1.0,
         "hp": 5, "max_hp": 10, "party_text": "solo"},
    ]
    tournament.print_scoreboard(rows, "board", plain=True)
    out = capsys.readouterr().out
    assert "🥈 =2" in out and "2 bots tie for place 2" in out and "bob, cy" in out
    assert "🥇 1 " in out


def test_map_image_legend_names_bots_like_the_scoreboard():
    import envs

    game = envs.make_game("wizard_arena_v0", num_bots=3, map_size=8)
    state = game.new_initial_state(0)
    entrants = [tournament.Entrant(n, "wizard_arena_v0/random-v0") for n in ("ann", "bob", "cy")]
    order = [2, 0, 1]
    rows = tournament.scoreboard_rows(game, state, order, entrants)
    assert {row["name"]: row["letter"] for row in rows} == {"cy": "A", "ann": "B", "bob": "C"}
    image = tournament.map_image(game, state, order, entrants)
    assert image.ndim == 3 and image.shape[0] > game.render_rgb(state).shape[0]


def test_rotated_seating_puts_every_bot_in_every_seat_once_a_round():
    from tools.tournament import seating

    n = 5
    for first_seed in (0, 7):
        games = [seating(n, k, first_seed, "rotate") for k in range(3 * n)]
        for r in range(3):
            rnd = games[r * n:(r + 1) * n]
            assert all(sorted(order) == list(range(n)) for order in rnd)
            for seat in range(n):
                assert sorted(order[seat] for order in rnd) == list(range(n))  # each bot once per seat
        assert len({tuple(games[r * n]) for r in range(3)}) > 1  # rounds reshuffle the neighbours
    assert seating(n, 4, 0, "rotate") == seating(n, 4, 0, "rotate")
    assert sorted(seating(n, 2, 0, "shuffle")) == list(range(n))


def test_results_by_seat_and_the_tie_break_option(capsys):
    tournament.main(["--bot", "a", "--bot", "b", "--games", "4", "-H", "3", "--map-size", "8", "--max-cycles", "30",
                     "--plain", "--no-progress", "--tie-break", "higher-seat"])
    out = capsys.readouterr().out
    assert "By seat over 4 games (2 round(s): every bot sat in every seat 2 time(s); tie-break higher-seat)" in out
    rows = [line.split() for line in out.splitlines() if line.startswith("player_")]
    assert [row[0] for row in rows] == ["player_0", "player_1"] and all(row[1] == "4" for row in rows)
    with pytest.raises(SystemExit, match="--tie-break: .*alliance_tie_break='eldest' is not allowed"):
        tournament.main(["--tie-break", "eldest", "--no-progress"])

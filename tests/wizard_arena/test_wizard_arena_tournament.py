"""The tournament command runs end to end with a tiny budget."""

from __future__ import annotations

import pytest

from training import tournament


def test_tournament_plays_games_and_prints_boards(tmp_path, capsys):
    image = tmp_path / "final.png"
    entrants = tournament.main([
        "--bot", "ann=wizard_arena_v0/random-v0", "--bot", "bob", "--bot", "cy=wizard_arena_v0/random-v0",
        "--games", "2", "--boards", "-H", "3", "--map-size", "8", "--max-cycles", "40", "--plain",
        "--no-progress", "--map-image", str(image),
    ])
    out = capsys.readouterr().out
    assert "Game 1" in out and "Game 2" in out and "Summary over 2 games (health 3)" in out
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
    from training.tournament import winners

    assert winners([{"who": 0, "rank": 1.0}, {"who": 1, "rank": 2.0}, {"who": 2, "rank": 3.0}]) == {0}
    assert winners([{"who": 0, "rank": 1.5}, {"who": 1, "rank": 1.5}, {"who": 2, "rank": 3.0}]) == {0, 1}
    assert winners([{"who": w, "rank": 2.0} for w in range(3)]) == set()

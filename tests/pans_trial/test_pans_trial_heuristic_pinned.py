"""heuristic-v1 is Pan's Trial's teacher and the opponent its goal is measured against, so a speed-up
of its search or evaluation must not change a single decision. Three seeded games (heuristic-v1
against itself and against experienced-v1 from either seat), recorded before the board-weapon term
of its evaluation was cached, are replayed move for move."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

import envs
from agents import pans_trial as heuristic
from tests.pinned_games import assert_replays, load_games

GAMES = load_games(Path(__file__).parent / "data" / "heuristic_v1_games.json")


@pytest.mark.parametrize("game", GAMES, ids=lambda g: f"seed{g['seed']}")
def test_heuristic_games_replay_move_for_move(game):
    assert_replays("pans_trial_v0", game)


def test_board_weapon_pull_matches_the_sum_and_survives_a_full_cache(monkeypatch):
    """The cached term equals the plain sum over the board in square order, on 300 shuffled boards
    with holes, random weapon suits and random pairs of squares, whether computed or read back from
    the cache; a full cache is emptied, not grown."""
    rng = random.Random(5)
    state = envs.make_game("pans_trial_v0").new_initial_state(3)
    monkeypatch.setattr(heuristic, "_PULL_CACHE", {})
    monkeypatch.setattr(heuristic, "_PULL_CACHE_MAX", 50)
    for _ in range(300):
        board = state.board[:]
        rng.shuffle(board)
        for sq in rng.sample(range(len(board)), rng.randrange(4)):
            board[sq] = -1
        ws, pm, po = rng.randrange(4), rng.randrange(36), rng.randrange(36)
        expected = 0.0
        for sq, card in enumerate(board):
            if card >= 0 and card // 13 == ws:
                expected += heuristic.R.VALUE[card] * (1 / (1 + heuristic._DIST[pm][sq]) - 1 / (1 + heuristic._DIST[po][sq]))
        assert heuristic._board_weapon_pull(board, ws, pm, po) == expected
        assert heuristic._board_weapon_pull(board, ws, pm, po) == expected  # from the cache
        assert len(heuristic._PULL_CACHE) <= 50

"""The Experienced heuristic: legal, sensible in clear positions, and much stronger than random."""

from __future__ import annotations

from pt_builder import build, card, sq

import agents
import envs.pans_trial_v0 as pt
from agents.runner import play_game
from envs.pans_trial import rules as R

AGENT = "pans_trial_v0/experienced-v1"


def decide(state, seat=0, seed=0):
    assert state.current_player() == seat
    return agents.runner.decide(AGENT, state, seed=seed)


def test_registered():
    assert AGENT in agents.available("pans_trial_v0")


def test_prefers_the_weapon_over_the_trap():
    board = """
    .  X7 .  .  .  .
    T5 .  .  .  .  .
    .  .  .  .  .  .
    .  .  .  .  .  .
    .  .  .  .  .  .
    .  .  .  .  .  .
    """
    s = build(pt.Game(), board, pos=((1, 1), (4, 4)))
    for seed in range(3):
        assert decide(s, seed=seed) == R.A_MOVE + 0  # up onto X7, not left onto T5


def test_attacks_when_the_strike_is_lethal():
    board = """
    .  .  .  .  .  .
    .  .  .  .  .  .
    .  .  .  .  .  .
    .  .  .  .  .  .
    .  .  .  .  .  .
    .  .  .  .  .  .
    """
    s = build(pt.Game(), board, pos=((0, 0), (0, 1)), hands=("X9", ""), damage=("", "T9 T8"))
    assert decide(s) == R.A_MOVE + 1
    s.apply_action(R.A_MOVE + 1)
    assert decide(s) == R.A_STRIKE + card("X9")
    assert s.pos[1] == sq(0, 1)


def test_beats_random_play():
    wins = 0
    for seed in range(20):
        seats = [agents.make(AGENT, seed=seed), agents.make("pans_trial_v0/random-v0", seed=seed)]
        me = seed % 2
        if me:
            seats.reverse()
        record = play_game("pans_trial_v0", seats, seed=seed)
        wins += record.returns[me] > 0
    assert wins >= 16

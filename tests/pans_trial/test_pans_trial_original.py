"""``experienced-v2`` against hand-worked decisions of the original game's Experienced profile.

Each position is small enough to work out the original's choice by hand from its rules (the
numbers are in the comments: the position score of ``agents.pans_trial_original.evaluate`` plus the
immediate bonus); the test checks the agent makes exactly that choice.
"""

from __future__ import annotations

import pytest
from pt_builder import build, card, sq

import agents
import envs.pans_trial_v0 as pt
from agents.pans_trial_original import OriginalExperiencedAgent, evaluate, shift_action
from agents.runner import decide as agent_decides
from envs.pans_trial import rules as R

AGENT = "pans_trial_v0/experienced-v2"
HOLES = "\n".join([" ".join(["."] * 6)] * 6)


def decide(state, seed=0):
    return agent_decides(AGENT, state, seed=seed)


def test_registered_and_takes_the_game():
    assert AGENT in agents.available("pans_trial_v0")
    assert "pans_trial_v0/experienced-v1" in agents.available("pans_trial_v0")
    bot = agents.make(AGENT, seed=0)
    game = pt.Game()
    bot.reset(1, game)
    assert bot.game is game and bot.seat == 1
    with pytest.raises(TypeError, match="takes the configured Game"):  # as every agent: no config dicts
        bot.reset(0, dict(game.config))


def test_draft_scores_kings_queens_tens_and_new_suits():
    game = pt.Game()
    state = game.new_initial_state(3)
    me = state.current_player()
    # nothing drafted: King 120 + 40 (no own King) + 15 (opponent has none) + 10 (new suit) = 185
    assert R.IS_KING[decide(state) - R.A_DRAFT]
    # me: K clubs and Q hearts; opponent: K diamonds. Kings are gone (two drafted). Queens of a new
    # suit score 80 + 10 = 90 (diamonds, spades); the Q of clubs 80; tens at most 55 + 10
    kc, qh, kd = R.KINGS[0], 2 * 13 + 11, R.KINGS[1]
    for c in (kc, qh, kd):
        state.pool.remove(c)
    state.hands[me] += [kc, qh]
    state.hands[1 - me] += [kd]
    state._mask = None
    picks = {decide(state, seed=s) - R.A_DRAFT for s in range(6)}
    assert picks <= {1 * 13 + 11, 3 * 13 + 11} and picks  # Q of diamonds or of spades


def test_traverse_one_step_lookahead_with_the_original_bonuses():
    board = """
    .  X7 .  .  .  .
    T5 .  .  .  .  .
    .  .  .  .  .  .
    .  .  .  .  .  .
    .  .  .  .  .  .
    .  .  .  .  .  .
    """
    s = build(pt.Game(), board, pos=((1, 1), (4, 4)))
    # up onto X7: weapons 7.5 + hand 1.2 + armed (6 - 5) * 2.5 = 11.2, bonus +24 -> 35.2
    # down / right: unarmed, X7 two away: (6 - 2) * 2 = 8;  left onto T5: -22.5 + 8 - 16 = -30.5
    after_up = s.clone()
    after_up.apply_action(R.A_MOVE + 0)
    assert abs(evaluate(after_up, 0) - 11.2) < 1e-9
    assert decide(s) == R.A_MOVE + 0


def test_steps_onto_the_opponent_when_armed_and_strikes_with_the_largest_weapon():
    s = build(pt.Game(), HOLES, pos=((0, 0), (0, 1)), hands=("X3 X9", ""))
    # right onto the opponent: combat waiting for my strike +15, distance 0: +15, +22 bonus;
    # weapons 15 + hand 2.4 -> 69.4; any other move: 17.4 + (6 - 2) * 2.5 = 27.4
    assert decide(s) == R.A_MOVE + 1
    s.apply_action(R.A_MOVE + 1)
    assert decide(s) == R.A_STRIKE + card("X9")


def test_appeasing_ranks_suits_by_todays_trump_order_not_the_originals_old_one():
    # today Walls > Traps > Ballista > Weapons: the Wall 2 wins against anything of another suit.
    # The original (Weapons first) would lead with the King of weapons.
    s = build(pt.Game(), HOLES, pos=((0, 0), (3, 3)), hands=("X12 W2 T9", "B4"), active=0, turns_left=1,
              forced=(1, 0))
    s.apply_action(R.A_PASS)  # the phase ends; player_1 submits first
    s.apply_action(R.A_APPEASE + card("B4"))
    assert s.current_player() == 0
    assert decide(s) == R.A_APPEASE + card("W2")
    # with the trump order reversed (the original's), the same rule picks the King
    game = pt.Game(trump_order=["weapons", "ballista", "traps", "walls"])
    s = build(game, HOLES, pos=((0, 0), (3, 3)), hands=("X12 W2 T9", "B4"), active=0, turns_left=1,
              forced=(1, 0))
    s.apply_action(R.A_PASS)
    s.apply_action(R.A_APPEASE + card("B4"))
    assert decide(s) == R.A_APPEASE + card("X12")


def requests(hands, damage=("", "")):
    """player_0 wins the Appeasing (a Wall against a Weapon) and chooses the first request."""
    s = build(pt.Game(), HOLES, pos=((0, 0), (3, 3)), hands=hands, damage=damage, active=0, turns_left=1,
              forced=(1, 0))
    s.apply_action(R.A_PASS)
    s.apply_action(R.A_APPEASE + card(hands[1].split()[0]))
    s.apply_action(R.A_APPEASE + card(hands[0].split()[0]))
    assert s.phase == "request_first" and s.current_player() == 0
    return s


def test_requests_steal_life_then_plane_shift_then_restructure():
    # own largest damage 9 > their smallest 3: Steal Life; then give the 9, take the 3
    s = requests(("W2 X5", "X3 B3"), damage=("T9 T1", "T3 T8"))
    assert decide(s) == R.A_REQUEST + R.STEAL_LIFE
    s.apply_action(R.A_REQUEST + R.STEAL_LIFE)
    assert decide(s) == R.A_STEAL_MINE + card("T9")
    s.apply_action(R.A_STEAL_MINE + card("T9"))
    assert decide(s) == R.A_STEAL_THEIRS + card("T3")
    # own largest 3 is not more than their smallest 3: Plane Shift (the original's look-ahead
    # before it only picks a direction, so it always passes)
    s = requests(("W2 X5", "X3 B4"), damage=("T3", "B3"))
    assert decide(s) == R.A_REQUEST + R.PLANE_SHIFT
    # second requester (player_1) after a Plane Shift: Steal Life does not qualify either (3 v 3);
    # no more damage and as many moves: no Restructure by the rule, Ignore Us is not open to it here -> the first open request
    # in the original's order: Restructure
    s.apply_action(R.A_REQUEST + R.PLANE_SHIFT)
    s.apply_action(shift_action("up", 1))  # touches nobody
    assert s.phase == "request_second" and s.current_player() == 1
    assert decide(s) == R.A_REQUEST + R.RESTRUCTURE


def test_plane_shift_takes_the_first_best_direction_and_line():
    # player_0, armed with X5 at (0,0), the opponent at (3,3): distance 6. A shift moves one of us
    # one square: at best distance 5 (+2.5). In the original's order (up c0..c5, down c0..c5,
    # left r0..r5, right r0..r5) the first that does it is "up, column 0" (me to (5,0)).
    s = requests(("W2 X5", "X3 B4"), damage=("T3", "B3"))
    s.apply_action(R.A_REQUEST + R.PLANE_SHIFT)
    assert s.stage == R.SHIFT_PICK
    assert decide(s) == shift_action("up", 0) == R.A_SHIFT + 12
    closer, unchanged = s.clone(), s.clone()
    closer.apply_action(shift_action("up", 0))
    unchanged.apply_action(shift_action("up", 1))
    assert abs(evaluate(closer, 0) - evaluate(unchanged, 0) - 2.5) < 1e-9


def test_restructure_always_moves_the_walls_suit_and_picks_the_partner_by_score():
    # I hold high traps (diamonds), the opponent weapons (spades). Swapping clubs (walls) with
    # spades disarms the opponent (+15); clubs with diamonds or hearts leaves them armed.
    # (A free choice would turn my diamonds into weapons; the original cannot: its first suit is
    # always the one holding the Walls.)
    s = requests(("W2 T12 T11", "X3 X10 X9"))
    assert decide(s) == R.A_REQUEST + R.PLANE_SHIFT  # not behind on damage nor on moves
    s.stage = R.RESTRUCTURE_PICK  # the same position, as if Restructure had been asked
    s._mask = None
    assert decide(s) == R.A_RESTRUCTURE + R.SUIT_PAIRS.index((0, 3))


def test_placement_first_submitted_card_first_into_the_best_hole():
    # player_1 submitted first and lost: its own card (pending[0], an X4) is placed first. Unarmed
    # at (3,3), a weapon next to it scores (6 - 1) * 2 = 10: the first such hole in reading order
    # is (2,3).
    s = build(pt.Game(), HOLES, pos=((0, 0), (3, 3)), stage="place", actor=1, active=0,
              pending=("X4", "W2"), appease_winner=0, first_submitter=1, req_stage=1)
    assert s.current_player() == 1
    assert decide(s) == R.A_PLACE + sq(2, 3)
    # had the winner submitted first, its card (pending[1], the W2) would go first
    s = build(pt.Game(), HOLES, pos=((0, 0), (3, 3)), stage="place", actor=1, active=0,
              pending=("X4", "W2"), appease_winner=0, first_submitter=0, req_stage=1)
    assert (decide(s) - R.A_PLACE) // 36 == 1


def test_plays_whole_games_legally():
    from agents.runner import play_game

    for seed in range(6):
        ids = [AGENT, "pans_trial_v0/random-v0"][:: 1 if seed % 2 == 0 else -1]
        seats = [agents.make(i, seed=seed) for i in ids]
        record = play_game("pans_trial_v0", seats, seed=seed)
        assert not record.truncated
    bot = OriginalExperiencedAgent("pans_trial_v0", seed=1)
    assert bot.rng.random() >= 0

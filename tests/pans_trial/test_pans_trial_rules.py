"""Scenario tests for Pan's Trial: one per rule bullet, built from readable positions."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest
from pt_builder import build, card, sq

import envs.pans_trial_v0 as pt
from envs.core import IllegalActionError
from envs.core.testing import check_save_restore, check_state
from envs.pans_trial import rules as R
from envs.pans_trial.picture import only_pass_reason

UP, RIGHT, DOWN, LEFT = 0, 1, 2, 3

EMPTY = """
. . . . . .
. . . . . .
. . . . . .
. . . . . .
. . . . . .
. . . . . .
"""


@pytest.fixture
def game():
    return pt.Game()


def legal(state):
    return set(state.legal_actions())


# ------------------------------------------------------------------------------------------------
# Moving on the torus
def test_moves_wrap_around_every_edge(game):
    s = build(game, EMPTY, pos=((0, 0), (3, 3)))
    s.apply_action(R.A_MOVE + UP)
    assert s.pos[0] == sq(5, 0)
    s.apply_action(R.A_MOVE + RIGHT)  # player_1
    s.apply_action(R.A_MOVE + LEFT)
    assert s.pos[0] == sq(5, 5)
    s.apply_action(R.A_MOVE + RIGHT)
    s.apply_action(R.A_MOVE + DOWN)
    assert s.pos[0] == sq(0, 5)
    assert s.pos[1] == sq(3, 5)


def test_walls_block_moves_and_cannot_be_picked_up(game):
    board = """
    W3 .  .  .  .  .
    W4 .  .  .  .  .
    .  .  .  .  .  .
    .  .  .  .  .  .
    .  .  .  .  .  .
    .  .  .  .  .  .
    """
    s = build(game, board, pos=((0, 0), (3, 3)))
    assert R.A_MOVE + DOWN not in legal(s)  # (1,0) is a wall
    assert R.A_INTERACT not in legal(s)  # standing on a wall card: no interaction
    assert R.A_PASS not in legal(s)  # other actions exist
    assert legal(s) == {R.A_MOVE + UP, R.A_MOVE + RIGHT, R.A_MOVE + LEFT}
    with pytest.raises(IllegalActionError, match="move down"):
        s.apply_action(R.A_MOVE + DOWN)


def test_trap_by_moving_or_interacting_damages_and_leaves_a_hole(game):
    board = """
    .  T5 .  .  .  .
    .  .  .  .  .  .
    .  .  .  .  .  .
    .  .  .  T4 .  .
    .  .  .  .  .  .
    .  .  .  .  .  .
    """
    s = build(game, board, pos=((0, 0), (3, 3)))
    s.apply_action(R.A_MOVE + RIGHT)
    assert s.damage[0] == [card("T5")] and s.dmg_total[0] == 5
    assert s.board[sq(0, 1)] == -1
    assert s.active == 1 and s.turns_left == 5
    assert R.A_INTERACT in legal(s)  # player_1 stands on a trap: self-harm is allowed
    s.apply_action(R.A_INTERACT)
    assert s.damage[1] == [card("T4")] and s.board[sq(3, 3)] == -1


def test_weapon_goes_to_hand_and_leaves_a_hole(game):
    board = """
    .  X7 .  .  .  .
    .  .  .  .  .  .
    .  .  .  .  .  .
    .  .  .  X2 .  .
    .  .  .  .  .  .
    .  .  .  .  .  .
    """
    s = build(game, board, pos=((0, 0), (3, 3)))
    s.apply_action(R.A_MOVE + RIGHT)
    assert s.hands[0] == [card("X7")] and s.board[sq(0, 1)] == -1
    s.apply_action(R.A_INTERACT)
    assert s.hands[1] == [card("X2")] and s.board[sq(3, 3)] == -1


BALLISTA_BOARD = """
.  X8 .  .  .  .
.  .  .  .  .  .
.  B3 .  T5 W2 X9
.  W4 .  .  .  .
.  T6 .  .  .  .
.  .  .  .  .  .
"""


def test_ballista_targets_stop_before_walls_and_pass_over_holes(game):
    s = build(game, BALLISTA_BOARD, pos=((2, 0), (5, 5)))
    s.apply_action(R.A_MOVE + RIGHT)  # onto the ballista at (2,1)
    assert s.phase == "ballista_target" and s.current_player() == 0
    expected = {sq(2, 2), sq(2, 3),  # right: stops before the wall at (2,4)
                sq(2, 0), sq(2, 5),  # left: wraps, stops before the wall at (2,4)
                sq(1, 1), sq(0, 1), sq(5, 1), sq(4, 1)}  # up: wraps, stops before the wall at (3,1)
    assert legal(s) == {R.A_TARGET + t for t in expected}


def test_ballista_landing_has_no_effect(game):
    s = build(game, BALLISTA_BOARD, pos=((2, 0), (5, 5)))
    s.apply_action(R.A_MOVE + RIGHT)
    s.apply_action(R.A_TARGET + sq(2, 3))  # lands on the trap T5
    assert s.pos[0] == sq(2, 3)
    assert s.damage[0] == [] and s.board[sq(2, 3)] == card("T5")
    assert s.phase == "traverse" and s.active == 1 and s.turns_left == 5
    s2 = build(game, BALLISTA_BOARD, pos=((2, 0), (5, 5)))
    s2.apply_action(R.A_MOVE + RIGHT)
    s2.apply_action(R.A_TARGET + sq(0, 1))  # lands on the weapon X8: no pickup
    assert s2.hands[0] == [] and s2.board[sq(0, 1)] == card("X8")


def test_ballista_without_target_ends_the_turn_and_cannot_be_interacted_with(game):
    board = """
    .  .  .  .  .  .
    .  W1 .  .  .  .
    W2 B3 W3 .  .  .
    .  W4 .  .  .  .
    .  .  .  .  .  .
    .  .  .  .  .  .
    """
    s = build(game, board, pos=((2, 1), (5, 5)))
    assert R.A_INTERACT not in legal(s)
    assert legal(s) == {R.A_PASS}  # walled in, no usable card: the explicit pass
    # the front ends say why (the picture's lines are what both show), to either seat
    assert "player_0 must pass: walled in" in only_pass_reason(game, s.player_view(1))
    assert any("walled in" in line for line in game.picture(s.player_view(0)).lines)
    # Standing on the wall card W1 (its role can change under a player), step down onto the
    # ballista: every direction is blocked at once, so nothing happens and the turn ends.
    s = build(game, board, pos=((1, 1), (5, 5)))
    assert only_pass_reason(game, s.player_view(0)) == ""  # they can step down
    s.apply_action(R.A_MOVE + DOWN)  # onto the ballista: no target, the turn simply ends
    assert s.pos[0] == sq(2, 1) and s.phase == "traverse" and s.active == 1


def test_ballista_landing_on_the_opponent_starts_combat(game):
    s = build(game, BALLISTA_BOARD, pos=((2, 0), (2, 3)), hands=("X5 T3", "X6"))
    s.apply_action(R.A_MOVE + RIGHT)
    assert R.A_TARGET + sq(2, 3) in legal(s)
    s.apply_action(R.A_TARGET + sq(2, 3))
    assert s.phase == "combat" and s.current_player() == 0
    assert legal(s) == {R.A_STRIKE + card("X5")}  # the trap-suit card is no weapon
    s.apply_action(R.A_STRIKE + card("X5"))
    assert s.damage[1] == [card("X5")] and s.current_player() == 1
    s.apply_action(R.A_STRIKE + card("X6"))
    assert s.damage[0] == [card("X6")]
    assert s.hands == [[card("T3")], []]
    assert s.phase == "traverse" and s.active == 1 and s.turns_left == 5


# ------------------------------------------------------------------------------------------------
# Combat
def test_combat_mover_strikes_first_and_must_strike(game):
    s = build(game, EMPTY, pos=((0, 0), (0, 1)), hands=("X5 X7", ""))
    s.apply_action(R.A_MOVE + RIGHT)
    assert s.phase == "combat" and s.current_player() == 0
    assert legal(s) == {R.A_STRIKE + card("X5"), R.A_STRIKE + card("X7")}
    s.apply_action(R.A_STRIKE + card("X7"))
    # the defender is unarmed: no counter-strike, the turn is over
    assert s.damage[1] == [card("X7")] and s.dmg_total[1] == 7
    assert s.phase == "traverse" and s.active == 1 and s.pos == [sq(0, 1), sq(0, 1)]


def test_combat_unarmed_mover_lets_the_defender_strike(game):
    s = build(game, EMPTY, pos=((0, 0), (0, 1)), hands=("T5", "X4"))
    s.apply_action(R.A_MOVE + RIGHT)
    assert s.phase == "combat" and s.current_player() == 1
    s.apply_action(R.A_STRIKE + card("X4"))
    assert s.damage[0] == [card("X4")] and s.current_player() == 1 and s.phase == "traverse"


def test_combat_replaces_the_square_effect(game):
    board = EMPTY.replace(". . . . . .", ".  T9 . . . .", 1)
    s = build(game, board, pos=((0, 0), (0, 1)))
    s.apply_action(R.A_MOVE + RIGHT)  # onto the opponent standing on a trap: no trap damage
    assert s.damage == [[], []] and s.board[sq(0, 1)] == card("T9")


def test_lethal_first_strike_ends_the_game_before_the_counter_strike(game):
    s = build(game, EMPTY, pos=((0, 0), (0, 1)), hands=("X5", "X6"), damage=("", "T9 T8 T3"))
    s.apply_action(R.A_MOVE + RIGHT)
    s.apply_action(R.A_STRIKE + card("X5"))
    assert s.is_terminal() and s.returns() == [1.0, -1.0] and s.end_reason() == "damage"
    assert s.hands[1] == [card("X6")] and s.damage[0] == []
    check_state(s)


def test_damage_threshold_is_configurable_and_reached_exactly(game):
    g = pt.Game(damage_threshold=10)
    board = EMPTY.replace(". . . . . .", ".  T9 . . . .", 1)
    s = build(g, board, pos=((0, 0), (3, 3)), damage=("T1", ""))
    s.apply_action(R.A_MOVE + RIGHT)
    assert s.is_terminal() and s.returns() == [-1.0, 1.0]
    s = build(game, board, pos=((0, 0), (3, 3)), damage=("T1", ""))
    s.apply_action(R.A_MOVE + RIGHT)
    assert not s.is_terminal()


# ------------------------------------------------------------------------------------------------
# Phase structure
def test_active_player_alternates_across_phases_when_appeasing_is_skipped(game):
    s = build(game, EMPTY, pos=((0, 0), (3, 3)), hands=("", "X3"), active=0, turns_left=1)
    s.apply_action(R.A_MOVE + RIGHT)  # the last turn of the phase, by player_0
    assert s.phase == "traverse" and s.turns_left == 6
    assert s.current_player() == 1  # no double move for player_0


def to_appeasing(game, hands, damage=("", ""), board=EMPTY, pos=((0, 0), (3, 3)), g=None):
    """A position where player_0's forced pass ends the phase: Appeasing, player_1 submits first."""
    s = build(g or game, board, pos=pos, hands=hands, damage=damage, active=0, turns_left=1, forced=(1, 0))
    assert legal(s) == {R.A_PASS}
    s.apply_action(R.A_PASS)
    assert s.phase == "appease_first" and s.current_player() == 1
    return s


def test_appeasing_first_submitter_is_the_player_who_did_not_move_last(game):
    s = to_appeasing(game, ("W2 X5", "X12 T3"))
    assert legal(s) == {R.A_APPEASE + card("X12"), R.A_APPEASE + card("T3")}
    s.apply_action(R.A_APPEASE + card("X12"))
    assert s.phase == "appease_second" and s.current_player() == 0


def test_appeasing_second_player_cannot_see_the_first_card(game):
    s = to_appeasing(game, ("W2 X5", "X12 T3"))
    a, b = s.clone(), s.clone()
    a.apply_action(R.A_APPEASE + card("X12"))
    b.apply_action(R.A_APPEASE + card("T3"))
    assert json.dumps(a.to_dict()) != json.dumps(b.to_dict())
    assert np.array_equal(game.observe(a, 0), game.observe(b, 0))
    assert a.player_view(0) == b.player_view(0)
    assert np.array_equal(a.legal_mask(), b.legal_mask())
    assert not np.array_equal(game.observe(a, 1), game.observe(b, 1))  # the submitter knows


def test_appeasing_trump_order_beats_value(game):
    s = to_appeasing(game, ("W2 X5", "X12 T3"))
    s.apply_action(R.A_APPEASE + card("X12"))
    s.apply_action(R.A_APPEASE + card("W2"))  # walls beat weapons, 2 beats King
    assert s.appease_winner == 0 and s.phase == "request_first" and s.current_player() == 0
    assert s.pending == [card("X12"), card("W2")]  # [loser's card, winner's card]
    assert s.hands == [[card("X5")], [card("T3")]]


def test_appeasing_trump_order_follows_config(game):
    g = pt.Game(trump_order=("weapons", "ballista", "traps", "walls"))
    assert g.config["trump_order"] == ["weapons", "ballista", "traps", "walls"]
    s = to_appeasing(game, ("W2 X5", "X12 T3"), g=g)
    s.apply_action(R.A_APPEASE + card("X12"))
    s.apply_action(R.A_APPEASE + card("W2"))
    assert s.appease_winner == 1


def test_appeasing_same_suit_higher_value_wins(game):
    s = to_appeasing(game, ("T9 X5", "T3 X6"))
    s.apply_action(R.A_APPEASE + card("T3"))
    s.apply_action(R.A_APPEASE + card("T9"))
    assert s.appease_winner == 0
    s = to_appeasing(game, ("T2 X5", "T3 X6"))
    s.apply_action(R.A_APPEASE + card("T3"))
    s.apply_action(R.A_APPEASE + card("T2"))
    assert s.appease_winner == 1 and s.current_player() == 1


def requests_position(game, damage=("", ""), board=EMPTY, pos=((0, 0), (3, 3)), hands=("W2 X5", "X12 T3")):
    """player_0 wins Appeasing with W2 over X12 and chooses first."""
    s = to_appeasing(game, hands, damage=damage, board=board, pos=pos)
    s.apply_action(R.A_APPEASE + card("X12"))
    s.apply_action(R.A_APPEASE + card("W2"))
    return s


def test_request_availability(game):
    s = requests_position(game, damage=("T4", ""))
    req = {R.A_REQUEST + r for r in range(4)}
    assert legal(s) == req - {R.A_REQUEST + R.STEAL_LIFE}  # one damage pile is empty
    s = requests_position(game, damage=("T4", "T6"))
    assert legal(s) == req
    s.apply_action(R.A_REQUEST + R.PLANE_SHIFT)
    s.apply_action(R.A_SHIFT + 0)  # row 0 left
    assert s.phase == "request_second" and s.current_player() == 1
    # the loser must choose a different request and never Ignore Us
    assert legal(s) == {R.A_REQUEST + R.RESTRUCTURE, R.A_REQUEST + R.STEAL_LIFE}


def test_ignore_us_ends_the_request_sequence(game):
    s = requests_position(game)
    s.apply_action(R.A_REQUEST + R.IGNORE_US)
    assert s.phase == "place" and s.current_player() == 1  # the loser places


def test_restructure_swaps_two_suit_roles(game):
    board = EMPTY.replace(". . . . . .", ".  X8 . . . .", 1)
    s = requests_position(game, board=board)
    s.apply_action(R.A_REQUEST + R.RESTRUCTURE)
    assert legal(s) == set(range(R.A_RESTRUCTURE, R.A_SHIFT))
    pair = R.SUIT_PAIRS.index((0, 3))  # clubs (walls) <-> spades (weapons)
    s.apply_action(R.A_RESTRUCTURE + pair)
    assert s.suit_role == [3, 1, 2, 0]
    assert s.board[sq(0, 1)] == card("X8")  # the card stays, its role changed
    assert s.is_wall(sq(0, 1))
    assert s.phase == "request_second" and s.current_player() == 1


def test_steal_life_swaps_one_card_each_way(game):
    s = requests_position(game, damage=("T2 T4", "T9"))
    s.apply_action(R.A_REQUEST + R.STEAL_LIFE)
    assert s.phase == "steal_mine"
    assert legal(s) == {R.A_STEAL_MINE + card("T2"), R.A_STEAL_MINE + card("T4")}
    s.apply_action(R.A_STEAL_MINE + card("T4"))
    assert s.phase == "steal_theirs" and legal(s) == {R.A_STEAL_THEIRS + card("T9")}
    s.apply_action(R.A_STEAL_THEIRS + card("T9"))
    assert sorted(s.damage[0]) == sorted([card("T2"), card("T9")]) and s.damage[1] == [card("T4")]
    assert s.dmg_total == [11, 4]


def test_steal_life_can_be_lethal(game):
    s = requests_position(game, damage=("T9", "T8 T7 T6 T1"))  # player_1 at 22
    s.apply_action(R.A_REQUEST + R.STEAL_LIFE)
    s.apply_action(R.A_STEAL_MINE + card("T9"))
    s.apply_action(R.A_STEAL_THEIRS + card("T1"))  # player_1 now at 30
    assert s.is_terminal() and s.returns() == [1.0, -1.0]


def test_plane_shift_moves_cards_and_players_with_wrap(game):
    board = """
    .  .  .  .  .  .
    .  .  .  .  .  .
    T1 T2 T4 T5 T6 T7
    .  .  .  .  .  .
    .  .  .  .  .  .
    .  .  .  .  .  X9
    """
    s = requests_position(game, board=board, pos=((2, 5), (3, 3)))
    s.apply_action(R.A_REQUEST + R.PLANE_SHIFT)
    s.apply_action(R.A_SHIFT + 2 * 2 + 1)  # row 2 right
    assert [s.board[sq(2, c)] for c in range(6)] == [card(t) for t in "T7 T1 T2 T4 T5 T6".split()]
    assert s.pos == [sq(2, 0), sq(3, 3)]  # player_0 rode along and wrapped
    s.apply_action(R.A_REQUEST + R.RESTRUCTURE)  # player_1's request (cannot repeat Plane Shift)
    assert R.A_REQUEST + R.PLANE_SHIFT not in legal(s)


def test_plane_shift_column_up(game):
    board = EMPTY.replace(". . . . . .", "X9 . . . . .", 1)
    s = requests_position(game, board=board, pos=((0, 0), (3, 0)))
    s.apply_action(R.A_REQUEST + R.PLANE_SHIFT)
    s.apply_action(R.A_SHIFT + 12 + 2 * 0 + 0)  # column 0 up: row r goes to r-1
    assert s.board[sq(5, 0)] == card("X9") and s.board[sq(0, 0)] == -1
    assert s.pos == [sq(5, 0), sq(2, 0)]


# ------------------------------------------------------------------------------------------------
# Placement
FULL_BUT_TWO = """
T1 T2 T3 T4 T5 T6
T7 T8 T9 B1 B2 B4
B5 B6 B7 B8 B9 W1
W3 W4 W5 W6 W7 W8
W9 X1 X2 X3 X4 .
X6 X7 .  X8 X9 T10
"""


def test_placement_by_the_loser_into_open_holes_only(game):
    # holes at (4,5) and (5,2); player_1 stands on (5,2), so only (4,5) is open
    s = requests_position(game, board=FULL_BUT_TWO, pos=((0, 0), (5, 2)), hands=("W2 T11", "X12 T12"))
    s.apply_action(R.A_REQUEST + R.IGNORE_US)
    assert s.phase == "place" and s.current_player() == 1
    assert legal(s) == {R.A_PLACE + sq(4, 5), R.A_PLACE + 36 + sq(4, 5)}
    s.apply_action(R.A_PLACE + 36 + sq(4, 5))  # the winner's W2
    assert s.board[sq(4, 5)] == card("W2")
    # no open hole is left: the loser's own card returns to the loser's hand
    assert sorted(s.hands[1]) == sorted([card("T12"), card("X12")])
    assert s.pending == [-1, -1]
    assert s.phase == "traverse" and s.current_player() == 1 and s.turns_left == 6  # loser starts
    check_state(s)


def test_placement_with_no_open_hole_returns_both_cards(game):
    board = FULL_BUT_TWO.replace("X4 .", "X4 X5")
    s = requests_position(game, board=board, pos=((0, 0), (5, 2)), hands=("W2 T11", "X12 T12"))
    s.apply_action(R.A_REQUEST + R.IGNORE_US)
    assert s.phase == "traverse" and s.current_player() == 1
    assert sorted(s.hands[1]) == sorted([card("T12"), card("X12"), card("W2")])


def test_placement_of_both_cards_in_any_order(game):
    s = requests_position(game)
    s.apply_action(R.A_REQUEST + R.IGNORE_US)
    assert s.current_player() == 1
    assert R.A_PLACE + sq(0, 0) not in legal(s) and R.A_PLACE + sq(3, 3) not in legal(s)
    s.apply_action(R.A_PLACE + sq(1, 1))  # the loser's own X12 first
    assert s.phase == "place" and legal(s) == {R.A_PLACE + 36 + t for t in range(36)
                                               if t not in (sq(0, 0), sq(3, 3), sq(1, 1))}
    s.apply_action(R.A_PLACE + 36 + sq(2, 2))
    assert s.board[sq(1, 1)] == card("X12") and s.board[sq(2, 2)] == card("W2")
    assert s.phase == "traverse" and s.current_player() == 1


# ------------------------------------------------------------------------------------------------
# Forced passes, stalemate and truncation
def test_forced_passes_after_a_request_walls_a_player_in(game):
    # player_1 at (3,3) is surrounded by ballista-suit cards; Restructure hearts<->clubs walls them in
    board = """
    .  .  .  .  .  .
    .  .  .  .  .  .
    .  .  .  B1 .  .
    .  .  B2 .  B4 .
    .  .  .  B5 .  .
    .  .  .  .  .  .
    """
    s = requests_position(game, board=board, pos=((0, 0), (3, 3)))
    s.apply_action(R.A_REQUEST + R.RESTRUCTURE)
    s.apply_action(R.A_RESTRUCTURE + R.SUIT_PAIRS.index((0, 2)))
    assert s.forced == [0, 3]
    s.apply_action(R.A_REQUEST + R.PLANE_SHIFT)  # player_1's request: shift row 0 (harmless)
    s.apply_action(R.A_SHIFT + 0)
    s.apply_action(R.A_PLACE + sq(1, 1))
    s.apply_action(R.A_PLACE + 36 + sq(1, 2))
    assert s.phase == "traverse" and s.current_player() == 1
    for expected_left in (2, 1, 0):
        assert legal(s) == {R.A_PASS}
        assert f"player_1 must pass: they owe {expected_left + 1} forced pass" in only_pass_reason(game, s.player_view(0))
        s.apply_action(R.A_PASS)
        assert s.forced[1] == expected_left
        s.apply_action(R.A_MOVE + RIGHT)  # player_0 moves freely
    # the six turns are used up; hands are both non-empty so Appeasing follows
    assert s.phase == "appease_first"


def test_stalemate_phase_of_passes_without_appeasing_is_a_draw(game):
    board = """
    .  W1 .  .  .  .
    W2 .  W3 .  W4 .
    .  W5 .  W6 .  W7
    .  .  .  .  W8 .
    .  .  .  .  .  .
    .  .  .  .  .  .
    """
    s = build(game, board, pos=((1, 1), (2, 4)), hands=("", "X3"), active=0)
    for _ in range(6):
        assert not s.is_terminal() and legal(s) == {R.A_PASS}
        s.apply_action(R.A_PASS)
    assert s.is_terminal() and s.returns() == [0.0, 0.0] and s.end_reason() == "only-passes"
    check_state(s)


def test_forced_passes_are_not_a_stalemate(game):
    board = """
    .  W1 .  .  .  .
    W2 .  W3 .  .  .
    .  W5 .  .  .  .
    .  .  .  .  .  .
    .  .  .  .  .  .
    .  .  .  .  .  .
    """
    # player_0 walled in; player_1 owes forced passes but could move afterwards
    s = build(game, board, pos=((1, 1), (4, 4)), hands=("", "X3"), active=0, forced=(0, 3))
    for _ in range(6):
        s.apply_action(R.A_PASS)
    assert not s.is_terminal() and s.phase == "traverse" and s.forced == [0, 0]
    assert s.current_player() == 0 and legal(s) == {R.A_PASS}
    s.apply_action(R.A_PASS)
    assert R.A_MOVE + UP in legal(s)  # player_1 is free now


def test_max_cycles_truncates():
    env = pt.raw_env(max_cycles=5)
    env.reset(seed=1)
    steps = 0
    while not any(env.truncations.values()) and not any(env.terminations.values()):
        mask = env.observe(env.agent_selection)["action_mask"]
        env.step(int(np.flatnonzero(mask)[0]))
        steps += 1
    assert steps == 10 and all(env.truncations.values())
    assert all(env.unwrapped.cumulative_reward(a) == 0 for a in env.agents)


# ------------------------------------------------------------------------------------------------
# Set-up: draft, deal, first player
def test_draft_allows_only_two_kings_and_leaves_the_rest_as_identity_cards():
    g = pt.Game()
    s = g.new_initial_state(4)
    assert s.phase == "draft" and not s.revealed
    first = s.current_player()
    kings = list(R.KINGS)
    s.apply_action(R.A_DRAFT + kings[0])
    assert s.current_player() == 1 - first
    s.apply_action(R.A_DRAFT + kings[1])
    assert not any(R.A_DRAFT + k in legal(s) for k in kings[2:])
    while s.phase == "draft":
        s.apply_action(min(legal(s)))
    assert sorted(s.identity) == sorted(kings[2:]) and s.pool == []
    assert len(s.hands[0]) == len(s.hands[1]) == 5
    assert s.revealed and s.phase == "traverse" and s.current_player() == 1  # Player 2 begins
    assert s.pos == [sq(5, 3), sq(0, 2)] and s.can_move(0) and s.can_move(1)


def test_no_draft_deals_the_same_cards_and_first_player_config():
    g = pt.Game(draft=False, first_player=0)
    for seed in range(5):
        s = g.new_initial_state(seed)
        drafted = s.hands[0] + s.hands[1]
        assert len(s.hands[0]) == len(s.hands[1]) == 5
        assert sum(c in R.KINGS for c in drafted) == 2
        assert set(drafted) | set(s.identity) == set(R.HIGH_CARDS)
        assert s.phase == "traverse" and s.current_player() == 0 and s.revealed


def test_bad_configs_name_the_key():
    from envs.core import ConfigError

    for bad in ({"damage_threshold": 0}, {"first_player": 2}, {"draft": "yes"},
                {"trump_order": ["walls", "traps", "ballista"]}, {"trump_order": "walls"}):
        with pytest.raises(ConfigError, match=next(iter(bad))):
            pt.Game(**bad)


# ------------------------------------------------------------------------------------------------
# Hidden information, save/restore, observation cache
def test_omen_order_is_hidden_until_revealed():
    g = pt.Game()
    s = g.new_initial_state(8)
    other = s.clone()
    other.omens = list(reversed(s.omens))
    other.suit_role = R.suit_roles_from_omens(other.omens)
    other._touch()
    assert json.dumps(s.to_dict()) != json.dumps(other.to_dict())
    for p in (0, 1):
        assert np.array_equal(g.observe(s, p), g.observe(other, p))
        assert s.player_view(p) == other.player_view(p)
    # finish the identical drafts: the reveal makes the difference visible
    while s.phase == "draft":
        a = min(legal(s))
        s.apply_action(a)
        other.apply_action(a)
    assert s.suit_role != other.suit_role
    assert not np.array_equal(g.observe(s, 0), g.observe(other, 0))


def test_state_from_view_resamples_hidden_parts():
    g = pt.Game()
    s = g.new_initial_state(8)
    rng = random.Random(0)
    omens = {tuple(g.state_from_view(s.player_view(0), rng).omens) for _ in range(20)}
    assert len(omens) > 1


def test_save_restore_round_trip_mid_appeasing(game):
    s = to_appeasing(game, ("W2 X5", "X12 T3"))
    s.apply_action(R.A_APPEASE + card("T3"))
    restored = game.load(json.loads(json.dumps(game.save(s))))
    assert restored.appease_card == s.appease_card
    check_save_restore(s, continuation_seed=3, steps=50)


def test_observation_cache_matches_a_fresh_encoding():
    for config in pt.Game.config_families.values():
        g = pt.Game(**config)
        rng = random.Random(5)
        for seed in range(6):
            s = g.new_initial_state(seed)
            while not s.is_terminal():
                for p in (0, 1):
                    g.observe(s, p)  # fill the cache
                a = s.legal_actions()
                s.apply_action(a[rng.randrange(len(a))])
                fresh = g.load_state(json.loads(json.dumps(s.to_dict())))
                for p in (0, 1):
                    obs = g.observe(s, p)
                    assert np.array_equal(obs, g.observe(fresh, p))
                    assert obs.min() >= 0.0 and obs.max() <= 1.0


def test_observation_shows_board_roles_and_positions(game):
    board = EMPTY.replace(". . . . . .", ".  T5 . . . .", 1)
    s = build(game, board, pos=((0, 0), (3, 3)), hands=("X4", ""))
    from envs.pans_trial.game import NB, OFFSET

    obs = game.observe(s, 1).reshape(-1)
    cell = obs[sq(0, 1) * NB:(sq(0, 1) + 1) * NB]
    assert cell[0] == 1 and cell[1 + 1] == 1 and cell[5 + R.TRAPS] == 1 and cell[9] == pytest.approx(5 / 12)
    assert obs[sq(3, 3) * NB + 10] == 1 and obs[sq(0, 0) * NB + 11] == 1  # from player_1's side
    assert obs[OFFSET["opponent_hand"] + card("X4")] == 1 and obs[OFFSET["my_hand"] + card("X4")] == 0


def test_labyrinth_is_reshuffled_after_the_reveal_if_a_player_is_walled_in():
    board = """
    T1 T2 T3 W2 T4 T5
    T6 T7 T8 T9 B1 B2
    B3 B4 B5 B6 B7 B8
    B9 X1 X2 X3 X4 X5
    X6 X7 X8 W1 X9 W5
    W6 W7 W3 W8 W4 W9
    """
    g = pt.Game()
    hands = ("W10 T10 B10 X10 W12", "W11 T11 B11 X11")
    s = build(g, board, hands=hands, stage="draft", active=1, revealed=False, seed=3)
    assert sorted(s.pool) == sorted(card(t) for t in ("T12", "B12", "X12"))
    before = s.board[:]
    s.apply_action(R.A_DRAFT + card("T12"))
    assert s.revealed and s.phase == "traverse"
    assert s.suit_role == [0, 1, 2, 3]
    assert s.can_move(0) and s.can_move(1)
    assert s.board != before and sorted(s.board) == sorted(before)
    assert sorted(s.identity) == sorted(card(t) for t in ("B12", "X12"))
    check_state(s)

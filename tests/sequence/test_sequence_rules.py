"""Scenario tests for Sequence: one per rule bullet of envs/sequence/RULES.md and the published counting cases."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest

import envs
from envs.core import ConfigError, IllegalActionError
from envs.sequence.board import PRINTED_LAYOUT, generated_layout, kind, label, layout_problems
from envs.sequence.game import OBS_SIZE, SequenceGame
from envs.sequence.rules import DEAD, NON_JACK_INDEX, PASS, PLACE, REMOVE, WILD, from_text

EMPTY_ROWS = ["." * 10] * 10


def rows(*lines):
    """Ten board rows; missing rows and short rows are padded with empty squares."""
    lines = list(lines) + ["." * 10] * (10 - len(lines))
    return [line.replace(" ", "").ljust(10, ".") for line in lines]


def sq(r, c):
    return r * 10 + c


def square_of(game, card, which=0):
    return game.squares_of[kind(card)][which]


# --------------------------------------------------------------------------------------------
# Board and table


def test_printed_board_matches_the_verified_rows_exactly():
    verified = """
    XX 2S 3S 4S 5S 6S 7S 8S 9S XX
    6C 5C 4C 3C 2C AH KH QH TH TS
    7C AS 2D 3D 4D 5D 6D 7D 9H QS
    8C KS 6C 5C 4C 3C 2C 8D 8H KS
    9C QS 7C 6H 5H 4H AH 9D 7H AS
    TC TS 8C 7H 2H 3H KH TD 6H 2D
    QC 9S 9C 8H 9H TH QH QD 5H 3D
    KC 8S TC QC KC AC AD KD 4H 4D
    AC 7S 6S 5S 4S 3S 2S 2H 3H 5D
    XX AD KD QD TD 9D 8D 7D 6D XX
    """.split()
    game = SequenceGame()
    shown = ["XX" if k < 0 else label(k) for k in game.layout]
    assert shown == verified
    assert layout_problems(PRINTED_LAYOUT) == []


@pytest.mark.parametrize("seed", range(6))
def test_generated_layout_has_the_three_properties_and_is_stable(seed):
    cells = generated_layout(seed)
    assert layout_problems(cells) == []
    game = SequenceGame(layout="generated", layout_seed=seed)
    assert game.layout == cells  # the same board for every episode with this layout_seed
    assert game.new_initial_state(1).layout == game.new_initial_state(2).layout
    assert generated_layout(seed) != generated_layout(seed + 100)
    assert cells != PRINTED_LAYOUT


def test_layout_validator_catches_each_broken_property():
    cells = list(PRINTED_LAYOUT)
    cells[0] = kind("5D")
    assert any("corner" in p for p in layout_problems(cells))
    cells = list(PRINTED_LAYOUT)
    cells[1], cells[2] = cells[2], cells[2]  # 2S vanishes, 3S appears three times
    assert any("appears" in p for p in layout_problems(cells))
    cells = list(PRINTED_LAYOUT)
    a, b = sq(0, 1), sq(1, 1)  # put a copy of 2S next to the one at r0c1
    other_2s = [i for i, k in enumerate(cells) if k == kind("2S") and i != a][0]
    cells[other_2s], cells[b] = cells[b], cells[other_2s]
    assert any("adjacent to its twin" in p for p in layout_problems(cells))


@pytest.mark.parametrize(
    "teams,ppt,hand", [(2, 1, 7), (3, 1, 6), (2, 2, 6), (3, 2, 5), (2, 3, 5), (3, 3, 4), (2, 4, 4), (3, 4, 3)]
)
def test_hand_sizes_follow_the_table(teams, ppt, hand):
    game = SequenceGame(num_teams=teams, players_per_team=ppt)
    state = game.new_initial_state(0)
    assert [len(h) for h in state.hands] == [hand] * (teams * ppt)
    assert len(state.deck) == 104 - hand * teams * ppt


def test_seats_are_dealt_round_robin_into_teams():
    env = envs.sequence_v0.raw_env(num_teams=3, players_per_team=2)
    env.reset(seed=0)
    state = env.unwrapped.engine_state
    assert [state.team_of(p) for p in range(6)] == [0, 1, 2, 0, 1, 2]
    # team-mates are never adjacent, including across the wrap from the last seat to the first
    assert all(state.team_of(p) != state.team_of((p + 1) % 6) for p in range(6))


def test_sequences_to_win_defaults_and_override():
    assert SequenceGame().sequences_to_win == 2
    assert SequenceGame(num_teams=3).sequences_to_win == 1
    assert SequenceGame(num_teams=3, sequences_to_win=2).sequences_to_win == 2


@pytest.mark.parametrize(
    "bad",
    [{"num_teams": 4}, {"players_per_team": 5}, {"players_per_team": 0}, {"sequences_to_win": 0},
     {"dead_cards": "yes"}, {"layout": "antique"}, {"layout_seed": "x"}, {"num_teams": True}],
)
def test_bad_config_values_are_rejected_with_the_allowed_values(bad):
    key = next(iter(bad))
    with pytest.raises(ConfigError, match=f"{key}=.* must be"):
        SequenceGame(**bad)


def test_two_decks_are_shuffled_together():
    state = SequenceGame().new_initial_state(5)
    cards = state.deck + [k for h in state.hands for k in h]
    assert sorted(cards) == sorted(k for k in range(52) for _ in range(2))
    other = SequenceGame().new_initial_state(6)
    assert state.deck != other.deck


# --------------------------------------------------------------------------------------------
# Turn: natural cards, draw, reshuffle


def test_natural_card_goes_on_either_matching_empty_square_then_draws():
    game = SequenceGame()
    state = from_text(game, rows(), hands={0: ["5D"], 1: ["2S"]})
    a, b = game.squares_of[kind("5D")]
    mask = state.legal_mask()
    assert mask[PLACE + a] and mask[PLACE + b]
    assert mask[:100].sum() == 2
    top = state.deck[-1]
    state.apply_action(PLACE + a)
    assert state.board[a] == 0
    assert state.hands[0] == [top]  # drew the top card
    assert state.discards == [kind("5D")]
    assert state.current_player() == 1


def test_natural_card_cannot_go_on_an_occupied_square():
    game = SequenceGame()
    a, b = game.squares_of[kind("5D")]
    board = [list(r) for r in rows()]
    board[a // 10][a % 10] = "B"
    state = from_text(game, ["".join(r) for r in board], hands={0: ["5D", "2S"]})
    mask = state.legal_mask()
    assert not mask[PLACE + a] and mask[PLACE + b]
    with pytest.raises(IllegalActionError, match=r"action \d+ \(place 5D r\dc\d\) is illegal for player 0"):
        state.apply_action(PLACE + a)


def test_empty_draw_pile_is_refilled_by_shuffling_the_discards():
    game = SequenceGame()
    state = from_text(game, rows(), hands={0: ["5D"], 1: ["2S"]})
    pile = state.deck
    state.deck = []
    state.discards = pile  # everything already played
    state.apply_action(PLACE + game.squares_of[kind("5D")][0])
    assert len(state.hands[0]) == 1
    assert state.discards == []  # the played 5D went to the discards, which became the draw pile
    assert len(state.deck) == len(pile)  # the old discards plus the 5D, minus the card drawn
    assert state.check_invariants() == []


# --------------------------------------------------------------------------------------------
# Jacks


def test_two_eyed_jack_is_wild_on_any_empty_square_but_not_corners_or_chips():
    game = SequenceGame()
    state = from_text(game, rows("XA........", ".B........"), hands={0: ["JD"]})
    mask = state.legal_mask()
    wild = mask[WILD:REMOVE]
    assert wild.sum() == 100 - 4 - 2
    assert not wild[0] and not wild[1] and not wild[11] and wild[2]
    state.apply_action(WILD + sq(5, 5))
    assert state.board[sq(5, 5)] == 0 and state.discards == [kind("JD")]


def test_one_eyed_jack_removes_an_opposing_unlocked_chip_only():
    game = SequenceGame()
    board = rows("XAAAAB....", "BBBBB.....")
    state = from_text(game, board, hands={0: ["JH"]}, sequences={1: [[sq(1, c) for c in range(5)]]})
    mask = state.legal_mask()[REMOVE:DEAD]
    assert mask[sq(0, 5)]  # team B chip, not locked
    assert not mask[sq(0, 1)]  # own chip
    assert not any(mask[sq(1, c)] for c in range(5))  # locked sequence chips
    assert not mask[0]  # free corner
    assert not mask[sq(0, 6)]  # empty
    state.apply_action(REMOVE + sq(0, 5))
    assert state.board[sq(0, 5)] == -1
    assert state.check_invariants() == []


def test_one_eyed_jack_with_no_target_is_not_playable_and_the_seat_passes():
    game = SequenceGame(dead_cards=False)
    state = from_text(game, rows("XAA......."), hands={0: ["JS", "JH"]})
    mask = state.legal_mask()
    assert not mask[REMOVE:DEAD].any()
    assert mask[PASS] and mask.sum() == 1


def test_three_team_removal_targets_both_other_teams():
    game = SequenceGame(num_teams=3)
    state = from_text(game, rows(".ABC......"), hands={1: ["JS"]}, player=1)
    mask = state.legal_mask()[REMOVE:DEAD]
    assert mask[1] and not mask[2] and mask[3]


# --------------------------------------------------------------------------------------------
# Dead cards


def _both_squares_taken(game, card):
    board = [list(r) for r in rows()]
    for s in game.squares_of[kind(card)]:
        board[s // 10][s % 10] = "B"
    return ["".join(r) for r in board]


def test_dead_card_is_exchanged_without_ending_the_turn_once_per_turn():
    game = SequenceGame()
    board = _both_squares_taken(game, "5D")
    for s in game.squares_of[kind("6D")]:
        board[s // 10] = board[s // 10][: s % 10] + "A" + board[s // 10][s % 10 + 1 :]
    state = from_text(game, board, hands={0: ["5D", "6D", "2S"]})
    mask = state.legal_mask()
    assert mask[DEAD + NON_JACK_INDEX[kind("5D")]] and mask[DEAD + NON_JACK_INDEX[kind("6D")]]
    state.apply_action(DEAD + NON_JACK_INDEX[kind("5D")])
    assert state.current_player() == 0  # the turn goes on
    assert len(state.hands[0]) == 3 and kind("5D") not in state.hands[0]
    assert state.discards == [kind("5D")]
    assert not state.legal_mask()[DEAD:PASS].any()  # only once per turn
    # after a normal play the next turn may exchange again
    state.apply_action(PLACE + game.squares_of[kind("2S")][0])
    assert state.current_player() == 1 and state.dead_used is False


def test_dead_cards_switch_off_forbids_exchanging():
    game = SequenceGame(dead_cards=False)
    state = from_text(game, _both_squares_taken(game, "5D"), hands={0: ["5D", "2S"]})
    assert not state.legal_mask()[DEAD:PASS].any()


def test_card_with_one_free_square_is_not_dead():
    game = SequenceGame()
    board = [list(r) for r in rows()]
    s = game.squares_of[kind("5D")][0]
    board[s // 10][s % 10] = "B"
    state = from_text(game, ["".join(r) for r in board], hands={0: ["5D"]})
    assert not state.legal_mask()[DEAD:PASS].any()


def test_only_dead_cards_with_switch_off_means_pass_and_a_table_nobody_can_change_is_drawn():
    # neither seat can play and, with exchanges off, neither will ever draw: the table is blocked
    game = SequenceGame(dead_cards=False)
    board = _both_squares_taken(game, "5D")
    state = from_text(game, board, hands={0: ["5D"], 1: ["5D"]})
    assert state.legal_actions() == [PASS]
    assert state.table_blocked()
    state.apply_action(PASS)
    assert state.is_terminal() and state.phase == "drawn"
    assert state.returns() == [0.0, 0.0]


def test_a_pass_is_not_a_draw_while_another_seat_can_still_play():
    game = SequenceGame(dead_cards=False)
    board = _both_squares_taken(game, "5D")
    state = from_text(game, board, hands={0: ["5D"], 1: ["2S"]})
    assert not state.table_blocked()
    state.apply_action(PASS)
    assert not state.is_terminal() and state.current_player() == 1


def _occupied(game, cards, team="B"):
    board = [list(r) for r in rows()]
    for card in cards:
        for s in game.squares_of[kind(card)]:
            board[s // 10][s % 10] = team
    return ["".join(r) for r in board]


def test_a_full_round_of_passes_is_not_a_draw_while_a_dead_card_can_still_be_exchanged():
    # Every seat exchanges a dead card, draws another dead card and passes: a full round of
    # passes. Live cards are still in the draw pile and the seats still hold dead cards, so the
    # game goes on (the original rules end only a completely blocked table) until someone draws a live card.
    game = SequenceGame()
    dead = ["5D", "6D", "7D", "8D", "9D", "TD"]
    state = from_text(game, _occupied(game, dead), hands={0: ["5D", "6D"], 1: ["7D", "8D"]})
    for card in ["TD", "9D", "TD", "9D"]:  # the next four cards drawn, all dead
        state.deck.remove(kind(card))
        state.deck.append(kind(card))
    for _ in range(2):  # two full rounds
        for seat in (0, 1):
            assert state.current_player() == seat
            held = next(k for k in state.hands[seat] if k in map(kind, dead))
            state.apply_action(DEAD + NON_JACK_INDEX[held])
            assert state.legal_actions() == [PASS]
            state.apply_action(PASS)
    assert state.passes_in_row == 4  # the old rule would have drawn after the first two
    assert not state.is_terminal() and not state.table_blocked()
    # more passes than seats is a legal position: it saves, loads and rebuilds from a seat's view
    assert game.load_state(json.loads(json.dumps(state.to_dict()))).to_dict() == state.to_dict()
    assert game.state_from_view(state.player_view(0), random.Random(0)).passes_in_row == 4
    # seat 0 exchanges again and draws a live card, which it must play
    state.apply_action(DEAD + NON_JACK_INDEX[state.hands[0][0]])
    assert PASS not in state.legal_actions()
    state.apply_action(state.legal_actions()[0])
    assert state.passes_in_row == 0 and state.check_invariants() == []


def test_a_full_board_with_nothing_left_to_remove_is_blocked():
    # Every square is taken; team A's only chips form a (locked) sequence, so team B's one-eyed
    # jacks have no target. Seat 1 (B) can still exchange its dead card, but no card it could draw
    # is playable for it; seat 0 (A) holds a wild jack with no empty square and cannot draw.
    game = SequenceGame()
    full = ["XAAAABBBBX"] + ["BBBBBBBBBB"] * 8 + ["XBBBBBBBBX"]
    a_sequence = [[sq(0, 0), sq(0, 1), sq(0, 2), sq(0, 3), sq(0, 4)]]
    state = from_text(game, full, hands={0: ["JD"], 1: ["5D", "JS"]}, sequences={0: a_sequence})
    assert state.legal_actions() == [PASS]
    assert state.table_blocked()
    state.apply_action(PASS)
    assert state.is_terminal() and state.phase == "drawn" and state.returns() == [0.0, 0.0]
    assert state.end_reason() == "blocked"
    # a one-eyed jack in team A's hand could still remove a B chip: not blocked
    state = from_text(game, full, hands={0: ["JH"], 1: ["5D", "JS"]}, sequences={0: a_sequence})
    assert not state.table_blocked()
    # ... nor in the draw pile while an A seat can still draw (it holds a dead card)
    state = from_text(game, full, hands={0: ["5D"], 1: ["6D", "JS"]}, sequences={0: a_sequence})
    assert not state.table_blocked()


def test_reviewers_example_two_teams_of_two_seed_20251640_plays_on_after_a_round_of_passes():
    # Deal seed 20251640, 2 teams of 2, uniformly random legal actions from random.Random(50):
    # after 127 actions every seat has passed in turn with 40 cards still in the draw pile. The
    # old engine called that a draw; a seat still holds a dead card and live cards remain, so the
    # game goes on and ends by the rules (a win or a truly blocked table).
    game = SequenceGame(num_teams=2, players_per_team=2)
    state = game.new_initial_state(20251640)
    rng = random.Random(50)
    for _ in range(127):
        legal = state.legal_actions()
        state.apply_action(legal[rng.randrange(len(legal))])
    assert state.passes_in_row == 4 and len(state.deck) == 40
    dead = [k for hand in state.hands for k in hand
            if k in game.squares_of and all(state.board[s] != -1 for s in game.squares_of[k])]
    assert dead  # an exchangeable dead card is still held
    assert not state.is_terminal() and not state.table_blocked()
    n = 127
    while not state.is_terminal() and n < 6000:
        legal = state.legal_actions()
        state.apply_action(legal[rng.randrange(len(legal))])
        n += 1
    assert state.is_terminal() and state.check_invariants() == []
    assert state.winner is not None or state.table_blocked()


def test_a_play_between_passes_resets_the_pass_count():
    game = SequenceGame(dead_cards=False)
    board = _both_squares_taken(game, "5D")
    state = from_text(game, board, hands={0: ["5D"], 1: ["2S"]})
    state.apply_action(PASS)
    state.apply_action(PLACE + game.squares_of[kind("2S")][0])
    assert state.passes_in_row == 0 and not state.is_terminal()


# --------------------------------------------------------------------------------------------
# Counting sequences (the published rules' cases)


def place_wild(state, r, c):
    state.set_hand(state.player, [kind("JD")])
    state.apply_action(WILD + sq(r, c))


def test_five_in_a_row_is_one_sequence_and_locks_its_chips():
    game = SequenceGame()
    state = from_text(game, rows(".", "AAAA......"), hands={0: ["JD"]})
    place_wild(state, 1, 4)
    assert state.sequences[0] == [[sq(1, c) for c in range(5)]]
    assert all(state.locked[sq(1, c)] for c in range(5))
    assert not state.is_terminal()  # two teams play to 2


def test_nine_in_a_row_completed_in_the_middle_counts_two_and_wins_at_once():
    game = SequenceGame()
    state = from_text(game, rows(".", ".AAAA.AAAA"), hands={0: ["JD"]})
    place_wild(state, 1, 5)
    assert len(state.sequences[0]) == 2
    assert state.is_terminal() and state.winner == 0 and state.end_reason() == "rules"
    assert state.returns() == [1.0, -1.0]


def test_six_in_a_row_is_one_sequence():
    game = SequenceGame()
    state = from_text(game, rows(".", "AAA.AA...."), hands={0: ["JD"]})
    place_wild(state, 1, 3)
    assert len(state.sequences[0]) == 1


def test_which_five_lock_in_a_longer_run_is_the_first_in_reading_order():
    game = SequenceGame()
    state = from_text(game, rows(".", "AAA.AAA..."), hands={0: ["JD"]})
    place_wild(state, 1, 3)  # seven in a row r1c0..r1c6
    assert state.sequences[0] == [[sq(1, c) for c in range(5)]]
    assert not state.locked[sq(1, 5)] and not state.locked[sq(1, 6)]
    # the two free chips (plus one shared) later make a second sequence r1c4..r1c8
    state.player = 0
    place_wild(state, 1, 7)
    assert not state.is_terminal()
    state.player = 0
    place_wild(state, 1, 8)
    assert state.sequences[0][1] == [sq(1, c) for c in range(4, 9)]
    assert state.winner == 0


def test_extending_a_completed_sequence_adds_nothing():
    game = SequenceGame(sequences_to_win=3)
    first = [sq(1, c) for c in range(5)]
    state = from_text(game, rows(".", "AAAAA....."), hands={0: ["JD"]}, sequences={0: [first]})
    place_wild(state, 1, 5)  # six
    state.player = 0
    place_wild(state, 1, 6)  # seven
    assert state.sequences[0] == [first]


def test_ten_in_a_row_is_two_sequences():
    game = SequenceGame(sequences_to_win=3)
    first = [sq(1, c) for c in range(5)]
    state = from_text(game, rows(".", "AAAAAAAAA."), hands={0: ["JD"]}, sequences={0: [first]})
    place_wild(state, 1, 9)
    assert state.sequences[0] == [first, [sq(1, c) for c in range(5, 10)]]


def test_one_placement_completing_two_directions_counts_both():
    game = SequenceGame()
    board = rows(
        "X.........",
        "..A.......",
        "..A.......",
        "..A.......",
        "..A.......",
        "AA.AA.....",
    )
    state = from_text(game, board, hands={0: ["JD"]})
    place_wild(state, 5, 2)  # column 2 rows 1..5 and row 5 columns 0..4
    assert len(state.sequences[0]) == 2
    assert state.winner == 0


def test_free_corner_counts_for_every_team():
    game = SequenceGame(num_teams=3)
    board = rows("XAAA......", "B.........", "B.........", "B.........", "..........")
    state = from_text(game, board, hands={0: ["JD"], 1: ["JD"]})
    place_wild(state, 0, 4)
    assert state.sequences[0] == [[0, 1, 2, 3, 4]]
    assert state.winner == 0  # three teams play to one
    # and for the other team, on a fresh copy of the position
    state = from_text(game, board, hands={1: ["JD"]}, player=1)
    place_wild(state, 4, 0)
    assert state.sequences[1] == [[0, 10, 20, 30, 40]]


def test_corner_may_belong_to_sequences_of_two_teams():
    game = SequenceGame(num_teams=3, sequences_to_win=2)
    board = rows("XAAAA.....", "B.........", "B.........", "B.........", "..........")
    state = from_text(game, board, hands={1: ["JD"]}, player=1, sequences={0: [[0, 1, 2, 3, 4]]})
    place_wild(state, 4, 0)
    assert state.sequences[1] == [[0, 10, 20, 30, 40]]


def test_sequences_of_one_team_may_share_one_chip_but_not_two():
    game = SequenceGame(sequences_to_win=3)
    first = [sq(1, c) for c in range(5)]
    # a crossing column through r1c2 shares one chip: counts
    board = rows(".", "AAAAA.....", "..A.......", "..A.......", "..A.......")
    state = from_text(game, board, hands={0: ["JD"]}, sequences={0: [first]})
    place_wild(state, 5, 2)
    assert len(state.sequences[0]) == 2
    # six along the same row sharing four chips: does not count
    state = from_text(game, rows(".", "AAAAA....."), hands={0: ["JD"]}, sequences={0: [first]})
    place_wild(state, 1, 5)
    assert len(state.sequences[0]) == 1


def test_locked_chips_cannot_be_removed_but_the_extension_can():
    game = SequenceGame()
    first = [sq(1, c) for c in range(5)]
    state = from_text(game, rows(".", "BBBBBB...."), hands={0: ["JS"]}, sequences={1: [first]})
    mask = state.legal_mask()[REMOVE:DEAD]
    assert not any(mask[s] for s in first)
    assert mask[sq(1, 5)]


def test_first_team_to_reach_the_target_wins_at_once_and_team_mates_share_the_result():
    env = envs.sequence_v0.raw_env(players_per_team=2)
    env.reset(seed=0)
    game = env.unwrapped.game
    # seat 2 plays for team 0 (2 % 2); each team already has one sequence
    state = from_text(game, rows(".", "AAAA......", ".", "BBBBB.....", ".", "AAAAA....."), hands={2: ["JD"]},
                      player=2, sequences={0: [[sq(5, c) for c in range(5)]], 1: [[sq(3, c) for c in range(5)]]})
    saved = game.save(state)
    env.reset(options={"state": saved})
    assert env.agent_selection == "player_2"
    env.step(WILD + sq(1, 4))
    assert all(env.terminations.values())
    assert env.rewards == {"player_0": 1.0, "player_1": -1.0, "player_2": 1.0, "player_3": -1.0}


# --------------------------------------------------------------------------------------------
# Hidden information and the observation


def test_observation_and_view_ignore_other_hands_and_deck_order():
    game = SequenceGame(players_per_team=2)
    state = game.new_initial_state(3)
    rng = random.Random(1)
    for _ in range(12):
        state.apply_action(rng.choice(state.legal_actions()))
    for seat in range(4):
        other = state.clone()
        pool = [k for p in range(4) if p != seat for k in other.hands[p]] + other.deck
        rng.shuffle(pool)
        for p in range(4):
            if p != seat:
                n = len(other.hands[p])
                other.set_hand(p, pool[:n])
                pool = pool[n:]
        other.deck = pool
        assert other.hands != state.hands  # something hidden did change
        assert np.array_equal(game.observe(other, seat), game.observe(state, seat))
        assert other.player_view(seat) == state.player_view(seat)


def test_observation_layout_from_the_acting_seats_point_of_view():
    game = SequenceGame(num_teams=3)
    state = from_text(game, rows(".ABC......"), hands={1: ["5D", "5D", "JH"]}, player=1)
    obs = game.observe(state, 1)
    assert obs.shape == (OBS_SIZE,)
    assert obs[1] == 0 and obs[2] == 1  # own team (B) plane
    assert obs[100 + 3] == 1  # next team (C)
    assert obs[200 + 1] == 1  # team after next (A)
    assert all(obs[300 + c] == 1 for c in (0, 9, 90, 99))
    assert obs[600 + kind("5D")] == 1.0 and obs[600 + kind("JH")] == 0.5
    assert obs.min() >= 0 and obs.max() <= 1


def test_state_saves_to_json_and_restores_exactly_mid_game():
    game = SequenceGame(num_teams=3)
    state = game.new_initial_state(9)
    rng = random.Random(0)
    for _ in range(40):
        state.apply_action(rng.choice(state.legal_actions()))
    restored = game.load(json.loads(json.dumps(game.save(state))))
    for _ in range(60):
        if state.is_terminal():
            break
        a = rng.choice(state.legal_actions())
        state.apply_action(a)
        restored.apply_action(a)
        assert restored.to_dict() == state.to_dict()


def test_tampered_save_is_rejected_by_the_invariant_check():
    game = SequenceGame()
    saved = json.loads(json.dumps(game.save(game.new_initial_state(0))))
    saved["state"]["hands"][0].append(kind("5D"))  # a third 5D appears from nowhere
    with pytest.raises(ValueError, match="cards not conserved"):
        game.load(saved)


def test_a_new_line_may_cross_two_older_sequences_once_each():
    game = SequenceGame(sequences_to_win=3)
    top = [sq(1, c) for c in range(5)]
    bottom = [sq(5, c) for c in range(5)]
    board = rows(".", "AAAAA", "..A", "...", "..A", "AAAAA")
    state = from_text(game, board, hands={0: ["JD"]}, sequences={0: [top, bottom]})
    place_wild(state, 3, 2)  # column 2, rows 1..5, shares r1c2 with one and r5c2 with the other
    assert state.sequences[0][2] == [sq(r, 2) for r in range(1, 6)]
    assert state.winner == 0

"""Scenario tests for Il Labirinto del Dojo: one per rule and edge case.

Positions are drawn as small pictures of the standard board (``"4,0: 0 . . 1"`` = row 4 from
column 0 eastwards, seat 0 on (4,0), seat 1 on (4,3)); the picture is checked against the board.
Dice are scripted: the move's two dice first, then each Kumite's attacker and defender dice.
"""

from __future__ import annotations

import json

import pytest

from envs.core import IllegalActionError
from envs.dojo.board import sq
from envs.dojo.cards import (
    COLPO, INTENSIVO, IRIMI, KAESHI, KIAI, MEDITAZIONE, PASSO_FALSO_CARD, PESO, SENSEI, SFIDA_CARD,
    TSUGI_ASHI, TUNNEL_SEGRETO, UKE,
)
from envs.dojo.rules import A_KEEP, A_SEGRETO, A_TUNNEL, SEAT_CORNERS
from dojo_helpers import A_PASS, A_PLAY, A_ROOM, N, S, game, pocket_board, position, target, walk


def legal_steps(state):
    return {"NESW"[a] for a in state.legal_actions() if a < 4}


# ---- movement and Kumite ------------------------------------------------------------------------
def test_kumite_on_last_step_senshu_equal_belts_and_owner_chooses_start_square():
    st = position("4,0: 0 . . 1", dice=[1, 2, 3, 3])
    walk(st, "EEE")  # ends on seat 1: Kumite, dice 3 v 3, tie goes to the attacker
    assert st.track[:2] == [3, 0]
    assert st.phase == "place" and st.current_player() == 1  # the loser's owner chooses, out of turn
    assert st.pos[1] == -1
    st.apply_action(A_ROOM + 8)
    assert st.pos[1] == game().board.rooms[SEAT_CORNERS[4][1]][8]
    assert st.turn_player == 1 and st.pos[0] == sq(4, 3)


def test_chain_kumite_and_higher_belt_wins_nothing():
    st = position("4,0: 0 1 2 .", dice=[1, 2, 5, 1, 5, 1])
    walk(st, "E")
    st.apply_action(A_ROOM)  # seat 1 back to Start
    assert st.track[0] == 3 and st.phase == "move" and st.mv_steps == 2
    walk(st, "E")  # Yellow beats White: the higher belt gains nothing
    st.apply_action(A_ROOM)
    assert st.track[:3] == [3, 0, 0]
    walk(st, "E")
    assert st.pos[0] == sq(4, 3) and st.turn_player == 1


def test_leaving_a_shared_square_starts_no_kumite():
    st = position("4,0: 0 . . .", dice=[1, 1])
    st.pos[1] = sq(4, 0)
    walk(st, "EE")
    assert st.stats["kumite"] == 0 and st.track == [0, 0, 0, 0]


def test_fatica_costs_before_the_kumite_on_the_same_square():
    # seat 0 (Yellow, 3) steps onto the Fatica holding seat 1 (Yellow): drops to White first,
    # so seat 1 fights with +1 and wins 4+1 against 4.
    st = position("4,2: 0 . 1", tracks=[3, 3, 0, 0], dice=[1, 1, 4, 4])
    walk(st, "EE")
    assert st.track[:2] == [2, 3]  # higher belt won: no track change beyond the Fatica
    assert st.phase == "place" and st.current_player() == 0


def test_belt_bonus_is_capped_at_two_and_an_upset_moves_three_stripes():
    st = position("4,0: 0 1", tracks=[15, 0, 0, 0], dice=[1, 1, 1, 4])
    walk(st, "E")  # Brown 1+2 = 3 against White 4: upset
    assert st.track[:2] == [12, 3]
    assert st.current_player() == 0 and st.phase == "place"


def test_safe_room_no_kumite_and_pawns_share():
    st = position("3,1: 0", dice=[1, 1])
    st.pos[1] = sq(1, 1)
    walk(st, "NN")  # into Safe Room 0 onto seat 1: no Kumite, no extra step
    assert st.pos[0] == st.pos[1] == sq(1, 1)
    assert st.stats["kumite"] == 0 and st.turn_player == 1


def test_first_round_pass_through_and_extra_step():
    st = position("4,0: 0 . 1 .", dice=[1, 1], first_round=True)
    walk(st, "EE")  # ends on seat 1, who cannot be fought yet: one extra step
    assert st.phase == "move" and st.mv_steps == 1 and st.stats["kumite"] == 0
    walk(st, "E")
    assert st.pos[0] == sq(4, 3) and st.turn_player == 1
    st = position("4,0: 0 . 1 .", dice=[1, 2], first_round=True)
    walk(st, "EEE")  # passing through in the first round
    assert st.stats["kumite"] == 0 and st.pos[0] == sq(4, 3)


def test_kumite_first_round_switch():
    st = position("4,0: 0 . 1 .", dice=[1, 1, 3, 3], first_round=True, config={"kumite_first_round": True})
    walk(st, "EE")
    assert st.stats["kumite"] == 1 and st.track[0] == 3


def test_meditating_pawn_is_passed_and_forces_the_extra_step():
    st = position("4,0: 0 . 1 .", dice=[1, 1], meditating=(1,))
    walk(st, "EE")
    assert st.phase == "move" and st.mv_extra and st.stats["kumite"] == 0


def test_uke_defender_stays_attacker_continues_and_takes_extra_step():
    st = position("4,0: 0 . . 1", dice=[1, 2, 6, 1], hands={1: [UKE]}, tracks=[3, 3, 0, 0])
    walk(st, "EEE")
    assert st.phase == "tecnica" and st.current_player() == 1  # the defender decides out of turn
    st.apply_action(A_PLAY)
    assert st.track[:2] == [6, 0]  # the track change still applies
    assert st.pos[1] == sq(4, 3)  # not sent to Start
    assert st.phase == "move" and st.mv_extra  # ends on a pawn it cannot fight: extra step
    assert 1 in st.discard and st.hands[1] == []


def test_uke_attacker_returns_to_previous_square_without_effect_and_turn_ends():
    st = position("5,2: 0 A 1", dice=[1, 1, 1, 6], hands={0: [UKE]}, tracks=[3, 3, 0, 0])
    walk(st, "EE")
    assert st.phase == "tecnica" and st.current_player() == 0
    st.apply_action(A_PLAY)
    assert st.pos[0] == sq(5, 3) and st.track[:2] == [0, 6]  # no Allenamento stripe
    assert st.turn_player == 1


def test_kaeshi_rerolls_at_once_and_defender_decides_seeing_it_then_kiai():
    st = position("4,0: 0 1", dice=[1, 1, 1, 5, 6], hands={0: [KAESHI], 1: [KIAI]})
    walk(st, "E")
    st.apply_action(A_PLAY)
    assert st.k_dice == [6, 5] and st.phase == "tecnica" and st.current_player() == 1
    st.apply_action(A_PLAY)  # Kiai: 5 + 2 = 7 beats 6
    assert st.track[:2] == [0, 3] and st.current_player() == 0 and st.phase == "place"


def test_kiai_bonus_switch_one():
    st = position("4,0: 0 1", dice=[1, 1, 6, 5], hands={1: [KIAI]}, config={"kiai_bonus": 1})
    walk(st, "E")
    st.apply_action(A_PLAY)  # 5 + 1 = 6 ties 6: Senshu, the attacker wins
    assert st.track[:2] == [3, 0]


def test_tecnica_only_in_the_window_and_pass():
    st = position("4,0: 0 1", dice=[1, 1, 6, 1], hands={0: [KIAI]})
    assert A_PLAY not in st.legal_actions()
    walk(st, "E")
    assert set(st.legal_actions()) == {A_PASS, A_PLAY}
    st.apply_action(A_PASS)
    assert st.hands[0] == [KIAI]


# ---- squares -------------------------------------------------------------------------------------
def test_allenamento_and_fatica_when_walking_and_stopping():
    st = position("5,1: 0 . A", dice=[1, 1])
    walk(st, "EE")
    assert st.track[0] == 1
    st = position("4,2: 0 . F .", tracks=[5, 0, 0, 0], dice=[1, 2])
    walk(st, "EE")
    assert st.track[0] == 4  # stepping onto it costs 1 at once
    walk(st, "N")
    assert st.track[0] == 4  # and nothing more later
    st = position("4,2: 0 . F", tracks=[5, 0, 0, 0], dice=[1, 1])
    walk(st, "EE")
    assert st.track[0] == 4  # stopping on it costs nothing more


def test_fatica_on_stop_only_switch():
    cfg = {"fatica_on_stop_only": True}
    st = position("4,2: 0 . F .", tracks=[5, 0, 0, 0], dice=[1, 2], config=cfg)
    walk(st, "EEN")
    assert st.track[0] == 5
    st = position("4,2: 0 . F", tracks=[5, 0, 0, 0], dice=[1, 1], config=cfg)
    walk(st, "EE")
    assert st.track[0] == 4


def test_tunnel_is_optional_exit_has_no_effect_and_occupied_exit_fights():
    st = position("3,1: 0 . T", dice=[1, 1])
    walk(st, "EE")
    assert st.phase == "tunnel" and set(st.legal_actions()) == {A_PASS, A_TUNNEL}
    st.apply_action(A_TUNNEL)
    assert st.pos[0] == sq(12, 12) and st.turn_player == 1  # exit square (a Tunnel) has no effect
    st = position("3,1: 0 . T", dice=[1, 1])
    walk(st, "EE")
    st.apply_action(A_PASS)
    assert st.pos[0] == sq(3, 3)
    st = position("3,1: 0 . T", dice=[1, 1, 4, 2])
    st.pos[2] = sq(12, 12)
    walk(st, "EE")
    st.apply_action(A_TUNNEL)
    assert st.track[0] == 3 and st.phase == "place" and st.current_player() == 2


def test_tunnel_exit_with_meditating_or_first_round_pawn_cannot_be_used():
    st = position("3,1: 0 . T", dice=[1, 1], meditating=(2,))
    st.pos[2] = sq(12, 12)
    walk(st, "EE")
    assert st.phase != "tunnel" and st.turn_player == 1
    st = position("3,1: 0 . T", dice=[1, 1], first_round=True)
    st.pos[2] = sq(12, 12)
    walk(st, "EE")
    assert st.phase != "tunnel" and st.turn_player == 1


def test_passo_falso_square_returns_to_move_start():
    st = position("7,1: 0 . P", dice=[1, 1])
    walk(st, "EE")
    assert st.pos[0] == sq(7, 1) and st.turn_player == 1


def test_sfida_square_must_fight_chosen_opponent_outside_safe_areas():
    st = position("5,3: 0 . K", dice=[1, 1, 5, 2])
    st.pos[1] = sq(4, 0)
    walk(st, "EE")
    assert st.phase == "target"
    assert st.legal_actions() == [target(st, 1)]  # seats 2 and 3 are in their Safe Rooms
    st.apply_action(target(st, 1))
    assert st.track[:2] == [3, 0] and st.current_player() == 1 and st.phase == "place"
    st = position("5,3: 0 . K", dice=[1, 1])
    walk(st, "EE")
    assert st.turn_player == 1 and st.stats["kumite"] == 0  # no target: nothing happens


def test_sfida_with_uke_attacker_loses_and_stays():
    st = position("5,3: 0 . K", dice=[1, 1, 1, 6], hands={0: [UKE]})
    st.pos[1] = sq(4, 0)
    walk(st, "EE")
    st.apply_action(target(st, 1))
    st.apply_action(A_PLAY)
    assert st.pos[0] == sq(5, 5) and st.turn_player == 1


# ---- Nebbia del Dojo -----------------------------------------------------------------------------
def draw(card, **kw):
    """Seat 0 walks (5,3) -> (5,1), the Nebbia square, and draws ``card``."""
    kw.setdefault("dice", [1, 1])
    st = position("5,0: . ? . 0", deck_top=[card], **kw)
    walk(st, "WW")
    return st


def test_tecnica_kept_secret_and_second_one_discarded_face_down():
    st = draw(UKE, hands={0: [KIAI]})
    assert st.phase == "keep" and set(st.legal_actions()) == {A_KEEP + 0, A_KEEP + 1}
    st.apply_action(A_KEEP + 1)  # keep Uke
    assert st.hands[0] == [UKE] and st.discard[-1] == KIAI and st.discard_owner[-1] == 0
    assert st.player_view(0)["discard"][-1] == KIAI
    assert st.player_view(1)["discard"][-1] is None
    assert st.player_view(1)["hands"][0] == 1  # others see only that seat 0 holds one


def test_tsugi_ashi_has_its_own_start_square_for_passo_falso():
    st = draw(TSUGI_ASHI, dice=[1, 1, 1, 3])
    assert st.phase == "move" and st.mv_start == sq(5, 1) and st.mv_steps == 4
    walk(st, "SSEE")  # (7,3) is Passo Falso
    assert st.pos[0] == sq(5, 1)


def test_tunnel_segreto_choice_excludes_meditating_exits():
    st = draw(TUNNEL_SEGRETO, meditating=(1,))
    st2 = draw(TUNNEL_SEGRETO)
    assert st2.phase == "segreto" and len(st2.legal_actions()) == 4
    st.pos[1] = sq(12, 12)
    st.set_legal_mask(None)
    tunnels = st.game.board.tunnels
    assert A_SEGRETO + tunnels.index(sq(12, 12)) not in st.legal_actions()
    st.apply_action(A_SEGRETO + tunnels.index(sq(3, 12)))
    assert st.pos[0] == sq(3, 12) and st.turn_player == 2  # meditating seat 1 is skipped


def test_irimi_swaps_without_kumite_or_square_effect():
    st = position("5,0: 1 ? . 0", deck_top=[IRIMI], dice=[1, 1], first_round=True)
    walk(st, "WW")
    assert st.legal_actions() == [target(st, 1)]  # Irimi still works in the first round
    st2 = position("5,0: . ? . 0", deck_top=[IRIMI], dice=[1, 1])
    st2.pos[1] = sq(5, 3)  # (5,3) is Allenamento
    walk(st2, "WW")
    assert st2.legal_actions() == [target(st2, 1)]
    st2.apply_action(target(st2, 1))
    assert st2.pos[0] == sq(5, 3) and st2.pos[1] == sq(5, 1)
    assert st2.track[:2] == [0, 0] and st2.stats["kumite"] == 0
    assert draw(IRIMI).turn_player == 1  # nobody outside a Safe Room: nothing happens


def test_moved_onto_an_occupied_square_takes_a_quiet_extra_step():
    st = position("5,0: . ? . 0", deck_top=[IRIMI], dice=[1, 1], meditating=(2,))
    st.pos[1] = sq(5, 3)
    st.pos[2] = sq(5, 3)
    walk(st, "WW")
    st.apply_action(target(st, 1))  # seat 0 lands on (5,3) with meditating seat 2
    assert st.phase == "settle" and st.current_player() == 0
    st.apply_action(N)
    assert st.pos[0] == sq(4, 3) and st.stats["kumite"] == 0 and st.turn_player == 1


def test_sfida_card_and_no_target_in_first_round():
    st = draw(SFIDA_CARD, dice=[1, 1, 6, 1])
    assert st.turn_player == 1  # nobody outside Safe Rooms
    st = position("5,0: 1 ? . 0", deck_top=[SFIDA_CARD], dice=[1, 1, 6, 1])
    walk(st, "WW")
    st.apply_action(target(st, 1))
    assert st.track[:2] == [3, 0]
    st = position("5,0: 1 ? . 0", deck_top=[SFIDA_CARD], dice=[1, 1], first_round=True)
    walk(st, "WW")
    assert st.turn_player == 1 and st.stats["kumite"] == 0


def test_global_events_count_everyone_including_drawer_and_safe_rooms():
    st = draw(SENSEI, tracks=[0, 0, 5, 7])
    assert st.track == [2, 2, 5, 7]
    st = draw(PESO, tracks=[9, 9, 5, 7])
    assert st.track == [8, 8, 5, 7]


def test_simple_stripe_cards_and_passo_falso_card():
    assert draw(INTENSIVO).track[0] == 1
    assert draw(COLPO, tracks=[4, 0, 0, 0]).track[0] == 3
    assert draw(COLPO).track[0] == 0  # never below 0
    assert draw(PASSO_FALSO_CARD).pos[0] == sq(5, 3)


def test_meditazione_skips_next_turn_and_protects_until_then():
    st = draw(MEDITAZIONE)
    assert st.med_skip[0] and st.med_guard[0] and st.turn_player == 1
    for seat in (1, 2, 3):  # let the others play out their turns at random until seat 0's turn
        while st.turn_player == seat and not st.is_terminal():
            assert st.med_guard[0]
            st.apply_action(st.legal_actions()[0])
    assert st.turn_player == 1 and not st.med_guard[0] and not st.med_skip[0]


def test_reshuffle_keeps_held_cards_out():
    g = game()
    from envs.dojo.rules import from_position

    st = from_position(g, {0: sq(5, 3)}, hands={1: [KIAI]}, dice=[1, 1], begin=False)
    st.discard = list(st.deck)
    st.discard_owner = [-1] * len(st.discard)
    st.deck = []
    st.begin_turn()
    walk(st, "WW")
    assert len(st.deck) + len(st.discard) + len(st.hands[0]) == 21 and st.hands[1] == [KIAI]
    assert not st.check_invariants()


# ---- Dojo and Final Exam -------------------------------------------------------------------------
def exam(config=None, tracks=(15, 10, 10, 0), dice=(2, 3, 5, 4), **kw):
    st = position("4,7: 0", tracks=list(tracks), dice=list(dice), config=config, **kw)
    walk(st, "S")
    assert "S" in legal_steps(st)
    st.apply_action(S)  # into the Dojo with steps to spare: the move ends at once
    return st


def test_only_brown_may_enter_the_dojo():
    st = position("4,7: 0", tracks=[14, 0, 0, 0], dice=[2, 3])
    walk(st, "S")
    assert "S" not in legal_steps(st)


def test_exam_defender_tie_challenger_chooses_and_black_belt_bonus_senshu():
    st = exam()
    assert st.phase == "target" and set(st.legal_actions()) == {target(st, 1), target(st, 2)}
    st.apply_action(target(st, 2))  # 5 v 4+1: tie, Senshu: the challenger wins
    assert st.is_terminal() and st.returns() == [1.0, -1 / 3, -1 / 3, -1 / 3]
    assert abs(sum(st.returns())) < 1e-9


def test_exam_lost_costs_three_and_start():
    st = exam(tracks=(15, 10, 0, 0), dice=(2, 3, 3, 4))  # seat 1 defends from its Safe Room
    assert st.is_terminal() is False and st.track[0] == 12
    assert st.phase == "place" and st.current_player() == 0
    assert st.stats["exam_attempts"] == 1


def test_exam_switches():
    st = exam({"exam_ties_to_defender": True}, tracks=(15, 10, 0, 0))
    assert not st.is_terminal() and st.track[0] == 12
    st = exam({"failed_exam_cost": 1}, tracks=(15, 10, 0, 0), dice=(2, 3, 1, 4))
    assert st.track[0] == 14
    st = exam({"exam_defender_own_belt": True}, tracks=(15, 10, 0, 0), dice=(2, 3, 2, 4))
    assert st.is_terminal()  # Brown v Green: +2 for the challenger, 4 v 4
    st = exam({"exam_best_of_three": True}, tracks=(15, 10, 0, 0), dice=(2, 3, 6, 1, 1, 6, 6, 1))
    assert st.is_terminal() and st.stats["kumite"] == 3


def test_exam_uke_returns_to_entry_square():
    st = exam(tracks=(15, 10, 0, 0), dice=(2, 3, 1, 6), hands={0: [UKE]})
    st.apply_action(A_PLAY)
    assert st.pos[0] == sq(5, 7) and st.track[0] == 12 and st.turn_player == 1


def test_exam_meditating_cannot_defend():
    st = exam(tracks=(15, 12, 10, 0), dice=(2, 3, 6, 1), meditating=(1,))
    assert st.is_terminal()  # seat 2 defended
    st = position("4,7: 0", tracks=[15, 3], dice=[2, 3], config={"num_players": 2}, meditating=(1,))
    walk(st, "SS")
    assert st.pos[0] == sq(5, 7) and st.stats["exam_attempts"] == 0 and st.turn_player == 0


def test_dojo_opens_mid_move_after_kumite_win():
    st = position("3,7: 0", tracks=[12, 12, 0, 0], dice=[1, 2, 6, 1])
    st.pos[1] = sq(4, 7)
    walk(st, "S")
    st.apply_action(A_ROOM)
    assert st.track[0] == 15
    walk(st, "S")
    assert "S" in legal_steps(st)


def test_dojo_closes_mid_move_after_fatica():
    st = position("4,7: . . F 0", tracks=[15, 0, 0, 0], dice=[3, 3])
    walk(st, "WWWS")
    assert st.track[0] == 14 and st.pos[0] == sq(5, 7)
    assert "S" not in legal_steps(st)


def test_no_pawn_remains_in_the_dojo():
    st = exam(tracks=(15, 10, 0, 0), dice=(2, 3, 3, 4))
    st.apply_action(A_ROOM)
    assert all(not st.game.board.dojo[s] for s in st.pos if s >= 0)


# ---- setup, seats, rewards ----------------------------------------------------------------------
def test_corner_table_never_puts_corner_mates_in_a_row():
    for n, corners in SEAT_CORNERS.items():
        assert len(corners) == n
        for i in range(n):
            assert corners[i] != corners[(i + 1) % n]


def test_setup_first_player_random_and_start_squares_chosen_clockwise():
    g = game()
    firsts = {g.new_initial_state(seed).first_player for seed in range(30)}
    assert firsts == {0, 1, 2, 3}
    st = g.new_initial_state(5)
    order = []
    while st.phase == "setup":
        order.append(st.current_player())
        st.apply_action(A_ROOM + 4)
    f = st.first_player
    assert order == [(f + i) % 4 for i in range(4)]
    assert st.turn_player == f and st.phase == "move"


def test_starting_track():
    assert game().new_initial_state(0).track == [0] * 4
    assert game(num_players=6).new_initial_state(0).track == [3] * 6
    assert game(short_game=True).new_initial_state(0).track == [3] * 4
    st = game(first_player_extra_stripe=True).new_initial_state(0)
    assert sorted(st.track) == [0, 0, 0, 1] and st.track[st.first_player] == 1


def test_illegal_action_names_phase_and_player():
    st = position("4,0: 0", dice=[1, 1])
    with pytest.raises(IllegalActionError, match="phase 'move'"):
        st.apply_action(A_PLAY)


def test_save_restore_with_pending_placement():
    st = position("4,0: 0 . . 1", dice=[1, 2, 3, 3])
    walk(st, "EEE")
    g = st.game
    back = g.load(json.loads(json.dumps(g.save(st))))
    assert back.to_dict() == st.to_dict() and back.phase == "place"
    back.apply_action(A_ROOM + 1)
    st.apply_action(A_ROOM + 1)
    assert back.to_dict() == st.to_dict()


# ---- moved pawns, tunnel fights --------------------------------------------------------------------
def test_tunnel_segreto_onto_an_opponent_starts_a_kumite():
    st = position("5,0: . ? . 0", deck_top=[TUNNEL_SEGRETO], dice=[1, 1, 5, 2])
    st.pos[2] = sq(12, 12)
    walk(st, "WW")
    st.apply_action(A_SEGRETO + st.game.board.tunnels.index(sq(12, 12)))
    assert st.track[0] == 3 and st.phase == "place" and st.current_player() == 2


def test_uke_saved_defender_at_tunnel_exit_makes_the_attacker_settle():
    st = position("3,1: 0 . T", dice=[1, 1, 5, 2], hands={2: [UKE]})
    st.pos[2] = sq(12, 12)
    walk(st, "EE")
    st.apply_action(A_TUNNEL)
    st.apply_action(A_PLAY)  # seat 2's Uke: it stays on the exit
    assert st.pos[2] == sq(12, 12) and st.phase == "settle" and st.current_player() == 0


def test_passo_falso_onto_a_shared_square_settles_without_square_effect():
    st = position("7,1: 0 . P", dice=[1, 1], meditating=(1,))
    st.pos[1] = sq(7, 1)
    walk(st, "EE")  # Passo Falso: back to (7,1), where meditating seat 1 stands
    assert st.phase == "settle" and st.current_player() == 0
    st.apply_action(S)  # onto (8,1), an Allenamento: moved pawns trigger nothing
    assert st.pos[0] == sq(8, 1) and st.track[0] == 0 and st.turn_player == 2


def test_tsugi_ashi_drawn_during_tsugi_ashi_chains():
    st = position("5,0: . ? . 0", deck_top=[TSUGI_ASHI, TSUGI_ASHI], dice=[1, 1, 3, 3, 1, 1])
    walk(st, "WW")  # first Tsugi-ashi: a move of 6 from (5,1)
    walk(st, "EEEENE")  # ... ending on the Nebbia square (4,6): the second Tsugi-ashi
    assert st.phase == "move" and st.mv_start == sq(4, 6) and st.mv_steps == 2 and st.turn_player == 0


def test_exam_nobody_can_defend_return_takes_the_extra_step_off_a_shared_square():
    # 2 players, seat 1 meditates on the entry square (5,7): seat 0 walks through it, steps into
    # the Dojo, nobody can defend, so it goes back to (5,7) and must step off the meditating pawn
    st = position("4,7: 0\n5,7: 1", tracks=[15, 3], dice=[2, 3], config={"num_players": 2}, meditating=(1,))
    walk(st, "SS")
    assert st.stats["exam_attempts"] == 0 and st.stats["kumite"] == 0
    assert st.pos[0] == sq(5, 7) and st.phase == "settle" and st.current_player() == 0
    assert legal_steps(st) == {"N", "E"}  # never back into the Dojo
    st.apply_action(S - 2)  # N
    assert st.pos[0] == sq(4, 7) and st.track[0] == 15  # moved, not walked: no square effect
    assert st.pos[0] != st.pos[1]
    assert st.turn_player == 0 and st.phase == "move"  # seat 1's turn is skipped (Meditazione)
    assert not st.check_invariants()


# ---- The Dojo closing part-way through a walk, on a user's board ---------------------------------
def test_move_mask_knows_a_fatica_closes_the_dojo_part_way(tmp_path):
    board_file = pocket_board(tmp_path)
    # Brown at 15 with 2 steps: stepping onto the Fatica (5,7) costs the stripe that closes the
    # Dojo, and from the pocket no second step exists, so S does not begin a longest walk
    st = position("4,7: 0", tracks=[15, 0, 0, 0], dice=[1, 1], config={"board_file": board_file})
    assert st.mv_steps == 2 and st.game.board.kind[sq(5, 7)] == 2
    assert "S" not in legal_steps(st) and legal_steps(st)
    # at 16 the stripe leaves it Brown: S then S into the Dojo is a complete walk
    st = position("4,7: 0", tracks=[16, 0, 0, 0], dice=[1, 1, 6, 1], config={"board_file": board_file})
    assert "S" in legal_steps(st)
    walk(st, "S")
    assert st.track[0] == 15 and legal_steps(st) == {"S"}
    walk(st, "S")
    assert st.phase == "target" and st.purpose == "exam"  # in: the challenger picks its examiner
    # with fatica_on_stop_only walking costs nothing: the Dojo stays open all walk
    st = position("4,7: 0", tracks=[15, 0, 0, 0], dice=[1, 1],
                  config={"board_file": board_file, "fatica_on_stop_only": True})
    assert "S" in legal_steps(st)


def test_longest_walk_through_a_fatica_that_closes_the_dojo_is_not_offered(tmp_path):
    from envs.dojo.rules import WalkOracle, dojo_reach

    board_file = pocket_board(tmp_path)
    g = game(board_file=board_file)
    oracle = WalkOracle(g.board)
    s, bit = sq(4, 7), g.board.bit
    assert dojo_reach(14) == 0 and dojo_reach(15) == 1 and dojo_reach(17) == 3
    assert dojo_reach(15, fatica_on_stop_only=True) > 12
    # from the pocket, one step left: complete only while the Dojo is still open there
    assert oracle.walk(sq(5, 7), 1, bit[s] | bit[sq(5, 7)], 1)
    assert not oracle.walk(sq(5, 7), 1, bit[s] | bit[sq(5, 7)], 0)
    assert 2 not in oracle.step_dirs(s, 2, bit[s], dojo_reach(15))
    assert 2 in oracle.step_dirs(s, 2, bit[s], dojo_reach(16))

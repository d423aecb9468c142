"""Scenario tests for Wizard Arena: one per rule, each built from a drawn position.

Battles and challenges are made certain by strength: a side of strength a (tenths) can never win a
bout against b when 20·a < b (its best roll is below the other's worst), so outcomes are exact.
"""

from __future__ import annotations

import json
import random

import numpy as np
import pytest

from envs.core import IllegalActionError
from envs.wizard_arena.game import CHANNELS, LOCAL_RADIUS, OWN_FEATURES, WizardArenaGame
from envs.wizard_arena.rules import (
    ALLY,
    ALLY_ACCEPT,
    C_START_HP,
    ALLY_DECLINE,
    CHALLENGE,
    GARY,
    MOVE,
    NO_CHALLENGE,
    OVER,
    REWARD,
    REWARD_HEALTH,
    REWARD_SCORE,
    REWARD_STRENGTH,
    STAY,
    from_text,
    rank_rewards,
)

N, NE, E, SE, S, SW, W, NW = range(8)


def build(text, n, bots=None, parties=(), dead=(), turn=0, seed=0, **config):
    rows = [r.strip() for r in text.strip().splitlines() if r.strip()]
    game = WizardArenaGame(num_bots=n, map_size=len(rows), **config)
    state = from_text(game, text, bots=bots, parties=parties, dead=dead, turn=turn, seed=seed)
    assert state.check_invariants() == []
    return state


def cell(state, r, c):
    return r * state.map.size + c


def act(state, *actions):
    for a in actions:
        state.apply_action(a)
        assert state.check_invariants() == [], state.check_invariants()


# ---------------------------------------------------------------------------------------------
# Movement and the squeeze
SQUEEZE_MAP = """
......
.M....
.0F...
......
..@...
.....1
"""


def test_solo_squeeze_costs_a_tenth():
    s = build(SQUEEZE_MAP, 2)
    act(s, NE)
    assert s.pos[0] == cell(s, 1, 2)
    assert s.strength[0] == 9
    assert s.current_player() == 1 and s.phase == MOVE


def test_move_along_an_obstacle_edge_is_free():
    s = build(SQUEEZE_MAP, 2)
    act(s, SE)  # diagonal with only the forest side blocked
    assert s.pos[0] == cell(s, 3, 2)
    assert s.strength[0] == 10
    s = build(SQUEEZE_MAP, 2, turn=1)
    act(s, N)  # orthogonal step
    assert s.strength[1] == 10


def test_squeeze_never_drops_strength_below_a_tenth():
    s = build(SQUEEZE_MAP, 2, bots={0: {"strength": 0.1}})
    act(s, NE)
    assert s.strength[0] == 1


def test_obstacles_and_bots_block_and_the_edge_is_closed():
    s = build(SQUEEZE_MAP, 2)
    mask = s.legal_mask()
    assert mask[N] == 0 and mask[E] == 0  # mountain, forest
    assert mask[STAY] == 1 and mask[W] == 1
    s = build("""
    0.....
    1.....
    ......
    ......
    ..@...
    ......
    """, 2)
    mask = s.legal_mask()
    assert mask[N] == mask[NE] == mask[W] == mask[NW] == mask[SW] == 0  # off the map
    assert mask[S] == 0  # bot 1 stands there
    with pytest.raises(IllegalActionError, match="move S"):
        s.apply_action(S)


def test_party_squeeze_costs_leader_two_tenths_then_each_follower_one_at_the_corner():
    s = build("""
    ......
    .M....
    .0F...
    .1....
    ......
    ....@2
    """, 3, parties=[[0, 1]])
    act(s, NE)
    assert (s.strength[0], s.strength[1]) == (8, 10)  # follower stepped N, no squeeze yet
    assert s.pos[1] == cell(s, 2, 1)
    act(s, STAY)  # bot 2's turn (Gary is adjacent: it leaves him)
    assert s.phase == GARY
    act(s, NO_CHALLENGE)
    act(s, N)  # leader on; the follower now passes the same corner
    assert s.pos[1] == cell(s, 1, 2)
    assert (s.strength[0], s.strength[1]) == (8, 9)


def test_followers_walk_single_file_in_the_leaders_footsteps():
    s = build("""
    ......
    ......
    210...
    ......
    ......
    .@...3
    """, 4, parties=[[0, 1, 2]])
    before = [s.pos[0], s.pos[1]]
    act(s, S)
    assert s.pos[0] == cell(s, 3, 2)
    assert [s.pos[1], s.pos[2]] == before
    act(s, STAY)  # bot 3
    assert s.current_player() == 0  # followers never act
    act(s, E)
    assert [s.pos[0], s.pos[1], s.pos[2]] == [cell(s, 3, 3), cell(s, 3, 2), cell(s, 2, 2)]


# ---------------------------------------------------------------------------------------------
# Alliances
ALLY_MAP = """
......
......
.0.1..
......
......
@....2
"""


def test_two_solos_ally_only_if_both_accept_and_the_stronger_leads():
    s = build(ALLY_MAP, 3, bots={1: {"strength": 1.5}})
    act(s, E)
    assert s.phase == ALLY and s.current_player() == 0
    act(s, ALLY_ACCEPT)
    assert s.phase == ALLY and s.current_player() == 1  # the other decides out of turn
    act(s, ALLY_ACCEPT)
    assert s.parties == {1: [1, 0]}
    assert s.phase == MOVE and s.current_player() == 1  # 0 now follows; its leader is next


@pytest.mark.parametrize("bots,leader", [
    ({0: {"score": 3}}, 0),
    ({1: {"score": 3}}, 1),
    ({}, 0),  # equal strength and score: the earlier seat leads
    ({0: {"strength": 1.2, "score": 0}, 1: {"score": 5}}, 0),  # strength before score
])
def test_alliance_leader_is_stronger_then_higher_score_then_earlier_seat(bots, leader):
    s = build(ALLY_MAP, 3, bots=bots)
    act(s, E, ALLY_ACCEPT, ALLY_ACCEPT)
    assert list(s.parties) == [leader]
    assert s.parties[leader] == [leader, 1 - leader]


# alliance_tie_break: who leads two solos equal in strength and score (RULES.md, Interpretations)
@pytest.mark.parametrize("rule, mover, bots, leader", [
    ("lower-seat", 0, {}, 0), ("lower-seat", 1, {}, 0),
    ("higher-seat", 0, {}, 1), ("higher-seat", 1, {}, 1),
    ("mover", 0, {}, 0), ("mover", 1, {}, 1),
    ("more-hp", 0, {1: {"hp": 8}}, 0), ("more-hp", 0, {0: {"hp": 7}}, 1),
    ("more-hp", 1, {}, 0),  # equal HP as well: the lower seat
    ("higher-seat", 1, {0: {"strength": 1.2}}, 0),  # strength first, whatever the rule
    ("mover", 0, {1: {"score": 2}}, 1),  # then score
])
def test_alliance_tie_break_rules(rule, mover, bots, leader):
    s = build(ALLY_MAP, 3, bots=bots, turn=mover, alliance_tie_break=rule)
    act(s, E if mover == 0 else W, ALLY_ACCEPT, ALLY_ACCEPT)  # the mover walks up to the other
    assert list(s.parties) == [leader] and s.parties[leader] == [leader, 1 - leader]


def test_random_alliance_tie_break_draws_from_the_seeded_rng():
    leaders = []
    for seed in range(24):
        s = build(ALLY_MAP, 3, seed=seed, alliance_tie_break="random")
        again = build(ALLY_MAP, 3, seed=seed, alliance_tie_break="random")
        for state in (s, again):
            act(state, E, ALLY_ACCEPT, ALLY_ACCEPT)
        assert s.parties == again.parties and s.rng.getstate() == again.rng.getstate()
        leaders.append(list(s.parties)[0])
    assert set(leaders) == {0, 1}
    # the default draws nothing: games and checkpoints from before the switch play as they did
    s = build(ALLY_MAP, 3, seed=5)
    before = s.rng.getstate()
    act(s, E, ALLY_ACCEPT, ALLY_ACCEPT)
    assert s.rng.getstate() == before and s.game.config["alliance_tie_break"] == "lower-seat"


def test_alliance_tie_break_must_be_a_known_rule():
    with pytest.raises(Exception, match=r"alliance_tie_break='eldest' is not allowed; .*'lower-seat', 'higher-seat'"):
        WizardArenaGame(alliance_tie_break="eldest")


def test_declined_pair_is_not_asked_again_until_separated():
    s = build(ALLY_MAP, 3)
    act(s, E, ALLY_ACCEPT, ALLY_DECLINE)
    assert s.parties == {} and s.phase == MOVE and s.current_player() == 1
    act(s, STAY)  # 1 stays beside 0: no question
    assert s.current_player() == 2
    act(s, STAY, STAY)  # 2 and 0 stay
    assert s.phase == MOVE and s.current_player() == 1
    act(s, E)  # 1 steps away to (2,4): separated
    assert s.declined == []
    act(s, STAY, W)  # 2 stays; 0 steps back to (2,1)
    act(s, W)  # 1 returns to (2,3): two apart from 0, no question
    assert s.phase == MOVE
    act(s, STAY, E)  # 2 stays; 0 steps to (2,2), beside 1 again: asked again
    assert s.phase == ALLY and s.current_player() == 0


def test_declining_first_skips_the_second_question():
    s = build(ALLY_MAP, 3)
    act(s, E, ALLY_DECLINE)
    assert s.phase == MOVE and s.current_player() == 1 and s.parties == {}


# ---------------------------------------------------------------------------------------------
# Solo meets party
JOIN_MAP = """
........
........
.0.12...
........
........
........
.......5
@.......
"""


def test_solo_joins_a_party_whose_leader_is_at_least_as_strong_and_lines_up_at_the_tail():
    s = build(JOIN_MAP.replace("5", "3"), 4, parties=[[1, 2]])
    act(s, E)  # 0 lands beside the leader (not the tail)
    assert s.parties == {1: [1, 2, 0]}
    # re-formed: 0 moved to the free cell beside the tail nearest to where it stood
    assert s.pos[0] == cell(s, 1, 3)
    assert [s.pos[1], s.pos[2]] == [cell(s, 2, 3), cell(s, 2, 4)]
    assert s.score == [0, 0, 0, 0]
    assert s.current_player() == 1


def test_solo_refuses_a_weaker_leader_and_the_party_fights():
    s = build(JOIN_MAP.replace("5", "3"), 4, parties=[[1, 2]],
              bots={0: {"strength": 5.0}, 1: {"strength": 0.1}, 2: {"strength": 0.1}})
    act(s, E)
    assert s.score[:3] == [2, -1, 0]
    assert s.parties == {0: [0, 2]}  # 2 absorbed behind the winner
    assert s.leader_of[1] == 1 and s.cheb(s.pos[0], s.pos[2]) == 1
    assert all(1 <= 10 - s.hp[i] <= 3 for i in (1, 2)) and s.hp[0] == 10


def test_party_meeting_a_stronger_solo_fights_it():
    s = build(JOIN_MAP.replace("5", "3"), 4, parties=[[1, 2]], turn=1,
              bots={0: {"strength": 0.1}, 1: {"strength": 5.0}})
    act(s, W)  # the party steps beside solo 0, whose strength 0.1 <= leader's: 0 joins
    assert s.parties == {1: [1, 2, 0]}
    s = build(JOIN_MAP.replace("5", "3"), 4, parties=[[1, 2]], turn=1,
              bots={0: {"strength": 9.0}, 1: {"strength": 0.1}, 2: {"strength": 0.1}})
    act(s, W)
    assert s.score[:3] == [2, -1, 0]


# ---------------------------------------------------------------------------------------------
# Party battles
BATTLE_MAP = """
........
........
.210....
...34...
........
........
.......6
@......5
"""


def battle_state(**kw):
    bots = {0: {"strength": 5.0}, 1: {"strength": 1.0}, 2: {"strength": 1.0},
            3: {"strength": 0.1}, 4: {"strength": 0.1}}
    for i, extra in kw.pop("bots", {}).items():
        bots[i] = dict(bots.get(i, {}), **extra)
    return build(BATTLE_MAP, 7, bots=bots, parties=[[0, 1, 2], [3, 4]], **kw)


def test_party_battle_scores_absorbs_and_respawns_the_loser_leader():
    s = battle_state()
    act(s, STAY)  # 0's side is beside 3's: battle
    assert s.score == [2, 1, 1, -1, 0, 0, 0]
    # 4 is absorbed at the tail; the line re-forms with nobody moving more than one step: the tail
    # 2 steps from r2c1 to r3c2, and 4 from r3c4 into 3's old cell r3c3 beside it
    assert s.parties == {0: [0, 1, 2, 4]}
    assert [s.pos[0], s.pos[1], s.pos[2], s.pos[4]] == [cell(s, 2, 3), cell(s, 2, 2), cell(s, 3, 2), cell(s, 3, 3)]
    for i in (3, 4):
        assert 1 <= 10 - s.hp[i] <= 3
    assert s.hp[:3] == [10, 10, 10]
    # the loser leader respawned solo on a free cell with nobody beside it
    assert s.leader_of[3] == 3 and s.alive[3]
    assert all(s.cheb(s.pos[3], s.pos[j]) > 1 for j in range(7) if j != 3)
    assert s.map.passable[s.pos[3]]


def test_battle_is_won_on_squad_total_strength():
    # leader alone is weaker than the other leader, but its squad total wins
    s = battle_state(bots={0: {"strength": 0.1}, 1: {"strength": 4.0}, 2: {"strength": 4.0},
                           3: {"strength": 0.2}, 4: {"strength": 0.1}})
    act(s, STAY)
    assert s.score[0] == 2 and s.score[3] == -1


def test_losers_lose_hp_before_absorption_and_the_dead_are_not_absorbed():
    s = battle_state(bots={4: {"hp": 1}})
    act(s, STAY)
    assert not s.alive[4] and s.hp[4] == 0
    assert s.parties == {0: [0, 1, 2]}
    assert s.pos[4] == cell(s, 3, 4)  # the gravestone stays where it fell
    assert "+" in s.game.render_text(s).splitlines()[3]


def test_a_loser_leader_who_dies_does_not_respawn():
    s = battle_state(bots={3: {"hp": 1}})
    act(s, STAY)
    assert not s.alive[3] and s.pos[3] == cell(s, 3, 3)
    assert s.parties == {0: [0, 1, 2, 4]}


# ---------------------------------------------------------------------------------------------
# Gary the Wizard
GARY_MAP = """
......
.@....
..0...
......
......
.....1
"""


def gary_state(**kw):
    bots = kw.pop("bots", {0: {"strength": 10.0}})
    return build(GARY_MAP, 2, bots=bots, gary_strength=kw.pop("gary_strength", 0.1), **kw)


def test_gary_is_offered_within_distance_one_only():
    s = gary_state()
    act(s, STAY)
    assert s.phase == GARY and s.current_player() == 0
    s = gary_state()
    act(s, SE)  # two away from Gary now
    assert s.phase == MOVE and s.current_player() == 1


@pytest.mark.parametrize("reward,check", [
    (REWARD_SCORE, lambda s: s.score[0] == 2 and s.strength[0] == 100),
    (REWARD_STRENGTH, lambda s: s.strength[0] == 120 and s.score[0] == 0),
    (REWARD_HEALTH, lambda s: s.hp[0] == 12 and s.max_hp[0] == 12),
])
def test_beating_gary_lets_the_challenger_pick_a_reward(reward, check):
    s = gary_state()
    old_gary = s.gary
    act(s, STAY, CHALLENGE)
    assert s.phase == REWARD and s.current_player() == 0
    assert s.gary != old_gary and s.occ[s.gary] < 0 and s.map.passable[s.gary]  # teleported
    act(s, reward)
    assert check(s)
    assert s.current_player() == 1


def test_health_reward_only_raises_max_hp_when_exceeded():
    s = gary_state(bots={0: {"strength": 10.0, "hp": 5, "max_hp": 10}})
    act(s, STAY, CHALLENGE, REWARD_HEALTH)
    assert (s.hp[0], s.max_hp[0]) == (7, 10)


def test_losing_to_gary_costs_two_hp_and_he_teleports():
    s = gary_state(bots={0: {"strength": 0.1}}, gary_strength=100.0)
    old_gary = s.gary
    act(s, STAY, CHALLENGE)
    assert s.hp[0] == 8 and s.score[0] == 0
    assert s.gary != old_gary
    assert s.current_player() == 1


def test_without_health_losing_to_gary_costs_two_score_and_nobody_dies():
    s = gary_state(bots={0: {"strength": 0.1}}, gary_strength=100.0, health=0)
    act(s, STAY, CHALLENGE)
    assert s.score[0] == -2 and s.alive[0] and s.hp[0] == 0


def test_without_health_the_health_reward_is_not_offered():
    s = gary_state(health=0)
    act(s, STAY, CHALLENGE)
    mask = s.legal_mask()
    assert mask[REWARD_SCORE] == mask[REWARD_STRENGTH] == 1 and mask[REWARD_HEALTH] == 0


def test_a_party_challenges_with_its_squad_total():
    # Alone, a 0.1 leader never wins a bout against 2.5 (20 x 1 < 25); its squad of 50.1 always does
    # (501 > 20 x 25).
    s = build("""
    ......
    .@....
    ..01..
    ......
    ......
    .....2
    """, 3, parties=[[0, 1]], bots={0: {"strength": 0.1}, 1: {"strength": 50.0}}, gary_strength=2.5)
    act(s, STAY, CHALLENGE)
    assert s.phase == REWARD
    act(s, REWARD_STRENGTH)
    assert s.strength[:2] == [21, 500]  # the leader's own strength rises
    s = build(GARY_MAP, 2, bots={0: {"strength": 0.1}}, gary_strength=2.5)
    act(s, STAY, CHALLENGE)
    assert s.hp[0] == 8


def test_gary_stays_put_unless_he_roams():
    s = build(ALLY_MAP.replace("@", "."
                               ).replace("......\n.0", "..@...\n.0", 1), 3)
    start = s.gary
    for _ in range(9):
        act(s, STAY)
        if s.phase == GARY:
            act(s, NO_CHALLENGE)
    assert s.gary == start
    s = build(ALLY_MAP, 3, gary_roams=True, seed=4)
    seen = {s.gary}
    for _ in range(30):
        before, rnd = s.gary, s.round
        act(s, STAY)
        if s.phase == GARY:
            act(s, NO_CHALLENGE)
        if s.round == rnd:
            assert s.gary == before
        else:
            assert s.cheb(before, s.gary) <= 1 and s.map.passable[s.gary]
        seen.add(s.gary)
    assert len(seen) > 1


# ---------------------------------------------------------------------------------------------
# Death, gravestones, turns
def test_dead_leader_passes_leadership_to_the_strongest_survivor_and_never_acts_again():
    s = build("""
    ......
    .@....
    ..0...
    ..12..
    ......
    .....3
    """, 4, parties=[[0, 1, 2]],
        bots={0: {"strength": 0.1, "hp": 2}, 1: {"strength": 0.1}, 2: {"strength": 0.5}},
        gary_strength=100.0)
    act(s, STAY, CHALLENGE)
    assert not s.alive[0] and s.hp[0] == 0
    assert s.parties == {2: [2, 1]}
    assert s.pos[2] == cell(s, 3, 3) and s.cheb(s.pos[1], s.pos[2]) == 1
    assert s.pos[0] == cell(s, 2, 2)  # gravestone
    assert s.current_player() == 2  # the new leader is next in seat order
    for _ in range(6):
        assert s.current_player() in (2, 3)
        act(s, STAY)
        if s.phase == GARY:
            act(s, NO_CHALLENGE)
    assert s.occ[s.pos[0]] < 0  # a gravestone does not block
    text = s.game.render_text(s)
    assert "+" in text and "dead" in text


def test_a_dead_follower_leaves_the_line_and_those_behind_close_up():
    s = build("""
    ......
    ......
    3210..
    ......
    ......
    .@...4
    """, 5, parties=[[0, 1, 2, 3]])
    s.hp[1] = s.counters[1][C_START_HP] = 0  # as if it had just lost its last HP
    s._kill(1)
    assert s.parties == {0: [0, 2, 3]}
    assert [s.pos[2], s.pos[3]] == [cell(s, 2, 2), cell(s, 2, 1)]
    assert s.check_invariants() == []


def test_turns_skip_followers_and_the_dead():
    s = build("""
    0.....
    ......
    ..21..
    ......
    ......
    .@...3
    """, 4, parties=[[2, 1]], dead=[3])
    order = []
    for _ in range(4):
        order.append(s.current_player())
        act(s, STAY)
    assert order == [0, 2, 0, 2]
    assert s.round == 2


# ---------------------------------------------------------------------------------------------
# End of the game and ranking
def test_game_ends_when_all_living_bots_are_one_party():
    s = build(ALLY_MAP.replace("2", "."), 2, bots={0: {"score": 1}})
    act(s, E, ALLY_ACCEPT, ALLY_ACCEPT)
    assert s.phase == OVER and s.is_terminal() and s.current_player() == -1
    assert not s.legal_mask().any()
    assert s.returns() == [1.0, -1.0]


def test_game_ends_when_one_bot_is_left_alive_and_the_dead_are_ranked_too():
    s = build(GARY_MAP, 2, bots={0: {"strength": 0.1, "hp": 2, "score": 3}}, gary_strength=100.0)
    act(s, STAY, CHALLENGE)
    assert s.is_terminal()
    assert s.returns() == [1.0, -1.0]  # the dead bot still ranks first on score


def test_game_goes_on_while_two_sides_remain():
    s = build(ALLY_MAP, 3)
    act(s, E, ALLY_ACCEPT, ALLY_ACCEPT)
    assert not s.is_terminal()


def test_ranking_shares_ranks_between_equal_bots():
    rewards = rank_rewards([2, 2, 0, 0], [10, 10, 30, 10])
    assert rewards == pytest.approx([2 / 3, 2 / 3, -1 / 3, -1.0])
    assert rank_rewards([0, 0, 0], [5, 5, 5]) == [0.0, 0.0, 0.0]
    rewards = rank_rewards([1, 5, 3, 3, -2], [10, 10, 20, 10, 10])
    assert rewards == pytest.approx([-0.5, 1.0, 0.5, 0.0, -1.0])
    assert sum(rewards) == pytest.approx(0.0)


def test_truncation_returns_rank_the_current_standings():
    s = build(ALLY_MAP, 3, bots={2: {"score": 4}, 0: {"strength": 2.0}})
    assert s.truncation_returns() == pytest.approx([0.0, -1.0, 1.0])
    assert s.returns() == [0.0, 0.0, 0.0]


# ---------------------------------------------------------------------------------------------
# Observation, saving, hidden information, invariants
def test_observation_planes_show_relations_gravestones_and_gary():
    s = build("""
    ......
    .@....
    ..01..
    ......
    ...3..
    .....2
    """, 4, parties=[[0, 1]], dead=[3])
    game = s.game
    obs = game.observe(s, 1)
    size = 6
    planes = obs[: len(CHANNELS) * size * size].reshape(len(CHANNELS), size, size)
    assert planes[1, 2, 3] == 1 and planes[1].sum() == 1  # self
    assert planes[2, 2, 2] == 1 and planes[2].sum() == 1  # own party
    assert planes[3, 5, 5] == 1 and planes[3].sum() == 1  # others
    assert planes[4, 4, 3] == 1 and planes[4].sum() == 1  # gravestone
    assert planes[5, 1, 1] == 1 and planes[5].sum() == 1  # Gary
    w = 2 * LOCAL_RADIUS + 1
    local = obs[len(CHANNELS) * size * size:][: len(CHANNELS) * w * w].reshape(len(CHANNELS), w, w)
    assert local[1, LOCAL_RADIUS, LOCAL_RADIUS] == 1
    assert local[0, 0, 0] == 1  # beyond the top edge reads as impassable
    assert obs.min() >= 0 and obs.max() <= 1 and obs.shape == game.observation_shape
    # the local window is the global planes cut around the seat's bot, the edge reading as terrain
    for seat in range(4):
        o = game.observe(s, seat)
        g = o[: len(CHANNELS) * size * size].reshape(len(CHANNELS), size, size)
        padded = np.zeros((len(CHANNELS), size + 2 * LOCAL_RADIUS, size + 2 * LOCAL_RADIUS), dtype=np.float32)
        padded[0] = 1
        padded[:, LOCAL_RADIUS:LOCAL_RADIUS + size, LOCAL_RADIUS:LOCAL_RADIUS + size] = g
        r, c = divmod(s.pos[seat], size)
        want = padded[:, r:r + w, c:c + w]
        got = o[len(CHANNELS) * size * size:][: len(CHANNELS) * w * w].reshape(len(CHANNELS), w, w)
        assert np.array_equal(got, want), seat
    own = obs[game.global_len + game.local_len:][: len(OWN_FEATURES)]
    assert own[OWN_FEATURES.index("follower")] == 1 and own[OWN_FEATURES.index("leader")] == 0


def test_save_and_load_mid_alliance_continue_identically():
    s = build(ALLY_MAP, 3)
    act(s, E)
    game = s.game
    restored = game.load(json.loads(json.dumps(game.save(s))))
    assert restored.to_dict() == s.to_dict()
    assert restored.current_player() == 0 and restored.phase == ALLY
    for state in (s, restored):
        act(state, ALLY_ACCEPT, ALLY_ACCEPT, STAY, STAY)
    assert restored.to_dict() == s.to_dict()


def test_only_the_random_generator_is_hidden():
    game = WizardArenaGame()
    s = game.new_initial_state(3)
    view = s.player_view(2)
    other = game.state_from_view(view, random.Random(1))
    assert other.to_dict() != s.to_dict()  # a different future of dice
    assert other.to_dict()["pos"] == s.to_dict()["pos"]
    assert np.array_equal(game.observe(other, 2), game.observe(s, 2))


def test_invariant_check_catches_a_broken_line_and_a_wrong_score():
    game = WizardArenaGame(num_bots=3, map_size=6)
    s = from_text(game, ALLY_MAP, parties=[[0, 1]])
    assert any("single file" in p for p in s.check_invariants())
    s = build(ALLY_MAP, 3)
    s.score[1] += 1
    assert any("events say" in p for p in s.check_invariants())
    s = build(ALLY_MAP, 3)
    s.strength[2] = 0
    assert any("below 0.1" in p for p in s.check_invariants())


def test_seeded_games_are_reproducible_and_terrain_is_connected():
    game = WizardArenaGame(num_bots=16)
    a, b = game.new_initial_state(11), game.new_initial_state(11)
    assert a.to_dict() == b.to_dict()
    assert a.map.connected()
    blocked = sum(1 for t in a.map.terrain if t)
    assert 0.08 * 256 <= blocked <= 0.2 * 256
    assert all(a.cheb(a.pos[i], a.pos[j]) > 1 for i in range(16) for j in range(i))


def test_several_encounters_resolve_in_seat_order_of_the_other_leaders():
    s = build("""
    ......
    ..2...
    .401..
    ......
    ......
    @....3
    """, 5, parties=[[0, 4]], bots={1: {"strength": 0.5}, 2: {"strength": 0.5}})
    act(s, STAY)
    # 1 joined first (at the tail, stepping to r3c2 beside 4); then 2, standing next to the
    # leader, stepped in right behind it without anyone moving. (2 first would give [0, 4, 2, 1].)
    assert s.parties == {0: [0, 2, 4, 1]}
    assert s.check_invariants() == []


def test_a_line_that_cannot_be_formed_keeps_its_single_file_front_and_leaves_the_rest_solo():
    game = WizardArenaGame(num_bots=4, map_size=6)
    s = from_text(game, """
    01M...
    MMM...
    ......
    ...2..
    ......
    @....3
    """)
    before = list(s.pos)
    s._set_line([0, 1, 2])  # 2 cannot reach the walled-in pair
    assert s.parties == {0: [0, 1]}
    assert s.leader_of[2] == 2 and s.pos == before


def test_an_acting_party_that_loses_is_broken_up_and_its_turn_ends():
    s = battle_state(turn=3)
    act(s, STAY)  # 3's weak party stays beside 0's strong one: battle, 3 loses
    assert s.score == [2, 1, 1, -1, 0, 0, 0]
    assert s.parties == {0: [0, 1, 2, 4]}
    assert s.leader_of[3] == 3 and s.phase == MOVE and s.current_player() == 5
    assert not s.respawned


def test_without_health_battles_cost_no_hp():
    s = battle_state(health=0)
    act(s, STAY)
    assert s.hp == [0] * 7 and all(s.alive)
    assert s.parties == {0: [0, 1, 2, 4]} and s.score[3] == -1


def test_env_selects_only_living_solos_and_leaders_and_pays_everyone_at_the_end():
    from envs import wizard_arena_v0

    env = wizard_arena_v0.raw_env(num_bots=5, map_size=8, health=1)
    rng = random.Random(0)
    saw_dead = False
    for seed in range(6):
        env.reset(seed=seed)
        rewards = {}
        while env.agents:
            agent = env.agent_selection
            if env.terminations[agent] or env.truncations[agent]:
                rewards[agent] = env.unwrapped.cumulative_reward(agent)
                env.step(None)
                continue
            state = env.unwrapped.engine_state
            seat = int(agent.split("_")[1])
            assert state.alive[seat]
            if state.phase == ALLY:
                assert seat in state.ally and seat not in state.parties and state.leader_of[seat] == seat
            else:
                assert state.leader_of[seat] == seat
            legal = np.flatnonzero(env.observe(agent)["action_mask"])
            env.step(int(legal[rng.randrange(len(legal))]))
        state = env.unwrapped.engine_state
        assert len(rewards) == 5 and sum(rewards.values()) == pytest.approx(0.0)
        expected = rank_rewards(state.score, state.strength)
        assert [rewards[f"player_{i}"] for i in range(5)] == pytest.approx(expected)
        saw_dead = saw_dead or not all(state.alive)
    assert saw_dead  # with 1 HP some bots die, and they were paid too

"""Scenario tests for the rules that let Wizard Arena games end by play: a party may step
onto its own line and the line re-forms behind the leader; re-forming moves bots as little as the
single-file line allows; the no-progress rule; and the observation features that go with them.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from test_wizard_arena_rules import act, build, cell  # the scenario helpers

from envs.core import ConfigError, IllegalActionError, StateError
from envs.wizard_arena.map import DIRECTION_NAMES
from envs.wizard_arena.game import (
    EXTRA_TABLE_FEATURES,
    OWN_FEATURES,
    TABLE_FEATURES,
    WALK_FEATURES,
    WizardArenaGame,
    score_feature,
)
from envs.wizard_arena.rules import (
    ALLY,
    ALLY_ACCEPT,
    ALLY_DECLINE,
    CHALLENGE,
    NO_CHALLENGE,
    NO_PROGRESS_ROUNDS_PER_SIDE,
    OVER,
    REWARD_SCORE,
    STAY,
    rank_rewards,
)

N, NE, E, SE, S, SW, W, NW = range(8)


def where(state, bots):
    return [divmod(state.pos[b], state.map.size) for b in bots]


# ---------------------------------------------------------------------------------------------
# Turning round: the leader may step onto its own line
COIL = """
03....
12....
......
......
......
@....4
"""


def test_a_coiled_party_in_a_corner_can_always_move_and_walks_out():
    # The leader 0 is walled in by its own line (1 below, 2 diagonal, the tail 3 to the right)
    # and by the map's edge: without the turning-round rule its only legal move would be "stay", forever.
    s = build(COIL, 5, parties=[[0, 1, 2, 3]])
    mask = s.legal_mask()
    assert mask[E] == mask[S] == 1  # onto the tail, onto the first follower
    assert mask[SE] == 0  # never onto a middle member
    assert mask[N] == mask[W] == 0  # off the map
    # Onto the tail: every follower steps into the cell the bot ahead has just left.
    act(s, E)
    assert where(s, [0, 1, 2, 3]) == [(0, 1), (0, 0), (1, 0), (1, 1)]
    act(s, STAY)  # bot 4
    act(s, E)  # out of the corner, the line trailing behind
    assert where(s, [0, 1, 2, 3]) == [(0, 2), (0, 1), (0, 0), (1, 0)]
    assert s.strength[:4] == [10, 10, 10, 10]  # no squeeze on open ground


def test_turning_round_onto_the_first_follower_backs_the_line_up():
    s = build(COIL, 5, parties=[[0, 1, 2, 3]])
    act(s, S)  # onto 1: each follower steps into the cell of the one behind it, the tail 3 on
    # into its lowest-numbered free neighbour r0c2
    assert where(s, [0, 1, 2, 3]) == [(1, 0), (1, 1), (0, 1), (0, 2)]
    assert s.parties == {0: [0, 1, 2, 3]}  # the line order never changes when it turns


def test_a_line_whose_tail_has_no_room_re_forms_with_each_follower_moving_one_cell_at_most():
    s = build("""
    01M...
    M2M...
    MMM...
    ......
    ......
    @....3
    """, 4, parties=[[0, 1, 2]])
    assert s.legal_mask()[E] == 1  # onto 1, although the tail 2 cannot back up
    act(s, E)  # 1 takes the cell 0 has just left; 2 keeps its own, next to it
    assert where(s, [0, 1, 2]) == [(0, 1), (0, 0), (1, 1)]


DEAD_END = """
MMMMMM
0123..
MMMM.M
......
......
@....4
"""


def test_a_party_in_a_dead_end_corridor_backs_out_and_then_leads_again():
    # The leader 0 faces the dead end (the map's edge); its only free neighbour is its own line.
    s = build(DEAD_END, 5, parties=[[0, 1, 2, 3]])
    mask = s.legal_mask()
    assert [a for a in range(9) if mask[a]] == [E, STAY]
    act(s, E)  # onto 1: the line backs up one cell, the tail into the free cell behind it
    assert where(s, [0, 1, 2, 3]) == [(1, 1), (1, 2), (1, 3), (1, 4)]
    act(s, STAY, E, STAY, E)  # (4 stays in between) backing up along the corridor
    assert where(s, [0, 1, 2, 3]) == [(1, 3), (1, 4), (1, 5), (2, 4)]
    act(s, STAY)  # bot 4
    assert s.legal_mask()[SE] == 1  # the tail stands in the corridor's exit: step onto it
    act(s, SE)
    assert where(s, [0, 1, 2, 3]) == [(2, 4), (1, 3), (1, 4), (1, 5)]
    act(s, STAY, S)  # the leader walks out in front, the line single file behind it
    assert where(s, [0, 1, 2, 3]) == [(3, 4), (2, 4), (1, 3), (1, 4)]
    assert s.strength[:4] == [10, 10, 10, 10]


def test_a_step_onto_the_own_line_is_illegal_when_the_line_cannot_re_form():
    s = build("""
    MMMMMM
    0123MM
    MMMMMM
    ......
    ......
    @....4
    """, 5, parties=[[0, 1, 2, 3]])
    assert [a for a in range(9) if s.legal_mask()[a]] == [STAY]  # the tail has nowhere to go
    with pytest.raises(IllegalActionError, match="move E"):
        s.apply_action(E)


def test_a_follower_pays_the_squeeze_when_its_re_forming_step_squeezes():
    s = build("""
    .0....
    M1....
    2F....
    ......
    ......
    @....3
    """, 4, parties=[[0, 1, 2]])
    act(s, S)  # onto 1; 2 cannot reach a cell beside 0's old cell, so 1 steps to 2's cell,
    # squeezing between the mountain and the forest, and 2 steps down behind it
    assert where(s, [0, 1, 2]) == [(1, 1), (2, 0), (3, 0)]
    assert s.strength[:3] == [10, 9, 10]


# ---------------------------------------------------------------------------------------------
# Re-forming a line moves bots as little as the single file allows
def test_a_solo_joining_beside_the_head_of_a_long_line_is_not_carried_to_the_tail():
    s = build("""
    7.......
    ........
    .0123456
    ........
    ........
    ........
    ........
    @......8
    """, 9, parties=[[0, 1, 2, 3, 4, 5, 6]], turn=7)
    before = list(s.pos)
    act(s, S)  # 7 steps beside the leader 0 and joins (equal strength)
    assert s.leader_of[7] == 0 and len(s.parties[0]) == 8
    assert s.parties[0][:2] == [0, 7]  # it takes its place right behind the leader it met
    moved = [s.cheb(before[b], s.pos[b]) for b in range(7)] + [s.cheb(cell(s, 1, 0), s.pos[7])]
    assert max(moved) == 1  # the old rule put 7 beside the tail, six cells away


def test_a_solo_beside_the_tail_joins_at_the_tail_and_nobody_moves():
    s = build("""
    ........
    ........
    .0123...
    ......4.
    ........
    ........
    ........
    @......5
    """, 6, parties=[[0, 1, 2, 3]], turn=4)
    before = list(s.pos)
    act(s, W)  # 4 steps to r3c5, beside the tail 3 at r2c4
    assert s.parties == {0: [0, 1, 2, 3, 4]}
    assert s.pos[:4] == before[:4] and s.pos[4] == cell(s, 3, 5)


# ---------------------------------------------------------------------------------------------
# The no-progress rule
APART = """
0.....
......
......
......
......
@....1
"""


def test_a_game_without_progress_ends_with_the_ranking_as_it_stands():
    s = build(APART, 2, bots={1: {"score": 3}})
    limit = NO_PROGRESS_ROUNDS_PER_SIDE * 6
    assert s.no_progress_limit == limit
    for r in range(limit):
        assert s.end_reason() is None and s.quiet_rounds == r
        act(s, STAY, STAY)
    assert s.phase == OVER and s.is_terminal() and s.current_player() == -1
    assert s.end_reason() == "no-progress"
    assert not s.legal_mask().any()
    assert s.returns() == rank_rewards(s.score, s.strength) == [-1.0, 1.0]


def test_two_bots_that_decline_each_other_end_by_the_no_progress_rule():
    s = build("""
    ......
    ......
    .0.1..
    ......
    ......
    @.....
    """, 2)
    act(s, E, ALLY_DECLINE)
    while not s.is_terminal():
        act(s, STAY)  # side by side, never asked again while they stand there
    assert s.end_reason() == "no-progress" and s.returns() == [0.0, 0.0]


def test_two_bots_that_ally_end_by_the_rules():
    s = build("""
    ......
    ......
    .0.1..
    ......
    ......
    @.....
    """, 2)
    act(s, STAY, STAY)
    assert s.quiet_rounds == 1
    act(s, E, ALLY_ACCEPT, ALLY_ACCEPT)
    assert s.end_reason() == "rules"


@pytest.mark.parametrize("event", ["alliance", "join", "battle", "death"])
def test_alliances_joins_battles_and_deaths_are_progress(event):
    if event == "alliance":
        s = build(APART.replace("0.....", "0.2...").replace("@....1", "@....1"), 3)
        s.quiet_rounds = 7
        act(s, E, ALLY_ACCEPT, ALLY_ACCEPT)
    elif event == "join":
        s = build(APART.replace("0.....", "0.23..").replace("@....1", "@....1"), 4, parties=[[2, 3]])
        s.quiet_rounds = 7
        act(s, E)
        assert s.leader_of[0] == 2
    elif event == "battle":
        s = build(APART.replace("0.....", "0.23..").replace("@....1", "@....1"), 4, parties=[[2, 3]],
                  bots={0: {"strength": 9.0}, 2: {"strength": 0.1}, 3: {"strength": 0.1}})
        s.quiet_rounds = 7
        act(s, E)
        assert s.score[0] == 2
    else:
        s = build("""
        ......
        .@....
        ..0...
        ......
        ..2...
        .....1
        """, 3, bots={0: {"strength": 0.1, "hp": 1}}, gary_strength=100.0)
        s.quiet_rounds = 7
        act(s, STAY, CHALLENGE)
        assert not s.alive[0]
    assert s.quiet_rounds == 0


def test_beating_gary_is_not_progress_so_farming_him_cannot_hold_a_game_open():
    s = build("""
    ......
    .@....
    ..0...
    ......
    ......
    .....1
    """, 2, bots={0: {"strength": 50.0}}, gary_strength=0.1)
    s.quiet_rounds = 7
    act(s, STAY, CHALLENGE, REWARD_SCORE)
    assert s.score[0] == 2 and s.quiet_rounds == 7
    act(s, STAY)  # bot 1 (it may meet Gary after his teleport: it leaves him)
    if s.current_player() == 1:
        act(s, NO_CHALLENGE)
    assert s.round == 1 and s.quiet_rounds == 8  # the round ended without progress
    # However often 0 beats Gary, the game ends once the quiet rounds run out; 1 only stays.
    wins = 0
    while not s.is_terminal():
        legal = s.legal_actions()
        if s.phase == ALLY:
            act(s, ALLY_DECLINE)
        elif CHALLENGE in legal:
            act(s, CHALLENGE)
        elif REWARD_SCORE in legal:
            act(s, REWARD_SCORE)
            wins += 1
        elif s.current_player() == 0:  # walk towards Gary
            here, gary = s.pos[0], s.gary
            act(s, min(legal, key=lambda a: s.cheb(s.map.step[here][a] if a < 8 else here, gary)))
        else:
            act(s, STAY)
    assert wins >= 5
    assert s.end_reason() == "no-progress" and s.quiet_rounds == s.no_progress_limit


# ---------------------------------------------------------------------------------------------
# Saving the new counters
def test_quiet_rounds_and_actions_taken_are_saved_and_checked():
    s = build(APART, 2)
    act(s, STAY, STAY, STAY)
    game = s.game
    data = json.loads(json.dumps(game.save(s)))
    restored = game.load(data)
    assert (restored.quiet_rounds, restored.actions_taken) == (1, 3)
    assert restored.to_dict() == s.to_dict()
    for key, bad in (("quiet_rounds", -1), ("quiet_rounds", s.no_progress_limit), ("actions_taken", -2),
                     ("quiet_rounds", True)):
        broken = json.loads(json.dumps(data))
        broken["state"][key] = bad
        with pytest.raises(StateError, match=key):
            game.load(broken)


def test_clones_carry_the_counters():
    s = build(APART, 2)
    act(s, STAY, STAY)
    c = s.clone()
    assert (c.quiet_rounds, c.actions_taken, c.no_progress_limit) == (s.quiet_rounds, s.actions_taken,
                                                                       s.no_progress_limit)


def test_the_table_says_whose_seat_comes_first_since_ties_of_leadership_go_to_the_lower_seat():
    """Bots 1 and 3 stand side by side with equal strength and score: bot 1 would lead their party
    (the lower seat). Each sees that in its table; ``observation_version=1`` (the original
    rows) has neither extra feature."""
    s = build("""
    0.....
    ......
    ..13..
    ......
    ......
    @....2
    """, 4)
    game = s.game
    seat_at = game.table_features.index("seat before mine")
    assert game.table_features == TABLE_FEATURES + EXTRA_TABLE_FEATURES
    assert game.row_len == len(TABLE_FEATURES) + 2 + 4
    for me in range(4):
        obs = game.observe(s, me)
        for row in range(4):
            other = (me + row) % 4
            assert table_row(game, obs, row)[seat_at] == (1.0 if other < me else 0.0), (me, other)
    old = WizardArenaGame(num_bots=4, map_size=6, observation_version=1)
    assert old.table_features == TABLE_FEATURES and old.row_len == len(TABLE_FEATURES) + 4
    assert old.observation_shape[0] == game.observation_shape[0] - 2 * 4
    for bad in (0, 4, True, "2"):
        with pytest.raises(ConfigError, match="observation_version"):
            WizardArenaGame(observation_version=bad)


def test_the_table_marks_a_declined_pair_until_the_two_stand_apart():
    """Bot 0 asks bot 1 (next to it) and bot 1 declines: both see the other as "declined me" while
    they stay side by side; once bot 1 has stepped away the mark is gone (they may ask again)."""
    s = build("""
    01....
    ......
    ......
    ......
    ......
    @....2
    """, 3)
    game = s.game
    at = game.table_features.index("declined me")

    def declined_rows(me):
        obs = game.observe(s, me)
        return [row for row in range(3) if table_row(game, obs, row)[at] == 1.0]

    act(s, STAY)  # bot 0 stays next to bot 1: the two solos are asked to ally
    assert s.phase == ALLY and declined_rows(0) == declined_rows(1) == []
    act(s, ALLY_ACCEPT, ALLY_DECLINE)
    assert s.declined == [(0, 1)]
    assert declined_rows(0) == [1] and declined_rows(1) == [2] and declined_rows(2) == []
    while s.current_player() != 1:
        act(s, STAY)
    act(s, DIRECTION_NAMES.index("SE"))  # bot 1 steps away (distance 2 from bot 0)
    assert declined_rows(0) == declined_rows(1) == []


def test_version_3_reads_walking_distances_round_the_wall():
    """A wall of mountains stands between bot 0 and bot 1, open only at its right end. The straight
    line to bot 1 runs south, but the walk goes round the gap: the table says that moving east (or
    north-east) brings bot 1 nearer, south and west do not, and staying keeps the distance. Gary
    stands on bot 0's side: moving west brings him nearer. Bot 2, walled into a corner by forest,
    cannot be reached (distance 1, no choice brings it nearer)."""
    s = build("""
    FF.....
    2F.....
    FF.....
    @..0...
    MMMMMM.
    .......
    ...1...
    """, 3, observation_version=3)
    game = s.game
    assert game.table_features == TABLE_FEATURES + EXTRA_TABLE_FEATURES + WALK_FEATURES
    at = game.table_features.index("walking distance")
    obs = game.observe(s, 0)
    to_1 = table_row(game, obs, 1)[at:at + 10]
    # bot 0 at (3, 3), bot 1 at (6, 3): round the wall's end at (4, 6) it takes 3 steps east, then 3 down
    assert to_1[0] == pytest.approx(6 / 14)
    nearer = {DIRECTION_NAMES[d] if d < 8 else "stay": to_1[1 + d] for d in range(9)}
    assert nearer["E"] == nearer["NE"] == 1.0
    assert nearer["SE"] == nearer["S"] == nearer["SW"] == 0.0  # onto the mountains
    assert nearer["W"] == nearer["NW"] == 0.0
    assert nearer["N"] == nearer["stay"] == 0.5  # north keeps 3 steps to the gap
    to_2 = table_row(game, obs, 2)[at:at + 10]
    assert to_2[0] == 1.0 and list(to_2[1:]) == [0.0] * 9
    assert list(table_row(game, obs, 0)[at:at + 10]) == [0.0] * 10  # my own row
    gary = obs[game.gary_walk_offset:game.gary_walk_offset + 10]
    assert len(obs) == game.gary_walk_offset + 10
    assert gary[0] == pytest.approx(3 / 14)
    assert gary[1 + DIRECTION_NAMES.index("W")] == gary[1 + DIRECTION_NAMES.index("NW")] == 1.0
    assert gary[1 + DIRECTION_NAMES.index("E")] == 0.0 and gary[9] == 0.5
    # Bot 1, below the wall, sees bot 0 at the same distance; versions 1 and 2 have no walking block.
    assert table_row(game, game.observe(s, 1), 2)[at] == pytest.approx(6 / 14)
    for version in (1, 2):
        assert "walking distance" not in WizardArenaGame(observation_version=version).table_features
    with pytest.raises(ConfigError, match=r"observation_version.*\[1, 2, 3\]"):
        WizardArenaGame(observation_version=4)


def test_version_3_gives_the_dead_no_walking_block():
    s = build("""
    0.....
    ......
    ..1...
    ......
    ......
    @....2
    """, 3, observation_version=3, dead=(2,))
    game = s.game
    at = game.table_features.index("walking distance")
    obs = game.observe(s, 0)
    assert table_row(game, obs, 1)[at] == pytest.approx(2 / 12)
    assert list(table_row(game, obs, 2)[at:at + 10]) == [0.0] * 10
    dead = game.observe(s, 2)  # a dead observer walks nowhere
    assert not any(table_row(game, dead, row)[at:at + 10].any() for row in range(3))
    assert not dead[game.gary_walk_offset:].any()


# ---------------------------------------------------------------------------------------------
# Observation: uncapped score, time left, party structure
def table_row(game, obs, row):
    start = game.table_offset + row * game.row_len
    return obs[start:start + game.row_len]


def test_score_feature_is_monotone_and_never_capped():
    values = [score_feature(v) for v in (-200, -60, -20, -1, 0, 1, 20, 60, 106, 1000)]
    assert all(0.0 < v < 1.0 for v in values)
    assert values == sorted(values) and len(set(values)) == len(values)
    s = build(APART, 2, bots={0: {"score": 20}, 1: {"score": 60}})
    obs = s.game.observe(s, 0)
    own = obs[s.game.own_offset:s.game.table_offset]
    assert own[OWN_FEATURES.index("score")] == pytest.approx(0.75)
    assert table_row(s.game, obs, 1)[TABLE_FEATURES.index("score")] == pytest.approx(0.875)


def test_time_left_follows_the_environments_cap_and_the_quiet_rounds():
    from envs import wizard_arena_v0

    env = wizard_arena_v0.raw_env(num_bots=2, map_size=8, max_cycles=10)
    env.reset(seed=3)
    game = env.unwrapped.game
    at = game.own_offset + OWN_FEATURES.index("time left")
    first = env.observe(env.agent_selection)["observation"]
    assert first[at] == 1.0 and first[at + 1] == 1.0
    steps = 0
    while env.agents and steps < 7:
        agent = env.agent_selection
        legal = np.flatnonzero(env.observe(agent)["action_mask"])
        env.step(int(legal[-1]))
        steps += 1
    state = env.unwrapped.engine_state
    obs = env.observe(env.agent_selection)["observation"]
    assert obs[at] == pytest.approx(1.0 - steps / 20)
    assert obs[at + 1] == pytest.approx(1.0 - state.quiet_rounds / state.no_progress_limit)


def test_the_environments_cap_lives_on_the_state_not_the_game():
    """The env tells each state its cap (at reset and restore); clones keep it, the Game is left as
    configured, and a state made without an environment counts down to the game's default."""
    from envs import wizard_arena_v0

    env = wizard_arena_v0.raw_env(num_bots=2, map_size=8, max_cycles=10)
    env.reset(seed=3)
    game = env.unwrapped.game
    at = game.own_offset + OWN_FEATURES.index("time left")
    assert game.step_limit == game.default_max_cycles * 2
    for _ in range(5):
        env.step(int(np.flatnonzero(env.observe(env.agent_selection)["action_mask"])[-1]))
    state = env.unwrapped.engine_state
    assert state.step_limit == 20
    assert game.observe(state.clone(), 0)[at] == pytest.approx(1.0 - 5 / 20)
    saved = env.unwrapped.save_state()
    other = wizard_arena_v0.raw_env(num_bots=2, map_size=8, max_cycles=4)
    other.reset(options={"state": saved})
    assert other.observe("player_0")["observation"][at] == pytest.approx(1.0 - 5 / 8)
    plain = game.load(game.save(state))
    assert game.observe(plain, 0)[at] == pytest.approx(1.0 - 5 / game.step_limit)
    with pytest.raises(ValueError, match="step limit"):
        state.set_step_limit(0)


def test_the_table_names_every_bots_leader_and_place_in_line():
    s = build("""
    ......
    .0....
    .1..43
    .2...5
    ......
    @.....
    """, 6, parties=[[0, 1, 2], [4, 3, 5]])
    game = s.game
    obs = game.observe(s, 1)  # rows: 1, 2, 3, 4, 5, 0
    k = len(game.table_features)
    place = TABLE_FEATURES.index("place in line")
    rows = {seat: table_row(game, obs, (seat - 1) % 6) for seat in range(6)}
    for seat, lead, idx in ((0, 0, 0), (1, 0, 1), (2, 0, 2), (4, 4, 0), (3, 4, 1), (5, 4, 2)):
        onehot = rows[seat][k:]
        assert onehot.sum() == 1 and onehot[(lead - 1) % 6] == 1, seat
        assert rows[seat][place] == pytest.approx(idx / 5), seat

"""The speed-ups of the Dojo engine agree with plain re-computations:

* the walk oracle's caches (keyed by the visited squares within reach only) give the same move
  directions as an uncached search, on states reached by random play (so the caches are warm
  with answers from other turns and other visited sets);
* the observation's per-state seat cache notices direct edits of the lists it is built from, and
  clones that go separate ways each see their own state.
"""

from __future__ import annotations

import random

import numpy as np

import envs.dojo_v0 as dojo
from envs.dojo.board import FATICA
from envs.dojo.rules import BROWN

from dojo_helpers import pocket_board
from test_dojo_observation import reference


def plain_dirs(state):
    """``move_dirs`` from scratch: the first steps of the longest walks (up to the steps left)."""
    board = state.game.board
    p = state.turn_player
    s = state.pos[p]
    vis = state.mv_visited
    dojo_open = state.track[p] >= BROWN
    if state.mv_extra:
        out = [d for d in range(4) if board.step[s][d] >= 0 and not vis >> board.step[s][d] & 1]
    else:
        memo = {}
        walking_costs = not state.game.config["fatica_on_stop_only"]

        def can_walk(u, k, seen, track):
            if k == 0 or (track >= BROWN and board.entry[u] >= 0):
                return True
            key = (u, k, seen, track)
            if key not in memo:
                memo[key] = any(can_walk(t, k - 1, seen | 1 << t, after(t, track))
                                for t in board.neighbours[u] if not seen >> t & 1)
            return memo[key]

        def after(t, track):  # a Fatica stepped on costs a stripe, and may close the Dojo
            return track - 1 if walking_costs and board.kind[t] == FATICA and board.room[t] < 0 else track

        k = state.mv_steps
        track = state.track[p]
        while k > 0 and not can_walk(s, k, vis, track):
            k -= 1
        if k == 0:
            return []
        out = [d for d in range(4)
               if board.step[s][d] >= 0 and not vis >> board.step[s][d] & 1
               and can_walk(board.step[s][d], k - 1, vis | 1 << board.step[s][d], after(board.step[s][d], track))]
    if dojo_open and board.entry[s] >= 0:
        out.append(board.entry[s])
    return out


def test_move_directions_match_uncached_search_in_random_games():
    checked = 0
    for n, seed in ((2, 11), (4, 12), (8, 13)):
        game = dojo.Game(num_players=n)
        rng = random.Random(seed)
        state = game.new_initial_state(seed)
        for step in range(2500):
            if state.is_terminal():
                break
            if state.main_phase == "move" and not state.pending and state.mv_steps > 0:
                assert state.move_dirs() == plain_dirs(state), (n, step)
                checked += 1
            legal = state.legal_actions()
            state.apply_action(legal[rng.randrange(len(legal))])
        # Brown belts walk differently (Dojo entrances end a walk early): force some.
        state = game.new_initial_state(seed + 100)
        for step in range(1500):
            if state.is_terminal():
                break
            if step % 50 == 0 and state.main_phase == "move" and not state.pending:
                state.track[state.turn_player] = BROWN
            if state.main_phase == "move" and not state.pending and state.mv_steps > 0:
                assert state.move_dirs() == plain_dirs(state), (n, "brown", step)
                checked += 1
            legal = state.legal_actions()
            state.apply_action(legal[rng.randrange(len(legal))])
    assert checked > 1000


def test_move_directions_match_uncached_search_when_a_fatica_closes_the_dojo(tmp_path):
    # a user's board where a Fatica in front of an entrance is a pocket: Brown pawns at 15-17
    game = dojo.Game(num_players=4, board_file=pocket_board(tmp_path))
    rng = random.Random(7)
    checked = 0
    for seed in range(3):
        state = game.new_initial_state(seed)
        for step in range(1500):
            if state.is_terminal():
                break
            if step % 20 == 0 and state.main_phase == "move" and not state.pending:
                state.track[state.turn_player] = BROWN + rng.randrange(3)
            if state.main_phase == "move" and not state.pending and state.mv_steps > 0:
                assert state.move_dirs() == plain_dirs(state), (seed, step)
                checked += 1
            legal = state.legal_actions()
            state.apply_action(legal[rng.randrange(len(legal))])
    assert checked > 500


def check(game, state, me):
    got = game.observe(state, me)
    assert got.dtype == np.float32 and got.shape == game.observation_shape
    assert np.allclose(got, reference(game, state, me))


def test_observation_sees_direct_edits_and_clones():
    game = dojo.Game(num_players=5)
    rng = random.Random(5)
    state = game.new_initial_state(5)
    for _ in range(300):
        legal = state.legal_actions()
        state.apply_action(legal[rng.randrange(len(legal))])
    for me in range(5):
        check(game, state, me)
    # Edit every list the seat cache is built from, one at a time.
    state.track[1] = min(state.track[1] + 4, 17)
    check(game, state, 0)
    state.med_guard[2] = not state.med_guard[2]
    check(game, state, 0)
    state.med_skip[3] = not state.med_skip[3]
    check(game, state, 4)
    holder = next((q for q in range(5) if state.hands[q]), None)
    if holder is not None:
        state.hands[holder].clear()
    else:
        state.hands[0].append(0)
    check(game, state, 0)
    check(game, state, 1)
    # Clones share the cache until they differ.
    other = state.clone()
    check(game, other, 2)
    for s in (state, other):
        for _ in range(40):
            if s.is_terminal():
                break
            legal = s.legal_actions()
            s.apply_action(legal[rng.randrange(len(legal))])
        for me in range(5):
            check(game, s, me)
    other.track[0] = 0
    check(game, other, 0)
    check(game, state, 0)


def test_returned_observation_is_not_shared():
    game = dojo.Game(num_players=3)
    state = game.new_initial_state(1)
    first = game.observe(state, 0)
    keep = first.copy()
    first[:] = 0.25
    assert np.array_equal(game.observe(state, 0), keep)

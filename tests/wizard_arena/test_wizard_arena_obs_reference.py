"""The optimised observation encoder of Wizard Arena agrees with a slow, plain encoder of the layout
documented in ``envs/wizard_arena_v0.py``, on many states of random games (also after save/restore,
after cloning, and when the same state object is observed again after further moves)."""

from __future__ import annotations

import functools
import random

import numpy as np
import pytest

from envs.wizard_arena.game import WizardArenaGame
from envs.wizard_arena.rules import ALLY, GARY, MOVE, REWARD

R = 3  # local radius: a 7x7 window
W = 2 * R + 1


@functools.lru_cache(maxsize=4096)
def walking(terrain, s, source):
    """Breadth-first steps from ``source`` over free ``terrain`` (8 neighbours), absent where unreachable."""
    dist = {source: 0}
    frontier = [source]
    while frontier:
        nxt = []
        for cell in frontier:
            r, c = divmod(cell, s)
            for dr in (-1, 0, 1):
                for dc in (-1, 0, 1):
                    rr, cc = r + dr, c + dc
                    other = rr * s + cc
                    if 0 <= rr < s and 0 <= cc < s and terrain[other] == 0 and other not in dist:
                        dist[other] = dist[cell] + 1
                        nxt.append(other)
        frontier = nxt
    return dist


def walk_block(state, me, goal):
    """The walking distance from my bot to ``goal`` over twice the map size (1: unreachable), then per
    move choice (N … NW, stay) 1 nearer, 0.5 as near, 0 farther or blocked."""
    s = state.map.size
    dist = walking(state.map.terrain, s, goal)
    here = state.pos[me]
    if here not in dist:
        return [1.0] + [0.0] * 9
    block = [min(1.0, dist[here] / (2 * s))]
    r, c = divmod(here, s)
    for dr, dc in ((-1, 0), (-1, 1), (0, 1), (1, 1), (1, 0), (1, -1), (0, -1), (-1, -1), (0, 0)):
        cell = (r + dr) * s + c + dc
        if not (0 <= r + dr < s and 0 <= c + dc < s) or cell not in dist:
            block.append(0.0)
        else:
            block.append(1.0 if dist[cell] < dist[here] else 0.5 if dist[cell] == dist[here] else 0.0)
    return block


def reference(game, state, me):
    """Every value computed from scratch, straight from the documentation."""
    s = game.size
    n = state.n
    last = max(1, s - 1)
    health = state.health
    hp_scale = 2.0 * health if health > 0 else 1.0

    def cap(x):
        return min(1.0, max(0.0, x))

    def rowcol(cell):
        return cell // s, cell % s

    my_side = state.leader_of[me]
    # The six planes of the whole map.
    planes = np.zeros((6, s, s), dtype=np.float32)
    for cell in range(s * s):
        r, c = rowcol(cell)
        planes[0, r, c] = 1.0 if state.map.terrain[cell] != 0 else 0.0
    r, c = rowcol(state.pos[me])
    planes[1, r, c] = 1.0
    for i in range(n):
        r, c = rowcol(state.pos[i])
        if not state.alive[i]:
            planes[4, r, c] = 1.0
        elif i != me and state.leader_of[i] == my_side:
            planes[2, r, c] = 1.0
        elif i != me:
            planes[3, r, c] = 1.0
    r, c = rowcol(state.gary)
    planes[5, r, c] = 1.0
    # The 7x7 window around the seat's bot; beyond the edge reads as terrain only.
    local = np.zeros((6, W, W), dtype=np.float32)
    mr, mc = rowcol(state.pos[me])
    for dr in range(W):
        for dc in range(W):
            rr, cc = mr - R + dr, mc - R + dc
            if 0 <= rr < s and 0 <= cc < s:
                local[:, dr, dc] = planes[:, rr, cc]
            else:
                local[0, dr, dc] = 1.0

    def line_of(i):
        lead = state.leader_of[i]
        return state.parties.get(lead)

    def score(i):  # 0.5 + s / (2(|s| + 20)): never capped
        v = state.score[i]
        return 0.5 + v / (2 * (abs(v) + 20))

    def side_strength(i):
        line = line_of(i)
        members = line if line else [i]
        return sum(state.strength[m] for m in members)

    # Own stats.
    line = line_of(me)
    gr, gc = rowcol(state.gary)
    own = [
        1.0 if state.alive[me] else 0.0,
        cap(state.hp[me] / hp_scale),
        cap(state.max_hp[me] / hp_scale),
        cap(state.strength[me] / 10 / 10),
        score(me),
        1.0 if line is None else 0.0,
        1.0 if line is not None and line[0] == me else 0.0,
        1.0 if line is not None and line[0] != me else 0.0,
        (len(line) if line else 1) / n,
        mr / last, mc / last, gr / last, gc / last,
        1.0 if max(abs(gr - mr), abs(gc - mc)) <= 1 else 0.0,
        cap(side_strength(me) / 10 / 40),
        1.0 if state.phase == MOVE else 0.0,
        1.0 if state.phase == ALLY else 0.0,
        1.0 if state.phase == GARY else 0.0,
        1.0 if state.phase == REWARD else 0.0,
        max(0.0, 1.0 - state.actions_taken / game.step_limit),
        1.0 - state.quiet_rounds / state.no_progress_limit,
    ]
    # The bots table: the seat itself first, then the others in seat order.
    table = []
    for k in range(n):
        i = (me + k) % n
        line = line_of(i)
        r, c = rowcol(state.pos[i])
        asks = (state.phase == ALLY and me in state.ally and i in state.ally and i != me)
        table += [
            1.0 if state.alive[i] else 0.0,
            cap(state.hp[i] / hp_scale),
            cap(state.max_hp[i] / hp_scale),
            cap(state.strength[i] / 10 / 10),
            score(i),
            1.0 if state.alive[i] and state.leader_of[i] == i else 0.0,
            1.0 if line is not None else 0.0,
            1.0 if state.leader_of[i] == my_side else 0.0,
            (len(line) if line else 1) / n,
            r / last, c / last,
            1.0 if asks else 0.0,
            cap(side_strength(i) / 10 / 40),
            line.index(i) / (n - 1) if line else 0.0,
        ]
        if game.config["observation_version"] >= 2:
            table.append(1.0 if i < me else 0.0)  # its seat comes before mine
            table.append(1.0 if (min(i, me), max(i, me)) in state.declined else 0.0)  # a declined pair
        if game.config["observation_version"] >= 3:  # walking to that bot (none to myself or the dead)
            live = i != me and state.alive[i] and state.alive[me]
            table += walk_block(state, me, state.pos[i]) if live else [0.0] * 10
        # one-hot of the table row of its leader (the living only)
        leader_row = [0.0] * n
        if state.alive[i]:
            leader_row[(state.leader_of[i] - me) % n] = 1.0
        table += leader_row
    gary = []
    if game.config["observation_version"] >= 3:
        gary = walk_block(state, me, state.gary) if state.alive[me] else [0.0] * 10
    return np.concatenate([
        planes.reshape(-1), local.reshape(-1), np.array(own, dtype=np.float32), np.array(table, dtype=np.float32),
        np.array(gary, dtype=np.float32),
    ])


def check(game, state, me, where):
    got = game.observe(state, me)
    want = reference(game, state, me)
    assert got.dtype == np.float32 and got.shape == game.observation_shape
    bad = np.flatnonzero(~np.isclose(got, want, rtol=1e-6, atol=1e-7))
    assert bad.size == 0, (where, me, state.phase, bad[:10], got[bad[:10]], want[bad[:10]])


CONFIGS = [
    {},
    {"num_bots": 2, "map_size": 8},
    {"num_bots": 16},
    {"health": 0, "gary_roams": True},
    {"num_bots": 5, "map_size": 6, "terrain_density": 0.0, "health": 3},
    {"num_bots": 4, "map_size": 9, "terrain_density": 0.4, "initial_strength": 12.0},
    {"num_bots": 5, "observation_version": 1},
    {"observation_version": 3},
    {"num_bots": 16, "map_size": 12, "terrain_density": 0.45, "observation_version": 3},
    {"num_bots": 3, "map_size": 7, "health": 0, "gary_roams": True, "observation_version": 3},
]


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: ",".join(f"{k}={v}" for k, v in c.items()) or "default")
def test_observation_matches_reference(config):
    game = WizardArenaGame(**config)
    n = game.num_players
    rng = random.Random(len(config) * 31 + n)
    checked = 0
    for seed in range(8):
        state = game.new_initial_state(seed)
        copies = []
        for step in range(700):
            if state.is_terminal():
                break
            p = state.current_player()
            # The acting seat every step (the env's pattern, so the caches are exercised the
            # same way), and another seat now and then.
            check(game, state, p, (seed, step))
            checked += 1
            if step % 5 == 0:
                check(game, state, rng.randrange(n), (seed, step, "other seat"))
            if step % 37 == 0:
                copies.append((state.clone(), game.save(state)))
            legal = state.legal_actions()
            state.apply_action(legal[rng.randrange(len(legal))])
        # Copies taken earlier: observe them, move them on (they must not share caches with
        # the original in any harmful way), and compare a restored save as well.
        for clone, saved in copies[:6]:
            restored = game.load(saved)
            for k in range(12):
                if clone.is_terminal():
                    break
                for me in {clone.current_player(), rng.randrange(n)}:
                    check(game, clone, me, (seed, "clone", k))
                    check(game, restored, me, (seed, "restored", k))
                    assert np.array_equal(game.observe(clone, me), game.observe(restored, me))
                legal = clone.legal_actions()
                a = legal[rng.randrange(len(legal))]
                clone.apply_action(a)
                restored.apply_action(a)
    assert checked > 200


def test_returned_observation_is_not_shared():
    """Writing into one returned observation must not leak into later ones."""
    game = WizardArenaGame()
    state = game.new_initial_state(3)
    first = game.observe(state, 0)
    keep = first.copy()
    first[:] = 0.5
    assert np.array_equal(game.observe(state, 0), keep)
    rng = random.Random(1)
    for _ in range(50):
        legal = state.legal_actions()
        state.apply_action(legal[rng.randrange(len(legal))])
        p = state.current_player()
        if p < 0:
            break
        obs = game.observe(state, p)
        obs[:] = 1.0
        check(game, state, p, "after scribbling")


def test_state_edited_in_place_is_seen():
    """Direct edits of a state's lists (as the scenario tests do) show up in the next observation."""
    game = WizardArenaGame()
    state = game.new_initial_state(5)
    check(game, state, 0, "start")
    state.score[1] += 7
    state.strength[0] += 30
    state.hp[2] -= 1
    check(game, state, 0, "edited stats")
    check(game, state, 1, "edited stats, other seat")
    free = [c for c in state.map.free_cells if state.occ[c] < 0 and c != state.gary]
    state.occ[state.pos[0]] = -1
    state.pos[0] = free[0]
    state.occ[free[0]] = 0
    state.gary = free[1]
    check(game, state, 0, "moved")
    check(game, state, 3, "moved, other seat")

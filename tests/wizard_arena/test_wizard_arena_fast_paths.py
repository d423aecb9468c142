"""The Wizard Arena's speed-ups agree with the plain code they stand in for: the legal actions
looked up from the mask, the terrain draw that checks reachability before building the map, and
the start placement that keeps the calm cells up to date instead of recomputing them."""

from __future__ import annotations

import random

import numpy as np
import pytest

from envs.core import make_rng
from envs.wizard_arena.game import WizardArenaGame
from envs.wizard_arena.map import DIRECTIONS, FOREST, FREE, ArenaMap, generate_terrain, spread
from envs.wizard_arena.rules import ArenaState


def reference_terrain(size, density, rng, attempts=30):
    """The terrain draw written plainly: build the map for every attempt, keep the first connected
    one, else fill the pockets cut off from the largest free region."""
    target = int(round(density * size * size))
    arena = None
    for _ in range(attempts):
        terrain = [FREE] * (size * size)
        placed = 0
        while placed < target:
            kind = 1 if rng.random() < 0.5 else 2
            clump = [rng.randrange(size * size)]
            want = rng.randint(2, 6)
            while clump and len(clump) <= want and placed < target:
                cell = clump[-1]
                if terrain[cell] == FREE:
                    terrain[cell] = kind
                    placed += 1
                r, c = divmod(cell, size)
                dr, dc = ((-1, 0), (0, 1), (1, 0), (0, -1))[rng.randrange(0, 8, 2) // 2]
                if 0 <= r + dr < size and 0 <= c + dc < size:
                    clump.append((r + dr) * size + c + dc)
                else:
                    break
        arena = ArenaMap(size, terrain)
        free = arena.free_cells
        seen, todo = {free[0]}, [free[0]]
        while todo:
            for n in arena.neighbours[todo.pop()]:
                if n not in seen:
                    seen.add(n)
                    todo.append(n)
        if len(seen) == len(free):
            return arena
    best, seen = set(), set()
    for start in arena.free_cells:
        if start in seen:
            continue
        comp, todo = {start}, [start]
        while todo:
            for n in arena.neighbours[todo.pop()]:
                if n not in comp:
                    comp.add(n)
                    todo.append(n)
        seen |= comp
        if len(comp) > len(best):
            best = comp
    return ArenaMap(size, [t if (t != FREE or i in best) else FOREST for i, t in enumerate(arena.terrain)])


@pytest.mark.parametrize("size,density,attempts", [(16, 0.15, 30), (8, 0.4, 30), (12, 0.5, 2), (6, 0.0, 30)])
def test_terrain_draw_matches_reference(size, density, attempts):
    for seed in range(40):
        fast, slow = random.Random(seed), random.Random(seed)
        got = generate_terrain(size, density, fast, attempts)
        want = reference_terrain(size, density, slow, attempts)
        assert got.terrain == want.terrain, seed
        assert got.connected()
        assert fast.getstate() == slow.getstate()  # the same draws were taken


def reference_start(game, seed):
    """``new_initial_state`` written plainly: every bot on a random cell of ``free_cells(avoid_crowd=True)``."""
    rng = make_rng(seed)
    cfg = game.config
    need = 3 * cfg["num_bots"] + 2
    for _ in range(20):
        arena = generate_terrain(cfg["map_size"], cfg["terrain_density"], rng)
        if len(arena.free_cells) >= need:
            break
    state = ArenaState(game, arena, rng)
    for i in range(state.n):
        cells = state.free_cells(avoid_crowd=True)
        cell = cells[rng.randrange(len(cells))]
        state.pos[i] = cell
        state.occ[cell] = i
    cells = state.free_cells(avoid_crowd=False)
    state.gary = cells[rng.randrange(len(cells))]
    return state


@pytest.mark.parametrize("config", [{}, {"num_bots": 16}, {"num_bots": 16, "map_size": 9, "terrain_density": 0.0},
                                    {"num_bots": 2, "map_size": 8}])
def test_start_placement_matches_reference(config):
    game = WizardArenaGame(**config)
    for seed in range(30):
        got, want = game.new_initial_state(seed), reference_start(game, seed)
        assert got.map.terrain == want.map.terrain
        assert (got.pos, got.occ, got.gary) == (want.pos, want.occ, want.gary), seed
        assert got.rng.getstate() == want.rng.getstate()


def test_legal_actions_match_the_mask():
    rng = random.Random(5)
    for config in ({}, {"num_bots": 16}, {"health": 0}):
        game = WizardArenaGame(**config)
        for seed in range(4):
            state = game.new_initial_state(seed)
            while not state.is_terminal():
                legal = state.legal_actions()
                assert legal == np.flatnonzero(state.legal_mask()).tolist()
                state.apply_action(legal[rng.randrange(len(legal))])
            assert state.legal_actions() == []


def reference_tables(size, terrain):
    """The map's move tables built cell by cell and step by step."""
    passable = [t == FREE for t in terrain]
    step, squeeze, neighbours, moves = [], [], [], []
    for cell in range(size * size):
        r, c = divmod(cell, size)
        row_step, row_squeeze, row_moves = [-1] * 8, [False] * 8, []
        for d, (dr, dc) in enumerate(DIRECTIONS):
            rr, cc = r + dr, c + dc
            if 0 <= rr < size and 0 <= cc < size and passable[rr * size + cc]:
                row_step[d] = rr * size + cc
                row_moves.append((d, rr * size + cc))
                if dr and dc and not passable[rr * size + c] and not passable[r * size + cc]:
                    row_squeeze[d] = True
        step.append(tuple(row_step))
        squeeze.append(tuple(row_squeeze))
        moves.append(tuple(row_moves))
        neighbours.append(tuple(t for _, t in row_moves))
    return tuple(step), tuple(squeeze), tuple(neighbours), tuple(moves)


@pytest.mark.parametrize("size,density", [(16, 0.15), (6, 0.0), (9, 0.4), (12, 0.5)])
def test_map_tables_match_reference(size, density):
    for seed in range(15):
        arena = generate_terrain(size, density, random.Random(seed))
        holes = random.Random(seed).choices(range(3), k=size * size)  # disconnected terrain too
        for terrain in (arena.terrain, holes):
            got = ArenaMap(size, terrain)
            want = reference_tables(size, terrain)
            assert (got.step, got.squeeze, got.neighbours, got.moves) == want
            assert all(type(t) is int for row in got.step for t in row)
            assert all(type(v) is bool for row in got.squeeze for v in row)
            assert got.free_cells == tuple(i for i, t in enumerate(terrain) if t == FREE)


def reference_spread(size, open_cells, sources):
    """Breadth-first walking distances written plainly: relax every open neighbour until nothing changes."""
    far = 4 * size * size
    dist = [far] * (size * size)
    for s in sources:
        dist[s] = 0
    changed = True
    while changed:
        changed = False
        for cell in range(size * size):
            if dist[cell] >= far:
                continue
            r, c = divmod(cell, size)
            for dr, dc in DIRECTIONS:
                rr, cc = r + dr, c + dc
                other = rr * size + cc
                if 0 <= rr < size and 0 <= cc < size and open_cells[other] and dist[other] > dist[cell] + 1:
                    dist[other] = dist[cell] + 1
                    changed = True
    return dist


@pytest.mark.parametrize("size,density", [(6, 0.0), (9, 0.4), (16, 0.15)])
def test_walking_distances_match_reference(size, density):
    """``spread`` (several sources, some cells walled off) and the map's cached ``walking_distances``
    agree with a plain relaxation; ``rows()`` hands out a new list each time (the cache stays intact)."""
    rng = random.Random(size)
    arena = generate_terrain(size, density, rng)
    for _ in range(6):
        open_cells = [p and rng.random() > 0.1 for p in arena.passable]
        sources = rng.sample(arena.free_cells, rng.randint(1, 3))
        assert spread(size, open_cells, sources) == reference_spread(size, open_cells, sources)
    blocked = [c for c in range(size * size) if not arena.passable[c]]
    for source in rng.sample(arena.free_cells, 5) + blocked[:2]:
        want = reference_spread(size, arena.passable, [source])
        assert arena.walking_distances(source).tolist() == want == spread(size, arena.passable, [source])
        assert arena.walking_distances(source) is arena.walking_distances(source)  # cached
    rows = arena.rows()
    rows[0] = "x"
    assert arena.rows()[0] != "x" and ArenaMap.from_rows(arena.rows()).terrain == arena.terrain


def test_maps_of_one_size_share_every_equal_row():
    """Two maps of one size hold one object for every row of equal value at a cell (the rows of a cell
    with no obstacle around it are equal on every map), and their own rows where the values differ:
    the sharing that keeps many tables' maps small changes no value (``test_map_tables_match_reference``)."""
    size = 12
    first, second = (generate_terrain(size, 0.2, random.Random(seed)) for seed in (1, 2))

    def clear(arena, cell):
        return all(arena.passable[t] for t in _on_map(size, cell))

    both = [c for c in range(size * size) if clear(first, c) and clear(second, c)]
    assert len(both) > 10
    for table in ("step", "squeeze", "neighbours", "moves"):
        rows_a, rows_b = getattr(first, table), getattr(second, table)
        for c in both:
            assert rows_a[c] is rows_b[c]
        for c in range(size * size):
            assert (rows_a[c] is rows_b[c]) == (rows_a[c] == rows_b[c])
    assert any(first.step[c] != second.step[c] for c in range(size * size))


def _on_map(size, cell):
    r, c = divmod(cell, size)
    return [(r + dr) * size + c + dc for dr, dc in DIRECTIONS if 0 <= r + dr < size and 0 <= c + dc < size]


def test_shared_rows_start_afresh_past_their_cap(monkeypatch):
    """Past ``_SHARED_ROWS_MAX`` rows the shared rows of that map size start afresh: the memory they hold
    stays bounded, and a map built after that still has the right tables."""
    import envs.wizard_arena.map as arena_map

    monkeypatch.setattr(arena_map, "_SHARED_ROWS_MAX", 50)
    monkeypatch.setitem(arena_map._SHARED_ROWS, 7, ({}, {}, {}, {}))
    first = generate_terrain(7, 0.3, random.Random(0))
    assert sum(map(len, arena_map._SHARED_ROWS[7])) > 50
    second = generate_terrain(7, 0.3, random.Random(1))
    assert sum(map(len, arena_map._SHARED_ROWS[7])) <= 4 * 49
    assert (second.step, second.squeeze, second.neighbours, second.moves) == reference_tables(7, second.terrain)
    assert first.step != second.step

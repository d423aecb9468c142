"""The arena's map: seeded terrain of mountain and forest clumps, and the geometry of moving on it.

Cells are numbered ``row * size + col`` (row 0 at the top). Movement is to any of the 8 neighbours;
a *squeeze* is a diagonal step whose two orthogonal neighbours are both obstacles.
"""

from __future__ import annotations

import array
import random
from itertools import compress
from typing import Any

import numpy as np

FREE, MOUNTAIN, FOREST = 0, 1, 2
TERRAIN_CHARS = {FREE: ".", MOUNTAIN: "M", FOREST: "F"}
CHAR_TERRAIN = {v: k for k, v in TERRAIN_CHARS.items()}

#: The 8 compass steps (d_row, d_col) in action order, then "stay".
DIRECTIONS = ((-1, 0), (-1, 1), (0, 1), (1, 1), (1, 0), (1, -1), (0, -1), (-1, -1))
DIRECTION_NAMES = ("N", "NE", "E", "SE", "S", "SW", "W", "NW")


def spread(size: int, open_cells: list[bool], sources: list[int]) -> list[int]:
    """Steps (8 neighbours) from the nearest of ``sources`` to every cell, walking only on
    ``open_cells``; cells it cannot reach get ``4 · size²``."""
    far = 4 * size * size
    dist = [far] * (size * size)
    for cell in sources:
        dist[cell] = 0
    near = _on_map_neighbours(size)
    frontier, steps = list(sources), 0
    while frontier:  # breadth first: a cell's first visit is its shortest walk
        steps += 1
        nxt = []
        for cell in frontier:
            for other in near[cell]:
                if dist[other] == far and open_cells[other]:
                    dist[other] = steps
                    nxt.append(other)
        frontier = nxt
    return dist


#: Per map size, every cell's on-map neighbours (see ``_on_map_neighbours``).
_ON_MAP: dict[int, tuple[tuple[int, ...], ...]] = {}


def _on_map_neighbours(size: int) -> tuple[tuple[int, ...], ...]:
    """Per cell, the cells at Chebyshev distance 1 that lie on a ``size`` × ``size`` map."""
    near = _ON_MAP.get(size)
    if near is None:
        near = _ON_MAP[size] = tuple(tuple(t for _, t, _, _ in out) for out in _geometry(size)[2])
    return near


#: Per map size, the geometry every map of that size shares (see ``_geometry``).
_GEOMETRY: dict[int, tuple] = {}


def _geometry(size: int) -> tuple:
    """(row of every cell, column of every cell, per cell the on-map steps as (direction, target,
    the two orthogonal cells a diagonal step passes between, or -1, -1 for a straight step), per
    cell the bit set of its on-map neighbours (bit c for cell c))."""
    geo = _GEOMETRY.get(size)
    if geo is None:
        steps = []
        for cell in range(size * size):
            r, c = divmod(cell, size)
            out = []
            for d, (dr, dc) in enumerate(DIRECTIONS):
                rr, cc = r + dr, c + dc
                if 0 <= rr < size and 0 <= cc < size:
                    if dr and dc:
                        out.append((d, rr * size + cc, rr * size + c, r * size + cc))
                    else:
                        out.append((d, rr * size + cc, -1, -1))
            steps.append(tuple(out))
        geo = _GEOMETRY[size] = (
            tuple(c // size for c in range(size * size)),
            tuple(c % size for c in range(size * size)),
            tuple(steps),
            tuple(sum(1 << t for _, t, _, _ in out) for out in steps),
        )
    return geo


#: Per map size, the step geometry as arrays (see ``_step_arrays``).
_STEP_ARRAYS: dict[int, tuple] = {}


def _step_arrays(size: int) -> tuple:
    """(target, first side, second side) of every cell's 8 steps as (cells, 8) arrays, with
    ``size * size`` standing for "off the map" (and for the sides of a straight step); per cell its
    8 (direction, target) pairs and its 8 targets, in direction order."""
    arrays = _STEP_ARRAYS.get(size)
    if arrays is None:
        off = size * size
        target = np.full((off, 8), off, dtype=np.intp)
        side_a = np.full((off, 8), off, dtype=np.intp)
        side_b = np.full((off, 8), off, dtype=np.intp)
        for cell, out in enumerate(_geometry(size)[2]):
            for d, t, a, b in out:
                target[cell, d] = t
                if a >= 0:
                    side_a[cell, d], side_b[cell, d] = a, b
        targets = [tuple(int(t) for t in row) for row in target]
        pairs = [tuple(enumerate(row)) for row in targets]
        arrays = _STEP_ARRAYS[size] = (target, side_a, side_b, pairs, targets)
    return arrays


#: Per map size, one object for each distinct row of the maps' tables ``step``, ``squeeze``,
#: ``neighbours`` and ``moves`` (one dict each, keyed by the row: rows of different tables are never
#: mixed, even where they compare equal, as ``(0, 1) == (False, True)`` does). Each map's tables hold
#: these objects. With many tables in one process (``envs.vector``) every table has its own map, and
#: sharing the rows keeps the ones in use in the processor's caches. A cell's rows depend only on
#: which of its 8 neighbours are open, so there are at most 256 per cell and table (``squeeze`` rows,
#: 8 booleans, at most 256 in all); the dicts start afresh past ``_SHARED_ROWS_MAX`` rows together.
#: (The rows are tuples: nothing changes them.)
_SHARED_ROWS: dict[int, tuple[dict[tuple, tuple], ...]] = {}
_SHARED_ROWS_MAX = 150_000


class ArenaMap:
    """Immutable terrain plus precomputed neighbour tables; shared by every clone of a state."""

    __slots__ = ("size", "terrain", "passable", "step", "squeeze", "neighbours", "moves", "free_cells", "cache",
                 "row", "col", "near_bits")

    def __init__(self, size: int, terrain: list[int] | tuple[int, ...]) -> None:
        if len(terrain) != size * size:
            raise ValueError(f"terrain has {len(terrain)} cells, expected {size * size}")
        self.size = size
        self.terrain = tuple(map(int, terrain))
        if not TERRAIN_CHARS.keys() >= set(self.terrain):
            raise ValueError("terrain values must be 0 (free), 1 (mountain) or 2 (forest)")
        passable = self.passable = tuple(t == FREE for t in self.terrain)
        rows, cols, _, near_bits = _geometry(size)
        #: row[cell], col[cell]: the cell's row and column.
        self.row, self.col = rows, cols
        #: near_bits[cell]: the cells at Chebyshev distance 1 (passable or not) as a bit set.
        self.near_bits = near_bits
        # The tables below, built with whole-map array operations (a cell off the map counts as an
        # obstacle): a step is open when its target is passable, a squeeze when it is diagonal and
        # both cells it passes between are obstacles.
        target, side_a, side_b, pairs, targets = _step_arrays(size)
        blocked = np.ones(size * size + 1, dtype=bool)
        blocked[:-1] = np.array(self.terrain) != FREE
        open_steps = ~blocked[target]
        open_rows = open_steps.tolist()
        step = np.where(open_steps, target, -1).tolist()
        squeeze = (open_steps & (side_a < size * size) & blocked[side_a] & blocked[side_b]).tolist()
        # Every row is the one object of its value for all maps of this size (``_SHARED_ROWS``): a
        # cell's rows depend only on which of its neighbours are open, and most cells look alike on
        # most maps.
        shared = _SHARED_ROWS.get(size)
        if shared is None or sum(map(len, shared)) > _SHARED_ROWS_MAX:
            shared = _SHARED_ROWS[size] = ({}, {}, {}, {})

        def rows_of(table: int, rows: Any) -> tuple:
            one = shared[table].setdefault
            return tuple(one(row, row) for row in rows)

        #: step[cell][d]: the cell reached by direction d, or -1 (off the map or an obstacle).
        self.step = rows_of(0, map(tuple, step))
        #: squeeze[cell][d]: that step is a diagonal squeeze between two obstacle corners.
        self.squeeze = rows_of(1, map(tuple, squeeze))
        #: neighbours[cell]: passable cells at Chebyshev distance 1 (in direction order).
        self.neighbours = rows_of(2, map(tuple, map(compress, targets, open_rows)))
        #: moves[cell]: (direction, target) for every step onto a passable cell.
        self.moves = rows_of(3, map(tuple, map(compress, pairs, open_rows)))
        self.free_cells = tuple(compress(range(size * size), passable))
        #: Scratch space for encoders (e.g. the observation's terrain template); never saved.
        self.cache: dict = {}

    def walking_distances(self, source: int) -> array.array:
        """Steps from ``source`` to every cell over passable ground (8 neighbours, bots ignored,
        squeezes allowed); obstacles and cells it cannot reach get ``4 · size²``. Computed once
        per source and kept in ``cache``, shared: read it, never change it.

        Kept as 16-bit integers (``4 · 64² < 2¹⁶``), a quarter of a list's memory: with many tables
        in one process (``envs.vector``) every map holds up to ``size²`` of these, and lists of
        them outgrew the processor's caches."""
        key = ("walking distances", source)
        dist = self.cache.get(key)
        if dist is None:
            dist = self.cache[key] = array.array("H", spread(self.size, self.passable, [source]))
        return dist

    def is_squeeze(self, a: int, b: int) -> bool:
        """Is the step between neighbouring cells a and b a squeeze (diagonal between obstacles)?"""
        row, col = self.row, self.col
        ra, ca, rb, cb = row[a], col[a], row[b], col[b]
        if ra == rb or ca == cb:
            return False
        size = self.size
        return not self.passable[ra * size + cb] and not self.passable[rb * size + ca]

    def rows(self) -> list[str]:
        """The terrain as text rows ('.' free, 'M' mountain, 'F' forest); a new list each call."""
        rows = self.cache.get("rows")
        if rows is None:
            s = self.size
            rows = self.cache["rows"] = tuple(
                "".join(TERRAIN_CHARS[t] for t in self.terrain[r * s:(r + 1) * s]) for r in range(s))
        return list(rows)

    @classmethod
    def from_rows(cls, rows: list[str]) -> ArenaMap:
        size = len(rows)
        if any(len(row) != size for row in rows):
            raise ValueError("terrain rows must form a square")
        return cls(size, [CHAR_TERRAIN[ch] for row in rows for ch in row])

    def connected(self) -> bool:
        """Can every free cell reach every other by 8-neighbour steps?"""
        return _all_free_connected(self.size, self.terrain)


def _free_region(size: int, terrain: list[int] | tuple[int, ...], start: int) -> set[int]:
    """The free cells reachable from the free cell ``start`` by 8-neighbour steps."""
    steps = _geometry(size)[2]
    seen = {start}
    todo = [start]
    while todo:
        for _, n, _, _ in steps[todo.pop()]:
            if terrain[n] == FREE and n not in seen:
                seen.add(n)
                todo.append(n)
    return seen


def _all_free_connected(size: int, terrain: list[int] | tuple[int, ...]) -> bool:
    """Can every free cell of ``terrain`` reach every other (False when there is none)?"""
    free = [c for c, t in enumerate(terrain) if t == FREE]
    return bool(free) and len(_free_region(size, terrain, free[0])) == len(free)


def chebyshev(size: int, a: int, b: int) -> int:
    ra, ca = divmod(a, size)
    rb, cb = divmod(b, size)
    return max(abs(ra - rb), abs(ca - cb))


def generate_terrain(size: int, density: float, rng: random.Random, attempts: int = 30) -> ArenaMap:
    """Clumps of mountains and forests covering about ``density`` of the cells, every free cell
    reachable from every other. A map failing the reachability check is drawn again; after
    ``attempts`` failures the unreachable pockets of the last draw are filled in as forest."""
    target = int(round(density * size * size))
    terrain: list[int] = []
    for _ in range(attempts):
        terrain = [FREE] * (size * size)
        placed = 0
        while placed < target:
            kind = MOUNTAIN if rng.random() < 0.5 else FOREST
            clump = [rng.randrange(size * size)]
            want = rng.randint(2, 6)
            while clump and len(clump) <= want and placed < target:
                cell = clump[-1]
                if terrain[cell] == FREE:
                    terrain[cell] = kind
                    placed += 1
                r, c = divmod(cell, size)
                dr, dc = DIRECTIONS[rng.randrange(0, 8, 2)]  # orthogonal growth
                rr, cc = r + dr, c + dc
                if 0 <= rr < size and 0 <= cc < size:
                    clump.append(rr * size + cc)
                else:
                    break
        # (checked on the plain terrain list: the map's tables are built only for the draw kept)
        if _all_free_connected(size, terrain):
            return ArenaMap(size, terrain)
    # Fill every pocket that is cut off from the largest free region.
    best: set[int] = set()
    seen: set[int] = set()
    for start in range(size * size):
        if terrain[start] != FREE or start in seen:
            continue
        comp = _free_region(size, terrain, start)
        seen |= comp
        if len(comp) > len(best):
            best = comp
    terrain = [t if (t != FREE or i in best) else FOREST for i, t in enumerate(terrain)]
    return ArenaMap(size, terrain)

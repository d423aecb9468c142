"""The arena's map: seeded terrain of mountain and forest clumps, and the geometry of moving on it.

Cells are numbered ``row * size + col`` (row 0 at the top). Movement is to any of the 8 neighbours;
a *squeeze* is a diagonal step whose two orthogonal neighbours are both obstacles.
"""

from __future__ import annotations

import array
import random
from itertools import compress

import numpy as np

FREE, MOUNTAIN, FOREST = 0, 1, 2
TERRAIN_CHARS = {FREE: ".", MOUNTAIN: "M", FOREST: "F"}
CHAR_TERRAIN = {v: k for k, v in TERRAIN_CHARS.items()}
#: The terrain values as bytes, translated to their characters (``ArenaMap.rows``).
_TERRAIN_TEXT = bytes.maketrans(bytes(TERRAIN_CHARS), "".join(TERRAIN_CHARS.values()).encode("ascii"))

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
    """(the target of every cell's 8 steps as a (cells, 8) array, with ``size * size`` standing for
    "off the map"; per cell its 8 (direction, target) pairs in direction order; ``256 · cell`` per
    cell, the first of its keys in ``_ROWS_BY_OPEN``)."""
    arrays = _STEP_ARRAYS.get(size)
    if arrays is None:
        off = size * size
        target = np.full((off, 8), off, dtype=np.intp)
        for cell, out in enumerate(_geometry(size)[2]):
            for d, t, _, _ in out:
                target[cell, d] = t
        pairs = [tuple(enumerate(int(t) for t in row)) for row in target]
        arrays = _STEP_ARRAYS[size] = (target, pairs, 256 * np.arange(off, dtype=np.intp))
    return arrays


def _cell_rows(size: int, cell: int, open_bits: int, shared: tuple[dict, ...]) -> tuple[tuple, ...]:
    """A cell's rows of the tables ``step``, ``squeeze``, ``neighbours`` and ``moves`` (see
    ``ArenaMap``), each the shared object of its value (``_SHARED_ROWS``), from which of its steps
    are open (bit d of ``open_bits``: the step in direction d lands on the map on a passable cell)."""
    pairs = _step_arrays(size)[1][cell]
    moves = tuple([pairs[d] for d in _OPEN_DIRECTIONS[open_bits]])
    near = tuple([t for _, t in moves])
    step = [-1] * 8
    for d, t in moves:
        step[d] = t
    step, squeeze = tuple(step), _SQUEEZES[open_bits]
    return (shared[0].setdefault(step, step), shared[1].setdefault(squeeze, squeeze),
            shared[2].setdefault(near, near), shared[3].setdefault(moves, moves))


#: By ``open_bits`` (see ``_cell_rows``): the open directions, in order.
_OPEN_DIRECTIONS = tuple(tuple(d for d in range(8) if bits >> d & 1) for bits in range(256))
#: By ``open_bits``: the squeeze row, a squeeze being an open diagonal step (odd d) whose two sides,
#: the straight steps d - 1 and d + 1, are both closed.
_SQUEEZES = tuple(
    tuple(d & 1 == 1 and bits >> d & 1 == 1 and bits >> (d - 1) & 1 == 0 and bits >> ((d + 1) & 7) & 1 == 0
          for d in range(8))
    for bits in range(256))


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
#: Per map size, the four shared rows of a cell by ``256 · cell + open``, where bit d of ``open`` is set
#: when the step in direction d lands on the map on a passable cell: what a cell's rows follow from.
#: Looking a cell up by that number is one small-integer lookup; building its four rows and finding
#: each among the shared ones would be most of the time it takes to deal a game. Held with the
#: ``_SHARED_ROWS`` entry it points into, and started afresh with it.
_ROWS_BY_OPEN: dict[int, tuple[tuple[dict[tuple, tuple], ...], dict[int, tuple[tuple, ...]]]] = {}
#: The bit of each direction in ``open`` (``_ROWS_BY_OPEN``).
_DIRECTION_BITS = np.array([1 << d for d in range(8)], dtype=np.intp)


class ArenaMap:
    """Immutable terrain plus precomputed neighbour tables; shared by every clone of a state."""

    __slots__ = ("size", "terrain", "passable", "step", "squeeze", "neighbours", "moves", "open_bits", "free_cells",
                 "cache", "row", "col", "near_bits")

    def __init__(self, size: int, terrain: list[int] | tuple[int, ...]) -> None:
        if len(terrain) != size * size:
            raise ValueError(f"terrain has {len(terrain)} cells, expected {size * size}")
        self.size = size
        self.terrain = tuple(map(int, terrain))
        if not TERRAIN_CHARS.keys() >= set(self.terrain):
            raise ValueError("terrain values must be 0 (free), 1 (mountain) or 2 (forest)")
        passable = self.passable = tuple(map(FREE.__eq__, self.terrain))
        rows, cols, _, near_bits = _geometry(size)
        #: row[cell], col[cell]: the cell's row and column.
        self.row, self.col = rows, cols
        #: near_bits[cell]: the cells at Chebyshev distance 1 (passable or not) as a bit set.
        self.near_bits = near_bits
        # A step is open when its target is passable (a cell off the map counts as an obstacle).
        target, _, first_keys = _step_arrays(size)
        blocked = np.ones(size * size + 1, dtype=bool)
        blocked[:-1] = np.array(self.terrain) != FREE
        open_steps = ~blocked[target]
        # Every row is the one object of its value for all maps of this size (``_SHARED_ROWS``): a
        # cell's rows depend only on which of its neighbours are open, and most cells look alike on
        # most maps. They are found by that (``_ROWS_BY_OPEN``), and made only for a cell whose
        # neighbours are open in a way not seen before.
        shared = _SHARED_ROWS.get(size)
        if shared is None or sum(map(len, shared)) > _SHARED_ROWS_MAX:
            shared = _SHARED_ROWS[size] = ({}, {}, {}, {})
        by_open = _ROWS_BY_OPEN.get(size)
        if by_open is None or by_open[0] is not shared:
            by_open = _ROWS_BY_OPEN[size] = (shared, {})
        index = by_open[1]
        open_bits = open_steps @ _DIRECTION_BITS
        #: open_bits[cell]: bit d set when the step in direction d lands on a passable cell.
        self.open_bits = tuple(open_bits.tolist())
        keys = (open_bits + first_keys).tolist()
        found = list(map(index.get, keys))
        if None in found:
            for cell, key in enumerate(keys):
                if found[cell] is None:
                    found[cell] = index[key] = _cell_rows(size, cell, key & 255, shared)
        #: step[cell][d]: the cell reached by direction d, or -1 (off the map or an obstacle).
        #: squeeze[cell][d]: that step is a diagonal squeeze between two obstacle corners.
        #: neighbours[cell]: passable cells at Chebyshev distance 1 (in direction order).
        #: moves[cell]: (direction, target) for every step onto a passable cell.
        self.step, self.squeeze, self.neighbours, self.moves = zip(*found)
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
            text = bytes(self.terrain).translate(_TERRAIN_TEXT).decode("ascii")
            rows = self.cache["rows"] = tuple(text[r * s:(r + 1) * s] for r in range(s))
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
    """Can every free cell of ``terrain`` reach every other (False when there is none)?

    A flood fill over bit sets (bit c: cell c), from the first free cell: each round the region
    grows by one step in every direction (a step up or down, then a step left or right of that,
    reaches all 8 neighbours) and keeps only free cells, until it stops growing."""
    free = int.from_bytes(np.packbits(np.asarray(terrain) == FREE, bitorder="little").tobytes(), "little")
    if not free:
        return False
    off_first_col, off_last_col = _column_masks(size)
    region = free & -free  # the first free cell
    while True:
        grown = region | region << size | region >> size
        grown = (grown | (grown << 1) & off_first_col | (grown >> 1) & off_last_col) & free
        if grown == region:
            return region == free
        region = grown


#: Per map size, the bit sets of the cells off the first column and off the last column.
_COLUMN_MASKS: dict[int, tuple[int, int]] = {}


def _column_masks(size: int) -> tuple[int, int]:
    """(cells not in the first column, cells not in the last column) as bit sets: a step right
    (bit c to c + 1) that lands in the first column, or left that lands in the last, has wrapped
    round from the row before or after."""
    masks = _COLUMN_MASKS.get(size)
    if masks is None:
        cells = range(size * size)
        masks = _COLUMN_MASKS[size] = (sum(1 << c for c in cells if c % size != 0),
                                       sum(1 << c for c in cells if c % size != size - 1))
    return masks


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

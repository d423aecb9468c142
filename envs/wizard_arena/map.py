"""The arena's map: seeded terrain of mountain and forest clumps, and the geometry of moving on it.

Cells are numbered ``row * size + col`` (row 0 at the top). Movement is to any of the 8 neighbours;
a *squeeze* is a diagonal step whose two orthogonal neighbours are both obstacles.
"""

from __future__ import annotations

import random

FREE, MOUNTAIN, FOREST = 0, 1, 2
TERRAIN_CHARS = {FREE: ".", MOUNTAIN: "M", FOREST: "F"}
CHAR_TERRAIN = {v: k for k, v in TERRAIN_CHARS.items()}

#: The 8 compass steps (d_row, d_col) in action order, then "stay".
DIRECTIONS = ((-1, 0), (-1, 1), (0, 1), (1, 1), (1, 0), (1, -1), (0, -1), (-1, -1))
DIRECTION_NAMES = ("N", "NE", "E", "SE", "S", "SW", "W", "NW")


class ArenaMap:
    """Immutable terrain plus precomputed neighbour tables; shared by every clone of a state."""

    __slots__ = ("size", "terrain", "passable", "step", "squeeze", "neighbours", "moves", "free_cells", "cache")

    def __init__(self, size: int, terrain: list[int] | tuple[int, ...]) -> None:
        if len(terrain) != size * size:
            raise ValueError(f"terrain has {len(terrain)} cells, expected {size * size}")
        self.size = size
        self.terrain = tuple(int(t) for t in terrain)
        if any(t not in TERRAIN_CHARS for t in self.terrain):
            raise ValueError("terrain values must be 0 (free), 1 (mountain) or 2 (forest)")
        self.passable = tuple(t == FREE for t in self.terrain)
        step: list[tuple[int, ...]] = []
        squeeze: list[tuple[bool, ...]] = []
        neighbours: list[tuple[int, ...]] = []
        for cell in range(size * size):
            r, c = divmod(cell, size)
            row_step, row_squeeze = [], []
            for dr, dc in DIRECTIONS:
                rr, cc = r + dr, c + dc
                if 0 <= rr < size and 0 <= cc < size and self.passable[rr * size + cc]:
                    row_step.append(rr * size + cc)
                    row_squeeze.append(
                        dr != 0 and dc != 0
                        and not self.passable[rr * size + c] and not self.passable[r * size + cc]
                    )
                else:
                    row_step.append(-1)
                    row_squeeze.append(False)
            step.append(tuple(row_step))
            squeeze.append(tuple(row_squeeze))
            neighbours.append(tuple(t for t in row_step if t >= 0))
        #: step[cell][d]: the cell reached by direction d, or -1 (off the map or an obstacle).
        self.step = tuple(step)
        #: squeeze[cell][d]: that step is a diagonal squeeze between two obstacle corners.
        self.squeeze = tuple(squeeze)
        #: neighbours[cell]: passable cells at Chebyshev distance 1.
        self.neighbours = tuple(neighbours)
        #: moves[cell]: (direction, target) for every step onto a passable cell.
        self.moves = tuple(tuple((d, t) for d, t in enumerate(row) if t >= 0) for row in step)
        self.free_cells = tuple(i for i, p in enumerate(self.passable) if p)
        #: Scratch space for encoders (e.g. the observation's terrain template); never saved.
        self.cache: dict = {}

    def is_squeeze(self, a: int, b: int) -> bool:
        """Is the step between neighbouring cells a and b a squeeze (diagonal between obstacles)?"""
        size = self.size
        ra, ca = divmod(a, size)
        rb, cb = divmod(b, size)
        if ra == rb or ca == cb:
            return False
        return not self.passable[ra * size + cb] and not self.passable[rb * size + ca]

    def rows(self) -> list[str]:
        s = self.size
        return ["".join(TERRAIN_CHARS[t] for t in self.terrain[r * s:(r + 1) * s]) for r in range(s)]

    @classmethod
    def from_rows(cls, rows: list[str]) -> ArenaMap:
        size = len(rows)
        if any(len(row) != size for row in rows):
            raise ValueError("terrain rows must form a square")
        return cls(size, [CHAR_TERRAIN[ch] for row in rows for ch in row])

    def connected(self) -> bool:
        """Can every free cell reach every other by 8-neighbour steps?"""
        free = self.free_cells
        if not free:
            return False
        seen = {free[0]}
        todo = [free[0]]
        while todo:
            cell = todo.pop()
            for n in self.neighbours[cell]:
                if n not in seen:
                    seen.add(n)
                    todo.append(n)
        return len(seen) == len(free)


def chebyshev(size: int, a: int, b: int) -> int:
    ra, ca = divmod(a, size)
    rb, cb = divmod(b, size)
    return max(abs(ra - rb), abs(ca - cb))


def generate_terrain(size: int, density: float, rng: random.Random, attempts: int = 30) -> ArenaMap:
    """Clumps of mountains and forests covering about ``density`` of the cells, every free cell
    reachable from every other. A map failing the reachability check is drawn again; after
    ``attempts`` failures the unreachable pockets of the last draw are filled in as forest."""
    target = int(round(density * size * size))
    arena = None
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
        arena = ArenaMap(size, terrain)
        if arena.connected():
            return arena
    # Fill every pocket that is cut off from the largest free region.
    assert arena is not None
    best: set[int] = set()
    seen: set[int] = set()
    for start in arena.free_cells:
        if start in seen:
            continue
        comp = {start}
        todo = [start]
        while todo:
            cell = todo.pop()
            for n in arena.neighbours[cell]:
                if n not in comp:
                    comp.add(n)
                    todo.append(n)
        seen |= comp
        if len(comp) > len(best):
            best = comp
    terrain = [t if (t != FREE or i in best) else FOREST for i, t in enumerate(arena.terrain)]
    return ArenaMap(size, terrain)

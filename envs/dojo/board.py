"""The Dojo board: a readable text map, its parser and its validator.

The map format is described at the top of ``board.txt`` (a doubled-resolution drawing: squares on
odd lines/columns, edges between them). :func:`parse_board` turns the text into a :class:`Board`
(precomputed neighbour tables for the move generator) and raises :class:`BoardError` naming the
line and column of anything malformed; :func:`validate_board` checks the design rules (Safe Room
exits, Dojo entrances, paired tunnels, no dead ends, optional 4-fold symmetry) and returns a list
of problems. :func:`load_board` does both and raises on the first problem.

Pure standard library; imported by the rules engine.
"""

from __future__ import annotations

import os
import pathlib
import stat

SIZE = 16
NUM_SQUARES = SIZE * SIZE
DEFAULT_BOARD_PATH = pathlib.Path(__file__).with_name("board.txt")

#: Square kinds, by index. Safe Room and Dojo squares are kind 0 (Tatami).
KINDS = ".AF?TPK"
TATAMI, ALLENAMENTO, FATICA, NEBBIA, TUNNEL, PASSO_FALSO, SFIDA = range(7)
KIND_NAMES = ("Tatami", "Allenamento", "Fatica", "Nebbia del Dojo", "Tunnel", "Passo Falso", "Sfida")

#: Directions: N, E, S, W as (row delta, column delta).
DIRS = ((-1, 0), (0, 1), (1, 0), (0, -1))
DIR_NAMES = "NESW"

#: The four corner Safe Rooms, clockwise from the top-left: (first row, first column).
CORNER_ORIGINS = ((0, 0), (0, SIZE - 3), (SIZE - 3, SIZE - 3), (SIZE - 3, 0))
DOJO_ROWS = range(6, 10)
DOJO_COLS = range(6, 10)
WALK_LENGTHS = range(2, 13)


class BoardError(ValueError):
    """A board file that cannot be used; the message says where and why."""


def sq(r: int, c: int) -> int:
    return r * SIZE + c


def rc(s: int) -> tuple[int, int]:
    return divmod(s, SIZE)


def neighbours(s: int):
    """``(direction, square)`` for each on-board orthogonal neighbour of ``s`` (walls ignored)."""
    r, c = rc(s)
    for d, (dr, dc) in enumerate(DIRS):
        r2, c2 = r + dr, c + dc
        if 0 <= r2 < SIZE and 0 <= c2 < SIZE:
            yield d, sq(r2, c2)


def rotate(s: int) -> int:
    """The square a quarter turn clockwise maps ``s`` to."""
    r, c = rc(s)
    return sq(c, SIZE - 1 - r)


class Board:
    """A parsed board with the tables the engine needs (all indexed by square 0..255)."""

    def __init__(self, kind, room, dojo, walls, entrances, tunnel_pairs, text, source):
        self.kind: list[int] = kind  # square kind index
        self.room: list[int] = room  # corner index of the Safe Room holding the square, else -1
        self.dojo: list[bool] = dojo
        self.walls: set[frozenset[int]] = walls  # closed edges between two in-board squares
        self.entrances: set[frozenset[int]] = entrances  # Dojo boundary edges that are entrances
        self.text = text
        self.source = source
        self.partner: dict[int, int] = {}
        for a, b in tunnel_pairs:
            self.partner[a] = b
            self.partner[b] = a
        #: Tunnel squares in reading order (the Tunnel Segreto actions use this order).
        self.tunnels: list[int] = sorted(self.partner)
        self.tunnel_index = {t: i for i, t in enumerate(self.tunnels)}
        #: Squares of each corner's Safe Room in reading order.
        self.rooms: list[list[int]] = [
            [sq(r0 + i, c0 + j) for i in range(3) for j in range(3)] for r0, c0 in CORNER_ORIGINS
        ]
        # step[s][d]: square reached from s by direction d over an open edge (Dojo excluded), else -1
        self.step: list[list[int]] = [[-1] * 4 for _ in range(NUM_SQUARES)]
        # entry[s]: direction from s into the Dojo over an entrance, else -1
        self.entry: list[int] = [-1] * NUM_SQUARES
        self.entry_target: list[int] = [-1] * NUM_SQUARES
        for s in range(NUM_SQUARES):
            if dojo[s]:
                continue
            for d, t in neighbours(s):
                edge = frozenset((s, t))
                if dojo[t]:
                    if edge in entrances:
                        self.entry[s] = d
                        self.entry_target[s] = t
                elif edge not in walls:
                    self.step[s][d] = t
        self.neighbours: list[tuple[int, ...]] = [tuple(t for t in row if t >= 0) for row in self.step]
        self.bit = [1 << s for s in range(NUM_SQUARES)]

    def code(self, s: int) -> str:
        """The one-character code of square ``s`` in a drawing (``S`` Safe Room, ``D`` Dojo, else its kind)."""
        return "S" if self.room[s] >= 0 else "D" if self.dojo[s] else KINDS[self.kind[s]]

    def drawing(self, marks: dict[int, str] | None = None) -> list[str]:
        """The board in the file's doubled-resolution drawing (walls ``|``/``-``, Dojo entrances
        ``:``/``=``), with ``marks`` (square -> one character) drawn over the square codes."""
        marks = marks or {}
        height = 2 * SIZE + 1
        g = [["+" if y % 2 == 0 and x % 2 == 0 else " " for x in range(height)] for y in range(height)]
        for i in range(SIZE):
            g[0][2 * i + 1] = g[height - 1][2 * i + 1] = "-"
            g[2 * i + 1][0] = g[2 * i + 1][height - 1] = "|"
        for s in range(NUM_SQUARES):
            r, c = rc(s)
            g[2 * r + 1][2 * c + 1] = marks.get(s, self.code(s))
            for t, y, x, wall_ch, door_ch in ((s + 1, 2 * r + 1, 2 * c + 2, "|", ":"),
                                              (s + SIZE, 2 * r + 2, 2 * c + 1, "-", "=")):
                if (t == s + 1 and c == SIZE - 1) or t >= NUM_SQUARES:
                    continue
                edge = frozenset((s, t))
                if edge in self.walls:
                    g[y][x] = wall_ch
                elif edge in self.entrances:
                    g[y][x] = door_ch
        return ["".join(row) for row in g]

    def tunnel_pairs(self) -> list[tuple[int, int]]:
        """Each pair of joined Tunnels once, in reading order of its first square."""
        return [(a, b) for a, b in sorted(self.partner.items()) if a < b]

    def kind_counts(self) -> dict[str, int]:
        counts = {k: 0 for k in KINDS}
        for s in range(NUM_SQUARES):
            if self.room[s] < 0 and not self.dojo[s]:
                counts[KINDS[self.kind[s]]] += 1
        return counts


def _fail(source: str, line: int, col: int, why: str) -> BoardError:
    return BoardError(f"board {source}: line {line}, column {col}: {why}")


def parse_board(text: str, source: str = "<text>") -> Board:
    """Parse a board drawing; raises BoardError naming the line/column of the first problem."""
    grid_lines: list[tuple[int, str]] = []
    pairs: list[tuple[int, int]] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.rstrip()
        if not line or line.lstrip().startswith("#"):
            continue
        if line.startswith("tunnel"):
            parts = line.split()
            try:
                if len(parts) != 3:
                    raise ValueError
                a = tuple(int(x) for x in parts[1].split(","))
                b = tuple(int(x) for x in parts[2].split(","))
                if len(a) != 2 or len(b) != 2 or not all(0 <= v < SIZE for v in a + b):
                    raise ValueError
            except ValueError:
                raise _fail(source, number, 1, f"expected 'tunnel r,c r,c' with 0 <= r,c < {SIZE}, got {line!r}") from None
            pairs.append((sq(*a), sq(*b)))
            continue
        grid_lines.append((number, line))
    height = 2 * SIZE + 1
    if len(grid_lines) != height:
        raise BoardError(f"board {source}: expected {height} drawing lines, found {len(grid_lines)}")
    for number, line in grid_lines:
        if len(line) != height:
            raise _fail(source, number, len(line),
                        f"drawing lines must be {height} characters, this one has {len(line)}")
    g = [line for _, line in grid_lines]
    num = [n for n, _ in grid_lines]
    kind = [0] * NUM_SQUARES
    room = [-1] * NUM_SQUARES
    dojo = [False] * NUM_SQUARES
    for y in range(0, height, 2):
        for x in range(0, height, 2):
            if g[y][x] != "+":
                raise _fail(source, num[y], x + 1, f"expected '+' at an edge crossing, found {g[y][x]!r}")
    for r in range(SIZE):
        for c in range(SIZE):
            ch = g[2 * r + 1][2 * c + 1]
            s = sq(r, c)
            if ch == "S":
                room[s] = -2  # fixed below
            elif ch == "D":
                dojo[s] = True
            elif ch in KINDS:
                kind[s] = KINDS.index(ch)
            else:
                raise _fail(source, num[2 * r + 1], 2 * c + 2,
                            f"square ({r},{c}) has unknown code {ch!r}; use one of {KINDS + 'SD'!r}")
    for corner, (r0, c0) in enumerate(CORNER_ORIGINS):
        for i in range(3):
            for j in range(3):
                s = sq(r0 + i, c0 + j)
                if room[s] != -2:
                    raise _fail(source, num[2 * (r0 + i) + 1], 2 * (c0 + j) + 2,
                                f"square ({r0 + i},{c0 + j}) must be 'S': Safe Room {corner} is the 3x3 corner")
                room[s] = corner
    for s in range(NUM_SQUARES):
        r, c = rc(s)
        if room[s] == -2:
            raise _fail(source, num[2 * r + 1], 2 * c + 2,
                        f"square ({r},{c}) is 'S' outside the four corner Safe Rooms")
        if dojo[s] != (r in DOJO_ROWS and c in DOJO_COLS):
            raise _fail(source, num[2 * r + 1], 2 * c + 2,
                        f"square ({r},{c}): the Central Dojo ('D') is exactly rows and columns 6-9")
    walls: set[frozenset[int]] = set()
    entrances: set[frozenset[int]] = set()
    # border
    for i in range(SIZE):
        for y, x in ((0, 2 * i + 1), (height - 1, 2 * i + 1)):
            if g[y][x] != "-":
                raise _fail(source, num[y], x + 1, "the outer border must be a wall ('-')")
        for y, x in ((2 * i + 1, 0), (2 * i + 1, height - 1)):
            if g[y][x] != "|":
                raise _fail(source, num[y], x + 1, "the outer border must be a wall ('|')")
    for r in range(SIZE):
        for c in range(SIZE):
            for dr, dc, y, x, wall_ch, door_ch in ((0, 1, 2 * r + 1, 2 * c + 2, "|", ":"),
                                                  (1, 0, 2 * r + 2, 2 * c + 1, "-", "=")):
                r2, c2 = r + dr, c + dc
                if r2 >= SIZE or c2 >= SIZE:
                    continue
                ch = g[y][x]
                a, b = sq(r, c), sq(r2, c2)
                edge = frozenset((a, b))
                if ch == wall_ch:
                    walls.add(edge)
                elif ch == door_ch:
                    if dojo[a] == dojo[b]:
                        raise _fail(source, num[y], x + 1, f"Dojo entrance {ch!r} must lie on the Dojo's boundary")
                    entrances.add(edge)
                elif ch != " ":
                    raise _fail(source, num[y], x + 1,
                                f"edge character {ch!r} not understood; use ' ', {wall_ch!r} or {door_ch!r}")
    for a, b in pairs:
        for s in (a, b):
            if kind[s] != TUNNEL or room[s] >= 0 or dojo[s]:
                raise BoardError(
                    f"board {source}: tunnel pair lists ({rc(s)[0]},{rc(s)[1]}), which is not a 'T' square"
                )
    return Board(kind, room, dojo, walls, entrances, pairs, text, source)


def _can_walk(board: Board, s: int, k: int, visited: int) -> bool:
    if k == 0:
        return True
    bit = board.bit
    for t in board.neighbours[s]:
        b = bit[t]
        if not visited & b and _can_walk(board, t, k - 1, visited | b):
            return True
    return False


def validate_board(board: Board, symmetric: bool = False) -> list[str]:
    """Every broken design rule, as readable sentences (empty when the board is sound)."""
    problems: list[str] = []
    # Safe Rooms: open inside, exactly two exits on different sides
    for corner, squares in enumerate(board.rooms):
        inside = set(squares)
        exits = []
        for s in squares:
            for d, t in neighbours(s):
                if t in inside and board.step[s][d] < 0:
                    problems.append(f"Safe Room {corner}: inner edge between {rc(s)} and {rc(t)} is a wall")
                if t not in inside and board.step[s][d] >= 0:
                    exits.append((s, d))
        sides = {d for _, d in exits}
        if len(exits) != 2 or len(sides) != 2:
            problems.append(
                f"Safe Room {corner}: needs exactly two exits on different sides, has "
                f"{[(rc(s), DIR_NAMES[d]) for s, d in exits]}"
            )
    # Dojo entrances: one per side
    sides_found: dict[int, int] = {}
    for s in range(NUM_SQUARES):
        if board.entry[s] >= 0:
            sides_found[board.entry[s]] = sides_found.get(board.entry[s], 0) + 1
    for d in range(4):
        # entering southwards means the entrance is on the Dojo's north side
        side = DIR_NAMES[(d + 2) % 4]
        if sides_found.get(d, 0) != 1:
            problems.append(f"Central Dojo: needs exactly one entrance on its {side} side, has {sides_found.get(d, 0)}")
    # tunnels paired
    tunnel_squares = [
        s for s in range(NUM_SQUARES) if board.kind[s] == TUNNEL and board.room[s] < 0 and not board.dojo[s]
    ]
    for s in tunnel_squares:
        if s not in board.partner:
            problems.append(f"Tunnel at {rc(s)} has no partner (add a 'tunnel r,c r,c' line)")
    seen: dict[int, int] = {}
    for s, t in board.partner.items():
        if s == t:
            problems.append(f"Tunnel at {rc(s)} is paired with itself")
    for line_pairs in board.text.splitlines():
        if line_pairs.startswith("tunnel"):
            for part in line_pairs.split()[1:]:
                s = sq(*(int(x) for x in part.split(",")))
                seen[s] = seen.get(s, 0) + 1
    for s, count in seen.items():
        if count > 1:
            problems.append(f"Tunnel at {rc(s)} appears in {count} pairs")
    if len(board.tunnels) < 2:
        problems.append("the board needs at least one pair of Tunnels")
    # no dead ends: every length 2..12 from every square outside the Dojo
    for s in range(NUM_SQUARES):
        if board.dojo[s]:
            continue
        for k in WALK_LENGTHS:
            if not _can_walk(board, s, k, board.bit[s]):
                problems.append(f"dead end: no walk of {k} steps starts at {rc(s)}")
                break
    # every kind present at least once
    counts = board.kind_counts()
    for k in KINDS:
        if counts[k] == 0 and k != ".":
            problems.append(f"no square of kind {k!r} ({KIND_NAMES[KINDS.index(k)]})")
    if symmetric:
        problems.extend(symmetry_problems(board))
    return problems


def symmetry_problems(board: Board) -> list[str]:
    """Where the board differs from its own quarter turn (empty when 4-fold symmetric)."""
    problems = []
    for s in range(NUM_SQUARES):
        t = rotate(s)
        if board.kind[s] != board.kind[t]:
            problems.append(
                f"square {rc(s)} is {KINDS[board.kind[s]]!r} but its quarter turn {rc(t)} is {KINDS[board.kind[t]]!r}"
            )
    for edge in board.walls:
        a, b = tuple(edge)
        if frozenset((rotate(a), rotate(b))) not in board.walls:
            problems.append(f"wall {rc(a)}-{rc(b)} has no rotated twin")
    for edge in board.entrances:
        a, b = tuple(edge)
        if frozenset((rotate(a), rotate(b))) not in board.entrances:
            problems.append(f"Dojo entrance {rc(a)}-{rc(b)} has no rotated twin")
    for s, t in board.partner.items():
        if board.partner.get(rotate(s)) != rotate(t):
            problems.append(f"tunnel pair {rc(s)}-{rc(t)} has no rotated twin")
    return problems


#: Largest board file read, in bytes (the standard board is about 2 KB).
MAX_BOARD_BYTES = 64 * 1024


def read_board_text(path: pathlib.Path) -> str:
    """The text of a board file: a regular file (not a FIFO, device or folder, which could block
    or never end) of at most ``MAX_BOARD_BYTES`` bytes of UTF-8 text; else BoardError saying why."""
    try:
        # Opened without blocking (a FIFO would wait for a writer), then checked on the open file.
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        with os.fdopen(fd, "rb") as fh:
            info = os.fstat(fh.fileno())
            if not stat.S_ISREG(info.st_mode):
                raise BoardError(f"board file {str(path)!r} is not a regular file")
            if info.st_size > MAX_BOARD_BYTES:
                raise BoardError(f"board file {str(path)!r} has {info.st_size} bytes; at most "
                                 f"{MAX_BOARD_BYTES} are read")
            data = fh.read(MAX_BOARD_BYTES + 1)
    except OSError as exc:
        raise BoardError(f"board file {str(path)!r} cannot be read: {exc}") from exc
    if len(data) > MAX_BOARD_BYTES:
        raise BoardError(f"board file {str(path)!r} is longer than {MAX_BOARD_BYTES} bytes")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BoardError(f"board file {str(path)!r} is not UTF-8 text (byte {exc.start}); "
                         "a board is a text drawing") from None
    if "\x00" in text:
        raise BoardError(f"board file {str(path)!r} holds NUL bytes; a board is a text drawing")
    return text


def load_board(path: str | pathlib.Path | None = None, symmetric: bool | None = None) -> Board:
    """Read, parse and validate a board file (the standard board when ``path`` is None).

    Raises BoardError listing every problem. The standard board must also be 4-fold symmetric;
    a user's board need not be unless ``symmetric=True``.
    """
    p = DEFAULT_BOARD_PATH if path is None else pathlib.Path(path)
    if symmetric is None:
        symmetric = path is None
    text = read_board_text(p)
    board = parse_board(text, source=str(p))
    problems = validate_board(board, symmetric=symmetric)
    if problems:
        shown = "; ".join(problems[:8]) + (f"; and {len(problems) - 8} more" if len(problems) > 8 else "")
        raise BoardError(f"board {p} is not valid: {shown}")
    return board

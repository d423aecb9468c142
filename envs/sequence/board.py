"""The Sequence board: the printed commercial layout and the seeded generated alternative.

Cards are identified by *kind*, an integer ``suit * 13 + rank`` with suits ``S H D C`` and ranks
``A 2 3 4 5 6 7 8 9 T J Q K`` (``0..51``). A layout is 100 kinds in row-major order, ``-1`` for the
four free corners. Jacks never appear on the board.
"""

from __future__ import annotations

import random

SUITS = "SHDC"
RANKS = "A23456789TJQK"
JACK = RANKS.index("J")
CORNER_SQUARES = (0, 9, 90, 99)
SIZE = 10


def kind(label: str) -> int:
    """``"5D"`` -> kind id; ``"TS"`` is the ten of spades."""
    if len(label) != 2 or label[0] not in RANKS or label[1] not in SUITS:
        raise ValueError(f"card label {label!r} must be rank ({RANKS}) + suit ({SUITS}), e.g. '5D'")
    return SUITS.index(label[1]) * 13 + RANKS.index(label[0])


def label(card_kind: int) -> str:
    return RANKS[card_kind % 13] + SUITS[card_kind // 13]


def is_jack(card_kind: int) -> bool:
    return card_kind % 13 == JACK


TWO_EYED_JACKS = (kind("JD"), kind("JC"))  # wild: place on any empty square
ONE_EYED_JACKS = (kind("JH"), kind("JS"))  # remove one opposing chip
NON_JACK_KINDS = tuple(k for k in range(52) if not is_jack(k))

PRINTED_ROWS = (
    "XX 2S 3S 4S 5S 6S 7S 8S 9S XX",
    "6C 5C 4C 3C 2C AH KH QH TH TS",
    "7C AS 2D 3D 4D 5D 6D 7D 9H QS",
    "8C KS 6C 5C 4C 3C 2C 8D 8H KS",
    "9C QS 7C 6H 5H 4H AH 9D 7H AS",
    "TC TS 8C 7H 2H 3H KH TD 6H 2D",
    "QC 9S 9C 8H 9H TH QH QD 5H 3D",
    "KC 8S TC QC KC AC AD KD 4H 4D",
    "AC 7S 6S 5S 4S 3S 2S 2H 3H 5D",
    "XX AD KD QD TD 9D 8D 7D 6D XX",
)


def parse_rows(rows: tuple[str, ...] | list[str]) -> list[int]:
    """Ten rows of ten labels (``XX`` for a free corner) -> 100 kinds (``-1`` for corners)."""
    if len(rows) != SIZE:
        raise ValueError(f"a layout has {SIZE} rows, got {len(rows)}")
    cells: list[int] = []
    for r, row in enumerate(rows):
        tokens = row.split()
        if len(tokens) != SIZE:
            raise ValueError(f"layout row {r} has {len(tokens)} cells, expected {SIZE}: {row!r}")
        cells.extend(-1 if t == "XX" else kind(t) for t in tokens)
    return cells


def layout_problems(cells: list[int]) -> list[str]:
    """Every way ``cells`` breaks the three layout properties (empty list = valid)."""
    problems = []
    for sq in CORNER_SQUARES:
        if cells[sq] != -1:
            problems.append(f"corner {sq} is not free")
    counts = {k: 0 for k in NON_JACK_KINDS}
    for sq, k in enumerate(cells):
        if sq in CORNER_SQUARES:
            continue
        if k not in counts:
            problems.append(f"square {sq} holds {k}, which is not a non-jack card")
            continue
        counts[k] += 1
    problems += [f"{label(k)} appears {n} times" for k, n in counts.items() if n != 2]
    for sq, k in enumerate(cells):
        if k < 0:
            continue
        r, c = divmod(sq, SIZE)
        for dr in (-1, 0, 1):
            for dc in (-1, 0, 1):
                rr, cc = r + dr, c + dc
                if (dr or dc) and 0 <= rr < SIZE and 0 <= cc < SIZE and cells[rr * SIZE + cc] == k:
                    if sq < rr * SIZE + cc:
                        problems.append(f"{label(k)} at {sq} is adjacent to its twin at {rr * SIZE + cc}")
    return problems


def generated_layout(layout_seed: int) -> list[int]:
    """A seeded layout with each non-jack card twice, free corners and no card touching its twin."""
    rng = random.Random(layout_seed)
    free = [sq for sq in range(SIZE * SIZE) if sq not in CORNER_SQUARES]
    while True:
        cards = [k for k in NON_JACK_KINDS for _ in range(2)]
        rng.shuffle(cards)
        cells = [-1] * (SIZE * SIZE)
        for sq, k in zip(free, cards):
            cells[sq] = k
        for _ in range(2000):
            bad = [sq for sq in free if _touches_twin(cells, sq)]
            if not bad:
                return cells
            sq = rng.choice(bad)
            other = rng.choice(free)
            cells[sq], cells[other] = cells[other], cells[sq]


def _touches_twin(cells: list[int], sq: int) -> bool:
    r, c = divmod(sq, SIZE)
    k = cells[sq]
    for rr in range(max(0, r - 1), min(SIZE, r + 2)):
        for cc in range(max(0, c - 1), min(SIZE, c + 2)):
            other = rr * SIZE + cc
            if other != sq and cells[other] == k:
                return True
    return False


PRINTED_LAYOUT = parse_rows(PRINTED_ROWS)

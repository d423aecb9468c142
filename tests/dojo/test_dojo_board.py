"""The Dojo board: the standard map passes the validator; broken maps fail with clear messages;
users can pass their own map; the movement mask agrees with a brute-force search."""

from __future__ import annotations

import random

import pytest

from envs.core import ConfigError
from envs.dojo.board import (
    DEFAULT_BOARD_PATH, DOJO_COLS, DOJO_ROWS, TUNNEL, BoardError, load_board, parse_board, rc, sq,
    symmetry_problems, validate_board,
)
from envs.dojo.rules import from_position
from dojo_helpers import game, position

TEXT = DEFAULT_BOARD_PATH.read_text()


def edit(text, line_no, col, ch):
    """Replace one character of the drawing: ``line_no``/``col`` count within the drawing (0-based)."""
    lines = text.splitlines()
    drawing = [i for i, line in enumerate(lines) if line.startswith(("+", "|"))]
    i = drawing[line_no]
    lines[i] = lines[i][:col] + ch + lines[i][col + 1:]
    return "\n".join(lines) + "\n"


def cell(text, r, c, ch):
    return edit(text, 2 * r + 1, 2 * c + 1, ch)


def test_standard_board_is_valid_and_symmetric():
    board = load_board()
    assert validate_board(board, symmetric=True) == []
    counts = board.kind_counts()
    assert counts == {".": 152, "A": 16, "F": 12, "?": 12, "T": 4, "P": 4, "K": 4}
    assert sum(counts.values()) == 256 - 36 - 16
    assert all(board.dojo[sq(r, c)] for r in DOJO_ROWS for c in DOJO_COLS)


def test_safe_rooms_have_two_exits_on_different_sides():
    board = load_board()
    for corner, squares in enumerate(board.rooms):
        exits = [(s, d) for s in squares for d, t in enumerate(board.step[s]) if t >= 0 and board.room[t] != corner]
        assert len(exits) == 2 and exits[0][1] != exits[1][1]


def test_dojo_has_one_entrance_per_side_and_tunnels_are_paired():
    board = load_board()
    sides = sorted(board.entry[s] for s in range(256) if board.entry[s] >= 0)
    assert sides == [0, 1, 2, 3]
    for t in board.tunnels:
        assert board.kind[t] == TUNNEL and board.partner[board.partner[t]] == t and board.partner[t] != t


def test_no_dead_ends_checked_by_brute_force_on_a_sample():
    board = load_board()

    def walks(s, k, seen):
        return k == 0 or any(walks(t, k - 1, seen | {t}) for t in board.neighbours[s] if t not in seen)

    rng = random.Random(0)
    squares = [s for s in range(256) if not board.dojo[s]]
    for s in rng.sample(squares, 12) + [0, 255, sq(5, 7)]:
        for k in range(2, 13):
            assert walks(s, k, {s}), (rc(s), k)


def test_validator_finds_a_dead_end():
    # wall in square (3,0): north is the Safe Room wall already, close east and south
    text = edit(TEXT, 7, 2, "|")  # between (3,0) and (3,1)
    text = edit(text, 8, 1, "-")  # between (3,0) and (4,0)
    problems = validate_board(parse_board(text))
    assert any("dead end" in p and "(3, 0)" in p for p in problems)


def test_validator_checks_exits_symmetry_and_tunnel_pairs():
    text = edit(TEXT, 5, 6, " ")  # opens a third exit of Safe Room 0, between (2,2) and (2,3)
    problems = validate_board(parse_board(text), symmetric=True)
    assert any("Safe Room 0" in p for p in problems)
    assert any("rotated twin" in p for p in problems)
    unpaired = "\n".join(line for line in TEXT.splitlines() if not line.startswith("tunnel 3,3"))
    assert any("no partner" in p for p in validate_board(parse_board(unpaired)))


def test_parser_errors_name_the_line():
    with pytest.raises(BoardError, match=r"line \d+.*unknown code 'X'"):
        parse_board(cell(TEXT, 4, 4, "X"))
    with pytest.raises(BoardError, match="Central Dojo"):
        parse_board(cell(TEXT, 4, 4, "D"))
    with pytest.raises(BoardError, match="not a 'T' square"):
        parse_board(TEXT + "tunnel 4,4 3,3\n")
    with pytest.raises(BoardError, match="expected 33 drawing lines"):
        parse_board("\n".join(TEXT.splitlines()[:-5]))


def test_user_board_file(tmp_path):
    # an asymmetric but valid board: one Tatami becomes Allenamento
    good = tmp_path / "mine.txt"
    good.write_text(cell(TEXT, 4, 0, "A"))
    g = game(board_file=str(good))
    assert g.board.kind_counts()["A"] == 17
    st = position("4,0: A", config={"board_file": str(good)}, begin=False)
    assert st.game.board is g.board
    bad = tmp_path / "bad.txt"
    bad.write_text(cell(TEXT, 4, 4, "X"))
    with pytest.raises(ConfigError, match="board_file"):
        game(board_file=str(bad))
    with pytest.raises(ConfigError, match="cannot be read"):
        game(board_file=str(tmp_path / "missing.txt"))


def test_standard_board_symmetry_helper_detects_change():
    assert symmetry_problems(load_board()) == []
    assert symmetry_problems(parse_board(cell(TEXT, 4, 0, "A")))


# ---- the movement mask ---------------------------------------------------------------------------
def brute_first_steps(board, s, k, visited, dojo):
    """First steps of the longest walks (up to k), by exhaustive enumeration."""
    best, firsts = 0, set()

    def longest(u, left, seen):
        if left == 0 or (dojo and board.entry[u] >= 0):
            return 0  # steps left unused (entering the Dojo needs no exact count)
        return min([longest(t, left - 1, seen | {t}) for t in board.neighbours[u] if t not in seen] or [left])

    for d in range(4):
        t = board.step[s][d]
        if t >= 0 and t not in visited:
            used = k - longest(t, k - 1, visited | {t})
            if used > best:
                best, firsts = used, {d}
            elif used == best and used > 0:
                firsts.add(d)
    if dojo and board.entry[s] >= 0:
        firsts.add(board.entry[s])
    return firsts


def test_move_mask_matches_brute_force_along_random_walks():
    g = game()
    board = g.board
    rng = random.Random(3)
    checked = 0
    for _trial in range(60):
        start = rng.choice([s for s in range(256) if not board.dojo[s]])
        track = rng.choice([0, 15])
        st = from_position(g, {0: start}, tracks=[track, 0, 0, 0], dice=[rng.randint(1, 6), rng.randint(1, 6)])
        # other pawns in their Safe Rooms: walking never fights here
        while st.phase == "move" and st.turn_player == 0 and st.mv_steps > 0 and checked < 400:
            visited = {s for s in range(256) if st.mv_visited >> s & 1}
            expected = brute_first_steps(board, st.pos[0], st.mv_steps, visited, st.track[0] >= 15)
            got = {a for a in st.legal_actions() if a < 4}
            assert got == expected, (rc(st.pos[0]), st.mv_steps)
            checked += 1
            st.apply_action(rng.choice(sorted(got)))
    assert checked > 100


def test_move_as_far_as_possible_when_boxed_in():
    # seat 0 on (0,3) with (0,4) and (1,3) already visited this move: no step at all
    g = game()
    st = from_position(g, {0: sq(0, 3)}, dice=[6, 6], begin=False)
    st.mv_start = sq(1, 4)
    st.mv_visited = (1 << sq(1, 4)) | (1 << sq(0, 4)) | (1 << sq(1, 3)) | (1 << sq(0, 3))
    st.mv_steps = 5
    st.actor = st.turn_player = 0
    assert st.move_dirs() == []
    st._continue_move()  # the walk ends where it is; the square's effect applies; turn passes
    assert st.pos[0] == sq(0, 3) and st.turn_player == 1

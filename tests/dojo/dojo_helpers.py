"""Builders for Dojo scenario tests: positions from a small readable picture of the board."""

from __future__ import annotations

import pathlib

import envs.dojo_v0 as dojo
from envs.dojo.board import KINDS, sq
from envs.dojo.rules import A_PASS, A_PLAY, A_ROOM, A_STEP, A_TARGET, from_position

N, E, S, W = (A_STEP + d for d in range(4))
STEP = {"N": N, "E": E, "S": S, "W": W}


def game(**config):
    return dojo.Game(**config)


def read_picture(g, picture: str) -> dict[int, int]:
    """Pawns from lines like ``"4,0: . 0 . 1 F"``: the line starts at square (4,0) and runs east.

    Each cell is the board's own code (checked against the board, so the picture is honest) or a
    seat digit standing on that square.
    """
    pawns = {}
    for line in picture.strip().splitlines():
        head, cells = line.split(":")
        r, c = (int(x) for x in head.split(","))
        for i, cell in enumerate(cells.split()):
            s = sq(r, c + i)
            board = g.board
            code = "S" if board.room[s] >= 0 else "D" if board.dojo[s] else KINDS[board.kind[s]]
            if cell.isdigit():
                pawns[int(cell)] = s
            elif cell != code:
                raise AssertionError(f"picture says {cell!r} at {(r, c + i)}, the board has {code!r}")
    return pawns


def position(picture: str, config=None, **kw):
    g = game(**(config or {}))
    return from_position(g, read_picture(g, picture), **kw)


def pocket_board(folder) -> str:
    """A user's board file in ``folder``: the standard board with (5,7), the square in front of the
    north Dojo entrance, made a Fatica walled on its east side, so that its only neighbour is
    (4,7) (and the Dojo). Valid (no walk from any square dead-ends), but not symmetric."""
    from envs.dojo.board import DEFAULT_BOARD_PATH

    lines = DEFAULT_BOARD_PATH.read_text().splitlines()
    drawing = [i for i, line in enumerate(lines) if line.startswith(("+", "|"))]
    row = drawing[2 * 5 + 1]
    lines[row] = lines[row][:2 * 7 + 1] + "F|" + lines[row][2 * 7 + 3:]
    path = pathlib.Path(folder) / "pocket.txt"
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def walk(state, path: str):
    """Apply steps like ``"EEN"``, checking each is legal."""
    for ch in path:
        state.apply_action(STEP[ch])


def target(state, seat):
    p = state.current_player()
    return A_TARGET + (seat - p) % state.n - 1


__all__ = ["A_PASS", "A_PLAY", "A_ROOM", "E", "N", "S", "W", "game", "pocket_board", "position", "sq", "target", "walk"]

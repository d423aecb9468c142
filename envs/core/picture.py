"""The board picture a game declares for the front ends (terminal and browser).

A game that wants its board drawn overrides :meth:`envs.core.game.Game.picture` (a :class:`Picture`
built from one seat's ``player_view`` only, so nothing hidden from that seat can reach a screen) and
:meth:`envs.core.game.Game.action_square` (the cell a move is about, so that a move can be made by
clicking or typing that cell). A game that declares neither is shown as text and move buttons.
Nothing here draws: the front ends in ``play/`` turn a picture into ANSI text or SVG.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

#: Seat / team colours (chips, pawns, bots), readable on light and dark backgrounds.
SEAT_COLOURS = ("#c83c3c", "#3c5ac8", "#3ca050", "#d09a20", "#9040c0", "#20a0a0", "#e07020", "#7a5a3a",
                "#c04080", "#5a8a20", "#4060a0", "#a06060", "#208060", "#806020", "#6040a0", "#a0a020")


@dataclass
class Cell:
    """One square: its printed text, background, and the mark (chip, pawn, bot) standing on it."""

    text: str = ""  # what is printed on the square (card, kind letter)
    fill: str = "#ffffff"  # background colour
    mark: str = ""  # a chip, pawn or bot on it ("" for none)
    mark_colour: str = ""
    strong: bool = False  # locked chip, the seat's own pawn, ...
    plain: str = ""  # what stands for the colour in plain text (e.g. "D" for the Dojo), if anything

    def to_dict(self) -> dict[str, Any]:
        return {"text": self.text, "fill": self.fill, "mark": self.mark, "mark_colour": self.mark_colour,
                "strong": self.strong}


@dataclass
class Picture:
    """What one seat sees: a ``rows`` x ``cols`` grid of cells, walls, and lines of text.

    ``turn`` says whose move it is (and the phase) while the game goes on, apart from the other public
    ``lines`` so that a front end can say how the game ended in its place once it is over (a game the
    move limit cut off still has a seat "to act" in its view). ``legend`` explains the letters and
    colours; ``strong_means`` says what a strong (bold) mark is, or "" if the game never marks one
    strong; the front ends add it to the legend only when a strong mark is on the board, so legend and
    board agree (each front end names its own way of showing a strong mark). A picture with no rows is text only.
    """

    rows: int
    cols: int
    cells: list[list[Cell]]
    walls: list[tuple[int, int, int, int]] = field(default_factory=list)  # (r1, c1, r2, c2): closed edge
    doors: list[tuple[int, int, int, int]] = field(default_factory=list)  # edges that are entrances
    lines: list[str] = field(default_factory=list)  # public information
    turn: str = ""  # whose move it is; the front ends put how the game ended here once it is over
    private: list[str] = field(default_factory=list)  # what only this seat knows
    legend: str = ""
    cell_width: int = 3  # characters per cell in the terminal
    strong_means: str = ""

    def has_strong(self) -> bool:
        return any(cell.mark and cell.strong for row in self.cells for cell in row)

    def full_legend(self, strong_marker: str = "thick black ring") -> str:
        """The legend, plus what a strong mark means when one is on the board (``strong_marker``: how
        the front end shows one; the browser rings it in black)."""
        if self.strong_means and self.has_strong():
            extra = f"{strong_marker}: {self.strong_means}"
            return f"{self.legend}; {extra}" if self.legend else extra
        return self.legend

    def to_dict(self) -> dict[str, Any]:
        return {"rows": self.rows, "cols": self.cols, "cells": [[c.to_dict() for c in row] for row in self.cells],
                "walls": [list(w) for w in self.walls], "doors": [list(d) for d in self.doors],
                "turn": self.turn, "lines": list(self.lines), "private": list(self.private),
                "legend": self.full_legend()}

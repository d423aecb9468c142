"""What one seat sees, as a picture both front ends draw: a grid of cells, walls, text lines.

:func:`picture` builds a :class:`Picture` from a game and one seat's ``player_view`` only — never
from the full state — so nothing hidden from that seat can reach the terminal or the browser.
:func:`action_square` says which cell an action is about (a Sequence chip's square, a step's
target square in Dojo, Pan's Trial and Wizard Arena, a ballista landing, a placement hole), so a
move can be made by clicking that cell.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

#: Seat / team colours (chips, pawns, bots), readable on light and dark backgrounds.
SEAT_COLOURS = ("#c83c3c", "#3c5ac8", "#3ca050", "#d09a20", "#9040c0", "#20a0a0", "#e07020", "#7a5a3a",
                "#c04080", "#5a8a20", "#4060a0", "#a06060", "#208060", "#806020", "#6040a0", "#a0a020")


@dataclass
class Cell:
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
    rows: int
    cols: int
    cells: list[list[Cell]]
    walls: list[tuple[int, int, int, int]] = field(default_factory=list)  # (r1, c1, r2, c2): closed edge
    doors: list[tuple[int, int, int, int]] = field(default_factory=list)  # edges that are entrances
    lines: list[str] = field(default_factory=list)  # public information
    private: list[str] = field(default_factory=list)  # what only this seat knows
    legend: str = ""
    cell_width: int = 3  # characters per cell in the terminal

    def to_dict(self) -> dict[str, Any]:
        return {"rows": self.rows, "cols": self.cols, "cells": [[c.to_dict() for c in row] for row in self.cells],
                "walls": [list(w) for w in self.walls], "doors": [list(d) for d in self.doors],
                "lines": list(self.lines), "private": list(self.private),
                "legend": self.legend}


def picture(game, view: dict[str, Any]) -> Picture:
    """The picture of ``view`` (one seat's ``player_view``) for ``game``."""
    return _BUILDERS[game.name](game, view)


def action_square(game, view: dict[str, Any], action: int) -> tuple[int, int] | None:
    """The cell a move is about, or None for moves that are not a square."""
    return _SQUARES[game.name](game, view, int(action))


# ----------------------------------------------------------------------------------------------
# Sequence
def _sequence(game, view) -> Picture:
    from envs.sequence.board import SIZE, label
    from envs.sequence.rules import CORNER, EMPTY

    teams = "ABC"
    locked = set(view["locked"])
    cells = []
    for r in range(SIZE):
        row = []
        for c in range(SIZE):
            sq = r * SIZE + c
            v = view["board"][sq]
            if v == CORNER:
                row.append(Cell("**", "#5a5a5a", "", "", False))
                continue
            cell = Cell(label(game.layout[sq]), "#ebe4d2")
            if v != EMPTY:
                cell.mark, cell.mark_colour, cell.strong = teams[v], SEAT_COLOURS[v], sq in locked
            row.append(cell)
        cells.append(row)
    n_teams = view["num_teams"]
    seq = ", ".join(f"team {teams[t]} {len(view['sequences'][t])}" for t in range(n_teams))
    lines = [f"sequences: {seq}",
             "hand sizes: " + ", ".join(f"player_{p} (team {teams[p % n_teams]}) {k}"
                                         for p, k in enumerate(view["hand_sizes"])),
             f"draw pile {view['deck_size']}, discards {len(view['discards'])}"
             + (f" (last: {' '.join(label(k) for k in view['discards'][-4:])})" if view["discards"] else "")]
    if view["dead_used"]:
        lines.append("a dead card was already exchanged this turn")
    private = [f"you are player_{view['seat']}, team {teams[view['team']]}",
               "your hand: " + " ".join(label(k) for k in view["hand"])]
    return Picture(SIZE, SIZE, cells, lines=lines, private=private, cell_width=4,
                   legend="A/B/C chips of teams A/B/C (bold: locked in a sequence), ** free corner")


def _sequence_square(game, view, action):
    if action < 300:
        return divmod(action % 100, 10)
    return None


# ----------------------------------------------------------------------------------------------
# Pan's Trial
_PT_ROLE_FILL = ("#5a5a5a", "#c83c3c", "#4670c8", "#dcaa28")  # walls, traps, ballista, weapons
_PT_ROLE_LETTER = "WTBX"


def _pans_trial(game, view) -> Picture:
    from envs.pans_trial import rules as R

    roles = view.get("suit_role")
    cells = []
    for r in range(R.SIZE):
        row = []
        for c in range(R.SIZE):
            s = r * R.SIZE + c
            card = view["board"][s]
            if card < 0:
                cell = Cell("--", "#202020")
            else:
                role = roles[R.SUIT_OF[card]] if roles else None
                text = R.card_name(card) + ("" if role is None else _PT_ROLE_LETTER[role])
                cell = Cell(text, "#aaaaaa" if role is None else _PT_ROLE_FILL[role])
            here = [str(p) for p in (0, 1) if view["pos"][p] == s]
            if here:
                cell.mark = "".join(here)
                cell.mark_colour = SEAT_COLOURS[int(here[0])]
                cell.strong = str(view["seat"]) in here
            row.append(cell)
        cells.append(row)
    lines = []
    if roles:
        lines.append("roles: " + ", ".join(f"{R.SUITS[s]}={R.ROLE_NAMES[x]}" for s, x in enumerate(roles)))
    else:
        lines.append("roles: hidden until the Omens are revealed (after the draft)")
    for p in (0, 1):
        hand = " ".join(R.card_name(c) for c in view["hands"][p]) or "-"
        dmg = " ".join(R.card_name(c) for c in view["damage"][p]) or "-"
        total = sum(R.VALUE[c] for c in view["damage"][p])
        lines.append(f"player_{p}: hand {hand} | damage {total}/{game.config['damage_threshold']} [{dmg}]"
                     f" | forced passes {view['forced'][p]}")
    if view["pool"]:
        lines.append("draft pool: " + " ".join(R.card_name(c) for c in view["pool"]))
    lines.append(f"phase {view['stage']}, player_{view['actor']} to act, Traversing: player_{view['active']}"
                 f" ({view['turns_left']} turn(s) left)")
    if any(view["appease_submitted"]):
        who = [f"player_{p}" for p in (0, 1) if view["appease_submitted"][p]]
        lines.append("Appeasing card chosen by: " + ", ".join(who))
    pend = [R.card_name(c) for c in view["pending"] if c >= 0]
    if pend:
        lines.append("cards to place: " + " ".join(pend))
    private = [f"you are player_{view['seat']}"]
    if view["my_appease_card"] >= 0:
        private.append(f"your Appeasing card: {R.card_name(view['my_appease_card'])}")
    return Picture(R.SIZE, R.SIZE, cells, lines=lines, private=private, cell_width=6,
                   legend="W wall, T trap, B ballista, X weapon; 0/1 the players; -- a hole")


def _pans_trial_square(game, view, action):
    from envs.pans_trial import rules as R

    s = None
    if action < 4:
        s = R.NEIGH[view["pos"][view["actor"]]][action]
    elif R.A_TARGET <= action < R.A_PLACE:
        s = action - R.A_TARGET
    elif R.A_PLACE <= action < R.A_DRAFT:
        s = (action - R.A_PLACE) % R.NUM_SQUARES
    return None if s is None else divmod(s, R.SIZE)


# ----------------------------------------------------------------------------------------------
# Dojo
_DOJO_FILL = {".": "#ebe1c8", "A": "#96dc96", "F": "#e68c78", "?": "#b4b4f0", "T": "#787878", "P": "#f0c878",
              "K": "#f078c8"}


def _dojo(game, view) -> Picture:
    from envs.dojo.board import KINDS, SIZE
    from envs.dojo.cards import CARD_NAMES
    from envs.dojo.game import BELT_NAMES
    from envs.dojo.rules import belt_of

    b = game.board
    n = game.num_players
    cells = []
    for r in range(SIZE):
        row = []
        for c in range(SIZE):
            s = r * SIZE + c
            if b.room[s] >= 0:
                cell = Cell("", "#ffffff", plain="S")
            elif b.dojo[s]:
                cell = Cell("", "#3c3c3c", plain="D")
            else:
                k = KINDS[b.kind[s]]
                cell = Cell("" if k == "." else k, _DOJO_FILL[k])
            here = [q for q in range(n) if view["pos"][q] == s]
            if here:
                cell.mark = "".join(str(q) for q in here)[:2]
                cell.mark_colour = SEAT_COLOURS[here[0]]
                cell.strong = view["seat"] in here
            row.append(cell)
        cells.append(row)
    def edges(pairs):
        return sorted((min(e) // SIZE, min(e) % SIZE, max(e) // SIZE, max(e) % SIZE) for e in pairs)

    walls, doors = edges(b.walls), edges(b.entrances)
    lines = []
    for q in range(n):
        t = view["track"][q]
        held = view["hands"][q]
        count = len(held) if isinstance(held, list) else held
        flags = [f"{count} Tecnica" if count else "", "meditating" if view["med_guard"][q] else ""]
        lines.append(f"player_{q}: track {t} ({BELT_NAMES[belt_of(t)]}) {' '.join(f for f in flags if f)}".rstrip())
    actor = view["pending"][0][1] if view["pending"] else view["actor"]
    lines.append(f"turn of player_{view['turn_player']}, phase {view['main_phase']}, player_{actor} to act; "
                 f"roll {view['roll']}, steps left {view['mv_steps']}")
    if view["k_att"] >= 0:
        lines.append(f"Kumite ({view['k_kind']}): player_{view['k_att']} attacks player_{view['k_def']}, "
                     f"dice {view['k_dice'][0]} v {view['k_dice'][1]}")
    face_up = [CARD_NAMES[c] for c in view["discard"] if c is not None]
    lines.append(f"deck {view['deck']} cards; discards face up: {', '.join(face_up[-4:]) or '-'}")
    if view["last_card"] >= 0:
        lines.append(f"last card drawn: {CARD_NAMES[view['last_card']]}")
    own = view["hands"][view["seat"]]
    private = [f"you are player_{view['seat']}",
               "your Tecnica: " + (", ".join(CARD_NAMES[c] for c in own) or "none")]
    return Picture(SIZE, SIZE, cells, walls=walls, doors=doors, lines=lines, private=private, cell_width=3,
                   legend="digits: pawns; A Allenamento, F Fatica, ? Nebbia, T Tunnel, P Passo Falso, "
                          "K Sfida; dark (D): the Dojo (green edges: its entrances); white (S): Safe Rooms")


def _dojo_square(game, view, action):
    from envs.dojo.board import DIRS, SIZE
    from envs.dojo.rules import A_ROOM, A_SEGRETO, A_STEP, SEAT_CORNERS

    actor = view["pending"][0][1] if view["pending"] else view["actor"]
    if A_STEP <= action < A_STEP + 4:
        s = view["pos"][actor]
        if s < 0:
            return None
        r, c = divmod(s, SIZE)
        dr, dc = DIRS[action - A_STEP]
        if 0 <= r + dr < SIZE and 0 <= c + dc < SIZE:
            return r + dr, c + dc
        return None
    if A_ROOM <= action < A_ROOM + 9:
        corner = SEAT_CORNERS[game.num_players][actor]
        return divmod(game.board.rooms[corner][action - A_ROOM], SIZE)
    if action >= A_SEGRETO:
        return divmod(game.board.tunnels[action - A_SEGRETO], SIZE)
    return None


# ----------------------------------------------------------------------------------------------
# Wizard Arena (nothing is hidden but the random generator)
def _wizard_arena(game, view) -> Picture:
    state = game.state_from_view(view, random.Random(0))
    size = game.config["map_size"]
    cells = []
    for r in range(size):
        row = []
        for c in range(size):
            t = view["terrain"][r][c]
            row.append(Cell({"M": "^", "F": "#"}.get(t, ""), {"M": "#a08c78", "F": "#508c50"}.get(t, "#e6e6d2")))
        cells.append(row)
    for i, pos in enumerate(view["pos"]):
        if not view["alive"][i]:
            r, c = divmod(pos, size)
            cells[r][c].text = "+"
    gr, gc = divmod(view["gary"], size)
    cells[gr][gc].mark, cells[gr][gc].mark_colour = "@", "#000000"
    for i, pos in enumerate(view["pos"]):
        if view["alive"][i]:
            r, c = divmod(pos, size)
            cells[r][c].mark = chr(ord("A") + i)
            cells[r][c].mark_colour = SEAT_COLOURS[i % len(SEAT_COLOURS)]
            cells[r][c].strong = i == view["seat"]
    lines = [f"round {view['round']}, phase {view['phase']}, player_{view['actor']} to act"]
    for row in game.scoreboard(state):
        i = row["seat"]
        party = "-".join(chr(ord("A") + m) for m in row["party"]) or "solo"
        lines.append(f"{chr(ord('A') + i)} player_{i}: rank {row['rank']:g} {'alive' if row['alive'] else 'dead'} "
                     f"score {row['score']} strength {row['strength']:.1f} hp {row['hp']}/{row['max_hp']} "
                     f"party {party}")
    private = [f"you are player_{view['seat']} (bot {chr(ord('A') + view['seat'])})"]
    return Picture(size, size, cells, lines=lines, private=private, cell_width=2,
                   legend="A-P bots, @ Gary, + gravestone, ^ mountain, # forest")


def _wizard_arena_square(game, view, action):
    from envs.wizard_arena.map import DIRECTIONS

    if action >= 8:
        return None
    size = game.config["map_size"]
    r, c = divmod(view["pos"][view["actor"]], size)
    dr, dc = DIRECTIONS[action]
    if 0 <= r + dr < size and 0 <= c + dc < size:
        return r + dr, c + dc
    return None


_BUILDERS = {"sequence_v0": _sequence, "pans_trial_v0": _pans_trial, "dojo_v0": _dojo,
             "wizard_arena_v0": _wizard_arena}
_SQUARES = {"sequence_v0": _sequence_square, "pans_trial_v0": _pans_trial_square, "dojo_v0": _dojo_square,
            "wizard_arena_v0": _wizard_arena_square}

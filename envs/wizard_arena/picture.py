"""Wizard Arena: the board picture the front ends draw (terrain, bots, Gary, gravestones).

Built from one seat's ``player_view`` only; :class:`envs.wizard_arena.game.WizardArenaGame` hands these to ``play/`` through
``Game.picture`` and ``Game.action_square``.
"""

from __future__ import annotations

import random

from envs.core.picture import SEAT_COLOURS, Cell, Picture


def ordinal(n: int) -> str:
    """1st, 2nd, 3rd, 4th, ..., 11th, 12th, 13th, 21st."""
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def places(rows: list[dict]) -> dict[int, str]:
    """Each bot's place in the ranking by score, then strength, in words: "1st", "shared 4th" (bots
    equal in both share the best place among them)."""
    key = {row["seat"]: (row["score"], row["strength"]) for row in rows}
    out = {}
    for seat, mine in key.items():
        better = sum(1 for other in key.values() if other > mine)
        same = sum(1 for other in key.values() if other == mine)
        out[seat] = ("shared " if same > 1 else "") + ordinal(better + 1)
    return out


def picture(game, view) -> Picture:
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
            cells[r][c].text = "x"
    gr, gc = divmod(view["gary"], size)
    cells[gr][gc].mark, cells[gr][gc].mark_colour = "@", "#000000"
    for i, pos in enumerate(view["pos"]):
        if view["alive"][i]:
            r, c = divmod(pos, size)
            cells[r][c].mark = chr(ord("A") + i)
            cells[r][c].mark_colour = SEAT_COLOURS[i % len(SEAT_COLOURS)]
            cells[r][c].strong = i == view["seat"]
    if view["phase"] == "over":
        turn = f"round {view['round']}: the game is over"
    else:
        turn = f"round {view['round']}, phase {view['phase']}, player_{view['actor']} to act"
    lines = []
    board = game.scoreboard(state)
    place = places(board)
    for row in board:
        i = row["seat"]
        party = "party " + "-".join(chr(ord("A") + m) for m in row["party"]) if row["party"] else "solo"
        lines.append(f"{chr(ord('A') + i)} player_{i}: {place[i]}, {'alive' if row['alive'] else 'dead'}, "
                     f"score {row['score']}, strength {row['strength']:.1f}, hp {row['hp']}/{row['max_hp']}, "
                     f"{party}")
    private = [f"you are player_{view['seat']} (bot {chr(ord('A') + view['seat'])})"]
    return Picture(size, size, cells, lines=lines, turn=turn, private=private, cell_width=2,
                   legend="A-P bots, @ Gary, x gravestone, ^ mountain, # forest", strong_means="your bot")


def action_square(game, view, action):
    from envs.wizard_arena.map import DIRECTIONS

    if action >= 8:
        return None
    size = game.config["map_size"]
    r, c = divmod(view["pos"][view["actor"]], size)
    dr, dc = DIRECTIONS[action]
    if 0 <= r + dr < size and 0 <= c + dc < size:
        return r + dr, c + dc
    return None

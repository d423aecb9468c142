"""Sequence: the board picture the front ends draw (cards, chips, free corners).

Built from one seat's ``player_view`` only; :class:`envs.sequence.game.SequenceGame` hands these to ``play/`` through
``Game.picture`` and ``Game.action_square``.
"""

from __future__ import annotations

from envs.core.picture import SEAT_COLOURS, Cell, Picture


def picture(game, view) -> Picture:
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
                   legend="A/B/C chips of teams A/B/C, ** free corner", strong_means="locked in a sequence")


def action_square(game, view, action):
    if action < 300:
        return divmod(action % 100, 10)
    return None

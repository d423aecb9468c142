"""Nim: the board picture the front ends draw (the heap as a row of counters).

Built from one seat's ``player_view`` only. Counter ``i`` sits in column ``i``; "take k" is about
the first of the ``k`` counters it removes, so clicking (or typing ``r0c<i>``) a counter takes it
and every counter to its right.
"""

from __future__ import annotations

from envs.core.picture import Cell, Picture


def picture(game, view) -> Picture:
    size = game.config["heap"]
    cells = [[Cell("o" if i < view["heap"] else "", "#e6dcc8" if i < view["heap"] else "#ffffff")
              for i in range(size)]]
    lines = [f"heap {view['heap']} of {size}"]
    if view["winner"] is not None:
        lines.append(f"player_{view['winner']} took the last counter")
    else:
        lines.append(f"player_{view['player']} to take 1-3 counters")
    return Picture(1, size, cells, lines=lines, private=[f"you are player_{view['seat']}",
                                                         f"your secret die: {view['my_secret'] + 1}"],
                   legend="o a counter (a move takes the counter clicked and all to its right)", cell_width=3,
                   strong_means="")


def action_square(game, view, action) -> tuple[int, int] | None:
    first = view["heap"] - (action + 1)
    return (0, first) if first >= 0 else None


"""Pan's Trial: the board picture the front ends draw (cards by role, the two players, holes).

Built from one seat's ``player_view`` only; :class:`envs.pans_trial.game.PansTrialGame` hands these to ``play/`` through
``Game.picture`` and ``Game.action_square``.
"""

from __future__ import annotations

import random

from envs.core.picture import SEAT_COLOURS, Cell, Picture

_PT_ROLE_FILL = ("#5a5a5a", "#c83c3c", "#4670c8", "#dcaa28")  # walls, traps, ballista, weapons
_PT_ROLE_LETTER = "WTBX"


def picture(game, view) -> Picture:
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
    if view["winner"] is not None:
        turn = "the game is over"
    else:
        turn = (f"phase {view['stage']}, player_{view['actor']} to act, Traversing: "
                f"player_{view['active']} ({view['turns_left']} turn(s) left)")
    if any(view["appease_submitted"]):
        who = [f"player_{p}" for p in (0, 1) if view["appease_submitted"][p]]
        lines.append("Appeasing card chosen by: " + ", ".join(who))
    why = only_pass_reason(game, view)
    if why:
        lines.append(why)
    pend = [R.card_name(c) for c in view["pending"] if c >= 0]
    if pend:
        lines.append("cards to place: " + " ".join(pend))
    private = [f"you are player_{view['seat']}"]
    if view["my_appease_card"] >= 0:
        private.append(f"your Appeasing card: {R.card_name(view['my_appease_card'])}")
    return Picture(R.SIZE, R.SIZE, cells, lines=lines, turn=turn, private=private, cell_width=6,
                   legend="W wall, T trap, B ballista, X weapon; 0/1 the players; -- a hole",
                   strong_means="your pawn")


def only_pass_reason(game, view) -> str:
    """Why the Traversing player's only move is to pass ("" when they have another): forced passes
    owed, or walled in (every neighbour a Wall, nothing to use on their square)."""
    from envs.pans_trial import rules as R

    state = game.state_from_view(view, random.Random(0))  # what Traversing may do is public
    if state.is_terminal() or state.stage != R.TRAVERSE or state.legal_actions() != [R.A_PASS]:
        return ""
    p = state.actor
    if view["forced"][p]:
        return (f"player_{p} must pass: they owe {view['forced'][p]} forced pass(es), told when they were "
                "walled in after a Restructure, a Plane Shift or the placement")
    return (f"player_{p} must pass: walled in, every neighbouring square is a Wall and nothing on their "
            "square can be used this turn")


def action_square(game, view, action):
    from envs.pans_trial import rules as R

    s = None
    if action < 4:
        s = R.NEIGH[view["pos"][view["actor"]]][action]
    elif R.A_TARGET <= action < R.A_PLACE:
        s = action - R.A_TARGET
    elif R.A_PLACE <= action < R.A_DRAFT:
        s = (action - R.A_PLACE) % R.NUM_SQUARES
    return None if s is None else divmod(s, R.SIZE)

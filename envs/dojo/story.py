"""Il Labirinto del Dojo: what a move caused, in the game's words, for the front ends' log.

Told from one seat's views before and after the move only (see ``play/story.py``): pawns placed,
dice rolled, steps and where they lead, stripes won and lost, Kumite (attacker, defender, dice and
who won), cards drawn (a Tecnica unnamed unless it is yours), the Final Exam, the Black Belt.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from envs.dojo.board import DIRS, KINDS, SIZE
from envs.dojo.cards import CARD_NAMES, TECNICA
from envs.dojo.rules import A_KEEP, A_PLAY, A_ROOM, A_SEGRETO, A_STEP, A_TARGET, A_TUNNEL, SEAT_CORNERS, belt_of

BELTS = ("White", "Yellow", "Orange", "Green", "Blue", "Brown", "Black")
KIND_NAMES = {".": "Tatami", "A": "Allenamento", "F": "Fatica", "?": "Nebbia del Dojo", "T": "Tunnel",
              "P": "Passo Falso", "K": "Sfida"}


def _p(q: int) -> str:
    return f"player_{q}"


def _sq(game, s: int) -> str:
    b = game.board
    r, c = divmod(s, SIZE)
    if b.room[s] >= 0:
        what = "Safe Room"
    elif b.dojo[s]:
        what = "the Dojo"
    else:
        what = KIND_NAMES[KINDS[b.kind[s]]]
    return f"{what} at row {r}, column {c}"


def _hand_size(view: dict[str, Any], q: int) -> int:
    h = view["hands"][q]
    return len(h) if isinstance(h, list) else h


def tell(game, before: dict[str, Any], after: dict[str, Any], seat: int, action: int | None,
         states: Any = None) -> list[str]:
    out: list[str] = []
    n = game.num_players
    me = seat
    if action is None:
        return [f"{_p(me)} keeps one Tecnica and discards the other face down"]
    moved = set()  # pawns whose new square is told already
    if A_STEP <= action < A_ROOM and before["pos"][me] >= 0:
        r, c = divmod(before["pos"][me], SIZE)
        dr, dc = DIRS[action - A_STEP]
        target = (r + dr) * SIZE + c + dc
        left = after["mv_steps"]
        out.append(f"{_p(me)} steps onto the {_sq(game, target)}"
                   + (f" ({left} step{'s' if left != 1 else ''} left)" if left and after["actor"] == me
                      and after["main_phase"] == "move" and after["turn_index"] == before["turn_index"]
                      and after["stats"]["cards"] == before["stats"]["cards"] else ""))
        if after["pos"][me] in (target, -1):
            moved.add(me)
    if A_ROOM <= action < A_STEP + 13 and before["pos"][me] < 0 <= after["pos"][me]:
        out.append(f"{_p(me)} puts their pawn on the {_sq(game, after['pos'][me])}")
        moved.add(me)
    if action == A_TUNNEL:
        out.append(f"{_p(me)} takes the Tunnel to the {_sq(game, after['pos'][me])}")
        moved.add(me)
    if action >= A_SEGRETO:
        out.append(f"{_p(me)} plays Tunnel Segreto to the {_sq(game, after['pos'][me])}")
        moved.add(me)
    if action == A_PLAY:
        out.append(f"{_p(me)} plays a Tecnica")
    if A_KEEP <= action < A_TARGET and after["seat"] == me:
        out.append(f"you keep {CARD_NAMES[TECNICA[action - A_KEEP]]} and discard the other face down")
    # Cards drawn on a Nebbia del Dojo square.
    if after["stats"]["cards"] > before["stats"]["cards"]:
        drawer = before["turn_player"]
        if after["last_card"] >= 0:
            out.append(f"{_p(drawer)} draws {CARD_NAMES[after['last_card']]}")
        elif after["seat"] == drawer and isinstance(after["hands"][drawer], list):
            new = list((Counter(after["hands"][drawer]) - Counter(before["hands"][drawer])).elements())
            out.append(f"you draw the Tecnica {CARD_NAMES[new[0]]}" if new else "you draw a Tecnica")
        else:
            out.append(f"{_p(drawer)} draws a Tecnica (kept secret)")
    if after["stats"]["exam_attempts"] > before["stats"]["exam_attempts"]:
        out.append(f"{_p(after['turn_player'])} enters the Dojo and takes the Final Exam")
    # Kumite: the bouts this move settled, with their dice (rolled openly), then a window it opened.
    fought = after["stats"]["kumite"] - before["stats"]["kumite"]
    exam = before["k_kind"] == "exam" or after["stats"]["exam_attempts"] > before["stats"]["exam_attempts"]
    for att, dfd, die_a, die_d, total_a, total_d in after["k_last"]:
        out.append(f"{'Final Exam' if exam else 'Kumite'}: {_p(att)} attacks {_p(dfd)}; dice {die_a} v {die_d}, "
                   f"totals {total_a} v {total_d} with belts and Tecnica")
    if after["k_att"] >= 0 and (fought or after["k_dice"] != before["k_dice"]):
        kind = "the Final Exam" if after["k_kind"] == "exam" else "Kumite"
        out.append(f"{kind}: {_p(after['k_att'])} attacks {_p(after['k_def'])}; dice "
                   f"{after['k_dice'][0]} v {after['k_dice'][1]} (Tecnica may still be played)")
    for q in range(n):
        d = after["track"][q] - before["track"][q]
        if d:
            belt = BELTS[belt_of(after["track"][q])]
            out.append(f"{_p(q)} {'gains' if d > 0 else 'loses'} {abs(d)} stripe{'s' if abs(d) != 1 else ''}: "
                       f"track {after['track'][q]} ({belt} belt)")
        if before["pos"][q] >= 0 and after["pos"][q] < 0:
            out.append(f"{_p(q)} is sent to Start (back to their Safe Room)")
        elif before["pos"][q] >= 0 and after["pos"][q] != before["pos"][q] and q not in moved:
            out.append(f"{_p(q)} is moved to the {_sq(game, after['pos'][q])}")
        if after["med_skip"][q] and not before["med_skip"][q]:
            out.append(f"{_p(q)} meditates: skips their next turn, and cannot be fought until then")
    # A new turn: its dice.
    if after["winner"] < 0 and after["main_phase"] == "move" and (
            after["turn_index"] != before["turn_index"] or after["roll"] != before["roll"]
            or before["main_phase"] != "move"):
        if after["turn_index"] != before["turn_index"] or after["mv_start"] != before["mv_start"]:
            out.append(f"{_p(after['turn_player'])} rolls {after['roll']}")
    end = ending(game, after)
    if end and before["winner"] < 0:
        out.append(end)
    return out


def label(game, view: dict[str, Any], action: int) -> str:
    n = game.num_players
    actor = view["pending"][0][1] if view["pending"] else view["actor"]
    if A_TARGET <= action < A_SEGRETO:
        q = (actor + action - A_TARGET + 1) % n
        why = {"sfida": "fight", "irimi": "swap places with", "exam": "take the Exam against"}.get(view.get("purpose"),
                                                                                              "choose")
        return f"{why} player_{q}"
    if A_ROOM <= action < A_ROOM + 9:
        corner = SEAT_CORNERS[n][actor]
        s = game.board.rooms[corner][action - A_ROOM]
        r, c = divmod(s, SIZE)
        return f"Safe Room square row {r}, column {c}"
    return game.action_to_string(action)


def turn(game, view: dict[str, Any]) -> str:
    """The turn line: whose turn, what is asked, the dice."""
    if view["winner"] >= 0:
        return f"the game is over: player_{view['winner']} wears the Black Belt"
    actor = view["pending"][0][1] if view["pending"] else view["actor"]
    asked = {
        "setup": "place a pawn in their Safe Room", "move": f"walk: {view['mv_steps']} of {view['roll']} steps left",
        "tecnica": "Kumite: play a Tecnica or not", "keep": "keep one Tecnica", "tunnel": "take the Tunnel or not",
        "target": "choose a player", "segreto": "choose a Tunnel", "place": "put a pawn back in their Safe Room",
        "settle": "take an extra step",
    }
    phase = "place" if view["pending"] else view["main_phase"]
    whose = "" if actor == view["turn_player"] else f" (in the turn of player_{view['turn_player']})"
    return f"player_{actor} to act: {asked.get(phase, phase)}{whose}"


def waiting(game, view: dict[str, Any]) -> str:
    """Why the viewer cannot act for a while: Meditazione skips its next turn. Nothing else keeps a
    Dojo player out for longer than the others' turns (a pawn sent to Start is placed at once)."""
    me = view["seat"]
    if view["winner"] < 0 and view["med_skip"][me]:
        return ("you meditate (Meditazione): your next turn is skipped, and nobody can fight you "
                "until it has passed")
    return ""


def ending(game, view: dict[str, Any]) -> str:
    if view["winner"] < 0:
        return ""
    return f"player_{view['winner']} passes the Final Exam and wears the Black Belt"

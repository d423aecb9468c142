"""Sequence: what a move caused, in the game's words, for the front ends' log.

Told from one seat's views before and after the move only (see ``play/story.py``): the card played
(every card played is laid face up on the discards), the chip placed or removed, a dead card
exchanged, the card drawn (named only to the seat that drew it), sequences made, the end.

There is no ``waiting``: every seat plays every round (a seat with nothing to play passes on its own
turn), so a seat never waits longer than the other seats' turns.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from envs.sequence.board import SIZE
from envs.sequence.board import label as card_label
from envs.sequence.rules import REMOVE

TEAMS = "ABC"


def _team(view: dict[str, Any], seat: int) -> str:
    return f"team {TEAMS[seat % view['num_teams']]}"


def _square(game, sq: int) -> str:
    k = game.layout[sq]
    return f"{card_label(k) if k >= 0 else 'free corner'} square (row {sq // SIZE}, column {sq % SIZE})"


def tell(game, before: dict[str, Any], after: dict[str, Any], seat: int, action: int | None,
         states: Any = None) -> list[str]:
    who = f"player_{seat} ({_team(before, seat)})"
    out = []
    played = after["discards"][len(before["discards"]):] if len(after["discards"]) >= len(before["discards"]) \
        else after["discards"][-1:]
    placed = [sq for sq in range(SIZE * SIZE) if before["board"][sq] != after["board"][sq]
              and after["board"][sq] >= 0 and before["board"][sq] < 0]
    removed = [sq for sq in range(SIZE * SIZE) if before["board"][sq] >= 0 and after["board"][sq] < 0
               and before["board"][sq] != after["board"][sq]]
    card = " ".join(card_label(k) for k in played)
    if placed:
        out.append(f"{who} plays {card} and places a chip on the {_square(game, placed[0])}")
    elif removed:
        owner = TEAMS[before["board"][removed[0]]]
        out.append(f"{who} plays {card} (a one-eyed Jack) and removes team {owner}'s chip from the "
                   f"{_square(game, removed[0])}")
    elif after["dead_used"] and not before["dead_used"]:
        out.append(f"{who} exchanges the dead card {card}: no free square shows it")
    elif card:
        out.append(f"{who} plays {card}")
    elif action is not None and game.action_to_string(action) == "pass":
        out.append(f"{who} passes: no card in hand can be played")
    drawn = before["deck_size"] - after["deck_size"]
    if after["seat"] == seat:
        new = Counter(after["hand"]) - (Counter(before["hand"]) - Counter(played))
        if new:
            out.append(f"you draw {' '.join(card_label(k) for k in sorted(new.elements()))}")
    elif drawn > 0 or after["deck_size"] > before["deck_size"]:
        out.append(f"player_{seat} draws a card")
    if after["deck_size"] > before["deck_size"]:
        out.append("the draw pile ran out: the discards were shuffled into a new one")
    for t in range(after["num_teams"]):
        made = len(after["sequences"][t]) - len(before["sequences"][t])
        if made > 0:
            total = len(after["sequences"][t])
            out.append(f"team {TEAMS[t]} completes {'a sequence' if made == 1 else f'{made} sequences'} "
                       f"({total} of the {game.sequences_to_win} needed)")
    end = ending(game, after)
    if end and not ending(game, before):
        out.append(end)
    return out


def label(game, view: dict[str, Any], action: int) -> str:
    """Move names that name the square's card, and whose chip a one-eyed Jack takes."""
    name = game.action_to_string(action)
    word, _, square = name.partition(" ")
    if word == "remove":
        sq = action - REMOVE
        chip, card = view["board"][sq], game.layout[sq]
        whose = f"team {TEAMS[chip]}'s chip" if 0 <= chip < view["num_teams"] else "the chip"
        return f"remove {whose} on {card_label(card) if card >= 0 else 'the free corner'} {square}"
    if word == "dead":
        return f"dead card {square}: exchange it (no free square shows it)"
    return name


def turn(game, view: dict[str, Any]) -> str:
    if view["winner"] is not None or view["drawn_game"]:
        return "the game is over"
    p = view["current_player"]
    extra = " (a dead card was exchanged: now play a card)" if view["dead_used"] else ""
    return f"player_{p} ({_team(view, p)}) to play a card{extra}"


def ending(game, view: dict[str, Any]) -> str:
    if view["winner"] is not None:
        t = view["winner"]
        seats = ", ".join(f"player_{p}" for p in range(len(view["hand_sizes"])) if p % view["num_teams"] == t)
        return f"team {TEAMS[t]} ({seats}) wins with {len(view['sequences'][t])} sequence(s)"
    if view["drawn_game"]:
        return "a draw: no seat can ever place or remove a chip again"
    return ""

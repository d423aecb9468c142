"""What one seat sees, as a picture both front ends draw: a grid of cells, walls, text lines.

Nothing here knows a particular game. A game declares its board picture and the square each action
is about on its :class:`~envs.core.game.Game` (``Game.picture`` and ``Game.action_square``, built
from one seat's ``player_view`` only, so nothing hidden from that seat reaches a screen); see
``docs/adding_a_game.md``. :func:`picture` asks the game and, for a game that declares no picture,
falls back to a text-only picture: the seat's view as ``key: value`` lines, played with move
buttons (terminal: the numbered list).
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from envs.core.picture import SEAT_COLOURS, Cell, Picture
from play.story import story_module

__all__ = ["SEAT_COLOURS", "Cell", "Picture", "action_square", "picture", "text_picture"]


def picture(game, view: dict[str, Any], ended: str | None = None) -> Picture:
    """The picture of ``view`` (one seat's ``player_view``) for ``game``; text only if the game has none.

    ``ended`` (how the game ended, :meth:`play.session.Session.end_text`) takes the place of the
    picture's ``turn`` line once the game is over, whether the rules or the move limit ended it.
    """
    pic = game.picture(view)
    if pic is None:
        pic = text_picture(game, view)
    elif not isinstance(pic, Picture):
        raise TypeError(f"{game.name}: Game.picture must return an envs.core.picture.Picture or None, "
                        f"got {type(pic).__name__}")
    module = story_module(game)
    if module is not None and hasattr(module, "turn"):
        pic = dataclasses.replace(pic, turn=module.turn(game, view) or pic.turn)
    if ended is not None:
        pic = dataclasses.replace(pic, turn=f"game over: {ended}")
    return pic


def action_square(game, view: dict[str, Any], action: int) -> tuple[int, int] | None:
    """The cell a move is about, or None for moves that are not about a square (or a game without one)."""
    square = game.action_square(view, int(action))
    return None if square is None else (int(square[0]), int(square[1]))


def text_picture(game, view: dict[str, Any]) -> Picture:
    """A picture with no board: every entry of the seat's view as one line of text."""
    lines = [f"{key}: {value if isinstance(value, str) else json.dumps(value)}" for key, value in view.items()]
    return Picture(0, 0, [], lines=lines, legend=f"{game.name} declares no board picture: the moves are listed below")

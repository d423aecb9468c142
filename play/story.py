"""What a move caused, told to one seat in its game's words: the front ends' log.

A game tells its story in a module beside its picture, ``envs/<game>/story.py``, with

* ``tell(game, before, after, seat, action, states=None) -> list[str]``: what the move of ``seat``
  caused, built from the viewer's ``player_view`` before and after it (``before``, ``after``);
  ``action`` is None when the viewer could not tell the move apart (a face-down choice). A game
  that hides nothing (``Game.hidden_information`` False) is also handed ``states``, the full
  positions before and after, so that it can tell what the views do not keep (dice rolled inside
  the move). Since the story of a game with hidden information is built from the viewer's views
  alone, it can tell nothing that seat may not know.
* optionally ``label(game, view, action) -> str``: the move's name for a person (players by name,
  squares and cards by what they are); default: ``Game.action_to_string``. :func:`label` is the one
  way the front ends name a move (the move list, the log, a hint, a refused move), and no name it
  gives holds an identifier of the code: a ``snake_case`` word is written as words.
* optionally ``ending(game, view) -> str``: who won and why, in words ("" if nothing to add).
* optionally ``turn(game, view) -> str``: the picture's turn line, in words (whose move, what is asked).
* optionally ``waiting(game, view) -> str``: why the viewer cannot act for a while (its bot follows a
  party, it is out of the game), "" when it simply waits for its turn.

A game without such a module has no story beyond the move list.
"""

from __future__ import annotations

import importlib
import re
from types import ModuleType
from typing import Any

_MODULES: dict[str, ModuleType | None] = {}


def story_module(game) -> ModuleType | None:
    """The game's story module (``story`` beside its game class), or None if it has none."""
    package = type(game).__module__.rpartition(".")[0]
    if package not in _MODULES:
        name = f"{package}.story" if package else "story"
        try:
            _MODULES[package] = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name != name:
                raise
            _MODULES[package] = None
    return _MODULES[package]


def tell(game, before: Any, after: Any, seat: int, action: int | None, viewer: int) -> list[str]:
    """What the move of ``seat`` (from state ``before`` to ``after``) caused, as ``viewer`` may know it."""
    module = story_module(game)
    if module is None:
        return []
    states = None if game.hidden_information else (before, after)
    return list(module.tell(game, before.player_view(viewer), after.player_view(viewer), seat, action,
                            states=states))


#: A word joined by underscores (``steal_life``), but not a seat (``player_3``: the project's name for one).
SNAKE_CASE = re.compile(r"\b(?!player_\d+\b)([A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+)\b")


def plain_words(text: str) -> str:
    """``text`` with every ``snake_case`` word written as words (``steal_life`` -> ``steal life``)."""
    return SNAKE_CASE.sub(lambda m: m.group(1).replace("_", " "), text)


def label(game, view: dict[str, Any], action: int) -> str:
    """The name of ``action`` for a person who sees ``view``: the game's story ``label``, else its
    ``action_to_string``; in plain words either way."""
    module = story_module(game)
    if module is not None and hasattr(module, "label"):
        return plain_words(module.label(game, view, int(action)))
    return plain_words(game.action_to_string(int(action)))


def ending(game, view: dict[str, Any]) -> str:
    """Who won and why, told from ``view`` ("" when the game adds nothing to its end text)."""
    module = story_module(game)
    if module is not None and hasattr(module, "ending"):
        return module.ending(game, view)
    return ""


def waiting_reason(game, view: dict[str, Any]) -> str:
    """Why the seat of ``view`` cannot act for a while, when the game says so (following a party,
    eliminated, ...); "" otherwise (then it is simply another seat's move)."""
    module = story_module(game)
    if module is not None and hasattr(module, "waiting"):
        return module.waiting(game, view)
    return ""


def score_text(value: float) -> str:
    """A return for people: signed, at most two decimals (``-0.33``, ``+1``)."""
    return f"{round(value, 2) + 0.0:+g}"

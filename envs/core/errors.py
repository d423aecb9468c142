"""Exceptions shared by every engine and by the environment core.

All of them subclass :class:`ValueError`, so callers that only care about "bad input" can catch
that, while tests and tools can tell the three kinds apart.
"""

from __future__ import annotations

import difflib


class IllegalActionError(ValueError):
    """An action that the rules do not allow in the current state.

    The message names the action (id and readable name), the player and the phase, and lists the
    legal actions when there are few enough to read.
    """


class ConfigError(ValueError):
    """A configuration keyword that is unknown or has a value outside what the game allows."""


class UnknownKeywordError(ConfigError):
    """Config keywords the game does not know. ``unknown`` and ``known`` list them; ``also`` names
    keywords taken by whatever builds the game (an environment's ``max_cycles``, ``render_mode``),
    so the message lists everything the caller could have meant."""

    def __init__(self, game: str, unknown: list[str], known: list[str], also: dict[str, str] | None = None) -> None:
        self.game, self.unknown, self.known = game, sorted(unknown), sorted(known)
        self.also = dict(also or {})
        hints = [f"{close[0]!r}" + (f" for {word!r}" if len(self.unknown) > 1 else "") for word in self.unknown
                 if (close := difflib.get_close_matches(word, [*self.known, *self.also], n=1, cutoff=0.75))]
        message = f"{game}: unknown config keyword(s) {self.unknown}"
        if hints:
            message += f" (did you mean {', '.join(hints)}?)"
        message += f"; known keywords: {self.known}"
        if self.also:
            message += "; environment keywords: " + ", ".join(f"{key} ({what})" for key, what in self.also.items())
        super().__init__(message)

    def __reduce__(self):  # rebuilt from its parts, so that it crosses a process pool intact
        return type(self), (self.game, self.unknown, self.known, self.also)

    def with_keywords(self, also: dict[str, str]) -> UnknownKeywordError:
        """The same error, also listing ``also`` (keyword -> a few words on what it is)."""
        return UnknownKeywordError(self.game, self.unknown, self.known, {**self.also, **also})


class StateError(ValueError):
    """A saved state (or a player view) that is corrupt, truncated or belongs to another game."""

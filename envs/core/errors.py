"""Exceptions shared by every engine and by the environment core.

All of them subclass :class:`ValueError`, so callers that only care about "bad input" can catch
that, while tests and tools can tell the three kinds apart.
"""

from __future__ import annotations


class IllegalActionError(ValueError):
    """An action that the rules do not allow in the current state.

    The message names the action (id and readable name), the player and the phase, and lists the
    legal actions when there are few enough to read.
    """


class ConfigError(ValueError):
    """A configuration keyword that is unknown or has a value outside what the game allows."""


class StateError(ValueError):
    """A saved state (or a player view) that is corrupt, truncated or belongs to another game."""

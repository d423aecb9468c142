"""Seeded randomness that survives a JSON round trip.

Engines draw every random number from a :class:`random.Random` created here. Python's Mersenne
Twister is fast for the scalar draws that card and dice games make, and its full internal state
serializes to a plain list of integers, so a saved game restores its RNG exactly.
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np

from envs.core.fields import Rng


def make_rng(seed: int | None) -> random.Random:
    """Return a generator for ``seed``, an integer >= 0 (Python or numpy); ``None`` draws a fresh
    seed from the operating system. A negative seed is refused: Python's generator would play the
    same game as its absolute value."""
    if type(seed) is int and seed >= 0:  # the common case, checked first: engines deal one per game
        return random.Random(seed)
    if seed is None:
        seed = random.SystemRandom().randrange(2**63)
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)):
        raise TypeError(f"seed must be an integer >= 0 or None, got {seed!r} of type {type(seed).__name__}")
    if seed < 0:
        raise ValueError(f"seed must be an integer >= 0 or None, got {seed} (a negative seed would "
                         f"repeat the game of seed {-seed})")
    return random.Random(int(seed))


def rng_to_json(rng: random.Random) -> list[Any]:
    """The generator's complete state as a JSON-compatible list."""
    version, internal, gauss_next = rng.getstate()
    return [version, list(internal), gauss_next]


def rng_from_json(data: Any, where: str = "rng") -> random.Random:
    """Rebuild a generator saved by :func:`rng_to_json`; raises :class:`StateError` if corrupt."""
    return Rng().load(data, where)

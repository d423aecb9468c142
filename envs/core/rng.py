"""Seeded randomness that survives a JSON round trip.

Engines draw every random number from a :class:`random.Random` created here. Python's Mersenne
Twister is fast for the scalar draws that card and dice games make, and its full internal state
serializes to a plain list of integers, so a saved game restores its RNG exactly.
"""

from __future__ import annotations

import random
from typing import Any

from envs.core.errors import StateError


def make_rng(seed: int | None) -> random.Random:
    """Return a generator for ``seed``; ``None`` draws a fresh seed from the operating system."""
    if seed is None:
        seed = random.SystemRandom().randrange(2**63)
    if not isinstance(seed, (int,)) or isinstance(seed, bool):
        raise TypeError(f"seed must be an int or None, got {seed!r}")
    return random.Random(seed)


def rng_to_json(rng: random.Random) -> list[Any]:
    """The generator's complete state as a JSON-compatible list."""
    version, internal, gauss_next = rng.getstate()
    return [version, list(internal), gauss_next]


def rng_from_json(data: Any) -> random.Random:
    """Rebuild a generator saved by :func:`rng_to_json`; raises :class:`StateError` if corrupt."""
    try:
        version, internal, gauss_next = data
        internal = tuple(int(x) for x in internal)
        if len(internal) != 625:
            raise ValueError(f"expected 625 state words, got {len(internal)}")
        rng = random.Random()
        rng.setstate((int(version), internal, gauss_next))
    except (TypeError, ValueError) as exc:
        raise StateError(f"corrupt RNG state in saved game: {exc}") from exc
    return rng

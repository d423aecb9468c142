"""Seeded randomness that survives a JSON round trip, and the seeds of a run of games.

Engines draw every random number from a :class:`random.Random` created here. Python's Mersenne
Twister is fast for the scalar draws that card and dice games make, and its full internal state
serializes to a plain list of integers, so a saved game restores its RNG exactly.

A run of games follows Gymnasium's seeding: one seed at the start fixes every game after it.
:func:`stream_seed` gives the seed of each later game from the first one (the environment's plain
``reset()`` after ``reset(seed=s)``), and :func:`draw_seed` takes a game's seed from a generator the
caller owns (``Game.new_initial_state(generator)``). Both are the same in every process and on
every platform.
"""

from __future__ import annotations

import hashlib
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
    return random.Random(fresh_seed() if seed is None else check_seed(seed))


def check_seed(seed: Any) -> int:
    """``seed`` as a Python int if it is an integer >= 0 (Python or numpy); a TypeError for anything
    that is no integer (bools included), a ValueError for a negative one."""
    if type(seed) is int and seed >= 0:
        return seed
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)):
        raise TypeError(f"seed must be an integer >= 0 or None, got {seed!r} of type {type(seed).__name__}")
    if seed < 0:
        raise ValueError(f"seed must be an integer >= 0 or None, got {seed} (a negative seed would "
                         f"repeat the game of seed {-seed})")
    return int(seed)


def fresh_seed() -> int:
    """A seed from the operating system's entropy (what an unseeded first game is dealt from)."""
    return random.SystemRandom().randrange(2**63)


def stream_seed(seed: int, index: int) -> int:
    """The seed of game ``index`` (1, 2, ...) of the run that starts with the game of ``seed``.

    A hash of both numbers (BLAKE2b, 64 bits, the top 63 kept) rather than draws from one generator:
    neighbouring seeds give unrelated runs, and game ``index`` needs no replay of the games before it.
    """
    key = f"{seed}:{index}".encode()
    return int.from_bytes(hashlib.blake2b(key, digest_size=8, person=b"tabletop-stream").digest(), "little") >> 1


#: The generators a game's seed can be drawn from (``Game.new_initial_state(generator)``).
GENERATORS = (random.Random, np.random.Generator)


def draw_seed(generator: random.Random | np.random.Generator) -> int:
    """One game's seed (an integer in ``[0, 2**63)``) drawn from ``generator``; each call advances it,
    so a generator seeded alike deals the same run of games in any process."""
    if isinstance(generator, random.Random):
        return generator.randrange(2**63)
    if isinstance(generator, np.random.Generator):
        return int(generator.integers(2**63))
    raise TypeError(f"expected a random.Random or a numpy.random.Generator, got {type(generator).__name__}")


def rng_to_json(rng: random.Random) -> list[Any]:
    """The generator's complete state as a JSON-compatible list."""
    version, internal, gauss_next = rng.getstate()
    return [version, list(internal), gauss_next]


def rng_from_json(data: Any, where: str = "rng") -> random.Random:
    """Rebuild a generator saved by :func:`rng_to_json`; raises :class:`StateError` if corrupt."""
    return Rng().load(data, where)

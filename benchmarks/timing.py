"""The AEC random-play timing loop shared by ``benchmarks.run`` and ``benchmarks.vector``."""

from __future__ import annotations

import random
import time
from typing import Any, Callable

import numpy as np


def time_env(make: Callable[[], Any], seconds: float) -> dict[str, float]:
    """Steps/s and games/s of uniformly random legal play through the AEC loop."""
    env = make()
    rng = random.Random(0)
    steps = games = 0
    seed = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        env.reset(seed=seed)
        seed += 1
        for _agent in env.agent_iter():
            obs, _reward, term, trunc, _info = env.last()
            if term or trunc:
                action = None
            else:
                legal = np.flatnonzero(obs["action_mask"])
                action = int(legal[rng.randrange(len(legal))])
                steps += 1
            env.step(action)
        games += 1
    elapsed = time.perf_counter() - start
    return {"steps_per_s": steps / elapsed, "games_per_s": games / elapsed, "steps_per_game": steps / max(games, 1)}

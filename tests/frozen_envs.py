"""Frozen environments: for every game and config family, a seeded game through ``raw_env()`` whose
deal, legal moves, every seat's observation and mask, rewards, ends and saved states are fixed by
digests, one per step.

    python -m tests.frozen_envs                 # write tests/golden/frozen/<game>-<family>.json
    python -m tests.frozen_envs sequence_v0     # one game's files

From the first release on an environment's rules, observations, actions and rewards do not change
under the same ``_vN``: a change that alters any of them fails ``tests/test_frozen_envs.py``, whose
message names the first step and what differs there. If the change is intended, bump the game's
version (``Game.version`` and the module name's ``_vN``), add a CHANGELOG line, and write the files
again with the command above.
"""

from __future__ import annotations

import hashlib
import json
import pathlib
import random
from typing import Any

import numpy as np

import envs

FROZEN_DIR = pathlib.Path(__file__).resolve().parent / "golden" / "frozen"
SEED = 17
#: Actions played per game (a game that ends sooner stops there).
ACTIONS = 240
#: Saved states are digested every this many steps (and at the end).
STATE_EVERY = 40
#: The parts of a step that are digested, in this order; the test names the first part that differs.
PARTS = ("to_act", "legal", "observations", "rewards", "ends", "saved_state")


def _digest(value: Any) -> str:
    h = hashlib.sha256()
    if isinstance(value, bytes):
        h.update(value)
    elif isinstance(value, np.ndarray):
        h.update(str(value.dtype).encode() + str(value.shape).encode() + np.ascontiguousarray(value).tobytes())
    else:
        h.update(json.dumps(value, sort_keys=True, default=str).encode())
    return h.hexdigest()[:16]


def play(name: str, config: dict[str, Any], seed: int = SEED, actions: int = ACTIONS) -> list[dict[str, str]]:
    """Each step's digests (one dict per step, :data:`PARTS`) of a seeded game of random legal moves."""
    env = envs.make(name, raw=True, **config)
    env.reset(seed=seed)
    rng = random.Random(seed)
    steps = []
    for n in range(actions + 1):
        agent = env.agent_selection
        observed = [env.observe(a) for a in env.possible_agents]
        mask = np.asarray(env.observe(agent)["action_mask"])
        step = {
            "to_act": _digest(agent),
            "legal": _digest(np.flatnonzero(mask).tolist()),
            "observations": _digest(b"".join(np.asarray(o["observation"]).tobytes() + np.asarray(o["action_mask"]).tobytes()
                                             for o in observed)),
            "rewards": _digest({a: float(r) for a, r in env.rewards.items()}),
            "ends": _digest([env.terminations, env.truncations]),
            "saved_state": _digest(env.unwrapped.save_state()) if n % STATE_EVERY == 0 else "",
        }
        steps.append(step)
        if env.terminations[agent] or env.truncations[agent]:
            step["saved_state"] = _digest(env.unwrapped.save_state())
            break
        if n == actions:
            break
        legal = np.flatnonzero(mask)
        env.step(int(legal[rng.randrange(len(legal))]))
    env.close()
    return steps


def path_for(name: str, family: str) -> pathlib.Path:
    return FROZEN_DIR / f"{name}-{family}.json"


def families() -> list[tuple[str, str, dict[str, Any]]]:
    """``(game, family, config)`` of every game and config family."""
    return [(name, family, dict(config)) for name in envs.NAMES
            for family, config in envs.game_class(name).config_families.items()]


def write(name: str, family: str, config: dict[str, Any]) -> pathlib.Path:
    path = path_for(name, family)
    path.parent.mkdir(parents=True, exist_ok=True)
    data = {"game": name, "version": int(envs.game_class(name).version), "family": family, "config": config,
            "seed": SEED, "actions": ACTIONS, "steps": play(name, config)}
    path.write_text(json.dumps(data, indent=0) + "\n")
    return path


def main(argv: list[str] | None = None) -> list[pathlib.Path]:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m tests.frozen_envs",
                                     description="Write the frozen-environment digests (tests/golden/frozen/).")
    parser.add_argument("games", nargs="*", help="games to write (default: every game)")
    args = parser.parse_args(argv)
    written = [write(n, f, c) for n, f, c in families() if not args.games or n in args.games]
    for path in written:
        print(f"wrote {path}")
    return written


if __name__ == "__main__":
    main()

"""Mutation fuzz of saved states: nothing impossible loads, nothing loaded crashes later.

Saved states are taken from many positions of seeded random games of every game and configuration
family. Every field (and items of nested lists) is mutated: a wrong type, out of range, duplicated,
removed, huge. Each mutated save must either be refused with a ``StateError`` or load into a state
that plays on: random legal play to the end (bounded), with the contract's checks and every seat's
observation inside its space after every action. Any other exception fails the test, and so does a
single load-and-play that runs longer than a generous wall-clock guard (a hang).
"""

from __future__ import annotations

import copy
import json
import random
import signal

import numpy as np
import pytest

import envs
from envs.core import StateError
from envs.core.testing import check_state

CASES = [
    pytest.param(name, family, config, id=f"{name}-{family}")
    for name in envs.NAMES
    for family, config in envs.game_class(name).config_families.items()
]

#: Positions saved per configuration family, actions replayed after a load, mutated paths per save.
POSITIONS = 5
PLAY_ON = 40
HANG_GUARD_S = 20
MUTATIONS_PER_SPOT = 6
SALT = ""  # a longer local run varies it


class Hang(Exception):
    pass


def _alarm(signum, frame):  # pragma: no cover - only on a hang
    raise Hang(f"a single load-and-play took more than {HANG_GUARD_S} s")


def positions(game, seed: int) -> list:
    """Snapshots of a seeded random game: the start, a few spread over the game, and the end."""
    rng = random.Random(seed)
    state = game.new_initial_state(seed)
    history = [state.clone()]
    while not state.is_terminal() and len(history) < 3000:
        legal = state.legal_actions()
        state.apply_action(legal[rng.randrange(len(legal))])
        history.append(state.clone())
    picks = {0, len(history) - 1}
    while len(picks) < min(POSITIONS, len(history)):
        picks.add(rng.randrange(len(history)))
    return [history[i] for i in sorted(picks)]


def paths(value, rng: random.Random, prefix=(), depth=0) -> list[tuple]:
    """The field itself and a few items inside it (first, last, one at random), two levels deep."""
    out = [prefix]
    if depth >= 3:
        return out
    if isinstance(value, list) and value:
        for i in sorted({0, len(value) - 1, rng.randrange(len(value))}):
            out += paths(value[i], rng, prefix + (i,), depth + 1)
    elif isinstance(value, dict):
        for k in value:
            out += paths(value[k], rng, prefix + (k,), depth + 1)
    return out


def mutations(value, rng: random.Random) -> list:
    """Replacement values for one spot (``REMOVE`` deletes it)."""
    out = ["x", 1.5, None, {}, [], True, 10**30, -1, 2**31, float("nan"), [0] * 200_000]
    if isinstance(value, bool):
        out += [not value, 0, 1, "no"]
    elif isinstance(value, int):
        out += [value + 1, value - 1, -value, value * 7 + 3, rng.randrange(-5, 120), str(value)]
    elif isinstance(value, str):
        out += [value + "x", "", value.upper(), "0x" + "f" * 40]
    elif isinstance(value, list):
        if value:
            out += [value + [value[-1]], value[:-1], value[::-1], [value[0]] * len(value), value * 2]
            out += [rng.sample(value, len(value))]
    elif value is None:
        out += [0, 1, 2, 3]
    out.append(REMOVE)
    return out


REMOVE = object()


def mutate(saved: dict, path: tuple, new) -> dict:
    data = copy.deepcopy(saved)
    parent = data["state"]
    for key in path[:-1]:
        parent = parent[key]
    if new is REMOVE:
        del parent[path[-1]]
    else:
        parent[path[-1]] = new
    return data


def play_on(game, state, rng: random.Random) -> None:
    """Random legal play with the contract checked and observations inside their space."""
    low, high = game.observation_low, game.observation_high
    for _ in range(PLAY_ON):
        check_state(state)
        for p in range(game.num_players):
            obs = game.observe(state, p)
            assert obs.shape == tuple(game.observation_shape) and obs.dtype == game.observation_dtype
            assert np.isfinite(obs).all() and obs.min() >= low and obs.max() <= high, (
                f"observation of seat {p} outside [{low}, {high}]: {obs.min()}..{obs.max()}")
        if state.is_terminal():
            return
        legal = state.legal_actions()
        state.apply_action(legal[rng.randrange(len(legal))])
    json.dumps(game.save(state))


@pytest.mark.parametrize("name,family,config", CASES)
def test_mutated_saves_are_refused_or_play_on(name, family, config):
    game = envs.make_game(name, **config)
    rng = random.Random(f"{name}-{family}{SALT}")
    tried = refused = 0
    previous = signal.signal(signal.SIGALRM, _alarm)
    try:
        for state in positions(game, seed=rng.randrange(10**6)):
            saved = json.loads(json.dumps(game.save(state)))
            for key in list(saved["state"]):
                for path in paths(saved["state"][key], rng, (key,)):
                    spot = saved["state"]
                    for k in path:
                        spot = spot[k]
                    candidates = mutations(spot, rng)
                    for new in rng.sample(candidates, min(MUTATIONS_PER_SPOT, len(candidates))):
                        data = mutate(saved, path, new)
                        tried += 1
                        signal.setitimer(signal.ITIMER_REAL, HANG_GUARD_S)
                        try:
                            try:
                                loaded = game.load(data)
                            except StateError as exc:
                                refused += 1
                                assert str(exc), "a StateError must say what is wrong"
                                continue
                            play_on(game, loaded, random.Random(tried))
                        except Exception as exc:
                            shown = new if not isinstance(new, list) or len(new) < 20 else f"list of {len(new)}"
                            raise AssertionError(
                                f"{name} {family}: state.{'.'.join(map(str, path))} = {shown!r} "
                                f"(phase {state.phase!r}) -> {type(exc).__name__}: {exc}") from exc
                        finally:
                            signal.setitimer(signal.ITIMER_REAL, 0)
    finally:
        signal.signal(signal.SIGALRM, previous)
    print(f"{name} {family}: {tried} mutated saves, {refused} refused")
    assert tried > 200 and refused > tried // 3, (tried, refused)

"""The Wizard Arena observation's caches never change a value: on many seeded random games, every
observation of a state that has been observed, cloned, saved and played on (its caches carried from
earlier stats, shared with clones that went their own way) is exactly the observation of a fresh
state loaded from its save, which builds everything from nothing.

Seats are observed in shuffled orders (the acting seat and others, dead ones included); play moves
between the original, its clones and states restored mid-game, so that caches built for one state
are brought up to date from another. The games must reach deaths, alliances, dead observers and the
alliance phase, or the test says so. (Layout and values against the documented encoding:
``test_wizard_arena_obs_reference.py``.)"""

from __future__ import annotations

import random

import numpy as np
import pytest

from envs.wizard_arena.game import WizardArenaGame
from envs.wizard_arena.rules import ALLY

#: (config, what its games must reach): low health for deaths, many bots for long lines.
CONFIGS = [
    ({"num_bots": 16}, ("party", "ally phase", "clone", "restored")),
    ({"num_bots": 16, "health": 2}, ("death", "dead observer", "party", "ally phase", "clone")),
    ({"num_bots": 16, "health": 1, "map_size": 12, "terrain_density": 0.3, "observation_version": 3},
     ("death", "dead observer", "party")),
    ({}, ("party", "ally phase")),
    ({"num_bots": 4, "map_size": 8, "health": 0, "gary_roams": True}, ()),
    ({"num_bots": 7, "observation_version": 1, "health": 3}, ("death", "dead observer", "party")),
    ({"num_bots": 9, "map_size": 10, "terrain_density": 0.0, "alliance_tie_break": "random"}, ("party",)),
]


def fresh_observation(game: WizardArenaGame, state, seat: int) -> np.ndarray:
    """The observation of a new state loaded from ``state``'s save: no cache carried over."""
    restored = game.load(game.save(state))
    restored.set_step_limit(state.step_limit)
    return game.observe(restored, seat)


@pytest.mark.parametrize(("config", "must_reach"), CONFIGS,
                         ids=[",".join(f"{k}={v}" for k, v in c.items()) or "default" for c, _ in CONFIGS])
def test_cached_observation_equals_fresh_one(config, must_reach):
    game = WizardArenaGame(**config)
    n = game.num_players
    rng = random.Random(n * 1000 + len(config))
    seen = {"death": 0, "party": 0, "dead observer": 0, "ally phase": 0, "clone": 0, "restored": 0}
    compared = 0
    for seed in range(3):
        states = [game.new_initial_state(seed)]
        states[0].set_step_limit(rng.choice((game.step_limit, 37 * n)))
        for step in range(1500):
            live = [s for s in states if not s.is_terminal()]
            if not live:
                break
            state = rng.choice(live)
            acting = state.current_player()
            # The acting seat, and now and then others in a shuffled order (repeats allowed).
            seats = [acting]
            if step % 3 == 0:
                seats += rng.sample(range(n), rng.randint(1, n))
            if step % 11 == 0:
                seats.append(acting)
            for seat in seats:
                got = game.observe(state, seat)
                want = fresh_observation(game, state, seat)
                assert got.dtype == np.float32 and got.shape == game.observation_shape
                assert np.array_equal(got, want), (seed, step, seat, np.flatnonzero(got != want)[:10])
                compared += 1
                seen["dead observer"] += not state.alive[seat]
            seen["death"] += not all(state.alive)
            seen["party"] += bool(state.parties)
            seen["ally phase"] += state.phase == ALLY
            # Branch: a clone (sharing the caches built so far) or a state restored from the save
            # joins the states played on; sometimes the original is dropped.
            if rng.random() < 0.03 and len(states) < 6:
                states.append(state.clone())
                seen["clone"] += 1
            if rng.random() < 0.01 and len(states) < 6:
                restored = game.load(game.save(state))
                restored.set_step_limit(state.step_limit)
                states.append(restored)
                seen["restored"] += 1
            if rng.random() < 0.005 and len(states) > 1:
                states.remove(state)
                continue
            legal = state.legal_actions()
            state.apply_action(legal[rng.randrange(len(legal))])
    assert compared > 300
    missing = [what for what in must_reach if not seen[what]]
    assert not missing, f"the games never reached: {missing} ({seen})"


def test_clones_that_diverge_keep_their_own_observations():
    """A clone and its original share the caches built before the clone; after each has played
    on differently, observing them alternately (every seat) gives each its own observation."""
    game = WizardArenaGame(num_bots=16)
    rng = random.Random(5)
    state = game.new_initial_state(11)
    for _ in range(300):
        legal = state.legal_actions()
        state.apply_action(legal[rng.randrange(len(legal))])
    for seat in range(16):
        game.observe(state, seat)  # fill the caches the clone will share
    clone = state.clone()
    for k in range(400):
        for s in (state, clone):
            if s.is_terminal():
                continue
            legal = s.legal_actions()
            s.apply_action(legal[rng.randrange(len(legal))])
        seat = rng.randrange(16)
        for s in (clone, state) if k % 2 else (state, clone):
            assert np.array_equal(game.observe(s, seat), fresh_observation(game, s, seat)), (k, seat)

"""The environments are frozen: every game and config family replays a seeded game to the digests
stored in tests/golden/frozen/ (deal, legal moves, observations, rewards, ends, saved states).
A change fails with the first step that differs and what to do (tests/frozen_envs.py)."""

from __future__ import annotations

import json

import pytest

import envs
from tests.frozen_envs import PARTS, families, path_for, play

BUMP = ("if the change is intended, it changes the environment under the same version: bump the game's _vN "
        "(Game.version and the module name), add a CHANGELOG line, and write the files again with "
        "python -m tests.frozen_envs")


@pytest.mark.parametrize("name,family,config", families(), ids=lambda v: v if isinstance(v, str) else None)
def test_a_seeded_game_replays_to_its_frozen_digests(name, family, config):
    path = path_for(name, family)
    assert path.is_file(), f"{path.name} is missing: write it with python -m tests.frozen_envs {name}"
    frozen = json.loads(path.read_text())
    assert frozen["version"] == envs.game_class(name).version, f"{path.name} was written for another version; {BUMP}"
    assert frozen["config"] == config, f"{name} config family {family!r} changed; {BUMP}"
    steps = play(name, config, frozen["seed"], frozen["actions"])
    for n, (want, got) in enumerate(zip(frozen["steps"], steps)):
        for part in PARTS:
            assert got[part] == want[part], f"{name} ({family}), step {n}: the {part.replace('_', ' ')} changed; {BUMP}"
    assert len(steps) == len(frozen["steps"]), f"{name} ({family}): the game's length changed; {BUMP}"


def test_the_freeze_catches_a_change(monkeypatch):
    """A deliberate change to an observation is caught, and the message says to bump the version."""
    name, family, config = families()[0]
    state_class = envs.game_class(name).state_class
    real = state_class.seat_observation

    def shifted(self, seat):
        out = real(self, seat)
        out["observation"] = out["observation"].copy()
        out["observation"][0] = 1.0 - out["observation"][0]
        return out

    monkeypatch.setattr(state_class, "seat_observation", shifted)
    with pytest.raises(AssertionError, match="step 0: the observations changed; if the change is intended"):
        test_a_seeded_game_replays_to_its_frozen_digests(name, family, config)

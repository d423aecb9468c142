"""Tier three: stored playthroughs replay to the same readable dump, line by line."""

from __future__ import annotations

import pytest

import envs
from tests.golden_playthroughs import GOLDEN_DIR, dump, first_family, path_for, read


@pytest.mark.parametrize("name", envs.NAMES)
def test_every_game_has_a_golden_playthrough(name):
    family, _ = first_family(name)
    assert path_for(name, family).exists(), "regenerate with: python -m tests.golden_playthroughs"


@pytest.mark.parametrize("path", sorted(GOLDEN_DIR.glob("*.txt")), ids=lambda p: p.stem)
def test_golden_playthrough_replays_identically(path):
    header, expected = read(path)
    if header["game"] not in envs.NAMES:
        pytest.fail(f"{path.name} is for unknown game {header['game']}")
    _, actual = dump(header["game"], header["config"], header["seed"], header["actions"])
    for i, (want, got) in enumerate(zip(expected.splitlines(), actual.splitlines())):
        assert got == want, f"{path.name} line {i + 2} differs:\n  stored: {want}\n  now:    {got}"
    assert len(actual.splitlines()) == len(expected.splitlines())

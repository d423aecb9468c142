"""Files written by an earlier build of the package (0.x) load when their environment version is this one's,
and are refused, naming both versions, when it is not: saved states, game records and ladders. A checkpoint
names its environment in its game id (``pans_trial_v0``), so a policy for another version is another game."""

from __future__ import annotations

import json

import numpy as np
import pytest

import envs
from agents.ladder import LadderError, ladder_path, load_ladder
from agents.records import RecordError, parse_record, record_game
from envs.core.errors import StateError


def _older(block: dict) -> dict:
    """``block`` (a provenance block) as a 0.x build would have written it."""
    return {**block, "version": "0.1.0"}


@pytest.mark.parametrize("name", envs.NAMES)
def test_a_saved_state_of_an_older_build_loads_at_the_same_version_and_names_both_otherwise(name):
    game = envs.make_game(name)
    state = game.new_initial_state(np.random.default_rng(3))
    saved = json.loads(json.dumps(game.save(state)))
    assert game.load(saved).to_dict() == state.to_dict()  # a save carries no package version to trip on
    with pytest.raises(StateError) as refused:
        game.load({**saved, "version": game.version + 1})
    assert f"version {game.version + 1} of {name}" in str(refused.value)
    assert f"reads version {game.version}" in str(refused.value)


def test_a_record_of_an_older_build_loads_at_the_same_version_and_names_both_otherwise():
    record = record_game("pans_trial_v0", ["pans_trial_v0/random-v0", "pans_trial_v0/random-v0"], seed=5, actions=[])
    data = json.loads(record.to_json())
    data["library_version"] = "0.1.0"
    data["provenance"] = _older(data["provenance"])
    assert parse_record(json.dumps(data)).library_version == "0.1.0"
    data["game_version"] = 1
    data["provenance"]["environments"]["pans_trial_v0"] = 1
    with pytest.raises(RecordError) as refused:
        parse_record(json.dumps(data))
    assert "pans_trial_v0 version 1" in str(refused.value) and "this engine is version 0" in str(refused.value)


def test_a_ladder_of_an_older_build_loads_at_the_same_version_and_names_both_otherwise(tmp_path):
    data = json.loads(ladder_path("sequence_v0").read_text())
    data["provenance"] = _older(data["provenance"])
    path = tmp_path / "ladder.json"
    path.write_text(json.dumps(data))
    assert load_ladder(path, "sequence_v0")["rows"]
    data["environment_version"] = 1
    path.write_text(json.dumps(data))
    with pytest.raises(LadderError) as refused:
        load_ladder(path, "sequence_v0")
    assert "sequence_v1" in str(refused.value) and "sequence_v0" in str(refused.value)

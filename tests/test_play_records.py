"""Game records: written, validated as outside data, replayed exactly, refused when they do not replay."""

from __future__ import annotations

import json

import pytest

import agents
from agents.records import (
    MAX_RECORD_BYTES,
    Record,
    RecordError,
    load_record,
    parse_record,
    record_game,
    replay,
)


def _played(game="sequence_v0", seed=3, config=None):
    config = config or {}
    import envs

    n = len(envs.make(game, **config).possible_agents)
    ids = [f"{game}/random-v0"] * n
    bots = [agents.make(i, seed=k) for k, i in enumerate(ids)]
    result = agents.play_game(game, bots, seed=seed, config=config, record_actions=True)
    return record_game(game, ids, seed, result.actions, config=config, meta={"source": "test"}), result


@pytest.mark.parametrize("game", ["sequence_v0", "pans_trial_v0", "dojo_v0", "wizard_arena_v0"])
def test_record_round_trip_replays_to_the_same_result(game, tmp_path):
    config = {"num_bots": 2, "map_size": 8} if game == "wizard_arena_v0" else {}
    record, result = _played(game, config=config)
    assert record.result["returns"] == [float(r) for r in result.returns]
    path = record.save(tmp_path / "r.json")
    loaded = load_record(path)
    assert loaded.to_dict() == record.to_dict()
    env = replay(loaded)
    assert env.unwrapped.engine_state.returns() == result.returns or record.result["truncated"]
    assert all(m.name == env.action_to_string(m.action) for m in loaded.moves)


def test_edited_action_is_refused_naming_the_first_failing_move():
    record, _ = _played()
    data = record.to_dict()
    # Move 5 becomes another legal-looking id with its matching name: the game diverges there or later.
    bad = json.loads(json.dumps(data))
    bad["moves"][4]["action"] = 348
    bad["moves"][4]["name"] = "pass"
    with pytest.raises(RecordError, match=r"move 5 \(player_0, 'pass'\) does not replay"):
        replay(Record.from_dict(bad))


def test_name_from_another_version_is_refused():
    record, _ = _played()
    data = record.to_dict()
    data["moves"][2]["name"] = "place XX r9c9"
    with pytest.raises(RecordError, match=r"move 3 .*named '.*' in this version"):
        replay(Record.from_dict(data))


def test_wrong_seat_and_changed_result_are_refused():
    record, _ = _played()
    data = record.to_dict()
    data["moves"][0]["seat"] = 1
    with pytest.raises(RecordError, match=r"move 1 .* player_0 is to act"):
        replay(Record.from_dict(data))
    data = record.to_dict()
    data["result"]["returns"] = list(reversed(data["result"]["returns"]))
    with pytest.raises(RecordError, match="differs from the replayed result"):
        replay(Record.from_dict(data))


def test_moves_after_the_end_are_refused():
    record, _ = _played()
    data = record.to_dict()
    data["moves"].append(dict(data["moves"][-1]))
    with pytest.raises(RecordError, match=rf"move {len(data['moves'])} .*already over"):
        replay(Record.from_dict(data))


@pytest.mark.parametrize("change, message", [
    (lambda d: d.update(format="other"), "format"),
    (lambda d: d.update(game="chess_v0"), "unknown"),
    (lambda d: d.update(game_version=7), "version 7"),
    (lambda d: d.update(seed=-1), "seed"),
    (lambda d: d.update(seed="1"), "seed"),
    (lambda d: d.update(seats=["human", "rm -rf /"]), "seats"),
    (lambda d: d["moves"][0].update(action=True), "action"),
    (lambda d: d["moves"][0].update(extra=1), "exactly"),
    (lambda d: d.update(result={"over": True}), "result"),
    (lambda d: d.update(config={"board_file": "/etc/passwd"}), "names a file"),
    (lambda d: d.update(surprise=1), "unknown keys"),
    (lambda d: d.update(meta={"x": "y" * 20000}), "meta"),
])
def test_malformed_records_are_refused_with_the_reason(change, message):
    record, _ = _played()
    data = record.to_dict()
    change(data)
    with pytest.raises(RecordError, match=message):
        Record.from_dict(data)


def test_bad_config_is_refused_at_replay():
    record, _ = _played()
    data = record.to_dict()
    data["config"]["num_teams"] = 9
    with pytest.raises(RecordError, match="not valid for sequence_v0"):
        replay(Record.from_dict(data))


def test_non_json_nan_and_oversized_input_are_refused(tmp_path):
    with pytest.raises(RecordError, match="not valid JSON"):
        parse_record(b"{nope")
    record, _ = _played()
    text = record.to_json().replace('"seed": 3', '"seed": NaN')
    with pytest.raises(RecordError, match="NaN is not allowed"):
        parse_record(text)
    big = tmp_path / "big.json"
    big.write_bytes(b" " * (MAX_RECORD_BYTES + 1))
    with pytest.raises(RecordError, match="larger than"):
        load_record(big)

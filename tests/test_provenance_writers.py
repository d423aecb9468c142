"""Every file the evaluation side writes names what made it: a provenance block that
:func:`envs.provenance.check_provenance` accepts, naming the environments the result used.

Each test runs one writer on a tiny budget and reads back what it wrote. Game records carry their
provenance too, and a version 1 record (written before provenance existed) still loads.
"""

from __future__ import annotations

import json

import pytest

import envs
from agents.records import Record, RecordError, library_version, load_record, record_game, replay
from envs.provenance import check_provenance, source_commit

RANDOM = "sequence_v0/random-v0"
HEURISTIC = "sequence_v0/heuristic-v1"


def _image_provenance(path):
    """The provenance block in a PNG's text chunks or a GIF's comment."""
    from PIL import Image

    with Image.open(path) as im:
        if im.format == "GIF":
            return json.loads(im.info["comment"])
        assert im.text["Software"] == f"tabletop-rl {envs.__version__}"
        return json.loads(im.text["Comment"])


def _checked(block, *games):
    """The block is valid, names exactly ``games`` at their versions, and this checkout's commit."""
    check_provenance(block)
    assert block["environments"] == {g: envs.game_class(g).version for g in games}
    assert block["version"] == envs.__version__
    assert block["commit"] == source_commit()[0]
    return block


def test_evaluate_results_and_records_carry_provenance(tmp_path):
    from training.league import __main__ as evaluate

    out, records = tmp_path / "eval", tmp_path / "records"
    assert evaluate.main(["--agents", "random-v0", "heuristic-v1", "--games", "2", "--workers", "1",
                          "--no-progress", "--out", str(out), "--records", str(records)]) == 0
    _checked(json.loads((out / "results.json").read_text())["provenance"], "sequence_v0")
    _checked(_image_provenance(out / "winrates.png"), "sequence_v0")
    paths = sorted(records.iterdir())
    assert len(paths) == 2
    for path in paths:
        _checked(json.loads(path.read_text())["provenance"], "sequence_v0")
        assert load_record(path).provenance["environments"] == {"sequence_v0": 0}


def test_the_league_summary_carries_provenance(tmp_path, monkeypatch):
    from training.league import __main__ as evaluate

    monkeypatch.setattr(envs, "NAMES", ("dojo_v0",))
    monkeypatch.setattr(evaluate, "league_tables", lambda name, quick, summary, console, config=None: [
        ("dojo_v0", {}, ["dojo_v0/random-v0", "dojo_v0/heuristic-v1"], None)])
    assert evaluate.main(["--all", "--games", "1", "--workers", "1", "--no-progress", "--out", str(tmp_path)]) == 0
    summary = json.loads((tmp_path / "summary.json").read_text())
    _checked(summary["provenance"], "dojo_v0")
    _checked(json.loads((tmp_path / "dojo_v0" / "results.json").read_text())["provenance"], "dojo_v0")


def test_simulate_json_carries_provenance(tmp_path):
    from tools import simulate

    path = tmp_path / "sim.json"
    simulate.main(["pans_trial_v0", "--games", "1", "--agents", "random", "--out", str(tmp_path / "sim.png"),
                   "--no-progress", "--max-cycles", "30", "--json", str(path)])
    _checked(json.loads(path.read_text())["provenance"], "pans_trial_v0")
    _checked(_image_provenance(tmp_path / "sim.png"), "pans_trial_v0")


def test_tournament_records_carry_provenance(tmp_path):
    from tools import tournament

    folder = tmp_path / "records"
    tournament.main(["--bot", "ann=heuristic-v1", "--bot", "bob", "--games", "1", "--seed", "2", "--map-size", "8",
                     "--max-cycles", "20", "--plain", "--no-progress", "--records", str(folder)])
    (path,) = folder.iterdir()
    _checked(json.loads(path.read_text())["provenance"], "wizard_arena_v0")


def test_benchmark_reports_carry_provenance(tmp_path):
    from benchmarks import arena_endings
    from benchmarks import run as bench

    bench.main(["--games", "dojo_v0", "--seconds", "0.02", "--repeats", "1", "--out", str(tmp_path / "bench")])
    _checked(json.loads((tmp_path / "bench" / "benchmark.json").read_text())["provenance"], "dojo_v0")
    _checked(_image_provenance(tmp_path / "bench" / "benchmark.png"), "dojo_v0")
    out = tmp_path / "endings.json"
    arena_endings.main(["--fields", "3+3 mixed", "--games", "1", "--max-cycles", "10", "--no-progress-bar",
                        "--out", str(out)])
    _checked(json.loads(out.read_text())["provenance"], "wizard_arena_v0")


def test_replay_pictures_carry_provenance(tmp_path):
    from play.replay import write_gif, write_png

    record = _record()
    _checked(_image_provenance(write_png(record, tmp_path / "final.png")), "sequence_v0")
    _checked(_image_provenance(write_gif(record, tmp_path / "game.gif", max_frames=3)), "sequence_v0")


def test_a_training_curve_and_its_tensorboard_log_carry_provenance(tmp_path):
    from training.report import read_curve, tensorboard_writer, write_curve

    rows = [{"step": 64, "cpu_seconds": 1.0, "win_rate_vs_random-v0": 0.5, "win_low_vs_random-v0": 0.3,
             "win_high_vs_random-v0": 0.7}]
    write_curve(rows, tmp_path, "a title", "dojo_v0")
    block, back = read_curve(tmp_path / "curve.csv")
    _checked(block, "dojo_v0")
    assert back == rows
    _checked(_image_provenance(tmp_path / "curve.png"), "dojo_v0")
    writer = tensorboard_writer(tmp_path / "tb", "dojo_v0")
    writer.add_scalar("x", 1.0, 0)
    writer.close()
    (events,) = (tmp_path / "tb").iterdir()
    assert b"provenance" in events.read_bytes() and envs.__version__.encode() in events.read_bytes()


# ----------------------------------------------------------------------------------------------
# Records: provenance is checked on load; a version 1 record still loads and replays


def _record():
    return record_game("sequence_v0", [RANDOM, RANDOM], 5, _actions(), meta={"source": "test"})


def _actions(n=12):
    import agents

    bots = [agents.make(RANDOM, seed=k) for k in range(2)]
    return agents.play_game("sequence_v0", bots, seed=5, record_actions=True).actions[:n]


def test_a_record_round_trips_its_provenance():
    data = _record().to_dict()
    assert data["format_version"] == 2
    _checked(data["provenance"], "sequence_v0")
    assert Record.from_dict(json.loads(json.dumps(data))).to_dict() == data


def test_a_version_1_record_without_provenance_still_loads_and_replays():
    data = _record().to_dict()
    del data["provenance"]
    data["format_version"] = 1
    record = Record.from_dict(data)
    assert record.provenance is None
    replay(record)
    data["provenance"] = _record().to_dict()["provenance"]  # version 1 has no such key
    with pytest.raises(RecordError, match="unknown keys"):
        Record.from_dict(data)


@pytest.mark.parametrize("change, message", [
    (lambda d: d.pop("provenance"), "must carry 'provenance'"),
    (lambda d: d.update(provenance="0.1.0"), "expected an object"),
    (lambda d: d["provenance"].update(package="other"), "package"),
    (lambda d: d["provenance"].update(commit="not-a-commit"), "commit"),
    (lambda d: d["provenance"].update(environments={"dojo_v0": 0}), "'sequence_v0' at the record's game_version 0"),
    (lambda d: d["provenance"].update(environments={"sequence_v0": 3}), "game_version 0"),
    (lambda d: d.update(format_version=3), "not readable"),
])
def test_a_record_with_bad_provenance_is_refused_naming_it(change, message):
    data = _record().to_dict()
    change(data)
    with pytest.raises(RecordError, match=message):
        Record.from_dict(data)


def test_a_record_that_replays_to_another_position_is_refused():
    """The fingerprint of the final position catches a record whose moves still replay legally but
    end somewhere else (here: another deal, as a rule change to the deal would)."""
    data = _record().to_dict()
    other = record_game("sequence_v0", [RANDOM, RANDOM], 6, [], meta={"source": "test"}).to_dict()
    data["result"]["position"] = other["result"]["position"]
    with pytest.raises(RecordError, match="reach another position than recorded"):
        replay(Record.from_dict(data))


def test_a_source_checkout_without_installed_metadata_records_its_version(monkeypatch):
    # From a source checkout that was never pip-installed there is no package metadata, and
    # pyproject.toml's version is dynamic: the version must come from the code itself.
    import importlib.metadata

    def not_installed(name):
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "version", not_installed)
    assert library_version() == envs.__version__
    data = _record().to_dict()
    assert data["library_version"] == envs.__version__ == data["provenance"]["version"]

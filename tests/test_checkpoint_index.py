"""The checkpoint index: paths stay inside the folder, a malformed index never breaks ``import agents``,
and registering a checkpoint never overwrites one."""

from __future__ import annotations

import json
import warnings

import pytest

import agents
from agents.checkpoint import (
    CheckpointError,
    CheckpointWarning,
    read_index,
    register_checkpoint,
    register_index,
    scan_index,
)
from tests.checkpoint_helpers import entry, probe, write_index, write_small_policy

torch = pytest.importorskip("torch")
torch.set_num_threads(1)


def test_paths_that_leave_the_checkpoint_folder_are_refused_when_the_id_is_used(tmp_path):
    root = tmp_path / "checkpoints"
    write_small_policy(root / "sequence_v0/inpath-good-v1")
    outside = write_small_policy(tmp_path / "outside")
    (root / "sequence_v0/inpath-link-v1").parent.mkdir(parents=True, exist_ok=True)
    (root / "sequence_v0/inpath-link-v1").symlink_to(outside, target_is_directory=True)
    bad = {
        "sequence_v0/inpath-dotdot-v1": ("../../../../etc/passwd", "contains '..'"),
        "sequence_v0/inpath-inner-dotdot-v1": ("sequence_v0/../../outside", "contains '..'"),
        "sequence_v0/inpath-absolute-v1": (str(outside), "is absolute"),
        "sequence_v0/inpath-link-v1": ("sequence_v0/inpath-link-v1", "outside the checkpoint folder"),
        "sequence_v0/inpath-empty-v1": ("", "non-empty relative path"),
        "sequence_v0/inpath-number-v1": (7, "non-empty relative path"),
    }
    entries = [entry(agent_id, path) for agent_id, (path, _) in bad.items()]
    entries.append(entry("sequence_v0/inpath-args-v1", "sequence_v0/inpath-good-v1", args="../../etc/passwd"))
    entries.append(entry("sequence_v0/inpath-good-v1", "sequence_v0/inpath-good-v1"))
    write_index(root, entries)

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # every problem here belongs to an id: nothing to warn about
        ids = register_index(root)
    assert ids == ["sequence_v0/inpath-good-v1"]
    assert "sequence_v0/inpath-good-v1" in agents.available("sequence_v0")
    record = agents.play_game("sequence_v0", [agents.make("sequence_v0/inpath-good-v1", seed=0),
                                              agents.make("sequence_v0/random-v0", seed=1)], seed=2)
    assert record.length > 0
    for agent_id, (_, message) in bad.items():
        with pytest.raises(CheckpointError, match=message):
            agents.make(agent_id)
    with pytest.raises(CheckpointError, match="args '../../etc/passwd' contains '..'"):
        agents.make("sequence_v0/inpath-args-v1")
    with pytest.raises(CheckpointError, match="contains '..'"):
        read_index(root)  # the strict reader names every problem


def test_a_malformed_index_never_breaks_import_and_bad_entries_fail_only_when_used(tmp_path):
    root = tmp_path / "checkpoints"
    write_small_policy(root / "sequence_v0/good-v1")
    write_small_policy(root / "pans_trial_v0/good-v1", game="pans_trial_v0")
    good = entry("sequence_v0/good-v1", "sequence_v0/good-v1")
    no_config = {k: v for k, v in entry("sequence_v0/noconfig-v1", "sequence_v0/good-v1").items() if k != "config"}
    write_index(root, [
        "sequence_v0/string-v1",
        no_config,
        entry("sequence_v0/format-v1", "sequence_v0/good-v1", format="sb3-zip"),
        entry("sequence_v0/twice-v1", "sequence_v0/good-v1"),
        entry("sequence_v0/twice-v1", "sequence_v0/good-v1"),
        {**entry("sequence_v0/badconfig-v1", "sequence_v0/good-v1"), "config": {"num_teams": 9}},
        {**entry("sequence_v0/othergame-v1", "pans_trial_v0/good-v1")},
        {**entry("sequence_v0/config-list-v1", "sequence_v0/good-v1"), "config": [1, 2]},
        {**entry("sequence_v0/heuristic-v1", "sequence_v0/good-v1")},
        {"id": "not an id", "game": "sequence_v0"},
        good,
    ])
    used = ["sequence_v0/good-v1", "sequence_v0/noconfig-v1", "sequence_v0/format-v1", "sequence_v0/twice-v1",
            "sequence_v0/badconfig-v1", "sequence_v0/othergame-v1", "sequence_v0/config-list-v1"]
    result = probe(root, used)
    outcome = result["ids"]
    assert outcome["sequence_v0/good-v1"]["ok"]
    assert "sequence_v0/good-v1" in result["available"] and "sequence_v0/heuristic-v1" in result["available"]
    expected = {
        "sequence_v0/noconfig-v1": "lacks ['config']",
        "sequence_v0/format-v1": "format 'sb3-zip' is not loaded",
        "sequence_v0/twice-v1": "listed more than once",
        "sequence_v0/badconfig-v1": "num_teams",
        "sequence_v0/othergame-v1": "holds a policy for 'pans_trial_v0'",
        "sequence_v0/config-list-v1": "config must be a JSON object",
    }
    for agent_id, message in expected.items():
        assert outcome[agent_id]["error"] == "CheckpointError", (agent_id, outcome[agent_id])
        assert message in outcome[agent_id]["message"], (agent_id, outcome[agent_id])
    # problems that belong to no usable id are reported as warnings at import, never raised
    warned = "\n".join(result["warnings"])
    assert "'sequence_v0/string-v1'" in warned and "must be a JSON object" in warned
    assert "'not an id'" in warned
    assert "sequence_v0/heuristic-v1" in warned and "already registered" in warned


@pytest.mark.parametrize("text, message", [
    ("{not json", "not valid JSON"),
    ('["a list"]', "must hold a JSON object"),
    ('{"checkpoints": "nope"}', "must hold a JSON object"),
    (b"\xff\xfe binary", "not valid JSON"),
])
def test_an_index_that_is_not_an_index_leaves_every_other_agent_usable(tmp_path, text, message):
    root = tmp_path / "checkpoints"
    root.mkdir()
    (root / "index.json").write_bytes(text if isinstance(text, bytes) else text.encode())
    good, bad, loose = scan_index(root)
    assert (good, bad) == ([], {}) and message in loose[0]
    with pytest.raises(CheckpointError, match=message):
        read_index(root)
    with pytest.warns(CheckpointWarning, match=message):
        assert register_index(root) == []


def test_import_agents_survives_an_index_that_is_not_json(tmp_path):
    root = tmp_path / "checkpoints"
    root.mkdir()
    (root / "index.json").write_text("{not json")
    result = probe(root, ["sequence_v0/heuristic-v1"])
    assert result["ids"]["sequence_v0/heuristic-v1"]["ok"]
    assert any("not valid JSON" in w for w in result["warnings"])
    assert "sequence_v0/ppo-v1" not in result["available"]


def test_register_checkpoint_copies_the_policy_and_refuses_an_existing_id(tmp_path):
    root = tmp_path / "checkpoints"
    run = write_small_policy(tmp_path / "run")
    (run / "eval.json").write_text(json.dumps({"checkpoint_id": "sequence_v0/reg-v1"}))
    new = register_checkpoint("sequence_v0/reg-v1", run, description="test", folder=root)
    assert new["path"] == "sequence_v0/reg-v1" and new["format"] == "policy" and new["eval"].endswith("eval.json")
    assert [e["id"] for e in read_index(root)] == ["sequence_v0/reg-v1"]
    assert (root / "sequence_v0/reg-v1/policy.safetensors").read_bytes() == (run / "policy.safetensors").read_bytes()
    before = (root / "index.json").read_text()
    with pytest.raises(CheckpointError, match="already exists"):
        register_checkpoint("sequence_v0/reg-v1", write_small_policy(tmp_path / "run2", seed=1),
                            description="retrained", folder=root)
    with pytest.raises(CheckpointError, match="already exists"):  # a built-in agent's id
        register_checkpoint("sequence_v0/heuristic-v1", run, description="x", folder=root)
    assert (root / "index.json").read_text() == before
    assert (root / "sequence_v0/reg-v1/policy.safetensors").read_bytes() == (run / "policy.safetensors").read_bytes()
    # a folder already in the way is not overwritten either
    (root / "sequence_v0/reg-v2").mkdir()
    with pytest.raises(CheckpointError, match="exists already"):
        register_checkpoint("sequence_v0/reg-v2", run, description="x", folder=root)
    with pytest.raises(CheckpointError, match="for 'sequence_v0'"):
        register_checkpoint("pans_trial_v0/reg-v1", run, description="x", folder=root)
    # a malformed index is reported, never rewritten
    (root / "index.json").write_text("{broken")
    with pytest.raises(CheckpointError, match="not valid JSON"):
        register_checkpoint("sequence_v0/reg-v3", run, description="x", folder=root)
    assert (root / "index.json").read_text() == "{broken"


REGISTER_SCRIPT = """
import sys
from agents.checkpoint import register_checkpoint
register_checkpoint(sys.argv[1], sys.argv[2], description="concurrent", folder=sys.argv[3])
"""


def _register_in_a_process(agent_id, run, root):
    import subprocess
    import sys

    from tests.checkpoint_helpers import REPO

    return subprocess.Popen([sys.executable, "-c", REGISTER_SCRIPT, agent_id, str(run), str(root)], cwd=REPO,
                            stderr=subprocess.PIPE, text=True)


def test_registering_waits_for_another_registration_into_the_same_folder(tmp_path):
    import time

    from agents.checkpoint import index_lock

    root = tmp_path / "checkpoints"
    root.mkdir()
    run = write_small_policy(tmp_path / "run")
    with index_lock(root):  # as if another process were between reading and rewriting the index
        proc = _register_in_a_process("sequence_v0/wait-v1", run, root)
        deadline = time.monotonic() + 8.0  # without the lock the index is written within a few seconds
        while time.monotonic() < deadline:
            assert proc.poll() is None and not (root / "index.json").exists()
            time.sleep(0.2)
    assert proc.wait(timeout=120) == 0, proc.stderr.read()
    assert [e["id"] for e in read_index(root)] == ["sequence_v0/wait-v1"]


def test_registrations_from_several_processes_at_once_all_stay_listed(tmp_path):
    root = tmp_path / "checkpoints"
    root.mkdir()
    run = write_small_policy(tmp_path / "run")
    ids = [f"sequence_v0/many{k}-v1" for k in range(4)]
    procs = [_register_in_a_process(i, run, root) for i in ids]
    for proc in procs:
        assert proc.wait(timeout=120) == 0, proc.stderr.read()
    assert [e["id"] for e in read_index(root)] == sorted(ids)

"""Hostile checkpoint files: loading refuses them with CheckpointError and never runs code from them."""

from __future__ import annotations

import json
import pickle
import re
import shutil
import struct

import pytest

import envs

from agents.checkpoint import CheckpointError, PolicyAgent
from agents.policy_io import SPEC_FILE, WEIGHTS_FILE
from tests.checkpoint_helpers import (
    REPO,
    CodeOnUnpickle,
    entry,
    probe,
    write_index,
    write_malicious_sb3_zip,
    write_small_policy,
)

torch = pytest.importorskip("torch")
torch.set_num_threads(1)


def test_the_payload_used_below_really_runs_code_when_unpickled(tmp_path):
    """Guards the other tests: their payload is live, so a missing marker means nothing unpickled it."""
    control = tmp_path / "control-marker"
    payload = write_malicious_sb3_zip(tmp_path / "model.zip", control)
    assert not control.exists()
    pickle.loads(payload)
    assert control.exists()


def _hostile_folder(tmp_path, marker):
    """A checkpoint folder whose index lists one good policy and many hostile ones."""
    root = tmp_path / "checkpoints"
    entries = []
    # SB3 zips whose pickled items write the marker: in the old index format, and behind a "policy" entry
    write_malicious_sb3_zip(root / "sequence_v0/ppo-v1/model.zip", marker)
    entries.append({"id": "sequence_v0/ppo-v1", "game": "sequence_v0", "config": {},
                    "path": "sequence_v0/ppo-v1/model.zip"})
    write_malicious_sb3_zip(root / "sequence_v0/zip-v1/model.zip", marker)
    entries.append(entry("sequence_v0/zip-v1", "sequence_v0/zip-v1"))
    entries.append(entry("sequence_v0/zipfile-v1", "sequence_v0/zip-v1/model.zip"))
    # policy.json naming code instead of an architecture
    for name, change in {
        "arch-v1": {"arch": "builtins.exec"},
        "kwargs-v1": {"arch_kwargs": {"obs_dim": 710, "hidden": [8], "num_actions": 349, "__class__": "os.system"}},
        "format-v1": {"format": "pickle"},
        "shape-v1": {"observation_shape": [10**9, 10**9]},
        "nan-v1": {"num_actions": float("nan")},
        "huge-v1": {"arch_kwargs": {"obs_dim": 710, "hidden": [1 << 30, 1 << 30], "num_actions": 349}},
        "negative-v1": {"arch_kwargs": {"obs_dim": 710, "hidden": [-5], "num_actions": 349}},
    }.items():
        folder = write_small_policy(root / "sequence_v0" / name)
        spec = json.loads((folder / SPEC_FILE).read_text())
        spec.update(change)
        (folder / SPEC_FILE).write_text(json.dumps(spec))
        entries.append(entry(f"sequence_v0/{name}", f"sequence_v0/{name}"))
    # weights that are a pickle, a lying safetensors header, extra tensors, NaN weights
    folder = write_small_policy(root / "sequence_v0/pickled-v1")
    (folder / WEIGHTS_FILE).write_bytes(pickle.dumps(CodeOnUnpickle(marker)))
    entries.append(entry("sequence_v0/pickled-v1", "sequence_v0/pickled-v1"))
    folder = write_small_policy(root / "sequence_v0/header-v1")
    header = json.dumps({"head.bias": {"dtype": "F32", "shape": [10**12], "data_offsets": [0, 4 * 10**12]}}).encode()
    (folder / WEIGHTS_FILE).write_bytes(struct.pack("<Q", len(header)) + header + b"\0" * 64)
    entries.append(entry("sequence_v0/header-v1", "sequence_v0/header-v1"))
    from safetensors.torch import load_file, save_file

    folder = write_small_policy(root / "sequence_v0/extra-v1")
    tensors = load_file(str(folder / WEIGHTS_FILE))
    save_file({**tensors, "exec": torch.zeros(3)}, str(folder / WEIGHTS_FILE))
    entries.append(entry("sequence_v0/extra-v1", "sequence_v0/extra-v1"))
    folder = write_small_policy(root / "sequence_v0/nanweights-v1")
    tensors = load_file(str(folder / WEIGHTS_FILE))
    tensors["head.bias"][0] = float("nan")
    save_file(tensors, str(folder / WEIGHTS_FILE))
    entries.append(entry("sequence_v0/nanweights-v1", "sequence_v0/nanweights-v1"))
    # a policy file that is a symlink to a file outside the checkpoint folder
    outside = write_small_policy(tmp_path / "elsewhere")
    folder = root / "sequence_v0/link-v1"
    folder.mkdir(parents=True)
    (folder / SPEC_FILE).symlink_to(outside / SPEC_FILE)
    (folder / WEIGHTS_FILE).symlink_to(outside / WEIGHTS_FILE)
    entries.append(entry("sequence_v0/link-v1", "sequence_v0/link-v1"))
    # and one good policy, proving the folder is really read
    write_small_policy(root / "sequence_v0/good-v1")
    entries.append(entry("sequence_v0/good-v1", "sequence_v0/good-v1"))
    write_index(root, entries)
    return root, [e["id"] for e in entries]


def test_hostile_checkpoints_raise_checkpoint_error_and_run_nothing(tmp_path):
    marker = tmp_path / "marker"
    root, ids = _hostile_folder(tmp_path, marker)
    result = probe(root, ids)
    outcome = result["ids"]
    assert outcome["sequence_v0/good-v1"]["ok"] and outcome["sequence_v0/good-v1"]["length"] > 0
    hostile = [i for i in ids if i != "sequence_v0/good-v1"]
    for agent_id in hostile:
        assert outcome[agent_id]["error"] == "CheckpointError", (agent_id, outcome[agent_id])
    assert not marker.exists(), "code stored in a checkpoint ran"
    # the messages say what was wrong
    assert "Stable-Baselines3 zips are refused" in outcome["sequence_v0/ppo-v1"]["message"]
    assert "holds no policy.json" in outcome["sequence_v0/zip-v1"]["message"]
    assert "architecture 'builtins.exec' is unknown" in outcome["sequence_v0/arch-v1"]["message"]
    assert "arch_kwargs do not fit" in outcome["sequence_v0/kwargs-v1"]["message"]
    assert "not a valid safetensors file" in outcome["sequence_v0/pickled-v1"]["message"]
    assert "a network of 1152922643846922589 values" in outcome["sequence_v0/huge-v1"]["message"]
    assert "arch_kwargs do not fit" in outcome["sequence_v0/negative-v1"]["message"]
    assert "unexpected tensors ['exec']" in outcome["sequence_v0/extra-v1"]["message"]
    assert "NaN" in outcome["sequence_v0/nanweights-v1"]["message"]
    assert "outside the checkpoint folder" in outcome["sequence_v0/link-v1"]["message"]
    # the shipped id is not shadowed silently: the hostile entry with that id is refused, not loaded
    assert "sequence_v0/good-v1" in result["available"]


def test_policy_agent_refuses_a_folder_holding_only_an_sb3_zip(tmp_path):
    marker = tmp_path / "marker"
    write_malicious_sb3_zip(tmp_path / "policy" / "model.zip", marker)
    bot = PolicyAgent("sequence_v0", path=tmp_path / "policy")
    with pytest.raises(CheckpointError, match="does not exist"):
        bot.reset(0, envs.make_game("sequence_v0"))
    assert not marker.exists()


def test_the_conversion_tool_reads_an_sb3_zip_without_unpickling_it(tmp_path):
    from training.sb3.convert import convert

    marker = tmp_path / "marker"
    zip_path = tmp_path / "model.zip"
    write_malicious_sb3_zip(zip_path, marker)
    with pytest.raises(CheckpointError, match="pickled"):  # policy_kwargs are pickled: not decoded
        convert(zip_path, tmp_path / "out", "sequence_v0", {})
    with pytest.raises(CheckpointError, match="not a plain tensor file"):  # torch's weights_only refuses
        convert(zip_path, tmp_path / "out", "sequence_v0", {}, activation="tanh")
    assert not marker.exists()
    assert not (tmp_path / "out" / SPEC_FILE).exists()


def test_no_library_code_loads_sb3_zips():
    """Only the explicit conversion tool (its opt-in --verify) and the trainer touch MaskablePPO."""
    packages = ("agents", "envs", "training", "tools", "play", "benchmarks")
    users = sorted(
        str(p.relative_to(REPO))
        for package in packages
        for p in (REPO / package).glob("**/*.py")
        if re.search(r"\b(MaskablePPO|PPO|model_class)\.load\(", p.read_text())
    )
    assert users == ["training/sb3/convert.py"], users


def test_a_converted_policy_round_trips_through_the_conversion_tool(tmp_path):
    """A real (benign) SB3 model converts and then plays exactly as the original, without a zip in the library."""
    from sb3_contrib import MaskablePPO

    import agents
    from training.sb3.convert import actor_of, convert
    from training.sb3.selfplay import SelfPlayEnv

    env = SelfPlayEnv("sequence_v0", {}, opponent_pool=[lambda: agents.make("sequence_v0/random-v0", seed=0)], seed=0)
    model = MaskablePPO("MlpPolicy", env, policy_kwargs={"net_arch": [16]}, seed=0, device="cpu")
    model.save(tmp_path / "model.zip")
    convert(tmp_path / "model.zip", tmp_path / "out", "sequence_v0", {})
    bot = PolicyAgent("sequence_v0", path=tmp_path / "out")
    live, _ = actor_of(model)
    obs, _ = env.reset()
    for _ in range(20):
        mask = env.action_masks()
        theirs = int(model.predict(obs, action_masks=mask, deterministic=True)[0])
        assert bot.act({"observation": obs, "action_mask": mask.astype("int8")}, {}) == theirs
        assert PolicyAgent("sequence_v0", model=live).act({"observation": obs, "action_mask": mask}, {}) == theirs
        obs, _, term, trunc, _ = env.step(theirs)
        if term or trunc:
            obs, _ = env.reset()
    shutil.rmtree(tmp_path / "out")

"""Every command answers a damaged file the same way: one line on standard error naming the file and
what is wrong, exit status 2, no traceback (agents.errors.run_command).

The damaged files: a checkpoint whose weights are cut in half (reached by id through
TABLETOP_CHECKPOINTS, and as a policy folder's path), a ladder file cut short, a game record and a
saved session that are not JSON.
"""

from __future__ import annotations

import json
import os
import pathlib
import shutil
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
IDS = ("sequence_v0/ppo-v4", "wizard_arena_v0/ppo-v4")


@pytest.fixture(scope="module")
def damaged(tmp_path_factory) -> pathlib.Path:
    """A checkpoint folder of two shipped checkpoints with their weights cut in half, a ladder folder
    with a cut ladder file, a record and a saved session that are not JSON."""
    root = tmp_path_factory.mktemp("damaged")
    index = json.loads((ROOT / "checkpoints" / "index.json").read_text())
    entries = []
    for entry in index["checkpoints"]:
        if entry["id"] in IDS:
            shutil.copytree(ROOT / "checkpoints" / entry["path"], root / "checkpoints" / entry["path"])
            weights = root / "checkpoints" / entry["path"] / "policy.safetensors"
            weights.write_bytes(weights.read_bytes()[: weights.stat().st_size // 2])
            entries.append({k: v for k, v in entry.items() if k != "superseded_by"})
    (root / "checkpoints" / "index.json").write_text(json.dumps({"checkpoints": entries}))
    (root / "ladders").mkdir()
    for path in (ROOT / "agents" / "ladders").glob("*.json"):
        (root / "ladders" / path.name).write_bytes(path.read_bytes())
    cut = root / "ladders" / "sequence_v0.json"
    cut.write_text(cut.read_text()[:500])
    # a short training run, then two copies with a damaged checkpoint
    subprocess.run([sys.executable, "-m", "training.ppo", "--game", "sequence_v0", "--run-dir", str(root / "run"),
                    "--total-timesteps", "64", "--num-envs", "4", "--num-steps", "16", "--eval-games", "2",
                    "--opponents", "random-v0", "--teacher", "", "--no-progress"], cwd=root, check=True,
                   capture_output=True, timeout=300)
    shutil.copytree(root / "run", root / "run-cut")
    weights = root / "run-cut" / "checkpoint" / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[:100])
    shutil.copytree(root / "run", root / "run-json")
    (root / "run-json" / "checkpoint" / "state.json").write_text("{")
    (root / "record.json").write_text("{not json")
    (root / "session.json").write_text("[1, 2")
    return root


WEIGHTS = "sequence_v0/ppo-v4/policy.safetensors is not a valid safetensors file"
COMMANDS = {
    "league": (["training.league", "--game", "sequence_v0", "--agents", "ppo-v4", "random-v0", "--games", "2",
                "--workers", "2", "--no-progress"], WEIGHTS),
    "league by path": (["training.league", "--game", "sequence_v0", "--agents", "{checkpoints}/sequence_v0/ppo-v4",
                        "random-v0", "--games", "2", "--workers", "1", "--no-progress"], WEIGHTS),
    "ladder": (["training.league", "--ladder", "sequence_v0"], "ladders/sequence_v0.json: not valid JSON"),
    "play terminal": (["play", "terminal", "sequence_v0", "--opponents", "sequence_v0/ppo-v4"], WEIGHTS),
    "play watch": (["play", "watch", "sequence_v0", "--agents", "sequence_v0/ppo-v4", "sequence_v0/random-v0",
                    "--pace", "0"], WEIGHTS),
    "play agents": (["play", "agents", "sequence_v0"], "ladders/sequence_v0.json: not valid JSON"),
    "play replay": (["play", "replay", "{root}/record.json"], "record.json"),
    "play resume": (["play", "terminal", "--resume", "{root}/session.json"], "session.json"),
    "ppo evaluate": (["training.ppo", "--evaluate", "{checkpoints}/sequence_v0/ppo-v4"], WEIGHTS),
    "ppo init-policy": (["training.ppo", "--game", "sequence_v0", "--init-policy", "{checkpoints}/sequence_v0/ppo-v4",
                         "--teacher", "", "--no-progress", "--run-dir", "{root}/ppo-run"], WEIGHTS),
    "ppo opponent": (["training.ppo", "--game", "sequence_v0", "--opponents", "ppo-v4", "--teacher", "",
                      "--total-timesteps", "64", "--no-progress", "--run-dir", "{root}/ppo-run2"], WEIGHTS),
    "ppo resume, weights cut": (["training.ppo", "--resume", "{root}/run-cut", "--total-timesteps", "128",
                                 "--no-progress"], "run-cut/checkpoint/model.safetensors is not a valid safetensors"),
    "ppo resume, state not JSON": (["training.ppo", "--resume", "{root}/run-json", "--total-timesteps", "128",
                                    "--no-progress"], "run-json/checkpoint/state.json is not valid JSON"),
    "sb3": (["training.sb3", "--game", "sequence_v0", "--opponents", "ppo-v4", "--total-timesteps", "64",
             "--no-progress", "--out", "{root}/sb3-run"], WEIGHTS),
    "simulate": (["tools.simulate", "sequence_v0", "--agents", "ppo-v4,random-v0", "--games", "2", "--no-progress"],
                 WEIGHTS),
    "tournament": (["tools.tournament", "--bot", "A=wizard_arena_v0/ppo-v4", "--bot", "B=wizard_arena_v0/random-v0",
                    "--games", "2", "--no-progress"], "wizard_arena_v0/ppo-v4/policy.safetensors is not a valid"),
    "move times": (["benchmarks.move_times", "--ids", "sequence_v0/ppo-v4", "--games", "1", "--out",
                    "{root}/times.json"], WEIGHTS),
}


@pytest.mark.parametrize("name", COMMANDS)
def test_a_damaged_file_is_answered_in_one_line_with_exit_status_2(damaged, name):
    argv, needle = COMMANDS[name]
    argv = [a.format(root=damaged, checkpoints=damaged / "checkpoints") for a in argv]
    env = {**os.environ, "TABLETOP_CHECKPOINTS": str(damaged / "checkpoints"),
           "TABLETOP_LADDERS": str(damaged / "ladders"), "PYTHONWARNINGS": "ignore"}
    done = subprocess.run([sys.executable, "-m", *argv], cwd=damaged, env=env, capture_output=True, text=True,
                          timeout=300, stdin=subprocess.DEVNULL)
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert done.returncode == 2, (done.returncode, done.stderr[-3000:])
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr[-3000:]
    prog = "python -m " + argv[0]
    assert lines[0].startswith(f"{prog}: error: ") and needle in lines[0], lines[0]


def test_the_python_api_raises_the_same_text(damaged, monkeypatch):
    import agents
    from agents.checkpoint import register_index
    from agents.policy_io import CheckpointError
    from envs import make_game

    from agents import registry

    for table in ("_REGISTRY", "_DESCRIPTIONS", "_SEARCHES", "_SUPERSEDED_BY"):
        monkeypatch.setattr(registry, table, type(getattr(registry, table))(getattr(registry, table)))
    monkeypatch.setattr(registry, "_REGISTRY", {k: v for k, v in registry._REGISTRY.items() if k not in IDS})
    register_index(damaged / "checkpoints")
    with pytest.raises(CheckpointError, match=WEIGHTS):
        agents.make("sequence_v0/ppo-v4", seed=0).reset(0, make_game("sequence_v0"))


def test_the_play_server_refuses_a_damaged_opponent_with_400_naming_it_and_keeps_serving(damaged, monkeypatch):
    pytest.importorskip("starlette")
    from agents import registry
    from agents.checkpoint import register_index
    from play.web import create_app
    from tests.test_play_server import START, Server, _conn, call

    for table in ("_REGISTRY", "_DESCRIPTIONS", "_SEARCHES", "_SUPERSEDED_BY"):
        monkeypatch.setattr(registry, table, type(getattr(registry, table))(getattr(registry, table)))
    monkeypatch.setattr(registry, "_REGISTRY", {k: v for k, v in registry._REGISTRY.items() if k not in IDS})
    register_index(damaged / "checkpoints")
    with Server(create_app()) as server:
        conn = _conn(server)
        status, body = call(conn, "POST", "/api/sessions", {"game": "sequence_v0", "config": "2p",
                                                             "opponents": "sequence_v0/ppo-v4"})
        assert status == 400 and WEIGHTS in body["error"], body
        status, body = call(conn, "POST", "/api/sessions", START)
        assert status == 200 and body["id"]

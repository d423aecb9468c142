"""Building checkpoint folders for tests: small valid policies, hostile files, and a fresh-process probe."""

from __future__ import annotations

import base64
import io
import json
import os
import pathlib
import pickle
import subprocess
import sys
import zipfile
from typing import Any

import envs

REPO = pathlib.Path(__file__).resolve().parents[1]
GAME = "sequence_v0"


class CodeOnUnpickle:
    """Pickles into a call that writes ``marker`` when the pickle is loaded (an attacker's payload)."""

    def __init__(self, marker: pathlib.Path) -> None:
        self.marker = str(marker)

    def __reduce__(self):
        return (exec, (f"open({self.marker!r}, 'w').write('code from a checkpoint ran')",))


def game_facts(game: str = GAME) -> tuple[dict[str, Any], tuple[int, ...], int]:
    env = envs.make(game, raw=True)
    agent0 = env.possible_agents[0]
    return (
        envs.make_game(game).config,
        tuple(env.observation_space(agent0)["observation"].shape),
        int(env.action_space(agent0).n),
    )


def write_small_policy(folder: pathlib.Path, game: str = GAME, seed: int = 0) -> pathlib.Path:
    """A tiny valid ``"mlp"`` policy for ``game`` (default config) in ``folder``."""
    import torch

    from agents.architectures import build_architecture
    from agents.policy_io import save_policy

    torch.manual_seed(seed)
    config, shape, n = game_facts(game)
    kwargs = {"obs_dim": int(shape[0]), "hidden": [8], "num_actions": n, "activation": "tanh"}
    module = build_architecture("mlp", **kwargs)
    return save_policy(folder, module, arch="mlp", arch_kwargs=kwargs, game=game, config=config,
                       observation_shape=shape, num_actions=n)


def write_malicious_sb3_zip(path: pathlib.Path, marker: pathlib.Path) -> bytes:
    """An SB3-style ``model.zip`` whose pickled items run code when unpickled; returns one payload."""
    import torch

    payload = pickle.dumps(CodeOnUnpickle(marker))
    serialized = {":type:": "<class 'abc.ABCMeta'>", ":serialized:": base64.b64encode(payload).decode()}
    data = {
        "policy_class": serialized,
        "policy_kwargs": serialized,
        "observation_space": serialized,
        "action_space": serialized,
        "n_envs": 1,
    }
    weights = io.BytesIO()
    torch.save({"mlp_extractor.policy_net.0.weight": CodeOnUnpickle(marker)}, weights)
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("data", json.dumps(data))
        archive.writestr("policy.pth", weights.getvalue())
        archive.writestr("pytorch_variables.pth", weights.getvalue())
        archive.writestr("_stable_baselines3_version", "2.3.0")
    return payload


def write_index(folder: pathlib.Path, entries: Any) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "index.json").write_text(json.dumps({"checkpoints": entries}, indent=1))


def entry(agent_id: str, path: str, **extra: Any) -> dict[str, Any]:
    config, _, _ = game_facts(agent_id.split("/")[0])
    return {"id": agent_id, "game": agent_id.split("/")[0], "config": config, "format": "policy",
            "path": path, "description": "test policy", **extra}


PROBE = r"""
import json, sys, warnings
warnings.simplefilter("always")
with warnings.catch_warnings(record=True) as caught:
    import agents
from agents.checkpoint import CheckpointError
out = {"available": agents.available(), "warnings": [str(w.message) for w in caught], "ids": {}}
for agent_id in json.loads(sys.argv[1]):
    try:
        bot = agents.make(agent_id, seed=0)
        game = agent_id.split("/")[0]
        record = agents.play_game(game, [bot, agents.make(game + "/random-v0", seed=1)], seed=1)
        out["ids"][agent_id] = {"ok": True, "length": record.length}  # the strict env refused no move
    except CheckpointError as exc:
        out["ids"][agent_id] = {"ok": False, "error": "CheckpointError", "message": str(exc)}
    except Exception as exc:
        out["ids"][agent_id] = {"ok": False, "error": type(exc).__name__, "message": str(exc)}
print(json.dumps(out))
"""


def probe(checkpoints: pathlib.Path, ids: list[str]) -> dict[str, Any]:
    """In a fresh Python with ``TABLETOP_CHECKPOINTS=checkpoints``: ``import agents``, make each id
    and play it through a game against random play (on the strict env, which refuses illegal moves).
    Returns what happened (errors by type and message)."""
    env = {**os.environ, "TABLETOP_CHECKPOINTS": str(checkpoints), "PYTHONPATH": str(REPO)}
    done = subprocess.run([sys.executable, "-c", PROBE, json.dumps(ids)], check=False, cwd=checkpoints, env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])

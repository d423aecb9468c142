"""Pins the PPO trainer's behaviour: a seeded tiny run (cloning, then PPO with the teacher term, a
league with snapshots, a resume) must reproduce the metrics of ``tests/golden/ppo_pinned.json``.

Timings are left out (they vary); everything else the run logs is compared. A change to the
algorithm, the seeding or the order of random draws changes these numbers and fails the test. After
an intended change, regenerate with ``python -m tests.test_ppo_pinned`` and say why in the commit.
"""

from __future__ import annotations

import json
import pathlib
import sys

import pytest
import torch

from training import ppo

GOLDEN = pathlib.Path(__file__).parent / "golden" / "ppo_pinned.json"

#: Curve columns that measure time, not behaviour.
TIMING = ("cpu_seconds", "steps_per_cpu_s", "steps_per_wall_s")

RUN = [
    "--game", "dojo_v0", "--seed", "7",
    # the update settings are given, so a change of the defaults leaves the pinned behaviour alone
    "--num-envs", "4", "--num-steps", "16", "--num-minibatches", "2", "--update-epochs", "2", "--learning-rate", "3e-4",
    "--opponents", "random-v0", "self", "--teacher", "heuristic-v1", "--bc-steps", "128",
    "--bc-batches", "4", "--bc-minibatch-size", "32", "--kl-coef", "0.5", "--kl-decay-steps", "256",
    "--snapshot-every", "64", "--snapshot-max", "2",
    "--eval-every", "128", "--eval-games", "4", "--eval-opponents", "random-v0",
    "--checkpoint-every", "128", "--max-actions", "200", "--no-progress",
]


def _rounded(value: object) -> object:
    if isinstance(value, float):
        return float(f"{value:.6g}")
    if isinstance(value, dict):
        return {k: _rounded(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_rounded(v) for v in value]
    return value


def pinned_metrics(tmp: pathlib.Path) -> dict[str, object]:
    """Train 256 steps, resume the run to 448, and return what it logged (no timings)."""
    torch.set_num_threads(1)
    run = tmp / "pinned"
    ppo.main([*RUN, "--run-dir", str(run), "--total-timesteps", "256"])
    ppo.main(["--resume", str(run), "--total-timesteps", "448", "--no-progress"])
    state = json.loads((run / "checkpoint" / "state.json").read_text())
    curve = [
        {k: v for k, v in row.items() if k not in TIMING and not k.endswith("_share")} for row in state["curve"]
    ]
    from safetensors.torch import load_file

    weights = load_file(str(run / "checkpoint" / "model.safetensors"))
    return _rounded(
        {
            "step": state["step"],
            "updates": state["updates"],
            "games_dealt": state["games_dealt"],
            "snapshot_steps": state["snapshot_steps"],
            "curve": curve,
            "weights": {k: [float(v.sum()), float(v.abs().sum())] for k, v in sorted(weights.items())},
        }
    )


def test_a_seeded_tiny_run_reproduces_its_pinned_metrics(tmp_path):
    expected = json.loads(GOLDEN.read_text())
    got = pinned_metrics(tmp_path)
    for key in ("step", "updates", "games_dealt", "snapshot_steps"):
        assert got[key] == expected[key], key
    assert len(got["curve"]) == len(expected["curve"])
    for row, want in zip(got["curve"], expected["curve"]):
        assert row.keys() == want.keys()
        for k in want:
            assert row[k] == pytest.approx(want[k], rel=1e-4, abs=1e-6), (row["step"], k)
    for name, (total, absolute) in expected["weights"].items():
        assert got["weights"][name] == pytest.approx([total, absolute], rel=1e-4, abs=1e-5), name


if __name__ == "__main__":  # regenerate the golden file from the current code
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        GOLDEN.write_text(json.dumps(pinned_metrics(pathlib.Path(tmp)), indent=1) + "\n")
    print(f"wrote {GOLDEN}", file=sys.stderr)

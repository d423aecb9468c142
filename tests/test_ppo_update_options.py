"""training.ppo's speed options for the update (``--compile``, ``--update-dtype bf16``): where the machine
cannot use one, the run goes on without it, says so in one line on stderr, and trains exactly as
without the option; and the reference benchmark's time-to-quality columns."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch

from benchmarks import ppo_compare as pc
from training.ppo import algo
from training.ppo.args import Args, build_parser, parse_args


class _TinyNet(torch.nn.Module):
    def __init__(self, obs: int = 6, actions: int = 4) -> None:
        super().__init__()
        self.pi = torch.nn.Linear(obs, actions)
        self.v = torch.nn.Linear(obs, 1)

    def logits_and_value(self, x):
        return self.pi(x), self.v(x).squeeze(-1)


def _batch(n: int = 32, obs: int = 6, actions: int = 4) -> dict[str, torch.Tensor]:
    rng = np.random.default_rng(0)
    mask = torch.ones(n, actions, dtype=torch.bool)
    mask[:, 0] = torch.from_numpy(rng.random(n) < 0.5)
    return {
        "obs": torch.from_numpy(rng.standard_normal((n, obs)).astype(np.float32)),
        "mask": mask,
        "action": torch.from_numpy(rng.integers(1, actions, n)),
        "logp": torch.full((n,), -float(np.log(actions))),
        "adv": torch.from_numpy(rng.standard_normal(n).astype(np.float32)),
        "ret": torch.from_numpy(rng.standard_normal(n).astype(np.float32)),
        "teacher": torch.full((n,), -1, dtype=torch.long),
    }


def _train(**options: object) -> tuple[dict[str, float], list[torch.Tensor]]:
    """Two updates of a seeded tiny network with ``options`` over the defaults; the stats and the weights."""
    args = dataclasses.replace(Args(), num_envs=4, num_steps=8, num_minibatches=2, update_epochs=2, **options)
    torch.manual_seed(0)
    net = _TinyNet()
    optimizer = torch.optim.Adam(net.parameters(), lr=args.learning_rate, eps=1e-5)
    for _ in range(2):
        stats = algo.ppo_update(net, optimizer, _batch(), args, kl_weight=0.0)
    return stats, [p.detach().clone() for p in net.parameters()]


@pytest.fixture(autouse=True)
def _fresh_warnings(monkeypatch):
    monkeypatch.setattr(algo, "_WARNED", set())
    monkeypatch.setattr(algo, "_COMPILED", algo.weakref.WeakKeyDictionary())


def _same(a: tuple[dict[str, float], list[torch.Tensor]], b: tuple[dict[str, float], list[torch.Tensor]]) -> None:
    assert a[0] == b[0]
    assert all(torch.equal(x, y) for x, y in zip(a[1], b[1]))


def _warnings(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.startswith("warning:")]


def test_bf16_without_native_support_falls_back_to_float32_with_one_warning(monkeypatch, capsys):
    plain = _train()
    monkeypatch.setattr(algo, "bf16_supported", lambda device: False)
    _same(_train(update_dtype="bf16"), plain)
    _same(_train(update_dtype="bf16"), plain)  # a second run in the process says nothing more
    (line,) = _warnings(capsys.readouterr().err)
    assert "--update-dtype bf16 not used" in line and "float32" in line


def test_bf16_where_supported_runs_under_autocast_without_a_warning(monkeypatch, capsys):
    monkeypatch.setattr(algo, "bf16_supported", lambda device: True)
    seen = []
    real = algo.minibatch_terms

    def spy(net, *rest):
        seen.append(torch.is_autocast_enabled("cpu"))
        return real(net, *rest)

    monkeypatch.setattr(algo, "minibatch_terms", spy)
    stats, weights = _train(update_dtype="bf16")
    assert seen and all(seen)
    assert all(np.isfinite(v) for v in stats.values()) and all(torch.isfinite(w).all() for w in weights)
    assert _warnings(capsys.readouterr().err) == []


def test_compile_without_a_working_compiler_runs_uncompiled_with_one_warning(monkeypatch, capsys):
    plain = _train()

    def broken_compile(fn, **kwargs):
        def call(*args):
            raise RuntimeError("InductorError: CppCompileError: C++ compile error\nmany more lines")
        return call

    monkeypatch.setattr(torch, "compile", broken_compile)
    _same(_train(compile=True), plain)
    (line,) = _warnings(capsys.readouterr().err)
    assert "--compile not used" in line and "CppCompileError" in line and "uncompiled" in line


def test_compile_that_cannot_even_start_runs_uncompiled_with_one_warning(monkeypatch, capsys):
    plain = _train()

    def no_compile(fn, **kwargs):
        raise RuntimeError("torch.compile is not supported on this Python")

    monkeypatch.setattr(torch, "compile", no_compile)
    _same(_train(compile=True), plain)
    _same(_train(compile=True), plain)
    (line,) = _warnings(capsys.readouterr().err)
    assert "--compile not used" in line and "not supported" in line


def test_the_options_are_documented_checked_and_may_change_on_resume():
    helps = {a.dest: a.help for a in build_parser()._actions}
    assert "torch.compile" in helps["compile"] and "bfloat16" in helps["update_dtype"]
    with pytest.raises(SystemExit):
        parse_args(["--game", "dojo_v0", "--update-dtype", "fp16"])
    assert parse_args(["--game", "dojo_v0", "--update-dtype", "bf16", "--compile"]).update_dtype == "bf16"
    from training.ppo.args import RESUME_CHANGEABLE

    assert {"compile", "update_dtype"} <= RESUME_CHANGEABLE


def test_the_summary_gives_the_cpu_seconds_to_reach_sb3s_final_and_the_cpu_ratio():
    rows = []
    for seed in (1, 2):
        for k, samples in enumerate((20000, 40000)):
            for variant, win, cpu in (("sb3", (0.5, 0.8), 40.0), ("ppo", (0.85, 0.9), 5.0), ("slow", (0.1, 0.2), 1.0)):
                rows.append({"game": "g", "opponent": "o", "variant": variant, "seed": seed, "samples": samples,
                             "cpu_seconds": cpu * (k + 1), "win_rate": win[k], "win_low": 0, "win_high": 1,
                             "approx_kl": float("nan"), "clipfrac": float("nan")})
    summary = {s["variant"]: s for s in pc.summarize(rows, samples=40000)}
    assert summary["ppo"]["cpu_to_sb3_final"] == 5.0 and summary["ppo"]["samples_to_sb3_final"] == 20000
    assert summary["ppo"]["sb3_cpu_ratio"] == 8.0
    assert summary["sb3"]["cpu_to_sb3_final"] == 80.0 and summary["sb3"]["sb3_cpu_ratio"] == 1.0
    assert summary["slow"]["cpu_to_sb3_final"] == "never"
    table = pc.markdown_table(list(summary.values()))
    assert "training CPU s to SB3's final" in table and "SB3 CPU / this" in table


def test_tasks_select_reference_tasks_and_candidates_run_only_when_named(tmp_path):
    assert pc.parse_tasks("sequence_v0:random-v0, pans_trial_v0:random-v0") == [
        ("sequence_v0", "random-v0"), ("pans_trial_v0", "random-v0")]
    with pytest.raises(SystemExit, match="not a task of the reference study"):
        pc.parse_tasks("sequence_v0:heuristic-v1")
    assert not {v for _, _, v, _, _ in pc.commands("reference", None)} & set(pc.CANDIDATES)
    runs = pc.commands("reference", None, candidates=("ppo-mb4-ep4",))
    argv = next(a for _, _, v, _, a in runs if v == "ppo-mb4-ep4")
    assert argv[argv.index("--num-minibatches") + 1] == "4"

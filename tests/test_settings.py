"""The settings every trainer shares: one declaration, one validation, seeding, the device, the NaN stop."""

from __future__ import annotations

import dataclasses
import itertools
import math
import random

import numpy as np
import pytest

from training import ppo
from training.settings import (
    DEVICES,
    MIN_MINIBATCH,
    NonFiniteLossError,
    Settings,
    SettingsError,
    StepSettings,
    check_finite,
    check_settings,
    minibatch_counts_that_fit,
    resolve_device,
    seed_everything,
)

torch = pytest.importorskip("torch")
torch.set_num_threads(1)


def test_check_finite_names_the_step_and_every_bad_loss():
    check_finite({"policy_loss": 0.5, "value_loss": np.float32(2.0), "entropy": torch.tensor(1.0)}, step=10)
    with pytest.raises(NonFiniteLossError) as caught:
        check_finite({"policy_loss": 0.1, "value_loss": float("nan"), "entropy": torch.tensor(float("inf"))}, 4096)
    error = caught.value
    assert error.step == 4096 and set(error.losses) == {"value_loss", "entropy"}
    assert "step 4096" in str(error) and "value_loss = nan" in str(error) and "entropy = inf" in str(error)
    assert "policy_loss" not in str(error)
    assert isinstance(error, RuntimeError)


def test_resolve_device_on_the_cpu():
    assert resolve_device("cpu") == torch.device("cpu")
    assert resolve_device("auto") == torch.device("cuda" if torch.cuda.is_available() else "cpu")
    with pytest.raises(SettingsError, match=r"--device must be one of \['cpu', 'cuda', 'auto'\], got 'tpu'"):
        resolve_device("tpu")
    if not torch.cuda.is_available():
        with pytest.raises(SettingsError, match="--device cuda: torch sees no CUDA device"):
            resolve_device("cuda")


def test_the_device_is_validated_with_the_other_settings(capsys):
    assert ppo.parse_args(["--device", "auto", "--no-progress"]).device == "auto"
    assert DEVICES == ("cpu", "cuda", "auto")
    with pytest.raises(SystemExit):
        ppo.parse_args(["--device", "gpu"])
    assert "--device must be one of ['cpu', 'cuda', 'auto'], got 'gpu'" in capsys.readouterr().err
    if not torch.cuda.is_available():
        with pytest.raises(SystemExit):
            ppo.parse_args(["--device", "cuda"])
        assert "torch sees no CUDA device" in capsys.readouterr().err


def test_seed_everything_repeats_every_generator():
    def draws():
        return random.random(), float(np.random.rand()), float(torch.rand(()))

    seed_everything(5)
    first = draws()
    seed_everything(5)
    assert draws() == first
    seed_everything(6)
    assert draws() != first
    assert torch.get_num_threads() == 1


def test_the_values_that_fit_split_the_rollout_evenly_into_two_or_more():
    assert minibatch_counts_that_fit(1024) == [1, 2, 4, 8, 16, 32, 64, 128, 256, 512]
    assert minibatch_counts_that_fit(12) == [1, 2, 3, 4, 6]
    assert minibatch_counts_that_fit(1) == []


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["--num-envs", "64", "--num-steps", "16", "--num-minibatches", "34"],
         "--num-minibatches 34 does not split the rollout of num_envs * num_steps = 64 * 16 = 1024 decisions evenly; "
         "values that fit: 1, 2, 4, 8, 16, 32, 64, 128, 256, 512"),
        (["--num-envs", "2", "--num-steps", "3", "--num-minibatches", "6"],
         "would make minibatches of 1 decision(s)"),
        (["--num-envs", "1", "--num-steps", "1", "--num-minibatches", "1"], "cannot make minibatches of 2 or more"),
        (["--max-grad-norm", "0"], "--max-grad-norm must be above 0.0, got 0.0 (the gradient norm is clipped to it"),
        (["--gamma", "1.5"], "--gamma must be above 0.0 and at most 1.0, got 1.5"),
        (["--learning-rate", "nan"], "--learning-rate must be a finite number"),
        (["--update-epochs", "0"], "--update-epochs must be 1 or more, got 0"),
        (["--snapshot-max", "0"], "--snapshot-max must be 1 or more"),
        (["--eval-games", "0"], "--eval-games must be 1 or more"),
        (["--eval-opponents"], "--eval-opponents needs at least one agent kind"),
        (["--opponents"], "--opponents needs at least one kind"),
        (["--opponents", "nobody-v9"], "unknown agent kind 'nobody-v9' in --opponents"),
        (["--eval-opponents", "self"], "'self' is a training opponent only"),
        (["--config", '{"num_teams": 7}'], "--config: "),
    ],
)
def test_bad_settings_are_refused_before_any_work_with_the_values_that_fit(argv, needle, capsys):
    with pytest.raises(SystemExit) as caught:
        ppo.parse_args(argv)
    assert caught.value.code == 2
    assert needle in capsys.readouterr().err


def _tiny(cls: type[Settings], envs_: int, steps: int, minibatches: int) -> Settings:
    return cls(game="pans_trial_v0", num_envs=envs_, num_steps=steps, num_minibatches=minibatches)


TINY = list(itertools.product(range(1, 4), range(1, 5), range(1, 14)))


def test_every_accepted_minibatch_split_holds_two_decisions_or_more_in_equal_minibatches():
    accepted = 0
    for envs_, steps, minibatches in TINY:
        args = _tiny(ppo.Args, envs_, steps, minibatches)
        rollout = envs_ * steps
        try:
            check_settings(args)
        except SettingsError as exc:
            assert "--num-minibatches" in str(exc) or "cannot make minibatches" in str(exc)
            assert rollout % minibatches or rollout // minibatches < MIN_MINIBATCH
            continue
        accepted += 1
        assert rollout % minibatches == 0 and rollout // minibatches >= MIN_MINIBATCH
    assert accepted > 20


class _TinyNet(torch.nn.Module):
    def __init__(self, obs: int, actions: int) -> None:
        super().__init__()
        self.pi = torch.nn.Linear(obs, actions)
        self.v = torch.nn.Linear(obs, 1)

    def logits_and_value(self, x):
        return self.pi(x), self.v(x).squeeze(-1)


@pytest.mark.parametrize("advantage", ["equal", "random"])
def test_no_split_the_parser_accepts_makes_a_nan_loss(advantage):
    """training.ppo's update at every accepted tiny rollout split: every loss and weight stays finite,
    even when every advantage in the rollout is the same (a zero standard deviation)."""
    from training.ppo.algo import ppo_update

    obs_dim, actions = 6, 4
    rng = np.random.default_rng(0)
    for envs_, steps, minibatches in TINY:
        args = _tiny(ppo.Args, envs_, steps, minibatches)
        try:
            check_settings(args)
        except SettingsError:
            continue
        n = envs_ * steps
        torch.manual_seed(0)
        net = _TinyNet(obs_dim, actions)
        optimizer = torch.optim.Adam(net.parameters(), lr=args.learning_rate)
        mask = torch.ones(n, actions, dtype=torch.bool)
        mask[:, 0] = torch.from_numpy(rng.random(n) < 0.5)  # some actions illegal
        batch = {
            "obs": torch.from_numpy(rng.standard_normal((n, obs_dim)).astype(np.float32)),
            "mask": mask,
            "action": torch.full((n,), 1, dtype=torch.long),
            "logp": torch.full((n,), -math.log(actions)),
            "adv": torch.ones(n) if advantage == "equal" else torch.from_numpy(rng.standard_normal(n).astype(np.float32)),
            "ret": torch.ones(n),
            "teacher": torch.full((n,), -1, dtype=torch.long),
        }
        stats = ppo_update(net, optimizer, batch, args, kl_weight=0.0)
        check_finite(stats, step=n)
        assert all(torch.isfinite(p).all() for p in net.parameters()), (envs_, steps, minibatches)


def test_one_declaration_of_the_shared_settings():
    """The trainers' Args are built on Settings: a shared name is declared there, once."""
    shared = {f.name for f in dataclasses.fields(Settings)}
    assert {"learning_rate", "gamma", "gae_lambda", "clip_coef", "ent_coef", "vf_coef", "max_grad_norm",
            "update_epochs", "num_minibatches", "norm_adv", "seed", "opponents", "snapshot_every",
            "snapshot_max"} <= shared
    assert issubclass(ppo.Args, StepSettings) and "device" in {f.name for f in dataclasses.fields(ppo.Args)}


def _trainer_args():
    from training import rllib, sb3

    tiny = [(sb3.Args, dict(num_envs=e, num_steps=s, num_minibatches=m)) for e, s, m in TINY]
    tiny += [(rllib.Args, dict(train_batch=b, num_minibatches=m)) for b in range(1, 13) for m in range(1, 14)]
    return [cls(game="pans_trial_v0", **kw) for cls, kw in tiny]


def test_every_trainer_refuses_or_accepts_the_same_splits():
    """The SB3 and RLlib trainers take the same validation: an accepted split is even, two decisions or more."""
    accepted = 0
    for args in _trainer_args():
        rollout = args.rollout_size()
        try:
            check_settings(args)
        except SettingsError as exc:
            assert "--num-minibatches" in str(exc) or "cannot make minibatches" in str(exc)
            assert rollout % args.num_minibatches or rollout // args.num_minibatches < MIN_MINIBATCH
            continue
        accepted += 1
        assert rollout % args.num_minibatches == 0 and rollout // args.num_minibatches >= MIN_MINIBATCH
    assert accepted > 40


def test_the_library_names_cover_the_shared_update_settings():
    from training.settings import LIBRARY_NAMES, library_kwargs

    args = ppo.Args(gae_lambda=0.9, clip_coef=0.1)
    assert library_kwargs(args, "sb3")["gae_lambda"] == 0.9 and library_kwargs(args, "sb3")["clip_range"] == 0.1
    assert library_kwargs(args, "rllib")["lambda_"] == 0.9 and "normalize_advantage" not in library_kwargs(args, "rllib")
    assert set(LIBRARY_NAMES) <= {f.name for f in dataclasses.fields(Settings)}

"""The RLlib trainer's options and its stop at a non-finite loss: plain Python, tested without Ray."""

from __future__ import annotations

import math

import pytest

from training import rllib
from training.rllib import env as rllib_env
from training.settings import SELF, NonFiniteLossError


def test_help_names_every_option_with_its_meaning_and_default(capsys):
    with pytest.raises(SystemExit):
        rllib.parse_args(["--help"])
    text = capsys.readouterr().out
    blocks = text.split("options:", 1)[1].split("\n  --")[1:]
    for block in blocks:
        words = " ".join(block.split())
        assert "(default:" in words and len(words.split()) > 4, block
    offered = {flag for action in rllib.build_parser()._actions for flag in action.option_strings}
    assert not offered & set(rllib.REMOVED)  # a flag that is gone is refused, never offered


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["--game", "chess_v0"], "is not a game"),
        (["--config", "[1]"], "must be a JSON object"),
        (["--game", "sequence_v0", "--config", '{"num_teams": 7}'], "num_teams"),
        (["--opponents", "nobody-v9"], "unknown agent kind 'nobody-v9'"),
        (["--iterations", "0"], "--iterations must be 1 or more"),
        (["--register", "dojo_v0/x-v1"], "--register takes a new versioned id like sequence_v0/"),
        (["--train-batch", "200", "--num-minibatches", "3"],
         "--num-minibatches 3 does not split the rollout of --train-batch = 200 decisions evenly; values that fit: "
         "1, 2, 4, 5, 8, 10"),
        (["--max-grad-norm", "0"], "--max-grad-norm must be above 0.0"),
        (["--no-norm-adv"], "cannot turn it off"),
        (["--minibatch", "64"], "--minibatch is gone: give --num-minibatches"),
        (["--lr", "0.001"], "--lr is gone: give --learning-rate"),
        (["--epochs", "2"], "--epochs is gone: give --update-epochs"),
        (["--entropy", "0.1"], "--entropy is gone: give --ent-coef"),
        (["--snapshot-slots", "2"], "--snapshot-slots is gone: give --snapshot-max"),
        (["--opponents", "random-v0", "snapshot"], "the opponent kind 'snapshot' in --opponents is gone: use 'self'"),
        (["--gpus-per-learner", "1"], "needs --learners >= 1"),
    ],
)
def test_bad_options_are_refused_with_the_allowed_values(argv, expected, capsys):
    with pytest.raises(SystemExit):
        rllib.parse_args(argv)
    assert expected in capsys.readouterr().err


def test_one_spelling_of_self_play_and_the_shared_names():
    args = rllib.parse_args(["--learning-rate", "0.001", "--opponents", "random-v0", "self", "--snapshot-max", "2"])
    assert (args.learning_rate, args.opponents, args.snapshot_max) == (0.001, ["random-v0", SELF], 2)
    assert rllib.rule_based(args) == ["random-v0"]
    # the shared defaults: the same as the other trainers' where the meaning is the same
    fresh = rllib.parse_args([])
    assert (fresh.gae_lambda, fresh.clip_coef, fresh.vf_coef, fresh.max_grad_norm) == (0.95, 0.2, 0.5, 0.5)


def test_the_adapter_takes_the_self_kind_and_refuses_the_old_one():
    assert rllib_env.check_opponents("dojo_v0", ["random-v0", SELF]) == ["random-v0", SELF]
    with pytest.raises(ValueError, match="unknown opponent 'snapshot' for dojo_v0; use 'self'"):
        rllib_env.check_opponents("dojo_v0", ["snapshot"])
    with pytest.raises(ValueError, match="unknown opponent 'nobody-v9'"):
        rllib_env.check_opponents("dojo_v0", ["nobody-v9"])


class _FakeAlgo:
    """What ``train`` reads of an RLlib algorithm: results with the learner's losses."""

    def __init__(self, losses):
        self.losses = losses
        self.iteration = 0

    def train(self):
        self.iteration += 1
        return {
            "env_runners": {"num_module_steps_sampled_lifetime": {rllib_env.LEARNER: 100 * self.iteration},
                            "num_env_steps_sampled_lifetime": 150 * self.iteration},
            "learners": {rllib_env.LEARNER: self.losses[self.iteration - 1]},
        }


def test_training_stops_at_a_non_finite_loss_naming_the_step_and_the_loss():
    args = rllib.parse_args(["--iterations", "3", "--no-progress", "--opponents", "random-v0"])
    good = {"total_loss": 0.3, "policy_loss": -0.1, "vf_loss": 0.4, "entropy": 1.2}
    assert len(rllib.train(_FakeAlgo([good] * 3), args)) == 3
    with pytest.raises(NonFiniteLossError, match="step 200: vf_loss = nan") as caught:
        rllib.train(_FakeAlgo([good, {**good, "vf_loss": math.nan}, good]), args)
    assert caught.value.step == 200

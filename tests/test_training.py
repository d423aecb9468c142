"""The SB3 trainer with a tiny budget, the self-play wrapper, and checkpoint loading by id."""

from __future__ import annotations

import json
import pathlib

import numpy as np
import pytest

import agents
import envs
from envs.core import IllegalActionError
from agents.checkpoint import CheckpointError, PolicyAgent, read_index
from training import sb3
from training.report import validate_report
from training.sb3.selfplay import SelfPlayEnv
from training.settings import NonFiniteLossError

torch = pytest.importorskip("torch")
torch.set_num_threads(1)


def random_pool(game):
    return [lambda: agents.make(f"{game}/random-v0", seed=0)]


def test_selfplay_env_only_returns_control_on_the_learners_turn():
    env = SelfPlayEnv("sequence_v0", {"num_teams": 3}, opponent_pool=random_pool("sequence_v0"), seed=3)
    seats = set()
    for _episode in range(4):
        obs, info = env.reset()
        seats.add(info["seat"])
        done = False
        while not done:
            assert env.aec.agent_selection == env.learner
            mask = env.action_masks()
            assert obs.shape == env.observation_space.shape and mask.any()
            obs, reward, term, trunc, info = env.step(int(np.flatnonzero(mask)[0]))
            done = term or trunc
        assert reward == env.aec.cumulative_reward(env.learner)
        assert reward in (-1.0, 0.0, 1.0)
    assert len(seats) > 1  # the learner's seat changes between episodes


def test_selfplay_env_reward_is_the_learners_own_even_when_an_opponent_ends_the_game():
    env = SelfPlayEnv("sequence_v0", {}, opponent_pool=random_pool("sequence_v0"), seed=0)
    finals = []
    for _ in range(6):
        env.reset()
        done = False
        while not done:
            _, reward, term, trunc, _ = env.step(int(np.flatnonzero(env.action_masks())[0]))
            done = term or trunc
        finals.append((reward, env.aec.cumulative_reward(env.learner)))
    assert all(r == own for r, own in finals)
    assert any(r < 0 for r, _ in finals)  # a losing game (ended by the opponent's winning move)


def test_train_script_tiny_budget_writes_a_loadable_checkpoint(tmp_path, monkeypatch):
    monkeypatch.setenv("TABLETOP_CHECKPOINTS", str(tmp_path / "checkpoints"))
    monkeypatch.chdir(tmp_path)  # the default run folder is relative to where the command runs
    out = sb3.main(
        [
            "--game", "sequence_v0", "--total-timesteps", "256", "--num-steps", "64", "--num-envs", "2",
            "--num-minibatches", "2", "--update-epochs", "1", "--eval-every", "128", "--eval-games", "2",
            "--register", "sequence_v0/ppo-test-v1", "--no-progress", "--opponents", "random-v0", "self",
            "--snapshot-every", "128", "--device", "auto",
        ]
    )
    assert out.resolve().parent == (tmp_path / "runs" / "sb3").resolve()  # its own run folder
    for name in ("policy.json", "policy.safetensors", "args.json", "eval.json", "curve.csv", "curve.png", "tb"):
        assert (out / name).exists(), name
    args = json.loads((out / "args.json").read_text())
    assert args["total_timesteps"] == 256 and args["game"] == "sequence_v0" and "commit" in args["provenance"]
    evaluation = json.loads((out / "eval.json").read_text())
    validate_report(evaluation)
    assert evaluation["trainer"] == "training.sb3" and evaluation["samples"] == 256
    assert evaluation["results"]["random-v0"]["games"] == 2
    assert [c["step"] for c in evaluation["curve"]][:1] == [128]
    entries = read_index(tmp_path / "checkpoints")
    assert [e["id"] for e in entries] == ["sequence_v0/ppo-test-v1"]
    assert entries[0]["format"] == "policy"
    # the index entry loads as an agent and plays legal moves through a whole game
    bot = PolicyAgent("sequence_v0", path=tmp_path / "checkpoints" / entries[0]["path"], config=entries[0]["config"])
    rnd = agents.make("sequence_v0/random-v0", seed=1)
    record = agents.play_game("sequence_v0", [bot, rnd], seed=4)
    assert record.length > 0
    # training again under the same id is refused before any training starts
    with pytest.raises(SystemExit):
        sb3.parse_args(["--register", "sequence_v0/ppo-test-v1"])


def test_the_readme_training_command_cannot_overwrite_a_shipped_checkpoint(capsys):
    args = sb3.parse_args(["--game", "pans_trial_v0"])  # no id: the run goes to its own folder
    assert args.register == ""
    with pytest.raises(SystemExit):
        sb3.parse_args(["--game", "pans_trial_v0", "--register", "pans_trial_v0/ppo-v1"])
    assert "exists already" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        sb3.parse_args(["--register"])
    assert "--register: expected one argument" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        sb3.parse_args(["--game", "pans_trial_v0", "--register", "sequence_v0/ppo-v9"])
    assert "--register takes a new versioned id like pans_trial_v0/ppo-v2" in capsys.readouterr().err


def test_train_script_rejects_bad_arguments_with_the_allowed_values(capsys):
    with pytest.raises(SystemExit):
        sb3.parse_args(["--game", "chess_v9"])
    assert "choose from" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        sb3.parse_args(["--opponents", "telepath-v1"])
    assert "unknown agent kind 'telepath-v1'" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        sb3.parse_args(["--config", '{"num_teams": 7}'])
    assert "num_teams" in capsys.readouterr().err


def test_corrupt_or_mismatched_checkpoints_raise_clear_errors(tmp_path):
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "policy.json").write_text("this is not JSON")
    bot = PolicyAgent("sequence_v0", path=broken, config={})
    with pytest.raises(CheckpointError, match="not valid UTF-8 JSON"):
        bot.reset(0, envs.make_game("sequence_v0"))
    missing = PolicyAgent("sequence_v0", path=tmp_path / "nope", config={})
    with pytest.raises(CheckpointError, match="does not exist"):
        missing.reset(0, envs.make_game("sequence_v0"))
    (tmp_path / "index.json").write_text("{not json")
    with pytest.raises(CheckpointError, match="not valid JSON"):
        read_index(tmp_path)
    (tmp_path / "index.json").write_text(json.dumps({"checkpoints": [{"id": "sequence_v0/x-v1"}]}))
    with pytest.raises(CheckpointError, match="lacks"):
        read_index(tmp_path)
    # a policy for another config refuses to sit at this game
    shipped = pathlib.Path(__file__).resolve().parents[1] / "checkpoints"
    entry = {e["id"]: e for e in read_index(shipped)}["sequence_v0/ppo-v1"]
    bot = PolicyAgent("sequence_v0", path=shipped / entry["path"], config=entry["config"])
    with pytest.raises(CheckpointError, match="was trained for"):
        bot.reset(0, envs.make_game("sequence_v0", num_teams=3))


def test_shipped_checkpoints_are_listed_with_args_and_eval_beside_them():
    root = pathlib.Path(__file__).resolve().parents[1] / "checkpoints"
    for entry in read_index(root):
        assert entry["id"] in agents.available(entry["game"])
        assert entry["format"] == "policy"
        for key in ("path", "args", "eval"):
            assert (root / entry[key]).exists(), f"{entry['id']}: {entry[key]} missing"
        assert (root / entry["path"] / "policy.json").is_file() and (root / entry["path"] / "policy.safetensors").is_file()
        assert not list((root / entry["path"]).glob("*.zip")), "no pickled SB3 zip ships"
        evaluation = json.loads((root / entry["eval"]).read_text())
        assert evaluation["checkpoint_id"] == entry["id"]


def test_a_deal_that_ends_before_the_learners_first_decision_is_dealt_again(monkeypatch):
    """In Wizard Arena a bot can become a follower before its first turn and never act."""
    from agents.runner import Runner
    from training.sb3 import selfplay

    deals = {"n": 0}

    class FirstDealPlaysItself(Runner):
        def advance(self):
            deals["n"] += 1
            if deals["n"] == 1:  # first deal: everyone, the learner's seat included, plays it out
                while not self.finished:
                    observation, _ = self.inputs(self.seat_to_act)
                    self.apply(int(np.flatnonzero(observation["action_mask"])[0]))
                return None
            return super().advance()

    monkeypatch.setattr(selfplay, "Runner", FirstDealPlaysItself)
    env = SelfPlayEnv("sequence_v0", {}, opponent_pool=random_pool("sequence_v0"), seed=2)
    obs, info = env.reset()
    assert env.skipped_episodes == 1 and deals["n"] == 2
    assert env.aec.agent_selection == env.learner and not env.runner.finished
    env.step(int(np.flatnonzero(env.action_masks())[0]))  # and the new deal plays on


def test_selfplay_env_passes_gymnasiums_check_env_and_seeds_reproducibly():
    from gymnasium.utils.env_checker import check_env

    env = SelfPlayEnv("pans_trial_v0", {}, opponent_pool=random_pool("pans_trial_v0"), seed=0)
    check_env(env, skip_render_check=True)
    first = env.reset(seed=5)
    mask = env.action_masks()
    again = env.reset(seed=5)
    assert np.array_equal(first[0], again[0]) and first[1] == again[1]
    assert np.array_equal(mask, env.action_masks())
    illegal = int(np.flatnonzero(~mask)[0])
    _, reward, terminated, truncated, info = env.step(illegal)
    assert (reward, terminated, truncated) == (-1.0, True, False) and "illegal_action" in info
    strict = SelfPlayEnv("pans_trial_v0", {}, opponent_pool=random_pool("pans_trial_v0"), illegal_action="raise")
    strict.reset(seed=5)
    with pytest.raises(IllegalActionError):
        strict.step(illegal)


def test_sb3_takes_the_shared_names(capsys):
    args = sb3.parse_args(["--num-steps", "256", "--update-epochs", "2"])
    assert (args.num_steps, args.update_epochs) == (256, 2)
    with pytest.raises(SystemExit):
        sb3.parse_args(["--batch-size", "64"])  # another meaning now: --num-minibatches
    assert "--batch-size is gone: give --num-minibatches" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        sb3.parse_args(["--num-steps", "100", "--num-minibatches", "3"])  # does not divide the rollout
    assert "values that fit: 1, 2, 4, 5, 10, 20, 25, 50" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["--n-steps", "256"], "--n-steps is gone: give --num-steps"),
        (["--n-epochs", "2"], "--n-epochs is gone: give --update-epochs"),
        (["--selfplay-every", "500"], "--selfplay-every is gone: put 'self' in --opponents and give --snapshot-every"),
        (["--selfplay-max", "3"], "--selfplay-max is gone: give --snapshot-max"),
        (["--checkpoint-id", "sequence_v0/ppo-test-v7", "--register"], "--checkpoint-id is gone: give --register ID"),
        (["--checkpoint-id=sequence_v0/ppo-test-v7"], "--checkpoint-id is gone: give --register ID"),
        (["--opponents", "snapshot"], "the opponent kind 'snapshot' in --opponents is gone: use 'self'"),
    ],
)
def test_sb3_old_spellings_are_refused_naming_the_new_one(argv, expected, capsys):
    with pytest.raises(SystemExit) as exit_:
        sb3.parse_args(argv)
    assert exit_.value.code == 2
    assert expected in capsys.readouterr().err


def test_sb3_self_play_and_register_under_their_one_spelling(tmp_path, monkeypatch):
    monkeypatch.setenv("TABLETOP_CHECKPOINTS", str(tmp_path))
    args = sb3.parse_args(["--opponents", "random-v0", "self", "--snapshot-every", "500", "--snapshot-max", "3"])
    assert args.opponents == ["random-v0", "self"] and (args.snapshot_every, args.snapshot_max) == (500, 3)
    args = sb3.parse_args(["--register", "sequence_v0/ppo-test-v7", "--no-progress"])
    assert args.register == "sequence_v0/ppo-test-v7" and args.progress is False


def test_sb3_stops_at_a_non_finite_loss_naming_the_step_and_saves_nothing(tmp_path, monkeypatch):
    from sb3_contrib import MaskablePPO

    devices = []
    original = MaskablePPO.train

    def poisoned(self):
        original(self)
        devices.append(self.device)
        if self.num_timesteps >= 128:
            self.logger.record("train/value_loss", float("nan"))

    monkeypatch.setattr(MaskablePPO, "train", poisoned)
    out = tmp_path / "run"
    with pytest.raises(NonFiniteLossError, match="non-finite loss at learner step 128: value_loss = nan") as caught:
        sb3.main(["--game", "pans_trial_v0", "--total-timesteps", "256", "--num-steps", "64", "--num-envs", "1",
                  "--num-minibatches", "2", "--update-epochs", "1", "--eval-every", "0", "--eval-games", "2",
                  "--no-progress", "--out", str(out)])
    assert caught.value.step == 128 and set(caught.value.losses) == {"value_loss"}
    assert devices and all(d == torch.device("cpu") for d in devices)
    assert not (out / "policy.json").exists() and not (out / "eval.json").exists()


def test_sb3_at_the_smallest_minibatches_the_settings_accept_keeps_finite_losses(tmp_path):
    """Two decisions a minibatch: the smallest split the shared validation accepts trains without a NaN (the
    trainer stops with NonFiniteLossError otherwise)."""
    out = sb3.main(["--game", "pans_trial_v0", "--total-timesteps", "16", "--num-steps", "4", "--num-envs", "2",
                    "--num-minibatches", "4", "--update-epochs", "2", "--eval-every", "0", "--eval-games", "1",
                    "--no-progress", "--out", str(tmp_path / "run")])
    assert (out / "policy.json").is_file()


def test_the_sb3_command_refuses_bad_input_in_one_line():
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "training.sb3", "--game", "chess_v9"],
                          capture_output=True, text=True, timeout=300, check=False,
                          cwd=pathlib.Path(__file__).resolve().parents[1])
    assert done.returncode == 2
    assert "python -m training.sb3: error: --game 'chess_v9' is not a game" in done.stderr


@pytest.mark.parametrize("old", ["training.train_ppo", "training.evaluate", "training.selfplay", "training.convert_sb3",
                                 "training.rllib_train", "training.rllib_env"])
def test_the_old_module_names_are_gone(old):
    """One name for each command and module (the trainers' packages): no module stays behind under an old name."""
    import importlib.util

    assert importlib.util.find_spec(old) is None

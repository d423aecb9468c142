"""Training on Ray RLlib: the seat-roles adapter, a tiny local run per table shape, and the export.

Needs the ``rllib`` extra (``pip install -e ".[rllib]"``); CI installs only ``.[dev]``, so the whole
module is skipped there with that reason. The two runs start a local Ray with one or two env runners
for two iterations of a few hundred steps.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

pytest.importorskip(
    "ray.rllib", reason="ray[rllib] is not installed: these tests need the rllib extra (pip install -e '.[rllib]')"
)

import agents
from agents.checkpoint import PolicyAgent
import envs
from agents.policy_io import CheckpointError, load_policy
from training import rllib
from training.report import validate_report
from training.league.matches import table_facts
from training.rllib import env as rllib_env
from training.rllib.env import (
    LEARNER,
    SeatRolesEnv,
    make_env,
    map_agent_to_module,
    split_id,
)
from training.settings import SELF


def random_episode(env, rng):
    """Play one episode through RLlib's wrapper with random legal actions; returns what RLlib saw."""
    obs, _ = env.reset(seed=int(rng.integers(2**31)))
    seen, final_rewards = set(), {}
    while True:
        ((agent, o),) = obs.items()
        assert set(o) == {"observations", "action_mask"}
        assert env.observation_space[agent].contains(o)
        seen.add(agent)
        obs, rewards, terminated, truncated, _ = env.step({agent: int(rng.choice(np.flatnonzero(o["action_mask"])))})
        if terminated["__all__"] or truncated["__all__"]:
            final_rewards = rewards
            return seen, final_rewards, obs
        assert len(obs) == 1


def test_learning_team_shares_one_module_and_bots_stay_inside():
    env = make_env({"game": "sequence_v0", "config": {"players_per_team": 2}, "opponents": ["random-v0"], "seed": 3})
    rng = np.random.default_rng(0)
    teams_seen = set()
    for _ in range(6):
        seen, rewards, final_obs = random_episode(env, rng)
        roles = {split_id(a)[0] for a in seen}
        seats = sorted(int(split_id(a)[1].split("_")[1]) for a in seen)
        assert roles == {LEARNER}  # random-v0 seats are played inside the environment
        assert len(seats) == 2 and seats[0] % 2 == seats[1] % 2  # one whole team (seat i on team i % 2)
        teams_seen.add(seats[0] % 2)
        assert {map_agent_to_module(a) for a in seen} == {LEARNER}
        # Every learning seat gets the game's return at the end, and team-mates get the same one.
        assert set(rewards) == set(final_obs) == seen
        assert len(set(rewards.values())) == 1 and next(iter(rewards.values())) in (-1.0, 0.0, 1.0)
    assert teams_seen == {0, 1}


def test_snapshot_seats_are_exposed_and_mapped_to_a_frozen_slot():
    env = make_env({"game": "dojo_v0", "config": {"num_players": 4}, "opponents": [SELF], "seed": 5,
                    "max_cycles": 30})
    rng = np.random.default_rng(1)
    seen, _rewards, _ = random_episode(env, rng)
    assert sorted(split_id(a)[1] for a in seen) == [f"player_{i}" for i in range(4)]
    assert sum(split_id(a)[0] == LEARNER for a in seen) == 1  # no teams: the learning team is one seat
    slots = rllib_env.snapshot_module_ids(3)

    class Episode:
        id_ = "episode-1"

    for agent in seen:
        module = map_agent_to_module(agent, Episode(), slots=3)
        assert module == (LEARNER if split_id(agent)[0] == LEARNER else module)
        assert module == LEARNER or module in slots
        assert module == map_agent_to_module(agent, Episode(), slots=3)  # stable within an episode
    with pytest.raises(ValueError, match="no module"):
        map_agent_to_module("snapshot:player_1", Episode(), slots=0)


GAME_CONFIGS = [
    (game, name, config)
    for game in envs.NAMES
    for name, config in envs.game_class(game).config_families.items()
]


@pytest.mark.parametrize(("game", "name", "config"), GAME_CONFIGS, ids=[f"{g}-{n}" for g, n, _ in GAME_CONFIGS])
def test_every_game_and_seat_count_runs_through_rllibs_wrapper(game, name, config):
    players, teams = table_facts(game, config)
    env = make_env({"game": game, "config": config, "opponents": ["random-v0", SELF], "seed": 11,
                    "max_cycles": 15})
    seen, rewards, _ = random_episode(env, np.random.default_rng(2))
    learning = sorted(int(split_id(a)[1].split("_")[1]) for a in seen if split_id(a)[0] == LEARNER)
    assert len(learning) == players // teams and len({s % teams for s in learning}) == 1
    assert set(rewards) == seen


def test_adapter_refuses_unknown_opponents_and_replays_a_seed():
    with pytest.raises(ValueError, match="unknown opponent 'nobody-v9'"):
        SeatRolesEnv("sequence_v0", {}, opponents=["nobody-v9"])
    runs = []
    for _ in range(2):
        env = make_env({"game": "sequence_v0", "config": {}, "opponents": ["heuristic-v1", "random-v0"], "seed": 9})
        runs.append(random_episode(env, np.random.default_rng(4))[:2])
    assert runs[0] == runs[1]


def test_tiny_sequence_run_trains_only_the_learner_and_exports_it_faithfully(tmp_path):
    import ray
    import torch

    args = rllib.parse_args([
        "--game", "sequence_v0", "--config", '{"players_per_team": 2}', "--opponents", "random-v0", "self",
        "--iterations", "2", "--snapshot-every", "5", "--snapshot-max", "2", "--env-runners", "1",
        "--train-batch", "200", "--num-minibatches", "4", "--update-epochs", "1", "--hidden", "32", "--no-progress",
    ])
    config = {"num_teams": 2, "players_per_team": 2, "sequences_to_win": None, "dead_cards": True,
              "layout": "printed", "layout_seed": 0}
    runners = rllib.start_ray(args)
    try:
        algo = rllib.build_config(args, config, runners).build_algo()
        initial = algo.learner_group.get_weights(module_ids=[LEARNER])[LEARNER]
        curve = rllib.train(algo, args)
        weights = algo.learner_group.get_weights()
        on_runner = algo.env_runner_group.foreach_env_runner(
            lambda r: r.module["snapshot_1"].get_state(), local_env_runner=False
        )[0]
    finally:
        ray.shutdown()
    assert len(curve) == 2 and curve[-1]["env_steps"] >= 400 and curve[-1]["learner_steps"] > 0
    # Snapshots are frozen copies of the initial learner (no refresh before iteration 5), on the
    # learners and on the env runners alike; the learner itself moved.
    for name, value in initial.items():
        assert np.array_equal(np.asarray(weights["snapshot_1"][name]), np.asarray(value)), name
        assert np.array_equal(np.asarray(on_runner[name]), np.asarray(value)), name
    assert any(not np.array_equal(np.asarray(weights[LEARNER][k]), np.asarray(v)) for k, v in initial.items())

    out = rllib.export_policy(tmp_path / "policy", weights[LEARNER], args, config, curve)
    module, spec = load_policy(out, game="sequence_v0", observation_shape=(710,), num_actions=349)
    assert spec["arch"] == "mlp" and spec["config"] == config and spec["meta"]["iterations"] == 2
    # The exported network computes exactly the learner's policy logits.
    env = rllib_env.SeatRolesEnv("sequence_v0", config, opponents=["random-v0"], seed=2)
    env.reset()
    obs = env.observe(env.agent_selection)
    learner = rllib_env.MaskedPolicyModule(
        observation_space=env.observation_space(env.agent_selection),
        action_space=env.action_space(env.agent_selection),
        model_config={"hidden": [32]},
    )
    learner.set_state(weights[LEARNER])
    batch = {"obs": {k: torch.as_tensor(v)[None] for k, v in obs.items()}}
    masked = learner.forward_inference(batch)["action_dist_inputs"][0]
    with torch.no_grad():
        exported = module(torch.as_tensor(obs["observations"])[None])[0]
    legal = torch.as_tensor(obs["action_mask"]).bool()
    assert torch.allclose(masked[legal], exported[legal])
    assert (masked[~legal] < -1e30).all()

    # Exported policies play only legal moves (the strict env raises on any other) ...
    for g in range(3):
        seats = [PolicyAgent("sequence_v0", model=module, config=config) for _ in range(4)]
        record = agents.play_game("sequence_v0", seats, seed=g, config=config)
        assert record.length > 0
    # ... and a file that is missing, corrupt or for another game is refused with CheckpointError.
    with pytest.raises(CheckpointError, match="not 'dojo_v0'"):
        load_policy(out, game="dojo_v0")
    (out / "policy.safetensors").write_bytes((out / "policy.safetensors").read_bytes()[:100])
    with pytest.raises(CheckpointError, match="safetensors"):
        load_policy(out, game="sequence_v0")
    (out / "policy.json").unlink()
    with pytest.raises(CheckpointError, match="does not exist"):
        load_policy(out, game="sequence_v0")


def test_tiny_dojo_run_from_the_command_line(tmp_path, capsys):
    out = rllib.main([
        "--game", "dojo_v0", "--config", '{"num_players": 4}', "--opponents", "random-v0", "self",
        "--iterations", "2", "--snapshot-every", "1", "--env-runners", "2", "--train-batch", "200",
        "--num-minibatches", "4", "--update-epochs", "1", "--hidden", "32", "--max-cycles", "60", "--eval-games", "2",
        "--eval-every", "2",
        "--out", str(tmp_path / "dojo"), "--no-progress",
    ])
    for name in ("policy.json", "policy.safetensors", "args.json", "eval.json", "curve.csv", "curve.png"):
        assert (out / name).is_file(), name
    assert (out / "tb").is_dir()
    evaluation = json.loads((out / "eval.json").read_text())
    validate_report(evaluation)
    assert evaluation["trainer"] == "training.rllib" and evaluation["samples"] > 0
    final = evaluation["results"]["random-v0"]
    assert final["games"] == 2 and final["wins"] + final["draws"] + final["losses"] == 2
    assert [row["iteration"] for row in evaluation["curve"]] == [1, 2]
    assert "win_rate_vs_random-v0" in evaluation["curve"][1]  # evaluated during training (--eval-every 2)
    module, spec = load_policy(out, game="dojo_v0")
    assert spec["config"]["num_players"] == 4 and spec["meta"]["opponents"] == ["random-v0", SELF]
    # Every seat played by the exported policy: only legal moves, or the strict env raises.
    seats = [PolicyAgent("dojo_v0", model=module, config={"num_players": 4}) for _ in range(4)]
    record = agents.play_game("dojo_v0", seats, seed=7, config={"num_players": 4})
    assert record.length > 0
    assert f'"policy": "{out}"' in capsys.readouterr().out


def test_shared_names_map_to_rllib():
    args = rllib.parse_args(["--learning-rate", "0.001", "--num-minibatches", "4", "--train-batch", "400"])
    config = rllib.build_config(args, {}, 0)
    assert (config.lr, config.minibatch_size, config.lambda_, config.clip_param) == (0.001, 100, 0.95, 0.2)
    assert (config.vf_loss_coeff, config.grad_clip, config.num_epochs) == (0.5, 0.5, 6)

"""``training.ppo --critic state``: a value network over the whole position, the actor on its seat only."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest
import torch

import agents
import envs
from agents.policy_io import load_policy
from training import ppo
from training.ppo.args import arch_of
from training.ppo.critic import StateCritic, build_state_critic
from training.vector_env import Tables

from tests.test_ppo import tiny_run

GAMES = [
    ("sequence_v0", {}),
    ("sequence_v0", {"players_per_team": 2}),
    ("pans_trial_v0", {}),
    ("dojo_v0", {}),
    ("wizard_arena_v0", {}),
]


def random_deal(game_name: str):
    def deal(g: int):
        return 100 + g, "random-v0", (lambda s: agents.make(f"{game_name}/random-v0", seed=s)), 0
    return deal


@pytest.mark.parametrize("game,config", GAMES)
def test_a_tiny_state_critic_run_trains_saves_and_exports_only_the_actor(tmp_path, game, config):
    run = tiny_run(tmp_path, game, "--config", json.dumps(config), "--opponents", "random-v0", "--teacher", "",
                   "--critic", "state", "--hidden", "32", steps=128)
    assert json.loads((run / "args.json").read_text())["critic"] == "state"
    state = json.loads((run / "checkpoint" / "state.json").read_text())
    assert state["args"]["critic"] == "state" and state["step"] >= 128
    game_obj = envs.make_game(game, **config)
    critic = build_state_critic(game_obj, 32)
    from safetensors.torch import load_file

    saved = load_file(str(run / "checkpoint" / "critic.safetensors"))
    assert saved.keys() == critic.state_dict().keys()
    # The exported policy is the actor alone, the same network a seat-critic run exports.
    module, spec = load_policy(run / "policy", game=game, observation_shape=game_obj.observation_shape,
                               num_actions=game_obj.num_actions)
    seat_arch = arch_of(ppo.parse_args(["--game", game, "--config", json.dumps(config), "--hidden", "32"]),
                            game_obj)
    assert (spec["arch"], spec["arch_kwargs"]) == seat_arch
    assert not any(k.startswith("net.") or "offset" in k for k in module.state_dict())


def test_the_critic_reads_hidden_information_that_the_actor_never_sees():
    game = envs.make_game("sequence_v0")
    tables = Tables(game, 2, random_deal("sequence_v0"), max_actions=400, backend="python")
    tables.advance(lambda index, rows: [])
    for _ in range(3):  # a few moves in, so that hands and the deck have moved
        obs, mask = tables.observe([0, 1])
        tables.play([0, 1], [int(np.flatnonzero(m)[0]) for m in mask])
        tables.advance(lambda index, rows: [])
    saved = tables.batch.save_state(0)
    seat = tables.learner_seat(0)
    # Another deal of the hidden cards that the seat to act cannot tell from this one.
    other = game.state_from_view(game.load(saved).player_view(seat), random.Random(7))
    data = game.save(other)
    data["env"] = saved["env"]
    tables.batch.load_state(1, data)
    obs, mask = tables.observe([0, 1])
    np.testing.assert_array_equal(obs[0], obs[1])  # the actor's input: unchanged
    np.testing.assert_array_equal(mask[0], mask[1])
    whole = tables.encode_state([0, 1])
    assert not np.array_equal(whole[0], whole[1])  # the critic's input: the hidden cards differ
    np.testing.assert_array_equal(whole[0], game.encode_state(game.load(saved)))
    critic = build_state_critic(game, 16)
    with torch.no_grad():
        values = critic(torch.from_numpy(obs), torch.from_numpy(whole))
    assert values.shape == (2,) and values[0] != values[1]


def test_a_rollout_trains_the_state_critic_on_the_tables_whole_positions(tmp_path):
    args = ppo.parse_args(["--game", "wizard_arena_v0", "--run-dir", str(tmp_path / "r"), "--critic", "state",
                           "--opponents", "random-v0", "--teacher", "", "--num-envs", "3", "--num-steps", "4",
                           "--num-minibatches", "2", "--no-progress"])
    trainer = ppo.Trainer(args)
    assert trainer.tables.batch.backend == "python"
    rows = list(range(3))
    expected = trainer.tables.encode_state(rows)  # the first decision's positions, before the rollout moves them
    obs = torch.from_numpy(trainer.tables.observe(rows)[0].copy())
    batch = trainer.collect()
    np.testing.assert_array_equal(batch["state"][:3].numpy(), expected)
    with torch.no_grad():
        np.testing.assert_allclose(batch["value"][:3].numpy(), trainer.critic_cpu(obs, torch.from_numpy(expected)).numpy(),
                                   rtol=1e-6)
    before = [p.detach().clone() for p in trainer.critic.parameters()]
    head = trainer.net.state_dict()
    value_head = {k: v.clone() for k, v in head.items() if k.startswith("value")}
    assert value_head
    stats = trainer.update(batch)
    assert any(not torch.equal(a, b) for a, b in zip(before, trainer.critic.parameters()))
    # The seat's own value head still learns the returns (a second task for the actor's trunk).
    assert stats["seat_value_loss"] > 0
    assert any(not torch.equal(trainer.net.state_dict()[k], v) for k, v in value_head.items())
    for mine, trained in zip(trainer.critic_cpu.parameters(), trainer.critic.parameters()):
        assert torch.equal(mine, trained)


def test_resume_keeps_the_state_critic_and_refuses_to_change_it(tmp_path, capsys):
    run = tiny_run(tmp_path, "pans_trial_v0", "--opponents", "random-v0", "--teacher", "", "--critic", "state",
                   steps=64)
    from safetensors.torch import load_file

    saved = load_file(str(run / "checkpoint" / "critic.safetensors"))
    trainer = ppo.Trainer(ppo.parse_args(["--resume", str(run), "--total-timesteps", "128", "--no-progress"]))
    assert trainer.args.critic == "state"
    for name, tensor in trainer.critic.state_dict().items():
        assert torch.equal(tensor, saved[name])
    for name, tensor in trainer.critic_cpu.state_dict().items():
        assert torch.equal(tensor, saved[name])
    trainer.run()
    assert json.loads((run / "checkpoint" / "state.json").read_text())["step"] == 128
    with pytest.raises(SystemExit):
        ppo.parse_args(["--resume", str(run), "--critic", "seat"])
    assert "cannot be changed: ['critic']" in capsys.readouterr().err


@pytest.mark.parametrize(
    "argv,needle",
    [
        (["--critic", "global"], "--critic must be one of ['seat', 'state'], got 'global'"),
        (["--game", "sequence_v0", "--critic", "state", "--backend", "numpy"], "use --backend python or auto"),
    ],
)
def test_bad_critic_settings_are_refused_with_the_allowed_values(argv, needle, capsys):
    with pytest.raises(SystemExit):
        ppo.parse_args(argv)
    assert needle in capsys.readouterr().err


def test_the_seat_critic_builds_no_second_network(tmp_path):
    args = ppo.parse_args(["--game", "dojo_v0", "--run-dir", str(tmp_path / "r"), "--opponents", "random-v0",
                           "--teacher", "", "--num-envs", "2", "--num-steps", "4", "--num-minibatches", "2"])
    trainer = ppo.Trainer(args)
    assert trainer.critic is None and "state" not in trainer.collect()
    assert len(trainer.optimizer.param_groups) == 1


def test_the_batch_encodes_the_whole_position_as_the_reference_does_on_every_backend():
    import envs.vector

    for backend in envs.vector.available_backends("sequence_v0"):
        batch = envs.vector.make("sequence_v0", 3, seed=5, backend=backend)
        batch.reset()
        rng = np.random.default_rng(0)
        for _ in range(5):
            batch.step(batch.sample_legal(rng))
        expected = np.stack([batch.game.encode_state(batch.game.load(batch.save_state(i))) for i in range(3)])
        np.testing.assert_array_equal(batch.encode_state([0, 1, 2]), expected)
    assert isinstance(build_state_critic(batch.game, 8), StateCritic)


def test_the_comparison_pools_each_critics_seeds_with_a_wilson_interval(tmp_path):
    from benchmarks import critic_compare as cc
    from training.report import write_csv

    for critic, wins in (("seat", (10, 20, 30)), ("state", (40, 50, 60))):
        for seed, won in zip(cc.SEEDS, wins):
            folder = cc.run_folder(tmp_path / "runs", "sequence_v0", critic, seed)
            folder.mkdir(parents=True)
            results = {kind: {"wins": won, "games": 100, "win_rate": won / 100, "fair_share": 0.5, "mean_rank": 1.5}
                       for kind in cc.OPPONENTS}
            report = {"samples": cc.TASKS["sequence_v0"]["steps"], "cpu_seconds": 10.0 * seed, "results": results}
            (folder / "eval.json").write_text(json.dumps(report))
            rows = [{"step": 8192, **{f"win_rate_vs_{k}": won / 200 for k in cc.OPPONENTS}},
                    {"step": 16384, **{f"win_rate_vs_{k}": won / 100 for k in cc.OPPONENTS}}]
            write_csv(folder / "curve.csv", rows, ["sequence_v0"])
    cc.main(["--report-only", "--out", str(tmp_path / "runs"), "--docs", str(tmp_path / "docs")])
    table = (tmp_path / "docs" / "summary.md").read_text()
    assert "| Sequence, 2 teams of 2 | seat | random-v0 | 20.0% (60/300) | [15.9%, 24.9%] | 0.10 / 0.20 / 0.30 |" in table
    assert "| Sequence, 2 teams of 2 | state | heuristic-noisy-v1 | 50.0% (150/300) |" in table
    assert "| 20 |" in table  # the CPU seconds of a run, averaged over its seeds
    from PIL import Image

    assert json.loads(Image.open(tmp_path / "docs" / "curves.png").text["Comment"])["package"] == "tabletop-rl"

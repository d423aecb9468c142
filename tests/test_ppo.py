"""The PPO trainer (the training/ppo/ package) and its networks (agents/nets.py), on tiny budgets."""

from __future__ import annotations

import dataclasses
import json
import pathlib

import numpy as np
import pytest
import torch

import agents
from agents.checkpoint import PolicyAgent
from envs.core.errors import IllegalActionError
import envs
from agents.nets import default_arch
from agents.architectures import build_architecture
from agents.policy_io import load_policy
from agents.policy_io import CheckpointError
from training import ppo
from training.report import validate_report

TINY = [
    "--num-envs",
    "4",
    "--num-steps",
    "16",
    "--num-minibatches",
    "2",
    "--update-epochs",
    "1",
    "--eval-games",
    "2",
    "--eval-opponents",
    "random-v0",
    "--max-actions",
    "300",
    "--no-progress",
]


def tiny_run(tmp_path: pathlib.Path, game: str, *extra: str, steps: int = 192) -> pathlib.Path:
    run = tmp_path / f"{game}-run"
    ppo.main(
        [
            "--game",
            game,
            "--run-dir",
            str(run),
            "--total-timesteps",
            str(steps),
            "--eval-every",
            "128",
            "--checkpoint-every",
            "64",
            "--snapshot-every",
            "64",
            *TINY,
            *extra,
        ]
    )
    return run


@pytest.mark.parametrize(
    "game,extra",
    [
        (
            "sequence_v0",
            [
                "--opponents", "random-v0", "self", "--teacher", "heuristic-v1", "--bc-steps", "64", "--kl-coef", "0.5",
                "--teacher-workers", "1",
            ],
        ),
        ("sequence_v0", ["--config", '{"players_per_team": 2}', "--opponents", "random-v0", "self", "--teacher", ""]),
        ("pans_trial_v0", ["--opponents", "random-v0", "self", "--teacher", ""]),
        ("pans_trial_v0", ["--focus", "--opponents", "random-v0", "--teacher", ""]),
        ("dojo_v0", ["--opponents", "random-v0", "--teacher", ""]),
        ("wizard_arena_v0", ["--opponents", "random-v0", "--teacher", ""]),
        ("wizard_arena_v0", ["--config", '{"observation_version": 3}', "--net", "table_entity", "--hidden", "32",
                             "--opponents", "random-v0", "--teacher", ""]),
    ],
)
def test_tiny_run_trains_logs_and_saves_a_loadable_policy(tmp_path, game, extra):
    run = tiny_run(tmp_path, game, *extra)
    state = json.loads((run / "checkpoint" / "state.json").read_text())
    assert state["step"] >= 192
    assert (run / "curve.csv").read_text().count("\n") >= 2  # header + at least one evaluation
    assert (run / "curve.png").stat().st_size > 0
    assert any((run / "tb").iterdir())
    config = json.loads(extra[extra.index("--config") + 1]) if "--config" in extra else {}
    game_obj = envs.make_game(game, **config)
    module, spec = load_policy(
        run / "policy", game=game, observation_shape=game_obj.observation_shape, num_actions=game_obj.num_actions
    )
    assert spec["meta"]["steps"] == state["step"]
    # Every run ends with its report in the one schema, from the evaluation at its last step.
    report = json.loads((run / "eval.json").read_text())
    validate_report(report)
    assert report["trainer"] == "training.ppo" and report["samples"] == state["step"] and report["game"] == game
    assert list(report["results"]) == ["random-v0"] and report["curve"] == state["curve"]
    assert report["results"]["random-v0"]["win_rate"] == state["curve"][-1]["win_rate_vs_random-v0"]
    # The loaded policy plays whole games through the strict environment (an illegal move raises).
    n = game_obj.num_players
    seats = [agents.make(f"{game}/random-v0", seed=s) for s in range(n)]
    seats[0] = PolicyAgent(game, model=module, seed=0)
    config = dict(config, max_cycles=60)
    record = agents.play_game(game, seats, seed=3, config=config)
    assert record.length > 0


def test_the_numpy_sequence_backend_trains_exactly_as_the_reference_engines(tmp_path):
    """The tables run on envs.vector's public API, so any backend serves them; Sequence's numpy engine
    plays the same games, hence the same run (teacher views and snapshots included)."""
    extra = ["--opponents", "random-v0", "heuristic-v1", "self", "--teacher", "heuristic-v1", "--bc-steps", "32",
             "--kl-coef", "0.5"]
    runs = {}
    for backend in ("python", "numpy"):
        runs[backend] = tiny_run(tmp_path / backend, "sequence_v0", *extra, "--backend", backend, steps=128)
    states = {b: json.loads((run / "checkpoint" / "state.json").read_text()) for b, run in runs.items()}
    timing = ("cpu_seconds", "steps_per_cpu_s", "steps_per_wall_s")
    curves = {b: [{k: v for k, v in row.items() if k not in timing and not k.endswith("_share")}
                  for row in state["curve"]] for b, state in states.items()}
    assert curves["python"] == curves["numpy"] and states["python"]["games_dealt"] == states["numpy"]["games_dealt"]
    from safetensors.torch import load_file

    weights = {b: load_file(str(run / "checkpoint" / "model.safetensors")) for b, run in runs.items()}
    for name, value in weights["python"].items():
        assert torch.equal(value, weights["numpy"][name]), name


def test_a_non_finite_loss_stops_the_run_naming_the_step_and_keeps_the_last_good_checkpoint(tmp_path, monkeypatch):
    from safetensors.torch import load_file

    from training.ppo import loop
    from training.settings import NonFiniteLossError

    real = loop.ppo_update
    updates = []

    def poisoned(net, optimizer, batch, args, kl_weight, device, **kwargs):
        updates.append(len(updates))
        if len(updates) == 3:  # the third update diverges
            with torch.no_grad():
                next(net.parameters()).fill_(float("nan"))
        return real(net, optimizer, batch, args, kl_weight, device, **kwargs)

    monkeypatch.setattr(loop, "ppo_update", poisoned)
    run = tmp_path / "run"
    argv = ["--game", "dojo_v0", "--run-dir", str(run), "--total-timesteps", "256", "--checkpoint-every", "64",
            "--eval-every", "0", "--opponents", "random-v0", "--teacher", "", *TINY]
    with pytest.raises(NonFiniteLossError, match=r"non-finite loss at learner step 192: policy_loss = nan") as caught:
        ppo.main(argv)
    assert caught.value.step == 192 and "value_loss" in caught.value.losses
    state = json.loads((run / "checkpoint" / "state.json").read_text())
    assert state["step"] == 128  # the last checkpoint before the bad update is kept as it was
    weights = load_file(str(run / "checkpoint" / "model.safetensors"))
    assert all(torch.isfinite(w).all() for w in weights.values())
    assert not (run / "eval.json").exists()


def test_the_update_runs_on_the_device_and_the_actor_plays_the_trained_weights(tmp_path):
    """``--device auto`` is the CPU here (no GPU is needed); the network the update trains and the actor
    that plays rollouts, snapshots and evaluations are distinct modules, equal after every update."""
    args = ppo.parse_args(["--game", "dojo_v0", "--run-dir", str(tmp_path / "run"), "--device", "auto",
                           "--opponents", "random-v0", "self", "--teacher", "", *TINY])
    trainer = ppo.Trainer(args)
    assert trainer.device == torch.device("cpu") and trainer.actor is not trainer.net
    before = [p.clone() for p in trainer.actor.parameters()]
    trainer.update(trainer.collect())
    for played, trained in zip(trainer.actor.parameters(), trainer.net.parameters()):
        assert torch.equal(played, trained) and not played.requires_grad
    assert any(not torch.equal(p, old) for p, old in zip(trainer.actor.parameters(), before))
    with pytest.raises(SystemExit):
        ppo.parse_args(["--game", "dojo_v0", "--device", "tpu"])


def test_auto_backend_is_the_fastest_unless_an_opponent_or_the_teacher_reads_the_view():
    from training.ppo.loop import table_backend

    def backend(*argv):
        return table_backend(ppo.parse_args(["--game", "sequence_v0", "--teacher", "", *argv]))

    assert backend("--opponents", "random-v0", "self") == "numpy"
    assert backend("--opponents", "random-v0", "heuristic-noisy-v1") == "python"  # it reads the view
    assert backend("--opponents", "random-v0", "--teacher", "heuristic-v1") == "python"
    assert backend("--opponents", "heuristic-noisy-v1", "--backend", "numpy") == "numpy"  # asked for
    assert table_backend(ppo.parse_args(["--game", "dojo_v0", "--opponents", "random-v0"])) == "python"


def test_loading_a_policy_skips_the_random_initialisation_it_overwrites(monkeypatch):
    from agents import nets

    folder = pathlib.Path("checkpoints/dojo_v0/ppo-v3")
    reference, _ = load_policy(folder, game="dojo_v0")
    calls = []
    real = torch.nn.init.orthogonal_
    monkeypatch.setattr(torch.nn.init, "orthogonal_", lambda *a, **k: calls.append(1) or real(*a, **k))
    module, spec = load_policy(folder, game="dojo_v0")
    assert calls == []  # no QR decomposition for weights that the checkpoint replaces
    obs = torch.rand((4, *spec["observation_shape"]))
    with torch.no_grad():
        assert torch.equal(module(obs), reference(obs))
    assert not nets.weights_will_be_loaded()
    # A network built to be trained is still initialised (orthogonal weights, zero biases).
    arch, kwargs = default_arch(envs.make_game("dojo_v0"), "auto", conv_channels=16, conv_layers=2, hidden=128)
    fresh = build_architecture(arch, **kwargs)
    assert calls
    assert all(not p.detach().any() for name, p in fresh.named_parameters() if name.endswith("bias"))


def test_resume_continues_steps_optimizer_and_pool(tmp_path):
    from safetensors.torch import load_file

    run = tiny_run(tmp_path, "pans_trial_v0", "--opponents", "random-v0", "self", "--teacher", "", steps=128)
    first = json.loads((run / "checkpoint" / "state.json").read_text())
    saved_opt = load_file(str(run / "checkpoint" / "optimizer.safetensors"))
    saved_model = load_file(str(run / "checkpoint" / "model.safetensors"))
    # A process that went on past its last checkpoint logged steps the resumed run will not have.
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    from torch.utils.tensorboard import SummaryWriter

    before = set((run / "tb").iterdir())
    with SummaryWriter(str(run / "tb")) as stray:
        for step in (64, 200):
            stray.add_scalar("test/stray", 1.0, step)
    # TensorBoard reads event files in name order, and a name holds its writer's second, then its process
    # id: the stray file is dated a minute back, so that the resumed run's file, even one made in the same
    # second by a process of a lower id, is read after it.
    (stray_file,) = set((run / "tb").iterdir()) - before
    stamp = stray_file.name.split(".")[3]
    stray_file.rename(stray_file.with_name(stray_file.name.replace(f".{stamp}.", f".{int(stamp) - 60}.", 1)))
    args = ppo.parse_args(["--resume", str(run), "--total-timesteps", "256", "--no-progress"])
    trainer = ppo.Trainer(args)
    assert trainer.state.step == first["step"] == 128
    assert len(trainer.snapshots) == first["snapshots"] >= 2
    for name, tensor in trainer.net.state_dict().items():
        assert torch.equal(tensor, saved_model[name])
    restored = ppo.flatten_optimizer(trainer.optimizer)[0]
    assert restored.keys() == saved_opt.keys() and restored
    for name in saved_opt:
        assert torch.equal(restored[name], saved_opt[name])
    trainer.run()
    second = json.loads((run / "checkpoint" / "state.json").read_text())
    assert second["step"] == 256
    logged = EventAccumulator(str(run / "tb"), size_guidance={"scalars": 0})
    logged.Reload()
    assert [e.step for e in logged.Scalars("test/stray")] == [64]  # past the checkpoint (128): dropped
    assert max(e.step for e in logged.Scalars("value_loss")) == 256
    # What the resume changed is kept with the run (args.json alone holds only the settings now).
    assert second["resumes"] == [{"step": 128, "changed": {"total_timesteps": [128, 256]}}]
    assert json.loads((run / "args.json").read_text())["resumes"] == second["resumes"]
    # A checkpoint from before a setting existed counts it at its default: changing it is recorded.
    state_file = run / "checkpoint" / "state.json"
    old = json.loads(state_file.read_text())
    del old["args"]["bc_learner_share"]
    state_file.write_text(json.dumps(old))
    later = ppo.Trainer(ppo.parse_args(["--resume", str(run), "--bc-learner-share", "0.5", "--no-progress"]))
    assert later.state.resumes[-1] == {"step": 256, "changed": {"bc_learner_share": [0.0, 0.5]}}
    assert second["updates"] == first["updates"] + 2
    # Adam's step counters go on from the saved ones: 2 updates x (64 decisions / minibatch 32) x 1 epoch.
    steps = {
        k: v for k, v in load_file(str(run / "checkpoint" / "optimizer.safetensors")).items() if k.endswith(".step")
    }
    assert steps and all(float(v) == float(saved_opt[k]) + 4 for k, v in steps.items())


def test_resume_finishes_a_save_cut_off_between_its_renames(tmp_path, capsys):
    import shutil

    run = tiny_run(tmp_path, "pans_trial_v0", "--opponents", "random-v0", "--teacher", "", steps=64)
    ckpt, old, tmp = run / "checkpoint", run / "checkpoint.old", run / "checkpoint.tmp"
    # Killed after checkpoint -> checkpoint.old, while checkpoint.tmp was still being written (no state.json yet).
    ckpt.rename(old)
    tmp.mkdir()
    (tmp / "model.safetensors").write_bytes(b"half a file")
    args = ppo.parse_args(["--resume", str(run), "--total-timesteps", "128", "--no-progress"])
    assert "resuming from checkpoint.old" in capsys.readouterr().err
    trainer = ppo.Trainer(args)
    assert trainer.state.step == 64
    trainer.run()
    assert json.loads((ckpt / "state.json").read_text())["step"] == 128
    assert not tmp.exists() and not old.exists()  # the half-written folder went with the next save
    # Killed between the renames once checkpoint.tmp was complete: the newer checkpoint.tmp is taken.
    shutil.copytree(ckpt, tmp)
    (tmp / "marker").write_text("newer")
    ckpt.rename(old)
    assert ppo.recover_checkpoint(run) == ckpt and (ckpt / "marker").exists() and old.exists()
    # A checkpoint.tmp whose state.json was cut off mid-write is passed over.
    shutil.rmtree(ckpt)
    shutil.copytree(old, tmp)
    (tmp / "state.json").write_text((tmp / "state.json").read_text()[:100])
    assert ppo.recover_checkpoint(run) == ckpt and not old.exists() and tmp.exists()
    assert json.loads((ckpt / "state.json").read_text())["step"] == 128
    # An intact checkpoint is left as it is.
    assert ppo.recover_checkpoint(run) == ckpt and tmp.exists()


def test_resume_may_end_cloning_early_and_start_ppo_with_a_teacher_term(tmp_path):
    run = tiny_run(tmp_path, "sequence_v0", "--opponents", "random-v0", "--bc-steps", "100000", steps=64)
    assert json.loads((run / "checkpoint" / "state.json").read_text())["step"] == 64
    args = ppo.parse_args(["--resume", str(run), "--bc-steps", "64", "--kl-coef", "0.5", "--kl-decay-steps", "128",
                           "--total-timesteps", "128", "--no-progress"])
    assert (args.bc_steps, args.kl_coef, args.kl_decay_steps) == (64, 0.5, 128)
    trainer = ppo.Trainer(args)
    assert trainer.kl_weight() == 0.5  # PPO starts now, the teacher term at full weight
    batch = trainer.collect()
    assert not batch["cloning"] and bool((batch["teacher"] >= 0).all())
    trainer.state.step = 64 + 64
    assert trainer.kl_weight() == pytest.approx(0.25)


@pytest.mark.parametrize("temperature", [1.0, 0.25])
def test_temperature_sets_the_policy_ppo_samples_and_trains(tmp_path, temperature):
    args = ppo.parse_args(["--game", "sequence_v0", "--run-dir", str(tmp_path / "run"), "--opponents", "random-v0",
                           "--teacher", "", "--temperature", str(temperature), *TINY])
    trainer = ppo.Trainer(args)
    batch = trainer.collect()
    with torch.no_grad():
        logits, _ = trainer.net.logits_and_value(batch["obs"])
    tempered = ppo.masked_log_probs(logits / temperature, batch["mask"])
    chosen = tempered.gather(1, batch["action"][:, None]).squeeze(1)
    # The stored behaviour log-probabilities are those of the tempered policy, so the first PPO
    # ratio is exactly 1; at the raw logits they differ whenever the temperature is not 1.
    assert torch.allclose(chosen, batch["logp"], atol=1e-5)
    raw = ppo.masked_log_probs(logits, batch["mask"]).gather(1, batch["action"][:, None]).squeeze(1)
    assert torch.allclose(raw, batch["logp"], atol=1e-5) == (temperature == 1.0)
    stats = trainer.update(batch)
    assert stats["approx_kl"] < 0.05 and np.isfinite(stats["policy_loss"])


def test_the_teacher_term_ignores_the_temperature(tmp_path):
    """The cross-entropy toward the teacher is taken on the untempered policy, at any temperature."""
    for temperature in (1.0, 0.25):
        # A learning rate of 1e-12 leaves the weights as they were, well within the tolerance (0 is refused).
        args = ppo.parse_args(["--game", "sequence_v0", "--run-dir", str(tmp_path / f"run{temperature}"),
                               "--opponents", "random-v0", "--kl-coef", "0.5", "--learning-rate", "1e-12",
                               "--temperature", str(temperature), "--seed", "3", *TINY])
        trainer = ppo.Trainer(args)
        batch = trainer.collect()
        assert bool((batch["teacher"] >= 0).all())
        teacher_ce = trainer.update(batch)["teacher_ce"]
        with torch.no_grad():
            logits, _ = trainer.net.logits_and_value(batch["obs"])
        expected = -ppo.masked_log_probs(logits, batch["mask"]).gather(1, batch["teacher"][:, None]).mean()
        assert teacher_ce == pytest.approx(float(expected), rel=1e-4)


def test_resume_restores_the_cloning_buffer_and_refuses_a_damaged_one(tmp_path, capsys):
    from safetensors.torch import load_file, save_file

    run = tiny_run(tmp_path, "sequence_v0", "--opponents", "random-v0", "--bc-steps", "100000", steps=128)
    saved = load_file(str(run / "checkpoint" / "bc_buffer.safetensors"))
    assert saved["teacher"].shape[0] == 128  # every cloned decision so far, oldest first
    assert bool(saved["mask"].gather(1, saved["teacher"][:, None]).all())
    resumed = ["--resume", str(run), "--total-timesteps", "192", "--bc-learning-rate", "3e-4", "--no-progress"]
    trainer = ppo.Trainer(ppo.parse_args(resumed))
    restored = trainer.bc.in_order()
    for name, tensor in saved.items():
        assert torch.equal(restored[name], tensor)
    trainer.update(trainer.collect())  # a resumed run may anneal the cloning learning rate
    assert [g["lr"] for g in trainer.optimizer.param_groups] == [3e-4]
    # A smaller buffer on resume keeps the newest decisions.
    trainer.args.bc_buffer = 100
    buffer = ppo.ReplayBuffer.load(run / "checkpoint" / "bc_buffer.safetensors", trainer.bc_capacity(),
                                   trainer.obs_shape, trainer.num_actions)
    assert torch.equal(buffer.in_order()["teacher"], saved["teacher"][-100:])
    # Damaged: a teacher action outside its mask, or a tensor of the wrong shape.
    bad = dict(saved)
    bad["mask"] = torch.zeros_like(saved["mask"])
    save_file(bad, str(run / "checkpoint" / "bc_buffer.safetensors"))
    with pytest.raises(SystemExit, match="not legal under its saved mask"):
        ppo.Trainer(ppo.parse_args(["--resume", str(run), "--no-progress"]))
    bad = dict(saved, obs=saved["obs"][:, :1].contiguous())
    save_file(bad, str(run / "checkpoint" / "bc_buffer.safetensors"))
    with pytest.raises(SystemExit, match="tensor 'obs'"):
        ppo.Trainer(ppo.parse_args(["--resume", str(run), "--no-progress"]))
    # Once the PPO stage has begun the buffer is no longer written, and a longer cloning says it starts empty.
    run2 = tiny_run(tmp_path / "b", "sequence_v0", "--opponents", "random-v0", "--bc-steps", "64", steps=128)
    assert not (run2 / "checkpoint" / "bc_buffer.safetensors").exists()
    trainer = ppo.Trainer(ppo.parse_args(["--resume", str(run2), "--bc-steps", "256", "--total-timesteps", "256",
                                          "--no-progress"]))
    assert trainer.bc is None
    assert "with an empty buffer" in capsys.readouterr().err


def test_a_run_that_ends_with_its_cloning_keeps_the_buffer_for_a_longer_cloning(tmp_path):
    from safetensors.torch import load_file

    run = tiny_run(tmp_path, "sequence_v0", "--opponents", "random-v0", "--bc-steps", "128", steps=128)
    saved = load_file(str(run / "checkpoint" / "bc_buffer.safetensors"))
    assert saved["teacher"].shape[0] == 128
    trainer = ppo.Trainer(ppo.parse_args(["--resume", str(run), "--bc-steps", "256", "--total-timesteps", "256",
                                          "--no-progress"]))
    assert trainer.cloning
    assert torch.equal(trainer.bc.in_order()["teacher"], saved["teacher"])
    trainer.update(trainer.collect())
    assert trainer.bc.size > 128  # the new decisions join the old ones


def test_a_cloning_run_resumes_with_another_teacher_and_a_smaller_buffer(tmp_path, capsys):
    """A run that cloned a heuristic goes on with another teacher only when asked to mix their labels
    (--mix-teachers): without it the resume is refused naming both; with it the resume keeps the newest of
    the old labels and records the change; a teacher the game lacks, or a new target kind, is refused."""
    from safetensors.torch import load_file

    run = tiny_run(tmp_path, "sequence_v0", "--opponents", "random-v0", "--bc-steps", "128", steps=128)
    saved = load_file(str(run / "checkpoint" / "bc_buffer.safetensors"))
    resumed = ["--resume", str(run), "--teacher", "random-v0", "--bc-buffer", "100", "--bc-learner-share", "0",
               "--bc-steps", "192", "--total-timesteps", "192", "--no-progress"]
    with pytest.raises(CheckpointError) as refused:
        ppo.Trainer(ppo.parse_args(resumed))
    message = str(refused.value)
    assert "holds labels of sequence_v0/heuristic-v1" in message and "teacher is sequence_v0/random-v0" in message
    assert "--mix-teachers" in message and f"--init-policy {run}" in message
    trainer = ppo.Trainer(ppo.parse_args([*resumed, "--mix-teachers"]))
    assert trainer.args.teacher == "random-v0"
    assert torch.equal(trainer.bc.in_order()["teacher"], saved["teacher"][-100:])  # the newest old labels
    last = trainer.state.resumes[-1]  # the run's history says which teacher labelled from where
    assert last["step"] == 128
    assert last["changed"]["teacher"] == ["heuristic-v1", "random-v0"] and last["changed"]["bc_buffer"] == [65536, 100]
    assert last["changed"]["mix_teachers"] == [False, True]
    batch = trainer.collect()
    assert trainer.teachers.local.agent_id == "sequence_v0/random-v0"
    assert torch.equal(batch["action"], batch["teacher"])  # share 0: the new teacher plays every decision
    trainer.update(batch)
    assert trainer.bc.size == 100 and torch.equal(trainer.bc.in_order()["teacher"][-64:], batch["teacher"])
    with pytest.raises(SystemExit):
        ppo.parse_args(["--resume", str(run), "--teacher", "search-v1"])  # Sequence ships no search-v1
    assert "--teacher: no agent 'search-v1' for sequence_v0" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        ppo.parse_args(["--resume", str(run), "--teacher-targets", "improved"])
    assert "cannot be changed: ['teacher_targets']" in capsys.readouterr().err


@pytest.mark.parametrize("share", [0.0, 1.0])
def test_dagger_share_decides_who_plays_while_the_teacher_labels_every_decision(tmp_path, share):
    args = ppo.parse_args(
        ["--game", "sequence_v0", "--run-dir", str(tmp_path / "run"), "--opponents", "random-v0", "--bc-steps", "1000",
         "--bc-learner-share", str(share), *TINY]
    )
    trainer = ppo.Trainer(args)
    batch = trainer.collect()
    assert batch["cloning"] and bool((batch["teacher"] >= 0).all())
    with torch.no_grad():
        logits, _ = trainer.net.logits_and_value(batch["obs"])
        greedy = ppo.masked_log_probs(logits, batch["mask"]).argmax(-1)
    played = batch["action"]
    if share == 0.0:
        assert torch.equal(played, batch["teacher"])
    else:
        assert torch.equal(played, greedy)
        assert not torch.equal(played, batch["teacher"])  # an untrained network disagrees somewhere
    with pytest.raises(SystemExit):
        ppo.parse_args(["--game", "sequence_v0", "--bc-learner-share", "1.5"])


def test_resume_restores_the_trainer_state_and_refuses_what_it_cannot_resume(tmp_path, capsys):
    run = tiny_run(tmp_path, "dojo_v0", "--opponents", "random-v0", "--teacher", "", steps=64)
    path = run / "checkpoint" / "state.json"
    saved = json.loads(path.read_text())
    trainer = ppo.Trainer(ppo.parse_args(["--resume", str(run), "--no-progress"]))
    fields = {f.name for f in dataclasses.fields(ppo.TrainerState)}
    assert dataclasses.asdict(trainer.state) == {k: saved[k] for k in fields}
    # A checkpoint from before the optional fields existed resumes with their defaults.
    path.write_text(json.dumps({k: v for k, v in saved.items() if k not in ppo.TrainerState.OPTIONAL}))
    old = ppo.Trainer(ppo.parse_args(["--resume", str(run), "--no-progress"])).state
    assert old.step == saved["step"] and old.resumes == [] and old.init_origin is None
    assert old.cpu_breakdown["total"] == 0.0  # the parts are counted afresh from the resume
    path.write_text(json.dumps({k: v for k, v in saved.items() if k != "next_eval"}))
    with pytest.raises(CheckpointError, match=r"too old to resume from: it lacks \['next_eval'\]"):
        ppo.Trainer(ppo.parse_args(["--resume", str(run), "--no-progress"]))
    path.write_text(json.dumps({**saved, "format": "something-else"}))
    with pytest.raises(CheckpointError, match="is not a training.ppo checkpoint"):
        ppo.Trainer(ppo.parse_args(["--resume", str(run), "--no-progress"]))


def test_resume_refuses_changed_training_args_and_a_second_fresh_run(tmp_path):
    run = tiny_run(tmp_path, "pans_trial_v0", "--opponents", "random-v0", "--teacher", "", steps=64)
    with pytest.raises(SystemExit):
        ppo.parse_args(["--resume", str(run), "--gamma", "0.9"])
    with pytest.raises(SystemExit):
        ppo.parse_args(["--resume", str(run), "--conv-channels", "8"])
    changed = ppo.parse_args(["--resume", str(run), "--learning-rate", "0.0001", "--opponents", "random-v0", "self"])
    assert changed.learning_rate == 0.0001 and changed.opponents == ["random-v0", "self"]
    assert changed.gamma == 0.995 and changed.game == "pans_trial_v0"
    with pytest.raises(SystemExit, match="already holds a run"):
        ppo.main(["--game", "pans_trial_v0", "--run-dir", str(run), "--opponents", "random-v0", "--teacher", "", *TINY])


def test_masked_log_probs_match_a_reference():
    gen = torch.Generator().manual_seed(0)
    logits = torch.randn(6, 9, generator=gen) * 3
    mask = torch.rand(6, 9, generator=gen) < 0.5
    mask[:, 4] = True
    got = ppo.masked_log_probs(logits, mask)
    for row in range(6):
        legal = mask[row].nonzero().flatten().tolist()
        z = logits[row, legal]
        ref = z - torch.log(torch.exp(z - z.max()).sum()) - z.max()
        assert torch.allclose(got[row, legal], ref, atol=1e-5)
        illegal = [a for a in range(9) if a not in legal]
        assert (got[row, illegal] < -1e8).all()
        assert torch.isclose(got[row].exp().sum(), torch.tensor(1.0))
    samples = ppo.sample(got.repeat(200, 1))
    assert mask.repeat(200, 1).gather(1, samples[:, None]).all()  # never an illegal action


#: Every game that declares a board, in configurations whose board or table sizes differ.
BOARD_GAMES = [
    ("sequence_v0", {}), ("sequence_v0", {"num_teams": 3}), ("pans_trial_v0", {}), ("dojo_v0", {}),
    ("dojo_v0", {"num_players": 8}), ("wizard_arena_v0", {}), ("wizard_arena_v0", {"map_size": 10, "num_bots": 3}),
]


def test_every_game_that_declares_a_board_is_covered_by_the_list_above():
    assert {name for name, _ in BOARD_GAMES} == {n for n in envs.NAMES if envs.make_game(n).board_layout is not None}


@pytest.mark.parametrize(("game", "config"), BOARD_GAMES, ids=lambda v: str(v))
def test_board_conv_reads_the_board_slice_and_routes_square_heads(game, config):
    g = envs.make_game(game, **config)
    obs_dim = int(np.prod(g.observation_shape))
    arch, kwargs = default_arch(g, "board_conv")
    net = build_architecture(arch, **kwargs)
    layout = g.board_layout
    c, h, w = layout["channels"], layout["height"], layout["width"]
    # Value (channel 2, square 7) must land at channel 2, row 7 // w, column 7 % w.
    obs = torch.zeros(1, obs_dim)
    index = 2 * h * w + 7 if layout["layout"] == "planes" else 7 * c + 2
    obs[0, index] = 1.0
    board = net._board(obs)
    assert board.shape == (1, c, h, w)
    assert board[0, 2, 7 // w, 7 % w] == 1.0 and board.sum() == 1.0
    # A real observation goes through, and auto picks the conv net for a game with a board.
    state = g.new_initial_state(seed=3)
    real = torch.as_tensor(g.observe(state, state.current_player())).reshape(1, -1)
    assert net(real).shape == (1, g.num_actions)
    assert default_arch(g)[0] == "board_conv" and default_arch(g, "mlp_ac")[0] == "mlp_ac"
    # With the heads' weights zeroed, each square action's logit is its head's bias.
    if layout["square_heads"]:
        with torch.no_grad():
            net.square_head.weight.zero_()
            for k in range(len(layout["square_heads"])):
                net.square_head.bias[k] = 10.0 * (k + 1)
            logits = net(torch.rand(2, obs_dim))
        for k, (first, count) in enumerate(layout["square_heads"]):
            assert torch.allclose(logits[:, first : first + count], torch.full((2, count), 10.0 * (k + 1)))
        covered = {a for first, count in layout["square_heads"] for a in range(first, first + count)}
        others = [a for a in range(g.num_actions) if a not in covered]
        assert (logits[:, others].abs() < 5).all()


@pytest.mark.parametrize("config", [{}, {"map_size": 10, "num_bots": 3}], ids=["16x16", "10x10"])
def test_wizard_arena_board_planes_put_each_bot_on_its_cell(config):
    """The layout Wizard Arena declares matches its observation at every map size: the "self" plane
    (channel 1) holds the seat's bot, the "other bots" plane (3) every other bot, on their cells."""
    g = envs.make_game("wizard_arena_v0", **config)
    net = build_architecture("board_conv", **default_arch(g, "board_conv")[1])
    state = g.new_initial_state(seed=11)
    size = g.board_layout["height"]
    for seat in range(g.num_players):
        board = net._board(torch.as_tensor(g.observe(state, seat)).reshape(1, -1))[0]
        here = state.pos[seat]
        assert board[1].sum() == 1.0 and board[1, here // size, here % size] == 1.0
        others = {state.pos[i] for i in range(g.num_players) if i != seat}
        assert {int(r) * size + int(col) for r, col in torch.nonzero(board[3])} == others


def test_a_game_without_a_board_has_no_board_conv():
    class NoBoard:
        name, board_layout, observation_shape, num_actions = "plain", None, (7,), 3

    assert default_arch(NoBoard())[0] == "mlp_ac"
    with pytest.raises(ValueError, match="declares no board layout"):
        default_arch(NoBoard(), "board_conv")


@pytest.mark.parametrize("config", [{"observation_version": 3}, {"observation_version": 3, "num_bots": 3,
                                                                  "map_size": 8}, {}], ids=["v3", "v3-3bots", "v2"])
def test_table_entity_reads_rows_alike_and_routes_their_action_values(config):
    """The table net treats the bots table as a set (a row says by its own values whose it is):
    swapping two rows leaves every logit and the value unchanged. With the trunk's
    policy head zeroed and the weights fixed, each move's logit is the sum of the rows' values for
    that move plus the Gary block's, as ``table_layout`` routes them."""
    g = envs.make_game("wizard_arena_v0", **config)
    arch, kwargs = default_arch(g, "table_entity", hidden=32)
    assert arch == "table_entity" and kwargs["entity"] == 16
    net = build_architecture(arch, **kwargs)
    table = g.table_layout
    off, rows, row_len = table["offset"], table["rows"], table["row_len"]
    state = g.new_initial_state(seed=5)
    obs = torch.as_tensor(g.observe(state, 0)).reshape(1, -1)
    swapped = obs.clone()
    a, b = off + 1 * row_len, off + (rows - 1) * row_len
    swapped[0, a:a + row_len], swapped[0, b:b + row_len] = obs[0, b:b + row_len], obs[0, a:a + row_len]
    with torch.no_grad():
        (l1, v1), (l2, v2) = net.logits_and_value(obs), net.logits_and_value(swapped)
    assert torch.allclose(l1, l2, atol=1e-5) and torch.allclose(v1, v2, atol=1e-5)
    if not table["row_actions"]:
        assert net.row_weights is None and net.block_weights is None
        return
    with torch.no_grad():
        net.policy.weight.zero_()
        net.policy.bias.zero_()
        net.row_weights.weight.zero_()
        net.row_weights.bias.fill_(1.0)
        net.block_weights.weight.zero_()
        net.block_weights.bias.fill_(2.0)
        x = torch.rand(3, obs.shape[1])
        logits = net(x)
    (start, first, count), (at, _, _) = table["row_actions"][0], table["action_blocks"][0]
    rows_values = x[:, off:off + rows * row_len].reshape(3, rows, row_len)[:, :, start:start + count].sum(dim=1)
    want = torch.zeros(3, g.num_actions)
    want[:, first:first + count] = rows_values + 2.0 * x[:, at:at + count]
    assert torch.allclose(logits, want, atol=1e-5)


def test_table_entity_needs_a_table_and_refuses_ranges_outside_it():
    class NoTable:
        name, board_layout, table_layout, observation_shape, num_actions = "plain", None, None, (7,), 3

    with pytest.raises(ValueError, match="declares no table layout"):
        default_arch(NoTable(), "table_entity")
    g = envs.make_game("wizard_arena_v0", observation_version=3)
    kwargs = default_arch(g, "table_entity")[1]
    for key, bad in (("row_actions", [[30, 0, 9]]), ("row_actions", [[0, 10, 9]]), ("action_blocks", [[2050, 0, 9]]),
                     ("rows", 100)):
        with pytest.raises(ValueError, match="must"):
            build_architecture("table_entity", **{**kwargs, key: bad})


def test_board_conv_first_kernel_sees_a_line_of_five_and_bad_sizes_are_refused():
    g = envs.make_game("sequence_v0")
    obs_dim = int(np.prod(g.observation_shape))
    arch, kwargs = default_arch(g, "board_conv", first_kernel=5, conv_layers=1)
    assert kwargs["first_kernel"] == 5
    net = build_architecture(arch, **kwargs)
    assert net.convs[0].kernel_size == (5, 5) and net.convs[0].padding == (2, 2)
    # One chip two squares away changes the first layer's output at the centre square.
    base = torch.zeros(1, obs_dim)
    moved = base.clone()
    moved[0, 4 * 10 + 7] = 1.0  # channel 0, row 4, column 7; the centre below is row 4, column 5
    with torch.no_grad():
        a = net.convs(net._board(base))[0, :, 4, 5]
        b = net.convs(net._board(moved))[0, :, 4, 5]
    assert not torch.allclose(a, b)
    assert default_arch(g, "board_conv")[1].get("first_kernel", 3) == 3
    for bad in (4, 9):
        with pytest.raises(ValueError, match="first_kernel must be 3, 5 or 7"):
            build_architecture(arch, **{**kwargs, "first_kernel": bad})


def test_team_game_learner_decides_only_for_its_team():
    game = envs.make_game("sequence_v0", players_per_team=2)

    def deal(g):
        return 100 + g, "random-v0", (lambda s: agents.make("sequence_v0/random-v0", seed=s)), g % 2

    tables = ppo.Tables(game, 3, deal, max_actions=400, max_games=6)
    tables.advance(lambda k, rows: [])
    rng = np.random.default_rng(0)
    decisions = 0
    while any(tables.active):
        rows = [i for i in range(tables.n) if tables.active[i]]
        chosen = []
        for i in rows:
            seat = tables.state(i).current_player()
            assert seat in tables.learner[i] and seat % 2 == tables.team[i]
            assert tables.learner_seat(i) == seat
            decisions += 1
            chosen.append(int(rng.choice(tables.state(i).legal_actions())))
        obs, mask = tables.observe(rows)  # the batch's buffers are the engine's observation and mask
        for j, i in enumerate(rows):
            state = tables.state(i)
            seat = state.current_player()
            assert np.array_equal(obs[j], game.observe(state, seat))
            assert np.array_equal(mask[j], state.legal_mask().astype(bool))
        tables.play(rows, chosen)
        tables.advance(lambda k, rows: [])
    assert len(tables.finished) == 6 and decisions > 0
    assert {len(tables.learner[i]) for i in range(3)} == {2}
    assert all(o.length > 0 for o in tables.finished)


def test_tables_refuse_an_illegal_learner_action_before_any_table_moves():
    game = envs.make_game("sequence_v0")

    def deal(g):
        return 7 + g, "random-v0", (lambda s: agents.make("sequence_v0/random-v0", seed=s)), 0

    tables = ppo.Tables(game, 2, deal, max_actions=400)
    tables.advance(lambda k, rows: [])
    before = [game.save(tables.state(i)) for i in range(2)]
    legal = int(np.flatnonzero(tables.state(0).legal_mask())[0])
    illegal = int(np.flatnonzero(tables.state(1).legal_mask() == 0)[0])
    with pytest.raises(IllegalActionError, match=f"table 1: action {illegal} .* is illegal"):
        tables.play([0, 1], [legal, illegal])
    assert [game.save(tables.state(i)) for i in range(2)] == before


def test_tables_cut_games_at_max_actions():
    game = envs.make_game("dojo_v0")

    def deal(g):
        return g, "random-v0", (lambda s: agents.make("dojo_v0/random-v0", seed=s)), 0

    tables = ppo.Tables(game, 2, deal, max_actions=7, max_games=4)
    tables.advance(lambda k, rows: [])
    rng = np.random.default_rng(1)
    while any(tables.active):
        rows = [i for i in range(tables.n) if tables.active[i]]
        _, mask = tables.observe(rows)
        tables.play(rows, [int(rng.choice(np.flatnonzero(m))) for m in mask])
        tables.advance(lambda k, rows: [])
    assert len(tables.finished) == 4
    assert all(o.truncated and o.length == 7 for o in tables.finished)


def test_help_documents_every_option(capsys):
    with pytest.raises(SystemExit):
        ppo.main(["--help"])
    text = " ".join(capsys.readouterr().out.split())
    for name in ("--bc-steps", "--kl-coef", "--opponents", "--resume", "--eval-games", "--snapshot-every"):
        assert name in text
    assert "learner decisions played by the teacher and cloned before PPO starts (0: no cloning) (default: 0)" in text


@pytest.mark.parametrize(
    "argv,needle",
    [
        (["--game", "chess"], "not a game"),
        (["--opponents", "nobody-v9"], "unknown agent kind"),
        (["--eval-opponents", "self"], "training opponent only"),
        (["--config", "[1]"], "JSON object"),
        (["--opponents", "random-v0", "--opponent-weights", "1", "2"], "one non-negative weight"),
        (["--temperature", "0"], "must lie in [0.05, 20]"),
        (["--game", "sequence_v0", "--focus"], "--focus: sequence_v0 declares no focus_channels"),
        (["--game", "pans_trial_v0", "--focus", "--net", "mlp_ac"], "--focus: focus is a board_conv setting"),
        (["--game", "pans_trial_v0", "--backend", "numpy"], "--backend 'numpy' is not available for pans_trial_v0"),
    ],
)
def test_bad_arguments_are_refused_with_the_allowed_values(argv, needle, capsys):
    with pytest.raises(SystemExit):
        ppo.parse_args(argv)
    assert needle in capsys.readouterr().err


def test_behaviour_cloning_learns_the_teachers_choices(tmp_path):
    args = ppo.parse_args(
        [
            "--game",
            "sequence_v0",
            "--run-dir",
            str(tmp_path / "bc"),
            "--opponents",
            "random-v0",
            "--teacher",
            "heuristic-v1",
            "--bc-steps",
            "100000",
            "--num-envs",
            "8",
            "--num-steps",
            "16",
            "--bc-batches",
            "25",
            "--bc-minibatch-size",
            "64",
            "--no-progress",
        ]
    )
    trainer = ppo.Trainer(args)
    batch = trainer.collect()
    assert batch["cloning"] and (batch["teacher"] >= 0).all()
    assert torch.equal(batch["action"], batch["teacher"])  # the teacher plays while cloning
    assert batch["mask"].gather(1, batch["teacher"][:, None]).all()
    first = trainer.clone_update(batch)
    for _ in range(5):
        last = trainer.clone_update(batch)
    assert trainer.bc.size == 6 * batch["action"].shape[0]  # each call adds its rollout to the buffer
    assert last["teacher_ce"] < 0.75 * first["teacher_ce"]
    assert last["teacher_accuracy"] > first["teacher_accuracy"]


def test_evaluate_a_run_folder_seeded_with_seats_rotated(tmp_path):
    run = tiny_run(tmp_path, "pans_trial_v0", "--opponents", "random-v0", "--teacher", "", steps=64)
    argv = ["--evaluate", str(run), "--eval-games", "6", "--eval-opponents", "random-v0", "--max-actions", "300"]
    report = ppo.main(argv)
    result = report["results"]["random-v0"]
    assert result["games"] == 6 and result["wins"] + result["draws"] + result["losses"] == 6
    assert 0 <= result["win_rate_ci95"][0] <= result["win_rate"] <= result["win_rate_ci95"][1] <= 1
    validate_report(report)
    assert result["games_by_side"] == [3, 3]  # game g puts the learner on side g % 2
    assert sum(result["wins_by_side"]) == result["wins"]
    first = run / "policy" / "eval-6-seed1000000-random-v0.json"
    assert first.exists()
    assert ppo.main(argv)["results"] == report["results"]  # same seeds, same games, same outcome
    # The game comes from the policy, so its own opponents are accepted without --game.
    other = ppo.main(["--evaluate", str(run / "policy"), "--eval-games", "6", "--eval-opponents", "experienced-v1"])
    assert other["game"] == "pans_trial_v0" and other["results"]["experienced-v1"]["games"] == 6
    # ... and its report sits beside the first one, which it does not replace
    assert (run / "policy" / "eval-6-seed1000000-experienced-v1.json").exists()
    assert json.loads(first.read_text())["results"] == report["results"]


def test_evaluate_a_checkpoint_id_writes_its_report_outside_the_checkpoint_folder(tmp_path, monkeypatch):
    from agents.checkpoint import checkpoint_dir

    shipped = checkpoint_dir() / "pans_trial_v0" / "ppo-v3"
    before = sorted(p.name for p in shipped.iterdir())
    monkeypatch.chdir(tmp_path)
    report = ppo.main(["--evaluate", "pans_trial_v0/ppo-v3", "--eval-games", "2", "--eval-opponents", "random-v0"])
    assert report["game"] == "pans_trial_v0" and report["results"]["random-v0"]["games"] == 2
    written = tmp_path / "runs" / "ppo-evaluate" / "pans_trial_v0" / "ppo-v3" / "eval-2-seed1000000-random-v0.json"
    assert pathlib.Path(report["written_to"]).resolve() == written.resolve() and written.is_file()
    assert sorted(p.name for p in shipped.iterdir()) == before


def test_evaluate_refuses_another_game_and_a_folder_without_a_policy(tmp_path, capsys):
    from agents.policy_io import CheckpointError

    with pytest.raises(CheckpointError, match="^--evaluate: "):  # a file's fault: the command prints it in one line
        ppo.parse_args(["--evaluate", str(tmp_path)])
    run = tiny_run(tmp_path, "pans_trial_v0", "--opponents", "random-v0", "--teacher", "", steps=64)
    with pytest.raises(SystemExit):
        ppo.parse_args(["--evaluate", str(run), "--game", "sequence_v0"])
    assert "holds a policy for 'pans_trial_v0', not --game 'sequence_v0'" in capsys.readouterr().err


def test_list_options_take_values_of_their_annotated_type():
    args = ppo.parse_args(["--game", "sequence_v0", "--opponents", "random-v0", "self", "--opponent-weights", "3", "0.5"])
    assert args.opponent_weights == [3.0, 0.5] and all(isinstance(w, float) for w in args.opponent_weights)
    assert args.opponents == ["random-v0", "self"]


def test_teacher_workers_give_the_same_labels_and_report_their_cpu_time():
    from agents.runner import seat_inputs
    from training.teachers import TeacherLabels

    game = envs.make_game("sequence_v0")
    rng = np.random.default_rng(5)
    states = [game.new_initial_state(seed=s) for s in range(5)]
    alone = TeacherLabels("sequence_v0", {}, "heuristic-v1", seed=3, workers=0)
    shared = TeacherLabels("sequence_v0", {}, "heuristic-v1", seed=3, workers=2)
    try:
        for _ in range(12):
            rows = [i for i, s in enumerate(states) if not s.is_terminal()]
            inputs = [(i, states[i].current_player(), *seat_inputs(states[i], states[i].current_player())) for i in rows]
            labels = alone.actions(inputs)
            assert shared.actions(inputs) == labels
            for i, action in zip(rows, labels):
                assert states[i].legal_mask()[action]
                # move on with a random legal action so the tables drift apart from the teacher's line
                states[i].apply_action(int(rng.choice(np.flatnonzero(states[i].legal_mask()))))
        # this process labels one table in 2 * workers + 1; every worker two
        assert [shared.process_of(i) for i in range(10)] == [0, 1, 2, 1, 2, 0, 1, 2, 1, 2]
        assert {alone.process_of(i) for i in range(10)} == {0}
        assert alone.take_worker_seconds() == 0.0
        assert shared.take_worker_seconds() > 0.0 and shared.take_worker_seconds() == 0.0
    finally:
        shared.close()
    with pytest.raises(ValueError, match="teacher workers must be a whole number >= 0"):
        TeacherLabels("sequence_v0", {}, "heuristic-v1", seed=3, workers=-1)


def test_teacher_workers_leave_when_the_trainer_is_killed(tmp_path):
    import os
    import subprocess
    import sys
    import time

    script = (
        "import os, envs\n"
        "from agents.runner import seat_inputs\n"
        "from training.teachers import TeacherLabels\n"
        "t = TeacherLabels('sequence_v0', {}, 'heuristic-v1', seed=1, workers=1)\n"
        "states = [envs.make_game('sequence_v0').new_initial_state(seed=s) for s in range(3)]\n"
        "t.actions([(i, s.current_player(), *seat_inputs(s, s.current_player())) for i, s in enumerate(states)])\n"
        "print(*[p.pid for pool in t.pools for p in pool._processes.values()], flush=True)\n"
        "os._exit(0)  # no shutdown, as when a signal stops a training run\n"
    )
    root = pathlib.Path(__file__).resolve().parents[1]
    out = subprocess.run([sys.executable, "-c", script], cwd=root, capture_output=True, text=True, timeout=120)
    pids = [int(p) for p in out.stdout.split()]
    assert pids, out.stderr

    def alive(pid: int) -> bool:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True

    deadline = time.monotonic() + 20
    while any(alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not any(alive(p) for p in pids)


def test_init_policy_starts_a_new_run_from_another_runs_weights(tmp_path):
    from safetensors.torch import load_file

    first = tiny_run(tmp_path, "pans_trial_v0", "--opponents", "random-v0", "--teacher", "", "--hidden", "32", steps=64)
    start = load_file(str(first / "policy" / "policy.safetensors"))
    second = tmp_path / "second"
    args = ppo.parse_args(["--game", "pans_trial_v0", "--run-dir", str(second), "--init-policy", str(first),
                           "--hidden", "32", "--opponents", "random-v0", "self", "--teacher", "", "--seed", "5",
                           "--total-timesteps", "64", "--eval-every", "64", *TINY])
    trainer = ppo.Trainer(args)
    # The run starts at step 0 with the other run's weights, and its 'self' pool starts with them too.
    assert trainer.state.step == 0
    for name, tensor in trainer.net.state_dict().items():
        assert torch.equal(tensor, start[name]), name
        assert torch.equal(trainer.snapshots[0].state_dict()[name], start[name]), name
    trainer.run()
    origin = {"policy": str(first / "policy"), "steps": 64, "cpu_seconds": json.loads(
        (first / "policy" / "policy.json").read_text())["meta"]["cpu_seconds"]}
    state = json.loads((second / "checkpoint" / "state.json").read_text())
    assert state["init_origin"] == origin and state["step"] == 64
    assert json.loads((second / "policy" / "policy.json").read_text())["meta"]["init_origin"] == origin
    assert json.loads((second / "args.json").read_text())["init_policy"] == str(first)
    # Resuming continues the run's own weights (not the starting policy's) and keeps the origin;
    # the starting policy cannot be swapped on resume.
    resumed = ppo.Trainer(ppo.parse_args(["--resume", str(second), "--total-timesteps", "128", "--no-progress"]))
    saved = load_file(str(second / "checkpoint" / "model.safetensors"))
    assert resumed.state.init_origin == origin
    assert all(torch.equal(t, saved[n]) for n, t in resumed.net.state_dict().items())
    assert not all(torch.equal(t, start[n]) for n, t in resumed.net.state_dict().items())
    with pytest.raises(SystemExit):
        ppo.parse_args(["--resume", str(second), "--init-policy", str(first)])


def test_init_policy_from_a_shipped_id_loads_its_weights(tmp_path):
    from safetensors.torch import load_file

    from agents.checkpoint import checkpoint_dir, policy_folder

    folder = policy_folder("pans_trial_v0/ppo-v3")
    assert folder == checkpoint_dir() / "pans_trial_v0" / "ppo-v3"
    args = ppo.parse_args(["--game", "pans_trial_v0", "--run-dir", str(tmp_path / "run"), "--init-policy",
                           "pans_trial_v0/ppo-v3", "--conv-channels", "32", "--hidden", "256", "--teacher", "",
                           "--opponents", "random-v0", *TINY])
    trainer = ppo.Trainer(args)
    shipped = load_file(str(folder / "policy.safetensors"))
    assert all(torch.equal(t, shipped[n]) for n, t in trainer.net.state_dict().items())
    assert trainer.state.init_origin["steps"] == 1_587_200


@pytest.mark.parametrize(
    "argv,needle",
    [
        (["--game", "pans_trial_v0", "--init-policy", "pans_trial_v0/ppo-v3"],
         "conv_channels 32 (these flags: 16), hidden 256 (these flags: 128); its run used --net auto "
         "--conv-channels 32 --conv-layers 2 --first-kernel 3 --hidden 256"),
        (["--game", "pans_trial_v0", "--init-policy", "pans_trial_v0/ppo-v3", "--conv-channels", "32", "--hidden", "256",
          "--focus"], "focus_channels None (these flags: [10, 11])"),
        (["--game", "pans_trial_v0", "--init-policy", "sequence_v0/ppo-v4"], "policy for 'sequence_v0', not 'pans_trial_v0'"),
        (["--game", "sequence_v0", "--config", '{"players_per_team": 2}', "--init-policy", "sequence_v0/ppo-v4"],
         "'players_per_team': 1"),
        (["--game", "wizard_arena_v0", "--init-policy", "wizard_arena_v0/ppo-v4"], "observation_version"),
        (["--game", "pans_trial_v0", "--init-policy", "pans_trial_v0/nothing-v9"],
         "neither a checkpoint id of"),
        (["--game", "pans_trial_v0", "--init-policy", "no/such/folder"], "nor a folder holding policy.json"),
    ],
)
def test_init_policy_that_cannot_start_the_run_is_refused_saying_why(argv, needle):
    from agents.policy_io import CheckpointError

    with pytest.raises(CheckpointError) as refused:
        ppo.parse_args([*argv, "--teacher", ""])
    assert str(refused.value).startswith("--init-policy: ") and needle in str(refused.value)


def test_init_policy_refuses_a_damaged_policy_file(tmp_path, capsys):
    run = tiny_run(tmp_path, "pans_trial_v0", "--opponents", "random-v0", "--teacher", "", "--hidden", "32", steps=64)
    weights = run / "policy" / "policy.safetensors"
    weights.write_bytes(weights.read_bytes()[:100])
    from agents.policy_io import CheckpointError

    with pytest.raises(CheckpointError, match="^--init-policy: .*not a valid safetensors file"):
        ppo.parse_args(["--game", "pans_trial_v0", "--init-policy", str(run), "--hidden", "32", "--teacher", ""])


def test_help_shows_every_option_text_whole(capsys):
    from training.cli import field_docs

    docs = field_docs(ppo.Args)
    assert docs["net"].endswith("(a shared encoder over the rows of the game's table_layout)")
    assert docs["init_policy"].endswith("(a mismatch names the flags)")
    with pytest.raises(SystemExit):
        ppo.parse_args(["--help"])
    shown = " ".join(capsys.readouterr().out.split())
    for name in ("net", "init_policy", "hidden", "resume", "seed"):
        assert " ".join(docs[name].split()) in shown, name


def test_shared_names_old_spellings_refused_and_runs_saved_under_the_old_names(capsys):
    from training.ppo.run_state import migrate_saved_args

    args = ppo.parse_args(["--total-timesteps", "4096", "--no-progress"])
    assert args.total_timesteps == 4096 and args.norm_adv and args.num_minibatches == 8
    with pytest.raises(SystemExit):
        ppo.parse_args(["--total-steps", "4096"])
    assert "--total-steps is gone: give --total-timesteps" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        ppo.parse_args(["--minibatch-size", "32"])  # another meaning now: --num-minibatches
    with pytest.raises(SystemExit):
        ppo.parse_args(["--num-envs", "2", "--num-steps", "4", "--num-minibatches", "9"])
    # A run saved before the rename resumes with the same minibatches (ceil(rollout / minibatch_size)).
    old = {"total_steps": 100, "minibatch_size": 1024, "num_envs": 64, "num_steps": 32, "seed": 3}
    assert migrate_saved_args(old) == {"total_timesteps": 100, "num_minibatches": 2, "num_envs": 64, "num_steps": 32,
                                       "seed": 3}
    assert migrate_saved_args({"minibatch_size": 48, "num_envs": 4, "num_steps": 16})["num_minibatches"] == 2


def test_a_search_teacher_over_the_trained_network_labels_the_cloning(tmp_path):
    """Expert iteration: --teacher search-v1 --teacher-base <run> makes the teacher a rollout search over that
    run's network, in this process and in a worker alike; its labels are legal and the run clones them."""
    from training.teachers import TeacherLabels

    first = tiny_run(tmp_path, "pans_trial_v0", "--opponents", "random-v0", "--teacher", "", "--hidden", "32", steps=64)
    labels = TeacherLabels("pans_trial_v0", {}, "search-v1", seed=3, workers=1,
                           kwargs={"base": str(first), "search": {"simulations": 2}})
    try:
        game = envs.make_game("pans_trial_v0")
        inputs = []
        for i in range(3):
            state = game.new_initial_state(np.random.default_rng(i))
            while int(state.legal_mask().sum()) < 2:
                state.apply_action(int(np.flatnonzero(state.legal_mask())[0]))
            seat = state.current_player()
            inputs.append((i, seat, state.seat_observation(seat), state.player_view(seat)))
        acts = labels.actions(inputs)
        assert labels.process_of(1) == 1 and labels.take_worker_seconds() > 0  # table 1 was labelled by the worker
        assert all(bool(job[2]["action_mask"][a]) for job, a in zip(inputs, acts))
        teacher = labels.local.cache[(0, inputs[0][1])]
        assert isinstance(teacher.base_agent, PolicyAgent) and teacher.base_agent.path == first / "policy"
        assert teacher.search["simulations"] == 2 and teacher.search["turns"] == 3  # over search-v1's own
    finally:
        labels.close()
    second = tiny_run(tmp_path / "second", "pans_trial_v0", "--opponents", "random-v0", "--hidden", "32",
                      "--init-policy", str(first), "--teacher", "search-v1", "--teacher-base", str(first),
                      "--teacher-search", "simulations=2", "margin=0.1",
                      "--bc-steps", "64", "--bc-learner-share", "0.5", steps=64)
    saved = json.loads((second / "args.json").read_text())
    assert (saved["teacher"], saved["teacher_base"]) == ("search-v1", str(first))
    assert saved["teacher_search"] == ["simulations=2", "margin=0.1"]


def test_a_label_run_whose_base_network_changed_between_resumes_is_refused(tmp_path):
    """The teacher's base is a policy folder: if its weights change while the run is stopped (the folder of a
    run that went on training), the resumed labels would come from another teacher; the resume names both
    fingerprints and goes on only with --mix-teachers."""
    base = tiny_run(tmp_path / "base", "pans_trial_v0", "--opponents", "random-v0", "--teacher", "", "--hidden", "32",
                    steps=64)
    run = tiny_run(tmp_path, "pans_trial_v0", "--opponents", "random-v0", "--hidden", "32", "--teacher", "search-v1",
                   "--teacher-base", str(base), "--teacher-search", "simulations=2", "turns=1",
                   "--bc-steps", "128", steps=64)
    before = json.loads((run / "checkpoint" / "state.json").read_text())["teacher"]
    assert before["teacher"] == "pans_trial_v0/search-v1" and before["base"] == str(base)
    assert before["search"] == {"simulations": 2, "turns": 1} and len(before["weights"]) == 16
    resume = ["--resume", str(run), "--total-timesteps", "128", "--no-progress"]
    assert ppo.Trainer(ppo.parse_args(resume)).state.teacher == before  # same teacher: resumes
    ppo.main(["--resume", str(base), "--total-timesteps", "128", "--no-progress"])  # the base trains on
    with pytest.raises(CheckpointError) as refused:
        ppo.Trainer(ppo.parse_args(resume))
    message = str(refused.value)
    after = ppo.teacher_identity(ppo.parse_args(resume))["weights"]
    assert after != before["weights"]
    assert f"(weights {before['weights']})" in message and f"(weights {after})" in message
    ppo.Trainer(ppo.parse_args([*resume, "--mix-teachers"]))


def test_expert_iteration_over_the_network_being_trained_renews_its_teacher_every_checkpoint(tmp_path):
    """--teacher-base self: the search's base is the run's own network, written to teacher_base/ when the
    teacher is made and taken afresh after every checkpoint (one round a --checkpoint-every); a run stopped
    and resumed searches over the same network in its next round as one that ran through (its games are
    dealt anew, so not its positions)."""
    common = ["--game", "pans_trial_v0", "--opponents", "random-v0", "--hidden", "32", "--teacher", "search-v1",
              "--teacher-base", "self", "--teacher-search", "simulations=2", "turns=1", "max_candidates=2",
              "--teacher-targets", "improved", "--bc-learner-share", "1", "--bc-steps", "192",
              "--total-timesteps", "192", "--checkpoint-every", "64", "--eval-every", "0", "--eval-games", "2",
              "--no-progress", *TINY]
    trainer = ppo.Trainer(ppo.parse_args([*common, "--run-dir", str(tmp_path / "through")]))
    labels, bases = [], []
    for _ in range(3):  # 64 decisions a rollout: one round each
        batch = trainer.collect()
        bases.append((tmp_path / "through" / "teacher_base" / "policy.safetensors").read_bytes())
        labels.append(batch["target"].clone())
        trainer.update(batch)
        trainer.state.step += batch["action"].shape[0]
        trainer.save_checkpoint()
        assert trainer.teachers is None  # the round ended with the checkpoint
    assert bases[0] != bases[1] != bases[2]  # each round searched over the network it started with
    assert trainer.state.teacher["base"] == "self (the network being trained)"

    stopped = tmp_path / "stopped"
    first = ppo.Trainer(ppo.parse_args([*common, "--run-dir", str(stopped)]))
    batch = first.collect()
    first.update(batch)
    first.state.step += batch["action"].shape[0]
    first.save_checkpoint()
    again = ppo.Trainer(ppo.parse_args(["--resume", str(stopped), "--no-progress"]))
    batch = again.collect()
    assert (stopped / "teacher_base" / "policy.safetensors").read_bytes() == bases[1]
    assert bool((batch["teacher"] >= 0).all()) and torch.allclose(batch["target"].sum(dim=1), torch.ones(64))


def test_an_expert_iteration_run_gives_the_same_network_again_with_or_without_a_worker_and_any_buffer(tmp_path):
    """Same command, same weights: a confident-label run over its own network (two rounds) written twice in
    one process, once with its searches shared with a worker process and once with a larger buffer (that
    has not filled, so it holds the same labels), ends with byte-identical policies."""
    common = ["--game", "pans_trial_v0", "--opponents", "heuristic-v1", "--hidden", "32", "--teacher", "search-v1",
              "--teacher-base", "self", "--teacher-search", "simulations=2", "turns=1", "max_candidates=2",
              "--teacher-targets", "improved", "--teacher-confidence", "0.9", "--bc-learner-share", "1",
              "--bc-steps", "128", "--total-timesteps", "128", "--checkpoint-every", "64", "--eval-every", "0",
              "--no-progress", *TINY]
    weights = []
    for name, extra in (("a", ["--bc-buffer", "1000"]), ("b", ["--bc-buffer", "1000"]),
                        ("worker", ["--bc-buffer", "1000", "--teacher-workers", "1"]), ("big", ["--bc-buffer", "4000"])):
        ppo.main([*common, *extra, "--run-dir", str(tmp_path / name)])
        weights.append((tmp_path / name / "policy" / "policy.safetensors").read_bytes())
    assert weights[0] == weights[1] == weights[2] == weights[3]
    from safetensors.torch import load_file

    trained = load_file(str(tmp_path / "a" / "policy" / "policy.safetensors"))
    start = ppo.Trainer(ppo.parse_args([*common, "--run-dir", str(tmp_path / "fresh")])).net.state_dict()
    assert trained.keys() == start.keys()
    assert any(not torch.equal(trained[k], start[k]) for k in start)  # the labels moved the network


@pytest.mark.parametrize(
    "argv,needle",
    [
        (["--teacher", "heuristic-v1", "--teacher-base", "heuristic-v1"], "needs a teacher that searches"),
        (["--teacher", "", "--teacher-base", "heuristic-v1"], "give --teacher too"),
        (["--teacher", "search-v1", "--teacher-base", "no/such/folder"], "no usable policy folder"),
        (["--teacher", "search-v1", "--teacher-base", "sequence_v0/ppo-v4"], "plays another game"),
        (["--teacher", "search-v1", "--teacher-search", "simulations=0"], "simulations must be an integer in [1, 4096]"),
        (["--teacher", "search-v1", "--teacher-search", "depth=3"], "unknown setting"),
        (["--teacher", "search-v1", "--teacher-search", "simulations"], "KEY=VALUE"),
        (["--teacher", "heuristic-v1", "--teacher-search", "simulations=2"], "needs a teacher that searches"),
    ],
)
def test_a_teacher_base_without_a_search_teacher_or_usable_base_is_refused(argv, needle, capsys):
    with pytest.raises(SystemExit):
        ppo.parse_args(["--game", "pans_trial_v0", *argv])
    assert needle in capsys.readouterr().err

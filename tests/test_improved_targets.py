"""Cloning a search teacher's values (``training.ppo --teacher-targets improved``): the improved targets, the
search's values for a learner's move, the soft cloning buffer and the run that uses them."""

from __future__ import annotations

import json
import math
import pathlib

import numpy as np
import pytest
import torch

import agents
import envs
from training import ppo
from training.ppo.cloning import ReplayBuffer
from training.ppo.targets import improved_targets

torch.set_num_threads(1)


def log_probs(rows: list[list[float]]) -> torch.Tensor:
    """Log-probabilities of the given probabilities (zero for an illegal move, as the masked softmax gives)."""
    p = torch.tensor(rows, dtype=torch.float32)
    return torch.where(p > 0, p.log(), torch.full_like(p, -1e9))


def test_improved_targets_share_the_tried_moves_mass_by_their_values_and_leave_the_rest():
    prior = log_probs([[0.25, 0.25, 0.5, 0.0]])
    target = improved_targets(prior, torch.tensor([1]), [[(0, 0.0), (1, 0.1)]], temperature=0.1)
    # moves 0 and 1 keep their 0.5 between them, 1 gets e times 0's share; move 2 was not tried and keeps 0.5
    expected = torch.tensor([[0.5 / (1 + math.e), 0.5 * math.e / (1 + math.e), 0.5, 0.0]])
    assert torch.allclose(target, expected, atol=1e-6)


def test_moves_the_search_finds_alike_leave_the_network_as_it_is():
    prior = log_probs([[0.1, 0.6, 0.3, 0.0], [0.7, 0.2, 0.05, 0.05]])
    values = [[(0, 0.2), (1, 0.2), (2, 0.2)], [(0, -0.5), (3, -0.5)]]
    target = improved_targets(prior, torch.tensor([1, 0]), values, temperature=0.01)
    assert torch.allclose(target, prior.exp(), atol=1e-6)


def test_a_lower_temperature_leans_harder_on_the_better_move():
    prior = log_probs([[0.5, 0.5]])
    values = [[(0, 0.0), (1, 0.02)]]
    warm = improved_targets(prior, torch.tensor([1]), values, temperature=0.1)[0, 1]
    cold = improved_targets(prior, torch.tensor([1]), values, temperature=0.005)[0, 1]
    assert 0.5 < float(warm) < float(cold) < 1.0
    assert float(cold) == pytest.approx(1 / (1 + math.exp(-4)), abs=1e-6)


def test_a_forced_move_or_a_row_without_values_is_the_teachers_action_alone():
    prior = log_probs([[0.0, 1.0, 0.0], [0.2, 0.3, 0.5]])
    target = improved_targets(prior, torch.tensor([1, 2]), [[], []], temperature=0.1)
    assert torch.equal(target, torch.tensor([[0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]))


def test_the_temperature_must_be_positive():
    with pytest.raises(ValueError, match="must be positive"):
        improved_targets(log_probs([[1.0]]), torch.tensor([0]), [[]], temperature=0.0)


def dojo_position(seed: int, at_least: int = 3) -> tuple[envs.core.game.State, int]:
    """A Dojo position with at least ``at_least`` legal moves, reached by random play."""
    game = envs.make_game("dojo_v0")
    state = game.new_initial_state(seed)
    rng = np.random.default_rng(seed)
    while int(state.legal_mask().sum()) < at_least:
        state.apply_action(int(rng.choice(np.flatnonzero(state.legal_mask()))))
    return state, state.current_player()


def test_search_values_value_an_included_move_beyond_the_candidates_and_refuse_an_illegal_one():
    state, seat = dojo_position(1)
    obs, view = state.seat_observation(seat), state.player_view(seat)
    bot = agents.make("dojo_v0/search-v1", seed=0, search={"simulations": 2, "max_candidates": 2})
    bot.reset(seat, state.game)
    choice, values = bot.search_values(obs, view)
    assert len(values) == 2 and choice in values and values == bot.last_values
    left_out = next(a for a in np.flatnonzero(obs["action_mask"]).tolist() if a not in values)
    bot.reset(seat, state.game)
    _, with_it = bot.search_values(obs, view, include=(left_out,))
    assert len(with_it) == 3 and left_out in with_it
    illegal = int(np.flatnonzero(~obs["action_mask"].astype(bool))[0])
    with pytest.raises(ValueError, match="illegal action"):
        bot.search_values(obs, view, include=(illegal,))
    # A forced move is played at once and values nothing (no stale values from the last search).
    forced = dict(obs, action_mask=np.eye(len(obs["action_mask"]), dtype=obs["action_mask"].dtype)[choice])
    assert bot.search_values(forced, view) == (choice, {}) and bot.last_values == {}


def test_teacher_labels_with_values_agree_between_this_process_and_a_worker():
    from training.teachers import TeacherLabels

    inputs = []
    for i in range(3):
        state, seat = dojo_position(10 + i)
        learner = int(np.flatnonzero(state.legal_mask())[-1])
        inputs.append((i, seat, state.seat_observation(seat), state.player_view(seat), (learner,)))
    kwargs = {"search": {"simulations": 2}}
    alone = TeacherLabels("dojo_v0", {}, "search-v1", seed=5, workers=0, kwargs=kwargs)
    split = TeacherLabels("dojo_v0", {}, "search-v1", seed=5, workers=1, kwargs=kwargs)
    try:
        here, there = alone.labels(inputs, values=True), split.labels(inputs, values=True)
        assert here == there and split.take_worker_seconds() > 0
        for job, (action, pairs) in zip(inputs, here):
            tried = dict(pairs)
            assert action in tried and job[4][0] in tried  # the learner's move is always valued
            assert all(bool(job[2]["action_mask"][a]) for a in tried)
        assert alone.actions([job[:4] for job in inputs]) == [a for a, _ in here]  # same seeds, same choices
    finally:
        alone.close()
        split.close()


def test_a_soft_buffer_keeps_its_targets_through_a_save_and_refuses_damaged_ones(tmp_path):
    from safetensors.torch import save_file

    buffer = ReplayBuffer(8, (3,), 4, soft=True)
    mask = torch.tensor([[True, True, False, True]] * 5)
    target = torch.tensor([[0.5, 0.25, 0.0, 0.25]] * 5)
    with pytest.raises(ValueError, match="give target"):
        buffer.add(torch.zeros(5, 3).half(), mask, torch.zeros(5, dtype=torch.long), torch.zeros(5))
    buffer.add(torch.zeros(5, 3).half(), mask, torch.zeros(5, dtype=torch.long), torch.zeros(5), target)
    saved = buffer.in_order()
    assert set(saved) == {"obs", "mask", "teacher", "ret", "target"}
    save_file(saved, str(tmp_path / "b.safetensors"))
    again = ReplayBuffer.load(tmp_path / "b.safetensors", 8, (3,), 4, soft=True)
    assert torch.equal(again.in_order()["target"], saved["target"])
    with pytest.raises(SystemExit, match="clones teacher actions"):  # a soft buffer in a run that clones choices
        ReplayBuffer.load(tmp_path / "b.safetensors", 8, (3,), 4)
    hard = ReplayBuffer(8, (3,), 4)
    with pytest.raises(ValueError, match="takes no target"):
        hard.add(torch.zeros(5, 3).half(), mask, torch.zeros(5, dtype=torch.long), torch.zeros(5), target)
    for damage, needle in [
        (lambda t: t.__setitem__((0, 2), 0.5), "illegal"),
        (lambda t: t.__setitem__((1, 0), 3.0), "sum to 1"),
        (lambda t: t.__setitem__((1, 0), -0.5), "non-negative"),
        (lambda t: t.__setitem__((1, 0), float("nan")), "finite"),
    ]:
        bad = saved["target"].clone()
        damage(bad)
        save_file(dict(saved, target=bad), str(tmp_path / "bad.safetensors"))
        with pytest.raises(SystemExit, match=needle):
            ReplayBuffer.load(tmp_path / "bad.safetensors", 8, (3,), 4, soft=True)


def soft_run_argv(run: pathlib.Path, *schedule: str) -> list[str]:
    """A tiny Dojo run whose teacher is a one-simulation search fitted by improved targets."""
    return ["--game", "dojo_v0", "--run-dir", str(run), "--hidden", "32", "--teacher", "search-v1",
            "--teacher-search", "simulations=1", "max_candidates=3", "--teacher-targets", "improved",
            "--teacher-temperature", "0.01", *schedule, "--num-envs", "2", "--num-steps", "8",
            "--opponents", "random-v0", "--eval-every", "0", "--eval-games", "2", "--eval-opponents", "random-v0",
            "--checkpoint-every", "8", "--max-actions", "300", "--no-progress"]


def test_a_run_clones_improved_targets_and_resumes_with_them(tmp_path: pathlib.Path):
    argv = soft_run_argv(tmp_path / "run", "--bc-learner-share", "1.0", "--bc-steps", "16", "--total-timesteps", "16",
                         "--num-minibatches", "2", "--bc-batches", "2", "--bc-minibatch-size", "8")
    trainer = ppo.Trainer(ppo.parse_args(argv))
    try:
        batch = trainer.collect()
        target, mask = batch["target"], batch["mask"]
        assert target.shape == mask.shape
        assert torch.allclose(target.sum(1), torch.ones(len(target)), atol=1e-5)
        assert float(target.masked_fill(mask, 0.0).abs().sum()) == 0.0  # nothing on an illegal move
        stats = trainer.update(batch)
        assert trainer.bc.target is not None and trainer.bc.size == len(target)
        assert math.isfinite(stats["teacher_ce"]) and stats["teacher_ce"] > 0
        assert 0.0 <= stats["target_accuracy"] <= 1.0 and 0.0 <= stats["teacher_accuracy"] <= 1.0
    finally:
        if trainer.teachers is not None:
            trainer.teachers.close()
    ppo.main(argv[:2] + ["--run-dir", str(tmp_path / "full"), *argv[4:]])
    saved = json.loads((tmp_path / "full" / "args.json").read_text())
    assert (saved["teacher_targets"], saved["teacher_temperature"]) == ("improved", 0.01)
    resumed = ppo.Trainer(ppo.parse_args(["--resume", str(tmp_path / "full"), "--bc-steps", "32",
                                          "--total-timesteps", "32", "--no-progress"]))
    try:
        assert resumed.bc is not None and resumed.bc.target is not None and resumed.bc.size == 16
    finally:
        if resumed.teachers is not None:
            resumed.teachers.close()


def test_the_cloning_loss_is_the_cross_entropy_to_the_soft_targets():
    from training.ppo.cloning import clone_update

    torch.manual_seed(0)
    net = torch.nn.Linear(3, 5)

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.body = net

        def logits_and_value(self, x):
            out = self.body(x)
            return out[:, :4], out[:, 4]

    model = Net()
    buffer = ReplayBuffer(4, (3,), 4, soft=True)
    obs = torch.randn(1, 3).repeat(4, 1)  # alike rows: the minibatch drawn with replacement has the same mean
    mask = torch.tensor([[True, True, True, False]] * 4)
    target = torch.tensor([[0.7, 0.2, 0.1, 0.0]] * 4)
    batch = {"obs": obs, "mask": mask, "teacher": torch.zeros(4, dtype=torch.long), "ret": torch.zeros(4),
             "target": target}
    with torch.no_grad():
        logits, _ = model.logits_and_value(obs.half().float())
        expected = -(target * ppo.masked_log_probs(logits, mask)).sum(1).mean()

    class A:
        bc_learning_rate, bc_batches, bc_minibatch_size, vf_coef, max_grad_norm = 0.0, 1, 64, 0.5, 0.5

    opt = torch.optim.SGD(model.parameters(), lr=0.0)
    stats = clone_update(model, opt, buffer, batch, A())
    assert stats["teacher_ce"] == pytest.approx(float(expected), rel=1e-3)
    # target_accuracy: the greedy move against the target's most likely one (move 0 here); with a
    # teacher choice of move 2 instead, teacher_accuracy tells the two apart.
    greedy = int(ppo.masked_log_probs(logits, mask)[0].argmax())
    soft = ReplayBuffer(4, (3,), 4, soft=True)
    stats = clone_update(model, opt, soft, dict(batch, teacher=torch.full((4,), 2)), A())
    assert stats["target_accuracy"] == float(greedy == 0) and stats["teacher_accuracy"] == float(greedy == 2)
    hard = ReplayBuffer(4, (3,), 4)
    assert "target_accuracy" not in clone_update(model, opt, hard, {k: v for k, v in batch.items() if k != "target"},
                                                 A())


@pytest.mark.parametrize(
    "argv,needle",
    [
        (["--teacher", "heuristic-v1", "--teacher-targets", "improved"], "needs a teacher that searches"),
        (["--teacher", "search-v1", "--teacher-targets", "visits"], "--teacher-targets must be one of"),
        (["--teacher", "search-v1", "--teacher-targets", "improved", "--teacher-temperature", "0"],
         "--teacher-temperature is in return units"),
        (["--teacher", "search-v1", "--teacher-targets", "improved", "--teacher-confidence", "1.5"],
         "--teacher-confidence is a share of the improved target in [0, 1]"),
        (["--teacher", "search-v1", "--teacher-confidence", "0.9"], "give --teacher-targets improved too"),
    ],
)
def test_improved_targets_need_a_search_teacher_and_a_positive_temperature(argv, needle, capsys):
    with pytest.raises(SystemExit):
        ppo.parse_args(["--game", "dojo_v0", *argv])
    assert needle in capsys.readouterr().err


def test_the_ppo_stage_teacher_term_fits_the_soft_targets(tmp_path):
    """After cloning, ``--kl-coef`` pulls toward the same improved targets, not the search's single choice."""
    from training.ppo.algo import ppo_update

    argv = soft_run_argv(tmp_path / "run", "--bc-steps", "0", "--kl-coef", "0.5", "--total-timesteps", "16",
                         "--num-minibatches", "1", "--update-epochs", "1")
    trainer = ppo.Trainer(ppo.parse_args(argv))
    try:
        assert not trainer.cloning and trainer.kl_weight() == 0.5
        batch = trainer.collect()
        assert not batch["cloning"] and "target" in batch
        target, mask, teacher = batch["target"], batch["mask"], batch["teacher"]
        assert bool((teacher >= 0).all())
        assert torch.allclose(target.sum(1), torch.ones(len(target)), atol=1e-5)
        assert float(target.masked_fill(mask, 0.0).abs().sum()) == 0.0
        torch.manual_seed(0)
        with torch.no_grad():  # a network far from uniform, so the soft and the one-hot losses differ
            for p in trainer.net.parameters():
                p.normal_(0.0, 0.5)
            logits, _ = trainer.net.logits_and_value(batch["obs"])
            soft = float(-(target * ppo.masked_log_probs(logits, mask)).sum(1).mean())
            hard = float(-ppo.masked_log_probs(logits, mask).gather(1, teacher[:, None]).mean())
        # one minibatch, one epoch: the term is reported from before the only optimizer step
        stats = ppo_update(trainer.net, trainer.optimizer, batch, trainer.args, trainer.kl_weight())
        assert stats["teacher_ce"] == pytest.approx(soft, rel=1e-4)
        assert abs(soft - hard) > 1e-2
    finally:
        if trainer.teachers is not None:
            trainer.teachers.close()


def test_confident_targets_keep_the_search_choice_only_where_its_target_is_sure():
    from training.ppo.targets import confident_targets

    target = torch.tensor([[0.05, 0.95, 0.0], [0.4, 0.6, 0.0], [0.0, 0.1, 0.9]])
    teacher, own = torch.tensor([1, 1, 2]), torch.tensor([0, 0, 1])
    out = confident_targets(target, teacher, own, 0.9)
    assert out.tolist() == [[0.0, 1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]]
    assert confident_targets(target, teacher, own, 1.0).argmax(1).tolist() == [0, 0, 1]  # nothing sure enough
    with pytest.raises(ValueError, match="share of a target"):
        confident_targets(target, teacher, own, 0.0)


def test_a_run_with_a_confidence_clones_one_move_a_decision(tmp_path: pathlib.Path):
    """--teacher-confidence: every target is one-hot, on the search's choice or on the network's own greedy
    move; with confidence 1 only a search sure beyond doubt (a forced move, a lone candidate) keeps its choice."""
    argv = soft_run_argv(tmp_path / "run", "--bc-learner-share", "1.0", "--bc-steps", "16", "--total-timesteps", "16",
                         "--num-minibatches", "2", "--bc-batches", "2", "--bc-minibatch-size", "8",
                         "--teacher-confidence", "0.9")
    trainer = ppo.Trainer(ppo.parse_args(argv))
    try:
        batch = trainer.collect()
        target, teacher = batch["target"], batch["teacher"]
        assert bool(((target == 0) | (target == 1)).all()) and torch.equal(target.sum(1), torch.ones(len(target)))
        picked = target.argmax(1)
        greedy = ppo.masked_log_probs(trainer.net.logits_and_value(batch["obs"])[0], batch["mask"]).argmax(1)
        assert bool(((picked == teacher) | (picked == greedy)).all())
        assert float(target.masked_fill(batch["mask"], 0.0).abs().sum()) == 0.0
        trainer.update(batch)
        assert trainer.bc is not None and trainer.bc.target is not None
    finally:
        if trainer.teachers is not None:
            trainer.teachers.close()
    saved = ppo.parse_args(argv)
    assert saved.teacher_confidence == 0.9

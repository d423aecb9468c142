"""Kickstarting by behaviour cloning: the replay buffer of teacher decisions and the cloning update.

While cloning (the first ``bc_steps`` learner decisions) the teacher plays (or, with
``bc_learner_share``, labels the network's own decisions: DAgger); every rollout's decisions go to
a ring buffer of the newest ``bc_buffer`` ones, and ``bc_batches`` minibatches drawn from it fit the
policy to the teacher's choice (cross-entropy) and the value head to the teacher's returns.
The teacher's labels themselves come from :class:`training.teachers.TeacherLabels`.

With ``--teacher-targets improved`` (a search teacher) a decision's label is not the search's choice
but a distribution: the network's own policy at the time of the decision, with the mass it puts on the
moves the search tried shifted toward the better ones (:func:`training.ppo.targets.improved_targets`).
Where the search finds the moves alike the target is the network's own play, so noise in the search's
values moves the network little; where one move is clearly better the target leans on it.
"""

from __future__ import annotations

import pathlib
from typing import Any

import numpy as np
import torch

from training.ppo.algo import masked_log_probs

BUFFER_KEYS = ("obs", "mask", "teacher", "ret")
#: what a buffer of improved targets keeps besides (``--teacher-targets improved``)
SOFT_KEYS = ("target",)


class ReplayBuffer:
    """A ring buffer of teacher decisions: observation (float16), legal mask, teacher action, return, and
    with ``soft`` the target distribution (float16) the policy is fitted to instead of the action."""

    def __init__(self, capacity: int, obs_shape: tuple[int, ...], num_actions: int, soft: bool = False) -> None:
        self.obs = torch.zeros((capacity, *obs_shape), dtype=torch.float16)
        self.mask = torch.zeros((capacity, num_actions), dtype=torch.bool)
        self.teacher = torch.zeros(capacity, dtype=torch.long)
        self.ret = torch.zeros(capacity)
        self.target: torch.Tensor | None = torch.zeros((capacity, num_actions), dtype=torch.float16) if soft else None
        self.size = 0
        self.next = 0

    @property
    def keys(self) -> tuple[str, ...]:
        return BUFFER_KEYS + (SOFT_KEYS if self.target is not None else ())

    @property
    def capacity(self) -> int:
        return self.teacher.shape[0]

    def add(self, obs: torch.Tensor, mask: torch.Tensor, teacher: torch.Tensor, ret: torch.Tensor,
            target: torch.Tensor | None = None) -> None:
        """Append decisions (the oldest are overwritten once it is full); ``target`` is needed exactly when
        the buffer keeps soft targets."""
        if (target is None) != (self.target is None):
            raise ValueError("this buffer keeps soft targets: give target" if target is None
                             else "this buffer keeps teacher actions only: it takes no target")
        cap, n = self.capacity, teacher.shape[0]
        if n > cap:  # only the newest fit
            obs, mask, teacher, ret = obs[-cap:], mask[-cap:], teacher[-cap:], ret[-cap:]
            target = target[-cap:] if target is not None else None
            n = cap
        idx = (self.next + torch.arange(n)) % cap
        self.obs[idx], self.mask[idx], self.teacher[idx], self.ret[idx] = obs, mask, teacher, ret
        if self.target is not None:
            self.target[idx] = target.to(torch.float16)
        self.next = int((self.next + n) % cap)
        self.size = min(cap, self.size + n)

    def in_order(self) -> dict[str, torch.Tensor]:
        """The buffer's decisions, oldest first (what a checkpoint saves)."""
        idx = (self.next - self.size + torch.arange(self.size)) % self.capacity
        return {k: getattr(self, k)[idx].contiguous() for k in self.keys}

    @classmethod
    def load(cls, path: pathlib.Path, capacity: int, obs_shape: tuple[int, ...], num_actions: int,
             soft: bool = False) -> ReplayBuffer:
        """A buffer refilled from a checkpoint's file, every tensor's shape and type checked (and every soft
        target a distribution over the legal actions); only the newest ``capacity`` decisions are kept (a
        resumed run may choose a smaller buffer)."""
        from safetensors.torch import load_file

        t = load_file(str(path))
        expected = {
            "obs": (torch.float16, tuple(obs_shape)),
            "mask": (torch.bool, (num_actions,)),
            "teacher": (torch.long, ()),
            "ret": (torch.float32, ()),
        }
        if soft:
            expected["target"] = (torch.float16, (num_actions,))
        if set(t) != set(expected):
            kind = "soft targets (--teacher-targets improved)" if soft else "teacher actions (--teacher-targets choice)"
            raise SystemExit(f"{path}: this run clones {kind} and expects tensors {sorted(expected)}, "
                             f"found {sorted(t)}")
        size = t["teacher"].shape[0]
        for name, (dtype, tail) in expected.items():
            if t[name].dtype != dtype or tuple(t[name].shape) != (size, *tail):
                raise SystemExit(
                    f"{path}: tensor {name!r} is {t[name].dtype} {tuple(t[name].shape)}, "
                    f"expected {dtype} {(size, *tail)} for this run's game and network"
                )
        if not bool(((t["teacher"] >= 0) & (t["teacher"] < num_actions)).all()):
            raise SystemExit(f"{path}: teacher actions must lie in [0, {num_actions})")
        if not bool(t["mask"].gather(1, t["teacher"][:, None]).all()):
            raise SystemExit(f"{path}: a saved teacher action is not legal under its saved mask")
        if soft:
            target = t["target"].float()
            if not bool(torch.isfinite(target).all()) or bool((target < 0).any()):
                raise SystemExit(f"{path}: soft targets must be finite and non-negative")
            if bool((target.masked_fill(t["mask"], 0.0) != 0).any()):
                raise SystemExit(f"{path}: a soft target puts probability on an action its saved mask makes illegal")
            if size and not bool(((target.sum(1) - 1.0).abs() < 0.02).all()):
                raise SystemExit(f"{path}: every soft target must sum to 1 (within float16 rounding)")
        buffer = cls(capacity, obs_shape, num_actions, soft=soft)
        buffer.add(t["obs"], t["mask"], t["teacher"], t["ret"], t["target"] if soft else None)
        return buffer


def buffer_capacity(args: Any) -> int:
    """The newest ``bc_buffer`` decisions (no more than cloning will see), and at least one rollout."""
    return max(args.num_envs * args.num_steps, min(args.bc_buffer, args.bc_steps))


def clone_update(
    net: torch.nn.Module, optimizer: torch.optim.Optimizer, buffer: ReplayBuffer, batch: dict[str, Any], args: Any,
    device: torch.device | str = "cpu",
) -> dict[str, float]:
    """Add the rollout's teacher decisions to ``buffer`` (kept on the CPU), then take ``bc_batches`` gradient
    steps on minibatches drawn from it, on ``device``: cross-entropy on the teacher's choice (or, in a buffer
    of soft targets, on its target distribution) plus the value of its play.

    Returns the means over the gradient steps: ``teacher_ce`` (the cloning loss), ``value_loss``,
    ``entropy``, ``teacher_accuracy`` (how often the network's greedy move is the teacher's choice: with
    soft targets, the search's own choice) and, with soft targets, ``target_accuracy`` (how often it is
    the target's most likely move, which is what soft targets pull toward)."""
    buffer.add(batch["obs"].half(), batch["mask"], batch["teacher"], batch["ret"], batch.get("target"))
    for group in optimizer.param_groups:
        group["lr"] = args.bc_learning_rate
    stats: dict[str, list[float]] = {"teacher_ce": [], "value_loss": [], "teacher_accuracy": [], "entropy": []}
    for _ in range(args.bc_batches):
        mb = torch.randint(0, buffer.size, (args.bc_minibatch_size,))
        logits, value = net.logits_and_value(buffer.obs[mb].to(device).float())
        logp_all = masked_log_probs(logits, buffer.mask[mb].to(device))
        teacher = buffer.teacher[mb].to(device)
        target = buffer.target[mb].to(device).float() if buffer.target is not None else None
        if target is not None:
            ce = -(target * logp_all).sum(-1).mean()
        else:
            ce = -logp_all.gather(1, teacher[:, None]).mean()
        v_loss = 0.5 * ((value - buffer.ret[mb].to(device)) ** 2).mean()
        optimizer.zero_grad()
        (ce + args.vf_coef * v_loss).backward()
        torch.nn.utils.clip_grad_norm_(net.parameters(), args.max_grad_norm)
        optimizer.step()
        with torch.no_grad():
            stats["teacher_ce"].append(float(ce))
            stats["value_loss"].append(float(v_loss))
            greedy = logp_all.argmax(-1)
            stats["teacher_accuracy"].append(float((greedy == teacher).float().mean()))
            if target is not None:
                stats.setdefault("target_accuracy", []).append(float((greedy == target.argmax(-1)).float().mean()))
            stats["entropy"].append(float(-(logp_all.exp() * logp_all).sum(-1).mean()))
    return {k: float(np.mean(v)) for k, v in stats.items()}

"""The PPO algorithm, top to bottom: masked policies, one rollout over the tables, GAE, the update.

A rollout is ``num_steps`` learner decisions on each of ``num_envs`` tables; every decision is a
batched forward of the learner. While cloning the teacher plays instead (see ``cloning``); after it,
each decision the teacher would have taken is kept as a label for the kickstarting term.
"""

from __future__ import annotations

import contextlib
import sys
import time
import weakref
from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from training.ppo.targets import confident_targets, improved_targets
from training.vector_env import Tables

NEG = -1e9
"""Logit given to illegal actions (``logits.masked_fill(~mask, NEG)``)."""


def masked_log_probs(logits: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Log-probabilities over the legal actions (``mask`` True); illegal ones get about -1e9."""
    return torch.log_softmax(logits.masked_fill(~mask, NEG), dim=-1)


def sample(logp: torch.Tensor, greedy: bool = False) -> torch.Tensor:
    """One action per row: the argmax, or a draw (Gumbel-max) from ``exp(logp)``."""
    if greedy:
        return logp.argmax(dim=-1)
    u = torch.rand_like(logp).clamp_(1e-20, 1.0)
    return (logp - torch.log(-torch.log(u))).argmax(dim=-1)


def policy_log_probs(logits: torch.Tensor, mask: torch.Tensor, temperature: float) -> torch.Tensor:
    """The policy PPO samples and trains (learner and snapshots): the masked softmax at ``temperature``."""
    return masked_log_probs(logits / temperature, mask)


def collect_rollout(
    net: torch.nn.Module,
    tables: Tables,
    args: Any,
    *,
    cloning: bool,
    want_teacher: bool,
    teacher_actions: Callable[[list[int]], list[int]],
    snapshot_act: Callable[[int, list[int]], list[int]],
    critic: torch.nn.Module | None = None,
    teacher_values: Callable[[list[int], list[int]], list[tuple[int, list[tuple[int, float]]]]] | None = None,
    improve_temperature: float = 0.1,
    improve_confidence: float = 0.0,
) -> dict[str, Any]:
    """``num_steps`` decisions on every table, flattened, with advantages and returns, and the CPU
    seconds by part in ``timing`` (env, learner, teacher; opponents and snapshots from ``tables``).

    With ``teacher_values`` (a search teacher asked for its values, the network's greedy choice among the
    moves it must value) each teacher label also gets a soft target, :func:`improved_targets` of the
    network's untempered policy at ``improve_temperature``, kept in the batch as ``"target"``; with
    ``improve_confidence`` above 0 that target becomes :func:`confident_targets`' one-hot choice.

    With a ``critic`` (``--critic state``) the values come from it, over each table's whole position
    (``tables.encode_state``, kept in the batch as ``"state"``), instead of the network's value head."""
    n, T = args.num_envs, args.num_steps
    obs_shape, num_actions = tuple(tables.game.observation_shape), tables.game.num_actions
    obs_buf = torch.zeros((T, n, *obs_shape))
    mask_buf = torch.zeros((T, n, num_actions), dtype=torch.bool)
    act_buf = torch.zeros((T, n), dtype=torch.long)
    logp_buf = torch.zeros((T, n))
    val_buf = torch.zeros((T, n))
    rew_buf = torch.zeros((T, n))
    done_buf = torch.zeros((T, n))
    teach_buf = torch.full((T, n), -1, dtype=torch.long)
    state_buf = torch.zeros((T, n, *tables.game.state_shape)) if critic is not None else None
    soft = want_teacher and teacher_values is not None
    target_buf = torch.zeros((T, n, num_actions)) if soft else None
    rows = list(range(n))
    timing = {"env": 0.0, "learner": 0.0, "teacher": 0.0}
    opp0, snap0 = tables.opponent_seconds, tables.snapshot_seconds
    for t in range(T):
        t0 = time.process_time()
        obs, mask = tables.observe(rows)
        obs_t, mask_t = torch.from_numpy(obs), torch.from_numpy(mask)
        t1 = time.process_time()
        with torch.no_grad():
            logits, value = net.logits_and_value(obs_t)
            logp_all = policy_log_probs(logits, mask_t, args.temperature)
            if critic is not None:
                state_buf[t] = torch.from_numpy(tables.encode_state(rows))
                value = critic(obs_t, state_buf[t])
        t2 = time.process_time()
        if soft:
            raw = masked_log_probs(logits, mask_t)
            greedy = raw.argmax(dim=-1)
            labels = teacher_values(rows, greedy.tolist())
            teacher = torch.tensor([a for a, _ in labels])
            target = improved_targets(raw, teacher, [v for _, v in labels], improve_temperature)
            if improve_confidence > 0:
                target = confident_targets(target, teacher, greedy, improve_confidence)
            target_buf[t] = target
            teach_buf[t] = teacher
        elif want_teacher:
            teacher = torch.tensor(teacher_actions(rows))
            teach_buf[t] = teacher
        t3 = time.process_time()
        if not cloning:
            action = sample(logp_all)
        elif args.bc_learner_share > 0:  # DAgger: some decisions are the network's own, labelled by the teacher
            own = torch.rand(n) < args.bc_learner_share
            action = torch.where(own, logp_all.argmax(dim=-1), teacher)
        else:
            action = teacher
        obs_buf[t], mask_buf[t], act_buf[t], val_buf[t] = obs_t, mask_t, action, value
        logp_buf[t] = logp_all.gather(1, action[:, None]).squeeze(1)
        tables.play(rows, action.tolist())
        ended = tables.advance(snapshot_act)
        rew_buf[t] = torch.tensor([o.reward if o else 0.0 for o in ended])
        done_buf[t] = torch.tensor([float(o is not None) for o in ended])
        t4 = time.process_time()
        timing["env"] += (t1 - t0) + (t4 - t3)
        timing["learner"] += t2 - t1
        timing["teacher"] += t3 - t2
    timing["opponents"] = tables.opponent_seconds - opp0
    timing["snapshots"] = tables.snapshot_seconds - snap0
    timing["env"] -= timing["opponents"] + timing["snapshots"]
    with torch.no_grad():
        obs, _ = tables.observe(rows)
        if critic is not None:
            next_value = critic(torch.from_numpy(obs), torch.from_numpy(tables.encode_state(rows)))
        else:
            next_value = net.logits_and_value(torch.from_numpy(obs))[1]
    adv = gae(rew_buf, val_buf, done_buf, next_value, args.gamma, args.gae_lambda)
    return {
        "obs": obs_buf.reshape(T * n, *obs_shape),
        "mask": mask_buf.reshape(T * n, -1),
        "action": act_buf.reshape(-1),
        "logp": logp_buf.reshape(-1),
        "adv": adv.reshape(-1),
        "ret": (adv + val_buf).reshape(-1),
        "value": val_buf.reshape(-1),
        "teacher": teach_buf.reshape(-1),
        "cloning": cloning,
        "timing": timing,
        **({"state": state_buf.reshape(T * n, -1)} if critic is not None else {}),
        **({"target": target_buf.reshape(T * n, -1)} if target_buf is not None else {}),
    }


def gae(
    rewards: torch.Tensor, values: torch.Tensor, dones: torch.Tensor, next_value: torch.Tensor, gamma: float, lam: float
) -> torch.Tensor:
    """Generalised advantage estimates over a ``(T, n)`` rollout; ``dones[t]`` ends the game after step t."""
    T = rewards.shape[0]
    adv = torch.zeros_like(rewards)
    last = torch.zeros(rewards.shape[1])
    for t in reversed(range(T)):
        nonterminal = 1.0 - dones[t]
        next_v = next_value if t == T - 1 else values[t + 1]
        delta = rewards[t] + gamma * next_v * nonterminal - values[t]
        last = delta + gamma * lam * nonterminal * last
        adv[t] = last
    return adv


#: The fallbacks already reported in this process (each is one line on stderr, once).
_WARNED: set[str] = set()

#: ``--compile``: the compiled loss of each network (and critic) being trained, made at its first update;
#: None where compiling failed and the update runs uncompiled.
_COMPILED: "weakref.WeakKeyDictionary[torch.nn.Module, Any]" = weakref.WeakKeyDictionary()


def warn_once(what: str, why: str, instead: str) -> None:
    """One line on stderr, once per process: ``what`` was not used because ``why``; ``instead`` runs."""
    if what not in _WARNED:
        _WARNED.add(what)
        print(f"warning: {what} not used ({why}); {instead}", file=sys.stderr, flush=True)


def bf16_supported(device: torch.device) -> bool:
    """Whether bfloat16 autocast runs natively on ``device`` (the CPU needs oneDNN's bfloat16 support:
    AVX512-BF16 or AMX; elsewhere it would be emulated, slower than float32)."""
    if device.type == "cuda":
        return torch.cuda.is_bf16_supported()
    if device.type == "cpu":
        try:
            return bool(torch.backends.mkldnn.is_available() and torch.ops.mkldnn._is_mkldnn_bf16_supported())
        except (AttributeError, RuntimeError):
            return False
    return False


def update_autocast(args: Any, device: torch.device) -> Any:
    """The context of the update's forward passes: bfloat16 autocast for ``--update-dtype bf16`` where the
    device runs it, else none (with one warning where bf16 was asked for and cannot be used)."""
    if getattr(args, "update_dtype", "float32") == "bf16":
        if bf16_supported(device):
            return torch.autocast(device.type, dtype=torch.bfloat16)
        warn_once("--update-dtype bf16", f"this {device.type} has no native bfloat16 support",
                  "the update runs in float32")
    return contextlib.nullcontext()


def minibatch_terms(
    net: torch.nn.Module, critic: torch.nn.Module | None, obs: torch.Tensor, mask: torch.Tensor,
    action: torch.Tensor, old_logp: torch.Tensor, adv: torch.Tensor, ret: torch.Tensor,
    teacher: torch.Tensor | None, target: torch.Tensor | None, state: torch.Tensor | None,
    temperature: float, norm_adv: bool, clip_coef: float,
) -> dict[str, torch.Tensor]:
    """The loss terms of one minibatch (what ``--compile`` compiles): the clipped policy loss, the entropy,
    the value loss (and the seat's own with a ``critic``), the teacher cross-entropy (``teacher`` None:
    no decision of the rollout has a label) and, detached, ``approx_kl`` and ``clipfrac``."""
    logits, value = net.logits_and_value(obs)
    out: dict[str, torch.Tensor] = {}
    if critic is not None:
        out["seat_value_loss"] = 0.5 * ((value.float() - ret) ** 2).mean()
        value = critic(obs, state)
    logits, value = logits.float(), value.float()  # the loss in float32, also under bfloat16 autocast
    logp_all = policy_log_probs(logits, mask, temperature)
    newlogp = logp_all.gather(1, action[:, None]).squeeze(1)
    out["entropy"] = -(logp_all.exp() * logp_all).sum(-1).mean()
    out["value_loss"] = 0.5 * ((value - ret) ** 2).mean()
    if teacher is None:
        out["teacher_ce"] = logits.new_zeros(())
    else:
        has_t = teacher >= 0
        # The teacher term holds the untempered policy near the teacher: on the tempered one it
        # would undo the temperature (a cross-entropy to a teacher the network cannot match
        # exactly flattens the distribution it is computed on).
        raw = logp_all if temperature == 1.0 else masked_log_probs(logits, mask)
        if not has_t.any():
            out["teacher_ce"] = logits.new_zeros(())
        elif target is not None:  # --teacher-targets improved: the same soft targets cloning fits
            out["teacher_ce"] = -(target[has_t] * raw[has_t]).sum(-1).mean()
        else:
            out["teacher_ce"] = -raw[has_t].gather(1, teacher[has_t][:, None]).mean()
    ratio = (newlogp - old_logp).exp()
    if norm_adv:
        adv = (adv - adv.mean()) / (adv.std() + 1e-8)
    out["policy_loss"] = torch.max(-adv * ratio, -adv * ratio.clamp(1 - clip_coef, 1 + clip_coef)).mean()
    out["approx_kl"] = ((ratio - 1) - (newlogp - old_logp)).mean().detach()
    out["clipfrac"] = ((ratio - 1).abs() > clip_coef).float().mean().detach()
    return out


def loss_terms(net: torch.nn.Module, critic: torch.nn.Module | None, args: Any) -> Callable[..., dict[str, torch.Tensor]]:
    """:func:`minibatch_terms`, compiled for ``--compile`` (once per network; where compiling cannot be
    done the plain function, with one warning)."""
    if not getattr(args, "compile", False):
        return minibatch_terms
    key = net if critic is None else critic
    if key not in _COMPILED:
        try:
            _COMPILED[key] = torch.compile(minibatch_terms, dynamic=False)
        except Exception as exc:  # noqa: BLE001 - any failure to set up the compiler falls back
            warn_once("--compile", first_line(exc), "the update runs uncompiled")
            _COMPILED[key] = None
    compiled = _COMPILED[key]
    if compiled is None:
        return minibatch_terms

    def run(*terms_args: Any) -> dict[str, torch.Tensor]:
        if _COMPILED.get(key) is None:
            return minibatch_terms(*terms_args)
        try:
            return compiled(*terms_args)
        except Exception as exc:  # noqa: BLE001 - no working compiler (or a graph it cannot compile)
            # Nothing was changed yet: the forward pass failed before any gradient or optimizer step.
            warn_once("--compile", first_line(exc), "the update runs uncompiled")
            _COMPILED[key] = None
            return minibatch_terms(*terms_args)

    return run


def first_line(exc: BaseException) -> str:
    """The exception's type and first line, at most 200 characters: a compiler's error runs to pages, so
    unlike :func:`agents.errors.one_line` (the whole text on one line) the rest is left out."""
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}"[:200]


def ppo_update(
    net: torch.nn.Module, optimizer: torch.optim.Optimizer, batch: dict[str, Any], args: Any, kl_weight: float,
    device: torch.device | str = "cpu", critic: torch.nn.Module | None = None,
) -> dict[str, float]:
    """``update_epochs`` passes of clipped PPO over the rollout in minibatches, plus the
    cross-entropy toward the teacher's labels (its soft targets where the batch has them, ``"target"``)
    weighted ``kl_weight``, with ``net`` and ``optimizer`` on
    ``device`` (the rollout is moved there once); returns the mean losses. With a ``critic`` (on
    ``device``, its parameters in ``optimizer``) the value loss trains it on the batch's observations and
    ``"state"``, and the network's own value head still learns the same returns from the seat's
    observation (``seat_value_loss``): the actor's trunk keeps the value as a second task, as with the
    seat's critic, so that the two critics differ only in the advantages they give.

    ``--update-dtype bf16`` runs the forward passes under bfloat16 autocast (the loss itself in float32),
    ``--compile`` compiles :func:`minibatch_terms`; either falls back, with one warning line, where the
    machine cannot run it."""
    a = args
    device = torch.device(device)
    batch = {k: v.to(device) if torch.is_tensor(v) else v for k, v in batch.items()}
    for group in optimizer.param_groups:
        group["lr"] = a.learning_rate
    size = batch["action"].shape[0]
    minibatch = -(-size // a.num_minibatches)  # the last may be smaller when they do not divide the rollout
    params = [*net.parameters(), *(critic.parameters() if critic is not None else ())]
    stats: dict[str, list[float]] = {
        k: [] for k in ("policy_loss", "value_loss", "entropy", "teacher_ce", "approx_kl", "clipfrac")
    }
    # No label anywhere in the rollout (no teacher, or its term is off): no teacher term to compute.
    labelled = bool((batch["teacher"] >= 0).any())
    terms_of = loss_terms(net, critic, a)
    autocast = update_autocast(a, device)
    for _ in range(a.update_epochs):
        order = torch.randperm(size)
        for start in range(0, size, minibatch):
            mb = order[start : start + minibatch].to(device)
            with autocast:
                t = terms_of(
                    net, critic, batch["obs"][mb], batch["mask"][mb], batch["action"][mb], batch["logp"][mb],
                    batch["adv"][mb], batch["ret"][mb], batch["teacher"][mb] if labelled else None,
                    batch["target"][mb] if labelled and "target" in batch else None,
                    batch["state"][mb] if critic is not None else None, a.temperature, a.norm_adv, a.clip_coef,
                )
            pg_loss, entropy, v_loss, ce = t["policy_loss"], t["entropy"], t["value_loss"], t["teacher_ce"]
            loss = pg_loss - a.ent_coef * entropy + a.vf_coef * v_loss + kl_weight * ce
            if "seat_value_loss" in t:
                loss = loss + a.vf_coef * t["seat_value_loss"]
                stats.setdefault("seat_value_loss", []).append(float(t["seat_value_loss"].detach()))
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(params, a.max_grad_norm)
            optimizer.step()
            for key, val in (("policy_loss", pg_loss), ("value_loss", v_loss), ("entropy", entropy), ("teacher_ce", ce)):
                stats[key].append(float(val.detach()))
            stats["approx_kl"].append(float(t["approx_kl"]))
            stats["clipfrac"].append(float(t["clipfrac"]))
    return {k: float(np.mean(v)) for k, v in stats.items() if v}

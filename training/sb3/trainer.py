"""The SB3 trainer: its ``Args`` and ``main`` (``python -m training.sb3``; see :mod:`training.sb3`)."""

from __future__ import annotations

import dataclasses
import json
import math
import pathlib
import random
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

import agents
from agents.registry import qualify
import envs
from agents.checkpoint import CheckpointError, PolicyAgent, checkpoint_dir, register_checkpoint
from agents.policy_io import save_policy
from envs.provenance import provenance
from training.cli import dataclass_parser
from training.evaluation import NOTE, evaluate_module
from training.report import curve_row, log_scalars, make_report, tensorboard_writer, write_args, write_curve, write_report
from training.sb3.convert import actor_of
from training.sb3.selfplay import SelfPlayEnv
from training.settings import (
    SELF,
    Registers,
    StepSettings,
    check_finite,
    library_kwargs,
    minibatch_size,
    parse_settings,
    resolve_device,
    seed_everything,
)

TRAINER = "training.sb3"
RUNS_DIR = pathlib.Path("runs") / "sb3"

#: Flags that are gone, refused before parsing: flag -> what to give instead.
REMOVED = {
    "--batch-size": "give --num-minibatches (SB3's batch_size is num_envs * num_steps / num_minibatches)",
    "--n-steps": "give --num-steps",
    "--n-epochs": "give --update-epochs",
    "--selfplay-every": "put 'self' in --opponents and give --snapshot-every",
    "--selfplay-max": "give --snapshot-max",
    "--checkpoint-id": "give --register ID to add the policy to the checkpoint index under ID",
}

#: SB3's losses that must stay finite (what its ``train()`` logs).
LOSSES = ("train/loss", "train/policy_gradient_loss", "train/value_loss", "train/entropy_loss")


@dataclass
class Args(Registers, StepSettings):
    """The SB3 trainer's options: the shared settings (:mod:`training.settings`) and its own."""

    snapshot_every: int = 20_000
    """with 'self' among --opponents: add a frozen copy of the learner every N learner decisions (0: keep only
    the starting network); 20,000 puts five in this trainer's default budget"""
    out: str = ""
    """run folder for the policy, args, evaluation and curve (empty: runs/sb3/<game>-<UTC time>)"""
    net_arch: list[int] = field(default_factory=lambda: [256, 256])
    """hidden layer widths of the policy (and of the separate value) network"""


def build_parser():
    from training import sb3

    return dataclass_parser(Args, prog="python -m training.sb3", description=sb3.__doc__, list_nargs="*")


def parse_args(argv: list[str] | None = None) -> Args:
    args, _given = parse_settings(build_parser(), Args, argv, removed=REMOVED)
    return args


def evaluate_policy(actor, args: Args, config: dict[str, Any], games: int, seed: int) -> dict[str, Any]:
    """The shared team-level evaluation (:func:`training.evaluation.evaluate_module`) of the greedy
    policy against each of ``--eval-opponents``: it plays every seat of its team, teams rotated."""
    return evaluate_module(actor, args.game, config, args.eval_opponents, games, seed)


def main(argv: list[str] | None = None) -> pathlib.Path:
    args = parse_args(argv)
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.vec_env import DummyVecEnv

    # -- seeding, in one place
    seed_everything(args.seed)
    device = resolve_device(args.device)
    config = json.loads(args.config)
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
    out = pathlib.Path(args.out) if args.out else RUNS_DIR / f"{args.game}-{stamp}"
    if (out / "policy.json").exists():
        raise SystemExit(f"{out} already holds a trained policy; choose another --out")
    out.mkdir(parents=True, exist_ok=True)

    # -- opponents and the environment: each kind one entry of the pool; 'self' draws a frozen copy of the
    # learner (the newest half the time, otherwise any kept one), the starting network until the first snapshot
    snapshots: list[Any] = []
    picks = random.Random(args.seed + 104_729)

    def factory(kind: str, seed_base: int):
        if kind == SELF:
            def frozen_copy() -> PolicyAgent:
                k = len(snapshots) - 1 if picks.random() < 0.5 else picks.randrange(len(snapshots))
                return PolicyAgent(args.game, model=snapshots[k], deterministic=False, seed=seed_base)
            return frozen_copy
        counter = iter(range(10**9))
        return lambda: agents.make(qualify(args.game, kind), seed=seed_base + next(counter))

    pool = [factory(kind, 10_000 * (i + 1) + args.seed) for i, kind in enumerate(args.opponents)]
    tables = [SelfPlayEnv(args.game, config, opponent_pool=list(pool), seed=args.seed + 7919 * i)
              for i in range(args.num_envs)]
    env = DummyVecEnv([lambda t=t: t for t in tables])
    model = MaskablePPO(
        "MlpPolicy",
        env,
        **library_kwargs(args, "sb3"),  # the shared (CleanRL) names mapped to SB3's
        n_steps=args.num_steps,
        batch_size=minibatch_size(args),
        policy_kwargs={"net_arch": list(args.net_arch)},
        seed=args.seed,
        device=device,
        verbose=0,
    )
    if SELF in args.opponents:
        snapshots.append(actor_of(model)[0])  # 'self' before the first snapshot: the starting network

    curve: list[dict[str, Any]] = []
    writer = tensorboard_writer(out / "tb", args.game)
    cpu_start = time.process_time()
    title = f"{args.game}: SB3 MaskablePPO's greedy policy against fixed opponents"

    class Monitor(BaseCallback):
        """Episode returns, periodic evaluation, self-play snapshots (fixed metric names) and the stop at a
        non-finite loss."""

        def __init__(self) -> None:
            super().__init__()
            self.returns: list[float] = []
            self.next_eval = args.eval_every or None
            self.next_snapshot = (args.snapshot_every or None) if SELF in args.opponents else None
            # CPU seconds spent evaluating, left out of the training CPU time as training.ppo leaves them out
            self.eval_cpu = 0.0

        def _on_step(self) -> bool:
            for table, info in zip(tables, self.locals.get("infos", [])):
                if "episode_seed" in info and table.last_episode:
                    self.returns.append(table.last_episode["reward"])
            step = self.num_timesteps
            if self.next_snapshot and step >= self.next_snapshot:
                self.next_snapshot += args.snapshot_every
                snapshots.append(actor_of(model)[0])
                del snapshots[: -args.snapshot_max]
            if self.next_eval and step >= self.next_eval:
                self.next_eval += args.eval_every
                self._evaluate(step)
            return True

        def _on_rollout_start(self) -> None:
            self.check_losses()  # the update that ran after the last rollout

        def check_losses(self) -> None:
            """Stop with a ``NonFiniteLossError`` naming the step and the loss if SB3's last update logged a
            NaN or infinite loss (nothing is saved after it)."""
            logged = model.logger.name_to_value
            check_finite({k.split("/", 1)[1]: logged[k] for k in LOSSES if k in logged}, self.num_timesteps)

        def _evaluate(self, step: int) -> None:
            e0 = time.process_time()
            train_cpu = e0 - cpu_start - self.eval_cpu
            result = evaluate_policy(actor_of(model)[0], args, config, args.eval_games, seed=10**6)
            self.eval_cpu += time.process_time() - e0
            recent = self.returns[-200:]
            row = curve_row(step, result, cpu_seconds=round(train_cpu, 1),
                            mean_return=float(np.mean(recent)) if recent else math.nan)
            curve.append(row)
            log_scalars(writer, row)
            write_curve(curve, out, title, args.game)

    monitor = Monitor()
    try:
        model.learn(total_timesteps=args.total_timesteps, callback=monitor, progress_bar=args.progress)
        monitor.check_losses()  # the update after the last rollout
    finally:
        writer.close()
    if not curve or curve[-1]["step"] != model.num_timesteps:
        monitor._evaluate(model.num_timesteps)
    cpu_seconds = time.process_time() - cpu_start - monitor.eval_cpu

    # -- save the policy (data only) with its args and evaluation beside it
    actor, arch_kwargs = actor_of(model)
    full_config = envs.make_game(args.game, **config).config
    save_policy(out, actor, arch="mlp", arch_kwargs=arch_kwargs, game=args.game, config=full_config,
                observation_shape=env.observation_space.shape, num_actions=int(env.action_space.n),
                meta={"trainer": TRAINER, "checkpoint_id": args.register or None,
                      "total_timesteps": int(model.num_timesteps), "steps": int(model.num_timesteps),
                      "cpu_seconds": round(cpu_seconds, 1), "provenance": provenance([args.game])})
    model.save(out / "sb3_model.zip")  # for resuming with Stable-Baselines3 only; never loaded by the library
    write_args(out, dataclasses.asdict(args), args.game)
    final_seed = 2 * 10**6
    final = evaluate_policy(actor, args, config, args.eval_games, seed=final_seed)
    write_report(out, make_report(
        trainer=TRAINER, args=dataclasses.asdict(args), game=args.game, config=full_config,
        policy=str(out), samples=int(model.num_timesteps), cpu_seconds=cpu_seconds, seed=final_seed,
        games=args.eval_games, note=NOTE, results=final, curve=curve, checkpoint_id=args.register or None,
    ))
    result: dict[str, Any] = {"run": str(out), "final": final}
    if args.register:
        try:
            entry = register_checkpoint(args.register, out, description=describe_run(args))
        except CheckpointError as exc:
            raise SystemExit(f"the policy is saved in {out} but was not registered: {exc}") from exc
        result["registered"] = {"id": entry["id"], "folder": str(checkpoint_dir() / entry["path"])}
    print(json.dumps(result, indent=2))
    return out


def describe_run(args: Args) -> str:
    """The index description of a trained policy: its opponents and budget."""
    rule_based = [k for k in args.opponents if k != SELF]
    return (
        f"MaskablePPO (SB3) policy vs {', '.join(rule_based) or 'itself'}"
        + (f" + self-play snapshots every {args.snapshot_every} steps" if SELF in args.opponents else "")
        + f", {args.total_timesteps} steps"
    )

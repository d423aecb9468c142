"""Train a MaskablePPO policy for any game by self-play, then save it as a loadable policy.

    python -m training.train_ppo --game sequence_v0 --total-timesteps 200000
    python -m training.train_ppo --game sequence_v0 --total-timesteps 200000 --checkpoint-id sequence_v0/ppo-v2 --register

Reads top to bottom (CleanRL style): the ``Args`` dataclass documents every option; seeding happens in one
place; the learner plays one seat while opponents — random, heuristic or frozen snapshots of the learner
itself — move inside ``step()`` (see ``training/selfplay.py``). Every ``eval_every`` steps the policy is
evaluated against fixed opponents on seeded games by the shared team-level evaluation
(:mod:`training.evaluation`); the curve goes to ``curve.csv``, ``curve.png`` and ``tb/``, and the final
evaluation to ``eval.json`` in the one report schema (:mod:`training.report`). Everything goes into the run's
own folder (``runs/train_ppo/<game>-<time>`` unless ``--out`` says otherwise): the policy as ``policy.json`` +
``policy.safetensors`` (data only, see ``agents/policy_io.py``), ``args.json``, ``eval.json`` and the curve,
plus SB3's own ``sb3_model.zip`` for resuming training with Stable-Baselines3 (the library never loads it).
With ``--register`` the policy is copied into the checkpoint folder under ``--checkpoint-id`` and listed in
its ``index.json``, so ``agents.make(id)`` loads it; an id that exists already is refused before training
starts.
"""

from __future__ import annotations

import dataclasses
import json
import math
import pathlib
import sys
import random
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

import agents
import envs
from agents.checkpoint import (
    CheckpointError,
    PolicyAgent,
    checkpoint_dir,
    read_index,
    register_checkpoint,
)
from agents.policy_io import save_policy
from training.convert_sb3 import actor_of
from training.cli import dataclass_parser
from training.evaluation import NOTE, evaluate_module
from training.report import curve_row, log_scalars, tensorboard_writer, make_report, write_args, write_curve, write_report
from training.selfplay import SelfPlayEnv
from envs.provenance import provenance

RUNS_DIR = pathlib.Path("runs") / "train_ppo"

#: Old flag spellings, still accepted with a warning: old field name -> the shared (CleanRL) name.
ALIASES = {"n_steps": "num_steps", "n_epochs": "update_epochs"}


@dataclass
class Args:
    game: str = "sequence_v0"
    """game module name (one of envs.NAMES)"""
    config: str = "{}"
    """game config as JSON, e.g. '{"num_teams": 3}'"""
    checkpoint_id: str = ""
    """versioned agent id for --register, e.g. sequence_v0/ppo-v2 (none by default; an id that exists is refused)"""
    out: str = ""
    """run folder for the policy, args, evaluation and curve (empty: runs/train_ppo/<game>-<UTC time>)"""
    register: bool = False
    """copy the policy into the checkpoint folder as --checkpoint-id and list it in its index.json"""
    seed: int = 1
    """seed of everything: torch, numpy, opponents, deals"""
    total_timesteps: int = 100_000
    """learner decisions to train on"""
    opponents: list[str] = field(default_factory=lambda: ["random-v0"])
    """opponent agent kinds for the pool (ids without the game prefix, e.g. random-v0 heuristic-v1)"""
    selfplay_every: int = 0
    """add a frozen snapshot of the learner to the opponent pool every N steps (0: off)"""
    selfplay_max: int = 5
    """keep at most this many snapshots in the pool (oldest dropped)"""
    learning_rate: float = 3e-4
    """Adam learning rate (SB3 learning_rate)"""
    num_envs: int = 1
    """tables stepped together (an SB3 DummyVecEnv of this many)"""
    num_steps: int = 1024
    """learner decisions per table per rollout (SB3 n_steps)"""
    num_minibatches: int = 4
    """minibatches per pass over a rollout (SB3 batch_size = num_envs * num_steps / num_minibatches)"""
    update_epochs: int = 6
    """passes over each rollout (SB3 n_epochs)"""
    gamma: float = 0.995
    """discount factor"""
    gae_lambda: float = 0.95
    """GAE lambda"""
    clip_coef: float = 0.2
    """PPO clipping of the probability ratio (SB3 clip_range)"""
    ent_coef: float = 0.01
    """entropy bonus coefficient"""
    vf_coef: float = 0.5
    """value loss weight"""
    max_grad_norm: float = 0.5
    """gradient norm clip"""
    norm_adv: bool = True
    """normalise the advantages in each minibatch (SB3 normalize_advantage)"""
    net_arch: list[int] = field(default_factory=lambda: [256, 256])
    """hidden layer widths of the policy (and of the separate value) network"""
    eval_every: int = 20_000
    """evaluate every N steps (0: only at the end)"""
    eval_games: int = 100
    """seeded games per evaluation opponent"""
    eval_opponents: list[str] = field(default_factory=lambda: ["random-v0"])
    """opponent kinds evaluated against (same format as --opponents)"""
    progress: bool = True
    """show a progress bar"""


def parse_args(argv: list[str] | None = None) -> Args:
    parser = dataclass_parser(Args, description=__doc__, list_nargs="*", aliases=ALIASES)
    if any(a == "--batch-size" or a.startswith("--batch-size=") for a in (argv if argv is not None else sys.argv[1:])):
        parser.error("--batch-size is gone: give --num-minibatches (SB3's batch_size is "
                     "num_envs * num_steps / num_minibatches)")
    ns = parser.parse_args(argv)
    args = Args(**vars(ns))
    if args.game not in envs.NAMES:
        parser.error(f"--game {args.game!r} is not a game; choose from {list(envs.NAMES)}")
    try:
        config = json.loads(args.config)
        assert isinstance(config, dict)
    except (json.JSONDecodeError, AssertionError):
        parser.error(f"--config must be a JSON object, got {args.config!r}")
    envs.make_game(args.game, **config)  # raises ConfigError with the allowed values
    for name in ("num_envs", "num_steps", "num_minibatches", "update_epochs", "total_timesteps"):
        if getattr(args, name) <= 0:
            parser.error(f"--{name.replace('_', '-')} must be positive, got {getattr(args, name)}")
    if (args.num_envs * args.num_steps) % args.num_minibatches:
        parser.error(f"--num-minibatches {args.num_minibatches} must divide the rollout, "
                     f"num_envs * num_steps = {args.num_envs * args.num_steps}")
    if args.register and not args.checkpoint_id:
        parser.error(f"--register needs --checkpoint-id (a new id, e.g. {args.game}/ppo-v2)")
    if args.checkpoint_id:
        if not args.checkpoint_id.startswith(args.game + "/"):
            parser.error(f"--checkpoint-id must start with '{args.game}/'")
        if args.register:
            taken = set(agents.available(args.game)) | {e["id"] for e in read_index()}
            if args.checkpoint_id in taken:
                parser.error(
                    f"--checkpoint-id {args.checkpoint_id!r} exists already; an id keeps meaning the same "
                    f"weights, so choose a new version (taken: {sorted(i for i in taken if i.startswith(args.game))})"
                )
    for kind in args.opponents + args.eval_opponents:
        agent_id = f"{args.game}/{kind}"
        if agent_id not in agents.available(args.game):
            parser.error(f"unknown opponent {kind!r}; available: {agents.available(args.game)}")
    return args


def evaluate_policy(actor, args: Args, config: dict[str, Any], games: int, seed: int) -> dict[str, Any]:
    """The shared team-level evaluation (:func:`training.evaluation.evaluate_module`) of the greedy
    policy against each of ``--eval-opponents``: it plays every seat of its team, teams rotated."""
    return evaluate_module(actor, args.game, config, args.eval_opponents, games, seed)


def main(argv: list[str] | None = None) -> pathlib.Path:
    args = parse_args(argv)
    import torch
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.vec_env import DummyVecEnv

    # -- seeding, in one place
    torch.set_num_threads(1)
    random.seed(args.seed)
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    config = json.loads(args.config)
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
    out = pathlib.Path(args.out) if args.out else RUNS_DIR / f"{args.game}-{stamp}"
    if (out / "policy.json").exists():
        raise SystemExit(f"{out} already holds a trained policy; choose another --out")
    out.mkdir(parents=True, exist_ok=True)

    # -- opponents and the environment
    def factory(kind: str, seed_base: int):
        counter = iter(range(10**9))
        return lambda: agents.make(f"{args.game}/{kind}", seed=seed_base + next(counter))

    pool = [factory(kind, 10_000 * (i + 1) + args.seed) for i, kind in enumerate(args.opponents)]
    tables = [SelfPlayEnv(args.game, config, opponent_pool=list(pool), seed=args.seed + 7919 * i)
              for i in range(args.num_envs)]
    env = DummyVecEnv([lambda t=t: t for t in tables])
    # The shared (CleanRL) names mapped to SB3's.
    model = MaskablePPO(
        "MlpPolicy",
        env,
        learning_rate=args.learning_rate,
        n_steps=args.num_steps,
        batch_size=args.num_envs * args.num_steps // args.num_minibatches,
        n_epochs=args.update_epochs,
        gamma=args.gamma,
        gae_lambda=args.gae_lambda,
        clip_range=args.clip_coef,
        ent_coef=args.ent_coef,
        vf_coef=args.vf_coef,
        max_grad_norm=args.max_grad_norm,
        normalize_advantage=args.norm_adv,
        policy_kwargs={"net_arch": list(args.net_arch)},
        seed=args.seed,
        device="cpu",
        verbose=0,
    )

    curve: list[dict[str, Any]] = []
    snapshots: list[Any] = []
    writer = tensorboard_writer(out / "tb", args.game)
    cpu_start = time.process_time()
    title = f"{args.game} {args.checkpoint_id or out.name} (SB3 MaskablePPO)"

    class Monitor(BaseCallback):
        """Episode returns, periodic evaluation and self-play snapshots (fixed metric names)."""

        def __init__(self) -> None:
            super().__init__()
            self.returns: list[float] = []
            self.next_eval = args.eval_every or None
            self.next_snapshot = args.selfplay_every or None
            # CPU seconds spent evaluating, left out of the training CPU time as training.ppo leaves them out
            self.eval_cpu = 0.0

        def _on_step(self) -> bool:
            for table, info in zip(tables, self.locals.get("infos", [])):
                if "episode_seed" in info and table.last_episode:
                    self.returns.append(table.last_episode["reward"])
            step = self.num_timesteps
            if self.next_snapshot and step >= self.next_snapshot:
                self.next_snapshot += args.selfplay_every
                frozen, _ = actor_of(model)
                snapshots.append(lambda m=frozen: PolicyAgent(args.game, model=m, deterministic=False, seed=step))
                del snapshots[: -args.selfplay_max]
                for table in tables:
                    table.pool[:] = pool + snapshots
            if self.next_eval and step >= self.next_eval:
                self.next_eval += args.eval_every
                self._evaluate(step)
            return True

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
    model.learn(total_timesteps=args.total_timesteps, callback=monitor, progress_bar=args.progress)
    if not curve or curve[-1]["step"] != model.num_timesteps:
        monitor._evaluate(model.num_timesteps)
    writer.close()
    cpu_seconds = time.process_time() - cpu_start - monitor.eval_cpu

    # -- save the policy (data only) with its args and evaluation beside it
    actor, arch_kwargs = actor_of(model)
    full_config = envs.make_game(args.game, **config).config
    save_policy(out, actor, arch="mlp", arch_kwargs=arch_kwargs, game=args.game, config=full_config,
                observation_shape=env.observation_space.shape, num_actions=int(env.action_space.n),
                meta={"trainer": "training.train_ppo", "checkpoint_id": args.checkpoint_id or None,
                      "total_timesteps": int(model.num_timesteps), "steps": int(model.num_timesteps),
                      "cpu_seconds": round(cpu_seconds, 1), "provenance": provenance([args.game])})
    model.save(out / "sb3_model.zip")  # for resuming with Stable-Baselines3 only; never loaded by the library
    write_args(out, dataclasses.asdict(args), args.game)
    final_seed = 2 * 10**6
    final = evaluate_policy(actor, args, config, args.eval_games, seed=final_seed)
    write_report(out, make_report(
        trainer="training.train_ppo", args=dataclasses.asdict(args), game=args.game, config=full_config,
        policy=str(out), samples=int(model.num_timesteps), cpu_seconds=cpu_seconds, seed=final_seed,
        games=args.eval_games, note=NOTE, results=final, curve=curve, checkpoint_id=args.checkpoint_id or None,
    ))
    result: dict[str, Any] = {"run": str(out), "final": final}
    if args.register:
        try:
            entry = register_checkpoint(args.checkpoint_id, out, description=describe_run(args))
        except CheckpointError as exc:
            raise SystemExit(f"the policy is saved in {out} but was not registered: {exc}") from exc
        result["registered"] = {"id": entry["id"], "folder": str(checkpoint_dir() / entry["path"])}
    print(json.dumps(result, indent=2))
    return out


def describe_run(args: Args) -> str:
    """The index description of a trained policy: its opponents and budget."""
    return (
        f"MaskablePPO (SB3) policy vs {', '.join(args.opponents)}"
        + (f" + self-play snapshots every {args.selfplay_every} steps" if args.selfplay_every else "")
        + f", {args.total_timesteps} steps"
    )


if __name__ == "__main__":
    main()

"""The RLlib trainer: its ``Args``, RLlib config, loop and export (``python -m training.rllib``; see
:mod:`training.rllib`)."""

from __future__ import annotations

import dataclasses
import json
import math
import os
import pathlib
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

import envs
from envs.provenance import provenance
from training.cli import dataclass_parser
from training.settings import (
    SELF,
    Registers,
    Settings,
    check_finite,
    library_kwargs,
    minibatch_size,
    parse_settings,
    seed_everything,
)
from training.evaluation import NOTE, evaluate_module
from training.report import curve_row, log_scalars, tensorboard_writer, make_report, write_args, write_curve, write_report

TRAINER = "training.rllib"

#: First deal seed of the final evaluation (the periodic ones use the million below it).
EVAL_SEED = 2 * 10**6

#: The learner's losses in an RLlib result that must stay finite.
LOSSES = ("total_loss", "policy_loss", "vf_loss", "entropy")


@dataclass
class Args(Registers, Settings):
    """The RLlib trainer's options: the shared settings (:mod:`training.settings`) and its own."""

    snapshot_every: int = 10
    """with 'self' among --opponents: copy the learner into the next snapshot slot every N iterations (RLlib
    counts its loop in iterations)"""
    snapshot_max: int = 3
    """with 'self' among --opponents: frozen snapshot modules kept, each starting as the untrained policy (3:
    every slot is a module on every env runner)"""
    num_minibatches: int = 16
    """minibatches per pass over a training batch; they split it evenly (16 of 250 from the default batch)"""
    norm_adv: bool = True
    """RLlib normalises the advantages over each training batch, always: --no-norm-adv is refused"""
    out: str = ""
    """output folder for the exported policy and its records (empty: runs/rllib/<game>-<time>)"""
    iterations: int = 50
    """RLlib training iterations (each samples --train-batch env steps, then updates)"""
    train_batch: int = 4000
    """env steps per training iteration (per learner)"""
    hidden: list[int] = field(default_factory=lambda: [256, 256])
    """layer widths of the policy and value networks"""
    address: str = ""
    """address of an existing Ray cluster, e.g. 'auto' or HEAD:6379 (empty: start a local Ray)"""
    ship_code: bool = True
    """with --address: upload this checkout to the cluster's workers (Ray's working_dir); --no-ship-code when
    every node has the project installed"""
    env_runners: int = 0
    """env runners (sampling processes); 0: as many as the cores of this machine (local) or the CPUs of the
    cluster minus one"""
    envs_per_runner: int = 1
    """environments stepped by each env runner"""
    learners: int = 0
    """learner processes for the updates (0: learn in this process)"""
    gpus_per_learner: float = 0.0
    """GPUs per learner (with --learners >= 1; fractional values share a GPU)"""
    max_cycles: int = 0
    """truncation cap of the game in cycles (0: the game's default)"""
    eval_every: int = 0
    """evaluate the learner every N iterations during training (0: only the exported policy at the end)"""

    def rollout_size(self) -> int:
        return self.train_batch

    def rollout_text(self) -> str:
        return "--train-batch"


#: Flags that are gone, refused before parsing: flag -> what to give instead.
REMOVED = {
    "--minibatch": "give --num-minibatches (minibatch size = train_batch / num_minibatches)",
    "--lr": "give --learning-rate",
    "--epochs": "give --update-epochs",
    "--entropy": "give --ent-coef",
    "--snapshot-slots": "give --snapshot-max",
}


def build_parser():
    from training import rllib

    return dataclass_parser(Args, prog="python -m training.rllib", description=rllib.__doc__)


def parse_args(argv: list[str] | None = None) -> Args:
    """The options, validated before any work (Ray is not imported)."""
    parser = build_parser()
    args, _given = parse_settings(parser, Args, argv, removed=REMOVED)
    for name, low in (("iterations", 1), ("envs_per_runner", 1), ("env_runners", 0), ("learners", 0),
                      ("max_cycles", 0), ("eval_every", 0)):
        if getattr(args, name) < low:
            parser.error(f"--{name.replace('_', '-')} must be {low} or more, got {getattr(args, name)}")
    if not args.norm_adv:
        parser.error("--no-norm-adv: RLlib's PPO normalises the advantages over each training batch and cannot "
                     "turn it off")
    if args.gpus_per_learner < 0 or (args.gpus_per_learner and not args.learners):
        parser.error("--gpus-per-learner must be >= 0 and needs --learners >= 1")
    if any(w < 1 for w in args.hidden):
        parser.error(f"--hidden widths must be >= 1, got {args.hidden}")
    return args


def build_config(args: Args, config: dict[str, Any], env_runners: int):
    """The RLlib PPO config of a run (new API stack)."""
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec
    from ray.tune.registry import register_env

    from training.rllib import env as rllib_env

    register_env(rllib_env.ENV_NAME, rllib_env.make_env)
    env_kwargs = dict(config)
    if args.max_cycles:
        env_kwargs["max_cycles"] = args.max_cycles
    obs_space = rllib_env.observation_space(args.game, env_kwargs)
    act_space = envs.make(args.game, raw=True, **config).action_space("player_0")
    slots = args.snapshot_max if SELF in args.opponents else 0
    module_ids = [rllib_env.LEARNER, *rllib_env.snapshot_module_ids(slots)]
    spec = MultiRLModuleSpec(
        rl_module_specs={
            mid: RLModuleSpec(
                module_class=rllib_env.MaskedPolicyModule,
                observation_space=obs_space,
                action_space=act_space,
                model_config={"hidden": list(args.hidden), "activation": "tanh"},
            )
            for mid in module_ids
        }
    )
    from functools import partial

    return (
        PPOConfig()
        .environment(
            rllib_env.ENV_NAME,
            env_config={
                "game": args.game,
                "config": config,
                "opponents": list(args.opponents),
                "seed": args.seed,
                "max_cycles": args.max_cycles or None,
            },
            # RLlib's pre-check steps a random action, ignoring the mask; our strict env rightly refuses it.
            disable_env_checking=True,
        )
        .framework("torch")
        .env_runners(
            num_env_runners=env_runners,
            num_envs_per_env_runner=args.envs_per_runner,
            rollout_fragment_length="auto",
        )
        .learners(num_learners=args.learners, num_gpus_per_learner=args.gpus_per_learner)
        .training(
            **library_kwargs(args, "rllib"),  # the shared (CleanRL) names mapped to RLlib's
            train_batch_size_per_learner=args.train_batch,
            minibatch_size=minibatch_size(args),
        )
        .multi_agent(
            policies=set(module_ids),
            policy_mapping_fn=partial(rllib_env.map_agent_to_module, slots=slots),
            policies_to_train=[rllib_env.LEARNER],
        )
        .rl_module(rl_module_spec=spec)
        .debugging(seed=args.seed)
    )


def start_ray(args: Args) -> int:
    """Connect to ``--address`` or start a local Ray; returns the number of env runners to use."""
    import ray

    repo = str(pathlib.Path(__file__).resolve().parents[2])  # the checkout holding training/rllib/
    if args.address:
        # Workers on other machines import this project from the uploaded checkout, or from their own
        # install (pip install ".[rllib]") with --no-ship-code; see docs/rllib.md.
        runtime_env: dict[str, Any] = {"env_vars": {"OMP_NUM_THREADS": "1"}}
        if args.ship_code:
            runtime_env.update(working_dir=repo, excludes=[".git", "runs", "__pycache__"])
        ray.init(address=args.address, log_to_driver=False, runtime_env=runtime_env)
        cpus = int(ray.cluster_resources().get("CPU", 1))
        default = max(1, cpus - 1)
    else:
        cpus = os.cpu_count() or 1
        default = cpus
        ray.init(
            num_cpus=max(cpus, args.env_runners, 1) + args.learners,
            include_dashboard=False,
            log_to_driver=False,
            # Workers import this project from the checkout it runs in.
            runtime_env={"env_vars": {"PYTHONPATH": repo, "OMP_NUM_THREADS": "1"}},
        )
    return args.env_runners or default


def main(argv: list[str] | None = None) -> pathlib.Path:
    args = parse_args(argv)
    import ray

    # -- seeding, in one place (env runners seed from args.seed through the RLlib config)
    seed_everything(args.seed)
    config = envs.make_game(args.game, **json.loads(args.config)).config
    out = pathlib.Path(args.out or f"runs/rllib/{args.game}-{time.strftime('%Y%m%d-%H%M%S')}")
    out.mkdir(parents=True, exist_ok=True)

    env_runners = start_ray(args)
    try:
        algo = build_config(args, config, env_runners).build_algo()
        curve = train(algo, args, config, out)
        policy_state = algo.learner_group.get_weights(module_ids=["learner"])["learner"]
    finally:
        ray.shutdown()

    export_policy(out, policy_state, args, config, curve)
    write_args(out, dataclasses.asdict(args), args.game)
    final = evaluate_export(out, args, config) if args.eval_games else {}
    samples = curve[-1]["step"] if curve else 0
    if final:
        write_report(out, make_report(
            trainer=TRAINER, args=dataclasses.asdict(args), game=args.game, config=config,
            policy=str(out), samples=samples, cpu_seconds=None, seed=EVAL_SEED, games=args.eval_games,
            note=NOTE + "; cpu_seconds: not measured (Ray's workers run in other processes)",
            results=final, curve=curve,
        ))
    write_curve(curve, out, f"{args.game}: RLlib PPO's greedy policy against fixed opponents", args.game)
    if args.register:
        register(args, out)
    print(json.dumps({"policy": str(out), "final": final, "iterations": len(curve)}, indent=2))
    return out


def train(algo: Any, args: Args, config: dict[str, Any] | None = None, out: pathlib.Path | None = None
          ) -> list[dict[str, Any]]:
    """Run the iterations; refresh snapshot slots; every ``eval_every`` iterations evaluate the learner
    (the shared evaluation); return the learning curve (one row per iteration, ``step`` the learner's
    decisions), logged to TensorBoard under ``out/tb`` with the same names."""
    from agents.progress import progress_bar
    from training.rllib import env as rllib_env

    curve: list[dict[str, Any]] = []
    slots = rllib_env.snapshot_module_ids(args.snapshot_max) if SELF in args.opponents else []
    if slots:  # every slot starts as the initial policy
        initial = algo.learner_group.get_weights(module_ids=["learner"])["learner"]
        set_modules(algo, {slot: initial for slot in slots})
    started = time.time()
    writer = tensorboard_writer(out / "tb", args.game) if out is not None else None
    bar = progress_bar(range(1, args.iterations + 1), disable=not args.progress, desc="rllib iterations")
    for it in bar:
        result = algo.train()
        runners = result.get("env_runners", {})
        returns = runners.get("agent_episode_returns_mean", {})
        learner_returns = [v for k, v in returns.items() if k.startswith(rllib_env.LEARNER + ":")]
        learner_steps = int(runners.get("num_module_steps_sampled_lifetime", {}).get(rllib_env.LEARNER, 0))
        losses = result.get("learners", {}).get(rllib_env.LEARNER, {})
        check_finite({k: losses[k] for k in LOSSES if k in losses}, learner_steps)
        results = {}
        if args.eval_every and args.eval_games and it % args.eval_every == 0 and config is not None:
            weights = algo.learner_group.get_weights(module_ids=[rllib_env.LEARNER])[rllib_env.LEARNER]
            results = evaluate_module(policy_module(weights, args, config)[0], args.game, config,
                                      rule_based(args), args.eval_games, EVAL_SEED - 10**6)
        row = curve_row(
            learner_steps, results,
            iteration=it,
            seconds=round(time.time() - started, 1),
            env_steps=int(runners.get("num_env_steps_sampled_lifetime", 0)),
            learner_steps=learner_steps,
            mean_return=float(np.mean(learner_returns)) if learner_returns else math.nan,
        )
        curve.append(row)
        if writer is not None:
            log_scalars(writer, row)
        bar.set_postfix(steps=row["env_steps"], ret=row["mean_return"])
        if slots and args.snapshot_every and it % args.snapshot_every == 0:
            slot = slots[(it // args.snapshot_every - 1) % len(slots)]
            set_modules(algo, {slot: algo.learner_group.get_weights(module_ids=["learner"])["learner"]})
    if writer is not None:
        writer.close()
    return curve


def set_modules(algo: Any, weights: dict[str, Any]) -> None:
    """Set frozen modules' weights on the learners; RLlib then syncs them to every env runner."""
    algo.set_state({"learner_group": {"learner": {"rl_module": weights}}})


def export_policy(out: pathlib.Path, state: dict[str, Any], args: Args, config: dict[str, Any],
                  curve: list[dict[str, Any]]) -> pathlib.Path:
    """Write the learner's policy network (``pi.*`` of its state) as ``policy.json`` + ``.safetensors``."""
    import ray

    from agents.policy_io import save_policy

    game = envs.make_game(args.game, **config)
    pi, arch_kwargs = policy_module(state, args, config)
    return save_policy(
        out,
        pi,
        arch="mlp",
        arch_kwargs=arch_kwargs,
        game=args.game,
        config=config,
        observation_shape=tuple(game.observation_shape),
        num_actions=game.num_actions,
        meta={
            "trainer": f"{TRAINER} (RLlib PPO, new API stack)",
            "ray_version": ray.__version__,
            "iterations": len(curve),
            "env_steps": curve[-1]["env_steps"] if curve else 0,
            "learner_steps": curve[-1]["learner_steps"] if curve else 0,
            "steps": curve[-1]["learner_steps"] if curve else 0,
            "opponents": list(args.opponents),
            "seed": args.seed,
            "provenance": provenance([args.game]),
        },
    )


def policy_module(state: dict[str, Any], args: Args, config: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
    """The learner's policy network (``pi.*`` of its RLlib state) as our ``mlp`` architecture."""
    import torch

    from agents.architectures import build_architecture

    game = envs.make_game(args.game, **config)
    arch_kwargs = {
        "obs_dim": int(np.prod(game.observation_shape)),
        "hidden": list(args.hidden),
        "num_actions": int(game.num_actions),
        "activation": "tanh",
    }
    pi = build_architecture("mlp", **arch_kwargs)
    pi.load_state_dict(
        {k[len("pi."):]: torch.as_tensor(np.asarray(v)) for k, v in state.items() if k.startswith("pi.")},
        strict=True,
    )
    return pi, arch_kwargs


def rule_based(args: Args) -> list[str]:
    """The opponent kinds the policy is evaluated against: the training opponents but the snapshots."""
    return [k for k in args.opponents if k != SELF]


def evaluate_export(out: pathlib.Path, args: Args, config: dict[str, Any]) -> dict[str, Any]:
    """The shared team-level evaluation (:mod:`training.evaluation`) of the exported policy against
    each rule-based opponent: it plays every seat of its team, teams rotated, Wilson intervals."""
    from agents.policy_io import load_policy

    module, _spec = load_policy(out, game=args.game)
    max_actions = args.max_cycles * envs.make_game(args.game, **config).num_players if args.max_cycles else 0
    return evaluate_module(module, args.game, config, rule_based(args), args.eval_games, EVAL_SEED,
                           max_actions=max_actions)


def register(args: Args, out: pathlib.Path) -> None:
    """Add the exported policy to the checkpoint index as ``args.register``."""
    from agents import checkpoint

    entry = checkpoint.register_checkpoint(
        args.register, out, description=f"RLlib PPO vs {', '.join(args.opponents)}, {args.iterations} iterations"
    )
    print(f"registered {entry['id']} -> {entry['path']}")

"""Train one policy for any game on Ray RLlib (PPO, new API stack), then export it as a safe policy file.

    python -m training.rllib_train --game sequence_v0 --config '{"players_per_team": 2}' \\
        --opponents random-v0 heuristic-v1 snapshot --iterations 200 --out runs/seq-2x2-rllib

For the day one machine is not enough: the same game on many cores or many machines. Without
``--address`` a local Ray starts with as many env runners as this machine has cores; with
``--address`` the run joins an existing Ray cluster (``ray start --head`` on one machine, ``ray start
--address=HEAD:6379`` on the others; see ``docs/rllib.md``).

Reads top to bottom (CleanRL style): the options (every one in ``--help`` with its default), seeding
in one place, the RLlib config, the training loop, the export. The environment is our AEC game
through RLlib's PettingZoo wrapper (``training/rllib_env.py``): one learning team per episode whose
seats all share the module ``"learner"``; rule-based opponents play inside the environment; the kind
``snapshot`` puts frozen copies of the learner (refreshed every ``--snapshot-every`` iterations) in
the other seats through the policy mapping. Action masks are applied by the module.

The output folder gets ``policy.json`` + ``policy.safetensors`` (agents/policy_io.py's format: the
policy network is the ``"mlp"`` architecture, loadable without Ray), ``args.json``, ``eval.json``
(the shared evaluation, :mod:`training.evaluation`, of the exported policy against each rule-based
opponent, in the one report schema of :mod:`training.report`) and the curve (``curve.csv``,
``curve.png`` and TensorBoard scalars in ``tb/``). ``--register ID`` adds it to the checkpoint index so every
tool loads it by id.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import pathlib
import sys
import random
import re
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

import envs
from envs.core.errors import ConfigError
from envs.provenance import provenance
from training.cli import dataclass_parser
from training.evaluation import NOTE, evaluate_module
from training.report import curve_row, log_scalars, tensorboard_writer, make_report, write_args, write_curve, write_report

#: First deal seed of the final evaluation (the periodic ones use the million below it).
EVAL_SEED = 2 * 10**6


@dataclass
class Args:
    game: str = "sequence_v0"
    config: str = "{}"
    out: str = ""
    register: str = ""
    seed: int = 1
    iterations: int = 50
    opponents: list[str] = field(default_factory=lambda: ["random-v0"])
    snapshot_slots: int = 3
    snapshot_every: int = 10
    address: str = ""
    ship_code: bool = True
    env_runners: int = 0
    envs_per_runner: int = 1
    learners: int = 0
    gpus_per_learner: float = 0.0
    learning_rate: float = 3e-4
    train_batch: int = 4000
    num_minibatches: int = 16
    update_epochs: int = 6
    gamma: float = 0.995
    gae_lambda: float = 1.0
    clip_coef: float = 0.3
    ent_coef: float = 0.01
    vf_coef: float = 1.0
    max_grad_norm: float = 0.0
    hidden: list[int] = field(default_factory=lambda: [256, 256])
    max_cycles: int = 0
    eval_every: int = 0
    eval_games: int = 40
    progress: bool = True


#: Old flag spellings, still accepted with a warning: old field name -> the shared (CleanRL) name.
ALIASES = {"lr": "learning_rate", "epochs": "update_epochs", "entropy": "ent_coef"}

HELP = {
    "game": "game module name, one of envs.NAMES",
    "config": "game config as a JSON object, e.g. '{\"players_per_team\": 2}' (Sequence, 2 teams of 2)",
    "out": "output folder for the exported policy and its records (empty: runs/rllib/<game>-<time>)",
    "register": "checkpoint id to register the exported policy under, e.g. sequence_v0/rllib-ppo-v1 "
    "(empty: do not register)",
    "seed": "seed of everything: torch, numpy, deals, teams, opponents",
    "iterations": "RLlib training iterations (each samples --train-batch env steps, then updates)",
    "opponents": "opponent kinds drawn per seat and episode: agent kinds of the game (ids without the game "
    "prefix, e.g. random-v0 heuristic-v1) and/or 'snapshot' (a frozen earlier copy of the learner)",
    "snapshot_slots": "frozen snapshot modules kept when 'snapshot' is an opponent (they start as the "
    "untrained initial policy)",
    "snapshot_every": "copy the learner into the next snapshot slot every N iterations",
    "address": "address of an existing Ray cluster, e.g. 'auto' or HEAD:6379 (empty: start a local Ray)",
    "ship_code": "with --address: upload this checkout to the cluster's workers (Ray's working_dir); "
    "--no-ship-code when every node has the project installed",
    "env_runners": "env runners (sampling processes); 0: as many as the cores of this machine (local) or "
    "the CPUs of the cluster minus one",
    "envs_per_runner": "environments stepped by each env runner",
    "learners": "learner processes for the updates (0: learn in this process)",
    "gpus_per_learner": "GPUs per learner (with --learners >= 1; fractional values share a GPU)",
    "learning_rate": "learning rate (RLlib lr)",
    "train_batch": "env steps per training iteration (per learner)",
    "num_minibatches": "minibatches per pass over a training batch (RLlib minibatch_size = train_batch / this)",
    "update_epochs": "passes over each training batch (RLlib num_epochs)",
    "gamma": "discount factor",
    "gae_lambda": "GAE lambda (RLlib lambda_; its default 1.0)",
    "clip_coef": "PPO clipping of the probability ratio (RLlib clip_param; its default 0.3)",
    "ent_coef": "entropy bonus coefficient (RLlib entropy_coeff)",
    "vf_coef": "value loss weight (RLlib vf_loss_coeff; its default 1.0)",
    "max_grad_norm": "gradient norm clip (RLlib grad_clip; 0: none, RLlib's default)",
    "hidden": "layer widths of the policy and value networks",
    "max_cycles": "truncation cap of the game in cycles (0: the game's default)",
    "eval_every": "evaluate the learner every N iterations during training (0: only the exported policy at the end)",
    "eval_games": "seeded evaluation games of the exported policy per rule-based opponent (0: none)",
    "progress": "show a progress bar",
}


def parse_args(argv: list[str] | None = None) -> Args:
    parser = dataclass_parser(Args, HELP, prog="python -m training.rllib_train", description=__doc__,
                              aliases=ALIASES)
    if any(a == "--minibatch" or a.startswith("--minibatch=") for a in (argv if argv is not None else sys.argv[1:])):
        parser.error("--minibatch is gone: give --num-minibatches (minibatch size = train_batch / num_minibatches)")
    args = Args(**vars(parser.parse_args(argv)))
    if args.game not in envs.NAMES:
        parser.error(f"--game {args.game!r} is not a game; choose from {list(envs.NAMES)}")
    try:
        config = json.loads(args.config)
    except json.JSONDecodeError:
        config = None
    if not isinstance(config, dict):
        parser.error(f"--config must be a JSON object, got {args.config!r}")
    try:
        envs.make_game(args.game, **config)
    except ConfigError as exc:  # names the allowed values
        parser.error(str(exc))
    from training.rllib_env import check_opponents

    try:
        check_opponents(args.game, args.opponents)
    except ValueError as exc:
        parser.error(str(exc))
    for name, low in (("iterations", 1), ("snapshot_slots", 1), ("snapshot_every", 1), ("envs_per_runner", 1),
                      ("train_batch", 1), ("num_minibatches", 1), ("update_epochs", 1), ("env_runners", 0),
                      ("learners", 0), ("max_cycles", 0), ("eval_games", 0), ("eval_every", 0)):
        if getattr(args, name) < low:
            parser.error(f"--{name.replace('_', '-')} must be >= {low}, got {getattr(args, name)}")
    if args.gpus_per_learner < 0 or (args.gpus_per_learner and not args.learners):
        parser.error("--gpus-per-learner must be >= 0 and needs --learners >= 1")
    if any(w < 1 for w in args.hidden):
        parser.error(f"--hidden widths must be >= 1, got {args.hidden}")
    if args.register and not re.fullmatch(rf"{args.game}/[a-z0-9_.-]+-v[0-9]+", args.register):
        parser.error(f"--register must be an id like {args.game}/rllib-ppo-v1, got {args.register!r}")
    if args.register and not _can_register():
        parser.error("--register is not yet available: this checkout's agents/checkpoint.py does not list "
                     "policy-format checkpoints; train without it and keep the exported folder")
    return args


def build_config(args: Args, config: dict[str, Any], env_runners: int):
    """The RLlib PPO config of a run (new API stack)."""
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec
    from ray.tune.registry import register_env

    from training import rllib_env

    register_env(rllib_env.ENV_NAME, rllib_env.make_env)
    env_kwargs = dict(config)
    if args.max_cycles:
        env_kwargs["max_cycles"] = args.max_cycles
    obs_space = rllib_env.observation_space(args.game, env_kwargs)
    act_space = envs.make(args.game, raw=True, **config).action_space("player_0")
    slots = args.snapshot_slots if rllib_env.SNAPSHOT in args.opponents else 0
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
            lr=args.learning_rate,
            gamma=args.gamma,
            lambda_=args.gae_lambda,
            clip_param=args.clip_coef,
            entropy_coeff=args.ent_coef,
            vf_loss_coeff=args.vf_coef,
            grad_clip=args.max_grad_norm or None,
            train_batch_size_per_learner=args.train_batch,
            minibatch_size=max(1, args.train_batch // args.num_minibatches),
            num_epochs=args.update_epochs,
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

    repo = str(pathlib.Path(__file__).resolve().parents[1])
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
    import torch

    # -- seeding, in one place (env runners seed from args.seed through the RLlib config)
    torch.set_num_threads(1)
    random.seed(args.seed)
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
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
            trainer="training.rllib_train", args=dataclasses.asdict(args), game=args.game, config=config,
            policy=str(out), samples=samples, cpu_seconds=None, seed=EVAL_SEED, games=args.eval_games,
            note=NOTE + "; cpu_seconds: not measured (Ray's workers run in other processes)",
            results=final, curve=curve,
        ))
    write_curve(curve, out, f"{args.game} (RLlib PPO)", args.game)
    if args.register:
        register(args, out)
    print(json.dumps({"policy": str(out), "final": final, "iterations": len(curve)}, indent=2))
    return out


def train(algo: Any, args: Args, config: dict[str, Any] | None = None, out: pathlib.Path | None = None
          ) -> list[dict[str, Any]]:
    """Run the iterations; refresh snapshot slots; every ``eval_every`` iterations evaluate the learner
    (the shared evaluation); return the learning curve (one row per iteration, ``step`` the learner's
    decisions), logged to TensorBoard under ``out/tb`` with the same names."""
    from tqdm import tqdm

    from training import rllib_env

    curve: list[dict[str, Any]] = []
    slots = rllib_env.snapshot_module_ids(args.snapshot_slots) if rllib_env.SNAPSHOT in args.opponents else []
    if slots:  # every slot starts as the initial policy
        initial = algo.learner_group.get_weights(module_ids=["learner"])["learner"]
        set_modules(algo, {slot: initial for slot in slots})
    started = time.time()
    writer = tensorboard_writer(out / "tb", args.game) if out is not None else None
    bar = tqdm(range(1, args.iterations + 1), disable=not args.progress, desc="rllib iterations")
    for it in bar:
        result = algo.train()
        runners = result.get("env_runners", {})
        returns = runners.get("agent_episode_returns_mean", {})
        learner_returns = [v for k, v in returns.items() if k.startswith(rllib_env.LEARNER + ":")]
        learner_steps = int(runners.get("num_module_steps_sampled_lifetime", {}).get(rllib_env.LEARNER, 0))
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
        if slots and it % args.snapshot_every == 0:
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
            "trainer": "training.rllib_train (RLlib PPO, new API stack)",
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
    from training.rllib_env import SNAPSHOT

    return [k for k in args.opponents if k != SNAPSHOT]


def evaluate_export(out: pathlib.Path, args: Args, config: dict[str, Any]) -> dict[str, Any]:
    """The shared team-level evaluation (:mod:`training.evaluation`) of the exported policy against
    each rule-based opponent: it plays every seat of its team, teams rotated, Wilson intervals."""
    from agents.policy_io import load_policy

    module, _spec = load_policy(out, game=args.game)
    max_actions = args.max_cycles * envs.make_game(args.game, **config).num_players if args.max_cycles else 0
    return evaluate_module(module, args.game, config, rule_based(args), args.eval_games, EVAL_SEED,
                           max_actions=max_actions)


def _can_register() -> bool:
    from agents import checkpoint

    return hasattr(checkpoint, "register_checkpoint")


def register(args: Args, out: pathlib.Path) -> None:
    """Add the exported policy to the checkpoint index as ``args.register``."""
    from agents import checkpoint

    entry = checkpoint.register_checkpoint(
        args.register, out, description=f"RLlib PPO vs {', '.join(args.opponents)}, {args.iterations} iterations"
    )
    print(f"registered {entry['id']} -> {entry['path']}")


if __name__ == "__main__":
    main()

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
(seeded games of the exported policy against each rule-based opponent) and the learning curve
(``learning_curve.csv`` and ``.png``). ``--register ID`` adds it to the checkpoint index so every
tool loads it by id.
"""

from __future__ import annotations

import dataclasses
import json
import os
import pathlib
import random
import re
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

import envs
from envs.core.errors import ConfigError
from training.cli import dataclass_parser


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
    lr: float = 3e-4
    train_batch: int = 4000
    minibatch: int = 256
    epochs: int = 6
    gamma: float = 0.995
    entropy: float = 0.01
    hidden: list[int] = field(default_factory=lambda: [256, 256])
    max_cycles: int = 0
    eval_games: int = 40
    progress: bool = True


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
    "lr": "learning rate",
    "train_batch": "env steps per training iteration (per learner)",
    "minibatch": "SGD minibatch size",
    "epochs": "passes over each training batch",
    "gamma": "discount factor",
    "entropy": "entropy bonus coefficient",
    "hidden": "layer widths of the policy and value networks",
    "max_cycles": "truncation cap of the game in cycles (0: the game's default)",
    "eval_games": "seeded evaluation games of the exported policy per rule-based opponent (0: none)",
    "progress": "show a progress bar",
}


def parse_args(argv: list[str] | None = None) -> Args:
    parser = dataclass_parser(Args, HELP, prog="python -m training.rllib_train", description=__doc__)
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
                      ("train_batch", 1), ("minibatch", 1), ("epochs", 1), ("env_runners", 0),
                      ("learners", 0), ("max_cycles", 0), ("eval_games", 0)):
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
            lr=args.lr,
            gamma=args.gamma,
            entropy_coeff=args.entropy,
            train_batch_size_per_learner=args.train_batch,
            minibatch_size=min(args.minibatch, args.train_batch),
            num_epochs=args.epochs,
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
        curve = train(algo, args)
        policy_state = algo.learner_group.get_weights(module_ids=["learner"])["learner"]
    finally:
        ray.shutdown()

    export_policy(out, policy_state, args, config, curve)
    (out / "args.json").write_text(json.dumps(dataclasses.asdict(args), indent=2) + "\n")
    final = evaluate_export(out, args, config) if args.eval_games else {}
    (out / "eval.json").write_text(
        json.dumps(
            {
                "game": args.game,
                "config": config,
                "final": final,
                "learning_curve": curve,
                "note": "final: fresh seeds, the exported policy plays the whole learning team "
                "(argmax of legal actions), teams rotated, 95% Wilson intervals; learning_curve: mean return of the learner's "
                "seats per iteration against the opponent mix",
            },
            indent=2,
        )
        + "\n"
    )
    write_curve_files(curve, out, f"{args.game} (RLlib PPO)")
    if args.register:
        register(args, out)
    print(json.dumps({"policy": str(out), "final": final, "iterations": len(curve)}, indent=2))
    return out


def train(algo: Any, args: Args) -> list[dict[str, Any]]:
    """Run the iterations; refresh snapshot slots; return the learning curve (fixed metric names)."""
    from tqdm import tqdm

    from training import rllib_env

    curve: list[dict[str, Any]] = []
    slots = rllib_env.snapshot_module_ids(args.snapshot_slots) if rllib_env.SNAPSHOT in args.opponents else []
    if slots:  # every slot starts as the initial policy
        initial = algo.learner_group.get_weights(module_ids=["learner"])["learner"]
        set_modules(algo, {slot: initial for slot in slots})
    started = time.time()
    bar = tqdm(range(1, args.iterations + 1), disable=not args.progress, desc="rllib iterations")
    for it in bar:
        result = algo.train()
        runners = result.get("env_runners", {})
        returns = runners.get("agent_episode_returns_mean", {})
        learner_returns = [v for k, v in returns.items() if k.startswith(rllib_env.LEARNER + ":")]
        row = {
            "iteration": it,
            "seconds": round(time.time() - started, 1),
            "env_steps": int(runners.get("num_env_steps_sampled_lifetime", 0)),
            "learner_steps": int(runners.get("num_module_steps_sampled_lifetime", {}).get(rllib_env.LEARNER, 0)),
            "train/mean_return": float(np.mean(learner_returns)) if learner_returns else None,
        }
        curve.append(row)
        bar.set_postfix(steps=row["env_steps"], ret=row["train/mean_return"])
        if slots and it % args.snapshot_every == 0:
            slot = slots[(it // args.snapshot_every - 1) % len(slots)]
            set_modules(algo, {slot: algo.learner_group.get_weights(module_ids=["learner"])["learner"]})
    return curve


def set_modules(algo: Any, weights: dict[str, Any]) -> None:
    """Set frozen modules' weights on the learners; RLlib then syncs them to every env runner."""
    algo.set_state({"learner_group": {"learner": {"rl_module": weights}}})


def export_policy(out: pathlib.Path, state: dict[str, Any], args: Args, config: dict[str, Any],
                  curve: list[dict[str, Any]]) -> pathlib.Path:
    """Write the learner's policy network (``pi.*`` of its state) as ``policy.json`` + ``.safetensors``."""
    import ray
    import torch

    from agents.architectures import build_architecture
    from agents.policy_io import save_policy

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
            "opponents": list(args.opponents),
            "seed": args.seed,
        },
    )


def evaluate_export(out: pathlib.Path, args: Args, config: dict[str, Any]) -> dict[str, Any]:
    """Win/draw/loss of the exported policy (whole learning team) against each rule-based opponent."""
    import agents
    from agents.checkpoint import PolicyAgent
    from agents.policy_io import load_policy
    from agents.scoring import score_game
    from training.rllib_env import SNAPSHOT
    from agents.stats import wilson_interval

    module, _spec = load_policy(out, game=args.game)
    game = envs.make_game(args.game, **config)
    n_seats, n_teams = game.num_players, game.num_teams
    results = {}
    for kind in [k for k in args.opponents if k != SNAPSHOT]:
        wins = draws = losses = 0
        for g in range(args.eval_games):
            team = g % n_teams
            seats = [
                PolicyAgent(args.game, model=module, config=config) if game.team_of(s) == team
                else agents.make(f"{args.game}/{kind}", seed=10**6 + 1000 * g + s)
                for s in range(n_seats)
            ]
            record = agents.play_game(args.game, seats, seed=2 * 10**6 + g, config=config)
            winners = score_game(game, record).winners
            if team in winners:
                wins += 1
            elif not winners:
                draws += 1
            else:
                losses += 1
        low, high = wilson_interval(wins, args.eval_games)
        results[kind] = {"games": args.eval_games, "wins": wins, "draws": draws, "losses": losses,
                         "win_rate": wins / args.eval_games, "win_rate_wilson95": [low, high]}
    return results


def write_curve_files(curve: list[dict[str, Any]], out: pathlib.Path, title: str) -> None:
    """``learning_curve.csv`` and ``learning_curve.png`` (mean return of the learner per iteration)."""
    import csv

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    keys = ["iteration", "seconds", "env_steps", "learner_steps", "train/mean_return"]
    with open(out / "learning_curve.csv", "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=keys)
        writer.writeheader()
        writer.writerows(curve)
    fig, ax = plt.subplots(figsize=(6, 3.6))
    points = [(c["env_steps"], c["train/mean_return"]) for c in curve if c["train/mean_return"] is not None]
    if points:
        ax.plot(*zip(*points), marker="o")
    ax.set_xlabel("env steps")
    ax.set_ylabel("mean return of the learner's seats")
    ax.set_title(title)
    fig.tight_layout()
    fig.savefig(out / "learning_curve.png", dpi=110)
    plt.close(fig)


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

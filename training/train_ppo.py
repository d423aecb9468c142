"""Train a MaskablePPO policy for any game by self-play, then save it as a loadable policy.

    python -m training.train_ppo --game sequence_v0 --total-timesteps 200000
    python -m training.train_ppo --game sequence_v0 --total-timesteps 200000 --checkpoint-id sequence_v0/ppo-v2 --register

Reads top to bottom (CleanRL style): the ``Args`` dataclass documents every option; seeding happens in
one place; the learner plays one seat while opponents — random, heuristic or frozen snapshots of the
learner itself — move inside ``step()`` (see ``training/selfplay.py``). Every ``eval_every`` steps the
policy is evaluated against fixed opponents on seeded games; the learning curve is written into
``eval.json`` and as a PNG. Everything goes into the run's own folder (``runs/train_ppo/<game>-<time>`` unless ``--out`` says
otherwise): the policy as ``policy.json`` + ``policy.safetensors`` (data only, see
``agents/policy_io.py``), ``args.json``, ``eval.json`` and the curve, plus SB3's own ``sb3_model.zip``
for resuming training with Stable-Baselines3 (the library never loads it). With ``--register`` the
policy is copied into the checkpoint folder under ``--checkpoint-id`` and listed in its
``index.json``, so ``agents.make(id)`` loads it; an id that exists already is refused before training
starts.
"""

from __future__ import annotations

import dataclasses
import json
import pathlib
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
from training.selfplay import SelfPlayEnv

RUNS_DIR = pathlib.Path("runs") / "train_ppo"


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
    """Adam learning rate"""
    n_steps: int = 1024
    """rollout length per update"""
    batch_size: int = 256
    """minibatch size of each gradient step"""
    n_epochs: int = 6
    """passes over each rollout"""
    gamma: float = 0.995
    """discount factor"""
    ent_coef: float = 0.01
    """entropy bonus coefficient"""
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
    parser = dataclass_parser(Args, description=__doc__, list_nargs="*")
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


def evaluate_policy(model, args: Args, config: dict[str, Any], games: int, seed: int) -> dict[str, Any]:
    """Win/draw/loss of the current policy against each eval opponent over seeded games, seats rotated.

    The policy plays one seat and the opponent kind every other seat (team-mates included). Outcomes
    are scored like the evaluation harness: a win is first place for the policy's team (shared if
    tied), a draw is a truncated game or one in which every team ties, anything else is a loss.
    """
    from agents.scoring import score_game
    from training.matches import table_game

    results = {}
    game = table_game(args.game, config)
    n_seats = game.num_players
    for kind in args.eval_opponents:
        wins = draws = losses = 0
        for g in range(games):
            learner_seat = g % n_seats
            seats = [agents.make(f"{args.game}/{kind}", seed=seed + 1000 * g + i) for i in range(n_seats)]
            seats[learner_seat] = PolicyAgent(args.game, seed=seed + g, model=model)
            record = agents.play_game(args.game, seats, seed=seed + g, config=config)
            winners = score_game(game, record).winners
            if game.team_of(learner_seat) in winners:
                wins += 1
            elif not winners:
                draws += 1
            else:
                losses += 1
        results[kind] = {"games": games, "wins": wins, "draws": draws, "losses": losses, "win_rate": wins / games}
    return results


def main(argv: list[str] | None = None) -> pathlib.Path:
    args = parse_args(argv)
    import torch
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.callbacks import BaseCallback

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
    env = SelfPlayEnv(args.game, config, opponent_pool=pool, seed=args.seed)
    model = MaskablePPO(
        "MlpPolicy",
        env,
        learning_rate=args.learning_rate,
        n_steps=args.n_steps,
        batch_size=args.batch_size,
        n_epochs=args.n_epochs,
        gamma=args.gamma,
        ent_coef=args.ent_coef,
        policy_kwargs={"net_arch": list(args.net_arch)},
        seed=args.seed,
        device="cpu",
        verbose=0,
    )

    curve: list[dict[str, Any]] = []
    snapshots: list[Any] = []

    class Monitor(BaseCallback):
        """Episode returns, periodic evaluation and self-play snapshots (fixed metric names)."""

        def __init__(self) -> None:
            super().__init__()
            self.returns: list[float] = []
            self.next_eval = args.eval_every or None
            self.next_snapshot = args.selfplay_every or None
            self.started = time.time()

        def _on_step(self) -> bool:
            for info in self.locals.get("infos", []):
                if "episode_seed" in info:
                    self.returns.append(env.last_episode["reward"])
            step = self.num_timesteps
            if self.next_snapshot and step >= self.next_snapshot:
                self.next_snapshot += args.selfplay_every
                frozen, _ = actor_of(model)
                snapshots.append(lambda m=frozen: PolicyAgent(args.game, model=m, deterministic=False, seed=step))
                del snapshots[: -args.selfplay_max]
                env.pool[:] = pool + snapshots
            if self.next_eval and step >= self.next_eval:
                self.next_eval += args.eval_every
                self._evaluate(step)
            return True

        def _evaluate(self, step: int) -> None:
            result = evaluate_policy(actor_of(model)[0], args, config, args.eval_games, seed=10**6)
            recent = self.returns[-200:]
            curve.append(
                {
                    "step": step,
                    "seconds": round(time.time() - self.started, 1),
                    "train/mean_return": float(np.mean(recent)) if recent else None,
                    **{f"eval/win_rate_vs_{k}": v["win_rate"] for k, v in result.items()},
                }
            )

    monitor = Monitor()
    model.learn(total_timesteps=args.total_timesteps, callback=monitor, progress_bar=args.progress)
    if not curve or curve[-1]["step"] != model.num_timesteps:
        monitor._evaluate(model.num_timesteps)

    # -- save the policy (data only) with its args and evaluation beside it
    actor, arch_kwargs = actor_of(model)
    full_config = envs.make_game(args.game, **config).config
    save_policy(out, actor, arch="mlp", arch_kwargs=arch_kwargs, game=args.game, config=full_config,
                observation_shape=env.observation_space.shape, num_actions=int(env.action_space.n),
                meta={"trainer": "training.train_ppo", "checkpoint_id": args.checkpoint_id or None,
                      "total_timesteps": int(model.num_timesteps)})
    model.save(out / "sb3_model.zip")  # for resuming with Stable-Baselines3 only; never loaded by the library
    (out / "args.json").write_text(json.dumps(dataclasses.asdict(args), indent=2))
    final = evaluate_policy(actor, args, config, args.eval_games, seed=2 * 10**6)
    (out / "eval.json").write_text(
        json.dumps(
            {
                "checkpoint_id": args.checkpoint_id or None,
                "game": args.game,
                "config": envs.make_game(args.game, **config).config,
                "final": final,
                "learning_curve": curve,
                "note": "final: fresh seeds, seats rotated; learner plays deterministically (argmax of legal actions)",
            },
            indent=2,
        )
    )
    write_curve(curve, out / "learning_curve.png", args.checkpoint_id or str(out))
    result: dict[str, Any] = {"run": str(out), "final": final}
    if args.register:
        try:
            entry = register_checkpoint(args.checkpoint_id, out, description=describe_run(args))
        except CheckpointError as exc:
            raise SystemExit(f"the policy is saved in {out} but was not registered: {exc}") from exc
        result["registered"] = {"id": entry["id"], "folder": str(checkpoint_dir() / entry["path"])}
    print(json.dumps(result, indent=2))
    return out


def write_curve(curve: list[dict[str, Any]], path: pathlib.Path, title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 3.6))
    steps = [c["step"] for c in curve]
    for key in sorted({k for c in curve for k in c if k.startswith("eval/")}):
        ax.plot(steps, [c.get(key) for c in curve], marker="o", label=key.replace("eval/", ""))
    train = [c["train/mean_return"] for c in curve]
    if any(v is not None for v in train):
        ax.plot(steps, [np.nan if v is None else (v + 1) / 2 for v in train], ls="--", label="train (return+1)/2")
    ax.set_ylim(0, 1)
    ax.set_xlabel("learner steps")
    ax.set_ylabel("win rate")
    ax.set_title(title)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def describe_run(args: Args) -> str:
    """The index description of a trained policy: its opponents and budget."""
    return (
        f"MaskablePPO (SB3) policy vs {', '.join(args.opponents)}"
        + (f" + self-play snapshots every {args.selfplay_every} steps" if args.selfplay_every else "")
        + f", {args.total_timesteps} steps"
    )


if __name__ == "__main__":
    main()

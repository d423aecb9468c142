"""``python -m training.ppo --evaluate``: the shared evaluation (:mod:`training.evaluation`) of a saved
policy, written as a report in the one schema (:mod:`training.report`)."""

from __future__ import annotations

import pathlib
from typing import Any

import envs
from agents.checkpoint import checkpoint_dir, policy_folder
from agents.policy_io import load_policy
from training.evaluation import NOTE, evaluate_module
from training.report import make_report, write_report


def evaluate_folder(folder: pathlib.Path | str, args: Any) -> dict[str, Any]:
    """Evaluate the policy of a run folder (its ``policy/``), a policy folder or a checkpoint id; writes
    the report beside the policy, or under ``runs/ppo-evaluate/`` for one in the checkpoint folder (the
    package's data is never written to). The report's ``written_to`` says where."""
    import dataclasses

    policy = policy_folder(folder)
    module, spec = load_policy(policy)
    config = spec["config"]
    game = envs.make_game(spec["game"], **config)
    result = evaluate_module(
        module,
        spec["game"],
        config,
        args.eval_opponents,
        args.eval_games,
        args.eval_seed,
        min(args.num_envs, args.eval_games),
        args.max_actions or game.default_max_cycles * game.num_players,
    )
    meta = spec["meta"]
    report = make_report(
        trainer=meta.get("trainer") if meta.get("trainer") in ("training.sb3", "training.train_ppo", "training.rllib_train")
        else "training.ppo",
        args=dataclasses.asdict(args),
        game=spec["game"],
        config=config,
        policy=str(policy),
        samples=int(meta.get("steps") or meta.get("total_timesteps") or meta.get("learner_steps") or 0),
        cpu_seconds=meta.get("cpu_seconds"),
        seed=args.eval_seed,
        games=args.eval_games,
        note=NOTE,
        results=result,
    )
    out, shipped, where = policy, checkpoint_dir().resolve(), policy.resolve()
    if where.is_relative_to(shipped):
        out = pathlib.Path("runs/ppo-evaluate") / where.relative_to(shipped)
        out.mkdir(parents=True, exist_ok=True)
    path = out / f"eval-{args.eval_games}-seed{args.eval_seed}.json"
    report["written_to"] = str(path)
    write_report(out, report, path.name)
    return report

"""One trained policy against fixed agent kinds: the evaluation every trainer calls, during and
after training, and ``python -m training.ppo --evaluate``.

(The other kind, agents against each other in a seat-rotated round robin with Elo ratings, is the
league: :mod:`training.league`.)

``training.ppo``, ``training.sb3`` and ``training.rllib`` all hand
:func:`evaluate_module` a policy network (a module mapping observations to logits, as
:func:`agents.policy_io.load_policy` returns) and get the same counts back:

* game ``g`` is dealt with seed ``seed + g`` and the policy plays team ``g % num_teams`` — every seat
  of that team, so team mates are never counted as opponents; every other seat is the opponent kind;
* the policy is greedy (the most likely legal action);
* each game is scored by :func:`agents.scoring.score_teams` and counted by the league's
  :class:`training.league.matches.AgentLine`: a win is first place for the policy's team (a shared
  first place counts), a draw is a game nobody won (truncated, or every team tied), anything else a loss;
  the win rate carries its Wilson 95% interval as ``win_rate_ci95``, and games and wins by the
  team's side (side k is team k, ``player_k``'s team).

The games are stepped in batches on :class:`training.vector_env.Tables` over ``envs.vector`` (one
forward per step for all tables), so an evaluation costs about what the games themselves cost.

:func:`evaluate_and_write` evaluates a policy and writes the result as a report in the one schema
(:mod:`training.report`; ``eval.json`` beside the policy): what a trainer calls at the end of a run.
:func:`evaluate_folder` does it for a saved policy (a run folder, a policy folder or a checkpoint
id): ``python -m training.ppo --evaluate``.
"""

from __future__ import annotations

import dataclasses
import pathlib
from typing import Any

import torch

import agents
import envs
from agents.checkpoint import checkpoint_dir, policy_folder
from agents.policy_io import load_policy
from agents.registry import qualify, resolve
from training.league.matches import AgentLine
from training.ppo.algo import masked_log_probs
from training.report import TRAINERS, make_report, write_report
from training.vector_env import Outcome, Tables

NOTE = ("greedy policy; game g dealt with seed eval_seed+g, the policy plays every seat of team g % num_teams; "
        "a win is first place for its team (shared counts), a draw a game nobody won; Wilson 95% (win_rate_ci95)")


def opponent_summary(outcomes: list[Outcome], opponent: str, num_teams: int) -> dict[str, Any]:
    """The league's per-agent summary (:meth:`AgentLine.summary`) of the policy's games against one
    opponent kind, with ``opponent`` in place of ``agent``."""
    line = AgentLine.at_table("policy", num_teams)
    for o in outcomes:
        line.add(o.won, o.draw, o.rank, o.length, 1 / num_teams)
        line.add_side(o.side, o.won)
    summary = line.summary()
    summary["opponent"] = opponent
    del summary["agent"]
    return summary


def evaluate_module(
    module: torch.nn.Module,
    game_name: str,
    config: dict[str, Any],
    opponents: list[str],
    games: int,
    seed: int,
    batch: int = 64,
    max_actions: int = 0,
) -> dict[str, dict[str, Any]]:
    """Greedy ``module`` against each opponent kind over ``games`` seeded games (see the module);
    returns the summary per opponent kind."""
    game = envs.make_game(game_name, **config)
    num_teams = game.num_teams
    max_actions = max_actions or game.default_max_cycles * game.num_players
    for kind in opponents:
        resolve(game_name, kind)  # an agent id or a policy folder of this game; else a ValueError saying so
    results = {}
    was_training = module.training
    module.eval()

    def no_snapshots(_k: int, _rows: list[int]) -> list[int]:
        raise RuntimeError("evaluation games have no snapshot opponents")

    for kind in opponents:

        def deal(g: int, kind: str = kind) -> tuple[int, str, Any, int]:
            agent_id = qualify(game_name, kind)
            return seed + g, kind, (lambda s: agents.make(agent_id, seed=s)), g % num_teams

        tables = Tables(game, min(batch, games), deal, max_actions, max_games=games)
        tables.advance(no_snapshots)
        while any(tables.active):
            rows = [i for i in range(tables.n) if tables.active[i]]
            obs, mask = tables.observe(rows)
            with torch.no_grad():
                acts = masked_log_probs(module(torch.from_numpy(obs)), torch.from_numpy(mask)).argmax(-1).tolist()
            tables.play(rows, acts)
            tables.advance(no_snapshots)
        results[kind] = opponent_summary(tables.finished, kind, num_teams)
    module.train(was_training)
    return results


def evaluate_and_write(
    folder: pathlib.Path | str,
    module: torch.nn.Module,
    *,
    trainer: str,
    args: dict[str, Any],
    game: str,
    config: dict[str, Any],
    samples: int,
    cpu_seconds: float | None,
    opponents: list[str],
    games: int,
    seed: int,
    batch: int = 64,
    max_actions: int = 0,
    name: str = "eval.json",
    note: str = NOTE,
    policy: pathlib.Path | str | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """Evaluate ``module`` (:func:`evaluate_module`) and write the result into ``folder/name`` as a
    report in the one schema (:func:`training.report.make_report`); returns the report, whose
    ``written_to`` says where it went. This is what a trainer calls at the end of a run, with the
    policy's folder. ``policy`` names the policy's folder when the report goes elsewhere; ``extra``
    adds keys such as ``curve``."""
    results = evaluate_module(module, game, config, opponents, games, seed, batch, max_actions)
    report = make_report(trainer=trainer, args=args, game=game, config=config,
                         policy=str(folder if policy is None else policy), samples=samples,
                         cpu_seconds=cpu_seconds, seed=seed, games=games, note=note, results=results, **extra)
    path = pathlib.Path(folder) / name
    report["written_to"] = str(path)
    write_report(path.parent, report, path.name)
    return report


def trainer_of(meta: dict[str, Any]) -> str:
    """The trainer that made a policy, from its meta (RLlib's names its API stack after the module
    name); a policy whose meta names none of the trainers was made by ``training.ppo``."""
    name = str(meta.get("trainer") or "").split(" ", 1)[0]
    return name if name in TRAINERS else "training.ppo"


def evaluate_folder(folder: pathlib.Path | str, args: Any) -> dict[str, Any]:
    """``python -m training.ppo --evaluate``: the policy of a run folder (its ``policy/``), a policy
    folder or a checkpoint id against ``args.eval_opponents``, with ``args.eval_games`` games from
    ``args.eval_seed`` (``args``: :class:`training.ppo.Args`, written into the report). The report
    goes beside the policy as ``eval-<games>-seed<seed>-<opponents>.json`` (the opponents joined by ``+``,
    so an evaluation against other opponents never replaces this one), or under ``runs/ppo-evaluate/`` for
    a shipped checkpoint (the package's data is never written to); its ``written_to`` says where."""
    policy = policy_folder(folder)
    module, spec = load_policy(policy)
    config = spec["config"]
    game = envs.make_game(spec["game"], **config)
    meta = spec["meta"]
    out, shipped, where = policy, checkpoint_dir().resolve(), policy.resolve()
    if where.is_relative_to(shipped):
        out = pathlib.Path("runs/ppo-evaluate") / where.relative_to(shipped)
        out.mkdir(parents=True, exist_ok=True)
    report = evaluate_and_write(
        out,
        module,
        trainer=trainer_of(meta),
        args=dataclasses.asdict(args),
        game=spec["game"],
        config=config,
        samples=int(meta.get("steps") or meta.get("total_timesteps") or meta.get("learner_steps") or 0),
        cpu_seconds=meta.get("cpu_seconds"),
        opponents=args.eval_opponents,
        games=args.eval_games,
        seed=args.eval_seed,
        batch=min(args.num_envs, args.eval_games),
        max_actions=args.max_actions or game.default_max_cycles * game.num_players,
        name=f"eval-{args.eval_games}-seed{args.eval_seed}-{'+'.join(args.eval_opponents)}.json",
        policy=policy,
    )
    return report

"""The one team-level evaluation every trainer calls, during and after training.

``training.ppo``, ``training.train_ppo`` and ``training.rllib_train`` all hand it a policy network
(a module mapping observations to logits, as :func:`agents.policy_io.load_policy` returns) and get
the same counts back:

* game ``g`` is dealt with seed ``seed + g`` and the policy plays team ``g % num_teams`` — every seat
  of that team, so team mates are never counted as opponents; every other seat is the opponent kind;
* the policy is greedy (the most likely legal action);
* each game is scored by :func:`agents.scoring.score_teams` and counted by the evaluation harness's
  :class:`training.matches.AgentLine`: a win is first place for the policy's team (a shared first
  place counts), a draw is a game nobody won (truncated, or every team tied), anything else a loss;
  the win rate carries its Wilson 95% interval as ``win_rate_ci95``, and games and wins by the
  team's side (side 0 moves first).

The games are stepped in batches on :class:`training.vector_env.Tables` over ``envs.vector`` (one
forward per step for all tables), so an evaluation costs about what the games themselves cost.
"""

from __future__ import annotations

from typing import Any

import torch

import agents
import envs
from training.matches import AgentLine
from training.ppo.algo import masked_log_probs
from training.vector_env import Outcome, Tables

NOTE = ("greedy policy; game g dealt with seed eval_seed+g, the policy plays every seat of team g % num_teams; "
        "a win is first place for its team (shared counts), a draw a game nobody won; Wilson 95% (win_rate_ci95)")


def summarise(outcomes: list[Outcome], opponent: str, num_teams: int) -> dict[str, Any]:
    """The harness's per-agent summary of the policy's games against one opponent kind."""
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
    known = set(agents.available(game_name))
    for kind in opponents:
        if f"{game_name}/{kind}" not in known:
            raise ValueError(f"unknown opponent {kind!r} for {game_name}; available: "
                             f"{sorted(k.split('/', 1)[1] for k in known)}")
    results = {}
    was_training = module.training
    module.eval()

    def no_snapshots(_k: int, _rows: list[int]) -> list[int]:
        raise RuntimeError("evaluation games have no snapshot opponents")

    for kind in opponents:

        def deal(g: int, kind: str = kind) -> tuple[int, str, Any, int]:
            agent_id = f"{game_name}/{kind}"
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
        results[kind] = summarise(tables.finished, kind, num_teams)
    module.train(was_training)
    return results

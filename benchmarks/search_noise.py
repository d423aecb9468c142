"""How far apart two searches value the same moves: the noise a search teacher's values carry.

    python -m benchmarks.search_noise wizard_arena_v0/search-v3 --games 6 --per-game 10 \\
        --out runs/diag/arena-search-v3-noise.json

A rollout search agent (any id with ``search_values``, with ``--search-setting`` over its shipped
settings and ``--base`` over its shipped base, e.g. a network checkpoint) values the moves at
decisions of one seat in games of ``--player`` (``heuristic-v1`` by default) against copies of
itself, seats rotated and deals seeded from ``--seed``: at each of the first ``--per-game`` decisions
with a choice, two copies of the search on different seeds value the position, and the report
compares them on the moves both tried:

- ``noise``: the mean absolute difference between the two values of the same move, each search's
  values taken relative to their mean over those moves (a shift of every value alike changes no
  choice and no improved target), and ``offset``: how far the two means are apart;
- ``gap``: how much better the first search's best move is than its second best, and ``spread``:
  than its worst;
- ``same_choice``: how often the two searches choose the same move.

``training.ppo --teacher-targets improved`` shifts the network's policy toward the moves a search
values higher by ``exp(value / T)``; a ``--teacher-temperature`` well below the noise chases the
search's noise, one well above the gaps leaves the policy where it is. The report's mean noise is a
first choice for ``T``. Writes one JSON report with provenance.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys
from typing import Any, Sequence

import numpy as np

import agents
import envs
from agents.base import Agent
from agents.rollout_search import agent_factory
from envs.core.config import parse_key_values
from envs.provenance import provenance


class Probe(Agent):
    """Plays as ``player``; at its first ``per_game`` decisions with a choice, two searches value the position."""

    def __init__(self, player: Agent, searches: list[Agent], per_game: int, rows: list[dict[str, Any]]) -> None:
        super().__init__(player.game_name, seed=player.seed)
        self.player, self.searches, self.per_game, self.rows = player, searches, per_game, rows
        self.taken = 0

    def reset(self, seat: int, game: Any) -> None:
        super().reset(seat, game)
        for agent in (self.player, *self.searches):
            agent.reset(seat, game)

    def act(self, observation: dict[str, Any], view: dict[str, Any]) -> int:
        if self.taken < self.per_game and int(np.count_nonzero(observation["action_mask"])) > 1:
            self.taken += 1
            (c0, v0), (c1, v1) = (s.search_values(observation, view) for s in self.searches)
            common = sorted(set(v0) & set(v1))
            a, b = np.array([v0[m] for m in common]), np.array([v1[m] for m in common])
            ranked = sorted(v0.values(), reverse=True)
            self.rows.append({
                "noise": float(np.mean(np.abs((a - a.mean()) - (b - b.mean())))) if common else float("nan"),
                "offset": float(abs(a.mean() - b.mean())) if common else float("nan"),
                "gap": float(ranked[0] - ranked[1]) if len(ranked) > 1 else 0.0,
                "spread": float(ranked[0] - ranked[-1]),
                "same_choice": int(c0) == int(c1),
                "moves_tried": len(v0),
            })
        return int(self.player.act(observation, view))


def summarise(rows: list[dict[str, Any]]) -> dict[str, float]:
    noise = [r["noise"] for r in rows if np.isfinite(r["noise"])]
    offset = [r["offset"] for r in rows if np.isfinite(r["offset"])]

    def stats(values: list[float], name: str) -> dict[str, float]:
        if not values:
            return {}
        return {f"{name}_mean": float(np.mean(values)), f"{name}_median": float(np.median(values)),
                f"{name}_p90": float(np.percentile(values, 90))}

    return {"decisions": len(rows), **stats(noise, "noise"), **stats(offset, "offset"),
            **stats([r["gap"] for r in rows], "gap"),
            **stats([r["spread"] for r in rows], "spread"),
            "same_choice": float(np.mean([r["same_choice"] for r in rows])) if rows else float("nan"),
            "moves_tried_mean": float(np.mean([r["moves_tried"] for r in rows])) if rows else float("nan")}


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("search", help="a rollout search agent id, e.g. wizard_arena_v0/search-v3")
    parser.add_argument("--search-setting", action="append", default=[], metavar="KEY=VALUE",
                        help="the search's settings over its shipped ones (e.g. simulations=4)")
    parser.add_argument("--base", default="",
                        help="the search's base over its shipped one: an agent kind or a checkpoint id "
                             "(e.g. pans_trial_v0/ppo-v4)")
    parser.add_argument("--player", default="heuristic-v1", help="who plays every seat (the probed one too)")
    parser.add_argument("--games", type=int, default=6)
    parser.add_argument("--per-game", type=int, default=10, help="decisions probed in each game (its first ones)")
    parser.add_argument("--seed", type=int, default=5_000, help="first deal seed")
    parser.add_argument("--out", type=pathlib.Path, required=True, help="the JSON report")
    args = parser.parse_args(argv)
    game_name = args.search.split("/", 1)[0]
    if game_name not in envs.NAMES:
        parser.error(f"SEARCH is GAME/AGENT with GAME one of {list(envs.NAMES)}, got {args.search!r}")
    if args.games < 1 or args.per_game < 1:
        parser.error(f"--games and --per-game must be at least 1, got {args.games} and {args.per_game}")
    settings = parse_key_values(args.search_setting, "--search-setting")
    extra: dict[str, Any] = {"search": settings} if settings else {}
    if args.base:
        extra["base"] = args.base
    player = args.player if "/" in args.player else f"{game_name}/{args.player}"
    try:
        if not hasattr(agents.make(args.search, seed=0, **extra), "search_values"):
            raise SystemExit(f"{args.search!r} is not a rollout search agent (it has no search_values)")
        make_player = agent_factory(game_name, args.player, "player")
    except (KeyError, ValueError) as exc:
        parser.error(str(exc))
    game = envs.make_game(game_name)
    rows: list[dict[str, Any]] = []
    for index in range(args.games):
        seat = index % game.num_players
        seats: list[Agent] = [make_player(104729 * index + p) for p in range(game.num_players)]
        searches = [agents.make(args.search, seed=7919 * index + k, **extra) for k in (0, 1)]
        seats[seat] = Probe(seats[seat], searches, args.per_game, rows)
        agents.play_game(game_name, seats, seed=args.seed + index)
        print(f"game {index + 1}/{args.games}: seat {seat}, {len(rows)} decisions so far", file=sys.stderr, flush=True)
    report = {"search": args.search, "search_settings": settings, "base": args.base or None, "player": player,
              "games": args.games, "per_game": args.per_game, "seed": args.seed, "summary": summarise(rows), "decisions": rows,
              "provenance": provenance(game_name)}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=1) + "\n")
    for key, value in report["summary"].items():
        print(f"{key:18s} {value:.4f}" if isinstance(value, float) else f"{key:18s} {value}")
    return report


if __name__ == "__main__":
    import sys

    from agents.errors import run_command

    sys.exit(run_command(main, "python -m benchmarks.search_noise"))

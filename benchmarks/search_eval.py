"""One search agent against copies of another agent, seats rotated, resumable.

    python -m benchmarks.search_eval pans_trial_v0/search-v1 --games 400 --out runs/search/pans.jsonl
    python -m benchmarks.search_eval dojo_v0/search-v1 --games 200 --out runs/search/dojo.jsonl \\
        --search horizon=40 --search simulations=4

Game ``i`` is dealt with seed ``first_seed + i``; the search agent sits at seat ``i mod n`` and
every other seat is the opponent (``heuristic-v1`` by default); seat ``s`` of game ``i`` is seeded
``seed * 1000 + s`` (as the league seeds its tables). Each finished game is appended to ``--out`` as
one JSON line (its seed, seat, returns, whether the search agent won, the wall time of each of its
decisions with a choice, and the process's CPU time), so a rerun with the same ``--out`` plays only
the games still missing. Games can be split over processes with ``--part K/M`` (game ``i`` belongs to
part ``i mod M``; give each its own ``--out`` and read them together with ``--summary``).

Any agent can sit in the measured seat (``heuristic-v1``, say, to compare a search with its base on
the same deals); only one that keeps its times (a search agent) records them.

The summary: games, wins, the win rate with its 95% Wilson interval, the fair share (1/n) and the
ratio to it, and the mean and 95th-percentile wall time a decision with a choice.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys
import time
from typing import Any, Sequence

import agents
import envs
from agents.scoring import score_game
from agents.stats import wilson_interval
from envs.core.config import parse_key_values
from envs.provenance import provenance


def play_one(agent_id: str, opponent: str, game_name: str, config: dict[str, Any], index: int, first_seed: int,
             search: dict[str, Any], extra: dict[str, Any] | None = None) -> dict[str, Any]:
    game = envs.make_game(game_name, **config)
    n = game.num_players
    seed = first_seed + index
    seat = index % n
    kwargs = {"search": search} if search else {}
    kwargs.update(extra or {})
    bots = [agents.make(agent_id, seed=seed * 1000 + s, **kwargs) if s == seat
            else agents.make(opponent, seed=seed * 1000 + s) for s in range(n)]
    cpu, wall = time.process_time(), time.perf_counter()
    record = agents.play_game(game_name, bots, seed=seed, config=config)
    score = score_game(game, record, truncation_decides=True)
    team = game.team_of(seat)
    return {
        "index": index, "seed": seed, "seat": seat, "returns": record.returns, "length": record.length,
        "end_reason": record.end_reason, "won": team in score.winners, "rank": score.ranks[team],
        # an agent that keeps no times (a heuristic measured the same way, for comparison) records none
        "move_times": [round(t, 5) for t in getattr(bots[seat], "move_times", [])],
        "move_cpu_times": [round(t, 5) for t in getattr(bots[seat], "move_cpu_times", [])],
        "cpu_s": round(time.process_time() - cpu, 3), "wall_s": round(time.perf_counter() - wall, 3),
        "provenance": provenance(game_name),
    }


def read_results(paths: Sequence[pathlib.Path]) -> list[dict[str, Any]]:
    out = {}
    for path in paths:
        if path.exists():
            for line in path.read_text().splitlines():
                if line.strip():
                    row = json.loads(line)
                    out[row["index"]] = row
    return [out[k] for k in sorted(out)]


def summary(rows: list[dict[str, Any]], num_players: int) -> dict[str, Any]:
    import numpy as np

    games = len(rows)
    wins = sum(1 for r in rows if r["won"])
    times = np.asarray([t for r in rows for t in r["move_times"]])
    cpu = np.asarray([t for r in rows for t in r.get("move_cpu_times", [])])
    low, high = wilson_interval(wins, games) if games else (0.0, 1.0)
    fair = 1.0 / num_players
    return {
        "games": games, "wins": wins, "win_rate": wins / games if games else 0.0,
        "wilson95": [round(low, 4), round(high, 4)], "fair_share": fair,
        "ratio_to_fair": round(wins / games / fair, 3) if games else 0.0,
        "ratio_wilson95": [round(low / fair, 3), round(high / fair, 3)],
        "moves_with_choice": int(len(times)),
        "mean_move_s": round(float(times.mean()), 4) if len(times) else 0.0,
        "p95_move_s": round(float(np.percentile(times, 95)), 4) if len(times) else 0.0,
        "mean_move_cpu_s": round(float(cpu.mean()), 4) if len(cpu) else 0.0,
        "p95_move_cpu_s": round(float(np.percentile(cpu, 95)), 4) if len(cpu) else 0.0,
        "cpu_s": round(sum(r["cpu_s"] for r in rows), 1),
    }


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("agent", help="the search agent's id, e.g. pans_trial_v0/search-v1")
    parser.add_argument("--opponent", default="heuristic-v1", help="every other seat (default heuristic-v1)")
    parser.add_argument("--games", type=int, default=40)
    parser.add_argument("--seed", type=int, default=0, help="first deal seed")
    parser.add_argument("--config", nargs="*", default=[], metavar="KEY=VALUE", help="game keywords")
    parser.add_argument("--search", action="append", default=[], metavar="KEY=VALUE",
                        help="override a search setting (agents.rollout_search.SETTINGS)")
    parser.add_argument("--base", default="",
                        help="the search's base agent: an agent kind or id, a checkpoint id, a policy or run folder "
                             "(default: the search agent's own, heuristic-v1)")
    parser.add_argument("--rollout", action="append", default=[],
                        help="the agent playing every seat in the rollouts (default: the base); given twice or more, "
                             "the seat's continuations to switch between (policy switching), the others playing "
                             "the first unless --opponents-model says otherwise")
    parser.add_argument("--opponents-model", dest="opponents", default="",
                        help="the agent the other seats play in the rollouts (default: the rollout agent)")
    parser.add_argument("--value", default="",
                        help="score the rollouts' ends with a fit from benchmarks.fit_value (FILE.json, or "
                             "FILE.json:rank) or a network's value head (a checkpoint id or policy folder; default: "
                             "the game's value function)")
    parser.add_argument("--part", default="0/1", help="K/M: play only games i with i mod M == K")
    parser.add_argument("--out", type=pathlib.Path, required=True, help="JSON-lines file, appended to")
    parser.add_argument("--summary", nargs="*", type=pathlib.Path, default=None,
                        help="only summarise these result files (and --out)")
    args = parser.parse_args(argv)
    game_name = args.agent.split("/", 1)[0]
    opponent = args.opponent if "/" in args.opponent else f"{game_name}/{args.opponent}"
    config = parse_key_values(args.config)
    search = parse_key_values(args.search, "--search")
    extra = {k: v for k in ("base", "opponents", "value") if (v := getattr(args, k))}
    if args.rollout:
        extra["rollout"] = args.rollout[0] if len(args.rollout) == 1 else list(args.rollout)
    game = envs.make_game(game_name, **config)
    if args.games < 1:
        parser.error(f"--games must be at least 1, got {args.games}")
    try:
        k, m = (int(x) for x in args.part.split("/"))
        if not 0 <= k < m:
            raise ValueError
    except ValueError:
        parser.error(f"--part must be K/M with 0 <= K < M, got {args.part!r}")
    if args.summary is None:
        try:  # a wrong agent, base, value or setting is refused now, not after the first game
            agents.make(args.agent, seed=0, **({"search": search} if search else {}), **extra)
        except (ValueError, KeyError) as exc:
            parser.error(str(exc))
        except TypeError as exc:  # settings handed to an agent that does not search
            parser.error(f"{args.agent} does not take them ({exc}): --search, --base, --rollout, --opponents-model "
                         f"and --value apply to search agents only")
        args.out.parent.mkdir(parents=True, exist_ok=True)
        done = {r["index"] for r in read_results([args.out])}
        for index in range(args.games):
            if index % m != k or index in done:
                continue
            row = play_one(args.agent, opponent, game_name, config, index, args.seed, search, extra)
            with args.out.open("a") as f:
                f.write(json.dumps(row) + "\n")
            rows = read_results([args.out])
            s = summary(rows, game.num_players)
            print(f"game {index} seat {row['seat']} won={row['won']} | {s['games']} games, {s['wins']} wins, "
                  f"{s['win_rate']:.3f} {s['wilson95']}, x{s['ratio_to_fair']} fair, "
                  f"wall {s['mean_move_s']:.3f}/{s['p95_move_s']:.3f} "
                  f"cpu {s['mean_move_cpu_s']:.3f}/{s['p95_move_cpu_s']:.3f} s a move", flush=True)
    rows = read_results([args.out, *(args.summary or [])])
    result = {"agent": args.agent, **extra, "opponent": opponent, "config": config, "search": search,
              **summary(rows, game.num_players), "provenance": provenance(game_name)}
    print(json.dumps(result))
    return result


if __name__ == "__main__":
    import sys

    from agents.errors import run_command

    sys.exit(run_command(main, "python -m benchmarks.search_eval"))

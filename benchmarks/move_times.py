"""How long a shipped checkpoint takes to choose a move: CPU time per decision on one thread.

    python -m benchmarks.move_times                       # every checkpoint in checkpoints/index.json
    python -m benchmarks.move_times --ids sequence_v0/ppo-v4 --games 2 --out /tmp/move_times.json

Each checkpoint plays ``--games`` seeded games of its own config from its team's seats, every other
seat played by the game's ``heuristic-v1`` (the lineup its evaluation uses), seats rotated game by game.
Every call of the checkpoint's ``act`` is timed with the process's CPU clock (torch on one thread), so
a busy machine changes the number little; loading the policy is not counted. The JSON written (by
default ``docs/reference/move_times.json``, which the game pages read for their checkpoint tables)
holds per id the mean and median milliseconds per move, the moves timed and the provenance block.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import statistics
import time
from typing import Any

import agents
import envs
from agents.runner import play_game
from envs.provenance import provenance

ROOT = pathlib.Path(__file__).resolve().parent.parent
DEFAULT_OUT = ROOT / "docs" / "reference" / "move_times.json"


class _Timed:
    """Wraps an agent's ``act`` to record the CPU seconds of every call."""

    def __init__(self, agent: Any, times: list[float]) -> None:
        self.agent, self.times = agent, times
        original = agent.act

        def act(observation, view):
            start = time.process_time()
            action = original(observation, view)
            times.append(time.process_time() - start)
            return action

        agent.act = act


def time_checkpoint(entry: dict[str, Any], games: int) -> dict[str, Any]:
    """Mean and median ms per move of one index entry over ``games`` games against heuristic-v1."""
    game_name, config = entry["game"], dict(entry.get("config") or {})
    game = envs.make(game_name, raw=True, **config).game
    times: list[float] = []
    for g in range(games):
        team = g % game.num_teams
        seats = []
        for seat in range(game.num_players):
            if game.team_of(seat) == team:
                agent = agents.make(entry["id"], seed=g * 1000 + seat)
                _Timed(agent, times)
            else:
                agent = agents.make(f"{game_name}/heuristic-v1", seed=g * 1000 + seat)
            seats.append(agent)
        play_game(game_name, seats, seed=g, config=config)
    if not times:
        raise RuntimeError(f"{entry['id']} made no move in {games} games")
    return {
        "ms_per_move": round(1000 * statistics.fmean(times), 3),
        "median_ms": round(1000 * statistics.median(times), 3),
        "moves": len(times),
        "games": games,
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ids", nargs="*", help="checkpoint ids to time (default: every one in the index)")
    parser.add_argument("--games", type=int, default=4, help="games per checkpoint (default: %(default)s)")
    parser.add_argument("--out", type=pathlib.Path, default=DEFAULT_OUT, help="JSON file to write (default: %(default)s)")
    args = parser.parse_args(argv)
    if args.games < 1:
        parser.error(f"--games must be at least 1, got {args.games}")
    import torch

    torch.set_num_threads(1)
    index = json.loads((ROOT / "checkpoints" / "index.json").read_text(encoding="utf-8"))["checkpoints"]
    known = [e["id"] for e in index]
    unknown = sorted(set(args.ids or []) - set(known))
    if unknown:
        parser.error(f"not in checkpoints/index.json: {unknown}; known: {known}")
    chosen = [e for e in index if not args.ids or e["id"] in args.ids]
    report: dict[str, Any] = {
        "provenance": provenance(),
        "what": "CPU milliseconds per decision of each checkpoint (torch on one thread), from its team's seats "
                "against heuristic-v1, seeded games, seats rotated; policy loading not counted",
        "command": "python -m benchmarks.move_times" + (f" --ids {' '.join(args.ids)}" if args.ids else "")
                   + (f" --games {args.games}" if args.games != 4 else ""),
        "checkpoints": {},
    }
    for entry in chosen:
        report["checkpoints"][entry["id"]] = row = time_checkpoint(entry, args.games)
        print(f"{entry['id']:36} {row['ms_per_move']:9.2f} ms a move (median {row['median_ms']:.2f}; {row['moves']} moves)",
              flush=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    import sys

    from agents.errors import run_command

    sys.exit(run_command(main, "python -m benchmarks.move_times"))

"""Where a network departs from its teachers, by kind of decision.

    python -m benchmarks.teacher_gap pans_trial_v0/ppo-v3 --teacher heuristic-v1 --search search-v1 \\
        --search-setting simulations=4 --games 16 --out runs/diag/ppo-v3-gap.json

The network (any agent id or policy folder) plays one seat against ``--opponent`` (seats rotated,
deals seeded from ``--seed``). At each of its decisions with a choice:

- a teacher (``--teacher``) and a second copy of it on another seed choose;
- a search (``--search``, over ``--search-base`` where given) and a second copy of it choose, and the
  first also values the network's move and the teacher's (they are added to its candidates);

so for each kind of decision (the view's ``stage``, or ``phase``; ``all`` where the game names none) it
counts how often the network plays the teacher's move and the search's, how often each teacher agrees
with its own copy (the most any learner can agree with it), and the search value the network's move
and the teacher's give up against the best move the search tried. The network plays its own moves, so
the positions are the ones it reaches. Writes one JSON report with provenance.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys
from collections import defaultdict
from typing import Any, Callable, Sequence

import agents
import envs
from agents.base import Agent
from agents.rollout_search import agent_factory
from envs.core.config import parse_key_values
from envs.provenance import provenance

COUNTS = ("decisions", "net_is_teacher", "teacher_self", "net_is_search", "search_self", "teacher_is_search")


def _name(game_name: str, spec: str) -> str:
    """How the report names an agent: its full id, or the policy folder as given."""
    return spec if "/" in spec or pathlib.Path(spec).is_dir() else f"{game_name}/{spec}"


class Probe(Agent):
    """Plays the network's moves and records what its teachers would have done."""

    reads_view = True

    def __init__(self, game_name: str, makers: dict[str, Callable[[int], Agent]], seed: int,
                 rows: list[dict[str, Any]]) -> None:
        super().__init__(game_name, seed=seed)
        self.net = makers["network"](seed)
        self.teachers = [makers["teacher"](seed + 1 + i) for i in range(2)]
        self.searches = [makers["search"](seed + 3 + i) for i in range(2)]
        self.rows = rows

    def reset(self, seat: int, game: Any) -> None:
        super().reset(seat, game)
        for agent in (self.net, *self.teachers, *self.searches):
            agent.reset(seat, game)

    def act(self, observation: dict[str, Any], view: dict[str, Any]) -> int:
        move = int(self.net.act(observation, view))
        if int(observation["action_mask"].sum()) > 1:
            t0, t1 = (int(t.act(observation, view)) for t in self.teachers)
            s0, values = self.searches[0].search_values(observation, view, include=[move, t0])
            s1 = int(self.searches[1].act(observation, view))
            best = max(values.values())
            self.rows.append({"kind": str(view.get("stage", view.get("phase", "all"))), "net": move, "teacher": t0,
                              "teacher_again": t1, "search": int(s0), "search_again": s1,
                              "net_lost": best - values[move], "teacher_lost": best - values[t0]})
        return move


def summarise(rows: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """Per kind of decision (and ``all``): the counts as shares, and the mean and total value given up."""
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        groups[r["kind"]].append(r)
        groups["all"].append(r)
    out = {}
    for kind, rs in sorted(groups.items(), key=lambda kv: -len(kv[1])):
        n = len(rs)
        out[kind] = {
            "decisions": n,
            "net_is_teacher": sum(r["net"] == r["teacher"] for r in rs) / n,
            "teacher_self": sum(r["teacher"] == r["teacher_again"] for r in rs) / n,
            "net_is_search": sum(r["net"] == r["search"] for r in rs) / n,
            "search_self": sum(r["search"] == r["search_again"] for r in rs) / n,
            "teacher_is_search": sum(r["teacher"] == r["search"] for r in rs) / n,
            "net_lost_mean": sum(r["net_lost"] for r in rs) / n,
            "teacher_lost_mean": sum(r["teacher_lost"] for r in rs) / n,
            "net_lost_total": sum(r["net_lost"] for r in rs),
            "teacher_lost_total": sum(r["teacher_lost"] for r in rs),
        }
    return out


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("network", help="the learner: an agent id (e.g. pans_trial_v0/ppo-v3) or a policy folder")
    parser.add_argument("--game", default="", help="the game (needed only when NETWORK is a policy folder)")
    parser.add_argument("--teacher", default="heuristic-v1")
    parser.add_argument("--search", default="search-v1", help="a rollout search agent")
    parser.add_argument("--search-setting", action="append", default=[], metavar="KEY=VALUE",
                        help="the search's settings over its shipped ones (e.g. simulations=4)")
    parser.add_argument("--search-base", default="",
                        help="the search's base over its shipped one: an agent kind or a checkpoint id "
                             "(e.g. pans_trial_v0/ppo-v4)")
    parser.add_argument("--opponent", default="heuristic-v1", help="every other seat")
    parser.add_argument("--games", type=int, default=16)
    parser.add_argument("--seed", type=int, default=3_000_000, help="first deal seed")
    parser.add_argument("--out", type=pathlib.Path, required=True, help="the JSON report")
    args = parser.parse_args(argv)
    if pathlib.Path(args.network).is_dir():
        if not args.game:
            parser.error("--game is needed when NETWORK is a policy folder")
        game_name = args.game
    else:
        game_name = args.network.split("/", 1)[0]
    if game_name not in envs.NAMES:
        parser.error(f"unknown game {game_name!r}; the games are {list(envs.NAMES)}")
    if args.games < 1:
        parser.error(f"--games must be at least 1, got {args.games}")
    settings = parse_key_values(args.search_setting, "--search-setting")
    search: dict[str, Any] = {"search": settings} if settings else {}
    if args.search_base:
        search["base"] = args.search_base
    try:  # an id or a policy folder; a network is loaded once and shared by the agents made from it
        makers = {role: agent_factory(game_name, getattr(args, role), role)
                  for role in ("network", "teacher", "opponent")}
    except ValueError as exc:
        parser.error(str(exc))
    makers["search"] = lambda seed: agents.make(_name(game_name, args.search), seed=seed, **search)
    try:
        first_search = makers["search"](0)
    except (KeyError, ValueError) as exc:
        parser.error(str(exc))
    if not hasattr(first_search, "search_values"):
        raise SystemExit(f"--search {args.search!r} is not a rollout search agent (it has no search_values)")
    game = envs.make_game(game_name)
    rows: list[dict[str, Any]] = []
    wins = 0
    for index in range(args.games):
        seat = index % game.num_players
        probe = Probe(game_name, makers, 7919 * index, rows)
        seats = [makers["opponent"](104729 * index + p) for p in range(game.num_players)]
        seats[seat] = probe
        record = agents.play_game(game_name, seats, seed=args.seed + index)
        wins += record.returns[seat] == max(record.returns) and record.returns.count(max(record.returns)) == 1
        print(f"game {index + 1}/{args.games}: seat {seat}, {len(rows)} decisions so far", file=sys.stderr, flush=True)
    report = {"network": args.network, "game": game_name, "teacher": _name(game_name, args.teacher),
              "search": _name(game_name, args.search), "search_settings": settings,
              "search_base": args.search_base or None,
              "opponent": _name(game_name, args.opponent), "games": args.games, "seed": args.seed,
              "network_first_places": int(wins), "by_kind": summarise(rows), "provenance": provenance(game_name)}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=1) + "\n")
    head = f"{'kind':16s} {'n':>5s} " + " ".join(f"{k:>17s}" for k in COUNTS[1:]) + "  net_lost teacher_lost"
    print(head)
    for kind, s in report["by_kind"].items():
        print(f"{kind:16s} {s['decisions']:5d} " + " ".join(f"{s[k]:17.2f}" for k in COUNTS[1:])
              + f"  {s['net_lost_mean']:8.3f} {s['teacher_lost_mean']:12.3f}")
    return report


if __name__ == "__main__":
    import sys

    from agents.errors import run_command

    sys.exit(run_command(main, "python -m benchmarks.teacher_gap"))

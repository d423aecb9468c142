"""``python -m training.league``: the league command (its documentation is the package's, :mod:`training.league`)."""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import pathlib
import sys
from typing import Any, Sequence

import envs
from agents.errors import run_command
from agents.pool import check_pool_options
from agents.registry import resolve, searches_at_play_time as registered_as_searching
from envs.core import ConfigError
from envs.core.config import parse_key_values
from envs.provenance import provenance
from training.league.matches import evaluate, round_robin, table_facts
from training.league.ladder import DEFAULT_WORK, GAMES as LADDER_GAMES, SEARCH_GAMES, SEED as LADDER_SEED, SLOW_GAMES
from training.league.output import (FEW_GAMES, ladder_summary, lineup_label, make_console, print_all_summary,
                                    print_ladder, print_report, write_outputs)
from training.league.tables import cannot_play, check_seat, game_tables, table_at, table_label  # noqa: F401  (offered here too)

#: Games per lineup of the quick league: a fixed count (rounded up to whole seat rotations), so two
#: runs print the same tables on any machine.
QUICK_GAMES = FEW_GAMES
#: Games of the ladder's top against heuristic-v1 in the quick league, where that agent searches.
QUICK_TOP_GAMES = 12
FULL_GAMES = 400  # per lineup: a 95% interval narrower than +-5 points
#: Local worker processes when --workers is not given.
LOCAL_WORKERS = min(2, os.cpu_count() or 1)


def resolve_agent(game_name: str, agent_id: str) -> str:
    """``"heuristic-v1"`` -> ``"sequence_v0/heuristic-v1"``; full ids and policy folders are checked as
    they are (:func:`agents.registry.resolve`)."""
    try:
        return resolve(game_name, agent_id)
    except ValueError as exc:
        raise SystemExit(f"error: {exc}") from None


def parse_config(pairs: Sequence[str]) -> dict[str, Any]:
    """``--config`` pairs as a config dict (:func:`envs.core.config.parse_key_values`)."""
    return parse_key_values(pairs, "--config")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m training.league",
        description="The league: agents against each other in seeded games with rotated seats, with Wilson "
        "intervals and Elo ratings.",
        epilog="Scheduling, scoring and outputs are described in the package's documentation: "
        "python -m pydoc training.league",
    )
    parser.add_argument("--game", default="sequence_v0", help=f"the game, one of {list(envs.NAMES)} (default: %(default)s)")
    who = parser.add_mutually_exclusive_group()
    who.add_argument("--agents", nargs="+", metavar="ID",
                     help="round robin of these agent ids (short ids such as heuristic-v1 work too); "
                     "default: every registered agent of the game")
    who.add_argument("--lineup", nargs="+", metavar="ID",
                     help="one agent id per team, e.g. heuristic-v1 random-v0 random-v0 (default: none, use --agents)")
    who.add_argument("--ladder", metavar="GAME",
                     help="print GAME's ladder: every agent rated on one Elo scale, strongest first (with --config: "
                     "the ladder of that config family)")
    who.add_argument("--ladder-summary", action="store_true",
                     help="print each table's three strongest current agents as a Markdown table (the README's)")
    who.add_argument("--make-ladder", nargs="+", metavar="GAME",
                     help="remake the ladders of these games ('all' for every game): plays every pairing of the "
                     "ladder's design, resumable (see python -m pydoc training.league.ladder)")
    who.add_argument("--all", action="store_true",
                     help="every game in envs.NAMES with its default config: round robin of all its registered agents, "
                     "plus a table for each other config shipped checkpoints were trained for (default: off)")
    size = parser.add_mutually_exclusive_group()
    size.add_argument("--quick", action="store_true",
                      help=f"{QUICK_GAMES} games per lineup among the current agents that do not search at play time, "
                      f"plus the ladder's top against heuristic-v1 in {QUICK_TOP_GAMES} games where it searches; the "
                      "default with --all, or --game without --agents")
    size.add_argument("--full", action="store_true", help=f"{FULL_GAMES} games per lineup (default: off)")
    size.add_argument("--games", type=int,
                      help="games per lineup, rounded up to whole seat rotations (default: 100, or as --quick/--full)")
    parser.add_argument("--config", nargs="*", default=[], metavar="KEY=VALUE",
                        help="game config keywords, values read as JSON (default: the game's defaults)")
    parser.add_argument("--seed", type=int, help=f"first deal seed (default: 0, or {LADDER_SEED:,} with --make-ladder)")
    parser.add_argument("--budget-s", type=float,
                        help="stop starting games after this many seconds per table; lineups are then cut to equal "
                        "whole seat rotations, so the numbers depend on the machine's speed (default: none)")
    parser.add_argument("--min-games", type=int,
                        help="games every lineup plays even past --budget-s, rounded up to whole seat rotations "
                        "(default: 0)")
    parser.add_argument("--min-cycles", type=int,
                        help="whole seat rotations every lineup plays even past --budget-s "
                        "(default: 1 with --quick, else 0)")
    parser.add_argument("--workers", type=int,
                        help=f"worker processes (default: min(2, cores) = {LOCAL_WORKERS}; with --ray-address, "
                        "one per CPU of the cluster)")
    parser.add_argument("--start-method", choices=multiprocessing.get_all_start_methods(),
                        help="how local worker processes start (default: the platform's)")
    parser.add_argument("--ray-address", metavar="ADDRESS",
                        help="play the games on this Ray cluster ('auto' for one started here with ray start, "
                        "HOST:6379, or ray://HOST:10001; needs the rllib extra and this package on every node), "
                        "with the same results as locally (default: local processes)")
    parser.add_argument("--out", type=pathlib.Path,
                        help="output folder (default: runs/league/<game>, or runs/league/all with --all)")
    parser.add_argument("--records", type=pathlib.Path, metavar="DIR",
                        help="write every game as a JSON record into DIR, replayable with python -m play replay "
                        "(default: none)")
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bar (default: shown)")
    ladder = parser.add_argument_group("ladder (with --make-ladder)")
    ladder.add_argument("--ladder-games", type=int, default=LADDER_GAMES,
                        help="games per pairing (default: %(default)s)")
    ladder.add_argument("--search-games", type=int, default=SEARCH_GAMES,
                        help="games per pairing of an agent that searches at play time (default: %(default)s)")
    ladder.add_argument("--slow-games", type=int, default=SLOW_GAMES,
                        help="games per pairing of OpenSpiel's IS-MCTS (default: %(default)s)")
    ladder.add_argument("--work", type=pathlib.Path, default=DEFAULT_WORK,
                        help="where every pairing's games are kept, so a stopped run goes on (default: %(default)s)")
    ladder.add_argument("--ladder-dir", type=pathlib.Path,
                        help="where the ladder files are written (default: the package's agents/ladders, where "
                        "agents.ladder reads them)")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    console = make_console()
    config = parse_config(args.config)
    whole_game = args.all or not (args.agents or args.lineup)
    quick = args.quick or (whole_game and not (args.full or args.games))
    games = args.games or (FULL_GAMES if args.full else QUICK_GAMES if quick else 100)
    if games < 1:
        raise SystemExit("--games must be at least 1")
    if args.min_cycles is None:
        args.min_cycles = 0
    if args.min_cycles < 0:
        raise SystemExit(f"--min-cycles must be 0 or more, got {args.min_cycles}")
    if args.min_games is None:
        args.min_games = 0
    if args.min_games < 0:
        raise SystemExit(f"--min-games must be 0 or more, got {args.min_games}")
    if args.workers is None and args.ray_address is None:
        args.workers = LOCAL_WORKERS
    try:
        check_pool_options(args.workers, args.ray_address)
        if args.ray_address is not None and args.start_method is not None:
            raise ValueError("--start-method applies to local workers only; leave it out with --ray-address")
    except (ValueError, ImportError) as exc:
        raise SystemExit(f"error: {exc}") from None
    if args.make_ladder:
        return _make_ladders(args, console)
    if args.seed is None:
        args.seed = 0
    if args.ladder_summary:
        print(ladder_summary(), end="")
        return 0
    if args.ladder:
        return _print_ladder(args.ladder, config, console)
    if args.all:
        if config:
            raise SystemExit("--all evaluates every game with its default config; --config is per game")
        return _run_all(args, games, quick, console)
    if args.game not in envs.NAMES:
        raise SystemExit(f"error: {envs._unknown_game(args.game)}")
    try:
        _, num_teams = table_facts(args.game, config)
    except ConfigError as exc:
        raise SystemExit(f"error: {exc}") from None
    if not (args.agents or args.lineup):  # the agents that fit the game's tables (or the table of --config)
        args.out = args.out or pathlib.Path("runs/league") / args.game
        return _run_all(args, games, quick, console, [args.game], config if config else None)
    if args.lineup:
        lineups = [tuple(resolve_agent(args.game, a) for a in args.lineup)]
        if len(lineups[0]) != num_teams:
            raise SystemExit(f"error: {args.game} with config {config} has {num_teams} teams; "
                             f"--lineup names {len(lineups[0])} agents")
    else:
        ids = args.agents
        if len(set(ids)) < 2:
            raise SystemExit("--agents needs at least two different agents (use --lineup for self-play)")
        lineups = round_robin([resolve_agent(args.game, a) for a in ids], num_teams)
    for agent_id in dict.fromkeys(a for lineup in lineups for a in lineup):
        check_seat(agent_id, args.game, config)  # a damaged checkpoint is refused before any game
    report = evaluate(args.game, lineups, games, config, args.seed, args.workers, not args.no_progress,
                      args.budget_s, args.start_method, args.records, args.min_cycles,
                      args.min_games, args.ray_address)
    print_report(report, console)
    paths = write_outputs(report, args.out or pathlib.Path("runs/league") / args.game)
    console.print("wrote " + ", ".join(str(p) for p in paths))
    if args.records:
        console.print(f"wrote {len(report['games'])} game records to {args.records}")
    return 0


def _run_all(args, games: int, quick: bool, console, names: Sequence[str] | None = None,
             config: dict[str, Any] | None = None) -> int:
    """Every game in ``names``: a round robin of all its agents with the game's default config,
    then one more for each other config that agents were trained for (their own table, with every
    agent that can sit there); with ``config``, the one table of that config."""
    names = envs.NAMES if names is None else names
    out_root = args.out or pathlib.Path("runs/league/all")
    summary: dict[str, Any] = {"provenance": provenance(names), "games_per_lineup": games,
                               "budget_s": args.budget_s, "seed": args.seed, "games": {}}
    failures = 0
    for name in names:
        for label, table_config, ids, top in league_tables(name, quick, summary, console, config):
            try:
                _, num_teams = table_facts(name, table_config)
                # With only the random player, a self-play lineup still measures the seat advantage.
                lineups = round_robin(ids, num_teams) if len(ids) >= 2 else [(ids[0],) * num_teams]
                counts = [games] * len(lineups)
                if top is not None:  # the ladder's top searches: it plays heuristic-v1 alone, in fewer games
                    lineups.append((top,) + (f"{name}/heuristic-v1",) * (num_teams - 1))
                    counts.append(QUICK_TOP_GAMES)
                report = evaluate(name, lineups, counts, table_config, args.seed, args.workers, not args.no_progress,
                                  args.budget_s, args.start_method, args.records,
                                  args.min_cycles, args.min_games, args.ray_address)
            except Exception as exc:  # one unfinished game must not stop the others
                failures += 1
                console.print(f"[red]{label}: evaluation failed: {type(exc).__name__}: {exc}[/red]")
                summary["games"][label] = {"error": f"{type(exc).__name__}: {exc}"}
                continue
            print_report(report, console)
            write_outputs(report, out_root / label)
            summary["games"][label] = {
                "game": name,
                "config": table_config,
                "elo": report["league"]["elo"],
                "elo_ci95": report["league"]["elo_ci95"],
                "agents": report["agents"],
                "lineups": [lineup_label(line["teams"]) for line in report["lineups"]],
                "games_per_lineup": report["games_per_lineup"],
                "games_scheduled_per_lineup": report["games_scheduled_per_lineup"],
                "budget_s": report["budget_s"],
                "stop_reason": report["stop_reason"],
                "end_reasons": report["end_reasons"],
                "end_reason_texts": report["end_reason_texts"],
                "min_games": report["min_games"],
                "seconds": report["seconds"],
            }
    out_root.mkdir(parents=True, exist_ok=True)
    (out_root / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")
    print_all_summary(summary, console)
    console.print(f"wrote {out_root}/<table>/results.json, winrates.png, league.png and {out_root}/summary.json")
    if args.records:
        console.print(f"wrote the game records to {args.records}")
    return 1 if failures else 0


def _print_ladder(game_name: str, config: dict[str, Any], console) -> int:
    from agents.ladder import ladder_info

    if game_name not in envs.NAMES:
        raise SystemExit(f"error: {envs._unknown_game(game_name)}")
    print_ladder(ladder_info(game_name, config), console)  # a LadderError or ConfigError: one line, exit status 2
    return 0


def _make_ladders(args, console) -> int:
    from training.league.ladder import make_ladder, write_ladder

    names = list(envs.NAMES) if args.make_ladder == ["all"] else args.make_ladder
    for name in names:
        if name not in envs.NAMES:
            raise SystemExit(f"error: {envs._unknown_game(name)}")
    for count, flag in ((args.ladder_games, "--ladder-games"), (args.search_games, "--search-games"),
                        (args.slow_games, "--slow-games")):
        if count < 1:
            raise SystemExit(f"error: {flag} must be at least 1, got {count}")
    for name in names:
        for table in game_tables(name):
            info = make_ladder(table, games=args.ladder_games, search_games=args.search_games,
                               slow_games=args.slow_games, seed=LADDER_SEED if args.seed is None else args.seed,
                               work=args.work, workers=args.workers, ray_address=args.ray_address,
                               progress=not args.no_progress, echo=console.print)
            path = write_ladder(info, args.ladder_dir) if args.ladder_dir else write_ladder(info)
            print_ladder(info, console)
            console.print(f"wrote {path}")
    return 0


def league_tables(game_name: str, quick: bool, summary: dict[str, Any], console,
                  config: dict[str, Any] | None = None) -> list[tuple[str, dict[str, Any], list[str], str | None]]:
    """The league's tables for one game: ``(label, config, agent ids, top)``, the default config first.

    Every table of :func:`training.league.tables.game_tables` (the default config, then each config
    family that has agents of its own), with every agent that can sit there. With ``quick`` a table
    plays the current agents (superseded versions left out) that do not search at play time in a
    round robin, and ``top`` names the table's ladder top when it searches: it then plays
    ``heuristic-v1`` alone, in fewer games (:data:`QUICK_TOP_GAMES`). What is left out, and why, goes
    in ``summary["left_out"]``. With ``config``, the one table of that config.
    """
    from agents.ladder import LadderError, ladder
    from agents.registry import superseded_by

    tables = []
    for table in game_tables(game_name) if config is None else [table_at(game_name, config)]:
        left_out = summary.setdefault("left_out", {})
        for agent_id, problem in table.left_out.items():
            console.print(f"[yellow]{table.label}: leaving out {agent_id}: {problem}[/yellow]")
            left_out[agent_id] = problem
        ids, top = list(table.agents), None
        if quick:
            try:
                top = ladder(game_name, table.config)[0]["id"]
            except LadderError as exc:
                console.print(f"[yellow]{table.label}: {exc}; the quick league plays no searching agent here[/yellow]")
            older = [a for a in ids if superseded_by(a)]
            for agent_id in older:
                left_out[agent_id] = f"superseded by {superseded_by(agent_id)} (--full plays every version)"
            searching = [a for a in ids if registered_as_searching(a) and a not in older]
            for agent_id in searching:
                left_out[agent_id] = ("the ladder's top: plays heuristic-v1 only, in fewer games" if agent_id == top
                                      else "searches at play time, seconds a game (--full plays it)")
            ids = [a for a in ids if a not in older and a not in searching]
            if top not in searching:
                top = None
            if older:
                console.print(f"{table.label}: the quick league plays current agents; leaving out the older versions "
                              f"{', '.join(sorted(a.split('/', 1)[1] for a in older))} (--full plays them all)")
            if searching:
                console.print(f"{table.label}: the quick league leaves out the agents that search at play time, "
                              f"seconds a game, except the ladder's top: "
                              f"{', '.join(sorted(a.split('/', 1)[1] for a in searching if a != top))} (--full plays them)")
        tables.append((table.label, table.config, ids, top))
    return tables


def searches_at_play_time(agent_ids: Sequence[str]) -> list[str]:
    """The agents among ``agent_ids`` that search at play time (registered so: the search agents,
    and the checkpoints whose index entry has a ``search`` block): the slowest agents by far."""
    return [a for a in agent_ids if registered_as_searching(a)]


if __name__ == "__main__":
    sys.exit(run_command(main, "python -m training.league"))

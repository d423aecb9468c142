"""``python -m training.league``: the league command (its documentation is the package's, :mod:`training.league`)."""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import pathlib
import sys
from typing import Any, Sequence

import agents
import envs
from agents.pool import check_pool_options
from agents.registry import searches_at_play_time as registered_as_searching
from envs.core import ConfigError
from envs.core.config import parse_key_values
from envs.provenance import provenance
from training.league.matches import ENV_KEYWORDS, evaluate, round_robin, table_facts
from training.league.ladder import DEFAULT_WORK, GAMES as LADDER_GAMES, SEARCH_GAMES, SEED as LADDER_SEED, SLOW_GAMES
from training.league.output import FEW_GAMES, print_ladder, lineup_label, make_console, print_all_summary, print_report, write_outputs

QUICK_GAMES = 100  # per lineup, within QUICK_BUDGET_S seconds per table
QUICK_BUDGET_S = 40.0
#: The quick league's floor: every lineup plays at least this many games whatever the budget, so
#: that no table is too small to mean something (the few-games warning's threshold).
QUICK_MIN_GAMES = FEW_GAMES
FULL_GAMES = 400  # per lineup: a 95% interval narrower than +-5 points
#: Local worker processes when --workers is not given.
LOCAL_WORKERS = min(2, os.cpu_count() or 1)


def resolve_agent(game_name: str, agent_id: str) -> str:
    """``"heuristic-v1"`` -> ``"sequence_v0/heuristic-v1"``; full ids are checked as they are."""
    full = agent_id if "/" in agent_id else f"{game_name}/{agent_id}"
    if full not in agents.available(game_name):
        raise SystemExit(f"no agent {full!r} for {game_name}; available: {agents.available(game_name)}")
    return full


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
    who.add_argument("--make-ladder", nargs="+", metavar="GAME",
                     help="remake the ladders of these games ('all' for every game): plays every pairing of the "
                     "ladder's design, resumable (see python -m pydoc training.league.ladder)")
    who.add_argument("--all", action="store_true",
                     help="every game in envs.NAMES with its default config: round robin of all its registered agents, "
                     "plus a table for each other config shipped checkpoints were trained for (default: off)")
    size = parser.add_mutually_exclusive_group()
    size.add_argument("--quick", action="store_true",
                      help=f"up to {QUICK_GAMES} games per lineup, at least {QUICK_MIN_GAMES}; no new game after "
                      f"{QUICK_BUDGET_S:.0f} s per table once every lineup has its {QUICK_MIN_GAMES}; with --all, "
                      "agents that search at play time are left out; the default with --all")
    size.add_argument("--full", action="store_true", help=f"{FULL_GAMES} games per lineup (default: off)")
    size.add_argument("--games", type=int,
                      help="games per lineup, rounded up to whole seat rotations (default: 100, or as --quick/--full)")
    parser.add_argument("--config", nargs="*", default=[], metavar="KEY=VALUE",
                        help="game config keywords, values read as JSON (default: the game's defaults)")
    parser.add_argument("--seed", type=int, help=f"first deal seed (default: 0, or {LADDER_SEED:,} with --make-ladder)")
    parser.add_argument("--budget-s", type=float,
                        help="stop starting games after this many seconds per table; lineups are then cut to equal "
                        f"whole seat rotations (default: none, or {QUICK_BUDGET_S:.0f} with --quick)")
    parser.add_argument("--min-games", type=int,
                        help="games every lineup plays even past --budget-s, rounded up to whole seat rotations "
                        f"(default: {QUICK_MIN_GAMES} with --quick, else 0)")
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
    quick = args.quick or (args.all and not (args.full or args.games))
    games = args.games or (FULL_GAMES if args.full else QUICK_GAMES if quick else 100)
    if games < 1:
        raise SystemExit("--games must be at least 1")
    if args.min_cycles is None:
        args.min_cycles = 1 if quick else 0
    if args.min_cycles < 0:
        raise SystemExit(f"--min-cycles must be 0 or more, got {args.min_cycles}")
    if args.min_games is None:
        args.min_games = QUICK_MIN_GAMES if quick else 0
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
    if args.ladder:
        return _print_ladder(args.ladder, config, console)
    if args.all:
        if config:
            raise SystemExit("--all evaluates every game with its default config; --config is per game")
        return _run_all(args, games, quick, console)
    if args.game not in envs.NAMES:
        raise SystemExit(f"unknown game {args.game!r}; available: {list(envs.NAMES)}")
    try:
        _, num_teams = table_facts(args.game, config)
    except ConfigError as exc:
        raise SystemExit(f"error: {exc}") from None
    if args.lineup:
        lineups = [tuple(resolve_agent(args.game, a) for a in args.lineup)]
        if len(lineups[0]) != num_teams:
            raise SystemExit(f"error: {args.game} with config {config} has {num_teams} teams; "
                             f"--lineup names {len(lineups[0])} agents")
    else:
        ids = args.agents or [f"{args.game}/random-v0"] + [
            a for a in agents.available(args.game) if a != f"{args.game}/random-v0"
        ]
        if len(set(ids)) < 2:
            raise SystemExit("--agents needs at least two different agents (use --lineup for self-play)")
        lineups = round_robin([resolve_agent(args.game, a) for a in ids], num_teams)
    report = evaluate(args.game, lineups, games, config, args.seed, args.workers, not args.no_progress,
                      budget_for(args.budget_s, quick), args.start_method, args.records, args.min_cycles,
                      args.min_games, args.ray_address)
    print_report(report, console)
    paths = write_outputs(report, args.out or pathlib.Path("runs/league") / args.game)
    console.print("wrote " + ", ".join(str(p) for p in paths))
    if args.records:
        console.print(f"wrote {len(report['games'])} game records to {args.records}")
    return 0


def _run_all(args, games: int, quick: bool, console) -> int:
    """Every game in ``envs.NAMES``: a round robin of all its agents with the game's default config,
    then one more for each other config that shipped checkpoints were trained for (their own table,
    with every agent that can sit there)."""
    out_root = args.out or pathlib.Path("runs/league/all")
    summary: dict[str, Any] = {"provenance": provenance(envs.NAMES), "games_per_lineup": games,
                               "budget_s": args.budget_s, "seed": args.seed, "games": {}}
    failures = 0
    for name in envs.NAMES:
        for label, table_config, ids in league_tables(name, quick, summary, console):
            try:
                _, num_teams = table_facts(name, table_config)
                # With only the random player, a self-play lineup still measures the seat advantage.
                lineups = round_robin(ids, num_teams) if len(ids) >= 2 else [(ids[0],) * num_teams]
                report = evaluate(name, lineups, games, table_config, args.seed, args.workers, not args.no_progress,
                                  budget_for(args.budget_s, quick), args.start_method, args.records,
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

    try:
        info = ladder_info(game_name, config)
    except ValueError as exc:  # an unknown game or config, or a ladder file that cannot be used
        raise SystemExit(f"error: {exc}") from None
    print_ladder(info, console)
    return 0


def _make_ladders(args, console) -> int:
    from training.league.ladder import make_ladder, write_ladder
    from training.league.tables import game_tables

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


def budget_for(budget_s: float | None, quick: bool) -> float | None:
    """The time budget of one table: ``--budget-s`` if given, else ``QUICK_BUDGET_S`` with
    ``--quick``, else none."""
    if budget_s is not None or not quick:
        return budget_s
    return QUICK_BUDGET_S


def table_label(game_name: str, config: dict[str, Any]) -> str:
    """A table's name in ``--all``'s output (and its folder): the game, then any keywords set."""
    return game_name + "".join(f"-{k}={v if isinstance(v, str) else json.dumps(v)}" for k, v in sorted(config.items()))


def league_tables(game_name: str, quick: bool, summary: dict[str, Any],
                  console) -> list[tuple[str, dict[str, Any], list[str]]]:
    """``--all``'s tables for one game: ``(label, config, agent ids)``, the default config first.

    A checkpoint that cannot sit at the default table because it was trained for another config
    gets a table of that config (the keywords that differ from the defaults), shared with every
    checkpoint of the same config and every agent that can sit there. With ``quick`` a table plays
    only the newest version of each checkpoint family. What is left out, and why, goes in
    ``summary["left_out"]``.
    """
    from agents.checkpoint import scan_index

    random_id = f"{game_name}/random-v0"
    everyone = [random_id] + [a for a in agents.available(game_name) if a != random_id]
    trained_for = {entry["id"]: entry["config"] for entry in scan_index()[0] if entry["game"] == game_name}
    default = envs.make_game(game_name).config
    configs: list[dict[str, Any]] = [{}]
    at_default = {agent_id: cannot_play(agent_id, game_name, {}) for agent_id in everyone}
    own_table: dict[str, str] = {}  # checkpoint id -> the label of the table of its own config
    for agent_id in everyone:
        if agent_id in trained_for and at_default[agent_id]:
            own = {k: v for k, v in trained_for[agent_id].items() if default.get(k) != v}
            if own and cannot_play(agent_id, game_name, own) is None:
                own_table[agent_id] = table_label(game_name, own)
                if own not in configs:
                    configs.append(own)
    tables = []
    for table_config in configs:
        label = table_label(game_name, table_config)
        ids = []
        for agent_id in everyone:
            problem = cannot_play(agent_id, game_name, table_config) if table_config else at_default[agent_id]
            if problem is None:
                ids.append(agent_id)
            elif not table_config:  # said once, at the default table
                if agent_id in own_table:
                    problem = f"trained for another config; plays at its own table, {own_table[agent_id]}"
                console.print(f"[yellow]{label}: leaving out {agent_id}: {problem}[/yellow]")
                summary.setdefault("left_out", {})[agent_id] = problem
        if quick:  # a quick league: the newest checkpoint of each family
            superseded = older_checkpoint_versions(ids)
            for agent_id, newest in superseded.items():
                summary.setdefault("left_out", {})[agent_id] = f"superseded by {newest} (--full plays every version)"
            ids = [a for a in ids if a not in superseded]
            if superseded:
                console.print(f"{label}: the quick league plays the newest version of each checkpoint; leaving out "
                              f"{', '.join(sorted(a.split('/', 1)[1] for a in superseded))} (--full plays them all)")
            # A search agent takes seconds a game where the others take a fraction of one (Pan's Trial:
            # about 90% of the table's time for one agent in six lineups of twenty-one), so the quick
            # league's floor of games would not fit in its few minutes with one at the table.
            searching = searches_at_play_time(ids)
            for agent_id in searching:
                summary.setdefault("left_out", {})[agent_id] = "searches at play time, seconds a game (--full plays it)"
            ids = [a for a in ids if a not in searching]
            if searching:
                console.print(f"{label}: the quick league leaves out the agents that search at play time, seconds a "
                              f"game each: {', '.join(sorted(a.split('/', 1)[1] for a in searching))} (--full plays them)")
        tables.append((label, table_config, ids))
    return tables


def searches_at_play_time(agent_ids: Sequence[str]) -> list[str]:
    """The agents among ``agent_ids`` that search at play time (registered so: the search agents,
    and the checkpoints whose index entry has a ``search`` block): the slowest agents by far."""
    return [a for a in agent_ids if registered_as_searching(a)]


def older_checkpoint_versions(agent_ids: Sequence[str]) -> dict[str, str]:
    """``{older id: newest id}`` among the shipped checkpoints of one game's ``agent_ids``.

    A family is an id without its ``-vN`` suffix (``pans_trial_v0/ppo-search``); only checkpoint
    ids are grouped, never the built-in agents (each heuristic version is its own baseline).
    """
    from agents.checkpoint import scan_index
    from agents.registry import parse_id

    good, bad, _ = scan_index()  # an entry that fails its checks is still a checkpoint id
    trained = {entry["id"] for entry in good} | set(bad)
    newest: dict[tuple[str, str], tuple[int, str]] = {}  # (game, kind) -> (version, id)
    for agent_id in (a for a in agent_ids if a in trained):
        game, kind, version = parse_id(agent_id)
        newest[game, kind] = max(newest.get((game, kind), (-1, "")), (version, agent_id))
    return {a: newest[parse_id(a)[:2]][1] for a in agent_ids if a in trained and newest[parse_id(a)[:2]][1] != a}


def cannot_play(agent_id: str, game_name: str, config: dict[str, Any]) -> str | None:
    """Why ``agent_id`` cannot sit at ``game_name`` with ``config`` (None if it can)."""
    try:
        engine_config = {k: v for k, v in config.items() if k not in ENV_KEYWORDS}
        agents.make(agent_id, seed=0).reset(0, envs.make_game(game_name, **engine_config))
    except Exception as exc:
        return f"{type(exc).__name__}: {exc}"
    return None


if __name__ == "__main__":
    sys.exit(main())

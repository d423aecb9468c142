"""Evaluate agents against each other: seeded games, rotated seats, Wilson intervals, Elo ratings.

Run ``python -m training.evaluate --help``. Typical uses::

    # heuristic vs random, 400 two-player Sequence games (200 deals x both seat orders)
    python -m training.evaluate --game sequence_v0 --agents heuristic-v1 random-v0 --games 400

    # 2 teams of 2; 3 teams with one heuristic team against two random teams
    python -m training.evaluate --game sequence_v0 --config players_per_team=2 \\
        --agents heuristic-v1 random-v0 --games 400
    python -m training.evaluate --game sequence_v0 --config num_teams=3 \\
        --lineup heuristic-v1 random-v0 random-v0 --games 400   # rounded up to 402 = 134 x 3 sides

    # every game in envs.NAMES: a round robin of every registered agent (random included)
    python -m training.evaluate --all --quick      # a few minutes on two cores
    python -m training.evaluate --all --full       # >= 400 games per pairing (CI half-width < 5 pts)

How games are scheduled
-----------------------
* A *lineup* gives one agent id per team (``--lineup``), or ``--agents`` builds a round robin of
  lineups: every pair ``(a, b)`` with two teams; with three or more teams, each ordered pair
  ``(a, b)`` gives ``a`` against a field of ``b`` teams (``a b b``).
* Seats belong to the teams the game declares (``Game.team_of(seat)``; Sequence: ``seat %
  num_teams``, the other games: one seat per team). Every seat of a team is played by a separate
  instance of the team's agent id.
* Seat rotation: the distinct orderings of a lineup over the teams are cycled game by game, and
  consecutive games of one cycle share one deal seed (duplicate style), so every agent plays every
  team side equally often — on the same deals — when ``--games`` is a multiple of the number of
  orderings (2 for a pair, 3 for ``a b b``, 6 for three distinct agents). Other counts are rounded
  up to such a multiple.
* Game ``g`` of a lineup uses deal seed ``seed + g // orderings``; the agent in seat ``s`` is made
  afresh with ``agents.make(id, seed=deal_seed * 1000 + s)``. A game's result therefore depends
  only on its task, never on the worker that played it or on earlier games, and ``--workers``
  only changes the speed. (A fresh agent per game also means a checkpoint policy is loaded once
  per game and seat unless its loader caches models.)
* ``--all`` plays every game at its default config, leaving out, with a warning, any registered
  agent that cannot sit there. A shipped checkpoint trained for another config (Sequence's team
  policies, ``players_per_team=2``) gets a second table of that config, shared with every agent
  that can sit at it; its output folder and summary key name the keywords
  (``sequence_v0-players_per_team=2``). A checkpoint whose config differs only in the game's
  ``observation_keys`` plays the default table (it re-encodes its observations).
* ``--all --quick`` (the default of ``--all``) plays only the newest version of each family of
  shipped checkpoints (``ppo-search-v4`` but not ``ppo-search-v1`` to ``-v3``); the summary lists
  the older ones under ``left_out``. ``--all --full`` (or ``--games N``) plays every version.
* ``--quick`` stops starting games after ``QUICK_BUDGET_S`` seconds per game
  (``QUICK_BUDGET_BY_GAME`` for a slower game: Pan's Trial 120 s), but only once every
  lineup has played one whole rotation cycle (``--min-cycles``), so that no lineup comes back empty
  on a slow or busy machine. Lineups are played
  interleaved, rotation cycle by rotation cycle; when the budget runs out every lineup of the game
  keeps the same number of games, made of whole rotation cycles. The report (and ``--all``'s
  summary) says how many games each lineup played out of how many were scheduled, and why it
  stopped; when the guaranteed rotations ran past the budget it says by how much, and when a
  lineup played fewer than ``training.reporting.FEW_GAMES`` games a warning says how little the
  numbers hold.

How games are scored (:mod:`agents.scoring`, shared with training and tournaments)
-----------------------------------------------------------------------------------
* Two teams (two players, or two teams of several): a team whose return is > 0 wins; a game with
  no such team (a drawn or truncated game) is a draw.
* Three or more teams: the winners are the teams with the highest return, unless every team
  ties (then nobody wins); a truncated game is a game nobody wins. Ranks are fractional
  (tied teams share the mean of the places they span); truncated games give everyone the middle
  rank.
* An agent *wins* a game when one of its teams is a winner. Win rates carry a 95% Wilson
  interval. ``fair_share`` is the win rate it would have among equals: the mean over its games
  of its teams / all teams (0.5 in a two-team game; with three or more teams it is printed too).
  A first place shared by teams of different agents is a win for each, so the wins of a lineup
  can add up to more than its games; the printed table says so where it happens.
* Seats are rotated, so every agent plays from every team side; ``win_rate_by_side`` (with
  ``games_by_side`` and ``wins_by_side``) says how it did from each one, side 0 moving first. An
  agent holding several sides of a game counts that game once for each side and wins it from the
  side that won. Where the table's seat order decides much (Wizard Arena), this is the first thing
  to look at; the printed table shows it up to eight sides.
* League ratings (``elo``) are a Bradley–Terry maximum-likelihood fit (Hunter's MM iteration; see
  :func:`agents.stats.bradley_terry`) on pairwise comparisons: in every game each pair of teams
  of different agents is a win for the higher return, a draw when equal or when the game was
  truncated. They are on the Elo scale with mean 1500, with one virtual drawn game per pair as a
  prior so that an unbeaten agent keeps a finite rating.
* Each rating has a 95% interval (``league.elo_ci95``), a percentile bootstrap over games:
  the games of each lineup are resampled with replacement (``ELO_RESAMPLES`` times, a fixed seed,
  so the same games give the same interval) and the ratings refitted
  (:func:`agents.stats.bootstrap_elo_interval`). An agent that never lost a comparison (a 20–0
  record) has no finite upper bound: it is ``null`` in the JSON and ``∞`` in the table, and the
  games column says how many games sit behind it. The league heat map prints the number of
  comparisons ``n`` in every cell, and fewer than ``FEW_GAMES`` games per lineup get a warning.

The code: :mod:`training.matches` schedules, plays and scores; :mod:`training.reporting` prints
the tables and draws the plots; this module is the command line.

Outputs, under ``--out DIR`` (default ``runs/evaluate/<game>``): ``results.json`` (settings,
per-lineup and per-agent statistics, ratings, every game's outcome), ``winrates.png`` (win rates
with their intervals) and, with three or more agents, ``league.png`` (a heat map of pairwise
scores). ``--all`` writes one sub-folder per game and ``summary.json``.

``--records DIR`` also writes every game of the report as a JSON game record
(``DIR/<game>-lineup<L>-game<G>.json``; :mod:`agents.records`; each game's entry in
``results.json`` names its file). ``python -m play replay FILE --gif game.gif`` replays one exactly.
"""

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
from envs.core import ConfigError
from envs.core.config import parse_key_values
from envs.provenance import provenance
from training.matches import ENV_KEYWORDS, evaluate, round_robin, table_facts
from training.reporting import lineup_label, make_console, print_all_summary, print_report, write_outputs

QUICK_GAMES = 100  # per lineup, within QUICK_BUDGET_S seconds per game
QUICK_BUDGET_S = 40.0
#: Games whose quick budget differs: Pan's Trial's search agents play about 0.75 games/s on two
#: workers, so 40 s gave its 15 lineups 2 games each; 120 s gives about 6 (still few: the report says so).
QUICK_BUDGET_BY_GAME = {"pans_trial_v0": 120.0}
FULL_GAMES = 400  # per lineup: a 95% interval narrower than +-5 points


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
        prog="python -m training.evaluate",
        description="Seeded, seat-rotated evaluation of agents, with Wilson intervals and Elo ratings.",
        epilog="Scheduling, scoring and outputs are described in the module documentation: "
        "python -c 'import training.evaluate as e; print(e.__doc__)'",
    )
    parser.add_argument("--game", default="sequence_v0", help=f"the game, one of {list(envs.NAMES)} (default: %(default)s)")
    who = parser.add_mutually_exclusive_group()
    who.add_argument("--agents", nargs="+", metavar="ID",
                     help="round robin of these agent ids (short ids such as heuristic-v1 work too); "
                     "default: every registered agent of the game")
    who.add_argument("--lineup", nargs="+", metavar="ID",
                     help="one agent id per team, e.g. heuristic-v1 random-v0 random-v0 (default: none, use --agents)")
    who.add_argument("--all", action="store_true",
                     help="every game in envs.NAMES with its default config: round robin of all its registered agents, "
                     "plus a table for each other config shipped checkpoints were trained for (default: off)")
    size = parser.add_mutually_exclusive_group()
    size.add_argument("--quick", action="store_true",
                      help=f"up to {QUICK_GAMES} games per lineup, at most {QUICK_BUDGET_S:.0f} s per game "
                      f"({', '.join(f'{g} {s:.0f} s' for g, s in QUICK_BUDGET_BY_GAME.items())}); "
                      "the default with --all")
    size.add_argument("--full", action="store_true", help=f"{FULL_GAMES} games per lineup (default: off)")
    size.add_argument("--games", type=int,
                      help="games per lineup, rounded up to whole seat rotations (default: 100, or as --quick/--full)")
    parser.add_argument("--config", nargs="*", default=[], metavar="KEY=VALUE",
                        help="game config keywords, values read as JSON (default: the game's defaults)")
    parser.add_argument("--seed", type=int, default=0, help="first deal seed (default: %(default)s)")
    parser.add_argument("--budget-s", type=float,
                        help="stop starting games after this many seconds per game; lineups are then cut to equal "
                        f"whole seat rotations (default: none, or {QUICK_BUDGET_S:.0f} with --quick; "
                        "see QUICK_BUDGET_BY_GAME)")
    parser.add_argument("--min-cycles", type=int,
                        help="whole seat rotations every lineup plays even past --budget-s "
                        "(default: 1 with --quick, else 0)")
    parser.add_argument("--workers", type=int, default=min(2, os.cpu_count() or 1),
                        help="worker processes (default: min(2, cores) = %(default)s)")
    parser.add_argument("--start-method", choices=multiprocessing.get_all_start_methods(),
                        help="how worker processes start (default: the platform's)")
    parser.add_argument("--out", type=pathlib.Path,
                        help="output folder (default: runs/evaluate/<game>, or runs/evaluate/all with --all)")
    parser.add_argument("--records", type=pathlib.Path, metavar="DIR",
                        help="write every game as a JSON record into DIR, replayable with python -m play replay "
                        "(default: none)")
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bar (default: shown)")
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
                      budget_for(args.game, args.budget_s, quick), args.start_method, args.records, args.min_cycles)
    print_report(report, console)
    paths = write_outputs(report, args.out or pathlib.Path("runs/evaluate") / args.game)
    console.print("wrote " + ", ".join(str(p) for p in paths))
    if args.records:
        console.print(f"wrote {len(report['games'])} game records to {args.records}")
    return 0


def _run_all(args, games: int, quick: bool, console) -> int:
    """Every game in ``envs.NAMES``: a round robin of all its agents with the game's default config,
    then one more for each other config that shipped checkpoints were trained for (their own table,
    with every agent that can sit there)."""
    out_root = args.out or pathlib.Path("runs/evaluate/all")
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
                                  budget_for(name, args.budget_s, quick), args.start_method, args.records,
                                  args.min_cycles)
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
                "seconds": report["seconds"],
            }
    out_root.mkdir(parents=True, exist_ok=True)
    (out_root / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")
    print_all_summary(summary, console)
    console.print(f"wrote {out_root}/<table>/results.json, winrates.png, league.png and {out_root}/summary.json")
    if args.records:
        console.print(f"wrote the game records to {args.records}")
    return 1 if failures else 0


def budget_for(game_name: str, budget_s: float | None, quick: bool) -> float | None:
    """The time budget of one game's evaluation: ``--budget-s`` if given, else the quick budget of
    that game (``QUICK_BUDGET_BY_GAME``, else ``QUICK_BUDGET_S``) with ``--quick``, else none."""
    if budget_s is not None or not quick:
        return budget_s
    return QUICK_BUDGET_BY_GAME.get(game_name, QUICK_BUDGET_S)


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
        tables.append((label, table_config, ids))
    return tables


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

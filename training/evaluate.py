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
* Seats belong to teams ``seat % num_teams`` (the engine's rule for Sequence; a game without a
  ``num_teams`` attribute has one seat per team). Every seat of a team is played by a separate
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
* ``--all`` uses every game's default config and leaves out, with a warning, any registered agent
  that cannot sit at it (for instance a checkpoint trained for another config).
* ``--quick`` stops starting games after ``QUICK_BUDGET_S`` seconds per game; the games kept are
  whole rotation cycles, interleaved across lineups, so the cut is even.

How games are scored
--------------------
* Two teams (two players, or two teams of several): a team whose return is > 0 wins; a game with
  no such team (a drawn or truncated game) is a draw.
* Three or more teams: the winners are the teams with the highest return, unless every team
  ties (then nobody wins); a truncated game is a game nobody wins. Ranks are fractional
  (tied teams share the mean of the places they span); truncated games give everyone the middle
  rank.
* An agent *wins* a game when one of its teams is a winner. Win rates carry a 95% Wilson
  interval; with three or more teams the fair share (its teams / all teams) is shown too.
* League ratings (``elo``) are a Bradley–Terry maximum-likelihood fit (Hunter's MM iteration; see
  :func:`training.stats.bradley_terry`) on pairwise comparisons: in every game each pair of teams
  of different agents is a win for the higher return, a draw when equal or when the game was
  truncated. They are on the Elo scale with mean 1500, with one virtual drawn game per pair as a
  prior so that an unbeaten agent keeps a finite rating.

Outputs, under ``--out DIR`` (default ``runs/evaluate/<game>``): ``results.json`` (settings,
per-lineup and per-agent statistics, ratings, every game's outcome), ``winrates.png`` (win rates
with their intervals) and, with three or more agents, ``league.png`` (a heat map of pairwise
scores). ``--all`` writes one sub-folder per game and ``summary.json``.
"""

from __future__ import annotations

import argparse
import functools
import itertools
import json
import multiprocessing
import os
import pathlib
import sys
import time
from collections import Counter
from dataclasses import dataclass
from typing import Any, Sequence

import agents
import envs
from envs.core import ConfigError
from training.stats import Z95, bradley_terry, pairwise_table, wilson_interval

QUICK_GAMES = 100  # per lineup, within QUICK_BUDGET_S seconds per game
QUICK_BUDGET_S = 40.0
FULL_GAMES = 400  # per lineup: a 95% interval narrower than +-5 points


# ----------------------------------------------------------------------------------------------
# Scheduling


@dataclass(frozen=True)
class Task:
    """One game to play: everything a worker needs to rebuild it from scratch."""

    game: str
    config: dict[str, Any]
    lineup_index: int
    game_index: int
    deal_seed: int
    teams: tuple[str, ...]  # agent id of each team, team t = seats with seat % num_teams == t
    cycle: int = 0  # rotation cycle: the games of one cycle cover every ordering once


def table_facts(game_name: str, config: dict[str, Any]) -> tuple[int, int]:
    """``(num_players, num_teams)`` of a configured game; seat ``s`` is on team ``s % num_teams``.

    A game tells its teams with a ``num_teams`` attribute (Sequence does); without one, or with one
    that does not divide the seats, every seat is its own team.
    """
    return _table_facts(game_name, json.dumps(config, sort_keys=True))


@functools.lru_cache(maxsize=64)
def _table_facts(game_name: str, config_json: str) -> tuple[int, int]:
    config = json.loads(config_json)
    engine_config = {k: v for k, v in config.items() if k not in ("max_cycles", "render_mode")}
    game = envs.make_game(game_name, **engine_config)
    return game.num_players, game.num_teams


def seat_agents(teams: Sequence[str], num_players: int) -> list[str]:
    """Agent id of every seat: seat ``s`` plays for team ``s % len(teams)``."""
    return [teams[s % len(teams)] for s in range(num_players)]


def orderings(lineup: Sequence[str]) -> list[tuple[str, ...]]:
    """The distinct assignments of a lineup's agents to team sides, in a fixed order."""
    seen: list[tuple[str, ...]] = []
    for perm in itertools.permutations(lineup):
        if perm not in seen:
            seen.append(perm)
    return seen


def round_robin(agent_ids: Sequence[str], num_teams: int) -> list[tuple[str, ...]]:
    """Lineups pairing every two agents: ``(a, b)``, or ``a`` against a field of ``b`` teams."""
    if len(set(agent_ids)) < 2:
        raise ValueError(f"a round robin needs at least two different agents, got {list(agent_ids)}")
    if num_teams == 2:
        return [(a, b) for a, b in itertools.combinations(agent_ids, 2)]
    return [(a,) + (b,) * (num_teams - 1) for a, b in itertools.permutations(agent_ids, 2)]


def schedule(
    game_name: str,
    config: dict[str, Any],
    lineups: Sequence[Sequence[str]],
    games: int,
    seed: int = 0,
) -> tuple[list[Task], list[int]]:
    """Tasks for ``games`` games of each lineup (rounded up to whole rotation cycles)."""
    tasks: list[Task] = []
    counts: list[int] = []
    for li, lineup in enumerate(lineups):
        perms = orderings(lineup)
        n = -(-games // len(perms)) * len(perms)
        counts.append(n)
        for g in range(n):
            tasks.append(
                Task(game_name, dict(config), li, g, seed + g // len(perms), perms[g % len(perms)], g // len(perms))
            )
    # Interleave the lineups cycle by cycle, so that a time budget cuts all of them evenly.
    tasks.sort(key=lambda t: (t.cycle, t.lineup_index, t.game_index))
    return tasks, counts


# ----------------------------------------------------------------------------------------------
# Playing (the worker side: module-level and picklable, safe under fork and spawn)


def play_task(task: Task) -> dict[str, Any]:
    """Play one scheduled game and return its outcome as plain data."""
    players, num_teams = table_facts(task.game, task.config)
    ids = seat_agents(task.teams, players)
    seats = [agents.make(agent_id, seed=task.deal_seed * 1000 + s) for s, agent_id in enumerate(ids)]
    record = agents.play_game(task.game, seats, seed=task.deal_seed, config=task.config)
    team_returns = []
    for t in range(num_teams):
        members = [record.returns[s] for s in range(players) if s % num_teams == t]
        team_returns.append(sum(members) / len(members))
    return {
        "lineup": task.lineup_index,
        "index": task.game_index,
        "seed": task.deal_seed,
        "teams": list(task.teams),
        "team_returns": team_returns,
        "length": record.length,
        "truncated": record.truncated,
    }


def play_all(
    tasks: Sequence[Task],
    workers: int = 1,
    progress: bool = True,
    desc: str = "games",
    budget_s: float | None = None,
    start_method: str | None = None,
) -> list[dict]:
    """Play the tasks (in a process pool when ``workers > 1``); results sorted by lineup and game.

    With ``budget_s``, no new game starts after that many seconds and only whole rotation cycles
    are kept, so every lineup still has each agent on each side equally often. ``start_method``
    (``fork``, ``spawn``, ``forkserver``; default: the platform's) picks how workers start; under
    ``spawn`` a worker only knows the agents that register themselves when ``agents`` is imported.
    """
    from tqdm import tqdm

    deadline = None if budget_s is None else time.perf_counter() + budget_s
    bar = tqdm(total=len(tasks), desc=desc, unit="game", disable=not progress, dynamic_ncols=True)
    results: list[dict] = []
    try:
        if workers <= 1 or len(tasks) <= 1:
            for task in tasks:
                if deadline is not None and time.perf_counter() > deadline:
                    break
                results.append(play_task(task))
                bar.update()
        else:
            chunk = 1 if deadline is not None else max(1, min(16, len(tasks) // (workers * 8)))
            with multiprocessing.get_context(start_method).Pool(processes=workers) as pool:
                for outcome in pool.imap_unordered(play_task, tasks, chunksize=chunk):
                    results.append(outcome)
                    bar.update()
                    if deadline is not None and time.perf_counter() > deadline:
                        pool.terminate()
                        break
    finally:
        bar.close()
    if len(results) < len(tasks):
        results = _whole_cycles(tasks, results)
    results.sort(key=lambda r: (r["lineup"], r["index"]))
    return results


def _whole_cycles(tasks: Sequence[Task], results: list[dict]) -> list[dict]:
    """Drop the games of rotation cycles that were not played completely."""
    cycle_of = {(t.lineup_index, t.game_index): (t.lineup_index, t.cycle) for t in tasks}
    size = Counter(cycle_of.values())
    played_cycle = [cycle_of[(r["lineup"], r["index"])] for r in results]
    done = Counter(played_cycle)
    return [r for r, cycle in zip(results, played_cycle) if done[cycle] == size[cycle]]


# ----------------------------------------------------------------------------------------------
# Scoring


def score_game(team_returns: Sequence[float], truncated: bool) -> tuple[list[int], list[float]]:
    """Winning teams and fractional ranks (1 = best) of one game; see the module docstring."""
    n = len(team_returns)
    if truncated:
        return [], [(n + 1) / 2] * n
    ranks = []
    for r in team_returns:
        above = sum(1 for x in team_returns if x > r)
        tied = sum(1 for x in team_returns if x == r)
        ranks.append(above + (tied + 1) / 2)
    if n == 2:
        winners = [t for t, r in enumerate(team_returns) if r > 0]
    else:
        best = max(team_returns)
        winners = [] if all(r == best for r in team_returns) else [t for t, r in enumerate(team_returns) if r == best]
    return winners, ranks


def pairwise_outcomes(result: dict[str, Any]) -> list[tuple[str, str, float]]:
    """``(a, b, score_of_a)`` for each pair of teams played by different agents in one game.

    Two teams: the winner scores 1, a draw 0.5 each. More teams: the higher return scores 1, equal
    returns 0.5 each; a truncated game is 0.5 for every pair.
    """
    teams, returns = result["teams"], result["team_returns"]
    winners, _ = score_game(returns, result["truncated"])
    out = []
    for i, j in itertools.combinations(range(len(teams)), 2):
        if teams[i] == teams[j]:
            continue
        if len(teams) == 2:
            score = 0.5 if not winners else float(i in winners)
        elif result["truncated"] or returns[i] == returns[j]:
            score = 0.5
        else:
            score = 1.0 if returns[i] > returns[j] else 0.0
        out.append((teams[i], teams[j], score))
    return out


@dataclass
class AgentLine:
    """One agent's results within one lineup (or over all lineups)."""

    agent: str
    games: int = 0
    wins: int = 0
    draws: int = 0
    losses: int = 0
    rank_sum: float = 0.0
    length_sum: float = 0.0
    fair_share: float = 0.0

    def add(self, won: bool, draw: bool, rank: float, length: int) -> None:
        self.games += 1
        self.wins += won
        self.draws += draw
        self.losses += not won and not draw
        self.rank_sum += rank
        self.length_sum += length

    def summary(self) -> dict[str, Any]:
        lo, hi = wilson_interval(self.wins, self.games)
        g = max(1, self.games)
        return {
            "agent": self.agent,
            "games": self.games,
            "wins": self.wins,
            "draws": self.draws,
            "losses": self.losses,
            "win_rate": self.wins / g,
            "win_rate_ci95": [lo, hi],
            "fair_share": self.fair_share,
            "mean_rank": self.rank_sum / g,
            "mean_length": self.length_sum / g,
        }


def summarise(results: Sequence[dict], lineups: Sequence[Sequence[str]], num_teams: int) -> dict[str, Any]:
    """Per-lineup and per-agent statistics plus the league ratings."""
    per_lineup = []
    overall: dict[str, AgentLine] = {}
    pairs: list[tuple[str, str, float]] = []
    for li, lineup in enumerate(lineups):
        lines = {a: AgentLine(a, fair_share=lineup.count(a) / num_teams) for a in dict.fromkeys(lineup)}
        lengths, truncations = [], 0
        side_wins = [0] * num_teams
        for res in (r for r in results if r["lineup"] == li):
            winners, ranks = score_game(res["team_returns"], res["truncated"])
            for t in winners:
                side_wins[t] += 1
            nobody = not winners
            for agent, line in lines.items():
                sides = [t for t, a in enumerate(res["teams"]) if a == agent]
                won = any(t in winners for t in sides)
                rank = sum(ranks[t] for t in sides) / len(sides)
                line.add(won, nobody, rank, res["length"])
                overall.setdefault(agent, AgentLine(agent)).add(won, nobody, rank, res["length"])
            lengths.append(res["length"])
            truncations += res["truncated"]
            pairs.extend(pairwise_outcomes(res))
        per_lineup.append(
            {
                "teams": list(lineup),
                "games": len(lengths),
                "truncated": truncations,
                "mean_length": sum(lengths) / max(1, len(lengths)),
                # How often each team side (team 0 = seat 0's team, which moves first) won,
                # whoever played it: the table's seat advantage when a lineup is self-play.
                "side_win_rates": [w / max(1, len(lengths)) for w in side_wins],
                "agents": [line.summary() for line in lines.values()],
            }
        )
    names = list(overall)
    league = {
        "method": "Bradley-Terry MLE (MM iteration) on pairwise team comparisons, Elo scale, mean 1500, "
        "one virtual draw per pair",
        "elo": bradley_terry(names, pairs) if len(names) >= 2 else {n: 1500.0 for n in names},
        "pairwise_score": pairwise_table(names, pairs),
        "comparisons": len(pairs),
    }
    return {
        "lineups": per_lineup,
        "agents": {a: line.summary() for a, line in overall.items()},
        "league": league,
    }


# ----------------------------------------------------------------------------------------------
# The evaluation itself


def resolve_agent(game_name: str, agent_id: str) -> str:
    """``"heuristic-v1"`` -> ``"sequence_v0/heuristic-v1"``; full ids are checked as they are."""
    full = agent_id if "/" in agent_id else f"{game_name}/{agent_id}"
    if full not in agents.available(game_name):
        raise SystemExit(f"no agent {full!r} for {game_name}; available: {agents.available(game_name)}")
    return full


def evaluate(
    game_name: str,
    lineups: Sequence[Sequence[str]],
    games: int,
    config: dict[str, Any] | None = None,
    seed: int = 0,
    workers: int = 1,
    progress: bool = True,
    budget_s: float | None = None,
    start_method: str | None = None,
) -> dict[str, Any]:
    """Play every lineup ``games`` times (rounded up to whole rotations) and return the report.

    ``budget_s`` stops starting new games after that many seconds (whole rotation cycles kept).
    """
    config = dict(config or {})
    players, num_teams = table_facts(game_name, config)
    for lineup in lineups:
        if len(lineup) != num_teams:
            raise ValueError(
                f"{game_name} with config {config} has {num_teams} teams; lineup {list(lineup)} "
                f"names {len(lineup)}"
            )
    tasks, counts = schedule(game_name, config, lineups, games, seed)
    start = time.perf_counter()
    results = play_all(tasks, workers, progress, game_name, budget_s, start_method)
    elapsed = time.perf_counter() - start
    counts = [sum(1 for r in results if r["lineup"] == li) for li in range(len(lineups))]
    report = {
        "game": game_name,
        "config": config,
        "num_players": players,
        "num_teams": num_teams,
        "seed": seed,
        "games_requested": games,
        "games_per_lineup": counts,
        "budget_s": budget_s,
        "workers": workers,
        "seconds": round(elapsed, 3),
        "interval": f"Wilson score, z={Z95:.3f} (95%)",
        **summarise(results, lineups, num_teams),
        "games": results,
    }
    return report


# ----------------------------------------------------------------------------------------------
# Presentation


def _pct(x: float) -> str:
    return f"{100 * x:5.1f}%"


def print_report(report: dict[str, Any], console=None) -> None:
    """The per-lineup table and, with two or more agents, the league table, printed with rich."""
    from rich.table import Table

    console = console or make_console()
    multi = report["num_teams"] > 2
    title = f"{report['game']} {json.dumps(report['config']) if report['config'] else ''}".strip()
    table = Table(title=f"{title}: {report['num_players']} seats, {report['num_teams']} teams, sides rotated")
    table.add_column("agent")
    for col in ("games", "W-D-L", "win rate", "95% CI"):
        table.add_column(col, justify="right")
    if multi:
        table.add_column("fair share", justify="right")
        table.add_column("mean rank", justify="right")
    table.add_column("mean length", justify="right")
    notes = []
    for lineup in report["lineups"]:
        table.add_row("[bold]" + lineup_label(lineup["teams"]) + "[/bold]")
        for line in lineup["agents"]:
            lo, hi = line["win_rate_ci95"]
            row = [
                "  " + _short(line["agent"]),
                str(line["games"]),
                f"{line['wins']}-{line['draws']}-{line['losses']}",
                _pct(line["win_rate"]),
                f"{100 * lo:.1f}–{100 * hi:.1f}",
            ]
            if multi:
                row += [_pct(line["fair_share"]), f"{line['mean_rank']:.2f}"]
            row.append(f"{line['mean_length']:.1f}")
            table.add_row(*row)
        if len(set(lineup["teams"])) == 1:  # self-play: the seat advantage is what it measures
            sides = ", ".join(f"team {t} {_pct(w).strip()}" for t, w in enumerate(lineup["side_win_rates"]))
            notes.append(f"{lineup_label(lineup['teams'])}: wins by team side (team 0 moves first): {sides}")
    console.print(table)
    for note in notes:
        console.print(note)
    league = report["league"]
    if len(league["elo"]) >= 2:
        lt = Table(title=f"{report['game']} league (Bradley–Terry, Elo scale)")
        lt.add_column("agent")
        for col in ("Elo", "games", "W-D-L", "win rate", "95% CI"):
            lt.add_column(col, justify="right")
        for name, elo in sorted(league["elo"].items(), key=lambda kv: -kv[1]):
            line = report["agents"][name]
            lo, hi = line["win_rate_ci95"]
            lt.add_row(_short(name), f"{elo:.0f}", str(line["games"]),
                       f"{line['wins']}-{line['draws']}-{line['losses']}", _pct(line["win_rate"]),
                       f"{100 * lo:.1f}–{100 * hi:.1f}")
        console.print(lt)
    console.print(f"[dim]{sum(report['games_per_lineup'])} games in {report['seconds']:.1f} s "
                  f"with {report['workers']} worker(s)[/dim]")


def make_console():
    from rich.console import Console

    console = Console()
    return console if console.is_terminal else Console(width=120)


def lineup_label(teams: Sequence[str]) -> str:
    """``["h", "r", "r"]`` -> ``"h vs 2× r"`` (short ids, repeated teams counted)."""
    parts = []
    for agent in dict.fromkeys(teams):
        n = list(teams).count(agent)
        parts.append(f"{n}× {_short(agent)}" if n > 1 else _short(agent))
    return " vs ".join(parts)


def _short(agent_id: str) -> str:
    return agent_id.split("/", 1)[-1]


def write_outputs(report: dict[str, Any], out: pathlib.Path) -> list[pathlib.Path]:
    """``results.json``, ``winrates.png`` and (three or more agents) ``league.png`` under ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    paths = [out / "results.json"]
    paths[0].write_text(json.dumps(report, indent=1) + "\n")
    paths.append(plot_win_rates(report, out / "winrates.png"))
    if len(report["league"]["elo"]) >= 3:
        paths.append(plot_league(report, out / "league.png"))
    return paths


def plot_win_rates(report: dict[str, Any], path: pathlib.Path) -> pathlib.Path:
    """Horizontal bars: each agent's win rate in each lineup, 95% Wilson error bars, fair share."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels, rates, lows, highs, fair, colours = [], [], [], [], [], []
    palette = plt.get_cmap("tab10")
    agent_colour = {a: palette(i % 10) for i, a in enumerate(report["agents"])}
    for lineup in report["lineups"]:
        tag = lineup_label(lineup["teams"])
        for line in lineup["agents"]:
            labels.append(f"{_short(line['agent'])}  [{tag}]")
            rates.append(line["win_rate"])
            lows.append(max(0.0, line["win_rate"] - line["win_rate_ci95"][0]))
            highs.append(max(0.0, line["win_rate_ci95"][1] - line["win_rate"]))
            fair.append(line["fair_share"])
            colours.append(agent_colour[line["agent"]])
    ys = list(range(len(labels)))[::-1]
    fig, ax = plt.subplots(figsize=(9.0, 0.42 * len(labels) + 1.4))
    ax.barh(ys, rates, xerr=[lows, highs], capsize=3, color=colours)
    if report["num_teams"] > 2:
        ax.scatter(fair, ys, marker="|", s=300, color="red", label="fair share", zorder=3)
        ax.legend(loc="lower right", fontsize=8)
    else:
        ax.axvline(0.5, color="grey", lw=0.8, ls="--")
    ax.set_yticks(ys)
    ax.set_yticklabels(labels, fontsize=8)
    ax.set_xlim(0, 1)
    ax.set_xlabel("win rate (bars: 95% Wilson interval)")
    config = json.dumps(report["config"]) if report["config"] else "default config"
    ax.set_title(f"{report['game']} ({config}), {report['num_teams']} teams", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def plot_league(report: dict[str, Any], path: pathlib.Path) -> pathlib.Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    elo = report["league"]["elo"]
    names = sorted(elo, key=lambda n: -elo[n])
    table = report["league"]["pairwise_score"]
    grid = np.full((len(names), len(names)), np.nan)
    for i, a in enumerate(names):
        for j, b in enumerate(names):
            if b in table.get(a, {}):
                grid[i, j] = table[a][b]
    fig, ax = plt.subplots(figsize=(1.2 * len(names) + 2.5, 1.0 * len(names) + 1.5))
    im = ax.imshow(grid, vmin=0, vmax=1, cmap="RdYlGn")
    for i in range(len(names)):
        for j in range(len(names)):
            if not np.isnan(grid[i, j]):
                ax.text(j, i, f"{grid[i, j]:.2f}", ha="center", va="center", fontsize=8)
    short = [f"{_short(n)} ({elo[n]:.0f})" for n in names]
    ax.set_xticks(range(len(names)))
    ax.set_xticklabels([_short(n) for n in names], rotation=30, ha="right", fontsize=8)
    ax.set_yticks(range(len(names)))
    ax.set_yticklabels(short, fontsize=8)
    ax.set_title(f"{report['game']}: score of row vs column", fontsize=9)
    fig.colorbar(im, ax=ax, fraction=0.046)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


# ----------------------------------------------------------------------------------------------
# Command line


def parse_config(pairs: Sequence[str]) -> dict[str, Any]:
    """``["num_teams=3", "layout=generated"]`` -> ``{"num_teams": 3, "layout": "generated"}``.

    Values are read as JSON (numbers, true/false/null, quoted strings, lists); anything that is not
    valid JSON is kept as a plain string.
    """
    config: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise SystemExit(f"--config takes key=value pairs, got {pair!r}")
        try:
            config[key] = json.loads(value)
        except json.JSONDecodeError:
            config[key] = value
    return config


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m training.evaluate",
        description="Seeded, seat-rotated evaluation of agents, with Wilson intervals and Elo ratings.",
    )
    parser.add_argument("--game", default="sequence_v0", help=f"one of {list(envs.NAMES)}")
    who = parser.add_mutually_exclusive_group()
    who.add_argument("--agents", nargs="+", metavar="ID", help="round robin of these agent ids (or short ids)")
    who.add_argument("--lineup", nargs="+", metavar="ID", help="one agent id per team, e.g. heuristic-v1 random-v0 random-v0")
    who.add_argument("--all", action="store_true", help="every game in envs.NAMES: round robin of all its registered agents")
    size = parser.add_mutually_exclusive_group()
    size.add_argument("--quick", action="store_true",
                      help=f"up to {QUICK_GAMES} games per lineup, at most {QUICK_BUDGET_S:.0f} s per game "
                      "(the default with --all)")
    size.add_argument("--full", action="store_true", help=f"{FULL_GAMES} games per lineup")
    size.add_argument("--games", type=int, help="games per lineup (rounded up to whole seat rotations)")
    parser.add_argument("--config", nargs="*", default=[], metavar="KEY=VALUE", help="game config, values as JSON")
    parser.add_argument("--seed", type=int, default=0, help="first deal seed")
    parser.add_argument("--budget-s", type=float, help="stop starting games after this many seconds per game "
                        "(whole seat rotations are kept)")
    parser.add_argument("--workers", type=int, default=min(2, os.cpu_count() or 1), help="processes (default: min(2, cores))")
    parser.add_argument("--start-method", choices=multiprocessing.get_all_start_methods(),
                        help="how worker processes start (default: the platform's)")
    parser.add_argument("--out", type=pathlib.Path, help="output folder (default runs/evaluate/<game>, or runs/evaluate/all)")
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    console = make_console()
    config = parse_config(args.config)
    quick = args.quick or (args.all and not (args.full or args.games))
    games = args.games or (FULL_GAMES if args.full else QUICK_GAMES if quick else 100)
    if games < 1:
        raise SystemExit("--games must be at least 1")
    if args.budget_s is None and quick:
        args.budget_s = QUICK_BUDGET_S
    if args.all:
        if config:
            raise SystemExit("--all evaluates every game with its default config; --config is per game")
        return _run_all(args, games, config, console)
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
                      args.budget_s, args.start_method)
    print_report(report, console)
    paths = write_outputs(report, args.out or pathlib.Path("runs/evaluate") / args.game)
    console.print("wrote " + ", ".join(str(p) for p in paths))
    return 0


def _run_all(args, games: int, config: dict[str, Any], console) -> int:
    """Every game in ``envs.NAMES`` with its default config: a round robin of all its agents."""
    out_root = args.out or pathlib.Path("runs/evaluate/all")
    summary: dict[str, Any] = {"games_per_lineup": games, "budget_s": args.budget_s, "seed": args.seed, "games": {}}
    failures = 0
    for name in envs.NAMES:
        random_id = f"{name}/random-v0"
        ids = [random_id]
        for agent_id in agents.available(name):
            if agent_id == random_id:
                continue
            problem = _cannot_play(agent_id, name, config)
            if problem:  # e.g. a checkpoint trained for another config
                console.print(f"[yellow]{name}: leaving out {agent_id}: {problem}[/yellow]")
                summary.setdefault("left_out", {})[agent_id] = problem
            else:
                ids.append(agent_id)
        try:
            _, num_teams = table_facts(name, config)
            # With only the random player, a self-play lineup still measures the seat advantage.
            lineups = round_robin(ids, num_teams) if len(ids) >= 2 else [(random_id,) * num_teams]
            report = evaluate(name, lineups, games, config, args.seed, args.workers, not args.no_progress,
                              args.budget_s, args.start_method)
        except Exception as exc:  # one unfinished game must not stop the others
            failures += 1
            console.print(f"[red]{name}: evaluation failed: {type(exc).__name__}: {exc}[/red]")
            summary["games"][name] = {"error": f"{type(exc).__name__}: {exc}"}
            continue
        print_report(report, console)
        write_outputs(report, out_root / name)
        summary["games"][name] = {
            "elo": report["league"]["elo"],
            "agents": report["agents"],
            "games_per_lineup": report["games_per_lineup"],
            "seconds": report["seconds"],
        }
    out_root.mkdir(parents=True, exist_ok=True)
    (out_root / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")
    console.print(f"wrote {out_root}/<game>/results.json, winrates.png, league.png and {out_root}/summary.json")
    return 1 if failures else 0


def _cannot_play(agent_id: str, game_name: str, config: dict[str, Any]) -> str | None:
    """Why ``agent_id`` cannot sit at ``game_name`` with ``config`` (None if it can)."""
    try:
        engine_config = {k: v for k, v in config.items() if k not in ("max_cycles", "render_mode")}
        agents.make(agent_id, seed=0).reset(0, envs.make_game(game_name, **engine_config))
    except Exception as exc:
        return f"{type(exc).__name__}: {exc}"
    return None


if __name__ == "__main__":
    sys.exit(main())

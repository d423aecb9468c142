"""What the league shows and writes: rich tables in the terminal, ``results.json`` and plots (win
rates with their Wilson intervals, the league's pairwise heat map)."""

from __future__ import annotations

import json
import pathlib
from typing import Any, Sequence

from envs.provenance import image_metadata


def _pct(x: float) -> str:
    return f"{100 * x:5.1f}%"


#: Tables with more team sides than this leave the by-side column out (it stays in the JSON).
MAX_SIDES_SHOWN = 8


def side_rates(line: dict[str, Any]) -> str:
    """An agent's win rate from each team side (side 0 moves first) in whole percent, '-' for a
    side it never played: ``"34 23 18 9 4 4"``."""
    return " ".join("-" if r is None else f"{100 * r:.0f}" for r in line["win_rate_by_side"])


def print_report(report: dict[str, Any], console=None) -> None:
    """The per-lineup table and, with two or more agents, the league table, printed with rich."""
    from rich.table import Table

    console = console or make_console()
    multi = report["num_teams"] > 2
    title = f"{report['game']} {json.dumps(report['config']) if report['config'] else ''}".strip()
    table = Table(title=f"{title}: {report['num_players']} seats, {report['num_teams']} teams, sides rotated")
    table.add_column("agent", **_name_column(report["agents"], indent=2))
    for col in ("games", "W-D-L", "win rate", "95% CI"):
        table.add_column(col, justify="right", no_wrap=True)
    if multi:
        table.add_column("fair share", justify="right", no_wrap=True)
        table.add_column("mean rank", justify="right", no_wrap=True)
    table.add_column("mean length", justify="right", no_wrap=True)
    by_side = report["num_teams"] <= MAX_SIDES_SHOWN
    if by_side:
        table.add_column("win % by side", justify="right", no_wrap=True)
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
            if by_side:
                row.append(side_rates(line))
            table.add_row(*row)
        wins = sum(line["wins"] for line in lineup["agents"])
        if wins > lineup["games"]:
            notes.append(f"{lineup_label(lineup['teams'])}: {wins} wins in {lineup['games']} games: a first place "
                         "shared by teams of different agents is a win for each of them")
        if len(set(lineup["teams"])) == 1:  # self-play: the seat advantage is what it measures
            sides = ", ".join(f"team {t} {_pct(w).strip()}" for t, w in enumerate(lineup["side_win_rates"]))
            notes.append(f"{lineup_label(lineup['teams'])}: wins by team side (team 0 moves first): {sides}")
    console.print(table)
    for note in notes:
        console.print(note)
    league = report["league"]
    if len(league["elo"]) >= 2:
        lt = Table(title=f"{report['game']} league (Bradley–Terry, Elo scale)")
        lt.add_column("agent", **_name_column(league["elo"]))
        for col in ("Elo", "Elo 95% CI", "games", "W-D-L", "win rate", "95% CI"):
            lt.add_column(col, justify="right", no_wrap=True)
        for name, elo in sorted(league["elo"].items(), key=lambda kv: -kv[1]):
            line = report["agents"][name]
            lo, hi = line["win_rate_ci95"]
            lt.add_row(_short(name), f"{elo:.0f}", elo_interval_text(league["elo_ci95"][name]), str(line["games"]),
                       f"{line['wins']}-{line['draws']}-{line['losses']}", _pct(line["win_rate"]),
                       f"{100 * lo:.1f}–{100 * hi:.1f}")
        console.print(lt)
        console.print(f"Elo 95% CI: {league['elo_interval']}.")
    played = report["games_per_lineup"]
    scheduled = report["games_scheduled_per_lineup"]
    ends = ", ".join(f"{n} {reason}" for reason, n in sorted(report["end_reasons"].items()))
    where = (f"on the Ray cluster at {report['ray_address']}" if report.get("ray_address")
             else f"with {report['workers']} worker(s)")
    console.print(f"{sum(played)} games in {report['seconds']:.1f} s {where}: "
                  f"{' / '.join(map(str, played))} per lineup of {' / '.join(map(str, scheduled))} scheduled; "
                  f"{report['stop_reason']}. Games ended: {ends}.")
    few = few_games_note(played)
    if few:
        console.print(f"[yellow]{few}[/yellow]")


#: Fewer games than this per lineup get a warning under the tables (a Wilson interval at 50% is
#: then wider than +-20 points).
FEW_GAMES = 24


def few_games_note(played: Sequence[int]) -> str | None:
    """A warning when some lineup played fewer than :data:`FEW_GAMES` games, else None."""
    fewest = min(played, default=0)
    if fewest >= FEW_GAMES:
        return None
    from agents.stats import wilson_interval

    lo, hi = wilson_interval(fewest / 2, fewest) if fewest else (0.0, 1.0)
    return (f"Few games: the smallest lineup played {fewest}; a 50% win rate from {fewest} games has a 95% interval "
            f"of {100 * lo:.0f}-{100 * hi:.0f}%. Treat these numbers as a smoke test (give more --games or "
            "--budget-s).")


def elo_interval_text(interval: Sequence[float | None]) -> str:
    """``[1420.3, None]`` -> ``"1420–∞"``: an open end (an agent that never lost, or never scored) as ∞."""
    lo, hi = interval
    return f"{'−∞' if lo is None else f'{lo:.0f}'}–{'∞' if hi is None else f'{hi:.0f}'}"


def _name_column(agent_ids, indent: int = 0) -> dict[str, Any]:
    """Rich column options that keep every agent name whole (never cut to ``heuristic-n…``): the
    column is never narrower than the longest name; a longer lineup label folds onto a second line."""
    longest = max((len(_short(a)) for a in agent_ids), default=5)
    return {"overflow": "fold", "min_width": longest + indent}


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
    names = list(dict.fromkeys(line["agent"] for lineup in report["lineups"] for line in lineup["agents"]))
    agent_colour = {a: palette(i % 10) for i, a in enumerate(names)}
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
    fig.savefig(path, dpi=110, metadata=image_metadata([report["game"]]))
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
    counts = report["league"]["pairwise_games"]
    fig, ax = plt.subplots(figsize=(1.3 * len(names) + 3.5, 1.0 * len(names) + 1.8))
    im = ax.imshow(grid, vmin=0, vmax=1, cmap="RdYlGn")
    for i, a in enumerate(names):
        for j, b in enumerate(names):
            if not np.isnan(grid[i, j]):
                ax.text(j, i, f"{grid[i, j]:.2f}\nn={counts[a][b]}", ha="center", va="center", fontsize=7)
    intervals = report["league"]["elo_ci95"]
    short = [f"{_short(n)} {elo[n]:.0f} [{elo_interval_text(intervals[n])}]" for n in names]
    ax.set_xticks(range(len(names)))
    ax.set_xticklabels([_short(n) for n in names], rotation=30, ha="right", fontsize=8)
    ax.set_yticks(range(len(names)))
    ax.set_yticklabels(short, fontsize=8)
    ax.set_title(f"{report['game']}: score of row vs column (n: comparisons behind the cell); "
                 "row labels: Elo [95% bootstrap CI]", fontsize=8)
    fig.colorbar(im, ax=ax, fraction=0.046)
    fig.tight_layout()
    fig.savefig(path, dpi=110, metadata=image_metadata([report["game"]]))
    plt.close(fig)
    return path


def print_all_summary(summary: dict[str, Any], console=None) -> None:
    """``--all``: one row per game and lineup with the games played, scheduled, and why it stopped."""
    from rich.table import Table

    console = console or make_console()
    table = Table(title="Games played per lineup")
    for col in ("game", "lineup", "played", "scheduled", "why"):
        table.add_column(col, justify="right" if col in ("played", "scheduled") else "left")
    for name, entry in summary["games"].items():
        if "error" in entry:
            table.add_row(name, "", "", "", f"failed: {entry['error']}")
            continue
        for i, label in enumerate(entry["lineups"]):
            played, scheduled = entry["games_per_lineup"][i], entry["games_scheduled_per_lineup"][i]
            why = "all scheduled games" if played == scheduled else "time budget; lineups cut equally"
            if played < FEW_GAMES:
                why += f" [yellow](few games: under {FEW_GAMES})[/yellow]"
            table.add_row(name if i == 0 else "", label, str(played), str(scheduled), why)
    console.print(table)

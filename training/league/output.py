"""What the league shows and writes: rich tables in the terminal, ``results.json`` and plots (win
rates with their Wilson intervals, the league's pairwise heat map)."""

from __future__ import annotations

import json
import pathlib
from typing import Any, Sequence

from agents.ladder import move_time_text
from envs.provenance import image_metadata


def _pct(x: float) -> str:
    return f"{100 * x:5.1f}%"


#: Tables with more team sides than this leave the by-side column out (it stays in the JSON).
MAX_SIDES_SHOWN = 8


def side_rates(line: dict[str, Any]) -> str:
    """An agent's win rate from each team side (side 0 is player_0's team) in whole percent, '-' for a
    side it never played: ``"34 23 18 9 4 4"`` (the column's header, :func:`side_header`, names the sides)."""
    return " ".join("-" if r is None else f"{100 * r:.0f}" for r in line["win_rate_by_side"])


def ordinal(n: int) -> str:
    """``1`` -> ``"1st"``, ``2`` -> ``"2nd"``, ``11`` -> ``"11th"``."""
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def side_header(num_teams: int) -> str:
    """The by-side column's header, naming the sides in the order the cells list them (team 0's side
    first): ``"win % 1st 2nd"``, ``"win % 1st…6th"``."""
    if num_teams <= 2:
        return "win % " + " ".join(ordinal(k + 1) for k in range(num_teams))
    return f"win % 1st…{ordinal(num_teams)}"


def print_report(report: dict[str, Any], console=None) -> None:
    """The per-lineup table and, with two or more agents, the league table, printed with rich, with
    notes under them for whatever in them needs explaining."""
    from rich.table import Table

    console = console or make_console()
    multi = report["num_teams"] > 2
    from training.league.tables import table_title

    title = table_title(report["game"], report["config"])
    table = Table(title=f"{title}: {report['num_players']} seats, {report['num_teams']} teams, sides rotated")
    table.add_column("agent", **_name_column(report["agents"], indent=2 + len(f"{report['num_teams']}× ")))
    for col in ("games", "W-D-L", "win rate", "95% CI"):
        table.add_column(col, justify="right", no_wrap=True)
    if multi:
        table.add_column("fair share", justify="right", no_wrap=True)
        table.add_column("mean rank", justify="right", no_wrap=True)
    table.add_column("mean length", justify="right", no_wrap=True)
    by_side = report["num_teams"] <= MAX_SIDES_SHOWN
    if by_side:
        table.add_column(side_header(report["num_teams"]), justify="right", no_wrap=True)
    notes = []
    several = None  # an example of one agent holding several teams of a lineup, for the note
    for lineup in report["lineups"]:
        table.add_row("[bold]" + lineup_label(lineup["teams"]) + "[/bold]")
        for line in lineup["agents"]:
            held = list(lineup["teams"]).count(line["agent"])
            lo, hi = line["win_rate_ci95"]
            row = [
                "  " + (f"{held}× " if held > 1 else "") + _short(line["agent"]),
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
            if 1 < held < len(lineup["teams"]) and several is None:
                several = (held, len(lineup["teams"]), line)
        wins = sum(line["wins"] for line in lineup["agents"])
        if wins > lineup["games"]:
            notes.append(f"{lineup_label(lineup['teams'])}: {wins} wins in {lineup['games']} games: a first place "
                         "shared by teams of different agents is a win for each of them")
        if len(set(lineup["teams"])) == 1:  # self-play: the seat advantage is what it measures
            sides = ", ".join(f"team {t} {_pct(w).strip()}" for t, w in enumerate(lineup["side_win_rates"]))
            notes.append(f"{lineup_label(lineup['teams'])}: wins by team side (team 0 is player_0's): {sides}")
    if several is not None:
        notes.insert(0, several_teams_note(*several, by_side))
    if by_side:
        notes.insert(0, f"{side_header(report['num_teams'])}: an agent's win rate from each side of the table, "
                        "1st being team 0 (player_0's team), 2nd team 1, and so on.")
    print_whole(console, table)
    for note in notes:
        console.print(note)
    league = report["league"]
    if len(league["elo"]) >= 2:
        lt = Table(title=f"{title} league (Bradley–Terry, Elo scale)")
        lt.add_column("agent", **_name_column(league["elo"]))
        for col in ("Elo", "Elo 95% CI", "games", "W-D-L", "win rate", "95% CI"):
            lt.add_column(col, justify="right", no_wrap=True)
        for name, elo in sorted(league["elo"].items(), key=lambda kv: -kv[1]):
            line = report["agents"][name]
            lo, hi = line["win_rate_ci95"]
            lt.add_row(_short(name), f"{elo:.0f}", elo_interval_text(league["elo_ci95"][name]), str(line["games"]),
                       f"{line['wins']}-{line['draws']}-{line['losses']}", _pct(line["win_rate"]),
                       f"{100 * lo:.1f}–{100 * hi:.1f}")
        print_whole(console, lt)
        console.print(elo_footnote(league["elo_ci95"].values()))
    console.print(games_line(report))
    few = few_games_note(report["games_per_lineup"])
    if few:
        console.print(f"[yellow]{few}[/yellow]")


def several_teams_note(held: int, teams: int, line: dict[str, Any], by_side: bool) -> str:
    """Why the row of an agent holding several teams of a lineup (``3× heuristic-v1``) can read 100%
    beside by-side rates of 33 or 0: its win rate and its by-side rates count different things."""
    example = f" (here {100 * line['win_rate']:.0f}% beside {side_rates(line)})" if by_side else ""
    return (f"{held}× agent: one agent holding {held} of the {teams} teams. Its win rate counts a game as won when "
            f"any of its teams comes first, so compare it with its fair share ({held}/{teams} = "
            f"{100 * held / teams:.0f}%), not with 1/{teams}"
            + (f"; its win % by side is how often its one team on that side came first (fair share 1/{teams} = "
               f"{100 / teams:.0f}% each), so the two can look contradictory{example}" if by_side else "")
            + ".")


def games_line(report: dict[str, Any]) -> str:
    """How many games were played (per lineup, of how many scheduled), why it stopped, and how the
    games ended, each end reason with what it means."""
    played, scheduled = report["games_per_lineup"], report["games_scheduled_per_lineup"]
    if len(set(played)) == 1 and len(set(scheduled)) == 1:
        per = (f"{played[0]} per lineup in each of {len(played)} lineups" if len(played) > 1 else f"{played[0]}") + (
            f" (of {scheduled[0]} scheduled)" if scheduled[0] != played[0] else "")
    else:
        per = f"{' / '.join(map(str, played))} per lineup of {' / '.join(map(str, scheduled))} scheduled"
    texts = report.get("end_reason_texts", {})
    ends = "; ".join(f"{n} {reason}" + (f" ({texts[reason]})" if texts.get(reason, reason) != reason else "")
                     for reason, n in sorted(report["end_reasons"].items()))
    where = (f"on the Ray cluster at {report['ray_address']}" if report.get("ray_address")
             else f"with {report['workers']} worker(s)")
    return (f"{sum(played)} games in {report['seconds']:.1f} s {where}: {per}; "
            f"{report['stop_reason']}. How they ended: {ends or 'no games'}.")


def elo_footnote(intervals) -> str:
    """What the Elo interval column holds, with what an open end (``≥ 1420``, ``≤ 1143``) means when
    the table shows one."""
    from training.league.matches import ELO_INTERVAL_METHOD

    intervals = list(intervals)
    text = f"Elo 95% CI: {ELO_INTERVAL_METHOD}."
    ends = []
    if any(hi is None and lo is not None for lo, hi in intervals):
        ends.append("≥ x: no finite upper bound, as the agent never lost a comparison")
    if any(lo is None and hi is not None for lo, hi in intervals):
        ends.append("≤ x: no finite lower bound, as the agent never scored a point")
    if any(lo is None and hi is None for lo, hi in intervals):
        ends.append("open: neither bound is finite")
    if ends:
        text += " " + "; ".join(ends) + ". In results.json an open end is null."
    return text


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
            f"of {100 * lo:.0f}-{100 * hi:.0f}%. Treat these numbers as a smoke test (give more --min-games, "
            "--games or --budget-s).")


def elo_interval_text(interval: Sequence[float | None]) -> str:
    """``[1380.2, 1420.3]`` -> ``"1380–1420"``; an open end (null in the JSON: an agent that never
    lost, or never scored) as a bound on one side: ``[1420.3, None]`` -> ``"≥ 1420"``,
    ``[None, 1143]`` -> ``"≤ 1143"``, both open -> ``"open"``."""
    lo, hi = interval
    if lo is None and hi is None:
        return "open"
    if hi is None:
        return f"≥ {lo:.0f}"
    if lo is None:
        return f"≤ {hi:.0f}"
    return f"{lo:.0f}–{hi:.0f}"


def _name_column(agent_ids, indent: int = 0) -> dict[str, Any]:
    """Rich column options that keep every agent name whole (never cut to ``heuristic-n…``): the
    column is never narrower than the longest name; a longer lineup label folds onto a second line."""
    longest = max((len(_short(a)) for a in agent_ids), default=5)
    return {"overflow": "fold", "min_width": longest + indent}


def make_console():
    """The console the league prints to: the terminal's width, or 120 columns for text written to a
    file or a pipe (tables there grow past it rather than being cut, :func:`print_whole`)."""
    from rich.console import Console

    console = Console()
    return console if console.is_terminal else Console(width=120)


def print_whole(console, table) -> None:
    """Print ``table`` without cutting it. Rich fits a table to the console's width and cuts what
    cannot fold (numbers, ids) at the right edge; a terminal shows its own width, but text going to a
    file or a pipe has no edge, so there the console widens to what the table needs."""
    if console.is_terminal:
        console.print(table)
        return
    from rich.measure import Measurement

    # the widest it gets, every cell on one line: rich's minimum counts a no-wrap cell's longest word
    need = Measurement.get(console, console.options.update_width(10_000), table).maximum
    width = console.width
    if need <= width:
        console.print(table)
        return
    console.width = need
    try:
        console.print(table)
    finally:
        console.width = width


def lineup_label(teams: Sequence[str]) -> str:
    """``["h", "r", "r"]`` -> ``"h vs 2× r"`` (short ids, repeated teams counted)."""
    parts = []
    for agent in dict.fromkeys(teams):
        n = list(teams).count(agent)
        parts.append(f"{n}× {_short(agent)}" if n > 1 else _short(agent))
    return " vs ".join(parts)


def _short(agent_id: str) -> str:
    return agent_id.split("/", 1)[-1]


def _chart_name(agent_id: str, width: int = 40) -> str:
    """The agent's name in a chart: :func:`_short`, with a long policy folder's path cut from the left to its
    last ``width`` characters so that the axes keep their room (the tables print it whole)."""
    short = _short(agent_id)
    return short if len(short) <= width else "…" + short[-(width - 1):]


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
            labels.append(f"{_chart_name(line['agent'])}  [{tag}]")
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
    from training.league.tables import config_words

    ax.set_title(f"{report['game']} ({config_words(report['game'], report['config'])}), {report['num_teams']} teams",
                 fontsize=9)
    # the saved image grows to hold every label (tight_layout warns and gives up on long ones)
    fig.savefig(path, dpi=110, bbox_inches="tight", metadata=image_metadata([report["game"]]))
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
    short = [f"{_chart_name(n)} {elo[n]:.0f} [{elo_interval_text(intervals[n])}]" for n in names]
    ax.set_xticks(range(len(names)))
    ax.set_xticklabels([_chart_name(n) for n in names], rotation=30, ha="right", fontsize=8)
    ax.set_yticks(range(len(names)))
    ax.set_yticklabels(short, fontsize=8)
    ax.set_title(f"{report['game']}: score of row vs column (n: games they played together); "
                 "row labels: Elo [95% bootstrap CI]", fontsize=8)
    fig.colorbar(im, ax=ax, fraction=0.046)
    # the saved image grows to hold every label (tight_layout warns and gives up on long ones)
    fig.savefig(path, dpi=110, bbox_inches="tight", metadata=image_metadata([report["game"]]))
    plt.close(fig)
    return path


def print_all_summary(summary: dict[str, Any], console=None) -> None:
    """``--all``: one row per table with its lineups, the games each played of those scheduled, the
    seconds it took and why it stopped."""
    from rich.table import Table

    console = console or make_console()
    table = Table(title="Games played per table")
    for col in ("table", "lineups", "games per lineup", "scheduled", "seconds", "why it stopped"):
        table.add_column(col, justify="right" if col in ("lineups", "games per lineup", "scheduled", "seconds")
                         else "left")
    for name, entry in summary["games"].items():
        if "error" in entry:
            table.add_row(name, "", "", "", "", f"failed: {entry['error']}")
            continue
        played, scheduled = entry["games_per_lineup"], entry["games_scheduled_per_lineup"]
        why = "all scheduled games" if played == scheduled else "time budget (lineups cut alike)"
        if min(played, default=0) < FEW_GAMES:
            why += f" [yellow](few games: under {FEW_GAMES})[/yellow]"
        table.add_row(name, str(len(played)), _span(played), _span(scheduled), f"{entry['seconds']:.0f}", why)
    print_whole(console, table)


def _span(counts: Sequence[int]) -> str:
    """``[24, 24]`` -> ``"24"``, ``[24, 30]`` -> ``"24–30"``."""
    if not counts:
        return "0"
    lo, hi = min(counts), max(counts)
    return str(lo) if lo == hi else f"{lo}–{hi}"


def ladder_interval_text(row: dict[str, Any]) -> str:
    """A ladder row's 95% interval (:func:`elo_interval_text`); the reference agent's (``heuristic-v1``,
    held at 1500) is ``"reference"``."""
    if row["id"].endswith("/heuristic-v1"):
        return "reference"
    return elo_interval_text([row["elo_low"], row["elo_high"]])


def print_ladder(info: dict[str, Any], console=None) -> None:
    """A ladder (:func:`agents.ladder.ladder_info`) as a table, strongest first."""
    from rich.table import Table

    console = console or make_console()
    table = Table(title=f"Ladder: {info['title']} (heuristic-v1 = 1500, 95% intervals)")
    table.add_column("#", justify="right", no_wrap=True)
    table.add_column("agent", **_name_column([r["id"] for r in info["rows"]]))
    for col in ("Elo", "95% interval", "games", "time a move"):
        table.add_column(col, justify="right", no_wrap=True)
    table.add_column("note")
    for n, row in enumerate(info["rows"], 1):
        notes = []
        if row["searches"]:
            notes.append("searches at play time")
        if row["superseded_by"]:
            notes.append(f"older version of {_short(row['superseded_by'])}")
        table.add_row(str(n), _short(row["id"]), f"{row['elo']:.0f}", ladder_interval_text(row), str(row["games"]),
                      move_time_text(row["seconds_per_move"]), "; ".join(notes))
    print_whole(console, table)
    design = info["design"]
    console.print(f"{design['text']}: {design['games_per_pairing']} games a pairing, "
                  f"{design['search_games_per_pairing']} for an agent that searches. Remake: {info['command']}")


def ladder_summary(top: int = 3) -> str:
    """The README's block: each table's strongest current agents from the shipped ladders, as a
    Markdown table (``python -m training.league --ladder-summary`` prints it)."""
    import envs
    from agents.ladder import ladder, ladder_configs
    from training.league.tables import table_title

    lines = ["| table | strongest agents (Elo, 95% interval, time a move; heuristic-v1 = 1500) |", "|---|---|"]
    for game in envs.NAMES:
        for config in ladder_configs(game):
            rows = [r for r in ladder(game, config) if not r["superseded_by"]][:top]
            best = "; ".join(f"`{r['id'].split('/', 1)[1]}` {r['elo']:.0f} [{ladder_interval_text(r)}], "
                             f"{move_time_text(r['seconds_per_move'])}" for r in rows)
            lines.append(f"| {table_title(game, config)} | {best} |")
    return "\n".join(lines) + "\n"

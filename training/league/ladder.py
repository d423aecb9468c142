"""Making a game's ladder: every agent that can sit at a table, rated on one Elo scale.

    python -m training.league --make-ladder pans_trial_v0            # remake one game's ladders
    python -m training.league --make-ladder all                      # every game's
    python -m training.league --ladder pans_trial_v0                 # print the shipped one

The design is a panel of anchors rather than a full round robin, so that a game of seventeen agents
costs tens of pairings, not a hundred and thirty:

* the two anchors, ``random-v0`` and ``heuristic-v1``, play each other;
* every other agent plays each anchor :data:`GAMES` games (two teams: seats rotated on the same
  deals; more teams: the agent against a field of the anchor, ``a h h h``, every seat order);
* an agent that searches at play time (seconds a game) plays ``heuristic-v1`` alone, and fewer
  games (:data:`SEARCH_GAMES`; :data:`SLOW_GAMES` for OpenSpiel's IS-MCTS, minutes a game in the
  longer games). The ladder lists every agent's games, so a wider interval says why.

All games go into one Bradley–Terry fit (:func:`training.league.matches.league_statistics`, the
league's own), shifted so that ``heuristic-v1`` sits at 1500, with the league's bootstrap interval.
Every pairing's games are kept in a work folder (``runs/ladder/<table>/``) as soon as they are played,
so a stopped run started again plays only what is missing; the file written at the end is the same
whether the run was stopped or not. Move times (CPU seconds per decision, this process's clock) are
measured in the same games; they are the only numbers that differ between two runs.
"""

from __future__ import annotations

import json
import pathlib
from typing import Any, Callable, Sequence

import agents
from agents.ladder import LADDER_DIR, ladder_path, row_fields
from agents.registry import searches_at_play_time, superseded_by
from envs.provenance import environment_version, provenance
from agents.stats import bootstrap_elo_interval
from training.league.matches import (ELO_BOOTSTRAP_SEED, ELO_INTERVAL_METHOD, ELO_RESAMPLES, evaluate,
                                     league_statistics, pairwise_outcomes, seat_agents, table_facts, table_game)
from training.league.tables import Table, table_title

#: Games per pairing of an agent that plays at the speed of a network or a heuristic.
GAMES = 100
#: Games per pairing of an agent that searches at play time (against heuristic-v1 only).
SEARCH_GAMES = 32
#: Games per pairing of OpenSpiel's IS-MCTS (a whole game of the Dojo takes it minutes).
SLOW_GAMES = 4
#: The first deal seed of the ladder's games (apart from the seeds training and evaluation use).
SEED = 30_000_000
#: The anchors' short ids: they play each other, and every other agent plays them.
ANCHORS = ("random-v0", "heuristic-v1")
#: The anchor held at 1500.
REFERENCE = "heuristic-v1"
DEFAULT_WORK = pathlib.Path("runs/ladder")
COMMAND = "python -m training.league --make-ladder {game}"


def games_for(agent_id: str, games: int, search_games: int, slow_games: int) -> int:
    """Games per pairing for ``agent_id`` (see the module's documentation)."""
    if agent_id.endswith("/ismcts-v0"):
        return slow_games
    return search_games if searches_at_play_time(agent_id) else games


def pairings(table: Table, num_teams: int, games: int = GAMES, search_games: int = SEARCH_GAMES,
             slow_games: int = SLOW_GAMES) -> list[tuple[tuple[str, ...], int]]:
    """The ladder's lineups at ``table`` with their games: ``[(teams, games), ...]``, anchors first."""
    random_id, reference = (f"{table.game}/{a}" for a in ANCHORS)
    anchors = [a for a in (random_id, reference) if a in table.agents]
    if reference not in anchors:
        raise ValueError(f"{table.label}: the ladder's reference agent {reference} cannot sit at this table")

    def lineup(agent: str, anchor: str) -> tuple[str, ...]:
        return (agent,) + (anchor,) * (num_teams - 1)

    out = []
    if len(anchors) == 2:
        out.append((lineup(reference, random_id), games))
    for agent in table.agents:
        if agent in anchors:
            continue
        n = games_for(agent, games, search_games, slow_games)
        opponents = [reference] if n != games else anchors
        out += [(lineup(agent, anchor), n) for anchor in opponents]
    return out


def _slug(teams: Sequence[str]) -> str:
    counts: dict[str, int] = {}
    for agent in teams:
        counts[agent] = counts.get(agent, 0) + 1
    return "-vs-".join(f"{a.split('/', 1)[1]}{'x' + str(n) if n > 1 else ''}" for a, n in counts.items())


def play_pairing(table: Table, teams: tuple[str, ...], games: int, seed: int, work: pathlib.Path,
                 workers: int | None, ray_address: str | None, progress: bool) -> list[dict[str, Any]]:
    """The games of one pairing, and the provenance of the run that played them: read from ``work``
    if a run already played them, else played now and written there at once."""
    path = work / f"{_slug(teams)}-{games}games-seed{seed}.json"
    key = {"game": table.game, "config": table.config, "teams": list(teams), "games": games, "seed": seed,
           "environment_version": environment_version(table.game)}
    if path.is_file():
        try:
            data = json.loads(path.read_text())
            if data.get("key") == key:
                return data["games"], data["provenance"]
        except (OSError, ValueError):
            pass  # a file cut short by a stop: play the pairing again
    report = evaluate(table.game, [teams], games, table.config, seed, workers, progress, timed=True,
                      ray_address=ray_address)
    work.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps({"key": key, "provenance": report["provenance"], "games": report["games"]}) + "\n")
    tmp.replace(path)
    return report["games"], report["provenance"]


def move_times(results: Sequence[dict[str, Any]], seat_agents: Callable[[dict], list[str]]) -> dict[str, float]:
    """CPU seconds per decision of every agent over the games' timed seats."""
    seconds: dict[str, float] = {}
    moves: dict[str, int] = {}
    for result in results:
        for agent, cpu, n in zip(seat_agents(result), result["cpu_s_by_seat"], result["moves_by_seat"]):
            seconds[agent] = seconds.get(agent, 0.0) + cpu
            moves[agent] = moves.get(agent, 0) + n
    return {a: seconds[a] / moves[a] for a in seconds if moves[a]}


def make_ladder(table: Table, *, games: int = GAMES, search_games: int = SEARCH_GAMES, slow_games: int = SLOW_GAMES,
                seed: int = SEED, work: pathlib.Path = DEFAULT_WORK, workers: int | None = 2,
                ray_address: str | None = None, progress: bool = True,
                echo: Callable[[str], None] = print) -> dict[str, Any]:
    """Play (or read back) every pairing of ``table`` and return its ladder as written to a file."""
    _, num_teams = table_facts(table.game, table.config)
    plan = pairings(table, num_teams, games, search_games, slow_games)
    results: list[dict[str, Any]] = []
    lineups: list[tuple[str, ...]] = []
    played_by: list[dict[str, Any]] = []
    for n, (teams, count) in enumerate(plan):
        echo(f"{table.label}: pairing {n + 1} of {len(plan)}: {' vs '.join(_slug([t]) for t in dict.fromkeys(teams))}, "
             f"{count} games")
        played, made = play_pairing(table, teams, count, seed, work / table.label, workers, ray_address, progress)
        if made not in played_by:
            played_by.append(made)
        results += [{**r, "lineup": len(lineups)} for r in played]
        lineups.append(teams)
    stats = league_statistics(results, lineups, num_teams)
    reference = f"{table.game}/{REFERENCE}"
    elo = stats["league"]["elo"]
    shift = 1500.0 - elo[reference]
    # the interval of each rating relative to the reference (whose own is the point 1500)
    ci = bootstrap_elo_interval(table.agents, [pairwise_outcomes(r) for r in results], [r["lineup"] for r in results],
                                ELO_RESAMPLES, ELO_BOOTSTRAP_SEED, anchor=(reference, 0.0))
    game = table_game(table.game, table.config)
    times = move_times(results, lambda r: seat_agents(r["teams"], game))
    rows = []
    for agent in table.agents:
        low, high = ci[agent]
        rows.append({
            "id": agent,
            "elo": round(elo[agent] + shift, 1),
            "elo_low": None if low is None else round(low + 1500.0, 1),
            "elo_high": None if high is None else round(high + 1500.0, 1),
            "games": stats["agents"][agent]["games"],
            "seconds_per_move": round(times.get(agent, 0.0), 6),
            "superseded_by": superseded_by(agent),
            "searches": searches_at_play_time(agent),
            "description": agents.describe(agent),
        })
    rows.sort(key=lambda r: (-r["elo"], r["id"]))
    assert set(rows[0]) == set(row_fields()), "the ladder's rows and agents.ladder's reader disagree"
    return {
        "format": "tabletop-rl ladder",
        "format_version": 1,
        "provenance": provenance(table.game),
        # what played the games (a remake reads back the games an earlier run kept)
        "games_provenance": played_by,
        "game": table.game,
        "environment_version": environment_version(table.game),
        "config": table.config,
        "title": table_title(table.game, table.config),
        "command": COMMAND.format(game=table.game) + "".join(
            f" {flag} {value}" for flag, value, default in (("--ladder-games", games, GAMES),
                                                            ("--search-games", search_games, SEARCH_GAMES),
                                                            ("--slow-games", slow_games, SLOW_GAMES),
                                                            ("--seed", seed, SEED)) if value != default),
        "design": {
            "anchors": [f"{table.game}/{a}" for a in ANCHORS],
            "reference": f"{table.game}/{REFERENCE}",
            "games_per_pairing": games,
            "search_games_per_pairing": search_games,
            "slow_games_per_pairing": slow_games,
            "first_seed": seed,
            "text": ("every agent against random-v0 and heuristic-v1 (an agent that searches at play time against "
                     "heuristic-v1 only, in fewer games), seats rotated on the same deals"),
        },
        "method": stats["league"]["method"] + f"; shifted so that {REFERENCE} is 1500",
        "interval": (f"{ELO_INTERVAL_METHOD}, each resample shifted so that {REFERENCE} is 1500; null: open-ended "
                     "(an agent that never lost a comparison has no finite upper bound, one that never scored no "
                     "finite lower bound)"),
        "seconds_per_move": "CPU seconds per decision measured in the ladder's own games (machine-dependent)",
        "rows": rows,
        "pairings": [{"teams": list(line["teams"]), "games": line["games"],
                      "win_rates": {a["agent"]: round(a["win_rate"], 4) for a in line["agents"]}}
                     for line in stats["lineups"]],
        "left_out": table.left_out,
    }


def write_ladder(ladder: dict[str, Any], folder: pathlib.Path = LADDER_DIR) -> pathlib.Path:
    """Write ``ladder`` where :func:`agents.ladder.ladder` reads it (or into ``folder``)."""
    path = ladder_path(ladder["game"], ladder["config"], folder)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(ladder, indent=1) + "\n")
    return path

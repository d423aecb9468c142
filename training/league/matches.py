"""Playing and scoring evaluation matches: schedules with rotated seats, games played in
parallel through :func:`agents.play_game`, outcomes scored by :func:`agents.scoring.score_teams`,
per-agent statistics with Wilson intervals and Bradley–Terry ratings.

The documentation is the package's (:mod:`training.league`); tables, plots and files are in
:mod:`training.league.output`.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import json
import pathlib
import time
from collections import Counter
from dataclasses import dataclass, field, replace
from typing import Any, Sequence

import agents
import envs
from agents.pool import map_unordered
from agents.records import Record, Recorder
from agents.runner import TRUNCATED
from agents.scoring import score_teams
from envs.core.game import Game
from envs.provenance import provenance
from agents.stats import Z95, bootstrap_elo_interval, bradley_terry, pairwise_counts, pairwise_table, wilson_interval

#: Keywords of the environment, not of the game's rules.
ENV_KEYWORDS = ("max_cycles", "render_mode")
#: The league Elo interval: bootstrap resamples of the games, and the generator's seed.
ELO_RESAMPLES = 200
ELO_BOOTSTRAP_SEED = 0
ELO_INTERVAL_METHOD = (f"95% percentile bootstrap over games ({ELO_RESAMPLES} resamples within each lineup, "
                       f"seed {ELO_BOOTSTRAP_SEED})")
#: Seconds past a time budget that the stop reason lets pass without comment.
OVERRUN_S = 2.0
#: What a game cut by the move limit (``max_cycles``) means for the scores (:func:`end_reason_texts`).
TRUNCATED_TEXT = "the move limit, max_cycles, was reached before the rules ended the game: nobody wins"


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
    teams: tuple[str, ...]  # agent id of each team; seat s plays for team game.team_of(s)
    cycle: int = 0  # rotation cycle: the games of one cycle cover every ordering once
    record: bool = False  # also return the game's record (agents.records), as a dict
    timed: bool = False  # also return each seat's CPU seconds and decisions (the ladder's move times)


def table_game(game_name: str, config: dict[str, Any]) -> Game:
    """The configured game (environment keywords such as ``max_cycles`` left out); cached."""
    return _table_game(game_name, json.dumps(config, sort_keys=True))


@functools.lru_cache(maxsize=64)
def _table_game(game_name: str, config_json: str) -> Game:
    config = json.loads(config_json)
    engine_config = {k: v for k, v in config.items() if k not in ENV_KEYWORDS}
    return envs.make_game(game_name, **engine_config)


def table_facts(game_name: str, config: dict[str, Any]) -> tuple[int, int]:
    """``(num_players, num_teams)`` of a configured game (seat ``s`` plays for ``game.team_of(s)``)."""
    game = table_game(game_name, config)
    return game.num_players, game.num_teams


def end_reason_texts(game: Game, reasons: Sequence[str]) -> dict[str, str]:
    """What each end reason of a report means, in words: the game's ``end_texts`` filled from its
    config (as the front ends say it), the move limit for ``"truncated"``; a reason the game does
    not explain is left as it is."""
    texts = {}
    for reason in reasons:
        if reason == TRUNCATED:
            texts[reason] = TRUNCATED_TEXT
        elif reason in game.end_texts:
            texts[reason] = game.end_texts[reason].format(**game.config)
        else:
            texts[reason] = reason
    return texts


def seat_agents(teams: Sequence[str], game: Game) -> list[str]:
    """Agent id of every seat: seat ``s`` is played by the agent of team ``game.team_of(s)``."""
    return [teams[game.team_of(s)] for s in range(game.num_players)]


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
    games: int | Sequence[int],
    seed: int = 0,
) -> tuple[list[Task], list[int]]:
    """Tasks for ``games`` games of each lineup (one count for all, or one per lineup), rounded up to
    whole rotation cycles."""
    tasks: list[Task] = []
    counts: list[int] = []
    per_lineup = [games] * len(lineups) if isinstance(games, int) else list(games)
    if len(per_lineup) != len(lineups):
        raise ValueError(f"{len(per_lineup)} game counts for {len(lineups)} lineups")
    for li, (lineup, wanted) in enumerate(zip(lineups, per_lineup)):
        perms = orderings(lineup)
        n = -(-wanted // len(perms)) * len(perms)
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
    game = table_game(task.game, task.config)
    ids = seat_agents(task.teams, game)
    seats = [agents.make(agent_id, seed=task.deal_seed * 1000 + s) for s, agent_id in enumerate(ids)]
    clocks = [_time_decisions(seat) for seat in seats] if task.timed else []
    hooks = []
    if task.record:
        meta = {"source": "evaluate", "lineup": task.lineup_index, "game_index": task.game_index,
                "teams": list(task.teams)}
        hooks.append(Recorder(ids, meta=meta))
    record = agents.play_game(task.game, seats, seed=task.deal_seed, config=task.config, hooks=hooks)
    outcome = {
        "lineup": task.lineup_index,
        "index": task.game_index,
        "seed": task.deal_seed,
        "teams": list(task.teams),
        "team_returns": game.team_returns(record.returns),
        "length": record.length,
        "truncated": record.truncated,
        "end_reason": record.end_reason,
    }
    if task.record:
        outcome["record"] = hooks[0].record.to_dict()
    if task.timed:
        outcome["cpu_s_by_seat"] = [round(clock[0], 6) for clock in clocks]
        outcome["moves_by_seat"] = [clock[1] for clock in clocks]
    return outcome


def _time_decisions(agent: agents.Agent) -> list:
    """Wrap ``agent.act`` so that every call adds its CPU seconds (this process's clock) and one
    decision to the returned ``[seconds, decisions]``."""
    clock = [0.0, 0]
    act = agent.act

    def timed_act(observation, view):
        start = time.process_time()
        action = act(observation, view)
        clock[0] += time.process_time() - start
        clock[1] += 1
        return action

    agent.act = timed_act
    return clock


def record_file(game_name: str, result: dict[str, Any]) -> str:
    """The file name of one evaluated game's record: ``<game>-lineup<L>-game<G>.json``."""
    return f"{game_name}-lineup{result['lineup']}-game{result['index']:04d}.json"


def write_records(game_name: str, results: Sequence[dict], folder: str | pathlib.Path) -> list[pathlib.Path]:
    """Write the record each result carries into ``folder``; the result keeps only the file name."""
    folder = pathlib.Path(folder)
    paths = []
    for result in results:
        data = result.pop("record")
        path = Record.from_dict(data).save(folder / record_file(game_name, result))
        result["record"] = path.name
        paths.append(path)
    return paths


def play_all(
    tasks: Sequence[Task],
    workers: int | None = 1,
    progress: bool = True,
    desc: str = "games",
    budget_s: float | None = None,
    start_method: str | None = None,
    min_cycles: int = 0,
    min_games: int = 0,
    ray_address: str | None = None,
) -> list[dict]:
    """Play the tasks (through :func:`agents.pool.map_unordered`: in a process pool when ``workers >
    1``, on the Ray cluster at ``ray_address`` when given); results sorted by lineup and game, the
    same wherever they were played.

    With ``budget_s``, no new game starts after that many seconds once every lineup has played its
    first ``min_cycles`` rotation cycles and at least ``min_games`` games (rounded up to whole
    rotation cycles; so a quick report is never empty, or too small to mean something); then every lineup keeps
    the same number of games made of whole rotation cycles (:func:`equal_cut`), so each agent still
    plays each side equally often and lineups stay comparable. ``start_method``
    (``fork``, ``spawn``, ``forkserver``; default: the platform's) picks how local workers start; under
    ``spawn``, and on a Ray cluster, a worker only knows the agents that register themselves when
    ``agents`` is imported.
    """
    from agents.progress import progress_bar

    deadline = None if budget_s is None else time.perf_counter() + budget_s
    # the floor (the first min_cycles rotation cycles, and whole cycles up to min_games games) of
    # every lineup is played whatever the budget
    cycle_size = Counter(t.lineup_index for t in tasks if t.cycle == 0)
    floor = {li: max(min_cycles, -(-min_games // n)) for li, n in cycle_size.items()}
    owed = {(t.lineup_index, t.game_index) for t in tasks if t.cycle < floor[t.lineup_index]}
    results: list[dict] = []

    def out_of_time() -> bool:
        return deadline is not None and not owed and time.perf_counter() > deadline

    parallel = ray_address is not None or (workers or 1) > 1
    chunk = 1 if deadline is not None or not parallel else max(1, min(16, len(tasks) // ((workers or 8) * 8)))
    bar = progress_bar(total=len(tasks), desc=desc, unit="game", disable=not progress, dynamic_ncols=True)
    try:
        # Checked before each game starts in this process; between results with a pool, whose
        # workers are stopped when the loop leaves (closing the iterator).
        with contextlib.closing(map_unordered(play_task, tasks, workers, ray_address, start_method, chunk)) as played:
            if not out_of_time():
                for _, outcome in played:
                    results.append(outcome)
                    owed.discard((outcome["lineup"], outcome["index"]))
                    bar.update()
                    if out_of_time():
                        break
    finally:
        bar.close()
    if len(results) < len(tasks):
        results = equal_cut(tasks, results)
    results.sort(key=lambda r: (r["lineup"], r["index"]))
    return results


def equal_cut(tasks: Sequence[Task], results: list[dict]) -> list[dict]:
    """After a time budget: keep, for every lineup, the same number of games made of whole rotation
    cycles (the fewest that any lineup completed), so lineups stay comparable."""
    cycle_of = {(t.lineup_index, t.game_index): (t.lineup_index, t.cycle) for t in tasks}
    cycle_size = Counter(cycle_of.values())
    done = Counter(cycle_of[(r["lineup"], r["index"])] for r in results)
    whole = [r for r in results if done[cycle_of[(r["lineup"], r["index"])]] == cycle_size[cycle_of[(r["lineup"], r["index"])]]]
    lineups = sorted({t.lineup_index for t in tasks})
    played = {li: sum(1 for r in whole if r["lineup"] == li) for li in lineups}
    target = min(played.values(), default=0)
    size = {li: max(n for (l2, _), n in cycle_size.items() if l2 == li) for li in lineups}
    keep = {li: target // size[li] * size[li] for li in lineups}
    whole.sort(key=lambda r: (r["lineup"], r["index"]))
    out, taken = [], Counter()
    for r in whole:
        if taken[r["lineup"]] < keep[r["lineup"]]:
            out.append(r)
            taken[r["lineup"]] += 1
    return out


# ----------------------------------------------------------------------------------------------
# Scoring


def pairwise_outcomes(result: dict[str, Any]) -> list[tuple[str, str, float]]:
    """``(a, b, score_of_a)`` for each pair of teams played by different agents in one game.

    Two teams: the winner scores 1, a draw 0.5 each. More teams: the higher return scores 1, equal
    returns 0.5 each; a truncated game is 0.5 for every pair.
    """
    teams, returns = result["teams"], result["team_returns"]
    winners, _ = score_teams(returns, decided=not result["truncated"])
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
    #: sum over its games of (its teams / all teams): the fair share is its mean
    share_sum: float = 0.0
    #: per team side (side k: team k, player_k's team): games the agent played from it, and how many it won there
    side_games: list[int] = field(default_factory=list)
    side_wins: list[int] = field(default_factory=list)

    def add(self, won: bool, draw: bool, rank: float, length: int, share: float) -> None:
        """One game: won, drawn (nobody won) or lost, its rank, length and ``share`` = the agent's
        teams / all teams in that game (the win rate it would have among equals)."""
        self.games += 1
        self.wins += won
        self.draws += draw
        self.losses += not won and not draw
        self.rank_sum += rank
        self.length_sum += length
        self.share_sum += share

    @classmethod
    def at_table(cls, agent: str, num_teams: int) -> AgentLine:
        """An empty line with one by-side count per team side of the table."""
        return cls(agent, side_games=[0] * num_teams, side_wins=[0] * num_teams)

    def add_side(self, side: int, won: bool) -> None:
        """One game played from team side ``side``; an agent holding several sides of a game (its
        own team mates in a lineup such as ``A vs H vs H``) counts that game once for each."""
        self.side_games[side] += 1
        self.side_wins[side] += won

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
            "fair_share": self.share_sum / g,
            "mean_rank": self.rank_sum / g,
            "mean_length": self.length_sum / g,
            **side_summary(self.side_games, self.side_wins),
        }


def side_summary(games: Sequence[int], wins: Sequence[int]) -> dict[str, list]:
    """The report's by-side fields from games and wins per team side (side k: team k, player_k's team); the win
    rate of a side never played is None."""
    return {"games_by_side": list(games), "wins_by_side": list(wins),
            "win_rate_by_side": [w / n if n else None for w, n in zip(wins, games)]}


def league_statistics(results: Sequence[dict], lineups: Sequence[Sequence[str]], num_teams: int) -> dict[str, Any]:
    """Per-lineup and per-agent statistics plus the league ratings."""
    per_lineup = []
    overall: dict[str, AgentLine] = {}
    pairs: list[tuple[str, str, float]] = []
    game_pairs: list[list[tuple[str, str, float]]] = []  # per game, for the bootstrap
    game_lineups: list[int] = []
    for li, lineup in enumerate(lineups):
        lines = {a: AgentLine.at_table(a, num_teams) for a in dict.fromkeys(lineup)}
        lengths, truncations = [], 0
        side_wins = [0] * num_teams
        for res in (r for r in results if r["lineup"] == li):
            winners, ranks = score_teams(res["team_returns"], decided=not res["truncated"])
            for t in winners:
                side_wins[t] += 1
            nobody = not winners
            for agent, line in lines.items():
                sides = [t for t, a in enumerate(res["teams"]) if a == agent]
                won = any(t in winners for t in sides)
                rank = sum(ranks[t] for t in sides) / len(sides)
                share = len(sides) / len(res["teams"])
                line.add(won, nobody, rank, res["length"], share)
                total = overall.setdefault(agent, AgentLine.at_table(agent, num_teams))
                total.add(won, nobody, rank, res["length"], share)
                for t in sides:
                    line.add_side(t, t in winners)
                    total.add_side(t, t in winners)
            lengths.append(res["length"])
            truncations += res["truncated"]
            game_pairs.append(pairwise_outcomes(res))
            game_lineups.append(li)
            pairs.extend(game_pairs[-1])
        per_lineup.append(
            {
                "teams": list(lineup),
                "games": len(lengths),
                "truncated": truncations,
                "mean_length": sum(lengths) / max(1, len(lengths)),
                # How often each team side (team 0 = seat 0's team) won,
                # whoever played it: the table's seat advantage when a lineup is self-play.
                "side_win_rates": [w / max(1, len(lengths)) for w in side_wins],
                "agents": [line.summary() for line in lines.values()],
            }
        )
    names = list(overall)
    rated = len(names) >= 2
    league = {
        "method": "Bradley-Terry MLE (MM iteration) on pairwise team comparisons, Elo scale, mean 1500, "
        "one virtual draw per pair",
        "elo": bradley_terry(names, pairs) if rated else {n: 1500.0 for n in names},
        "elo_ci95": (bootstrap_elo_interval(names, game_pairs, game_lineups, ELO_RESAMPLES, ELO_BOOTSTRAP_SEED)
                     if rated else {n: [None, None] for n in names}),
        "elo_interval": f"{ELO_INTERVAL_METHOD}; null: open-ended (an agent that never lost a comparison has no "
        "finite upper bound, one that never scored no finite lower bound)",
        "pairwise_score": pairwise_table(names, pairs),
        "pairwise_comparisons": pairwise_counts(names, pairs),
        "pairwise_games": games_together(names, game_pairs),
        "comparisons": len(pairs),
    }
    return {
        "lineups": per_lineup,
        "agents": {a: line.summary() for a, line in overall.items()},
        "league": league,
    }


def games_together(names: Sequence[str], game_pairs: Sequence[Sequence[tuple[str, str, float]]]) -> dict[str, dict[str, int]]:
    """``counts[a][b]``: how many games ``a`` and ``b`` played against each other (a game of one
    agent against a field of five others counts once, not once per comparison)."""
    counts: dict[str, dict[str, int]] = {a: {} for a in names}
    for pairs in game_pairs:
        for a, b in {(a, b) for a, b, _ in pairs} | {(b, a) for a, b, _ in pairs}:
            counts[a][b] = counts[a].get(b, 0) + 1
    return counts


# ----------------------------------------------------------------------------------------------
# The evaluation itself


def floor_text(floors: Sequence[int]) -> str:
    """The part of a stop reason that says how many games of each lineup a time budget never cuts
    ("" for none)."""
    if not any(floors):
        return ""
    lo, hi = min(floors), max(floors)
    games = f"{lo}" if lo == hi else f"{lo} to {hi}"
    return f"every lineup plays its first {games} games (whole seat rotations) whatever the budget, "


def evaluate(
    game_name: str,
    lineups: Sequence[Sequence[str]],
    games: int | Sequence[int],
    config: dict[str, Any] | None = None,
    seed: int = 0,
    workers: int | None = 1,
    progress: bool = True,
    budget_s: float | None = None,
    start_method: str | None = None,
    records: str | pathlib.Path | None = None,
    min_cycles: int = 0,
    min_games: int = 0,
    ray_address: str | None = None,
    timed: bool = False,
) -> dict[str, Any]:
    """Play every lineup ``games`` times (one count for all, or one per lineup; rounded up to whole
    rotations) and return the report.

    ``budget_s`` stops starting new games after that many seconds (whole rotation cycles kept), but
    not before every lineup has played ``min_cycles`` whole rotation cycles and at least
    ``min_games`` games (rounded up to whole rotation cycles).
    ``records`` names a folder where every game kept in the report is written as a JSON record
    (:func:`record_file` names them; each result's ``record`` holds its file name). ``ray_address``
    plays the games on that Ray cluster (:mod:`agents.pool`), with the same results as here.
    ``timed`` adds each seat's CPU seconds and decisions to every game's outcome (``cpu_s_by_seat``,
    ``moves_by_seat``): the only part of a report that differs between two runs.
    """
    config = dict(config or {})
    players, num_teams = table_facts(game_name, config)
    for lineup in lineups:
        if len(lineup) != num_teams:
            raise ValueError(
                f"{game_name} with config {config} has {num_teams} teams; lineup {list(lineup)} "
                f"names {len(lineup)}"
            )
    tasks, scheduled = schedule(game_name, config, lineups, games, seed)
    if records is not None or timed:
        tasks = [replace(task, record=records is not None, timed=timed) for task in tasks]
    start = time.perf_counter()
    results = play_all(tasks, workers, progress, game_name, budget_s, start_method, min_cycles, min_games,
                       ray_address)
    elapsed = time.perf_counter() - start
    if records is not None:  # only the games kept in the report (a time budget may cut some)
        write_records(game_name, results, records)
    counts = [sum(1 for r in results if r["lineup"] == li) for li in range(len(lineups))]
    sizes = [len(orderings(lineup)) for lineup in lineups]
    floors = [min(n, max(min_cycles, -(-min_games // size)) * size) for n, size in zip(scheduled, sizes)]
    if counts == scheduled:
        stop = "every scheduled game was played"
    elif not any(counts):
        stop = (f"the time budget of {budget_s:g} s ran out before any lineup finished a rotation cycle "
                f"(0 of {sum(scheduled)} scheduled games kept); give a larger budget or fewer agents")
    else:
        stop = (f"the time budget of {budget_s:g} s ran out after {sum(counts)} of {sum(scheduled)} scheduled "
                f"games; every lineup was cut to the same number of whole seat rotations")
    if budget_s is not None and elapsed > budget_s + OVERRUN_S:
        stop += (f" (the games took {elapsed:.0f} s, {elapsed - budget_s:.0f} s past the budget: "
                 + floor_text(floors) + "and a game started before the deadline is played to its end)")
    end_reasons = dict(Counter(r["end_reason"] for r in results))
    report = {
        "provenance": provenance(game_name),
        "game": game_name,
        "config": config,
        "num_players": players,
        "num_teams": num_teams,
        "seed": seed,
        "games_requested": games,
        "games_per_lineup": counts,
        "games_scheduled_per_lineup": scheduled,
        "stop_reason": stop,
        "end_reasons": end_reasons,
        "end_reason_texts": end_reason_texts(table_game(game_name, config), list(end_reasons)),
        "budget_s": budget_s,
        "min_games": min_games,
        "min_cycles": min_cycles,
        "records": None if records is None else str(records),
        "workers": workers,
        "ray_address": ray_address,
        "seconds": round(elapsed, 3),
        "interval": f"Wilson score, z={Z95:.3f} (95%)",
        **league_statistics(results, lineups, num_teams),
        "games": results,
    }
    return report

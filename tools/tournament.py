"""Wizard Arena tournament: register bots by name and agent id, play seeded games, print the boards.

Examples::

    python -m tools.tournament                                  # 6 random bots, one game
    python -m tools.tournament -H 5 --games 50 --seed 1
    python -m tools.tournament --bot ann=wizard_arena_v0/heuristic-v1 \\
        --bot bob=random-v0 --bot cy --games 20 --map-image final.png

Each ``--bot NAME=AGENT_ID`` registers one bot (``NAME`` alone means the random agent; a short id
such as ``heuristic-v1`` means ``wizard_arena_v0/heuristic-v1``); random bots named ``bot0 …`` fill
the field up to ``--num-bots`` (default 6 when no ``--bot`` is given). Seats rotate (``--seating
rotate``, the default): games come in rounds of one game per bot; each round the bots' order is
shuffled once (seeded) and then turned one seat per game, so over a round every bot sits in every
seat once and a bot's standing does not depend on where it sat. ``--seating shuffle`` shuffles the
seats of every game instead (seeded). The column ``map`` gives the letter a bot wears on the map in
that game (upper case: leads its party or is solo; lower case: follows; ``+``: fallen).
``--tie-break`` sets the game's ``alliance_tie_break`` (who leads two solos equal in strength and
score; ``envs/wizard_arena/RULES.md``).

The final scoreboard (place with trophies for the top three, name, map letter, alive/dead, score,
strength, HP, party) is printed for a single game, or for every game with ``--boards``. Bots with
equal score and strength share a place, shown as ``=2`` (a tie for second). Across several games a
summary table follows (mean rank, wins, survival rate, mean score, mean reward), then the results by
seat (games, first places with a 95% Wilson interval, mean rank: how much sitting there is worth)
and how the games ended: by the rules, by the no-progress rule, or cut at the ``--max-cycles`` cap. A win is first
place, shared when several bots tie for it; a game in which every bot ties is nobody's win (scored
by :func:`agents.scoring.score_teams`, as evaluation and training score games).

``--records DIR`` writes every game as a JSON game record (``DIR/wizard_arena_v0-seed<S>.json``,
:mod:`agents.records`; the bots' names are in its ``meta``); ``python -m play replay FILE --gif
game.gif`` replays one exactly.

``--workers N`` plays the games in N local processes and ``--ray-address ADDRESS`` on a Ray cluster
(:mod:`agents.pool`); every game is seeded by its own number, so the tables are the same however
the games were played.
"""

from __future__ import annotations

import argparse
import random
import sys
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Sequence

GAME = "wizard_arena_v0"
TROPHIES = {1: "🥇", 2: "🥈", 3: "🥉"}
#: game keyword -> the option that sets it
OPTION_OF = {
    "num_bots": "--num-bots (or the number of --bot entries)", "health": "-H/--health", "map_size": "--map-size",
    "terrain_density": "--terrain-density", "initial_strength": "--initial-strength",
    "gary_strength": "--gary-strength", "gary_roams": "--gary-roams", "max_cycles": "--max-cycles",
    "alliance_tie_break": "--tie-break",
}
END_TEXT = {"rules": "ended by the rules", "no-progress": "ended by the no-progress rule",
            "truncated": "cut at the cycle cap"}


@dataclass
class Entrant:
    name: str
    agent_id: str
    ranks: list[float] = field(default_factory=list)
    rewards: list[float] = field(default_factory=list)
    scores: list[int] = field(default_factory=list)
    survived: int = 0
    wins: int = 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m tools.tournament", description=__doc__.split("\n")[0],
                                epilog="Run with --help for this list; the module documentation has the details.")
    p.add_argument("--bot", action="append", default=[], metavar="NAME=AGENT_ID",
                   help=f"register a bot; AGENT_ID is a {GAME} agent id or short id (default agent: random-v0); "
                   "repeat for each bot (default: none)")
    p.add_argument("--num-bots", type=int, default=None,
                   help="fill the field up to this many bots (2-16) with random ones (default: 6 without --bot, "
                   "else just the --bot entries)")
    p.add_argument("-H", "--health", type=int, default=10,
                   help="starting HP of every bot, 0 = health off (default: %(default)s)")
    p.add_argument("--games", "-n", type=int, default=1, help="number of games (default: %(default)s)")
    p.add_argument("--seed", type=int, default=0, help="seed of the first game; game k uses seed + k (default: %(default)s)")
    p.add_argument("--map-size", type=int, default=16, help="side of the square map in cells (default: %(default)s)")
    p.add_argument("--terrain-density", type=float, default=0.15,
                   help="share of mountain and forest cells (default: %(default)s)")
    p.add_argument("--initial-strength", type=float, default=1.0, help="starting strength of every bot (default: %(default)s)")
    p.add_argument("--gary-strength", type=float, default=3.0, help="Gary's strength (default: %(default)s)")
    p.add_argument("--gary-roams", action="store_true", help="Gary takes a random step each round (default: off)")
    p.add_argument("--tie-break", default="lower-seat",
                   help="who leads two solos equal in strength and score: lower-seat, higher-seat, random, "
                   "more-hp or mover (default: %(default)s)")
    p.add_argument("--seating", choices=("rotate", "shuffle"), default="rotate",
                   help="rotate: rounds in which every bot sits in every seat once; shuffle: seats shuffled "
                   "every game (default: %(default)s)")
    p.add_argument("--max-cycles", type=int, default=None,
                   help="truncation cap in cycles of one action per bot (default: the game's own cap)")
    p.add_argument("--boards", action="store_true",
                   help="print every game's scoreboard, not only a single game's (default: off)")
    p.add_argument("--plain", action="store_true", help="plain text tables instead of rich (default: off)")
    p.add_argument("--no-progress", action="store_true", help="hide the progress bar (default: shown)")
    p.add_argument("--map-image", default=None, metavar="PATH",
                   help="save a picture of the last game's final map, with the bots' names (default: none)")
    p.add_argument("--records", default=None, metavar="DIR",
                   help="write every game as a JSON record into DIR, replayable with python -m play replay "
                   "(default: none)")
    p.add_argument("--workers", type=int, default=None,
                   help="worker processes playing the games (default: 1, this process; with --ray-address, "
                   "one per CPU of the cluster)")
    p.add_argument("--ray-address", default=None, metavar="ADDRESS",
                   help="play the games on this Ray cluster ('auto', HOST:6379 or ray://HOST:10001; needs the "
                   "rllib extra and this package on every node), with the same results (default: local)")
    return p


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    return build_parser().parse_args(argv)


def fail(message: str) -> SystemExit:
    """A one-line error for the user (no traceback)."""
    return SystemExit(f"error: {message}")


def resolve_agent(agent_id: str) -> str:
    """A full agent id of this game, or a one-line error naming what is wrong."""

    from agents.registry import resolve

    try:
        return resolve(GAME, agent_id)
    except ValueError as exc:
        raise fail(str(exc)) from None


def make_entrants(args: argparse.Namespace) -> list[Entrant]:
    entrants = []
    for spec in args.bot:
        name, _, agent_id = spec.partition("=")
        entrants.append(Entrant(name.strip(), resolve_agent((agent_id or "random-v0").strip())))
    if args.num_bots is not None and args.num_bots < len(entrants):
        raise fail(f"--num-bots {args.num_bots} is fewer than the {len(entrants)} bots given with --bot")
    total = args.num_bots if args.num_bots is not None else (len(entrants) or 6)
    k = 0
    while len(entrants) < total:
        name = f"bot{k}"
        k += 1
        if all(e.name != name for e in entrants):
            entrants.append(Entrant(name, f"{GAME}/random-v0"))
    names = [e.name for e in entrants]
    if len(entrants) < 2:
        raise fail(f"a tournament needs at least 2 bots, got {names}")
    if len(set(names)) != len(names) or not all(names):
        raise fail(f"bot names must be unique and non-empty, got {names}")
    return entrants


def game_config(args: argparse.Namespace, num_bots: int) -> dict[str, Any]:
    return {
        "num_bots": num_bots, "health": args.health, "map_size": args.map_size,
        "terrain_density": args.terrain_density, "initial_strength": args.initial_strength,
        "gary_strength": args.gary_strength, "gary_roams": args.gary_roams,
        "alliance_tie_break": args.tie_break,
    }


def seating(n: int, game_index: int, first_seed: int, how: str) -> list[int]:
    """Seat -> entrant index for game ``game_index`` (0-based) of a tournament started at ``first_seed``.

    ``rotate``: round ``r`` (games ``r*n .. r*n+n-1``) shuffles the entrants once (seeded by the first
    seed and the round), then game ``t`` of the round turns that order by ``t`` seats, so every entrant
    sits in every seat once per round. ``shuffle``: every game's seats shuffled by its own seed."""
    if how == "shuffle":
        order = list(range(n))
        random.Random(first_seed + game_index).shuffle(order)
        return order
    round_index, turn = divmod(game_index, n)
    base = list(range(n))
    random.Random(first_seed * 100_003 + round_index).shuffle(base)
    return [base[(seat + turn) % n] for seat in range(n)]


def check_settings(args: argparse.Namespace, config: dict[str, Any]) -> None:
    """Every bad setting becomes a one-line error naming it and what is allowed."""
    import envs
    from envs.core import ConfigError

    if args.games < 1:
        raise fail(f"--games must be at least 1, got {args.games}")
    from agents.pool import check_pool_options

    try:
        check_pool_options(args.workers, args.ray_address)
    except (ValueError, ImportError) as exc:
        raise fail(str(exc)) from None
    try:
        envs.make(GAME, raw=True, max_cycles=args.max_cycles, **config)
    except ConfigError as exc:  # the game names its keyword; say which option set it
        import re

        match = re.search(r": (\w+)=", str(exc))
        option = OPTION_OF.get(match.group(1)) if match else None
        raise fail(f"{option}: {exc}" if option else str(exc)) from None


def play_one(entrants: list[Entrant], config: dict[str, Any], seed: int, max_cycles: int | None,
             record: bool = False, order: list[int] | None = None):
    """Play one game, seat ``s`` taken by entrant ``order[s]`` (default: seats shuffled by ``seed``);
    returns (runner, result, seat -> entrant index, the game's record as a dict or None).

    With ``record``, the game's record (:mod:`agents.records`) is made, as a dict.
    """
    import agents
    from agents.records import Recorder
    from agents.runner import Runner

    if order is None:
        order = list(range(len(entrants)))
        random.Random(seed).shuffle(order)
    seats = [agents.make(entrants[who].agent_id, seed=seed * 100 + seat) for seat, who in enumerate(order)]
    hooks = []
    if record:
        meta = {"source": "tournament", "bots": [entrants[who].name for who in order]}
        hooks.append(Recorder([entrants[who].agent_id for who in order], meta=meta))
    runner = Runner(GAME, seats, seed=seed, config=dict(config, max_cycles=max_cycles), hooks=hooks)
    result = runner.run()
    return runner, result, order, (hooks[0].record.to_dict() if record else None)


@dataclass(frozen=True)
class GameTask:
    """One tournament game, as a worker process or a Ray node receives it."""

    entrants: tuple[tuple[str, str], ...]  # (name, agent id) of every entrant
    config: dict[str, Any]
    seed: int
    max_cycles: int | None
    order: tuple[int, ...]  # seat -> entrant index
    record: bool = False
    final_position: bool = False  # also return the final position (for --map-image)


def play_task(task: GameTask) -> dict[str, Any]:
    """Play one game and return what the tables need, as plain data (the worker side of the pool)."""
    entrants = [Entrant(name, agent_id) for name, agent_id in task.entrants]
    runner, result, order, record = play_one(entrants, task.config, task.seed, task.max_cycles, task.record,
                                              list(task.order))
    state = runner.state
    return {
        "rows": scoreboard_rows(runner.game, state, order, entrants),
        "returns": list(result.returns),
        "end_reason": result.end_reason,
        "round": state.round,
        "record": record,
        "final_position": runner.game.save(state) if task.final_position else None,
    }


def map_letter(state, seat: int) -> str:
    """The letter a seat wears on the map (as the game's renderer draws it)."""
    letter = chr(ord("A") + seat)
    if not state.alive[seat]:
        return "+" + letter
    return letter if state.leader_of[seat] == seat else letter.lower()


def scoreboard_rows(game, state, order: list[int], entrants: list[Entrant]) -> list[dict[str, Any]]:
    rows = []
    for row in game.scoreboard(state):
        seat = row["seat"]
        lead = row["leader"]
        if row["party"]:
            size = len(row["party"])
            leader_name = entrants[order[lead]].name
            party = f"leads ({size})" if lead == seat else f"in {leader_name}'s ({size})"
        else:
            party = "solo"
        rows.append(dict(row, name=entrants[order[seat]].name, who=order[seat], party_text=party,
                         letter=map_letter(state, seat)))
    for row in rows:  # place: 1 + how many did strictly better (equal bots share a place and a trophy)
        row["place"] = 1 + sum(other["rank"] < row["rank"] for other in rows)
        row["tied"] = sum(other["rank"] == row["rank"] for other in rows) > 1
    return rows


def place_text(row: dict[str, Any]) -> str:
    """``"🥇 1"``, ``"=2"`` for a place shared by several bots (``"🥈 =2"`` with its trophy)."""
    place = f"={row['place']}" if row["tied"] else str(row["place"])
    trophy = TROPHIES.get(row["place"], "")
    return f"{trophy} {place}" if trophy else place


def print_table(title: str, headers: list[str], rows: list[list[str]], plain: bool, keep: Sequence[str] = ()) -> None:
    """A table in rich (or plain text); the columns named in ``keep`` are never cut or wrapped."""
    if not plain:
        from rich.console import Console
        from rich.table import Table

        table = Table(title=title)
        for i, h in enumerate(headers):
            if h in keep:
                width = max([len(h)] + [len(r[i]) for r in rows])
                table.add_column(h, no_wrap=True, min_width=width, overflow="ignore")
            else:
                table.add_column(h)
        for r in rows:
            table.add_row(*r)
        # Wide enough for every cell: rich would otherwise crop rows at the terminal's width (80
        # columns when the output is not a terminal) and cut long agent ids.
        wanted = sum(max([len(h)] + [len(r[i]) for r in rows]) + 3 for i, h in enumerate(headers)) + 1
        console = Console()
        if console.width < wanted:
            console = Console(width=wanted)
        console.print(table)
        return
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(headers)]
    print(title)
    print("  ".join(h.ljust(w) for h, w in zip(headers, widths)))
    for r in rows:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths)))


def print_scoreboard(rows: list[dict[str, Any]], title: str, plain: bool) -> None:
    table = []
    for row in rows:
        table.append([
            place_text(row), row["name"], row["letter"], "alive" if row["alive"] else "dead", str(row["score"]),
            f"{row['strength']:.1f}", f"{row['hp']}/{row['max_hp']}", row["party_text"],
        ])
    print_table(title, ["place", "name", "map", "status", "score", "strength", "HP", "party"], table, plain,
                keep=("name", "party"))
    shared = Counter(row["place"] for row in rows if row["tied"])
    for place, n in sorted(shared.items()):
        names = ", ".join(row["name"] for row in rows if row["tied"] and row["place"] == place)
        print(f"  ={place}: {n} bots tie for place {place} (equal score and strength): {names}")


def print_seat_table(by_seat: list[dict[str, Any]], args: argparse.Namespace, n: int) -> None:
    """First places and mean rank by seat, whoever sat there."""
    from agents.stats import wilson_interval

    table = []
    for seat, s in enumerate(by_seat):
        lo, hi = wilson_interval(s["wins"], s["games"])
        table.append([f"player_{seat}", str(s["games"]), str(s["wins"]),
                      f"{s['wins'] / s['games']:.1%} [{lo:.1%}, {hi:.1%}]",
                      f"{sum(s['ranks']) / len(s['ranks']):.2f}"])
    rounds, rest = divmod(args.games, n)
    how = (f"{rounds} round(s): every bot sat in every seat {rounds} time(s)"
           + (f", plus {rest} game(s) of an unfinished round" if rest else "")) if args.seating == "rotate" \
        else "seats shuffled every game"
    print_table(f"By seat over {args.games} games ({how}; tie-break {args.tie_break})",
                ["seat", "games", "first places", "rate [95% Wilson]", "mean rank"], table, args.plain)


def winners(rows: list[dict[str, Any]]) -> set[Any]:
    """Who won one game: everyone sharing first place, or nobody when every bot ties."""
    from agents.scoring import score_teams

    n = len(rows)
    rewards = [1.0 - 2.0 * (row["rank"] - 1.0) / (n - 1) for row in rows]  # the arena's rank rewards
    best, _ = score_teams(rewards)
    return {rows[i]["who"] for i in best}


def map_image(game, state, order: list[int], entrants: list[Entrant]):
    """The final map with a legend naming every bot as the scoreboard does (``C ann``)."""
    import numpy as np

    from envs.core.render import text_to_image

    picture = game.render_rgb(state)
    legend = ["map letters (as in the scoreboard's 'map' column):"]
    for seat, who in enumerate(order):
        legend.append(f"  {map_letter(state, seat):>2}  {entrants[who].name}  ({entrants[who].agent_id})")
    legend.append("  @   Gary")
    text = text_to_image("\n".join(legend), scale=1)
    width = max(picture.shape[1], text.shape[1])

    def pad(image):
        out = np.full((image.shape[0], width, 3), 255, dtype=np.uint8)
        out[:, : image.shape[1]] = image
        return out

    return np.concatenate([pad(picture), pad(text)], axis=0)


def main(argv: Sequence[str] | None = None) -> list[Entrant]:
    args = parse_args(argv)
    entrants = make_entrants(args)
    config = game_config(args, len(entrants))
    check_settings(args, config)
    from agents.progress import progress_bar

    ends: Counter[str] = Counter()
    n = len(entrants)
    by_seat = [{"games": 0, "wins": 0, "ranks": []} for _ in range(n)]
    tasks = [GameTask(tuple((e.name, e.agent_id) for e in entrants), config, args.seed + k, args.max_cycles,
                      tuple(seating(n, k, args.seed, args.seating)), record=args.records is not None,
                      final_position=bool(args.map_image) and k == args.games - 1)
             for k in range(args.games)]
    bar = progress_bar(total=args.games, desc="games", unit="game", disable=args.no_progress, file=sys.stderr)
    arrived: dict[int, dict[str, Any]] = {}
    done = 0
    last = None
    from agents.pool import map_unordered

    # Results are taken in game order, whatever order they arrive in, so every table and board is
    # the same however the games were played.
    for index, outcome in map_unordered(play_task, tasks, args.workers, args.ray_address):
        bar.update()
        arrived[index] = outcome
        while done in arrived:
            k, outcome = done, arrived.pop(done)
            done += 1
            task, rows = tasks[k], outcome["rows"]
            won = winners(rows)
            ends[outcome["end_reason"]] += 1
            for row in rows:
                e = entrants[row["who"]]
                e.ranks.append(row["rank"])
                e.scores.append(row["score"])
                e.rewards.append(outcome["returns"][row["seat"]])
                e.survived += row["alive"]
                e.wins += row["who"] in won
                seat = by_seat[row["seat"]]
                seat["games"] += 1
                seat["wins"] += row["who"] in won
                seat["ranks"].append(row["rank"])
            if outcome["record"] is not None:
                import pathlib

                from agents.records import Record

                Record.from_dict(outcome["record"]).save(pathlib.Path(args.records) / f"{GAME}-seed{task.seed}.json")
            if args.games == 1 or args.boards:
                bar.clear()
                ended = END_TEXT.get(outcome["end_reason"], f"ended ({outcome['end_reason']})")
                print_scoreboard(rows, f"Game {k + 1} (seed {task.seed}, {ended} in round {outcome['round']})",
                                 args.plain)
            if outcome["final_position"] is not None:
                last = (outcome["final_position"], list(task.order))
    bar.close()
    if args.games > 1:
        table = []
        ordered = sorted(entrants, key=lambda e: sum(e.ranks) / len(e.ranks))
        for e in ordered:
            g = len(e.ranks)
            table.append([
                e.name, e.agent_id, f"{sum(e.ranks) / g:.2f}", str(e.wins), f"{e.survived / g:.0%}",
                f"{sum(e.scores) / g:.2f}", f"{sum(e.rewards) / g:+.3f}",
            ])
        print_table(f"Summary over {args.games} games (health {args.health})",
                    ["name", "agent", "mean rank", "wins", "survival", "mean score", "mean reward"], table,
                    args.plain, keep=("name", "agent"))
        print_seat_table(by_seat, args, n)
    print(f"{args.games} game(s): " + ", ".join(
        f"{ends.get(reason, 0)} {text}" for reason, text in END_TEXT.items()
    ) + "".join(f", {n} {reason}" for reason, n in ends.items() if reason not in END_TEXT))
    if args.records:
        print(f"{args.games} game record(s) written to {args.records}")
    if args.map_image and last is not None:
        import envs
        from PIL import Image

        saved, order = last
        game = envs.make_game(GAME, **config)
        Image.fromarray(map_image(game, game.load(saved), order, entrants)).save(args.map_image)
        print(f"final map saved to {args.map_image}")
    return entrants


if __name__ == "__main__":
    import sys

    from agents.errors import run_command

    sys.exit(run_command(main, "python -m tools.tournament"))

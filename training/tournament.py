"""Wizard Arena tournament: register bots by name and agent id, play seeded games, print the boards.

Examples::

    python -m training.tournament                                  # 6 random bots, one game
    python -m training.tournament -H 5 --games 50 --seed 1
    python -m training.tournament --bot ann=wizard_arena_v0/heuristic-v1 \\
        --bot bob=wizard_arena_v0/random-v0 --bot cy --games 20 --map-image final.png

Each ``--bot NAME=AGENT_ID`` registers one bot (``NAME`` alone means the random agent); random bots
named ``bot0 …`` fill the field up to ``--num-bots`` (default 6 when no ``--bot`` is given). Seats
are shuffled every game (seeded), so no bot keeps the first move. The final scoreboard (place with
trophies for the top three, shared rank, name, alive/dead, score, strength, HP, party) is printed
for a single game, or for every game with ``--boards``; across several games a summary table
follows (mean rank, wins, survival rate, mean score, mean reward). A win is first place, shared
when several bots tie for it; a game in which every bot ties is nobody's win.
"""

from __future__ import annotations

import argparse
import random
import sys
from dataclasses import dataclass, field
from typing import Any, Sequence

GAME = "wizard_arena_v0"
TROPHIES = {1: "🥇", 2: "🥈", 3: "🥉"}


@dataclass
class Entrant:
    name: str
    agent_id: str
    ranks: list[float] = field(default_factory=list)
    rewards: list[float] = field(default_factory=list)
    scores: list[int] = field(default_factory=list)
    survived: int = 0
    wins: int = 0


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m training.tournament", description=__doc__.split("\n")[0])
    p.add_argument("--bot", action="append", default=[], metavar="NAME=AGENT_ID",
                   help=f"register a bot (agent id such as {GAME}/random-v0); repeat for each bot")
    p.add_argument("--num-bots", type=int, default=None,
                   help="fill the field up to this many bots with random ones (default: 6 without --bot, "
                        "else just the --bot entries)")
    p.add_argument("-H", "--health", type=int, default=10, help="starting HP of every bot (0 = health off)")
    p.add_argument("--games", "-n", type=int, default=1, help="number of games")
    p.add_argument("--seed", type=int, default=0, help="seed of the first game (game k uses seed + k)")
    p.add_argument("--map-size", type=int, default=16)
    p.add_argument("--terrain-density", type=float, default=0.15)
    p.add_argument("--initial-strength", type=float, default=1.0)
    p.add_argument("--gary-strength", type=float, default=3.0)
    p.add_argument("--gary-roams", action="store_true", help="Gary takes a random step each round")
    p.add_argument("--max-cycles", type=int, default=None, help="truncation cap (cycles of n actions)")
    p.add_argument("--boards", action="store_true", help="print every game's scoreboard, not only a single game's")
    p.add_argument("--plain", action="store_true", help="plain text tables instead of rich")
    p.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    p.add_argument("--map-image", default=None, metavar="PATH", help="save a picture of the last game's final map")
    return p.parse_args(argv)


def make_entrants(args: argparse.Namespace) -> list[Entrant]:
    entrants = []
    for spec in args.bot:
        name, _, agent_id = spec.partition("=")
        entrants.append(Entrant(name.strip(), (agent_id or f"{GAME}/random-v0").strip()))
    total = args.num_bots if args.num_bots is not None else (len(entrants) or 6)
    k = 0
    while len(entrants) < total:
        name = f"bot{k}"
        k += 1
        if all(e.name != name for e in entrants):
            entrants.append(Entrant(name, f"{GAME}/random-v0"))
    names = [e.name for e in entrants]
    if len(entrants) < 2:
        raise SystemExit(f"a tournament needs at least 2 bots, got {names}")
    if len(set(names)) != len(names) or not all(names):
        raise SystemExit(f"bot names must be unique and non-empty, got {names}")
    return entrants


def game_config(args: argparse.Namespace, num_bots: int) -> dict[str, Any]:
    return {
        "num_bots": num_bots, "health": args.health, "map_size": args.map_size,
        "terrain_density": args.terrain_density, "initial_strength": args.initial_strength,
        "gary_strength": args.gary_strength, "gary_roams": args.gary_roams,
    }


def play_one(entrants: list[Entrant], config: dict[str, Any], seed: int, max_cycles: int | None):
    """Play one game with seats shuffled by ``seed``; returns (state, seat -> entrant index)."""
    import agents
    import envs

    order = list(range(len(entrants)))
    random.Random(seed).shuffle(order)
    env = envs.make(GAME, raw=True, max_cycles=max_cycles, **config)
    env.reset(seed=seed)
    seats = []
    for seat, who in enumerate(order):
        bot = agents.make(entrants[who].agent_id, seed=seed * 100 + seat)
        bot.reset(seat, env.unwrapped.game)
        seats.append(bot)
    while env.agents:
        name = env.agent_selection
        if env.terminations[name] or env.truncations[name]:
            env.step(None)
            continue
        seat = int(name.split("_")[1])
        env.step(int(seats[seat].act(env.observe(name), env.player_view(name))))
    return env.unwrapped, order


def scoreboard_rows(env, order: list[int], entrants: list[Entrant]) -> list[dict[str, Any]]:
    game, state = env.game, env.engine_state
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
        rows.append(dict(row, name=entrants[order[seat]].name, who=order[seat], party_text=party))
    for row in rows:  # place: 1 + how many did strictly better (equal bots share a place and a trophy)
        row["place"] = 1 + sum(other["rank"] < row["rank"] for other in rows)
    return rows


def print_table(title: str, headers: list[str], rows: list[list[str]], plain: bool) -> None:
    if not plain:
        try:
            from rich.console import Console
            from rich.table import Table
        except ImportError:  # pragma: no cover - rich is a dependency, but stay usable without it
            plain = True
    if not plain:
        table = Table(title=title)
        for h in headers:
            table.add_column(h)
        for r in rows:
            table.add_row(*r)
        Console().print(table)
        return
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(headers)]
    print(title)
    print("  ".join(h.ljust(w) for h, w in zip(headers, widths)))
    for r in rows:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths)))


def print_scoreboard(rows: list[dict[str, Any]], title: str, plain: bool) -> None:
    table = []
    for row in rows:
        trophy = TROPHIES.get(row["place"], "")
        table.append([
            f"{trophy} {row['place']}" if trophy else str(row["place"]), f"{row['rank']:g}", row["name"],
            "alive" if row["alive"] else "dead", str(row["score"]),
            f"{row['strength']:.1f}", f"{row['hp']}/{row['max_hp']}", row["party_text"],
        ])
    print_table(title, ["place", "rank", "name", "status", "score", "strength", "HP", "party"], table, plain)


def winners(rows: list[dict[str, Any]]) -> set[Any]:
    """Who won one game: everyone sharing first place, or nobody when every bot ties."""
    best = min(r["rank"] for r in rows)
    if all(r["rank"] == best for r in rows):
        return set()
    return {r["who"] for r in rows if r["rank"] == best}


def main(argv: Sequence[str] | None = None) -> list[Entrant]:
    args = parse_args(argv)
    entrants = make_entrants(args)
    config = game_config(args, len(entrants))
    from tqdm import tqdm

    from envs.wizard_arena.rules import rank_rewards

    last = None
    bar = tqdm(range(args.games), desc="games", disable=args.no_progress, file=sys.stderr)
    for k in bar:
        seed = args.seed + k
        env, order = play_one(entrants, config, seed, args.max_cycles)
        state = env.engine_state
        rows = scoreboard_rows(env, order, entrants)
        rewards = rank_rewards(state.score, state.strength)
        won = winners(rows)
        for row in rows:
            e = entrants[row["who"]]
            e.ranks.append(row["rank"])
            e.scores.append(row["score"])
            e.rewards.append(rewards[row["seat"]])
            e.survived += row["alive"]
            e.wins += row["who"] in won
        if args.games == 1 or args.boards:
            ended = "ended" if state.is_terminal() else "truncated"
            bar.clear()
            print_scoreboard(rows, f"Game {k + 1} (seed {seed}, {ended} in round {state.round})", args.plain)
        last = env
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
                    args.plain)
    if args.map_image and last is not None:
        from PIL import Image

        Image.fromarray(last.game.render_rgb(last.engine_state)).save(args.map_image)
        print(f"final map saved to {args.map_image}")
    return entrants


if __name__ == "__main__":
    main()

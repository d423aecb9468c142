"""The table of game properties: one row per game and config family, declared facts and measured play.

    python -m tools.properties                         # every game, writes docs/reference/properties.{md,json}
    python -m tools.properties --games sequence_v0 --random-games 10 --heuristic-games 4 --out /tmp/props

The declared columns come from each ``Game`` (``envs.core.game.Game``): players and teams
(``num_players``, ``num_teams``), ``turn_structure``, ``chance``, information (perfect unless
``hidden_information``), ``reward_structure``, ``zero_sum``, the observation length and the number
of actions. ``tests/test_properties.py`` holds the declarations to the code.

The measured columns come from seeded games played in :func:`agents.play_game` with every seat a
``random-v0`` agent, then with every seat the game's ``heuristic-v1``: the typical length (mean and
median actions per game, and how many games the environment's cycle cap cut) and the mean
branching factor (the mean number of legal actions over every decision of every game). Game ``g``
of a row uses deal seed ``seed + g`` and agents seeded from it, so the table is the same on every
machine; only the time it takes differs.

Writes ``properties.md`` (the page, regenerated whole: do not edit it by hand) and
``properties.json`` (the same numbers, with a provenance block) into ``--out``.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import statistics
import sys
from typing import Any, Sequence

import agents
import envs
from agents.runner import RunnerHooks
from envs.provenance import provenance

#: The agents each row is measured with (short ids; every game registers both).
AGENTS = ("random-v0", "heuristic-v1")
DEFAULT_OUT = pathlib.Path("docs/reference")


def declared_row(game_name: str, family: str, config: dict[str, Any]) -> dict[str, Any]:
    """The declared columns of one game and config family, read from its ``Game``."""
    game = envs.make_game(game_name, **config)
    return {
        "game": game_name,
        "family": family,
        "config": dict(config),
        "players": game.num_players,
        "teams": game.num_teams,
        "seats_per_team": sorted({len(game.team_seats(t)) for t in range(game.num_teams)}),
        "turn_structure": list(game.turn_structure),
        "chance": game.chance,
        "information": "imperfect" if game.hidden_information else "perfect",
        "reward_structure": game.reward_structure,
        "zero_sum": game.zero_sum,
        "observation_size": int(game.observation_shape[0]),
        "actions": int(game.num_actions),
    }


class Branching(RunnerHooks):
    """Counts decisions and the legal actions offered at each (the branching factor's parts)."""

    def __init__(self) -> None:
        self.decisions = 0
        self.legal = 0

    def before_step(self, runner, seat: int, action: int) -> None:
        self.decisions += 1
        self.legal += len(runner.legal_actions())


def measure(game_name: str, config: dict[str, Any], agent: str, games: int, seed: int = 0,
            bar=None) -> dict[str, Any]:
    """Play ``games`` seeded games with every seat ``agent``; length and branching statistics."""
    if games < 1:
        raise ValueError(f"games must be at least 1, got {games}")
    agent_id = f"{game_name}/{agent}"
    players = envs.make_game(game_name, **config).num_players
    lengths, truncated, count = [], 0, Branching()
    for g in range(games):
        deal = seed + g
        seats = [agents.make(agent_id, seed=deal * 1000 + s) for s in range(players)]
        record = agents.play_game(game_name, seats, seed=deal, config=config, hooks=[count])
        lengths.append(record.length)
        truncated += record.truncated
        if bar is not None:
            bar.update()
    return {
        "agent": agent_id,
        "games": games,
        "mean_length": statistics.fmean(lengths),
        "median_length": statistics.median(lengths),
        "truncated": truncated,
        "decisions": count.decisions,
        "mean_branching": count.legal / max(1, count.decisions),
    }


def build(game_names: Sequence[str], random_games: int, heuristic_games: int, seed: int = 0,
          progress: bool = True) -> dict[str, Any]:
    """The whole table: a declared row per game and config family, each with its measurements."""
    counts = {"random-v0": random_games, "heuristic-v1": heuristic_games}
    families = [(name, family, config) for name in game_names
                for family, config in envs.game_class(name).config_families.items()]
    bar = None
    if progress:
        from agents.progress import progress_bar

        bar = progress_bar(total=len(families) * sum(counts.values()), desc="games", unit="game",
                           file=sys.stderr)
    rows = []
    try:
        for name, family, config in families:
            if bar is not None:
                bar.set_postfix_str(f"{name} {family}")
            row = declared_row(name, family, config)
            row["measured"] = {agent: measure(name, config, agent, n, seed, bar) for agent, n in counts.items() if n}
            rows.append(row)
    finally:
        if bar is not None:
            bar.close()
    return {
        "provenance": provenance(game_names),
        "settings": {"random_games": random_games, "heuristic_games": heuristic_games, "seed": seed,
                     "agents": list(AGENTS)},
        "rows": rows,
    }


def _config_text(config: dict[str, Any]) -> str:
    return ", ".join(f"`{k}={json.dumps(v)}`" for k, v in config.items()) or "defaults"


def to_markdown(report: dict[str, Any]) -> str:
    """The page: declared properties, measured play and the reward structures."""
    settings = report["settings"]
    lines = [
        "# Game properties",
        "",
        "<!-- Generated by `python -m tools.properties`; do not edit by hand. -->",
        "",
        "One row per game and config family (`Game.config_families`). The declared columns are the "
        "facts each `Game` declares (`turn_structure`, `chance`, `hidden_information`, `reward_structure`, "
        "`zero_sum`, `num_players`, `num_teams`, the observation and action sizes). The measured columns come from seeded games: "
        f"{settings['random_games']} per row with every seat `random-v0` and {settings['heuristic_games']} "
        f"with every seat `heuristic-v1` (deal seeds from {settings['seed']}), played at each environment's "
        "default cycle cap. Length is actions per game; branching is the mean number of legal actions over "
        "all decisions; truncated counts the games the cap cut, whose length is then the cap's, not a "
        "typical one (random Dojo players almost never reach the Final Exam). "
        "To check these properties yourself, `python -m tools.properties --out FOLDER` plays the same seeded "
        "games and writes this table to `FOLDER/properties.md` (and `properties.json`).",
        "",
        "## Declared",
        "",
        "| game | family | config | players | teams | turn structure | chance | information | zero-sum "
        "| observation | actions |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for row in report["rows"]:
        teams = f"{row['teams']}" + (f" of {row['seats_per_team'][0]}" if row["seats_per_team"] != [1] else "")
        lines.append(
            f"| `{row['game']}` | {row['family']} | {_config_text(row['config'])} | {row['players']} | {teams} "
            f"| {', '.join(row['turn_structure'])} | {'yes' if row['chance'] else 'no'} | {row['information']} "
            f"| {'yes' if row['zero_sum'] else 'no'} | {row['observation_size']} | {row['actions']} |")
    lines += [
        "",
        "## Measured",
        "",
        "| game | family | agents | games | mean length | median length | truncated | mean branching |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for row in report["rows"]:
        for m in row["measured"].values():
            lines.append(
                f"| `{row['game']}` | {row['family']} | `{m['agent'].split('/', 1)[1]}` | {m['games']} "
                f"| {m['mean_length']:.1f} | {m['median_length']:g} | {m['truncated']} | {m['mean_branching']:.2f} |")
    lines += ["", "## Rewards", ""]
    seen = {}
    for row in report["rows"]:
        seen.setdefault(row["game"], row["reward_structure"])
    for game, text in seen.items():
        lines.append(f"- `{game}`: {text}.")
    lines += [
        "",
        "Zero-sum means the seats' returns add up to zero in every game. Three-team Sequence pays +1 to "
        "each seat of the winning team and -1 to every other seat, so it is not zero-sum; two-team "
        "Sequence, Pan's Trial, Il Labirinto del Dojo (-1/(n-1) to each loser) and Wizard Arena (a "
        "ranking reward centred on zero) are.",
        "",
        f"Made by tabletop-rl {report['provenance']['version']} "
        f"(environments: {', '.join(f'{k} v{v}' for k, v in report['provenance']['environments'].items())}).",
        "",
    ]
    return "\n".join(lines)


def write(report: dict[str, Any], out: pathlib.Path) -> list[pathlib.Path]:
    out.mkdir(parents=True, exist_ok=True)
    md, js = out / "properties.md", out / "properties.json"
    md.write_text(to_markdown(report))
    js.write_text(json.dumps(report, indent=1) + "\n")
    return [md, js]


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(prog="python -m tools.properties", description=__doc__.split("\n")[0])
    parser.add_argument("--games", nargs="+", default=list(envs.NAMES), metavar="GAME",
                        help=f"games to tabulate (default: all of {list(envs.NAMES)})")
    parser.add_argument("--random-games", type=int, default=40,
                        help="games per row with random-v0 in every seat (default: %(default)s)")
    parser.add_argument("--heuristic-games", type=int, default=10,
                        help="games per row with heuristic-v1 in every seat (default: %(default)s)")
    parser.add_argument("--seed", type=int, default=0, help="first deal seed (default: %(default)s)")
    parser.add_argument("--out", type=pathlib.Path, default=DEFAULT_OUT,
                        help="folder for properties.md and properties.json (default: %(default)s)")
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bar (default: shown)")
    args = parser.parse_args(argv)
    unknown = sorted(set(args.games) - set(envs.NAMES))
    if unknown:
        parser.error(f"unknown games {unknown}; choose from {list(envs.NAMES)}")
    if args.random_games < 1 or args.heuristic_games < 0:
        parser.error("--random-games must be at least 1 and --heuristic-games at least 0")
    report = build(args.games, args.random_games, args.heuristic_games, args.seed, not args.no_progress)
    paths = write(report, args.out)
    print(to_markdown(report))
    print("wrote " + ", ".join(str(p) for p in paths))
    return report


if __name__ == "__main__":
    import sys

    from agents.errors import run_command

    sys.exit(run_command(main, "python -m tools.properties"))

"""Game-design simulator: play many seeded games of any game and report how its rules behave.

    python -m tools.simulate dojo_v0 --games 200 --config num_players=4 --variants all --out dojo.png
    python -m tools.simulate sequence_v0 --games 300 --agents heuristic --variants "no dead cards"
    python -m tools.simulate pans_trial_v0 --vary damage_threshold=15,25

Plays ``--games`` seeded games per configuration (the same seeds for every configuration) with the
chosen agents (``heuristic`` = the game's ``heuristic-v1``, ``random`` = ``random-v0``, any short or
full agent id, or a comma list with one entry per seat) and reports, for the default configuration
(the game's defaults plus ``--config``) and each variant:

* game length in actions (mean, median, standard deviation, 10th-90th percentile), and the game's
  own counts when it declares some (Dojo: turns, rounds, Final Exam attempts, Kumite, cards);
* how games ended: by the rules, by a no-progress rule, or cut at the ``--max-cycles`` cap;
* win rate by seat and by position in turn order (position 0 = the seat that acted first; the
  others follow in seat order), each with a 95% Wilson interval; the first-player advantage is
  position 0's win rate minus the fair share 1/n;
* for every variant, its change against the default, and a table of win rate by seat for every
  configuration with its seat spread (the best seat's rate minus the worst's): Wizard Arena's
  ``alliance_tie_break`` variants are compared this way.

Variants are the game's declared rule variants (``Game.rule_variants``; Dojo: its ten switches),
chosen with ``--variants all`` or a comma list of their labels, plus any ``--vary KEY=V1,V2``
(one variant per value). A team game's seats win together.

The table goes to stdout (and ``--json`` if given), the plot (game length per configuration and win
rate by turn-order position, with intervals) to ``--out``.

``--workers N`` plays the games in N local processes and ``--ray-address ADDRESS`` on a Ray cluster
(:mod:`agents.pool`); each game is seeded by its number, so the report is the same either way.
"""

from __future__ import annotations

import argparse
import textwrap
import json
import statistics
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Sequence

import agents
import envs
from agents.registry import resolve
from agents.runner import Runner, RunnerHooks
from agents.scoring import score_game
from envs.core import ConfigError
from envs.provenance import image_metadata, provenance
from agents.stats import wilson_interval

AGENT_ALIASES = {"heuristic": "heuristic-v1", "greedy": "heuristic-v1", "random": "random-v0"}


@dataclass
class Args:
    game: str = "dojo_v0"
    games: int = 100
    agents: str = "heuristic"
    seed: int = 0
    config: list[str] = field(default_factory=list)
    variants: str = "none"
    vary: list[str] = field(default_factory=list)
    max_cycles: int | None = None
    out: str = "simulation.png"
    json: str | None = None
    progress: bool = True
    workers: int | None = None
    ray_address: str | None = None


def build_parser() -> argparse.ArgumentParser:
    d = Args()
    p = argparse.ArgumentParser(prog="python -m tools.simulate", description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog="\n\n".join([*__doc__.split("\n\n")[2:], variants_help()]))
    p.add_argument("game", help=f"the game: one of {list(envs.NAMES)}, or its short name (dojo, sequence, ...)")
    p.add_argument("--games", type=int, default=d.games, help="games per configuration (default: %(default)s)")
    p.add_argument("--agents", default=d.agents,
                   help="heuristic, random, an agent id, or a comma list with one per seat (default: %(default)s)")
    p.add_argument("--seed", type=int, default=d.seed,
                   help="first game seed; game i uses seed + i in every configuration (default: %(default)s)")
    p.add_argument("--config", action="append", default=[], metavar="KEY=VALUE",
                   help="a config keyword for every configuration, value read as JSON; repeatable "
                   "(default: the game's defaults)")
    p.add_argument("--variants", default=d.variants,
                   help="'all', 'none' or a comma list of the game's rule variant labels, listed below "
                        "(default: %(default)s)")
    p.add_argument("--vary", action="append", default=[], metavar="KEY=V1,V2",
                   help="one more variant per value of a config keyword; repeatable (default: none)")
    p.add_argument("--max-cycles", type=int, default=d.max_cycles,
                   help="truncation cap in cycles of n actions; capped games have no winner (default: the game's)")
    p.add_argument("--out", default=d.out, help="where the plot goes (default: %(default)s)")
    p.add_argument("--json", default=d.json, metavar="PATH", help="also write the full report as JSON (default: none)")
    p.add_argument("--no-progress", dest="progress", action="store_false", help="hide the progress bar (default: shown)")
    p.add_argument("--workers", type=int, default=d.workers,
                   help="worker processes playing the games (default: 1, this process; with --ray-address, "
                   "one per CPU of the cluster)")
    p.add_argument("--ray-address", default=d.ray_address, metavar="ADDRESS",
                   help="play the games on this Ray cluster ('auto', HOST:6379 or ray://HOST:10001; needs the "
                   "rllib extra and this package on every node), with the same report (default: local)")
    return p


def parse_args(argv: Sequence[str] | None = None) -> Args:
    return Args(**vars(build_parser().parse_args(argv)))


def fail(message: str) -> SystemExit:
    return SystemExit(f"error: {message}")


def parse_value(text: str) -> Any:
    """A config value: JSON (numbers, true/false/null, lists, quoted strings) or a plain string."""
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        low = text.lower()
        return low == "true" if low in ("true", "false") else text


def resolve_game(name: str) -> str:
    if name in envs.NAMES:
        return name
    matches = [n for n in envs.NAMES if n.rsplit("_v", 1)[0] == name]
    if len(matches) == 1:
        return matches[0]
    raise fail(f"unknown game {name!r}; games: {list(envs.NAMES)}")


def spread(values: Sequence[float]) -> dict[str, float]:
    if not values:
        nan = float("nan")
        return {"mean": nan, "median": nan, "std": nan, "p10": nan, "p90": nan}
    ordered = sorted(values)

    def pick(q: float) -> float:
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))]

    return {"mean": statistics.fmean(values), "median": statistics.median(values),
            "std": statistics.pstdev(values), "p10": pick(0.1), "p90": pick(0.9)}


def agent_ids(spec: str, game_name: str, n: int) -> list[str]:
    names = [s.strip() for s in spec.split(",")]
    if len(names) == 1:
        names = names * n
    if len(names) != n:
        raise fail(f"--agents lists {len(names)} agents for {n} seats")
    out = []
    for name in names:
        try:
            out.append(resolve(game_name, AGENT_ALIASES.get(name, name)))
        except ValueError as exc:
            raise fail(str(exc)) from None
    return out


class FirstActor(RunnerHooks):
    """Remembers which seat acted first (position 0 in turn order)."""

    def __init__(self) -> None:
        self.seat: int | None = None

    def on_step(self, runner: Runner, seat: int, action: int) -> None:
        if self.seat is None:
            self.seat = seat


def play_one(game_name: str, config: dict[str, Any], ids: list[str], seed: int) -> dict[str, Any]:
    """One seeded game through the runner; what the report needs from it, as plain data."""
    seats = [agents.make(agent_id, seed=seed * 100 + s) for s, agent_id in enumerate(ids)]
    first = FirstActor()
    runner = Runner(game_name, seats, seed=seed, config=config, hooks=[first])
    record = runner.run()
    game = runner.game
    winners = score_game(game, record).winners
    n = game.num_players
    first_seat = first.seat if first.seat is not None else 0
    return {
        "seed": seed,
        "length": record.length,
        "end_reason": record.end_reason,
        "winning_seats": [s for s in range(n) if game.team_of(s) in winners],
        "first_seat": first_seat,
        "stats": game.play_statistics(runner.state),
    }


def summarise(label: str, config: dict[str, Any], n: int, games: list[dict[str, Any]]) -> dict[str, Any]:
    total = len(games)

    def rates(count: Counter) -> list[dict[str, Any]]:
        return [{"wins": count[i], "rate": count[i] / total if total else float("nan"),
                 "ci95": list(wilson_interval(count[i], total))} for i in range(n)]

    by_seat: Counter[int] = Counter()
    by_position: Counter[int] = Counter()
    for g in games:
        for s in g["winning_seats"]:
            by_seat[s] += 1
            by_position[(s - g["first_seat"]) % n] += 1
    keys = list(dict.fromkeys(k for g in games for k in g["stats"]))  # the order the game gives
    position = rates(by_position)
    return {
        "label": label,
        "config": config,
        "games": total,
        "end_reasons": dict(Counter(g["end_reason"] for g in games)),
        "no_winner": sum(1 for g in games if not g["winning_seats"]),
        # games whose first place several seats share (but not all of them): each of those seats counts a
        # win, so the wins by seat can add up to more than the games that have a winner
        "shared_first": sum(1 for g in games if len(g["winning_seats"]) > 1),
        "length": spread([g["length"] for g in games]),
        "stats": {k: spread([g["stats"][k] for g in games if k in g["stats"]]) for k in keys},
        "win_rate_by_seat": rates(by_seat),
        "seat_spread": max(by_seat[i] for i in range(n)) / total - min(by_seat[i] for i in range(n)) / total
        if total else float("nan"),
        "win_rate_by_position": position,
        "first_player_advantage": position[0]["rate"] - 1.0 / n if total else float("nan"),
    }


def play_task(task: tuple[str, dict[str, Any], list[str], int]) -> dict[str, Any]:
    """:func:`play_one` of a ``(game_name, config, agent ids, seed)`` task (the worker side of the pool)."""
    return play_one(*task)


def run_configs(args: Args, game_name: str, configs: dict[str, dict[str, Any]], bar=None) -> list[dict[str, Any]]:
    """Every configuration's ``args.games`` games (through :mod:`agents.pool`), each summarised."""
    from agents.pool import map_ordered

    tasks, games = [], {}
    for label, config in configs.items():
        env_config = dict(config) if args.max_cycles is None else dict(config, max_cycles=args.max_cycles)
        games[label] = envs.make_game(game_name, **config)
        ids = agent_ids(args.agents, game_name, games[label].num_players)
        tasks += [(game_name, env_config, ids, args.seed + i) for i in range(args.games)]
    played = map_ordered(play_task, tasks, args.workers, args.ray_address,
                         on_result=None if bar is None else lambda _i, _r: bar.update(1))
    return [summarise(label, game.config, game.num_players, played[k * args.games:(k + 1) * args.games])
            for k, (label, game) in enumerate(games.items())]


def declared_variants(game_cls) -> dict[str, dict[str, Any]]:
    """The game's rule variants by label (``Game.rule_variants``; a game that declares none: each
    boolean keyword of its default config flipped)."""
    declared = dict(game_cls.rule_variants)
    if not declared:
        defaults = game_cls().config
        declared = {f"{k}={str(not v).lower()}": {k: not v} for k, v in defaults.items() if isinstance(v, bool)}
    return declared


def variants_help() -> str:
    """The variant labels of every game, for ``--help``."""
    lines = ["rule variant labels for --variants (a comma list; 'all' runs them all):"]
    for name in envs.NAMES:
        labels = ", ".join(repr(label) for label in declared_variants(envs.game_class(name)))
        lines.append(textwrap.fill(f"{name}: {labels or '(none)'}", 100, initial_indent="  ",
                                   subsequent_indent="      "))
    return "\n".join(lines)


def choose_variants(args: Args, game_cls) -> dict[str, dict[str, Any]]:
    declared = declared_variants(game_cls)
    if args.variants == "all":
        chosen = dict(declared)
    elif args.variants in ("none", ""):
        chosen = {}
    else:
        labels = [c.strip() for c in args.variants.split(",")]
        unknown = [c for c in labels if c not in declared]
        if unknown:
            raise fail(f"unknown variant(s) {unknown} of {game_cls.name}; its variants: {list(declared)}")
        chosen = {c: declared[c] for c in labels}
    for item in args.vary:
        key, sep, values = item.partition("=")
        if not sep or not key or not values:
            raise fail(f"--vary takes KEY=V1,V2,..., got {item!r}")
        for value in values.split(","):
            chosen[f"{key}={value}"] = {key: parse_value(value)}
    return chosen


def _ci(w: dict[str, Any]) -> str:
    lo, hi = w["ci95"]
    return f"{w['rate']:.3f} [{lo:.3f}, {hi:.3f}]"


def format_report(game_name: str, base: dict[str, Any], variants: list[dict[str, Any]]) -> str:
    b = base
    n = len(b["win_rate_by_seat"])
    ends = ", ".join(f"{v} {k}" for k, v in sorted(b["end_reasons"].items()))
    lines = [f"== {game_name} {b['label']} ({json.dumps(b['config'], sort_keys=True)}): {b['games']} games; "
             f"ended: {ends}; {b['no_winner']} without a winner"]
    lines.extend(textwrap.wrap(how_counted(b), 100, initial_indent="  ", subsequent_indent="    "))
    s = b["length"]
    lines.append(f"  actions per game: mean {s['mean']:.1f}  median {s['median']:.1f}  sd {s['std']:.1f}  "
                 f"p10-p90 {s['p10']:.0f}-{s['p90']:.0f}")
    for key, s in b["stats"].items():
        lines.append(f"  {key} per game: mean {s['mean']:.2f}  median {s['median']:.1f}  sd {s['std']:.2f}")
    lines.append(f"  win rate by seat (95% Wilson; fair share {1 / n:.3f}):")
    for i, w in enumerate(b["win_rate_by_seat"]):
        lines.append(f"    player_{i}: {_ci(w)}  ({w['wins']} wins)")
    lines.append("  win rate by position in turn order (0 = acted first):")
    for i, w in enumerate(b["win_rate_by_position"]):
        lines.append(f"    position {i}: {_ci(w)}  ({w['wins']} wins)")
    lines.append(f"  first-player advantage: {b['first_player_advantage']:+.3f} over the fair share")
    if variants:
        extra = list(b["stats"])[:3]  # the first counts the game declares
        lines.append("")
        header = f"{'configuration':<28}{'actions':>9}{'vs default':>11}" + "".join(f"{k:>14}" for k in extra)
        header += f"{'capped':>8}{'no-progress':>12}{'first player win':>26}"
        lines.append(header)
        base_len = b["length"]["mean"]
        for v in [b] + variants:
            mean = v["length"]["mean"]
            change = (mean - base_len) / base_len if base_len else float("nan")
            row = f"{v['label']:<28}{mean:>9.1f}{change:>+10.1%} "
            for k in extra:
                value = v["stats"].get(k, {}).get("mean", float("nan"))
                row += f"{value:>14.2f}"
            row += f"{v['end_reasons'].get('truncated', 0):>8d}{v['end_reasons'].get('no-progress', 0):>12d}"
            row += f"{_ci(v['win_rate_by_position'][0]):>26}"
            lines.append(row)
        lines.append("")
        lines.extend(seat_table([b] + variants))
    return "\n".join(lines)


def how_counted(report: dict[str, Any]) -> str:
    """How the win counts below add up: games without a winner, and first places shared by several seats."""
    wins = sum(w["wins"] for w in report["win_rate_by_seat"])
    shared = report.get("shared_first", 0)
    text = (f"how the wins count: a game without a winner (a draw, every seat tied for first, or cut off at "
            f"the move limit) counts a win for no seat ({report['no_winner']} such games); ")
    if shared:
        text += (f"in {shared} game(s) several seats (not all) tied for first, or won as a team, and each of them "
                 f"counts a win, so the wins by seat add up to {wins} over "
                 f"{report['games'] - report['no_winner']} games with a winner")
    else:
        text += f"every other game has one winning seat or team ({wins} wins by seat)"
    return text


def seat_table(configs: list[dict[str, Any]]) -> list[str]:
    """Win rate (first places) by seat for each configuration, in percent with the 95% Wilson interval
    below, and the seat spread (best seat's rate minus the worst's)."""
    n = len(configs[0]["win_rate_by_seat"])
    lines = ["win rate by seat, % (95% Wilson interval below); spread = best seat - worst seat",
             f"{'configuration':<28}" + "".join(f"{f'seat {i}':>10}" for i in range(n)) + f"{'spread':>9}"]
    for v in configs:
        seats = v["win_rate_by_seat"]
        lines.append(f"{v['label']:<28}" + "".join(f"{100 * w['rate']:>10.1f}" for w in seats)
                     + f"{100 * v['seat_spread']:>9.1f}")
        intervals = ["{:.0f}-{:.0f}".format(100 * w["ci95"][0], 100 * w["ci95"][1]) for w in seats]
        lines.append(" " * 28 + "".join(f"{text:>10}" for text in intervals))
    return lines


def plot(game_name: str, base: dict[str, Any], variants: list[dict[str, Any]], path: str) -> None:
    import math

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(13, max(4.0, 0.4 * (1 + len(variants)) + 2)))
    ax = axes[0]
    rows = [base] + variants
    means = [v["length"]["mean"] for v in rows]
    errs = [1.96 * v["length"]["std"] / math.sqrt(max(1, v["games"])) for v in rows]
    ax.barh(range(len(rows)), means, xerr=errs, color=["#555"] + ["#8ab"] * len(variants))
    ax.set_yticks(range(len(rows)), [v["label"] for v in rows])
    ax.invert_yaxis()
    ax.set_xlabel("actions per game (mean, 95% CI)")
    ax.set_title(f"{game_name}: game length")
    ax = axes[1]
    # variants may seat different numbers of positions (--vary num_teams=2,3): each row draws its own
    n = max(len(v["win_rate_by_position"]) for v in rows[:6])
    width = 0.8 / len(rows)
    for k, v in enumerate(rows[:6]):
        rates = [w["rate"] for w in v["win_rate_by_position"]]
        lo = [w["rate"] - w["ci95"][0] for w in v["win_rate_by_position"]]
        hi = [w["ci95"][1] - w["rate"] for w in v["win_rate_by_position"]]
        ax.bar([i + k * width for i in range(len(rates))], rates, width, yerr=[lo, hi], capsize=2, label=v["label"])
    for m in sorted({len(v["win_rate_by_position"]) for v in rows[:6]}):
        ax.axhline(1 / m, color="grey", lw=0.8, ls="--" if m == n else ":", label=f"fair share ({m} positions)")
    ax.set_xticks([i + 0.4 - width / 2 for i in range(n)], [str(i) for i in range(n)])
    ax.set_xlabel("position in turn order (0 = acted first)")
    ax.set_ylabel("win rate (95% Wilson interval)")
    ax.set_title("Win rate by turn-order position")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=90, metadata=image_metadata([game_name]))
    plt.close(fig)


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    args = parse_args(argv)
    game_name = resolve_game(args.game)
    game_cls = envs.game_class(game_name)
    if args.games < 1:
        raise fail(f"--games must be at least 1, got {args.games}")
    from agents.pool import check_pool_options

    try:
        check_pool_options(args.workers, args.ray_address)
    except (ValueError, ImportError) as exc:
        raise fail(str(exc)) from None
    base_config: dict[str, Any] = {}
    for item in args.config:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise fail(f"--config takes KEY=VALUE, got {item!r}")
        base_config[key] = parse_value(value)
    chosen = choose_variants(args, game_cls)
    configs = {"default": base_config, **{label: {**base_config, **extra} for label, extra in chosen.items()}}
    for label, config in configs.items():
        try:
            envs.make(game_name, raw=True, max_cycles=args.max_cycles, **config)
        except ConfigError as exc:
            raise fail(f"{label}: {exc}") from None
    bar = None
    if args.progress:
        from agents.progress import progress_bar

        bar = progress_bar(total=args.games * len(configs), desc="games", unit="game", file=sys.stderr)
    start = time.time()
    results = run_configs(args, game_name, configs, bar)
    if bar is not None:
        bar.close()
    base, variants = results[0], results[1:]
    report = format_report(game_name, base, variants)
    print(report)
    print(f"\n({time.time() - start:.1f}s; agents {args.agents}; plot written to {args.out})")
    plot(game_name, base, variants, args.out)
    result = {"args": vars(args), "game": game_name, "default": base, "variants": variants, "text": report,
              "provenance": provenance(game_name)}
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(result, fh, indent=1)
    return result


if __name__ == "__main__":
    import sys

    from agents.errors import run_command

    sys.exit(run_command(main, "python -m tools.simulate"))

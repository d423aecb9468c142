"""How Wizard Arena games end: by the rules, by the no-progress rule, or cut by the cycle cap.

    python -m benchmarks.arena_endings                       # the six default fields, 100 games each
    python -m benchmarks.arena_endings --games 40 --seed 5000 --fields "6 heuristic" "16 random"
    python -m benchmarks.arena_endings --max-cycles 400 --out results/arena_endings.json --plot endings.png

Every game is played through the one runner (``agents.play_game``) on the default config with the
environment's default ``max_cycles`` unless told otherwise; game k of a field uses seed
``--seed + k``, and its bots are seeded from it. A game "ends by the rules" when the engine
finishes it (one side left, or the no-progress rule), "truncated" when the environment cuts it.
The share ended by the no-progress rule is reported separately, with the median game length in
actions and in rounds, and the longest game against the cap.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import statistics
from dataclasses import asdict, dataclass
from typing import Any

from envs.provenance import image_metadata, provenance

HEURISTIC, RANDOM = "wizard_arena_v0/heuristic-v1", "wizard_arena_v0/random-v0"

#: name: (number of heuristic bots, number of random bots); heuristic bots take the first seats,
#: rotated by the game number so that every seat is played by both kinds.
FIELDS: dict[str, tuple[int, int]] = {
    "6 heuristic": (6, 0),
    "6 random": (0, 6),
    "3+3 mixed": (3, 3),
    "16 heuristic": (16, 0),
    "16 random": (0, 16),
    "8+8 mixed": (8, 8),
}


@dataclass
class FieldResult:
    field: str
    games: int
    first_seed: int
    max_cycles: int | None
    by_rules: int  # ended by the engine (one side left, or no-progress)
    by_no_progress: int
    truncated: int
    median_actions: float
    median_rounds: float
    longest_actions: int
    cap_actions: int  # the environment's cap: max_cycles × bots

    @property
    def share_by_rules(self) -> float:
        return self.by_rules / self.games


def play_field(name: str, games: int, first_seed: int, max_cycles: int | None = None,
               progress: bool = True) -> FieldResult:
    """Play ``games`` seeded games of the field ``name`` (see ``FIELDS``) and count the endings."""
    import agents
    from envs.wizard_arena.game import WizardArenaGame

    if name not in FIELDS:
        raise ValueError(f"unknown field {name!r}; known: {', '.join(FIELDS)}")
    if games < 1:
        raise ValueError(f"games must be at least 1, got {games}")
    heuristic, random_bots = FIELDS[name]
    n = heuristic + random_bots
    config: dict[str, Any] = {"num_bots": n}
    game = WizardArenaGame(**config)
    env_config = dict(config) if max_cycles is None else dict(config, max_cycles=max_cycles)
    by_rules = no_progress = truncated = 0
    lengths, rounds = [], []
    seeds = range(first_seed, first_seed + games)
    if progress:
        from agents.progress import progress_bar

        seeds = progress_bar(seeds, desc=name, unit="game", leave=False)
    for seed in seeds:
        kinds = [HEURISTIC] * heuristic + [RANDOM] * random_bots
        shift = seed % n
        kinds = kinds[shift:] + kinds[:shift]
        players = [agents.make(kind, seed=seed * 100 + i) for i, kind in enumerate(kinds)]
        record = agents.play_game("wizard_arena_v0", players, seed=seed, config=env_config, keep_final_state=True)
        final = game.load(record.final_state)
        lengths.append(record.length)
        rounds.append(final.round)
        if record.truncated:
            truncated += 1
        else:
            by_rules += 1
            if final.end_reason() == "no-progress":
                no_progress += 1
    cap = (max_cycles or WizardArenaGame.default_max_cycles) * n
    return FieldResult(name, games, first_seed, max_cycles, by_rules, no_progress, truncated,
                       float(statistics.median(lengths)), float(statistics.median(rounds)), max(lengths), cap)


def table(results: list[FieldResult]) -> str:
    head = (f"{'field':<14} {'games':>5} {'seeds':>11} {'ended by rules':>15} {'of which no-progress':>21} "
            f"{'truncated':>9} {'median actions':>14} {'median rounds':>13} {'longest / cap':>13}")
    lines = [head, "-" * len(head)]
    for r in results:
        seeds = f"{r.first_seed}-{r.first_seed + r.games - 1}"
        lines.append(
            f"{r.field:<14} {r.games:>5} {seeds:>11} {r.by_rules:>6} ({r.share_by_rules:6.1%}) "
            f"{r.by_no_progress:>9} ({r.by_no_progress / r.games:6.1%}) {r.truncated:>9} "
            f"{r.median_actions:>14g} {r.median_rounds:>13g} {f'{r.longest_actions}/{r.cap_actions}':>13}"
        )
    return "\n".join(lines)


def plot(results: list[FieldResult], path: pathlib.Path) -> pathlib.Path:
    """A stacked bar per field: ended by one side left, by the no-progress rule, truncated."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = [r.field for r in results]
    natural = [(r.by_rules - r.by_no_progress) / r.games for r in results]
    quiet = [r.by_no_progress / r.games for r in results]
    cut = [r.truncated / r.games for r in results]
    fig, ax = plt.subplots(figsize=(1.4 * len(results) + 2, 4))
    ax.bar(names, natural, label="one side left", color="#4c956c")
    ax.bar(names, quiet, bottom=natural, label="no-progress rule", color="#f2c14e")
    ax.bar(names, cut, bottom=[a + b for a, b in zip(natural, quiet)], label="truncated (cap)", color="#d1495b")
    ax.axhline(0.95, color="black", linewidth=0.8, linestyle="--")
    ax.set_ylabel("share of games")
    ax.set_ylim(0, 1)
    ax.set_title(f"How Wizard Arena games end ({results[0].games} games per field)")
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=100, metadata=image_metadata("wizard_arena_v0"))
    plt.close(fig)
    return path


def main(argv: list[str] | None = None) -> list[FieldResult]:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.arena_endings", description=__doc__.split("\n")[0])
    parser.add_argument("--fields", nargs="+", default=list(FIELDS), metavar="FIELD",
                        help=f"fields to play (default: all): {', '.join(repr(f) for f in FIELDS)}")
    parser.add_argument("--games", type=int, default=100, help="games per field (default 100)")
    parser.add_argument("--seed", type=int, default=1000, help="seed of the first game (default 1000)")
    parser.add_argument("--max-cycles", type=int, default=None, help="environment cap (default: the game's)")
    parser.add_argument("--out", type=pathlib.Path, default=None, help="also write the results as JSON here")
    parser.add_argument("--plot", type=pathlib.Path, default=None, help="also draw the shares as a PNG here")
    parser.add_argument("--no-progress-bar", action="store_true", help="hide the progress bar")
    args = parser.parse_args(argv)
    unknown = [f for f in args.fields if f not in FIELDS]
    if unknown:
        parser.error(f"unknown field(s) {unknown}; known: {list(FIELDS)}")
    if args.games < 1:
        parser.error(f"--games must be at least 1, got {args.games}")
    results = []
    for name in args.fields:
        results.append(play_field(name, args.games, args.seed, args.max_cycles, progress=not args.no_progress_bar))
        print(table(results[-1:]).splitlines()[-1], flush=True)
    print()
    print(table(results))
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        report = {"provenance": provenance("wizard_arena_v0"), "fields": [asdict(r) for r in results]}
        args.out.write_text(json.dumps(report, indent=2))
    if args.plot is not None:
        plot(results, args.plot)
    return results


if __name__ == "__main__":
    import sys

    from agents.errors import run_command

    sys.exit(run_command(main, "python -m benchmarks.arena_endings"))

"""Random-play speed of every game, measured beside PettingZoo's connect_four_v3 in the same run.

    python -m benchmarks.run                      # every game, every entry of Game.benchmark_configs
    python -m benchmarks.run --games sequence_v0 --seconds 3 --out results/bench

For each game configuration three things are timed with the same random-play loop:

* **engine**: ``State.legal_actions()`` + ``apply_action()`` only, no environment;
* **raw_env**: ``agent_iter()`` + ``last()`` (observation and mask) + ``step()`` on ``raw_env()``;
* **env**: the same loop on the wrapped ``env()``;

and connect_four_v3's ``raw_env()`` and ``env()`` are timed the same way, interleaved with every game
configuration. ``State.clone()`` is timed too (clones per second on positions from seeded random
games; search agents clone at every node), reported as a ratio to connect_four's raw_env steps.
The machine is noisy, so every number is the best of ``--repeats`` rounds, and only ratios measured
side by side mean anything. The speed goals: raw_env ≥ 2× connect_four raw_env, env ≥ 1.5×
connect_four env, engine ≥ 5× connect_four env. Then ``envs.vector``'s backends are timed in table-steps/s (see
:mod:`benchmarks.vector`), again beside connect_four's raw_env. Writes a JSON file and a bar chart.
"""

from __future__ import annotations

import argparse
import functools
import importlib
import json
import pathlib
import platform
import random
import time
import warnings
from functools import partial
from typing import Any, Callable

import numpy as np

import envs
from benchmarks.timing import time_env
from envs.provenance import image_metadata, provenance

GOALS = {"raw_env": ("c4_raw_env", 2.0), "env": ("c4_env", 1.5), "engine": ("c4_env", 5.0)}


def time_engine(game: Any, seconds: float, cap: int) -> dict[str, float]:
    """Steps/s and games/s of random legal play on the bare engine (no env, no observations)."""
    rng = random.Random(0)
    steps = games = 0
    seed = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        state = game.new_initial_state(seed)
        seed += 1
        n = 0
        while not state.is_terminal() and n < cap:
            legal = state.legal_actions()
            state.apply_action(legal[rng.randrange(len(legal))])
            n += 1
        steps += n
        games += 1
    elapsed = time.perf_counter() - start
    return {"steps_per_s": steps / elapsed, "games_per_s": games / elapsed, "steps_per_game": steps / max(games, 1)}


def time_clone(game: Any, seconds: float) -> dict[str, float]:
    """``State.clone()`` calls per second, on positions spread over seeded random games."""
    rng = random.Random(0)
    states = []
    for seed in range(4):
        state = game.new_initial_state(seed)
        for n in range(200):
            if state.is_terminal():
                break
            legal = state.legal_actions()
            state.apply_action(legal[rng.randrange(len(legal))])
            if n % 10 == 0:
                states.append(state.clone())
    clones = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        for state in states:
            state.clone()
        clones += len(states)
    elapsed = time.perf_counter() - start
    return {"steps_per_s": clones / elapsed, "clones_per_s": clones / elapsed}


def run(games: list[str], seconds: float, repeats: int, progress: bool = True) -> dict[str, Any]:
    """Time every game configuration, with connect_four_v3 re-measured beside each one.

    The machine is shared and its speed drifts, so the reference is timed again right next to every
    game configuration (interleaved, ``repeats`` rounds) and each ratio divides the best game figure
    by the best reference figure of the same rounds.
    """
    from pettingzoo.classic import connect_four_v3

    from agents.progress import progress_bar

    jobs: list[tuple[str, str, dict]] = []
    for name in games:
        for label, config in envs.game_class(name).benchmark_configs.items():
            jobs.append((name, label, config))
    bar = progress_bar(total=6 * repeats * len(jobs), desc="benchmark", disable=not progress)

    def timed(text: str, fn: Callable[[], dict[str, float]]) -> dict[str, float]:
        result = fn()
        if bar:
            bar.set_postfix_str(text)
            bar.update(1)
        return result

    def best(runs: list[dict[str, float]]) -> dict[str, float]:
        return max(runs, key=lambda r: r["steps_per_s"])

    rows = []
    c4_all: dict[str, list[dict[str, float]]] = {"raw_env": [], "env": []}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, label, config in jobs:
            module = importlib.import_module(f"envs.{name}")
            game = module.Game(**config)
            cap = module.raw_env(**config).max_cycles * game.num_players
            runs: dict[str, list[dict[str, float]]] = {
                k: [] for k in ("c4_raw_env", "raw_env", "c4_env", "env", "engine", "clone")
            }
            make_raw = functools.partial(module.raw_env, **config)
            make_env = functools.partial(module.env, **config)
            for _ in range(repeats):
                runs["c4_raw_env"].append(timed("connect_four raw_env", partial(time_env, connect_four_v3.raw_env, seconds)))
                runs["raw_env"].append(timed(f"{name} {label} raw_env", partial(time_env, make_raw, seconds)))
                runs["c4_env"].append(timed("connect_four env", partial(time_env, connect_four_v3.env, seconds)))
                runs["env"].append(timed(f"{name} {label} env", partial(time_env, make_env, seconds)))
                runs["engine"].append(timed(f"{name} {label} engine", partial(time_engine, game, seconds, cap)))
                runs["clone"].append(timed(f"{name} {label} clone", partial(time_clone, game, seconds / 2)))
            c4_all["raw_env"] += runs["c4_raw_env"]
            c4_all["env"] += runs["c4_env"]
            row = {"game": name, "config": label, **{k: best(v) for k, v in runs.items()}}
            base = {"c4_raw_env": row["c4_raw_env"]["steps_per_s"], "c4_env": row["c4_env"]["steps_per_s"]}
            row["ratios"] = {k: row[k]["steps_per_s"] / base[ref] for k, (ref, _goal) in GOALS.items()}
            row["ratios"]["clone"] = row["clone"]["steps_per_s"] / base["c4_raw_env"]
            row["meets_goals"] = {k: row["ratios"][k] >= goal for k, (_ref, goal) in GOALS.items()}
            rows.append(row)
    if bar:
        bar.close()
    return {
        "provenance": provenance(games),
        "machine": {"python": platform.python_version(), "processor": platform.processor() or platform.machine()},
        "seconds_per_measurement": seconds,
        "repeats": repeats,
        "connect_four_v3": {k: best(v) for k, v in c4_all.items()},
        "goals": {k: {"relative_to": ref, "at_least": goal} for k, (ref, goal) in GOALS.items()},
        "results": rows,
    }


def print_table(report: dict[str, Any]) -> None:
    c4 = report["connect_four_v3"]
    lines = [
        f"connect_four_v3 best of the run: raw_env {c4['raw_env']['steps_per_s']:,.0f} steps/s, "
        f"env {c4['env']['steps_per_s']:,.0f} steps/s (re-timed beside every row)",
        f"{'game':<16} {'config':<18} {'engine/s':>10} {'raw_env/s':>10} {'env/s':>10} {'c4 raw/s':>9} {'c4 env/s':>9}"
        f" {'games/s':>8} {'clone/s':>9} {'raw÷c4raw':>9} {'env÷c4env':>9} {'eng÷c4env':>9} {'cln÷c4raw':>9}",
    ]

    def fmt(row: dict[str, Any], key: str) -> str:
        return f"{row['ratios'][key]:.2f}{'' if row['meets_goals'][key] else '!'}"

    for row in report["results"]:
        lines.append(
            f"{row['game']:<16} {row['config']:<18} {row['engine']['steps_per_s']:>10,.0f} "
            f"{row['raw_env']['steps_per_s']:>10,.0f} {row['env']['steps_per_s']:>10,.0f} "
            f"{row['c4_raw_env']['steps_per_s']:>9,.0f} {row['c4_env']['steps_per_s']:>9,.0f} "
            f"{row['env']['games_per_s']:>8.1f} {row['clone']['clones_per_s']:>9,.0f} {fmt(row, 'raw_env'):>9} "
            f"{fmt(row, 'env'):>9} {fmt(row, 'engine'):>9} {row['ratios']['clone']:>9.3f}"
        )
    lines.append("goals: raw_env >= 2x, env >= 1.5x, engine >= 5x connect_four env; '!' marks a ratio below its goal")
    print("\n".join(lines))


def plot(report: dict[str, Any], path: pathlib.Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = report["results"]
    labels = [f"{r['game']}\n{r['config']}" for r in rows]
    x = np.arange(len(rows))
    fig, ax = plt.subplots(figsize=(max(6, 1.4 * len(rows)), 4.5))
    for i, (key, colour) in enumerate((("raw_env", "#4c72b0"), ("env", "#55a868"))):
        ax.bar(x + (i - 0.5) * 0.38, [r["ratios"][key] for r in rows], 0.38, label=f"{key} ÷ connect_four {key}", color=colour)
    ax.axhline(2.0, color="#4c72b0", ls="--", lw=1)
    ax.axhline(1.5, color="#55a868", ls="--", lw=1)
    ax.set_xticks(x, labels, fontsize=7)
    ax.set_ylabel("speed ratio (higher is faster)")
    ax.set_title("Random-play speed relative to connect_four_v3 (same run)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110, metadata=image_metadata(report["provenance"]["environments"]))
    plt.close(fig)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--games", nargs="*", default=list(envs.NAMES), help="games to time (default: all)")
    parser.add_argument("--seconds", type=float, default=2.0,
                        help="seconds per measurement; clone() gets half (default: %(default)s)")
    parser.add_argument("--repeats", type=int, default=2,
                        help="rounds per measurement; the best round counts (default: %(default)s)")
    parser.add_argument("--out", default="results/benchmark",
                        help="output folder for benchmark.json and benchmark.png (default: %(default)s)")
    parser.add_argument("--num-envs", type=int, nargs="+", default=[64, 1024],
                        help="tables per envs.vector batch in the batched table; each size is timed "
                             "(default: %(default)s)")
    args = parser.parse_args(argv)
    unknown = sorted(set(args.games) - set(envs.NAMES))
    if unknown:
        parser.error(f"unknown games {unknown}; choose from {list(envs.NAMES)}")
    report = run(args.games, args.seconds, args.repeats)
    print_table(report)
    from benchmarks import vector

    report["vector"] = vector.run(args.games, args.seconds, args.repeats, args.num_envs)
    vector.print_table(report["vector"])
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "benchmark.json").write_text(json.dumps(report, indent=2))
    plot(report, out / "benchmark.png")
    print(f"wrote {out / 'benchmark.json'} and {out / 'benchmark.png'}")


if __name__ == "__main__":
    import sys

    from agents.errors import run_command

    sys.exit(run_command(main, "python -m benchmarks.run"))

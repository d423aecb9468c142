"""The centralised critic measured: ``training.ppo --critic state`` against ``--critic seat`` at equal samples.

    python -m benchmarks.critic_compare                 # the runs (two at a time), then the table and the plot
    python -m benchmarks.critic_compare --report-only   # the table and the plot from the runs already made

Two tasks, the games where a seat sees least of the position: Sequence with two teams of two (the
partner's and the opponents' hands are hidden) and Wizard Arena with six bots (the others' secret
choices). Each critic trains three seeds (1-3) with training.ppo's defaults (its league of
``heuristic-v1``, ``self`` and ``random-v0``), on the reference engines for both critics (so that their
CPU seconds compare), and is evaluated greedy against ``heuristic-noisy-v1`` and ``random-v0`` (100
seeded games each, seats rotated). Sequence runs 49,152 learner decisions, evaluated every 8,192; Wizard
Arena, about four times slower a decision, 30,720, evaluated every 10,240. Each run is one command, printed
before it starts, writing ``<out>/<game>-<critic>-s<seed>``; a run whose ``eval.json`` reaches the budget
is not run again.

From the runs' ``eval.json`` and ``curve.csv``: ``summary.md`` (the docs include it) and ``summary.csv``
(per task, critic and opponent: the final win rate over the three seeds' games with its Wilson interval,
each seed's rate, the fair share (one over the number of teams), the mean rank (1 = first) and the
training CPU seconds per run, evaluation left out), and ``curves.png`` (win rate
against learner decisions, one panel per task and opponent, the mean over seeds with the seeds' spread).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import pathlib
import shlex
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from typing import Any

TASKS = {
    "sequence_v0": {"config": {"players_per_team": 2}, "steps": 49_152, "eval_every": 8_192,
                    "title": "Sequence, 2 teams of 2"},
    "wizard_arena_v0": {"config": {}, "steps": 30_720, "eval_every": 10_240, "title": "Wizard Arena, 6 bots"},
}
CRITICS = ("seat", "state")
SEEDS = (1, 2, 3)
OPPONENTS = ("heuristic-noisy-v1", "random-v0")
EVAL_GAMES = 100


def command(game: str, critic: str, seed: int, out: pathlib.Path) -> list[str]:
    task = TASKS[game]
    return [sys.executable, "-m", "training.ppo", "--game", game, "--config", json.dumps(task["config"]),
            "--total-timesteps", str(task["steps"]), "--eval-every", str(task["eval_every"]), "--critic", critic,
            "--seed", str(seed), "--backend", "python", "--eval-games", str(EVAL_GAMES), "--eval-opponents",
            *OPPONENTS, "--run-dir", str(run_folder(out, game, critic, seed)), "--no-progress"]


def run_folder(out: pathlib.Path, game: str, critic: str, seed: int) -> pathlib.Path:
    return out / f"{game}-{critic}-s{seed}"


def finished(folder: pathlib.Path, steps: int) -> bool:
    try:
        return json.loads((folder / "eval.json").read_text())["samples"] >= steps
    except (OSError, ValueError, KeyError):
        return False


def run_all(out: pathlib.Path, jobs: int) -> None:
    todo = [(g, c, s) for g in TASKS for s in SEEDS for c in CRITICS
            if not finished(run_folder(out, g, c, s), TASKS[g]["steps"])]

    def one(spec: tuple[str, str, int]) -> None:
        cmd = command(*spec, out)
        folder = run_folder(out, *spec[:2], spec[2])
        folder.mkdir(parents=True, exist_ok=True)
        print(shlex.join(cmd), flush=True)
        with open(folder.with_suffix(".log"), "w") as log:
            subprocess.run(cmd, check=True, stdout=log, stderr=subprocess.STDOUT,
                           env={**os.environ, "OMP_NUM_THREADS": "1"})

    with ThreadPoolExecutor(jobs) as pool:
        list(pool.map(one, todo))


def summarise(out: pathlib.Path) -> tuple[list[dict[str, Any]], dict[tuple[str, str], list[list[dict[str, float]]]]]:
    """The summary rows and, per (game, critic), each seed's curve."""
    from agents.stats import wilson_interval
    from training.report import read_curve

    rows, curves = [], {}
    for game in TASKS:
        for critic in CRITICS:
            reports = []
            for seed in SEEDS:
                folder = run_folder(out, game, critic, seed)
                if finished(folder, TASKS[game]["steps"]):
                    reports.append(json.loads((folder / "eval.json").read_text()))
                    curves.setdefault((game, critic), []).append(read_curve(folder / "curve.csv")[1])
            if not reports:
                continue
            for kind in OPPONENTS:
                wins = sum(r["results"][kind]["wins"] for r in reports)
                games = sum(r["results"][kind]["games"] for r in reports)
                low, high = wilson_interval(wins, games)
                rows.append({
                    "task": TASKS[game]["title"], "critic": critic, "opponent": kind, "seeds": len(reports),
                    "samples": reports[0]["samples"], "wins": wins, "games": games, "win_rate": round(wins / games, 3),
                    "ci95_low": round(low, 3), "ci95_high": round(high, 3),
                    "per_seed": " / ".join(f"{r['results'][kind]['win_rate']:.2f}" for r in reports),
                    "fair_share": round(reports[0]["results"][kind]["fair_share"], 3),
                    "mean_rank": round(sum(r["results"][kind]["mean_rank"] * r["results"][kind]["games"]
                                           for r in reports) / games, 2),
                    "cpu_seconds": round(sum(r["cpu_seconds"] for r in reports) / len(reports), 1),
                })
    return rows, curves


def write_summary(rows: list[dict[str, Any]], out_dir: pathlib.Path) -> str:
    from training.report import write_csv

    write_csv(out_dir / "summary.csv", rows, list(TASKS), fieldnames=list(rows[0]))
    lines = ["| Task | Critic | Opponent | Win rate (3 seeds' games) | 95% Wilson | Per seed | Fair share | Mean rank "
             "| Training CPU s / run |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        lines.append(f"| {r['task']} | {r['critic']} | {r['opponent']} | {r['win_rate']:.1%} ({r['wins']}/{r['games']}) "
                     f"| [{r['ci95_low']:.1%}, {r['ci95_high']:.1%}] | {r['per_seed']} | {r['fair_share']:.1%} "
                     f"| {r['mean_rank']:.2f} | {r['cpu_seconds']:.0f} |")
    text = "\n".join(lines) + "\n"
    (out_dir / "summary.md").write_text(text)
    return text


def plot(curves: dict[tuple[str, str], list[list[dict[str, float]]]], out_dir: pathlib.Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    import envs
    from envs.provenance import image_metadata

    fig, axes = plt.subplots(len(OPPONENTS), len(TASKS), figsize=(10, 6.4), squeeze=False)
    for col, game in enumerate(TASKS):
        for row, kind in enumerate(OPPONENTS):
            ax = axes[row][col]
            for critic, colour in zip(CRITICS, ("tab:blue", "tab:orange")):
                runs = curves.get((game, critic), [])
                if not runs:
                    continue
                steps = [p["step"] for p in runs[0]]
                length = min(len(r) for r in runs)
                rates = np.array([[p.get(f"win_rate_vs_{kind}", math.nan) for p in r[:length]] for r in runs])
                ax.plot(steps[:length], rates.mean(axis=0), marker="o", color=colour,
                        label=f"{critic} critic (mean of {len(runs)} seeds)")
                ax.fill_between(steps[:length], rates.min(axis=0), rates.max(axis=0), color=colour, alpha=0.2)
            fair = 1 / envs.make_game(game, **TASKS[game]["config"]).num_teams
            ax.axhline(fair, color="grey", linestyle="--", linewidth=1, label=f"fair share ({fair:.0%})")
            ax.set_title(f"{TASKS[game]['title']} vs {kind}", fontsize=9)
            ax.set_ylim(0, 1)
            ax.grid(alpha=0.3)
            ax.set_xlabel("learner decisions")
            ax.set_ylabel("win rate (greedy)")
            ax.legend(fontsize=7)
    fig.suptitle("training.ppo: value from the seat's observation or from the whole position (band: seeds' range)",
                 fontsize=10)
    fig.tight_layout()
    fig.savefig(out_dir / "curves.png", dpi=100, metadata=image_metadata(list(TASKS)))
    plt.close(fig)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.critic_compare", description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default="runs/critic", help="folder of the runs (default: runs/critic)")
    parser.add_argument("--docs", default="docs/guide/critic_compare",
                        help="folder of the table and the plot (default: docs/guide/critic_compare)")
    parser.add_argument("--jobs", type=int, default=2, help="runs at a time (default: 2)")
    parser.add_argument("--report-only", action="store_true", help="only the table and the plot from the runs made")
    a = parser.parse_args(argv)
    if a.jobs < 1:
        parser.error(f"--jobs is a number of runs at a time (1 or more), got {a.jobs}")
    out, docs = pathlib.Path(a.out), pathlib.Path(a.docs)
    if not a.report_only:
        run_all(out, a.jobs)
    rows, curves = summarise(out)
    if not rows:
        raise SystemExit(f"no finished runs under {out}: run python -m benchmarks.critic_compare first")
    docs.mkdir(parents=True, exist_ok=True)
    print(write_summary(rows, docs))
    plot(curves, docs)
    print(f"wrote {docs / 'summary.md'}, {docs / 'summary.csv'} and {docs / 'curves.png'}")


if __name__ == "__main__":
    import sys

    from agents.errors import run_command

    sys.exit(run_command(main, "python -m benchmarks.critic_compare"))

"""PPO checked against references, and the update settings measured: runs the trainers, then tabulates and plots.

    python -m benchmarks.ppo_compare reference               # training.ppo vs SB3 (vs RLlib with --rllib-python)
    python -m benchmarks.ppo_compare settings                # training.ppo's update settings, Sequence vs random
    python -m benchmarks.ppo_compare reference --report-only # tables and plots from the runs already made
    python -m benchmarks.ppo_compare reference --tasks sequence_v0:random-v0,pans_trial_v0:random-v0 \
        --variant ppo --variant sb3                          # some tasks and variants only

Two studies, each a list of runs ``(task, variant, seed)``. A task is a game and the one opponent kind the
learner trains against and is evaluated against (``--eval-every 20000``, 100 seeded games per evaluation,
the shared team-level evaluation of :mod:`training.evaluation`). Every run is one command of a trainer,
printed before it starts, writing its own folder under ``--out`` (``<study>/<task>/<variant>-s<seed>``);
a run whose ``curve.csv`` reaches the sample budget is not run again, so the study resumes where it
stopped. Then, from the ``curve.csv`` files:

- ``<study>.csv``: every evaluation of every run (task, variant, seed, samples, training CPU seconds,
  win rate and its Wilson interval, and for training.ppo ``approx_kl`` and ``clipfrac``);
- ``<study>_summary.csv``, ``<study>_summary.md`` (the docs include it) and the printed table: per
  task and variant the final win rate (mean and spread over seeds), training CPU seconds, and for the
  reference study SB3's CPU seconds divided by the variant's (``sb3_cpu_ratio``, for the same samples),
  and the samples and the training CPU seconds at which the mean curve first reaches SB3's final win
  rate (its first evaluation at or above it; "never" within the budget);
- ``<study>_<game>.png``: one plot per game, win rate against samples and against CPU-hours, one line
  per variant (mean over seeds, the band spanning the seeds), one row per opponent.

**reference**: Sequence and Pan's Trial against ``random-v0`` and ``heuristic-noisy-v1``, 100,000
learner decisions, seeds 1–3. Variants: ``ppo`` (training.ppo at its defaults), ``ppo-matched``
(training.ppo with SB3's network and update settings: ``mlp_ac`` 256 wide, 2,048-decision rollouts,
8 minibatches, 6 epochs), ``sb3`` (training.sb3 with the same settings) and, when
``--rllib-python`` names the Python of an environment with the ``rllib`` extra, ``rllib``
(training.rllib, same settings; its CPU time is not measured, Ray's workers run elsewhere).
The candidates of :data:`CANDIDATES` (training.ppo with one update setting changed) run only when
named with ``--variant``.

**settings**: training.ppo on Sequence against ``random-v0``, 100,000 decisions, seeds 1–3, one variant
per update setting (learning rate, epochs, minibatches per rollout, rollout length, advantage
normalisation, value-loss weight); what each variant changes is in :data:`SETTINGS`.

Training CPU time leaves out evaluation in every trainer. Each run is one process on one core
(``OMP_NUM_THREADS=1``); run the study on an otherwise quiet machine, or read the CPU columns as relative.
"""

from __future__ import annotations

import argparse
import math
import os
import pathlib
import subprocess
import sys
import time
from typing import Any

import numpy as np

import training.report
from envs.provenance import image_metadata
from training.report import write_csv

#: The games of both studies (their versions go into every CSV's provenance line).
GAMES = ["sequence_v0", "pans_trial_v0"]

SAMPLES = 100_000
SEEDS = (1, 2, 3)
EVAL = ["--eval-every", "20000", "--eval-games", "100"]
REFERENCE_TASKS = [
    ("sequence_v0", "random-v0"),
    ("pans_trial_v0", "random-v0"),
    ("sequence_v0", "heuristic-noisy-v1"),
    ("pans_trial_v0", "heuristic-noisy-v1"),
]
#: SB3's network and update settings, given to every trainer in the reference study
MATCHED = ["--learning-rate", "3e-4", "--num-minibatches", "8", "--update-epochs", "6", "--gamma", "0.995",
           "--gae-lambda", "0.95", "--clip-coef", "0.2", "--ent-coef", "0.01", "--vf-coef", "0.5",
           "--max-grad-norm", "0.5"]
#: training.ppo's update settings tried against the reference (``--variant NAME``; not run otherwise): variant ->
#: flags. Each names every update setting it differs in from the others, so that a change of the trainer's
#: defaults leaves its runs valid: ``mbM-epE`` is M minibatches per rollout and E epochs at learning
#: rate 1e-3; ``compile`` and ``bf16`` add ``--compile`` and ``--update-dtype bf16`` to 8 minibatches and 2 epochs.
CANDIDATES: dict[str, list[str]] = {
    "ppo-mb8-ep4": ["--num-minibatches", "8", "--update-epochs", "4", "--learning-rate", "1e-3"],
    "ppo-mb4-ep4": ["--num-minibatches", "4", "--update-epochs", "4", "--learning-rate", "1e-3"],
    "ppo-mb2-ep4": ["--num-minibatches", "2", "--update-epochs", "4", "--learning-rate", "1e-3"],
    "ppo-mb8-ep2": ["--num-minibatches", "8", "--update-epochs", "2", "--learning-rate", "1e-3"],
    "ppo-mb4-ep2": ["--num-minibatches", "4", "--update-epochs", "2", "--learning-rate", "1e-3"],
    "ppo-compile": ["--num-minibatches", "8", "--update-epochs", "2", "--learning-rate", "1e-3", "--compile"],
    "ppo-bf16": ["--num-minibatches", "8", "--update-epochs", "2", "--learning-rate", "1e-3", "--update-dtype", "bf16"],
}
#: training.ppo's update settings measured by the settings study: variant -> flags beyond the defaults.
#: The defaults (64 tables x 32 decisions a rollout) are the baseline each variant changes one or two of.
SETTINGS: dict[str, list[str]] = {
    "old-defaults": ["--num-minibatches", "2", "--update-epochs", "3", "--learning-rate", "3e-4"],
    "mb8-ep3": ["--num-minibatches", "8", "--update-epochs", "3", "--learning-rate", "3e-4"],
    "mb8-ep6": ["--num-minibatches", "8", "--update-epochs", "6", "--learning-rate", "3e-4"],
    "mb8-ep10": ["--num-minibatches", "8", "--update-epochs", "10", "--learning-rate", "3e-4"],
    "mb8-ep4-lr1e-3": ["--num-minibatches", "8", "--update-epochs", "4", "--learning-rate", "1e-3"],
    "mb8-ep6-steps16": ["--num-minibatches", "8", "--update-epochs", "6", "--learning-rate", "3e-4",
                        "--num-steps", "16"],
    "mb8-ep6-no-norm-adv": ["--num-minibatches", "8", "--update-epochs", "6", "--learning-rate", "3e-4",
                            "--no-norm-adv"],
    "mb8-ep6-vf1": ["--num-minibatches", "8", "--update-epochs", "6", "--learning-rate", "3e-4",
                    "--vf-coef", "1.0"],
}


def commands(study: str, rllib_python: str | None, samples: int = SAMPLES, seeds: tuple[int, ...] = SEEDS,
             candidates: tuple[str, ...] = ()) -> list[tuple[str, str, str, int, list[str]]]:
    """(game, opponent, variant, seed, argv) of every run of the study for ``seeds``, in the order they run
    (in the reference study, with the runs of the ``candidates`` named, of :data:`CANDIDATES`)."""
    runs = []
    if study == "settings":
        for variant, flags in SETTINGS.items():
            for seed in seeds:
                argv = ppo_argv("sequence_v0", "random-v0", seed, flags, samples)
                runs.append(("sequence_v0", "random-v0", variant, seed, argv))
        return runs
    for game, opponent in REFERENCE_TASKS:
        for seed in seeds:
            runs.append((game, opponent, "ppo", seed, ppo_argv(game, opponent, seed, [], samples)))
            runs.append((game, opponent, "ppo-matched", seed, ppo_argv(
                game, opponent, seed, [*MATCHED, "--net", "mlp_ac", "--hidden", "256", "--num-envs", "64",
                                       "--num-steps", "32"], samples)))
            runs.append((game, opponent, "sb3", seed, [
                sys.executable, "-m", "training.sb3", "--game", game, "--seed", str(seed),
                "--total-timesteps", str(samples), "--opponents", opponent, "--eval-opponents", opponent,
                *EVAL, *MATCHED, "--num-envs", "1", "--num-steps", "2048", "--net-arch", "256", "256",
                "--no-progress"]))
            for variant in candidates:
                runs.append((game, opponent, variant, seed, ppo_argv(game, opponent, seed, CANDIDATES[variant], samples)))
            if rllib_python:
                runs.append((game, opponent, "rllib", seed, [
                    rllib_python, "-m", "training.rllib", "--game", game, "--seed", str(seed),
                    "--iterations", str(math.ceil(samples / 2048)), "--train-batch", "2048",
                    "--opponents", opponent, "--eval-every", str(rllib_eval_every(samples)), "--eval-games", "100", *MATCHED,
                    "--hidden", "256", "256", "--no-progress"]))
    return runs


def rllib_eval_every(samples: int) -> int:
    """Iterations between RLlib's evaluations: at most about 20,000 decisions apart, and a divisor of the
    number of iterations so that the last one is evaluated."""
    iterations = math.ceil(samples / 2048)
    every = min(iterations, round(20_000 / 2048))
    while iterations % every:
        every -= 1
    return every


def ppo_argv(game: str, opponent: str, seed: int, flags: list[str], samples: int) -> list[str]:
    return [sys.executable, "-m", "training.ppo", "--game", game, "--seed", str(seed), "--total-timesteps",
            str(samples), "--opponents", opponent, "--eval-opponents", opponent, "--snapshot-every", "0",
            "--checkpoint-every", "0", *EVAL, *flags, "--no-progress"]


def run_dir_flag(argv: list[str]) -> str:
    module = argv[argv.index("-m") + 1]
    return "--run-dir" if module == "training.ppo" else "--out"


def read_curve(folder: pathlib.Path) -> list[dict[str, float]]:
    path = folder / "curve.csv"
    return training.report.read_curve(path)[1] if path.is_file() else []


def finished(folder: pathlib.Path, samples: int) -> bool:
    curve = read_curve(folder)
    return bool(curve) and curve[-1]["step"] >= samples and (folder / "args.json").is_file() and (
        (folder / "eval.json").is_file() or (folder / "policy").is_dir())


def parse_tasks(text: str) -> list[tuple[str, str]]:
    """``--tasks``: comma-separated GAME:OPPONENT pairs, each one of the reference study's tasks."""
    tasks = []
    for item in (t.strip() for t in text.split(",") if t.strip()):
        game, _, opponent = item.partition(":")
        if (game, opponent) not in REFERENCE_TASKS:
            known = ",".join(f"{g}:{o}" for g, o in REFERENCE_TASKS)
            raise SystemExit(f"--tasks {item!r} is not a task of the reference study; choose from {known}")
        tasks.append((game, opponent))
    if not tasks:
        raise SystemExit("--tasks needs at least one GAME:OPPONENT")
    return tasks


def run_all(study: str, out: pathlib.Path, rllib_python: str | None, only: str | None, samples: int,
            variants: list[str] | None = None, seeds: list[int] | None = None,
            tasks: list[tuple[str, str]] | None = None) -> None:
    every = commands(study, rllib_python, samples, tuple(seeds or SEEDS),
                     tuple(v for v in (variants or []) if v in CANDIDATES and study == "reference"))
    runs = every
    if tasks:
        runs = [r for r in runs if (r[0], r[1]) in tasks]
    if variants:
        known = sorted({r[2] for r in every})
        unknown = [v for v in variants if v not in known]
        if unknown:
            raise SystemExit(f"--variant {' '.join(unknown)}: the {study} study has no such variant; choose from {known}"
                             + ("" if study != "reference" else f" or a candidate ({', '.join(CANDIDATES)})")
                             + ("" if rllib_python or study != "reference" else " (rllib needs --rllib-python)"))
        runs = [r for r in runs if r[2] in variants]
    if only:
        runs = [r for r in runs if only in f"{r[0]}/{r[1]}/{r[2]}"]
        if not runs:
            names = sorted({f"{r[0]}/{r[1]}/{r[2]}" for r in every})
            raise SystemExit(f"--only {only!r} matches none of the {study} study's runs: {', '.join(names)}")
    # One core per run; --compile compiles in the run's own process, so its compile time is counted
    env = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "PYTHONUNBUFFERED": "1",
           "TORCHINDUCTOR_COMPILE_THREADS": "1"}
    for i, (game, opponent, variant, seed, argv) in enumerate(runs, 1):
        folder = out / study / f"{game}-{opponent}" / f"{variant}-s{seed}"
        if finished(folder, samples):
            print(f"[{i}/{len(runs)}] done already: {folder}", flush=True)
            continue
        folder.mkdir(parents=True, exist_ok=True)
        full = [*argv, run_dir_flag(argv), str(folder)]
        print(f"[{i}/{len(runs)}] {' '.join(full)}", flush=True)
        start = time.perf_counter()
        with open(folder / "stdout.log", "w") as log:
            code = subprocess.call(full, stdout=log, stderr=subprocess.STDOUT, env=env)
        print(f"    exit {code} after {time.perf_counter() - start:.0f} s", flush=True)
        if code != 0:
            print(f"    failed: see {folder / 'stdout.log'}", flush=True)


def collect(study: str, out: pathlib.Path) -> list[dict[str, Any]]:
    """Every evaluation row of every run of the study found under ``out``."""
    rows = []
    for folder in sorted((out / study).glob("*/*-s*")):
        task = folder.parent.name
        game, opponent = task.split("-", 1)
        variant, seed = folder.name.rsplit("-s", 1)
        for r in read_curve(folder):
            if math.isnan(r.get(f"win_rate_vs_{opponent}", math.nan)):
                continue  # an RLlib iteration without an evaluation
            rows.append({
                "game": game, "opponent": opponent, "variant": variant, "seed": int(seed),
                "samples": int(r["step"]), "cpu_seconds": r.get("cpu_seconds", math.nan),
                "win_rate": r.get(f"win_rate_vs_{opponent}", math.nan),
                "win_low": r.get(f"win_low_vs_{opponent}", math.nan),
                "win_high": r.get(f"win_high_vs_{opponent}", math.nan),
                "approx_kl": r.get("approx_kl", math.nan), "clipfrac": r.get("clipfrac", math.nan),
            })
    return rows


def summarize(rows: list[dict[str, Any]], samples: int) -> list[dict[str, Any]]:
    """Per task and variant: final win rate over seeds, CPU seconds, and samples to reach SB3's final rate."""
    groups: dict[tuple[str, str, str], dict[int, list[dict[str, Any]]]] = {}
    for r in rows:
        groups.setdefault((r["game"], r["opponent"], r["variant"]), {}).setdefault(r["seed"], []).append(r)
    summary = []
    for (game, opponent, variant), seeds in sorted(groups.items()):
        finals = [max(runs, key=lambda r: r["samples"]) for runs in seeds.values()]
        finals = [f for f in finals if f["samples"] >= samples]
        if not finals:
            continue
        wins = np.array([f["win_rate"] for f in finals])
        kls = [r["approx_kl"] for runs in seeds.values() for r in runs if not math.isnan(r["approx_kl"])]
        clips = [r["clipfrac"] for runs in seeds.values() for r in runs if not math.isnan(r["clipfrac"])]
        summary.append({
            "game": game, "opponent": opponent, "variant": variant, "seeds": len(finals),
            "final_win_rate": round(float(wins.mean()), 3), "win_rate_min": round(float(wins.min()), 3),
            "win_rate_max": round(float(wins.max()), 3),
            "cpu_seconds": round(float(np.mean([f["cpu_seconds"] for f in finals])), 1),
            "mean_approx_kl": float(f"{np.mean(kls):.3g}") if kls else math.nan,
            "mean_clipfrac": round(float(np.mean(clips)), 4) if clips else math.nan,
        })
    for s in summary:
        ref = next((t for t in summary if (t["game"], t["opponent"], t["variant"]) == (s["game"], s["opponent"], "sb3")), None)
        reached = reach(rows, s, ref["final_win_rate"]) if ref else None
        s["sb3_cpu_ratio"] = (round(ref["cpu_seconds"] / s["cpu_seconds"], 2)
                              if ref and s["cpu_seconds"] > 0 else math.nan)
        s["samples_to_sb3_final"] = "" if not ref else int(round(reached["samples"])) if reached else "never"
        s["cpu_to_sb3_final"] = ("" if not ref else round(reached["cpu_seconds"], 1) if reached and
                                 not math.isnan(reached["cpu_seconds"]) else "–" if reached else "never")
    return summary


def aligned(rows: list[dict[str, Any]], game: str, opponent: str, variant: str) -> list[dict[str, Any]]:
    """The seeds' curves of one variant point by point: every seed of a trainer evaluates on the same
    schedule, so the k-th evaluations line up. Each point: mean samples and CPU seconds, and the mean,
    lowest and highest win rate over the seeds that reached it (``seeds``)."""
    per_seed: dict[int, list[dict[str, Any]]] = {}
    for r in rows:
        if (r["game"], r["opponent"], r["variant"]) == (game, opponent, variant):
            per_seed.setdefault(r["seed"], []).append(r)
    curves = [sorted(c, key=lambda r: r["samples"]) for c in per_seed.values()]
    points = []
    for k in range(max((len(c) for c in curves), default=0)):
        at = [c[k] for c in curves if len(c) > k]
        wins = [r["win_rate"] for r in at]
        points.append({"samples": float(np.mean([r["samples"] for r in at])),
                       "cpu_seconds": float(np.mean([r["cpu_seconds"] for r in at])),
                       "win_rate": float(np.mean(wins)), "low": min(wins), "high": max(wins), "seeds": len(at)})
    return points


def reach(rows: list[dict[str, Any]], s: dict[str, Any], target: float) -> dict[str, Any] | None:
    """The first point of the mean curve (over all seeds) at or above ``target``, with its mean samples and
    training CPU seconds; None if the curve never reaches it within the budget."""
    for point in aligned(rows, s["game"], s["opponent"], s["variant"]):
        # the target is rounded to 3 places
        if point["seeds"] == s["seeds"] and point["win_rate"] >= target - 5e-4:
            return point
    return None


def samples_to_reach(rows: list[dict[str, Any]], s: dict[str, Any], target: float) -> int | str:
    """The first evaluation at which the mean over all seeds reaches ``target`` ("never" within the budget)."""
    point = reach(rows, s, target)
    return int(round(point["samples"])) if point else "never"


def plot(study: str, rows: list[dict[str, Any]], out: pathlib.Path) -> list[pathlib.Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    written = []
    for game in sorted({r["game"] for r in rows}):
        opponents = sorted({r["opponent"] for r in rows if r["game"] == game})
        fig, axes = plt.subplots(len(opponents), 2, figsize=(10, 3.4 * len(opponents)), squeeze=False)
        for row_axes, opponent in zip(axes, opponents):
            for variant in sorted({r["variant"] for r in rows if (r["game"], r["opponent"]) == (game, opponent)}):
                points = aligned(rows, game, opponent, variant)
                mean = [p["win_rate"] for p in points]
                low = [p["low"] for p in points]
                high = [p["high"] for p in points]
                cpu_h = [p["cpu_seconds"] / 3600 for p in points]
                for ax, xs in ((row_axes[0], [p["samples"] / 1e6 for p in points]), (row_axes[1], cpu_h)):
                    if any(math.isnan(x) for x in xs):
                        continue
                    ax.plot(xs, mean, marker="o", label=variant)
                    ax.fill_between(xs, low, high, alpha=0.15)
            for ax, label in zip(row_axes, ("million samples (learner decisions)", "training CPU-hours")):
                ax.set_xlabel(label)
                ax.set_ylabel(f"win rate vs {opponent}")
                ax.set_ylim(0, 1)
                ax.grid(alpha=0.3)
                ax.legend(fontsize=8)
        fig.suptitle(f"{game}: {study} study (mean of seeds; band: lowest to highest seed)")
        fig.tight_layout()
        path = out / f"{study}_{game}.png"
        fig.savefig(path, dpi=100, metadata=image_metadata(game))
        plt.close(fig)
        written.append(path)
    return written


#: Column headings of the Markdown summary (the docs include it as it is written).
HEADINGS = {"game": "game", "opponent": "opponent", "variant": "variant", "seeds": "seeds",
            "final_win_rate": "final win rate (mean)", "win_rate_min": "lowest seed", "win_rate_max": "highest seed",
            "cpu_seconds": "training CPU s", "mean_approx_kl": "mean approx_kl", "mean_clipfrac": "mean clipfrac",
            "sb3_cpu_ratio": "SB3 CPU / this", "samples_to_sb3_final": "samples to SB3's final",
            "cpu_to_sb3_final": "training CPU s to SB3's final"}


def markdown_table(summary: list[dict[str, Any]]) -> str:
    """The summary as a Markdown table; columns that are empty in every row are left out."""
    keys = [k for k in summary[0] if any(str(s[k]) not in ("", "nan") for s in summary)]
    lines = ["| " + " | ".join(HEADINGS.get(k, k) for k in keys) + " |", "|" + "---|" * len(keys)]
    for s in summary:
        lines.append("| " + " | ".join("–" if str(s[k]) in ("", "nan") else f"`{s[k]}`" if k == "variant" else str(s[k])
                                        for k in keys) + " |")
    return "\n".join(lines) + "\n"


def report(study: str, out: pathlib.Path, samples: int) -> None:
    rows = collect(study, out)
    if not rows:
        print(f"no runs of the {study} study under {out}")
        return
    write_csv(out / f"{study}.csv", rows, GAMES)
    summary = summarize(rows, samples)
    write_csv(out / f"{study}_summary.csv", summary, GAMES)
    table = markdown_table(summary)
    (out / f"{study}_summary.md").write_text(table)
    print(table)
    for path in plot(study, rows, out):
        print(f"wrote {path}")
    print(f"wrote {out / f'{study}.csv'}, {out / f'{study}_summary.csv'} and {out / f'{study}_summary.md'}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("study", choices=("reference", "settings"))
    parser.add_argument("--out", default="runs/ppo_compare", help="folder of the runs, tables and plots")
    parser.add_argument("--rllib-python", default=None,
                        help="python of an environment with the rllib extra (adds the RLlib variant)")
    parser.add_argument("--only", default=None,
                        help="run only the runs whose GAME/OPPONENT/VARIANT contains this, e.g. sequence_v0/random-v0")
    parser.add_argument("--variant", action="append", default=None,
                        help="run only this variant (exact name; repeat for more); the reference study's "
                             f"candidates ({', '.join(CANDIDATES)}) run only when named")
    parser.add_argument("--tasks", default=None,
                        help="reference study: run only these tasks, comma-separated GAME:OPPONENT, e.g. "
                             "sequence_v0:random-v0,pans_trial_v0:random-v0 (default: all four)")
    parser.add_argument("--seed", type=int, action="append", default=None,
                        help="run this seed (any whole number >= 0; repeat for more; default: 1, 2 and 3)")
    parser.add_argument("--samples", type=int, default=SAMPLES, help="learner decisions per run")
    parser.add_argument("--report-only", action="store_true", help="tabulate and plot the runs already made")
    args = parser.parse_args(argv)
    if args.seed and min(args.seed) < 0:
        parser.error(f"--seed must be a whole number >= 0, got {min(args.seed)}")
    out = pathlib.Path(args.out)
    if not args.report_only:
        run_all(args.study, out, args.rllib_python, args.only, args.samples, args.variant, args.seed,
                parse_tasks(args.tasks) if args.tasks else None)
    report(args.study, out, args.samples)


if __name__ == "__main__":
    import sys

    from agents.errors import run_command

    sys.exit(run_command(main, "python -m benchmarks.ppo_compare"))

"""The curve of an expert-iteration run: the network alone against one opponent, at each point evaluated.

    python -m benchmarks.exit_curve --opponent heuristic-v1 \\
        --point "start,0,runs/ppo-evaluate/pans_trial_v0/ppo-v3/eval-400-seed1000000-heuristic-v1.json" \\
        --point "lr 3e-4,4096,runs/exit/pans-r1-4096/eval-400-seed1000000-heuristic-v1.json" ... \\
        --out runs/exit/curve

Each ``--point SERIES,LABELS,FILE`` is one evaluation report (``training.ppo --evaluate``'s
``eval-*.json``, validated on reading) of a network after ``LABELS`` search labels, in the series
``SERIES`` (a run; ``start`` points belong to every series). Writes ``OUT.png`` (the win rate with
its 95% Wilson interval against the labels, one line a series, the start's interval shaded,
provenance in the PNG's text chunks)
and ``OUT.json`` (the points, with the provenance of this summary). The x-axis reads "labels cloned" by
default, since a control series clones a heuristic rather than a search; ``--xlabel`` names it otherwise,
and ``--ylabel`` the y-axis (in a game of several seats a win is a sole first place).
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys
from typing import Any, Sequence

from envs.provenance import image_metadata, provenance
from training.report import validate_report


def read_point(spec: str, opponent: str) -> dict[str, Any]:
    try:
        series, labels, path = spec.split(",", 2)
        labels_n = int(labels)
    except ValueError:
        raise SystemExit(f"--point takes SERIES,LABELS,FILE (LABELS a whole number), got {spec!r}") from None
    try:
        report = json.loads(pathlib.Path(path).read_text())
        validate_report(report)
    except (OSError, ValueError) as exc:
        raise SystemExit(f"{path}: not a readable evaluation report: {exc}") from None
    results = report["results"]
    if opponent not in results:
        raise SystemExit(f"{path} has no games against {opponent!r}; it has {sorted(results)}")
    r = results[opponent]
    return {"series": series, "labels": labels_n, "games": r["games"], "wins": r["wins"], "win_rate": r["win_rate"],
            "wilson95": list(r["win_rate_ci95"]), "game": report["game"], "file": path,
            "commit": report["provenance"]["commit"]}


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--point", action="append", required=True, metavar="SERIES,LABELS,FILE")
    parser.add_argument("--opponent", default="heuristic-v1")
    parser.add_argument("--title", default="")
    parser.add_argument("--xlabel", default="labels cloned", help="the x-axis' name (default: %(default)s)")
    parser.add_argument("--ylabel", default="", help="the y-axis' name (default: wins vs OPPONENT (%%))")
    parser.add_argument("--out", type=pathlib.Path, required=True, help="writes OUT.png and OUT.json")
    args = parser.parse_args(argv)
    args.ylabel = args.ylabel or f"wins vs {args.opponent} (%)"
    points = [read_point(p, args.opponent) for p in args.point]
    games = sorted({p["game"] for p in points})
    if len(games) != 1:
        parser.error(f"every point must evaluate the same game; got {games}")

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    start = [p for p in points if p["series"] == "start"]
    series = sorted({p["series"] for p in points} - {"start"})
    fig, ax = plt.subplots(figsize=(6.4, 3.6), dpi=120)
    if len(start) == 1:  # a shaded band: which later points lie inside the start's interval
        lo, hi = start[0]["wilson95"]
        ax.axhspan(100 * lo, 100 * hi, color="0.5", alpha=0.15, lw=0, label="the start's 95% interval")
    for name in series or ["start"]:
        line = sorted(start + [p for p in points if p["series"] == name], key=lambda p: p["labels"])
        x = [p["labels"] for p in line]
        y = [100 * p["win_rate"] for p in line]
        low = [100 * (p["win_rate"] - p["wilson95"][0]) for p in line]
        high = [100 * (p["wilson95"][1] - p["win_rate"]) for p in line]
        ax.errorbar(x, y, yerr=[low, high], marker="o", capsize=3, label=name)
    ax.set_xlabel(args.xlabel)
    ax.set_ylabel(args.ylabel)
    ax.set_title(args.title or f"{games[0]}: the network alone, 95% Wilson intervals", fontsize=10)
    ax.grid(alpha=0.3)
    if series:  # below the axes, where no point can hide behind it
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.18), ncol=2, fontsize=8, frameon=False)
    fig.tight_layout()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(args.out.with_suffix(".png"), metadata=image_metadata(games[0]), bbox_inches="tight")
    plt.close(fig)
    summary = {"game": games[0], "opponent": args.opponent, "xlabel": args.xlabel, "ylabel": args.ylabel,
               "points": points, "provenance": provenance(games[0])}
    args.out.with_suffix(".json").write_text(json.dumps(summary, indent=1) + "\n")
    for p in sorted(points, key=lambda p: (p["series"], p["labels"])):
        print(f"{p['series']:>12} {p['labels']:>7} labels: {p['wins']}/{p['games']} = {100 * p['win_rate']:.1f}% "
              f"[{100 * p['wilson95'][0]:.1f}, {100 * p['wilson95'][1]:.1f}]")
    return summary


if __name__ == "__main__":
    import sys

    from agents.errors import run_command

    sys.exit(run_command(main, "python -m benchmarks.exit_curve"))

"""One report and one curve for every trainer (``training.ppo``, ``training.sb3``,
``training.rllib``).

**The report** (``eval.json`` beside the policy) has one schema whichever trainer made it; build it
with :func:`make_report`, check it with :func:`validate_report`:

``format``  ``"tabletop-rl/eval-report"``; ``version`` 1
``provenance``  from :func:`envs.provenance.provenance`
``trainer``  ``"training.ppo"``, ``"training.sb3"`` or ``"training.rllib"``; ``args`` its arguments
``game``, ``config``  what the policy plays; ``policy``  its folder
``samples``  learner decisions trained on; ``cpu_seconds``  CPU time of the training (None if not measured)
``evaluation``  ``seed``, ``games_per_opponent``, ``note`` (how games were dealt and counted)
``results``  per opponent kind: ``games``, ``wins``, ``draws``, ``losses``, ``win_rate``, ``win_rate_ci95``
(the Wilson 95% interval), ``games_by_side``, ``wins_by_side``, ``win_rate_by_side``, ...
(:func:`training.evaluation.evaluate_module` returns exactly these)

**The curve**: ``curve.csv`` (one row per evaluation), ``curve.png`` (win rate per opponent with its
Wilson band) and TensorBoard scalars under ``tb/``; the CSV columns and the TensorBoard tags are the
same names (``win_rate_vs_<kind>``, ``win_low_vs_<kind>``, ``win_high_vs_<kind>``, the trainer's
losses...), with ``step`` the learner decisions so far.
"""

from __future__ import annotations

import csv
import json
import math
import pathlib
from typing import Any

FORMAT = "tabletop-rl/eval-report"
VERSION = 1
TRAINERS = ("training.ppo", "training.sb3", "training.rllib")
#: the keys every report has, with their types
REPORT_KEYS: dict[str, type | tuple[type, ...]] = {
    "format": str, "version": int, "provenance": dict, "trainer": str, "args": dict, "game": str, "config": dict,
    "policy": str, "samples": int, "cpu_seconds": (int, float, type(None)), "evaluation": dict, "results": dict,
}
#: the keys of each opponent's result, with their types
RESULT_KEYS: dict[str, type | tuple[type, ...]] = {
    "opponent": str, "games": int, "wins": int, "draws": int, "losses": int, "win_rate": (int, float),
    "win_rate_ci95": list, "games_by_side": list, "wins_by_side": list, "win_rate_by_side": list,
}
EVALUATION_KEYS = ("seed", "games_per_opponent", "note")
CURVE_FILES = ("curve.csv", "curve.png", "tb")


def make_report(
    *, trainer: str, args: dict[str, Any], game: str, config: dict[str, Any], policy: str, samples: int,
    cpu_seconds: float | None, seed: int, games: int, note: str, results: dict[str, dict[str, Any]],
    **extra: Any,
) -> dict[str, Any]:
    """A report in the one schema (``extra`` adds trainer-specific keys, such as ``curve``)."""
    from envs.provenance import provenance

    report = {
        "format": FORMAT,
        "version": VERSION,
        "provenance": provenance([game]),
        "trainer": trainer,
        "args": args,
        "game": game,
        "config": config,
        "policy": policy,
        "samples": int(samples),
        "cpu_seconds": None if cpu_seconds is None else round(float(cpu_seconds), 1),
        "evaluation": {"seed": seed, "games_per_opponent": games, "note": note},
        "results": results,
        **extra,
    }
    validate_report(report)
    return report


def validate_report(report: Any) -> None:
    """Raise ``ValueError`` naming the first thing in ``report`` that is not the schema's."""
    if not isinstance(report, dict):
        raise ValueError(f"a report is a JSON object, got {type(report).__name__}")

    def check(where: str, obj: dict[str, Any], keys: dict[str, Any]) -> None:
        for key, kind in keys.items():
            if key not in obj:
                raise ValueError(f"{where} lacks {key!r}; it needs {sorted(keys)}")
            if isinstance(obj[key], bool) or not isinstance(obj[key], kind):
                raise ValueError(f"{where}[{key!r}] is {type(obj[key]).__name__}, expected {kind}")

    check("the report", report, REPORT_KEYS)
    from envs.provenance import check_provenance

    try:
        check_provenance(report["provenance"], "the report's provenance")
    except Exception as exc:  # StateError: said what is wrong with the block
        raise ValueError(str(exc)) from exc
    if report["format"] != FORMAT or report["version"] != VERSION:
        raise ValueError(f"format {report['format']!r} version {report['version']}, expected {FORMAT!r} {VERSION}")
    if report["trainer"] not in TRAINERS:
        raise ValueError(f"trainer {report['trainer']!r} is not one of {TRAINERS}")
    for key in EVALUATION_KEYS:
        if key not in report["evaluation"]:
            raise ValueError(f"the report's evaluation lacks {key!r}; it needs {list(EVALUATION_KEYS)}")
    if not report["results"]:
        raise ValueError("the report has no results: evaluate against at least one opponent")
    for kind, result in report["results"].items():
        if not isinstance(result, dict):
            raise ValueError(f"results[{kind!r}] is not an object")
        check(f"results[{kind!r}]", result, RESULT_KEYS)
        if result["wins"] + result["draws"] + result["losses"] != result["games"]:
            raise ValueError(f"results[{kind!r}]: wins + draws + losses is not games")
        low, high = result["win_rate_ci95"]
        if not 0 <= low <= result["win_rate"] <= high <= 1:
            raise ValueError(f"results[{kind!r}]: win_rate_ci95 {[low, high]} does not hold win_rate {result['win_rate']}")


def write_report(folder: pathlib.Path, report: dict[str, Any], name: str = "eval.json") -> pathlib.Path:
    """Validate ``report`` and write it to ``folder/name``."""
    validate_report(report)
    path = pathlib.Path(folder) / name
    path.write_text(json.dumps(report, indent=2) + "\n")
    return path


def curve_row(step: int, results: dict[str, dict[str, Any]], **values: Any) -> dict[str, Any]:
    """One curve row: ``step``, the given values, and per opponent kind its win rate and Wilson band."""
    row: dict[str, Any] = {"step": step, **values}
    for kind, r in results.items():
        row[f"win_rate_vs_{kind}"] = r["win_rate"]
        row[f"win_low_vs_{kind}"] = r["win_rate_ci95"][0]
        row[f"win_high_vs_{kind}"] = r["win_rate_ci95"][1]
    return row


def tensorboard_writer(folder: pathlib.Path, game: str, **kwargs: Any) -> Any:
    """A TensorBoard ``SummaryWriter`` on ``folder`` whose log starts with the run's provenance (a text
    summary under the tag ``provenance``, shown on TensorBoard's Text tab)."""
    from torch.utils.tensorboard import SummaryWriter

    from envs.provenance import provenance

    writer = SummaryWriter(str(folder), **kwargs)
    writer.add_text("provenance", "    " + json.dumps(provenance([game]), indent=1).replace("\n", "\n    "))
    return writer


def write_csv(path: pathlib.Path, rows: list[dict[str, Any]], games: list[str],
              fieldnames: list[str] | None = None) -> None:
    """A CSV of ``rows`` whose first line is ``# provenance: {...}`` (the block for ``games``), as every
    CSV the software writes starts; read it back with :func:`read_csv`, or with
    ``pandas.read_csv(path, comment="#")``."""
    from envs.provenance import provenance

    with open(path, "w", newline="") as fh:
        fh.write(f"# provenance: {json.dumps(provenance(games), sort_keys=True)}\n")
        writer = csv.DictWriter(fh, fieldnames=fieldnames or list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def read_csv(path: pathlib.Path) -> tuple[dict[str, Any] | None, list[dict[str, str]]]:
    """A CSV :func:`write_csv` wrote, as (its provenance block, or None for a file without one; its rows
    as strings)."""
    with open(path, newline="") as fh:
        text = fh.read().splitlines()
    block = None
    if text and text[0].startswith("# provenance: "):
        block = json.loads(text[0][len("# provenance: "):])
        text = text[1:]
    return block, list(csv.DictReader(text))


def read_curve(path: pathlib.Path) -> tuple[dict[str, Any] | None, list[dict[str, float]]]:
    """``curve.csv`` as (its provenance block or None for a file written before it had one, its rows as
    numbers; an empty cell is NaN)."""
    block, rows = read_csv(path)
    return block, [{k: float(v) if v not in ("", None) else math.nan for k, v in row.items()} for row in rows]


def log_scalars(writer: Any, row: dict[str, Any]) -> None:
    """Every number of a curve row to TensorBoard, under the CSV column's name, at the row's step."""
    for key, value in row.items():
        if key != "step" and isinstance(value, (int, float)) and not isinstance(value, bool):
            writer.add_scalar(key, value, row["step"])


def write_curve(curve: list[dict[str, Any]], run_dir: pathlib.Path, title: str, game: str) -> None:
    """``curve.csv`` (one row per evaluation) and ``curve.png`` (win rates with Wilson bands).

    The CSV's first line is ``# provenance: {...}`` (read it with ``pandas.read_csv(path, comment="#")`` or
    :func:`read_curve`); the PNG carries the same block in its text chunks."""
    import matplotlib

    from envs.provenance import image_metadata

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    keys = sorted({k for row in curve for k in row}, key=lambda k: (k != "step", k != "cpu_seconds", k))
    write_csv(run_dir / "curve.csv", curve, [game], fieldnames=keys)
    fig, ax = plt.subplots(figsize=(6.4, 3.8))
    steps = [row["step"] for row in curve]
    for key in sorted(k for k in keys if k.startswith("win_rate_vs_")):
        kind = key[len("win_rate_vs_") :]
        ax.plot(steps, [row.get(key, math.nan) for row in curve], marker="o", label=kind)
        ax.fill_between(
            steps,
            [row.get(f"win_low_vs_{kind}", math.nan) for row in curve],
            [row.get(f"win_high_vs_{kind}", math.nan) for row in curve],
            alpha=0.2,
        )
    ax.set_ylim(0, 1)
    ax.set_xlabel("learner steps")
    ax.set_ylabel("win rate (greedy policy)")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(run_dir / "curve.png", dpi=110, metadata=image_metadata([game]))
    plt.close(fig)




def write_args(folder: pathlib.Path, args: dict[str, Any], game: str, **extra: Any) -> pathlib.Path:
    """``args.json``: the run's arguments (and ``extra``) with their ``provenance``."""
    from envs.provenance import provenance

    path = pathlib.Path(folder) / "args.json"
    path.write_text(json.dumps({**args, **extra, "provenance": provenance([game])}, indent=2) + "\n")
    return path

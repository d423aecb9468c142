"""Table-steps per second of the numpy Sequence backend, beside PettingZoo's connect_four_v3 in the same run.

    python -m benchmarks.vector_sequence                       # N = 1024, the default config
    python -m benchmarks.vector_sequence --num-envs 256 --config num_teams=3 --seconds 3 --repeats 3

Each round times, interleaved: connect_four_v3's ``raw_env`` random play (``benchmarks.timing.time_env``,
steps/s) and N tables on ``envs.vector``'s numpy backend (``SequenceNumpyBackend``, ``copy=False``), where
every step draws one uniformly random legal action per table from the stacked masks
(``VectorTables.sample_legal``, as ``benchmarks.vector`` does), steps all tables, and deals a new game (the
reference deal, per table) at every table that finished. Reported: table-steps per second of that whole
loop, and of ``VectorTables.step`` alone (stepping and dealing, without the draw), as ratios to
connect_four's raw_env steps/s (best round of each). The goal: the whole loop at N = 1024 >= 20x
connect_four's raw_env.
Runs with one numpy/BLAS thread. Writes ``vector_sequence.json`` with a provenance block.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import pathlib  # noqa: E402
import platform  # noqa: E402
import warnings  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402

from benchmarks.timing import time_env  # noqa: E402
from benchmarks.vector import time_vector  # noqa: E402
import envs.vector  # noqa: E402
from envs.provenance import provenance  # noqa: E402

GOAL = 20.0


def time_backend(config: dict[str, Any], num_envs: int, seconds: float, seed: int = 0) -> dict[str, float]:
    """Table-steps/s of random legal play on ``num_envs`` tables (choosing, stepping, dealing anew): the
    loop of :func:`benchmarks.vector.time_vector` on the numpy backend."""
    tables = envs.vector.make("sequence_v0", num_envs, backend="numpy", copy=False, **config)
    return time_vector(tables, seconds, seed=seed)


def run(config: dict[str, Any], num_envs: int, seconds: float, repeats: int) -> dict[str, Any]:
    from pettingzoo.classic import connect_four_v3

    c4, vec = [], []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for r in range(repeats):
            c4.append(time_env(connect_four_v3.raw_env, seconds))
            vec.append(time_backend(config, num_envs, seconds, seed=r))
    c4_best = max(x["steps_per_s"] for x in c4)
    loop = max(x["steps_per_s"] for x in vec)
    step_only = max(x["step_only_per_s"] for x in vec)
    return {
        "config": config, "num_envs": num_envs, "seconds": seconds, "repeats": repeats,
        "connect_four_raw_env_steps_per_s": c4_best,
        "table_steps_per_s": loop, "step_only_table_steps_per_s": step_only,
        "ratio": loop / c4_best, "step_only_ratio": step_only / c4_best, "goal": GOAL,
        "rounds": {"connect_four_v3_raw_env": c4, "sequence_numpy": vec},
        "machine": {"python": platform.python_version(), "numpy": np.__version__, "processor": platform.machine(),
                    "cpus": os.cpu_count(), "load_average": list(os.getloadavg()) if hasattr(os, "getloadavg") else None},
        "provenance": provenance(["sequence_v0"]),
    }


def parse_config(items: list[str]) -> dict[str, Any]:
    config: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep:
            raise SystemExit(f"--config takes key=value pairs (e.g. num_teams=3), got {item!r}")
        config[key] = json.loads(value) if value not in ("printed", "generated") else value
    return config


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--num-envs", type=int, default=1024, help="tables stepped together (default: %(default)s)")
    parser.add_argument("--config", nargs="*", default=[], help="Sequence config keywords as key=value")
    parser.add_argument("--seconds", type=float, default=2.0, help="seconds per measurement (default: %(default)s)")
    parser.add_argument("--repeats", type=int, default=3, help="rounds; the best counts (default: %(default)s)")
    parser.add_argument("--out", default="results/benchmark", help="output folder (default: %(default)s)")
    args = parser.parse_args(argv)
    report = run(parse_config(args.config), args.num_envs, args.seconds, args.repeats)
    print(f"connect_four_v3 raw_env: {report['connect_four_raw_env_steps_per_s']:,.0f} steps/s")
    print(f"sequence numpy backend, N={args.num_envs}: {report['table_steps_per_s']:,.0f} table-steps/s "
          f"({report['ratio']:.1f}x connect_four raw_env; goal {GOAL:.0f}x); step() alone, with its deals "
          f"{report['step_only_table_steps_per_s']:,.0f}/s ({report['step_only_ratio']:.1f}x)")
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "vector_sequence.json").write_text(json.dumps(report, indent=2))
    print(f"wrote {out / 'vector_sequence.json'}")


if __name__ == "__main__":
    import sys

    from agents.errors import run_command

    sys.exit(run_command(main, "python -m benchmarks.vector_sequence"))

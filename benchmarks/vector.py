"""Speed of ``envs.vector``: table-steps per second of random legal play, beside raw_env and connect_four.

    python -m benchmarks.vector                                   # every game, every backend, N = 64 and 1024
    python -m benchmarks.vector --games sequence_v0 --num-envs 256 --seconds 3 --out results/vector.json

For every entry of each game's ``benchmark_configs`` and every backend ``envs.vector`` has for it, the
batch is reset and then stepped with one uniformly random legal action per table, drawn from the
stacked masks (``VectorTables.sample_legal``, timed with the step) on a batch made with ``copy=False``
(observations handed out as the backend's buffers); the figure is table-steps per second
(``num_envs`` per call). PettingZoo's ``connect_four_v3`` raw_env and the game's own raw_env are timed
with the AEC loop of :mod:`benchmarks.run` in the same rounds, interleaved, and the ratios divide best by
best. A batch timed for a few seconds plays only the first actions of long games (Wizard Arena, Dojo),
whose cost per step differs from a whole game's, so raw_env is also timed as one table of the batch
plays (``÷prefix``): as many actions as each table took, going on into a new game (its reset timed, as
the batch's new deals are) where one ends, then starting afresh. One raw_env plays one game at a
time, whose state stays in the processor's caches; a batch holds N games. So raw_env is timed a third
way, as one would batch without ``envs.vector``: N raw_envs, one game each, stepped in turn for as many
actions each (``÷N raw``).

Goals: the python backend no slower per table-step than N raw_envs (``÷N raw`` >= 1; ``÷prefix`` is
reported beside it, and at large N is lower: the cost of holding N games at once); a numpy backend
at N = 1024 at least 20x connect_four's raw_env. ``python -m benchmarks.run`` prints the same table
after its own. Run with one thread (``OMP_NUM_THREADS=1``) for the one-core figures.
"""

from __future__ import annotations

import argparse
import functools
import json
import pathlib
import time
import warnings
from typing import Any

import numpy as np

import envs
import envs.vector
from benchmarks.timing import time_env
from envs.provenance import provenance

#: (relative to, at least, from this batch size on) per backend; a backend not listed has no goal.
GOALS = {"python": ("raw_env_tables", 1.0, 1), "numpy": ("c4_raw_env", 20.0, 1024)}


def _act(env: Any, rng: np.random.Generator, seed: int) -> int:
    """One random legal action on ``env``, after dealing it game ``seed`` if its game is over; returns
    the next unused seed."""
    obs, _reward, term, trunc, _info = env.last()
    if term or trunc:
        env.reset(seed=seed)
        seed += 1
        obs = env.last()[0]
    legal = np.flatnonzero(obs["action_mask"])
    env.step(int(legal[rng.integers(len(legal))]))
    return seed


def time_env_prefix(make: Any, seconds: float, prefix: int) -> dict[str, float]:
    """:func:`benchmarks.timing.time_env`'s AEC loop as one table of a batch plays: ``prefix`` actions,
    going on into a new game (its reset timed, as the batch's new deals are) wherever one ends, then cut.
    The reset that starts each run of ``prefix`` actions is not timed (nor is the batch's first deal)."""
    env = make()
    rng = np.random.default_rng(0)
    steps = seed = 0
    timed = 0.0
    while timed < seconds:
        env.reset(seed=seed)
        seed += 1
        start = time.perf_counter()
        for _ in range(prefix):
            seed = _act(env, rng, seed)
        steps += prefix
        timed += time.perf_counter() - start
    return {"steps_per_s": steps / timed, "prefix": prefix}


def time_env_tables(make: Any, num_envs: int, seconds: float, prefix: int) -> dict[str, float]:
    """raw_env stepped as a batch is without ``envs.vector``: ``num_envs`` environments, one game each,
    each taking one action in turn, ``prefix`` actions each, going on into a new game (its reset timed)
    wherever one ends; the resets that start each round of ``prefix`` actions are not timed. The same
    number of live games as the batch holds, so the same memory to keep in the caches."""
    tables = [make() for _ in range(num_envs)]
    rng = np.random.default_rng(0)
    steps = seed = 0
    timed = 0.0
    while timed < seconds:
        for env in tables:
            env.reset(seed=seed)
            seed += 1
        start = time.perf_counter()
        for _ in range(prefix):
            for env in tables:
                seed = _act(env, rng, seed)
            steps += num_envs
            if timed + time.perf_counter() - start >= seconds:
                break
        timed += time.perf_counter() - start
    return {"steps_per_s": steps / timed, "prefix": prefix, "num_envs": num_envs}


def time_vector(tables: envs.vector.VectorTables, seconds: float, seed: int = 0) -> dict[str, float]:
    """Table-steps/s (and finished games/s) of random legal play on a batch of tables dealt from ``seed``;
    ``step_only_per_s``: the same counting only the time in ``step`` (stepping and dealing anew, without
    the draw); ``calls``: how many steps each table took (games longer than that were timed on their
    first ``calls`` actions only)."""
    rng = np.random.default_rng(seed)
    tables.reset(seed=seed)
    calls = games = 0
    in_step = 0.0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        actions = tables.sample_legal(rng)
        t0 = time.perf_counter()
        _obs, _rewards, _terms, _truncs, infos = tables.step(actions)  # finished tables are dealt anew
        in_step += time.perf_counter() - t0
        games += int(infos["_final_returns"].sum())
        calls += 1
    elapsed = time.perf_counter() - start
    steps = calls * tables.num_envs
    return {"steps_per_s": steps / elapsed, "step_only_per_s": steps / in_step, "games_per_s": games / elapsed,
            "calls": calls}


def run(games: list[str], seconds: float, repeats: int, num_envs: int | list[int],
        backends: list[str] | None = None) -> dict[str, Any]:
    """Every game configuration on every backend at every batch size, with both raw_env loops re-timed
    beside each."""
    from pettingzoo.classic import connect_four_v3

    sizes = [num_envs] if isinstance(num_envs, int) else list(num_envs)
    rows = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in games:
            raw_env = getattr(envs, name).raw_env
            for label, config in envs.game_class(name).benchmark_configs.items():
                chosen = [b for b in envs.vector.available_backends(name) if backends is None or b in backends]
                make_raw = functools.partial(raw_env, **config)
                for n in sizes:
                    rows.append(time_config(name, label, config, n, chosen, make_raw, connect_four_v3.raw_env,
                                            seconds, repeats))
    return {"provenance": provenance(games), "seconds_per_measurement": seconds, "repeats": repeats,
            "num_envs": sizes, "goals": {b: {"relative_to": ref, "at_least": g, "from_num_envs": n}
                                                  for b, (ref, g, n) in GOALS.items()},
            "results": rows}


def time_config(name: str, label: str, config: dict[str, Any], num_envs: int, chosen: list[str], make_raw: Any,
                make_c4: Any, seconds: float, repeats: int) -> dict[str, Any]:
    """One row of the report: one game configuration at one batch size, on every chosen backend."""
    tables = {b: envs.vector.make(name, num_envs, seed=0, backend=b, copy=False, **config) for b in chosen}
    prefixed = [f"raw_env_prefix_{b}" for b in chosen]
    runs: dict[str, list[dict[str, float]]] = {
        k: [] for k in ("c4_raw_env", "raw_env", "raw_env_tables", *chosen, *prefixed)}
    for _ in range(repeats):
        runs["c4_raw_env"].append(time_env(make_c4, seconds))
        runs["raw_env"].append(time_env(make_raw, seconds))
        for b, t in tables.items():
            runs[b].append(time_vector(t, seconds))
            runs[f"raw_env_prefix_{b}"].append(time_env_prefix(make_raw, seconds, runs[b][-1]["calls"]))
        # num_envs raw_envs on the first backend's prefix (the python backend's, when it is timed)
        runs["raw_env_tables"].append(time_env_tables(make_raw, num_envs, seconds, runs[chosen[0]][-1]["calls"]))
    best = {k: max(v, key=lambda r: r["steps_per_s"]) for k, v in runs.items()}
    row: dict[str, Any] = {"game": name, "config": label, "num_envs": num_envs, **best, "ratios": {}}
    for b in chosen:
        row["ratios"][b] = {ref: best[b]["steps_per_s"] / best[ref]["steps_per_s"]
                            for ref in ("c4_raw_env", "raw_env", "raw_env_tables")}
        row["ratios"][b]["raw_env_prefix"] = best[b]["steps_per_s"] / best[f"raw_env_prefix_{b}"]["steps_per_s"]
    row["meets_goals"] = {b: row["ratios"][b][GOALS[b][0]] >= GOALS[b][1]
                          for b in chosen if b in GOALS and num_envs >= GOALS[b][2]}
    return row


def print_table(report: dict[str, Any]) -> None:
    sizes = ", ".join(str(n) for n in report["num_envs"])
    lines = [f"envs.vector, N = {sizes} tables, random legal actions from the stacked masks",
             f"{'game':<16} {'config':<22} {'backend':<8} {'N':>5} {'table-steps/s':>13} {'raw_env/s':>10} "
             f"{'c4 raw/s':>9} {'÷raw_env':>9} {'÷prefix':>8} {'÷N raw':>7} {'÷c4raw':>8}"]
    for row in report["results"]:
        for b, ratios in row["ratios"].items():
            mark = "" if row["meets_goals"].get(b, True) else "!"
            lines.append(f"{row['game']:<16} {row['config']:<22} {b:<8} {row['num_envs']:>5} {row[b]['steps_per_s']:>13,.0f} "
                         f"{row['raw_env']['steps_per_s']:>10,.0f} {row['c4_raw_env']['steps_per_s']:>9,.0f} "
                         f"{ratios['raw_env']:>9.2f} {ratios['raw_env_prefix']:>8.2f} {ratios['raw_env_tables']:>7.2f} "
                         f"{ratios['c4_raw_env']:>7.2f}{mark}")
    lines.append("÷prefix: against one raw_env playing as one table did: as many actions as each table took in the "
                 "batch, into a new game where one ended (a batch timed for a few seconds sees the start of long games)")
    lines.append("÷N raw: against N raw_envs, one game each, stepped in turn for as many actions each (as many live "
                 "games as the batch)")
    lines.append("goals: python backend >= 1x ÷N raw; numpy backend >= 20x connect_four raw_env at N >= 1024; "
                 "'!' marks a ratio below its goal")
    print("\n".join(lines))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--games", nargs="*", default=list(envs.NAMES), help="games to time (default: all)")
    parser.add_argument("--backends", nargs="*", default=None, help="backends to time (default: every one available)")
    parser.add_argument("--num-envs", type=int, nargs="+", default=[64, 1024],
                        help="tables per batch; each size is timed (default: %(default)s)")
    parser.add_argument("--seconds", type=float, default=2.0, help="seconds per measurement (default: %(default)s)")
    parser.add_argument("--repeats", type=int, default=2, help="rounds; the best counts (default: %(default)s)")
    parser.add_argument("--out", default="results/benchmark/vector.json", help="JSON report (default: %(default)s)")
    args = parser.parse_args(argv)
    unknown = sorted(set(args.games) - set(envs.NAMES))
    if unknown:
        parser.error(f"unknown games {unknown}; choose from {list(envs.NAMES)}")
    if min(args.num_envs) < 1:
        parser.error("--num-envs must be at least 1")
    report = run(args.games, args.seconds, args.repeats, args.num_envs, args.backends)
    print_table(report)
    out = pathlib.Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2))
    print(f"wrote {out}")


if __name__ == "__main__":
    import sys

    from agents.errors import run_command

    sys.exit(run_command(main, "python -m benchmarks.vector"))

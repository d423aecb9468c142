"""The teacher's labels for the trainer's tables, optionally computed in worker processes.

Cloning and DAgger ask the teacher (a heuristic) for its choice at every learner decision, and a
heuristic that searches is slow: Pan's Trial's ``heuristic-v1`` takes several milliseconds a
decision, about 70% of a DAgger run's CPU time on one core. :class:`TeacherLabels` splits the
tables between this process and ``workers`` extra processes so both cores of a small machine work.

Table ``i`` is always labelled by the same process, by a teacher made for that table and seat with
the same seed as without workers, so the labels do not depend on the number of workers. This process
also steps the tables, runs the network and plays the opponents, so it labels the smallest share:
of every ``2·workers + 1`` tables one is labelled here and two by each worker. Measured on a 2-core
machine, Pan's Trial DAgger against experienced-v1 (teacher 70% of the CPU time): about 260 learner
steps per wall-second in one process, about 300 with one worker (either split, a half or a third
here); the processes wait on each other for the rest of each step, so expect 1.15–1.2×, not 2×.

Workers receive the observation and player view the seat would be handed (what a teacher at that
seat may know), never the full state, and return the actions with the CPU seconds they spent, so
the trainer's CPU accounting stays honest.
"""

from __future__ import annotations

import multiprocessing
import os
import threading
import time
from concurrent.futures import Future, ProcessPoolExecutor
from typing import Any

import agents
from agents.registry import qualify
import envs

#: one job: (table index, seat, observation dict, player view), and optionally the actions a search teacher
#: must value besides its own candidates (the learner's choice there)
Job = tuple[Any, ...]
#: one label: the teacher's action and, when values are asked for, the search's (action, mean value) pairs
#: (empty for a forced move)
Label = tuple[int, list[tuple[int, float]]]


class _Teachers:
    """One process's teachers, one per (table, seat), made on first use."""

    def __init__(self, game_name: str, config: dict[str, Any], kind: str, seed: int,
                 kwargs: dict[str, Any] | None = None) -> None:
        self.game = envs.make_game(game_name, **config)
        self.agent_id = qualify(game_name, kind)
        self.seed = seed
        #: what the teacher is made with beyond its id (a search teacher's base and settings)
        self.kwargs = dict(kwargs or {})
        self.cache: dict[tuple[int, int], agents.Agent] = {}

    def label(self, jobs: list[Job], values: bool = False) -> list[Label]:
        out: list[Label] = []
        for job in jobs:
            i, seat, obs, view = job[:4]
            teacher = self.cache.get((i, seat))
            if teacher is None:
                teacher = self.cache[(i, seat)] = agents.make(self.agent_id, seed=self.seed * 7 + i, **self.kwargs)
            teacher.reset(seat, self.game)  # heuristics decide from the position; no memory kept
            if values:
                action, vals = teacher.search_values(obs, view, include=job[4] if len(job) > 4 else ())
                out.append((int(action), sorted(vals.items())))
            else:
                out.append((int(teacher.act(obs, view)), []))
        return out


_WORKER: _Teachers | None = None


def _start_worker(game_name: str, config: dict[str, Any], kind: str, seed: int, kwargs: dict[str, Any],
                  parent: int) -> None:
    global _WORKER
    _WORKER = _Teachers(game_name, config, kind, seed, kwargs)
    threading.Thread(target=_exit_with_parent, args=(parent,), daemon=True).start()


def _exit_with_parent(parent: int) -> None:
    """A trainer stopped by a signal cannot shut its pool down: its workers leave on their own."""
    while os.getppid() == parent:
        time.sleep(1.0)
    os._exit(0)


def _worker_label(jobs: list[Job], values: bool = False) -> tuple[list[Label], float]:
    assert _WORKER is not None, "worker not started"
    t0 = time.process_time()
    out = _WORKER.label(jobs, values)
    return out, time.process_time() - t0


class TeacherLabels:
    """``actions(inputs)``: the teacher's choice for the seat to act at each table, from what that seat is
    handed: ``inputs`` lists ``(table, seat, observation dict, player view)`` (``Tables.seat_inputs``).

    ``kwargs`` make the teacher beyond its id: a search teacher's ``base`` (an agent id or a policy folder,
    the agent it searches over: search over the network being trained is the teacher of expert
    iteration) and ``search`` settings."""

    def __init__(self, game_name: str, config: dict[str, Any], kind: str, seed: int, workers: int = 0,
                 kwargs: dict[str, Any] | None = None) -> None:
        if not isinstance(workers, int) or workers < 0:
            raise ValueError(f"teacher workers must be a whole number >= 0, got {workers!r}")
        self.local = _Teachers(game_name, config, kind, seed, kwargs)
        # "spawn": a fresh interpreter per worker (no copy of torch's threads or the trainer's memory).
        context = multiprocessing.get_context("spawn")
        start = (game_name, config, kind, seed, dict(kwargs or {}), os.getpid())
        self.pools = [
            ProcessPoolExecutor(1, mp_context=context, initializer=_start_worker, initargs=start) for _ in range(workers)
        ]
        #: CPU seconds the workers spent labelling since the last :meth:`take_worker_seconds`
        self.worker_seconds = 0.0

    def actions(self, inputs: list[Job]) -> list[int]:
        return [action for action, _ in self.labels(inputs)]

    def labels(self, inputs: list[Job], values: bool = False) -> list[Label]:
        """The teacher's label for each job: its action and, with ``values`` (a search teacher only), the
        mean value of every action it tried, the job's extra actions (its fifth element) among them."""
        jobs: list[list[Job]] = [[] for _ in range(len(self.pools) + 1)]
        for job in inputs:
            jobs[self.process_of(job[0])].append(job)
        futures: list[Future | None] = [
            pool.submit(_worker_label, jobs[k + 1], values) if jobs[k + 1] else None
            for k, pool in enumerate(self.pools)
        ]
        labels = {}
        for job, label in zip(jobs[0], self.local.label(jobs[0], values)):
            labels[job[0]] = label
        for k, future in enumerate(futures):
            if future is None:
                continue
            out, seconds = future.result()
            self.worker_seconds += seconds
            for job, label in zip(jobs[k + 1], out):
                labels[job[0]] = label
        return [labels[job[0]] for job in inputs]

    def process_of(self, table: int) -> int:
        """Which process labels ``table``: 0 this one, ``k`` the ``k``-th worker."""
        workers = len(self.pools)
        slot = table % (2 * workers + 1)
        return 0 if slot == 0 else 1 + (slot - 1) % workers  # slot is 0 whenever there is no worker

    def take_worker_seconds(self) -> float:
        seconds, self.worker_seconds = self.worker_seconds, 0.0
        return seconds

    def close(self) -> None:
        for pool in self.pools:
            pool.shutdown(wait=True, cancel_futures=True)
        self.pools = []

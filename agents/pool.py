"""Many games at once: one function mapped over a list of tasks, in this process, in a local process
pool, or on a Ray cluster.

The league (:mod:`training.league`), the tournament (:mod:`tools.tournament`) and the simulator
(:mod:`tools.simulate`) play their games through :func:`map_unordered`. Every task carries its own
seeds, so what a game does depends on its task alone, never on the worker that played it or on the
order the results came back in: the same tasks give the same results in one process, in a local
pool and on a cluster.

``ray_address`` sends the tasks to Ray's process pool (``ray.util.multiprocessing``, installed by
the ``rllib`` extra) on the cluster at that address: ``"auto"`` for a cluster started on this
machine with ``ray start --head``, ``"HOST:6379"`` for another machine's head node, or
``"ray://HOST:10001"`` through Ray Client. Every node needs this package installed, at the same
version, because the workers import the function by name; agents registered at run time (not on
``import agents``) do not exist there. Results travel back to the caller, so files (game records)
are written where the command runs, not on the nodes.
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable, Iterable, Iterator
from typing import Any, TypeVar

T = TypeVar("T")
R = TypeVar("R")

#: What to install for ``ray_address`` when Ray is missing.
RAY_EXTRA = "pip install 'tabletop-rl[rllib]'"


class _Indexed:
    """``fn`` applied to ``(index, task)``, giving ``(index, result)``: picklable when ``fn`` is."""

    def __init__(self, fn: Callable[[Any], Any]) -> None:
        self.fn = fn

    def __call__(self, item: tuple[int, Any]) -> tuple[int, Any]:
        index, task = item
        return index, self.fn(task)


def check_workers(workers: Any, name: str = "workers") -> int | None:
    """``workers`` if it is None or an integer >= 1; otherwise a ValueError naming ``name``."""
    if workers is None:
        return None
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ValueError(f"{name} must be an integer >= 1 (or left out), got {workers!r}")
    return workers


def map_unordered(
    fn: Callable[[T], R],
    tasks: Iterable[T],
    workers: int | None = None,
    ray_address: str | None = None,
    start_method: str | None = None,
    chunksize: int = 1,
) -> Iterator[tuple[int, R]]:
    """Yield ``(i, fn(tasks[i]))`` for every task, in the order the results arrive.

    ``fn`` must be a module-level function (picklable by name) and each task picklable. Without
    ``ray_address``, ``workers`` processes of a local pool play the tasks (``start_method``:
    ``fork``, ``spawn`` or ``forkserver``, default the platform's), or this process alone when
    ``workers`` is 1 or None or there is a single task. With ``ray_address``, Ray's pool on that
    cluster plays them, with ``workers`` processes or, when None, one per CPU of the cluster.

    Close the iterator to stop early (``with contextlib.closing(map_unordered(...)) as results``):
    the pool's workers are stopped and no further task starts. Bad settings are refused when this
    is called, before any task runs; the pool itself starts when the first result is asked for.
    """
    items = list(enumerate(tasks))
    workers = check_workers(workers)
    if isinstance(chunksize, bool) or not isinstance(chunksize, int) or chunksize < 1:
        raise ValueError(f"chunksize must be an integer >= 1, got {chunksize!r}")
    if ray_address is not None:
        if start_method is not None:
            raise ValueError(f"start_method={start_method!r} applies to the local pool only; "
                             "leave it out with ray_address (Ray starts its own workers)")
        check_ray_address(ray_address)
        return _pooled(lambda: ray_pool(ray_address, workers), fn, items, chunksize)
    if workers is None or workers <= 1 or len(items) <= 1:
        return ((index, fn(task)) for index, task in items)
    context = multiprocessing.get_context(start_method)  # a bad method fails here, before any work
    return _pooled(lambda: context.Pool(processes=workers), fn, items, chunksize)


def _pooled(make_pool: Callable[[], Any], fn: Callable[[Any], Any], items: list[tuple[int, Any]],
            chunksize: int) -> Iterator[tuple[int, Any]]:
    pool = make_pool()  # started on the first result asked for, so an iterator never read starts nothing
    try:
        yield from pool.imap_unordered(_Indexed(fn), items, chunksize=chunksize)
    finally:
        pool.terminate()


def map_ordered(fn: Callable[[T], R], tasks: Iterable[T], workers: int | None = None, ray_address: str | None = None,
                start_method: str | None = None, chunksize: int = 1,
                on_result: Callable[[int, R], None] | None = None) -> list[R]:
    """``[fn(task) for task in tasks]`` played as :func:`map_unordered` plays them;
    ``on_result(i, result)`` is called as each arrives (a progress bar, say)."""
    results: dict[int, R] = {}
    for index, result in map_unordered(fn, tasks, workers, ray_address, start_method, chunksize):
        results[index] = result
        if on_result is not None:
            on_result(index, result)
    return [results[i] for i in range(len(results))]


def check_ray_address(address: Any) -> str:
    """``address`` if it can name a Ray cluster and Ray is installed; otherwise a clear error."""
    if not isinstance(address, str) or not address.strip():
        raise ValueError(f"ray_address must be a cluster address such as 'auto', 'HOST:6379' or "
                         f"'ray://HOST:10001', got {address!r}")
    try:
        import ray.util.multiprocessing  # noqa: F401
    except ImportError as error:
        raise ImportError(f"--ray-address needs Ray, which is not installed ({error}); {RAY_EXTRA}") from None
    return address


def check_pool_options(workers: Any, ray_address: Any) -> None:
    """The ``--workers`` and ``--ray-address`` options of a command, checked before any game: a
    ValueError or ImportError that names the option and what it takes."""
    check_workers(workers, "--workers")
    if ray_address is not None:
        check_ray_address(ray_address)


def ray_pool(address: str, workers: int | None = None) -> Any:
    """Ray's process pool on the cluster at ``address`` (connecting this process to it unless it
    already is); ``workers`` processes, or one per CPU of the cluster when None. Each process holds
    one CPU (Ray's pool asks for none by default), so the processes spread over the nodes instead
    of crowding the first one."""
    check_ray_address(address)
    import ray
    from ray.util.multiprocessing import Pool

    if not ray.is_initialized():
        ray.init(address=address, log_to_driver=False, logging_level="warning")
    return Pool(processes=workers, ray_remote_args={"num_cpus": 1})

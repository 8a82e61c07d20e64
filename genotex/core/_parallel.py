"""Running independent tasks in worker processes, results in input order."""

from __future__ import annotations

import logging
import multiprocessing
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from typing import Any, TypeVar

__all__ = ["ordered_map", "stop_pool"]

T = TypeVar("T")
log = logging.getLogger(__name__)


def ordered_map(function: Callable[[Any], T], tasks: Sequence[Any], jobs: int) -> Iterator[T]:
    """`map` over tasks in order, in `jobs` processes when more than one is asked for.

    Workers are spawned, not forked: polars' thread pool does not survive a fork.
    Interrupted (Ctrl-C, SIGTERM) or abandoned, the workers are ended at once
    instead of being waited for.
    """
    if jobs <= 1 or len(tasks) <= 1:
        yield from map(function, tasks)
        return
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=min(jobs, len(tasks)), mp_context=context) as pool:
        try:
            yield from pool.map(function, tasks)
        except BaseException:
            stop_pool(pool)
            raise


def stop_pool(pool: ProcessPoolExecutor) -> None:
    """Cancel what has not started and end the workers now, instead of waiting for their tasks.

    Says so first (a warning on the `genotex` log): the wait for the workers to
    exit is otherwise a silence after Ctrl-C.
    """
    processes = list((getattr(pool, "_processes", None) or {}).values())  # the pool's own record
    log.warning(
        "stopping: ending %d worker process%s; their unfinished work is dropped, "
        "what finished is kept",
        len(processes),
        "" if len(processes) == 1 else "es",
    )
    pool.shutdown(wait=False, cancel_futures=True)
    for process in processes:
        process.terminate()
    for process in processes:
        process.join(timeout=5)

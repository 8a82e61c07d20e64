"""Running independent tasks in worker processes, results in input order."""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from typing import Any, TypeVar

__all__ = ["ordered_map"]

T = TypeVar("T")


def ordered_map(function: Callable[[Any], T], tasks: Sequence[Any], jobs: int) -> Iterator[T]:
    """`map` over tasks in order, in `jobs` processes when more than one is asked for.

    Workers are spawned, not forked: polars' thread pool does not survive a fork.
    """
    if jobs <= 1 or len(tasks) <= 1:
        yield from map(function, tasks)
        return
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=min(jobs, len(tasks)), mp_context=context) as pool:
        yield from pool.map(function, tasks)

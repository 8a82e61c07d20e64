"""Running independent tasks in worker processes or on a Dask cluster, results in input order."""

from __future__ import annotations

import contextlib
import logging
import multiprocessing
import os
import socket
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from typing import TYPE_CHECKING, Any, TypeVar

from ._errors import GenotexError, extra_hint

if TYPE_CHECKING:
    from dask.distributed import Client

__all__ = [
    "require_dask",
    "dask_client",
    "dask_map",
    "ordered_map",
    "stop_pool",
    "temporary_environment",
]

T = TypeVar("T")
log = logging.getLogger(__name__)
#: How long a Dask scheduler has to answer: the connection and its handshake.
CONNECT_SECONDS = 10


def require_dask(address: str | None) -> None:
    """Before any work: refuse a Dask scheduler's address when dask.distributed is not
    installed, in one sentence naming the extra (0.14 said so only after kept results were
    listed and the first problem was due).
    """
    import importlib.util

    if address is not None and importlib.util.find_spec("distributed") is None:
        raise GenotexError(
            f"a Dask scheduler ({address}) needs dask.distributed: {extra_hint('dask')}"
        )


def dask_client(address: str) -> Client:
    """A client of the Dask distributed scheduler at `address`.

    Raises `GenotexError` when dask.distributed is not installed or the scheduler
    cannot be reached, naming the address.
    """
    try:
        from dask.distributed import Client
    except ImportError:  # pragma: no cover - depends on the installation
        raise GenotexError(
            f"a Dask scheduler needs dask.distributed: {extra_hint('dask')}"
        ) from None
    _probe(address)
    try:
        return Client(address, timeout=f"{CONNECT_SECONDS}s")
    except (OSError, TimeoutError, ValueError) as exc:
        reason = str(exc).splitlines()[0] if str(exc) else exc.__class__.__name__
        raise GenotexError(f"the Dask scheduler {address} cannot be reached ({reason})") from None


def _probe(address: str) -> None:
    """Refuse, within `CONNECT_SECONDS`, a `tcp://` address that is not a Dask scheduler.

    A scheduler speaks first (distributed's handshake); a port that accepts and says nothing
    would otherwise hold `Client` forever, as its timeout does not cover the handshake.
    """
    if not address.startswith("tcp://"):
        return
    host, _, port = address[len("tcp://") :].rpartition(":")
    try:
        with socket.create_connection((host.strip("[]"), int(port)), CONNECT_SECONDS) as probe:
            probe.settimeout(CONNECT_SECONDS)
            spoke = probe.recv(1)
    except (OSError, ValueError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        if isinstance(exc, TimeoutError):
            reason = f"it said nothing within {CONNECT_SECONDS} s: not a Dask scheduler"
        raise GenotexError(f"the Dask scheduler {address} cannot be reached ({reason})") from None
    if not spoke:
        raise GenotexError(
            f"the Dask scheduler {address} cannot be reached (it closed the connection)"
        )


def ordered_map(
    function: Callable[[Any], T],
    tasks: Sequence[Any],
    jobs: int,
    *,
    scheduler: str | None = None,
) -> Iterator[T]:
    """`map` over tasks in order, in `jobs` processes, or on the Dask `scheduler` if given.

    Workers are spawned, not forked: polars' thread pool does not survive a fork.
    Interrupted (Ctrl-C, SIGTERM) or abandoned, the workers are ended at once
    instead of being waited for. On Dask, results are yielded in input order as
    well (each task is independent, so the output is that of a local run) and the
    pending tasks are cancelled when the caller stops.
    """
    if scheduler is not None:
        yield from dask_map(function, tasks, scheduler)
        return
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


def dask_map(
    function: Callable[[Any], T], tasks: Sequence[Any], address: str, *, in_order: bool = True
) -> Iterator[T]:
    """`function` over the tasks on the Dask scheduler at `address`: in input order, or as
    they finish with `in_order=False`. Pending tasks are cancelled when the caller stops.

    The function (which may carry a large table, such as the synonyms or task_info) is sent
    to the scheduler once, as a task of its own, and genotex's `GENOTEX_*` settings with
    it, so a worker runs under the limits this process was given. Being a task, not
    scattered data, it is made again on another worker when the one holding it dies. A
    scheduler or workers lost for good end the run with `GenotexError`, in one sentence;
    distributed's own log says nothing below an error meant for the user.
    """
    settings = {k: v for k, v in os.environ.items() if k.startswith("GENOTEX_")}
    with _distributed_quiet(), dask_client(address) as client:
        with warnings.catch_warnings():  # sent once by design: not a "large graph" to warn of
            warnings.filterwarnings("ignore", message=".*[Ll]arge (object|graph).*")
            shared = client.submit(_shared, (function, settings), pure=False)
            futures = client.map(_apply, tasks, shared=shared, pure=False)
        watch = _Workers(client, address)
        try:
            for future in futures if in_order else watch.as_completed(futures):
                yield watch.result(future)
        finally:
            with contextlib.suppress(Exception):  # a lost scheduler cannot cancel anything
                client.cancel(futures)


#: How often a wait for a Dask result looks at the scheduler's workers, in seconds.
_POLL_SECONDS = 1.0
#: How long a run waits on a scheduler with no worker before it stops (GENOTEX_DASK_WORKERLESS).
WORKERLESS_SECONDS = 60.0


class _Workers:
    """Waits for a Dask result while watching the scheduler: a scheduler lost, or left with no
    worker for `WORKERLESS_SECONDS` (its only worker killed, none started again), ends the
    run in one sentence; a task's own exception is raised as it is.
    """

    def __init__(self, client: Client, address: str) -> None:
        self.client, self.address = client, address
        limit = os.environ.get("GENOTEX_DASK_WORKERLESS", "")
        digits = limit.replace(".", "", 1)
        usable = digits.isascii() and digits.isdigit()  # "²" passes isdigit(), not float()
        self.limit = float(limit) if usable else WORKERLESS_SECONDS
        self.alone_since: float | None = None

    def result(self, future: Any) -> Any:
        while True:
            try:
                return future.result(timeout=_POLL_SECONDS)
            except Exception as exc:  # noqa: BLE001 - sorted below: the task's, or the run's
                if getattr(future, "status", None) == "error":
                    raise  # the task's own exception
                if not isinstance(exc, TimeoutError):
                    self._stopped(exc)
            self._check_workers()

    def as_completed(self, futures: list[Any]) -> Iterator[Any]:
        """The futures as they finish (those of one poll in input order), watching the workers
        between polls as `result` does.
        """
        from dask.distributed import wait

        pending = list(futures)
        while pending:
            try:
                done, _ = wait(pending, timeout=_POLL_SECONDS, return_when="FIRST_COMPLETED")
            except TimeoutError:
                done = set()
            except Exception as exc:  # noqa: BLE001 - the scheduler is gone
                self._stopped(exc)
            finished = [f for f in pending if f in done]
            pending = [f for f in pending if f not in done]
            if finished:
                yield from finished
            else:
                self._check_workers()

    def _check_workers(self) -> None:
        import time

        workers = self._workers()
        now = time.monotonic()
        self.alone_since = None if workers else (self.alone_since or now)
        if self.alone_since is not None and now - self.alone_since >= self.limit:
            raise GenotexError(
                f"the run on the Dask scheduler {self.address} stopped: it has had no "
                f"worker for {self.limit:g} s; start workers, or run without a scheduler"
            )

    def _workers(self) -> int:
        try:
            return len(self.client.scheduler_info().get("workers", {}))
        except Exception as exc:  # noqa: BLE001 - the scheduler is gone
            self._stopped(exc)
        return 0

    def _stopped(self, exc: BaseException) -> None:
        reason = str(exc).splitlines()[0].rstrip(": ") if str(exc) else exc.__class__.__name__
        if "cancelled" in type(exc).__name__.lower() or reason.endswith("Futures cancelled"):
            reason = f"the scheduler was lost and its tasks cancelled ({reason})"
        raise GenotexError(
            f"the run on the Dask scheduler {self.address} stopped: {reason[:200]}"
        ) from None


def _shared(payload: T) -> T:
    return payload


@contextlib.contextmanager
def _distributed_quiet() -> Iterator[None]:
    """distributed's loggers at CRITICAL while genotex runs on Dask, unless genotex's log is
    at debug (`-v`): a lost scheduler is said once, by genotex, without distributed's traces.
    """
    if log.isEnabledFor(logging.DEBUG):
        yield
        return
    with contextlib.suppress(ImportError):  # its logging configured first, then quieted
        import distributed  # noqa: F401
    families = ("distributed", "tornado", "asyncio", "bokeh")
    names = [n for n in list(logging.root.manager.loggerDict) if n.split(".")[0] in families]
    # each by name: distributed's own configuration gives `distributed.client` a level (and
    # a handler) of its own, which the family's level would not reach
    loggers = [logging.getLogger(name) for name in dict.fromkeys([*families, *names])]
    levels = [logger.level for logger in loggers]
    for logger in loggers:
        logger.setLevel(logging.CRITICAL)
    try:
        yield
    finally:
        for logger, level in zip(loggers, levels, strict=True):
            logger.setLevel(level)


def _apply(task: Any, *, shared: tuple[Callable[[Any], T], dict[str, str]]) -> T:
    """Run one task on a Dask worker under the caller's `GENOTEX_*` settings."""
    function, settings = shared
    with temporary_environment(settings):
        return function(task)


@contextlib.contextmanager
def temporary_environment(values: Mapping[str, str]) -> Iterator[None]:
    """Set environment variables while the block runs, then restore them (or remove them)."""
    saved = {name: os.environ.get(name) for name in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value

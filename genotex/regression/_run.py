"""Answer many problems: skip finished ones, run in processes or on a Dask cluster, summarize.

Results are written by the coordinating process as each problem finishes
(atomically), so an interrupted run keeps every finished answer and leaves no
half-written file; a re-run skips problems whose JSON exists and parses.
"""

from __future__ import annotations

import functools
import logging
import multiprocessing
import os
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ..core import (
    GenotexError,
    Mode,
    Outcome,
    ProblemId,
    ProblemStatus,
    ResultFile,
    RunStatus,
    SelectBy,
    TableCache,
    TaskInfo,
    dask_map,
    prepare_output_folder,
    require_dask,
    stop_pool,
)
from ._blas import single_thread_environment
from ._constants import check_model
from ._data import ProblemSkipped
from ._kept import why_redo
from ._pipeline import RegressionResult, answer_problem, result_path, write_result

__all__ = ["ProblemOutcome", "run_problems", "solve"]

log = logging.getLogger("genotex.regression")


@dataclass(frozen=True)
class ProblemOutcome:
    """What happened to one problem: its `outcome` is ok, skipped or failed, with the reason.

    `run` names the run that made the result (`run_id`); a result kept from an
    earlier run keeps that run's name.
    """

    problem: ProblemId
    outcome: Outcome
    seconds: float
    model: str | None = None
    detail: str = ""
    run: str | None = None
    #: how the answer came about, for the reader of this run (not recorded): "computed",
    #: "computed again (force)", "computed again: <why>", or "kept from a run at <time>"
    how: str = "computed"

    @property
    def kept(self) -> bool:
        """Whether the result is an earlier run's, kept (its `seconds` are that run's)."""
        return self.how.startswith("kept")

    @property
    def ok(self) -> bool:
        """Whether the problem was answered."""
        return self.outcome.kind == "ok"

    def to_status(self) -> ProblemStatus:
        """Its line of `status.json`."""
        return ProblemStatus(
            self.problem.key, self.seconds, self.outcome, self.model, self.detail, self.run
        )


def run_id() -> str:
    """A run's name: its start time in UTC, to the microsecond (what `status.json` records)."""
    return datetime.now(UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")


def _earlier(summary: str | Path | None) -> RunStatus:
    """The output folder's record so far (empty when there is none or it is unreadable)."""
    if summary is None or not Path(summary).exists():
        return RunStatus(())
    try:
        return RunStatus.read(summary)
    except GenotexError as exc:
        log.warning("%s; it is written anew", exc)
        return RunStatus(())


def _kept(
    problem: ProblemId, earlier: Mapping[str, ProblemStatus], out_dir: Path
) -> ProblemOutcome:
    """The outcome of a problem whose result an earlier run made: that run's line, if recorded."""
    line = earlier.get(problem.key)
    if line is not None and line.kind == "ok":
        how = f"kept from a run at {line.run}" if line.run else "kept from an earlier run"
        return ProblemOutcome(
            problem, _OK, line.seconds, line.model, line.detail, line.run, how=how
        )
    method = ResultFile.read(result_path(out_dir, problem)).method
    name = method.model_family if method is not None else None
    return ProblemOutcome(problem, _OK, 0.0, name, "kept: made by an earlier, unrecorded run",
                          how="kept from an earlier, unrecorded run")  # fmt: skip


_OK = Outcome("ok")


def solve(
    data_dir: str,
    problem: ProblemId,
    task_info: TaskInfo,
    mode: Mode = "reference",
    select_by: SelectBy = "prediction",
    *,
    cache: TableCache | None = None,
    model: str = "auto",
) -> tuple[RegressionResult | None, ProblemOutcome]:
    """Answer one problem, turning every expected failure into an outcome (never raises)."""
    started = time.perf_counter()
    try:
        result = answer_problem(
            data_dir, problem, task_info, mode=mode, select_by=select_by, cache=cache, model=model
        )
    except ProblemSkipped as exc:
        outcome = Outcome("skipped", str(exc))
    except GenotexError as exc:
        outcome = Outcome("failed", str(exc))
    except (ValueError, ArithmeticError, MemoryError, OSError) as exc:
        outcome = Outcome("failed", f"{exc.__class__.__name__}: {exc}".splitlines()[0])
    else:
        seconds = time.perf_counter() - started
        return result, ProblemOutcome(problem, _OK, seconds, result.model, result.describe())
    return None, ProblemOutcome(problem, outcome, time.perf_counter() - started)


def _stamped(outcome: ProblemOutcome, run: str) -> ProblemOutcome:
    return replace(outcome, run=run) if outcome.ok else outcome


def _solve_task(
    task: tuple[str, ProblemId, Mode, SelectBy, TableCache | None, str], task_info: TaskInfo
) -> tuple[RegressionResult | None, ProblemOutcome]:
    data_dir, problem, mode, select_by, cache, model = task
    return solve(data_dir, problem, task_info, mode, select_by, cache=cache, model=model)


def run_problems(
    problems: Sequence[ProblemId],
    data_dir: str | Path,
    task_info: TaskInfo,
    out_dir: str | Path,
    *,
    jobs: int = 1,
    scheduler: str | None = None,
    force: bool = False,
    on_outcome: Callable[[ProblemOutcome], None] | None = None,
    summary: str | Path | None = None,
    mode: Mode = "reference",
    select_by: SelectBy = "prediction",
    cache: TableCache | None = None,
    model: str = "auto",
) -> RunStatus:
    """Answer `problems`, writing each result JSON as soon as it is known.

    Parameters
    ----------
    problems
        The problems to answer (`TaskInfo.select` or `TaskInfo.problems`).
    data_dir
        The preprocess folder (`<trait>/cohort_info.json` and linked CSVs).
    task_info
        Related genes and conditions.
    out_dir
        Where `<trait>/significant_genes_condition_<C>.json` files go.
    jobs
        Worker processes (each on one BLAS thread, so results do not depend on it).
    scheduler
        The address of a Dask distributed scheduler to run on instead.
    force
        Redo problems whose complete result already exists (else they are skipped).
    on_outcome
        Called with each problem's outcome as it is known.
    summary
        Also write the run summary (`status.json`) there.
    mode, select_by
        `"reference"` (the published pipeline, exactly) or `"standard"` (converged,
        sign-invariant; its α rule `select_by`). A result of the other mode is redone.
    cache
        Where parsed linked tables are kept by content (`TableCache`): a cohort's
        table is parsed once for all its problems, in this run and the next. None
        parses each time. The results are the same either way.
    model
        "auto" (the batch-effect test chooses, as published), "lasso" or "lmm"
        (that model whatever the test says). A result of the other model is redone.

    Returns
    -------
    RunStatus
        Every problem's status line, in input order. `summary` is the output
        folder's record: this run's lines replace those of the same problems and
        the other problems' lines are kept. A problem whose result an earlier run
        made is "ok" with that run's line (model, detail, run). An interrupted run
        writes the lines of the problems that finished, then re-raises.
    """
    require_dask(scheduler)  # before any work: not after kept results are listed
    out_dir = prepare_output_folder(out_dir)  # once, before any work
    run = run_id()
    earlier = _earlier(summary)
    earlier_lines = {line.key: line for line in earlier.problems}
    outcomes: dict[ProblemId, ProblemOutcome] = {}
    pending, how = [], {}
    for problem in problems:
        redo = why_redo(out_dir, problem, mode=mode, model=model, select_by=select_by,
                        data_dir=data_dir, task_info=task_info)  # fmt: skip
        if redo is None and not force:
            outcomes[problem] = _kept(problem, earlier_lines, out_dir)
            _report(outcomes[problem], on_outcome)
            continue
        if redo == "no complete result":
            how[problem] = "computed"  # nothing earlier: a first run says no more
        else:
            how[problem] = "computed again (force)" if force else f"computed again: {redo}"
            log.debug("%s: %s", problem.key, how[problem])
        pending.append(problem)
    data = os.path.abspath(data_dir)  # whole: a Dask worker runs in another folder
    tasks = [(data, p, mode, select_by, cache, check_model(model)) for p in pending]
    # task_info goes with the function, once (on Dask: once to the cluster), not in each task
    solver = functools.partial(_solve_task, task_info=task_info)
    try:
        for result, outcome in _execute(solver, tasks, jobs=jobs, scheduler=scheduler):
            if result is not None:
                write_result(out_dir, result)
            outcomes[outcome.problem] = replace(_stamped(outcome, run), how=how[outcome.problem])
            _report(outcomes[outcome.problem], on_outcome)
    finally:  # an interrupted run records what finished
        status = RunStatus(tuple(outcomes[p].to_status() for p in problems if p in outcomes), run)
        if summary is not None:
            status.merged_into(earlier).write(summary)
    return status


def _report(outcome: ProblemOutcome, on_outcome: Callable[[ProblemOutcome], None] | None) -> None:
    message = f"{outcome.problem.key}: {outcome.outcome}"
    if outcome.detail:
        message += f" — {outcome.detail}"
    log.debug("%s (%.1f s)", message, outcome.seconds)
    if on_outcome is not None:
        on_outcome(outcome)


def _execute(
    solver: Callable[[Any], tuple[RegressionResult | None, ProblemOutcome]],
    tasks: list,
    *,
    jobs: int,
    scheduler: str | None,
) -> Iterable[tuple[RegressionResult | None, ProblemOutcome]]:
    if scheduler is not None:  # as they finish: each result is written as soon as it is known
        yield from dask_map(solver, tasks, scheduler, in_order=False)
    elif jobs <= 1 or len(tasks) <= 1:
        yield from map(solver, tasks)
    else:
        # spawn: polars' and BLAS' threads do not survive fork; the workers start with the
        # thread-count variables set, so their BLAS is on one thread from the start
        context = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(min(jobs, len(tasks)), mp_context=context) as pool:
            try:
                with single_thread_environment():
                    futures = [pool.submit(solver, task) for task in tasks]
                for future in as_completed(futures):
                    yield future.result()
            except BaseException:  # interrupted, terminated, or the consumer stopped
                stop_pool(pool)
                raise

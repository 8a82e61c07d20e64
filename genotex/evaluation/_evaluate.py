"""Score a prediction tree against a reference tree: the published GenoTEX evaluation.

`evaluate()` is the library entry point (the CLI only renders its `EvalReport`).
Tables are read one pair at a time, so memory is bounded by one or two tables,
not by the tree; file pairs may be scored in parallel processes.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from pathlib import Path

from .._version import __version__
from ..core import (
    DEFAULT_MAX_FILE_MB,
    MAX_COLUMNS,
    GuardedTree,
    PredictionTreeError,
    ReferenceTreeError,
    TableCache,
    TaskInfo,
    benchmark_summary,
)
from ._analysis_task import Lists, evaluate_analysis
from ._common import Findings, Progress, no_progress
from ._preprocessing_task import SUBTASKS, evaluate_preprocessing
from ._provenance import provenance, same_tree
from ._report import EvalReport
from ._selection_task import evaluate_selection
from ._statistics import BootstrapSettings
from ._uncertainty import add_exact_statistics, add_intervals

__all__ = ["TASKS", "EvalOptions", "check_output_trees", "evaluate"]

TASKS: tuple[str, ...] = ("selection", "preprocessing", "analysis")


@dataclass(frozen=True)
class EvalOptions:
    """What to evaluate and how.

    Attributes
    ----------
    tasks, subtasks
        Which tasks and preprocessing subtasks to score.
    jobs
        Worker processes for table pairs.
    max_file_mb
        Prediction files larger than this are unreadable.
    max_columns
        Prediction tables with more columns than this are unreadable (parsing a
        table costs memory per column, whatever its size on disk).
    ci
        Add a seeded percentile-bootstrap interval to every average (`bootstrap`).
    exact
        Add the statistics beside the parity ones to every scored problem: exact
        AUROC and average precision over the problem's gene universe, and GSEA
        prerank (gseapy, `gsea_permutations` permutations, seed `gsea_seed`).
    traits
        Score these traits only (their problems, cohorts and files), as a subset: the
        report says so (`run.traits`), and the others are not counted as failed.
    label
        The run's name in leaderboards, comparisons and the report (recorded in
        the report's `run.label`; none by default).
    cache
        Where the reference's parsed tables are kept (`TableCache`): a second
        evaluation against the same reference maps them instead of parsing them.
        None parses every table. The scores are the same either way.
    scheduler
        The address of a Dask distributed scheduler to score the table pairs on,
        instead of `jobs` local processes (its workers must see both trees).
    """

    tasks: tuple[str, ...] = TASKS
    subtasks: tuple[str, ...] = SUBTASKS
    jobs: int = 1
    max_file_mb: float = DEFAULT_MAX_FILE_MB
    max_columns: int = MAX_COLUMNS
    ci: bool = False
    bootstrap: BootstrapSettings = BootstrapSettings()
    exact: bool = False
    gsea_permutations: int = 1000
    gsea_seed: int = 0
    label: str | None = None
    traits: tuple[str, ...] = ()  # score these traits only, as a subset (empty: every trait)
    cache: TableCache | None = None
    scheduler: str | None = None

    def __post_init__(self) -> None:
        for name, allowed in (("tasks", TASKS), ("subtasks", SUBTASKS)):
            unknown = [x for x in getattr(self, name) if x not in allowed]
            if unknown:
                raise ValueError(f"unknown {name} {unknown}; choose from {list(allowed)}")
        if self.jobs < 1:
            raise ValueError("jobs must be at least 1")
        if not self.max_file_mb > 0:
            raise ValueError("max_file_mb must be positive")
        if self.max_columns < 1:
            raise ValueError("max_columns must be at least 1")
        if self.gsea_permutations < 1 or self.bootstrap.resamples < 100:
            raise ValueError("gsea_permutations must be >= 1 and bootstrap resamples >= 100")
        if not 0 < self.bootstrap.confidence < 1:
            raise ValueError("the bootstrap confidence must lie between 0 and 1")


def evaluate(
    pred_dir: str | Path,
    ref_dir: str | Path,
    task_info: TaskInfo | str | Path,
    *,
    options: EvalOptions = EvalOptions(),
    progress: Progress | None = None,
) -> EvalReport:
    """Evaluate a prediction `output/` folder against a reference one (evaluation.md).

    Raises `ReferenceTreeError`, `PredictionTreeError` or `TaskInfoError` when the
    evaluation cannot run; anything wrong inside the prediction is scored and
    listed in the report's `findings` instead.
    """
    progress = progress or no_progress
    started = time.time()
    ref_path, pred_path = check_output_trees(Path(ref_dir), Path(pred_dir))
    task_info_source = None if isinstance(task_info, TaskInfo) else str(task_info)
    if not isinstance(task_info, TaskInfo):
        task_info = TaskInfo.read(task_info)
    if options.traits:
        task_info = task_info.restricted_to(options.traits)

    ref = GuardedTree.trusted(ref_path)
    pred = GuardedTree.untrusted(
        pred_path, max_file_mb=options.max_file_mb, max_columns=options.max_columns
    )
    findings = Findings()
    lists = Lists() if options.exact else None
    filtering = selection = preprocessing = analysis = None
    if "selection" in options.tasks:
        filtering, selection = evaluate_selection(
            pred, ref, task_info, findings=findings, progress=progress
        )
    if "preprocessing" in options.tasks:
        preprocessing = evaluate_preprocessing(
            pred,
            ref,
            options.subtasks,
            jobs=options.jobs,
            findings=findings,
            progress=progress,
            cache=options.cache,
            scheduler=options.scheduler,
            traits=options.traits,
        )
    if "analysis" in options.tasks:
        analysis = evaluate_analysis(
            pred, ref, findings=findings, progress=progress, lists=lists, traits=options.traits
        )
    run = {
        "genotex_version": __version__,
        "prediction": str(pred_dir),
        "reference": str(ref_dir),
        "task_info": task_info_source,
        "tasks": list(options.tasks),
        "subtasks": list(options.subtasks),
        "max_file_mb": options.max_file_mb,
        "problems_in_task_info": len(list(task_info.problems())),
        "traits": list(options.traits) or None,  # a subset, when asked
        # scored against itself (`eval -p output` in a folder whose -r default is output/)
        "prediction_is_reference": same_tree(pred_path, ref_path),
    }
    if options.label:
        run["label"] = options.label
    report = EvalReport(filtering, selection, preprocessing, analysis, findings.freeze(), run)
    return _finish(report, options, lists, ref, task_info, source=task_info_source, started=started)


def check_output_trees(ref_path: Path, pred_path: Path) -> tuple[Path, Path]:
    """(reference, prediction): refuse folders that are not output/ trees, before any scoring."""
    if not ref_path.is_dir():
        raise ReferenceTreeError("the reference folder does not exist", path=ref_path)
    if not (ref_path / "preprocess").is_dir() and not (ref_path / "regress").is_dir():
        raise ReferenceTreeError(
            "the reference folder has neither preprocess/ nor regress/ (is it an output/ folder?)",
            path=ref_path,
        )
    if not pred_path.is_dir():
        raise PredictionTreeError("the prediction folder does not exist", path=pred_path)
    if not any((pred_path / stage).is_dir() for stage in ("preprocess", "regress")):
        # scoring it would print plausible numbers (every cohort and problem missing)
        hint = " it holds output/: give that" if (pred_path / "output").is_dir() else ""
        raise PredictionTreeError(
            "the prediction folder has neither preprocess/ nor regress/ "
            f"(is it an output/ folder?{hint})",
            path=pred_path,
        )
    return ref_path, pred_path


def _finish(
    report: EvalReport,
    options: EvalOptions,
    lists: Lists | None,
    ref: GuardedTree,
    task_info: TaskInfo,
    *,
    source: str | None,
    started: float,
) -> EvalReport:
    """The statistics asked for, then the provenance block (the last thing timed)."""
    if lists is not None:
        report = add_exact_statistics(
            report,
            lists.predictions,
            lists.references,
            ref,
            task_info,
            permutations=options.gsea_permutations,
            seed=options.gsea_seed,
        )
    if options.ci:
        report = add_intervals(report, options.bootstrap)
    chosen = {
        "ci": options.ci,
        "exact": options.exact,
        # on Dask the scheduler's workers score the tables, not local processes
        "jobs": None if options.scheduler else options.jobs,
        "scheduler": options.scheduler,
        "max_file_mb": options.max_file_mb,
    }
    scored = {"selection": "preprocess", "preprocessing": "preprocess", "analysis": "regress"}
    block = provenance(
        ref.given_root,
        Path(source) if source else task_info.to_dict(),
        chosen,
        started,
        folders=tuple(sorted({scored[t] for t in options.tasks})),
        memo=options.cache.digests if options.cache is not None else None,
        benchmark=benchmark_summary(
            ref.given_root,
            check=True,  # the reference against its download's marker, file by file
            sha256=options.cache.digests.sha256 if options.cache is not None else None,
            files=(Path(source),) if source else (),  # task_info.json, edited after?
        ),
    )
    return replace(report, run={**report.run, "provenance": block})

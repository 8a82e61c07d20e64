"""Score a prediction tree against a reference tree: the published GenoTEX evaluation.

`evaluate()` is the library entry point (the CLI only renders its `EvalReport`).
Tables are read one pair at a time, so memory is bounded by one or two tables,
not by the tree; file pairs may be scored in parallel processes.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .._version import __version__
from ..core import (
    DEFAULT_MAX_FILE_MB,
    GuardedTree,
    PredictionTreeError,
    ReferenceTreeError,
    TaskInfo,
)
from ._analysis_task import evaluate_analysis
from ._common import Findings, Progress, no_progress
from ._preprocessing_task import SUBTASKS, evaluate_preprocessing
from ._report import EvalReport
from ._selection_task import evaluate_selection

__all__ = ["TASKS", "EvalOptions", "evaluate"]

TASKS: tuple[str, ...] = ("selection", "preprocessing", "analysis")


@dataclass(frozen=True)
class EvalOptions:
    """What to evaluate and how: task and subtask names, worker processes, file-size limit."""

    tasks: tuple[str, ...] = TASKS
    subtasks: tuple[str, ...] = SUBTASKS
    jobs: int = 1
    max_file_mb: float = DEFAULT_MAX_FILE_MB

    def __post_init__(self) -> None:
        for name, allowed in (("tasks", TASKS), ("subtasks", SUBTASKS)):
            unknown = [x for x in getattr(self, name) if x not in allowed]
            if unknown:
                raise ValueError(f"unknown {name} {unknown}; choose from {list(allowed)}")
        if self.jobs < 1:
            raise ValueError("jobs must be at least 1")
        if not self.max_file_mb > 0:
            raise ValueError("max_file_mb must be positive")


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
    ref_path, pred_path = Path(ref_dir), Path(pred_dir)
    if not ref_path.is_dir():
        raise ReferenceTreeError("the reference folder does not exist", path=ref_path)
    if not (ref_path / "preprocess").is_dir() and not (ref_path / "regress").is_dir():
        raise ReferenceTreeError(
            "the reference folder has neither preprocess/ nor regress/ (is it an output/ folder?)",
            path=ref_path,
        )
    if not pred_path.is_dir():
        raise PredictionTreeError("the prediction folder does not exist", path=pred_path)
    task_info_source = None if isinstance(task_info, TaskInfo) else str(task_info)
    if not isinstance(task_info, TaskInfo):
        task_info = TaskInfo.read(task_info)

    ref = GuardedTree.trusted(ref_path)
    pred = GuardedTree.untrusted(pred_path, max_file_mb=options.max_file_mb)
    findings = Findings()
    filtering = selection = preprocessing = analysis = None
    if "selection" in options.tasks:
        filtering, selection = evaluate_selection(
            pred, ref, task_info, findings=findings, progress=progress
        )
    if "preprocessing" in options.tasks:
        preprocessing = evaluate_preprocessing(
            pred, ref, options.subtasks, jobs=options.jobs, findings=findings, progress=progress
        )
    if "analysis" in options.tasks:
        analysis = evaluate_analysis(pred, ref, findings=findings, progress=progress)
    run = {
        "genotex_version": __version__,
        "prediction": str(pred_dir),
        "reference": str(ref_dir),
        "task_info": task_info_source,
        "tasks": list(options.tasks),
        "subtasks": list(options.subtasks),
        "max_file_mb": options.max_file_mb,
    }
    return EvalReport(filtering, selection, preprocessing, analysis, findings.freeze(), run)

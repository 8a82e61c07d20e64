"""`genotex.evaluate`: the evaluation, and on request the diagnosis of where points were lost.

It lives at the front door because it joins two layers: the evaluation stage
and the diagnosis workflow (which re-runs the regression stage). Without
`diagnose` it is `genotex.evaluation.evaluate`, loading neither scikit-learn
nor SciPy.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from .core import Mode, TaskInfo
from .evaluation import EvalOptions, EvalReport, Progress
from .evaluation import evaluate as _evaluate

__all__ = ["evaluate"]


def evaluate(
    pred_dir: str | Path,
    ref_dir: str | Path,
    task_info: TaskInfo | str | Path,
    *,
    options: EvalOptions | None = None,
    progress: Progress | None = None,
    diagnose: bool = False,
    diagnose_mode: Mode = "standard",
) -> EvalReport:
    """Evaluate a prediction `output/` folder against a reference one (evaluation.md).

    With `diagnose=True` the report's `diagnosis` says where the points were lost
    (`genotex.workflows.diagnose`, its substitutes made by `diagnose_mode`), with
    the same workers or Dask scheduler as the evaluation.

    Raises `ReferenceTreeError`, `PredictionTreeError` or `TaskInfoError` when the
    evaluation cannot run; anything wrong inside the prediction is scored and
    listed in the report's `findings` instead.
    """
    options = options or EvalOptions()
    report = _evaluate(pred_dir, ref_dir, task_info, options=options, progress=progress)
    if not diagnose:
        return report
    from .workflows import diagnose as run_diagnosis

    diagnosis = run_diagnosis(
        pred_dir,
        ref_dir,
        task_info,
        mode=diagnose_mode,
        jobs=options.jobs,
        scheduler=options.scheduler,
        max_file_mb=options.max_file_mb,
        bootstrap=options.bootstrap,
        progress=progress,
        cache=options.cache,
    )
    return replace(report, diagnosis=diagnosis)

"""What makes a reference answer a poor key, found when `genotex diagnose` re-analyses the
reference's own data: a fit at chance, a selection that depends on the genes' column order.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..core import (
    CHANCE_ACCURACY,
    GuardedTree,
    Mode,
    ProblemId,
    TaskInfo,
    accuracy_at_chance,
    regress_file_name,
)
from ..evaluation import DiagnosisFinding

__all__ = ["Cause", "cause_findings", "reference_causes"]

#: What makes the reference's own answer a poor key, found by a re-analysis of its data:
#: (error class, message, numbers) of each cause.
Cause = tuple[str, str, dict[str, float]]


def reference_causes(result: Any, data: Any, task_info: TaskInfo, mode: Mode) -> tuple[Cause, ...]:
    """Why the published pipeline's answer on the reference's data is a poor key, when its fit
    is an LMM or at chance (in either mode's re-analysis): its own cross-validated accuracy
    under `CHANCE_ACCURACY`, and a selection that changes with the genes' column order (the
    published fit made again on the columns reversed). Empty when neither holds.
    """
    from ..regression import analyse, one_blas_thread

    if result.model != "LMM" and accuracy_at_chance(result.cv_performance) is None:
        return ()
    if mode != "reference":  # the published pipeline's own fit, with its column-order check
        with one_blas_thread(reference=True):
            result = analyse(data, task_info, mode="reference")
    causes: list[Cause] = []
    accuracy = accuracy_at_chance(result.cv_performance)
    if accuracy is not None:
        message = (
            f"the published pipeline's fit ({result.model}) on the reference's data and cohorts "
            f"has a cross-validated accuracy of {accuracy:.1f}%, under {CHANCE_ACCURACY:g}%: "
            "it is at chance, so the reference's genes are no better than a draw and only that "
            "pipeline, run exactly on those tables, gives them"
        )
        causes.append(("reference_at_chance", message, {"cv_accuracy": accuracy}))
    reversed_columns = getattr(result.method, "reversed_columns", None)
    if "column_order_dependent" in getattr(result.method, "flags", ()) and reversed_columns:
        selected, common = reversed_columns
        message = (
            f"the published pipeline's answer on the reference's data depends on the order of "
            f"the gene columns: with them reversed its final fit selects {selected} genes, "
            f"{common} of its {len(result.genes)} among them, so a table equal to the "
            "reference's in another column order gives other genes"
        )
        numbers = {"genes": float(len(result.genes)), "reversed_selected": float(selected),
                   "in_common": float(common)}  # fmt: skip
        causes.append(("reference_order_dependent", message, numbers))
    return tuple(causes)


def cause_findings(ref: GuardedTree, key: str, causes: Sequence[Cause]) -> list[DiagnosisFinding]:
    """The findings of a problem's reference-answer causes, each naming the reference's file."""
    problem = ProblemId.from_key(key)
    file = ref.relative(ref.path("regress", problem.trait, regress_file_name(problem.condition)))
    return [DiagnosisFinding(error_class, file, message, problem.trait, problem=key,
                             numbers=numbers)
            for error_class, message, numbers in causes]  # fmt: skip

"""Task 1, dataset filtering (DF, per trait) and selection (DS, per problem): evaluation.md § 1."""

from __future__ import annotations

from ..core import (
    CohortInfoReader,
    CohortRecord,
    GuardedTree,
    TaskInfo,
    select_cohorts,
)
from ._common import Findings, Progress, no_progress
from ._scores import FilteringScore, SelectionScore

__all__ = ["evaluate_selection"]


def _filtering_score(
    trait: str, ref_records: dict[str, CohortRecord], pred_records: dict[str, CohortRecord]
) -> FilteringScore:
    tp = fp = tn = fn = 0
    for cohort_id in dict.fromkeys([*ref_records, *pred_records]):
        truth = cohort_id in ref_records and ref_records[cohort_id].is_available
        guess = cohort_id in pred_records and pred_records[cohort_id].is_available
        if truth and guess:
            tp += 1
        elif truth:
            fn += 1
        elif guess:
            fp += 1
        else:
            tn += 1
    return FilteringScore.from_counts(trait, tp, fp, tn, fn)


def evaluate_selection(
    pred: GuardedTree,
    ref: GuardedTree,
    task_info: TaskInfo,
    *,
    findings: Findings | None = None,
    progress: Progress | None = None,
) -> tuple[tuple[FilteringScore, ...], tuple[SelectionScore, ...]]:
    """DF once per trait and DS once per problem, over the problems of task_info."""
    findings = findings or Findings()
    progress = progress or no_progress
    ref_reader = CohortInfoReader(ref, findings.add, unreadable_as_missing=True)
    pred_reader = CohortInfoReader(pred, findings.add)
    filtering: dict[str, FilteringScore] = {}
    selection: list[SelectionScore] = []
    problems = list(task_info.problems())
    for problem in progress(problems, "dataset selection", len(problems)):
        ref_records = ref_reader.read(problem.trait)
        if ref_records is None:
            continue
        if problem.trait not in filtering:
            pred_records = pred_reader.read(problem.trait) or {}
            filtering[problem.trait] = _filtering_score(problem.trait, ref_records, pred_records)
        ref_choice = select_cohorts(ref_reader, problem, task_info, report=findings.add)
        pred_choice = select_cohorts(pred_reader, problem, task_info, report=findings.add)
        accuracy = 100.0 if ref_choice == pred_choice else 0.0
        selection.append(SelectionScore(problem, accuracy, ref_choice, pred_choice))
    return tuple(filtering.values()), tuple(selection)

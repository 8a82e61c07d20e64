"""One row per scored item: trait (DF), problem (DS, analysis), file (preprocessing), finding."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from ..core import (
    ANALYSIS_METRICS,
    FILTERING_METRICS,
    PREPROCESSING_METRICS,
    ProblemId,
    confusion_scores,
    get_metric,
    metric_values,
)

__all__ = [
    "CV_ABSENT",
    "EXTRA_ANALYSIS_METRICS",
    "OVERALL",
    "FileScore",
    "FilteringScore",
    "Finding",
    "ProblemScore",
    "ScoreStatus",
    "SelectionScore",
    "average",
    "counted",
    "MISSING_MARK",
    "cv_absent_count",
    "cv_absent_note",
    "metric_value",
]

#: The statistics beside the parity ones, averaged per category when they were computed.
EXTRA_ANALYSIS_METRICS = (
    "auroc_exact",
    "average_precision",
    "gsea_prerank_es",
    "gsea_prerank_nes",
    "gsea_prerank_pval",
)

OVERALL = "Overall"

#: Why an item scored what it did: "ok" (scored), or it failed with 0 on every metric
#: because its file is "missing", "malformed" (a result JSON) or "unreadable" (a table).
ScoreStatus = Literal["ok", "missing", "malformed", "unreadable"]


@dataclass(frozen=True)
class Finding:
    """A prediction (or reference, prefixed `REF:`) file that was missing a part or malformed."""

    file: str
    reason: str


@dataclass(frozen=True)
class FilteringScore:
    """Dataset filtering (DF) of one trait: `is_available` as a binary classification."""

    trait: str
    tp: int
    fp: int
    tn: int
    fn: int
    precision: float
    recall: float
    f1: float
    accuracy: float

    @classmethod
    def from_counts(cls, trait: str, tp: int, fp: int, tn: int, fn: int) -> FilteringScore:
        """The trait's DF scores from its confusion counts (`confusion_scores`)."""
        return cls.from_values(trait, (tp, fp, tn, fn), confusion_scores(tp, fp, tn, fn))

    @classmethod
    def from_values(
        cls, trait: str, counts: tuple[int, int, int, int], values: Mapping[str, float]
    ) -> FilteringScore:
        """The trait's scores, `values` holding exactly the registry's `FILTERING_METRICS`."""
        v = metric_values(FILTERING_METRICS, values)
        tp, fp, tn, fn = counts
        return cls(trait, tp, fp, tn, fn, v["precision"], v["recall"], v["f1"], v["accuracy"])


@dataclass(frozen=True)
class SelectionScore:
    """Dataset selection (DS) of one problem: 100 when both trees choose the same data."""

    problem: ProblemId
    accuracy: float
    reference_choice: Any
    predicted_choice: Any


@dataclass(frozen=True)
class FileScore:
    """Similarity of one preprocessed CSV to its reference (AJ, SJ, r, CSC)."""

    subtask: str
    file: str  # "<trait>/<cohort>.csv"
    attributes_jaccard: float
    samples_jaccard: float
    feature_correlation: float
    composite_similarity_correlation: float
    status: ScoreStatus = "ok"  # "ok" | "missing" | "unreadable"

    @classmethod
    def from_values(
        cls, subtask: str, file: str, values: Mapping[str, float], status: ScoreStatus = "ok"
    ) -> FileScore:
        """A file's scores, `values` holding exactly the registry's `PREPROCESSING_METRICS`."""
        v = metric_values(PREPROCESSING_METRICS, values)
        return cls(
            subtask,
            file,
            v["attributes_jaccard"],
            v["samples_jaccard"],
            v["feature_correlation"],
            v["composite_similarity_correlation"],
            status,
        )

    @classmethod
    def failed(cls, subtask: str, file: str, status: ScoreStatus) -> FileScore:
        """A file that could not be scored: 0 on every metric, as the published evaluator."""
        return cls.from_values(subtask, file, dict.fromkeys(PREPROCESSING_METRICS, 0.0), status)

    @property
    def trait(self) -> str:
        """The trait, the first part of `file`."""
        return self.file.split("/", 1)[0]


#: The key of a problem's `extra` listing the cv_performance numbers its file did not hold.
CV_ABSENT = "cv_performance_absent"


@dataclass(frozen=True)
class ProblemScore:
    """Gene-selection scores of one problem's `significant_genes_condition_<C>.json`."""

    problem: ProblemId
    success: float
    precision: float
    recall: float
    f1: float
    auroc: float
    gsea_es: float
    trait_pred_accuracy: float
    trait_pred_f1: float
    status: ScoreStatus = "ok"  # "ok" | "missing" | "malformed"
    #: The statistics beside the parity ones, when asked for: auroc_exact, average_precision,
    #: gsea_prerank_es / _nes / _pval, universe_size, reference_outside, exact_note.
    extra: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def from_values(
        cls,
        problem: ProblemId,
        values: Mapping[str, float],
        status: ScoreStatus = "ok",
        extra: Mapping[str, Any] | None = None,
    ) -> ProblemScore:
        """A problem's scores, `values` holding exactly the registry's `ANALYSIS_METRICS`."""
        v = metric_values(ANALYSIS_METRICS, values)
        return cls(
            problem,
            v["success"],
            v["precision"],
            v["recall"],
            v["f1"],
            v["auroc"],
            v["gsea_es"],
            v["trait_pred_accuracy"],
            v["trait_pred_f1"],
            status,
            {} if extra is None else extra,
        )

    @classmethod
    def failed(cls, problem: ProblemId, status: ScoreStatus) -> ProblemScore:
        """A problem whose file is missing or malformed: 0 on every metric (evaluation.md § 4)."""
        return cls.from_values(problem, dict.fromkeys(ANALYSIS_METRICS, 0.0), status)

    @property
    def category(self) -> str:
        """The problem's category (one-step or two-step)."""
        return self.problem.category

    def value(self, metric: str) -> float:
        """A parity metric or an extra statistic (NaN when it was not computed or is undefined)."""
        if metric in self.extra and metric != CV_ABSENT:
            value = self.extra[metric]
            return math.nan if value is None else float(value)
        return getattr(self, metric, math.nan)


#: What marks a value that counts a missing cv_performance number as 0, in every format.
MISSING_MARK = "†"


def cv_absent_count(scores: Iterable[ProblemScore]) -> int:
    """How many answers hold no cv_performance number (PredAcc, PredF1 or both)."""
    return sum(bool(s.extra.get(CV_ABSENT)) for s in scores)


def cv_absent_note(scores: Sequence[ProblemScore]) -> str | None:
    """The one rule for a missing number, said in every command and format: the published
    evaluator's value (0) is shown, marked, and this line says so. None when none is missing.
    """
    k = cv_absent_count(scores)
    if not k:
        return None
    return (
        f"{k} of {len(scores)} answers hold no cv_performance, counted as 0 as the published "
        "evaluator does"
    )


def metric_value(row: object, metric: str) -> float:
    """A row's value of a metric (a ProblemScore's extra statistics included)."""
    if isinstance(row, ProblemScore):
        return row.value(metric)
    return getattr(row, metric)


def average(rows: Sequence[object], metrics: Iterable[str]) -> dict[str, float]:
    """Each metric's average over rows, by its registered aggregation; `{}` for no rows.

    Every metric the published evaluator averages is defined on every item or
    averaged over the defined ones only (as the reference's `nanmean`).
    """
    if not rows:
        return {}
    return {
        name: get_metric(name).aggregate(metric_value(row, name) for row in rows)
        for name in metrics
    }


def counted(rows: Sequence[object], metric: str) -> int:
    """How many rows have a defined value of a metric: the n its average is taken over."""
    return sum(1 for row in rows if not math.isnan(metric_value(row, metric)))

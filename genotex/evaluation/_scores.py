"""One row per scored item: trait (DF), problem (DS, analysis), file (preprocessing), finding."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..core import ProblemId, nanmean

__all__ = [
    "EXTRA_ANALYSIS_METRICS",
    "OVERALL",
    "FileScore",
    "FilteringScore",
    "Finding",
    "ProblemScore",
    "SelectionScore",
    "average",
    "counted",
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
    status: str = "ok"  # "ok" | "missing" | "unreadable"

    @property
    def trait(self) -> str:
        return self.file.split("/", 1)[0]


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
    status: str = "ok"  # "ok" | "missing" | "malformed"
    #: The statistics beside the parity ones, when asked for: auroc_exact, average_precision,
    #: gsea_prerank_es / _nes / _pval, universe_size, reference_outside, exact_note.
    extra: Mapping[str, Any] = field(default_factory=dict)

    @property
    def category(self) -> str:
        return self.problem.category

    def value(self, metric: str) -> float:
        """A parity metric or an extra statistic (NaN when it was not computed or is undefined)."""
        if metric in self.extra:
            value = self.extra[metric]
            return math.nan if value is None else float(value)
        return getattr(self, metric, math.nan)


def metric_value(row: object, metric: str) -> float:
    """A row's value of a metric (a ProblemScore's extra statistics included)."""
    if isinstance(row, ProblemScore):
        return row.value(metric)
    return getattr(row, metric)


def average(rows: Sequence[object], metrics: Iterable[str]) -> dict[str, float]:
    """NaN-ignoring mean of each metric over rows; `{}` for no rows (as the reference)."""
    if not rows:
        return {}
    return {name: nanmean(metric_value(row, name) for row in rows) for name in metrics}


def counted(rows: Sequence[object], metric: str) -> int:
    """How many rows have a defined value of a metric: the n its average is taken over."""
    return sum(1 for row in rows if not math.isnan(metric_value(row, metric)))

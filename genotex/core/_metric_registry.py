"""The metric registry: what each metric means, its scale, its direction, how it averages.

Every consumer of a metric (the score dataclasses, `compare`, `leaderboard`,
the report and its glossary) reads it from here, by name.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from ._metrics import nanmean

__all__ = [
    "ANALYSIS_METRICS",
    "FILTERING_METRICS",
    "METRICS",
    "PREPROCESSING_METRICS",
    "Aggregation",
    "Direction",
    "MetricSpec",
    "Origin",
    "Scale",
    "get_metric",
    "metric_values",
]

#: Which way is better.
Direction = Literal["higher", "lower"]
#: The range a reader sees.
Scale = Literal["0-100", "0-1", "-1-1", "any"]
#: How per-item values become an average: "mean" of values always defined (a NaN would
#: make the average NaN, never be dropped); "nanmean" of the defined values only (an
#: undefined AUROC or ES is skipped, as the published evaluator skips it).
Aggregation = Literal["mean", "nanmean"]
Origin = Literal["paper", "genotex"]


@dataclass(frozen=True)
class MetricSpec:
    """What a metric means, its scale, which way is better, how it averages, who defined it.

    `direction` is "lower" for the GSEA p-value and "higher" for every other
    metric: wins in `compare`, the best-marking of `leaderboard` and the
    report's glossary follow it. `aggregation` is what `average` applies over
    items. `origin` says whether the definition is the paper's published
    evaluator's or genotex's own addition.
    """

    name: str
    section: str
    label: str
    description: str
    direction: Direction = "higher"
    scale: Scale = "0-1"
    aggregation: Aggregation = "mean"
    origin: Origin = "paper"

    @property
    def higher_is_better(self) -> bool:
        """Whether a higher value is the better one."""
        return self.direction == "higher"

    @property
    def scale_text(self) -> str:
        """The scale in words: "0 to 100", "0 to 1", "-1 to 1", "any number"."""
        return _SCALE_TEXT[self.scale]

    def best(self, values: Iterable[float]) -> float:
        """The best of `values` (the highest, or the lowest where lower is better)."""
        return max(values) if self.higher_is_better else min(values)

    def aggregate(self, values: Iterable[float]) -> float:
        """The average of per-item values by the metric's `aggregation` (NaN for none)."""
        if self.aggregation == "nanmean":
            return nanmean(values)
        kept = [float(v) for v in values]
        return float(np.mean(kept)) if kept else math.nan


_SCALE_TEXT = {"0-100": "0 to 100", "0-1": "0 to 1", "-1-1": "−1 to 1", "any": "any number"}

_PAPER_AUROC = (
    "the paper's approximate AUROC: the predicted genes ranked first in their order, "
    "every other gene of a 20,000-gene universe tied last"
)

METRICS: dict[str, MetricSpec] = {
    spec.name: spec
    for spec in (
        MetricSpec("precision", "filtering", "P", "DF precision of `is_available`", scale="0-100"),
        MetricSpec("recall", "filtering", "R", "DF recall of `is_available`", scale="0-100"),
        MetricSpec("f1", "filtering", "F1", "DF F1 of `is_available`", scale="0-100"),
        MetricSpec(
            "accuracy", "filtering", "Acc", "DF accuracy; DS accuracy per problem", scale="0-100"
        ),
        MetricSpec("attributes_jaccard", "preprocessing", "AJ", "Jaccard of feature labels"),
        MetricSpec("samples_jaccard", "preprocessing", "SJ", "Jaccard of sample labels"),
        MetricSpec(
            "feature_correlation", "preprocessing", "r", "mean Pearson r of features", scale="-1-1"
        ),
        MetricSpec(
            "composite_similarity_correlation",
            "preprocessing",
            "CSC",
            "composite similarity correlation, AJ x SJ x r",
            scale="-1-1",
        ),
        MetricSpec(
            "success",
            "analysis",
            "Success",
            "share of problems whose result file exists and is well formed",
            scale="0-100",
        ),
        MetricSpec("auroc", "analysis", "AUROC", _PAPER_AUROC, aggregation="nanmean"),
        MetricSpec(
            "gsea_es",
            "analysis",
            "GSEA-ES",
            "the paper's enrichment score of the reference genes in the predicted list",
            scale="-1-1",
            aggregation="nanmean",
        ),
        MetricSpec(
            "trait_pred_accuracy",
            "analysis",
            "PredAcc",
            "the submission's own cross-validated accuracy of predicting the trait",
            scale="0-100",
        ),
        MetricSpec(
            "trait_pred_f1",
            "analysis",
            "PredF1",
            "the submission's own cross-validated F1 of predicting the trait",
            scale="0-100",
        ),
        MetricSpec(
            "auroc_exact",
            "analysis",
            "AUROCx",
            "exact AUROC of the predicted ranking over the stated gene universe",
            aggregation="nanmean",
            origin="genotex",
        ),
        MetricSpec(
            "average_precision",
            "analysis",
            "AP",
            "average precision of the predicted ranking over the gene universe",
            aggregation="nanmean",
            origin="genotex",
        ),
        MetricSpec(
            "gsea_prerank_es",
            "analysis",
            "ES",
            "GSEA prerank (gseapy) enrichment score of the reference genes",
            scale="-1-1",
            aggregation="nanmean",
            origin="genotex",
        ),
        MetricSpec(
            "gsea_prerank_nes",
            "analysis",
            "NES",
            "GSEA prerank normalized enrichment score",
            scale="any",
            aggregation="nanmean",
            origin="genotex",
        ),
        MetricSpec(
            "gsea_prerank_pval",
            "analysis",
            "p",
            "GSEA prerank nominal p-value (permutations of the gene labels)",
            direction="lower",
            aggregation="nanmean",
            origin="genotex",
        ),
    )
}

#: Column order of each report section.
FILTERING_METRICS = ("precision", "recall", "f1", "accuracy")
PREPROCESSING_METRICS = (
    "attributes_jaccard",
    "samples_jaccard",
    "feature_correlation",
    "composite_similarity_correlation",
)
ANALYSIS_METRICS = (
    "success",
    "precision",
    "recall",
    "f1",
    "auroc",
    "gsea_es",
    "trait_pred_accuracy",
    "trait_pred_f1",
)


def get_metric(name: str) -> MetricSpec:
    """The spec of a metric by name; an unknown name fails with the list of known ones."""
    try:
        return METRICS[name]
    except KeyError:
        known = ", ".join(sorted(METRICS))
        raise KeyError(f"unknown metric {name!r}; known metrics: {known}") from None


def metric_values(names: Sequence[str], values: Mapping[str, float]) -> dict[str, float]:
    """`values` of exactly the registered metrics `names`, as floats, in that order.

    Score constructors go through it, so that a misspelt, missing or
    unregistered metric fails where the score is made, not where it is read.
    """
    for name in names:
        get_metric(name)
    missing = [name for name in names if name not in values]
    unknown = sorted(set(values) - set(names))
    if missing or unknown:
        raise ValueError(f"metric values: missing {missing}, unexpected {unknown}")
    return {name: float(values[name]) for name in names}

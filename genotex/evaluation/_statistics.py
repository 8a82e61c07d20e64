"""Statistics beside the parity numbers: bootstrap intervals, paired tests, exact ranking scores.

Everything here is computed only on request (`--ci`, `--report`, `compare`),
so the parity path never imports SciPy. Definitions (also in the README):

- interval: the seeded percentile bootstrap of the mean (`scipy.stats.bootstrap`,
  `method="percentile"`) over the items an average is taken over, NaN items
  left out as the average leaves them out; fewer than `MIN_ITEMS` items give
  no interval, with the reason.
- paired comparison: the per-item differences B - A over the items both runs
  scored, their mean with its bootstrap interval, and the Wilcoxon
  signed-rank test (`scipy.stats.wilcoxon`, `zero_method="zsplit"`, two-sided).
- exact AUROC and average precision of a ranked gene list over a gene universe
  (predicted entry i scores len(pred) - i, every other gene of the universe 0).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..core import METRICS

__all__ = [
    "MIN_ITEMS",
    "DEFAULT_BOOTSTRAP",
    "BootstrapSettings",
    "Interval",
    "PairedComparison",
    "bootstrap_interval",
    "exact_ranking_scores",
    "paired_comparison",
]

#: An average over fewer items than this gets no interval (the bootstrap says nothing useful).
MIN_ITEMS = 3


@dataclass(frozen=True)
class BootstrapSettings:
    """How intervals are computed: resamples, seed and confidence level (all in the report)."""

    resamples: int = 10_000
    seed: int = 0
    confidence: float = 0.95

    def to_dict(self) -> dict[str, float]:
        return {"resamples": self.resamples, "seed": self.seed, "confidence": self.confidence}


#: The settings `--ci` uses unless told otherwise.
DEFAULT_BOOTSTRAP = BootstrapSettings()


@dataclass(frozen=True)
class Interval:
    """A bootstrap interval, or none (`low`/`high` None) with the reason."""

    low: float | None
    high: float | None
    note: str = ""

    @property
    def defined(self) -> bool:
        """Whether the interval exists (enough items to resample)."""
        return self.low is not None

    @property
    def bounds(self) -> tuple[float, float] | None:
        """(low, high), or None when the interval is not defined."""
        if self.low is None or self.high is None:
            return None
        return self.low, self.high


def _finite(values: Sequence[float]) -> np.ndarray:
    array = np.asarray([v for v in values if v is not None], dtype=np.float64)
    return array[~np.isnan(array)]


def bootstrap_interval(values: Sequence[float], settings: BootstrapSettings) -> Interval:
    """The percentile bootstrap interval of the mean of `values` (NaN left out)."""
    from scipy.stats import bootstrap

    data = _finite(values)
    if len(data) < MIN_ITEMS:
        return Interval(None, None, f"{len(data)} item(s): an interval needs at least {MIN_ITEMS}")
    if np.all(data == data[0]):
        return Interval(float(data[0]), float(data[0]), "every item is equal")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # SciPy's degenerate-data warnings: the interval says it
        result = bootstrap(
            (data,),
            np.mean,
            n_resamples=settings.resamples,
            confidence_level=settings.confidence,
            method="percentile",
            vectorized=True,
            random_state=np.random.default_rng(settings.seed),
        )
    low, high = result.confidence_interval
    return Interval(float(low), float(high))


@dataclass(frozen=True)
class PairedComparison:
    """B - A over the items both runs scored, for one metric."""

    metric: str
    n: int
    mean_a: float
    mean_b: float
    mean_difference: float
    interval: Interval
    p_value: float | None  # Wilcoxon signed-rank, zsplit; None when undefined
    wins: int  # B better, in the metric's direction (a lower p-value is better)
    ties: int
    losses: int
    largest: tuple[tuple[str, float], ...]  # (item, difference), largest |difference| first


def paired_comparison(
    metric: str,
    a: dict[str, float],
    b: dict[str, float],
    settings: BootstrapSettings,
    *,
    top: int = 5,
) -> PairedComparison:
    """Compare two runs' per-item scores of one metric over the items both hold (NaN left out)."""
    from scipy.stats import wilcoxon

    items = sorted(k for k in a.keys() & b.keys() if _is_number(a[k]) and _is_number(b[k]))
    diffs = np.array([b[k] - a[k] for k in items], dtype=np.float64)
    p_value = None
    if len(diffs) >= MIN_ITEMS and np.any(diffs != 0):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # small-sample and ties warnings: the n says it
            p_value = float(wilcoxon(diffs, zero_method="zsplit").pvalue)
    order = sorted(range(len(items)), key=lambda i: (-abs(diffs[i]), items[i]))[:top]
    spec = METRICS.get(metric)
    gains = diffs if spec is None or spec.higher_is_better else -diffs  # > 0: B is better
    return PairedComparison(
        metric,
        len(items),
        _mean([a[k] for k in items]),
        _mean([b[k] for k in items]),
        _mean(diffs),
        bootstrap_interval(diffs.tolist(), settings),
        p_value,
        int(np.sum(gains > 0)),
        int(np.sum(gains == 0)),
        int(np.sum(gains < 0)),
        tuple((items[i], float(diffs[i])) for i in order),
    )


def _mean(values: Sequence[float] | np.ndarray) -> float:
    return float(np.mean(values)) if len(values) else math.nan


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and not math.isnan(value)


def exact_ranking_scores(
    pred: Sequence[str], ref: Sequence[str], universe: Sequence[str]
) -> dict[str, float | str | None]:
    """Exact AUROC and average precision of a ranked prediction over a gene universe.

    Predicted genes outside the universe are added to it. Entry i of the
    prediction scores len(pred) - i; every other gene scores 0 (one tied
    block, ranked last). Labels: in the reference. Reference genes outside
    the universe cannot be ranked and are counted in `reference_outside`.
    Both scores are None, with the reason, for an empty prediction (no
    ranking) and when the universe holds no reference gene or nothing else.
    AUROC counts ties half (scikit-learn's `roc_auc_score`); AP is
    scikit-learn's step-wise `average_precision_score` over the distinct scores.
    """
    ranked = list(dict.fromkeys(pred))
    genes = set(universe) | set(ranked)
    positives = set(ref) & genes
    outside = len(set(ref) - genes)
    n_total, n_pos = len(genes), len(positives)
    out: dict[str, float | str | None] = {"reference_outside": outside}
    if not ranked:
        return {**out, "auroc_exact": None, "average_precision": None, "note": "empty prediction"}
    if n_pos == 0 or n_pos == n_total:
        note = (
            "no reference gene in the universe" if n_pos == 0 else "every gene is in the reference"
        )
        return {**out, "auroc_exact": None, "average_precision": None, "note": note}
    hits = np.array([gene in positives for gene in ranked], dtype=bool)
    n_zero = n_total - len(ranked)
    zero_pos = n_pos - int(hits.sum())
    # AUROC by the rank sum: entry i has rank n_zero + (len - i); the tied zeros (n_zero + 1) / 2
    ranks = n_zero + len(ranked) - np.flatnonzero(hits)
    rank_sum = float(ranks.sum()) + zero_pos * (n_zero + 1) / 2
    n_neg = n_total - n_pos
    auroc = (rank_sum - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg)
    # AP: one threshold per predicted entry, then one for the tied block of zeros
    true_positives = np.cumsum(hits)
    precision = true_positives / np.arange(1, len(ranked) + 1)
    average_precision = float(np.sum(precision[hits]) / n_pos)
    if zero_pos and n_zero:
        average_precision += (zero_pos / n_pos) * (n_pos / n_total)
    return {**out, "auroc_exact": float(auroc), "average_precision": average_precision, "note": ""}

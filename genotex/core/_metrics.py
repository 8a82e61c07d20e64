"""Every GenoTEX metric computed, defined once (spec/evaluation.md); the registry that
describes them is `_metric_registry`.

Pure functions over lists and arrays, importable in a notebook. Percentages are
on a 0-100 scale where the published evaluator uses one; Jaccard, correlation,
AUROC and ES are on their natural scales. NaN means "undefined" and is ignored
by the averages, as in the reference.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

import numpy as np

__all__ = [
    "GSEA_UNIVERSE",
    "approximate_auroc",
    "confusion_scores",
    "feature_correlation",
    "gene_selection_scores",
    "gsea_enrichment_score",
    "jaccard",
    "nanmean",
]

#: Size of the gene universe assumed by the approximate AUROC and the GSEA-ES.
GSEA_UNIVERSE = 20_000


def nanmean(values: Iterable[float]) -> float:
    """Mean ignoring NaN; NaN when nothing is left (no warning, unlike numpy)."""
    kept = [float(v) for v in values if v is not None and not math.isnan(v)]
    if not kept:
        return math.nan
    return float(np.mean(kept))


def _ratio(numerator: float, denominator: float) -> float:
    return numerator / denominator if denominator > 0 else 0.0


def confusion_scores(
    tp: int, fp: int, tn: int, fn: int, *, f1_from_counts: bool = False
) -> dict[str, float]:
    """Precision, recall, F1 and accuracy (percent) of confusion counts; 0 where a denominator is 0.

    Parameters
    ----------
    tp, fp, tn, fn
        The confusion counts.
    f1_from_counts
        How F1 is computed. False: 2PR/(P+R), as the published evaluator
        computes DF F1 (evaluation.md § 1). True: 2TP/(2TP+FP+FN), as
        scikit-learn's `f1_score` computes the regression pipeline's CV F1
        (regression.md § 5). The two are equal in exact arithmetic but can
        differ in the last bit, and each must reproduce its reference exactly.
    """
    precision = _ratio(tp, tp + fp)
    recall = _ratio(tp, tp + fn)
    if f1_from_counts:
        f1 = _ratio(2 * tp, 2 * tp + fp + fn)
    else:
        f1 = _ratio(2 * precision * recall, precision + recall)
    accuracy = _ratio(tp + tn, tp + tn + fp + fn)
    return {
        "precision": precision * 100,
        "recall": recall * 100,
        "f1": f1 * 100,
        "accuracy": accuracy * 100,
    }


def jaccard(a: Iterable[object], b: Iterable[object]) -> float:
    """|A n B| / |A u B| of two label sets; 0 when both are empty."""
    set_a, set_b = set(a), set(b)
    union = len(set_a | set_b)
    return len(set_a & set_b) / union if union else 0.0


def _fill_with_row_means(values: np.ndarray) -> np.ndarray:
    """Replace NaN by the mean of its row's other values, then any NaN left by 0."""
    missing = np.isnan(values)
    if not missing.any():
        return values
    counts = (~missing).sum(axis=1)
    sums = np.where(missing, 0.0, values).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        means = sums / counts
    filled = np.where(missing, means[:, None], values)
    filled[np.isnan(filled)] = 0.0
    return filled


def _centred_and_std(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rows minus their mean, and the rows' population std, as `np.std(axis=1)` computes it."""
    count = values.shape[1]
    centred = values - np.add.reduce(values, axis=1, keepdims=True) / count
    return centred, np.sqrt(np.add.reduce(centred * centred, axis=1) / count)


def feature_correlation(pred: np.ndarray, ref: np.ndarray) -> float:
    """Mean Pearson r over features of two aligned (features x samples) tables.

    Each table's NaN are filled with its feature's mean (then 0); only features
    with non-zero population std in both tables count; a NaN r counts as 0; no
    counted feature gives 0 (evaluation.md § 2).
    """
    x = _fill_with_row_means(np.asarray(pred, dtype=np.float64))
    y = _fill_with_row_means(np.asarray(ref, dtype=np.float64))
    if x.shape != y.shape:
        raise ValueError(f"tables are not aligned: {x.shape} vs {y.shape}")
    if x.size == 0:
        return 0.0
    n_samples = x.shape[1]
    with np.errstate(invalid="ignore", over="ignore"):
        # np.std's own operations, in its order (the same bits), keeping the centred rows
        # for the numerator instead of centring the valid rows again
        x_centred, x_std = _centred_and_std(x)
        y_centred, y_std = _centred_and_std(y)
        valid = (x_std != 0) & (y_std != 0)
        if not valid.any():
            return 0.0
        if not valid.all():
            x_centred, y_centred = x_centred[valid], y_centred[valid]
        numerator = np.sum(x_centred * y_centred, axis=1)
        correlations = numerator / (n_samples * x_std[valid] * y_std[valid])
    return float(np.mean(np.nan_to_num(correlations, nan=0.0)))


def gene_selection_scores(
    pred: Sequence[str], ref: Sequence[str], *, empty_matches_empty: bool = True
) -> dict[str, float]:
    """Precision, recall and F1 (percent) of a ranked gene list against the reference list.

    Duplicates count: precision is the share of pred entries found in ref,
    recall the share of ref entries found in pred.

    Parameters
    ----------
    pred, ref
        The predicted and the reference gene lists.
    empty_matches_empty
        How an empty list scores. True is evaluation.md § 3: an empty side
        scores 100 against an empty other side and 0 otherwise. False is
        regression.md § 5 (the CV's selection scores): precision is 0 when
        nothing is predicted and recall 0 when nothing is known, always.
    """
    ref_set, pred_set = set(ref), set(pred)
    if pred:
        precision = sum(1 for gene in pred if gene in ref_set) / len(pred)
    else:
        precision = 1.0 if empty_matches_empty and not ref else 0.0
    if ref:
        recall = sum(1 for gene in ref if gene in pred_set) / len(ref)
    else:
        recall = 1.0 if empty_matches_empty and not pred else 0.0
    f1 = _ratio(2 * precision * recall, precision + recall)
    return {"precision": precision * 100, "recall": recall * 100, "f1": f1 * 100}


def approximate_auroc(pred: Sequence[str], ref: Sequence[str]) -> float:
    """AUROC of a ranked prediction when the gene universe is unknown (evaluation.md § 3).

    Entry i of pred scores len(pred) - i; reference genes the prediction missed,
    and padding up to 20,000 entries, score 0. Labels: in the reference set.
    Ties count half, as in scikit-learn's `roc_auc_score`; NaN when all labels
    are equal. The scores have a fixed shape (distinct ranks, then one tied
    block of zeros), so the Mann-Whitney rank sum is exact and O(len(pred)).
    """
    ref_set, pred_set = set(ref), set(pred)
    n_pred = len(pred)
    missed = sum(1 for gene in ref_set if gene not in pred_set)
    n_total = max(n_pred + missed, GSEA_UNIVERSE)
    n_zero = n_total - n_pred  # the tied block of score 0, ranked 1..n_zero
    hit_positions = [i for i, gene in enumerate(pred) if gene in ref_set]
    n_pos = len(hit_positions) + missed
    n_neg = n_total - n_pos
    if n_pos == 0 or n_neg == 0:
        return math.nan
    # entry i of pred has rank n_zero + (n_pred - i); each zero has rank (n_zero + 1) / 2
    rank_sum = sum(n_zero + n_pred - i for i in hit_positions) + missed * (n_zero + 1) / 2
    return (rank_sum - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg)


def gsea_enrichment_score(pred: Sequence[str], ref: Sequence[str]) -> float:
    """Running-sum enrichment score of the reference genes in the ranked prediction.

    The ranking is pred followed by dummy genes up to 20,000; +1/Nh on a hit,
    -1/Nm on a miss; ES is the maximum of the running sum (it can be negative).
    NaN when pred is longer than 20,000 or there are no hits or no misses.
    """
    if len(pred) > GSEA_UNIVERSE:
        return math.nan
    ref_set = set(ref)
    hits = np.zeros(GSEA_UNIVERSE, dtype=bool)
    hits[: len(pred)] = [gene in ref_set for gene in pred]
    n_hits = int(hits.sum())
    n_misses = GSEA_UNIVERSE - n_hits
    if n_hits == 0 or n_misses == 0:
        return math.nan
    steps = np.where(hits, 1.0 / n_hits, -1.0 / n_misses)
    return float(np.max(np.cumsum(steps)))

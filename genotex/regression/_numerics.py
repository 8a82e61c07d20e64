"""What both regression modes share, in NumPy and SciPy alone (no scikit-learn).

Normalization, the batch-effect test, the LMM's δ, the legacy folds and the
per-fold scores are the reference's (regression.md §§ 3-5) and the standard
mode reuses them; keeping them apart from the scikit-learn estimators lets
`--mode standard` run without importing scikit-learn, which takes longer to
import (~1.3 s) than the standard mode takes to solve a benchmark-size path.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import overload

import numpy as np

from ..core import confusion_scores, gene_selection_scores, jaccard
from ._constants import (
    BATCH_GAP_NUMERATOR,
    LEGACY_SEED,
    LOG_DELTA_INTERVALS,
    LOG_DELTA_RANGE,
    N_FOLDS,
    N_TOP_EIGENVALUES,
)

__all__ = [
    "detect_batch_effect",
    "estimate_log_delta",
    "legacy_fold_indices",
    "mean_scores",
    "normalize",
    "prediction_scores",
    "selection_scores",
    "significant_genes",
]


@overload
def normalize(
    train: np.ndarray,
    test: None = None,
    *,
    fortran: bool = False,
    copy: bool = True,
    out: np.ndarray | None = None,
) -> tuple[np.ndarray, None]: ...
@overload
def normalize(
    train: np.ndarray,
    test: np.ndarray,
    *,
    fortran: bool = False,
    copy: bool = True,
    out: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]: ...
def normalize(
    train: np.ndarray,
    test: np.ndarray | None = None,
    *,
    fortran: bool = False,
    copy: bool = True,
    out: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray | None]:
    """Z-score columns by the training set's mean and population std (std 0: only centred).

    The operations of `(train - mean) / np.std(train, axis=0)`, in the same
    order (the same bits), with the centred copy made once instead of twice.
    With `fortran` the scaled training set is written column-major by the
    division itself (what the solvers take), instead of being copied after it.
    `copy=False` centres `train` in place (a fold's rows, gathered for this);
    `out` is where the scaled training set is written (a buffer the folds reuse:
    fresh pages of a large array cost more to fault in than the division).
    """
    mean = np.mean(train, axis=0)
    centred = np.subtract(train, mean, out=None if copy else train)
    scaled, std = scale_centred(centred, fortran=fortran, out=out)
    return scaled, None if test is None else (test - mean) / std


def scale_centred(
    centred: np.ndarray, *, fortran: bool = False, out: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Divide centred columns by their population std (0: 1), in place or into `out`.

    The second half of `normalize`, for a caller that uses the centred table
    first (the batch-effect test); returns the scaled table and the std.
    """
    std = np.sqrt(_sum_of_squares(centred) / centred.shape[0])
    std = np.where(std == 0, 1, std)
    if out is not None:
        return np.divide(centred, std, out=out), std  # elementwise: the same bits
    if fortran and not centred.flags.f_contiguous:
        return np.divide(centred, std, order="F"), std
    centred /= std
    return centred, std


#: Columns from which `_sum_of_squares` works without a squared copy of the table.
_ROW_BY_ROW = 1024


def _sum_of_squares(centred: np.ndarray) -> np.ndarray:
    """`np.add.reduce(centred * centred, axis=0)`, the same bits, without the squared copy.

    NumPy reduces the first axis of a C-ordered array row after row, in order; so
    does the loop, through one row-sized buffer. A column-major array's columns
    are each reduced on their own (pairwise), so blocks of columns give the same
    sums through one block-sized buffer.
    """
    contiguous = centred.flags.c_contiguous or centred.flags.f_contiguous
    if centred.ndim != 2 or centred.shape[1] < _ROW_BY_ROW or not contiguous:
        return np.add.reduce(centred * centred, axis=0)
    if centred.flags.c_contiguous:
        total = centred[0] * centred[0]
        square = np.empty_like(total)
        for row in centred[1:]:
            np.multiply(row, row, out=square)
            total += square
        return total
    p = centred.shape[1]
    total = np.empty(p)
    block = np.empty((centred.shape[0], _ROW_BY_ROW), order="F")
    for start in range(0, p, _ROW_BY_ROW):
        columns = centred[:, start : start + _ROW_BY_ROW]
        square = np.multiply(columns, columns, out=block[:, : columns.shape[1]])
        np.add.reduce(square, axis=0, out=total[start : start + columns.shape[1]])
    return total


def detect_batch_effect(x: np.ndarray) -> bool:
    """Eigen-gap test: any gap > 200/n among the 10 largest eigenvalues of X0·X0ᵀ (normalized)."""
    return batch_effect_of_centred(x - x.mean(axis=0))


def batch_effect_of_centred(centred: np.ndarray) -> bool:
    """`detect_batch_effect` of a table already centred by `x - x.mean(axis=0)`."""
    n = centred.shape[0]
    eigenvalues = np.sort(np.linalg.eigvalsh(centred @ centred.T))[::-1][:N_TOP_EIGENVALUES]
    normalized = eigenvalues / eigenvalues[0]
    gaps = normalized[:-1] - normalized[1:]
    return bool(np.any(gaps > BATCH_GAP_NUMERATOR / n))


def _negative_log_likelihood(log_delta: float, uy: np.ndarray, eigenvalues: np.ndarray) -> float:
    n = uy.shape[0]
    shifted = eigenvalues + np.exp(log_delta)
    log_det = np.sum(np.log(shifted))
    flat = uy.ravel()
    variance = 1.0 / n * (flat * flat * (1.0 / shifted)).sum()
    return 0.5 * (n * np.log(2.0 * np.pi) + log_det + n + n * np.log(variance))


def estimate_log_delta(
    eigenvalues: np.ndarray,
    uy: np.ndarray,
    *,
    intervals: int = LOG_DELTA_INTERVALS,
    log_delta_range: tuple[float, float] = LOG_DELTA_RANGE,
) -> float:
    """log δ of least negative log-likelihood: a grid over the range, each local minimum refined by
    Brent.

    The likelihood sees y only through (Uᵀy)², so δ does not depend on the
    eigenvectors' signs (the rotation of X that follows does).
    """
    # imported here: scipy.optimize takes ~1 s to import, and only batch-effect problems need it
    from scipy.optimize import brent

    low, high = log_delta_range
    grid = np.arange(intervals + 1) / (intervals * 1.0) * (high - low) + low
    nll = np.array([_negative_log_likelihood(g, uy, eigenvalues) for g in grid])
    best_nll = nll.min()
    best = grid[nll.argmin()]
    for i in range(1, intervals):
        if nll[i] < nll[i - 1] and nll[i] < nll[i + 1]:
            bracket = (grid[i - 1], grid[i], grid[i + 1])
            log_delta, value, _, _ = brent(
                _negative_log_likelihood, (uy, eigenvalues), bracket, full_output=True
            )
            if value < best_nll:
                best_nll, best = value, log_delta
    return float(best)


def legacy_fold_indices(
    n: int, k: int = N_FOLDS, seed: int = LEGACY_SEED
) -> list[tuple[np.ndarray, np.ndarray]]:
    """(train, test) indices: `np.random.seed(42); np.random.shuffle(indices)`, k equal test folds.

    A local `RandomState(42)` gives the legacy global generator's sequence
    without touching global state. Leftover samples are always in training.
    """
    indices = np.arange(n)
    np.random.RandomState(seed).shuffle(indices)
    fold_size = n // k
    folds = []
    for i in range(k):
        test = indices[i * fold_size : (i + 1) * fold_size]
        folds.append((np.setdiff1d(indices, test), test))
    return folds


def significant_genes(coefficients: np.ndarray, genes: Sequence[str]) -> list[tuple[str, float]]:
    """Non-zero genes, largest absolute coefficient first (ties keep the column order)."""
    nonzero = np.flatnonzero(coefficients != 0)
    order = nonzero[np.argsort(-np.abs(coefficients[nonzero]), kind="stable")]
    return [(genes[i], float(coefficients[i])) for i in order]


def selection_scores(selected: Sequence[str], reference: Sequence[str]) -> dict[str, float]:
    """Precision, recall, F1 and Jaccard (percent) of selected genes against the known ones.

    regression.md § 5's convention: precision is 0 when nothing is selected,
    recall 0 when nothing is known.
    """
    scores = gene_selection_scores(selected, reference, empty_matches_empty=False)
    scores["jaccard"] = jaccard(reference, selected) * 100
    return scores


def prediction_scores(
    truth: np.ndarray, predicted: np.ndarray, *, binary: bool
) -> dict[str, float]:
    """Binary: accuracy, precision, recall, F1 (percent) at 0.5; continuous: NMSE and R²."""
    if binary:
        guess = predicted > 0.5
        actual = truth > 0.5
        tp = int(np.sum(guess & actual))
        fp = int(np.sum(guess & ~actual))
        fn = int(np.sum(~guess & actual))
        tn = int(np.sum(~guess & ~actual))
        scores = confusion_scores(tp, fp, tn, fn, f1_from_counts=True)
        return {key: scores[key] for key in ("accuracy", "precision", "recall", "f1")}
    residual = np.sum((truth - predicted) ** 2)
    total = np.sum((truth - np.mean(truth)) ** 2)
    with np.errstate(divide="ignore", invalid="ignore"):
        nmse = residual / total
    if total != 0:
        r_squared = 1.0 - residual / total
    else:  # scikit-learn's r2_score convention for a constant test fold
        r_squared = 1.0 if residual == 0 else 0.0
    return {"nmse": float(nmse), "r_squared": float(r_squared)}


def mean_scores(scores: list[dict[str, float]]) -> dict[str, float]:
    """The per-key mean of score dicts (one per fold)."""
    return {key: float(np.mean([s[key] for s in scores])) for key in scores[0]}

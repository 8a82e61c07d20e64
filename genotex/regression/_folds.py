"""The standard mode's cross-validation: each fold's design and numbers, on a thread pool.

A fold's rows are normalized by the fold's own training mean and std, its
covariates partialled out (and, with a batch effect, everything rotated by
the LMM), its path solved exactly, and each α's prediction and selection
numbers computed on the held-out rows. The folds run on `fit_standard`'s
pool of threads, each from its own buffers, so the numbers do not depend on
how many threads there are.
"""

from __future__ import annotations

import contextlib
import functools
import queue
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Literal, overload

import numpy as np

from ..core import empty_without_huge_pages
from ._blas import one_blas_thread
from ._constants import N_FOLDS
from ._numerics import (
    estimate_log_delta,
    legacy_fold_indices,
    normalize,
    prediction_scores,
    selection_scores,
    significant_genes,
)
from ._paths import SolvedPath, exact_path, solve_path

__all__ = [
    "Design",
    "FoldAnswer",
    "FoldRows",
    "covariate_columns",
    "design_of",
    "fold_scores",
    "rows_copy",
]


@dataclass(frozen=True)
class Design:
    """One fit's data after the covariate partialling (and the LMM rotation)."""

    x: np.ndarray  # partialled (rotated) genes
    y: np.ndarray  # partialled (rotated) target
    xt: np.ndarray  # rotated, not partialled: to recover the covariates' coefficients
    yt: np.ndarray
    ct: np.ndarray  # rotated covariates [1, Z]
    log_delta: float | None

    def covariates(self, w: np.ndarray) -> np.ndarray:
        """The unpenalized coefficients of [1, Z] given the genes' (least squares)."""
        return np.linalg.lstsq(self.ct, self.yt - _product(self.xt, w), rcond=None)[0]


def _product(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """x @ w over w's nonzero entries only (a path's w is sparse, x has ~18,500 columns)."""
    nonzero = np.flatnonzero(w)
    return x[:, nonzero] @ w[nonzero]


def design_of(x: np.ndarray, y: np.ndarray, c: np.ndarray, lmm: bool) -> Design:
    """X and y with the covariates `c` = [1, Z] partialled out, all rotated first by the LMM.

    Frisch-Waugh-Lovell: the Lasso on the partialled X and y is the Lasso with
    unpenalized [1, Z]; with a batch effect (`lmm`) X, y and [1, Z] are rotated
    alike, so eigenvector signs cancel (`_standard`'s notes).
    """
    log_delta = None
    xt, yt, ct = x, y, c
    if not lmm and c.shape[1] == 1:  # the intercept only: X is centred already (normalized)
        centred = y - y.mean()
        return Design(x, centred, x, y, c, None)
    q, _ = np.linalg.qr(c)
    if lmm:
        # only a batch effect needs SciPy (~0.2 s to import): loaded, then limited, here (on
        # a pool thread the limit may not hold: fit_standard's thread has limited it already)
        with one_blas_thread(libraries=("scipy.linalg",)):
            import scipy.linalg

            eigenvalues, vectors = scipy.linalg.eigh(x @ x.T)
        eigenvalues = np.clip(eigenvalues, 0.0, None)
        residual = y - q @ (q.T @ y)
        log_delta = estimate_log_delta(eigenvalues, (vectors.T @ residual).reshape(-1, 1))
        rotation = vectors.T / np.sqrt(eigenvalues + np.exp(log_delta))[:, None]
        xt, yt, ct = rotation @ x, rotation @ y, rotation @ c
        q, _ = np.linalg.qr(ct)
    px = np.asfortranarray(xt - q @ (q.T @ xt))
    py = yt - q @ (q.T @ yt)
    return Design(px, py, xt, yt, ct, log_delta)


def covariate_columns(z: np.ndarray | None, n: int) -> np.ndarray:
    """[1, Z]: the intercept's column of n ones, and the condition's when there is one."""
    ones = np.ones((n, 1))
    return ones if z is None else np.column_stack((ones, z.reshape(n, -1)))


class _FoldBuffers:
    """Room for one fold's rows and their scaled copy, written afresh by every fold.

    A fold's table is ~24 MB at 160 x 18,500: faulting in fresh pages for each
    fold cost more than the normalization itself (up to 2x with transparent
    huge pages), so the folds share buffers: one set per fold solved at once,
    made when first needed and handed back when the fold is done.
    """

    def __init__(self, rows: int, columns: int) -> None:
        self.shape = (rows, columns)
        self._free: queue.SimpleQueue[tuple[np.ndarray, np.ndarray]] = queue.SimpleQueue()

    @contextlib.contextmanager
    def take(self) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """A (rows, scaled) pair of flat buffers for one fold, back to the pool afterwards."""
        try:
            pair = self._free.get_nowait()
        except queue.Empty:
            size = self.shape[0] * self.shape[1]
            pair = (empty_without_huge_pages(size), empty_without_huge_pages(size))
        try:
            yield pair
        finally:
            self._free.put(pair)


#: Per α of the grid: (prediction numbers with the squared error, selection numbers).
FoldRows = list[tuple[dict[str, float], dict[str, float]]]
#: A fold's rows, its worst duality gap and why its path fell back (None: it did not).
FoldAnswer = tuple[FoldRows, float, str | None]


@dataclass(frozen=True)
class _Folds:
    """What every fold of the CV reads: the samples (C order), the folds, the grid, the scoring."""

    samples: np.ndarray  # a fold's rows are gathered ~4x faster from rows than from columns
    y: np.ndarray
    z: np.ndarray | None
    genes: Sequence[str]
    known: Sequence[str]
    grid: np.ndarray
    lmm: bool
    binary: bool
    buffers: _FoldBuffers

    @overload
    def scores(
        self, train: np.ndarray, test: np.ndarray, *, exact_only: Literal[False] = False
    ) -> FoldAnswer: ...
    @overload
    def scores(
        self, train: np.ndarray, test: np.ndarray, *, exact_only: Literal[True]
    ) -> FoldAnswer | None: ...
    def scores(
        self, train: np.ndarray, test: np.ndarray, *, exact_only: bool = False
    ) -> FoldAnswer | None:
        """One fold: per α, its prediction and selection numbers; its worst gap; any fallback.

        With `exact_only` (on a pool thread) a path the homotopy cannot solve is
        not solved by coordinate descent: the fold's answer is then None.
        """
        y, z, columns = self.y, self.z, self.samples.shape[1]
        with self.buffers.take() as (rows_buffer, scaled_buffer):
            rows = rows_buffer[: len(train) * columns].reshape(len(train), columns)
            np.take(self.samples, train, axis=0, out=rows, mode="clip")  # "raise" would buffer
            scaled = scaled_buffer[: len(train) * columns].reshape(rows.shape, order="F")
            x_train, x_test = normalize(rows, self.samples[test], copy=False, out=scaled)
            z_train = z_test = None
            if z is not None:
                z_train, z_test = normalize(z[train], z[test])
            design = design_of(x_train, y[train], covariate_columns(z_train, len(train)), self.lmm)
            solved = (exact_path if exact_only else solve_path)(design.x, design.y, self.grid)
            if not isinstance(solved, SolvedPath):
                return None
            path = solved
            # inside the block: the design may be the buffers themselves (design.covariates)
            numbers: FoldRows = []
            c_test, y_test = covariate_columns(z_test, len(test)), y[test]  # the same for every α
            for coef, _, _ in path.points:
                predicted = _product(x_test, coef) + c_test @ design.covariates(coef)
                scores = prediction_scores(y_test, predicted, binary=self.binary)
                scores["mse"] = float(np.mean((y_test - predicted) ** 2))
                selected = [gene for gene, _ in significant_genes(coef, self.genes)]
                numbers.append((scores, selection_scores(selected, self.known)))
        return numbers, _worst(gap for _, _, gap in path.points), path.fallback


def rows_copy(x: np.ndarray) -> np.ndarray:
    """x in C order, written once without huge pages: a fold's rows gather ~4x faster from it."""
    samples = empty_without_huge_pages(x.shape)
    samples[...] = x
    return samples


def fold_scores(
    pool: ThreadPoolExecutor,
    samples: np.ndarray,
    y: np.ndarray,
    z: np.ndarray | None,
    *,
    genes: Sequence[str],
    known: Sequence[str],
    grid: np.ndarray,
    lmm: bool,
    binary: bool,
) -> tuple[list[FoldRows], float, list[str]]:
    """Per fold and α: prediction numbers (with the squared error) and selection numbers.

    `samples` is the genes table in C order (`rows_copy`). The folds are solved
    on `pool`'s threads, each from its own copies, so the numbers do not depend
    on how many threads there are or which finishes first. A fold the homotopy
    cannot solve is solved again on this thread, with the fallback (`exact_path`).
    """
    folds_of = legacy_fold_indices(len(y), N_FOLDS)
    buffers = _FoldBuffers(max(len(train) for train, _ in folds_of), samples.shape[1])
    folds = _Folds(samples, y, z, genes, known, grid, lmm, binary, buffers)
    trains, tests = zip(*folds_of, strict=True)
    # in the folds' order, whichever finishes first (map cancels what is left on a failure)
    exact = pool.map(functools.partial(folds.scores, exact_only=True), trains, tests)
    results = [
        done if done is not None else folds.scores(train, test)  # the fallback, on this thread
        for done, train, test in zip(exact, trains, tests, strict=True)
    ]
    fallbacks = [fallback for _, _, fallback in results if fallback]
    worst_gap = _worst(gap for _, gap, _ in results)
    return [numbers for numbers, _, _ in results], worst_gap, fallbacks


def _worst(gaps: Iterator[float]) -> float:
    """The largest duality gap, 0 for none (a NaN gap never compares greater, so never wins)."""
    return functools.reduce(max, gaps, 0.0)

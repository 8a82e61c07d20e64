"""`--mode standard`: a regression a statistician would sign, beside the reference one.

What differs from the reference (regression.md), and why:

- **Exact Lasso.** Every α of the path is solved exactly (up to rounding) by
  homotopy (`_homotopy`: the kinks of the piecewise-linear path are followed
  on a screened working set, and the optimality conditions are checked on all
  genes); `scripts/bench_solvers.py` measured it against the iterative
  solvers. Should the homotopy fail on a degenerate problem, that path is
  solved by scikit-learn's coordinate descent, warm-started, until its
  duality gap is at most `STANDARD_TOL`·‖y‖²/n. The gap and the steps of
  every fit are recorded, never silenced, and so is any fallback.
- **Covariates by Frisch-Waugh-Lovell.** The intercept and the condition Z are
  unpenalized: they are partialled out of X and y alike (the reference
  residualizes y only), which is exactly the Lasso with unpenalized [1, Z].
- **A sign-invariant LMM.** With a batch effect, X, y, the intercept column
  and Z are all rotated by diag((S+δ)^-½)·Uᵀ (as FaST-LMM does), so flipping
  any eigenvector's sign flips rows on both sides and changes nothing; δ is
  estimated once per fold, on y with [1, Z] partialled out.
- **α on a relative grid, chosen without the answer key by default.**
  `N_ALPHAS` values from α_max (the smallest α that selects nothing) down to
  α_max·`ALPHA_RATIO`, log-spaced, computed once on the whole data and used in
  every fold. `select_by="prediction"` takes the α of least mean CV squared
  error (ties: the larger α); `"precision"` is the reference's rule (highest
  mean selection precision against the trait's known genes, below α_max, which
  selects nothing on the whole data; the larger α wins ties; no α finding a
  known gene falls back to the prediction rule).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..core import (
    SELECT_BY,
    AlphaGrid,
    SelectBy,
    SolverFallback,
    StandardMethod,
    check_select_by,
    empty_without_huge_pages,
)
from ._blas import one_blas_thread
from ._constants import N_FOLDS
from ._homotopy import HomotopyFailed, lasso_path, relative_duality_gap
from ._numerics import (
    batch_effect_of_centred,
    estimate_log_delta,
    legacy_fold_indices,
    mean_scores,
    normalize,
    prediction_scores,
    scale_centred,
    selection_scores,
    significant_genes,
)

__all__ = [
    "ALPHA_RATIO",
    "N_ALPHAS",
    "SELECT_BY",
    "SOLVER",
    "STANDARD_TOL",
    "SolvedPath",
    "StandardFit",
    "fit_standard",
    "solve_path",
]

#: The largest duality gap accepted, over ‖y‖²/n (scikit-learn's and celer's criterion): the
#: homotopy's gaps are ~1e-15; a fallback path is solved until it holds.
STANDARD_TOL = 1e-4
#: α values on the path, and the smallest as a share of α_max (glmnet's default for p > n).
N_ALPHAS = 10
ALPHA_RATIO = 1e-2
SOLVER = "exact Lasso homotopy (LARS-Lasso) on a screened working set, KKT-checked on all genes"


@dataclass(frozen=True)
class SolvedPath:
    """The Lasso at each α of a decreasing grid, and which solver found it.

    `points` holds (coefficients, steps or iterations, duality gap over ‖y‖²/n)
    per α; `fallback` says why coordinate descent solved it instead of the
    homotopy (None when the homotopy did).
    """

    points: list[tuple[np.ndarray, int, float]]
    fallback: str | None = None


def solve_path(
    x: np.ndarray, y: np.ndarray, grid: Sequence[float] | np.ndarray, *, tol: float = STANDARD_TOL
) -> SolvedPath:
    """The Lasso's path over a decreasing grid: exact by homotopy, else coordinate descent.

    The homotopy's answer is accepted when every duality gap is at most `tol`
    (they are ~1e-15); otherwise, or when it cannot follow the path, scikit-learn
    solves the same grid, warm-started, to the duality-gap tolerance `tol`.
    """
    x = np.asfortranarray(x, dtype=np.float64)
    y = np.ascontiguousarray(y, dtype=np.float64)
    try:
        exact = lasso_path(x, y, grid)
    except HomotopyFailed as failure:
        reason = str(failure)
    else:
        worst = max((point.relative_gap for point in exact), default=0.0)
        if worst <= tol:
            return SolvedPath([(p.coefficients, p.steps, p.relative_gap) for p in exact])
        reason = f"its duality gap {worst:.1e} exceeds {tol:g}"
    return SolvedPath(
        _coordinate_descent_path(x, y, grid, tol), fallback=f"the homotopy failed: {reason}"
    )


def _coordinate_descent_path(
    x: np.ndarray, y: np.ndarray, grid: Sequence[float] | np.ndarray, tol: float
) -> list[tuple[np.ndarray, int, float]]:
    """scikit-learn's warm-started `lasso_path` until the duality gap ≤ `tol`·‖y‖²/n.

    (scikit-learn's own criterion, in its units.) The gaps returned are
    recomputed by `relative_duality_gap`, the formula the homotopy reports.
    """
    with one_blas_thread(libraries=("sklearn.linear_model",)):  # SciPy's BLAS: loaded here
        from sklearn.linear_model import lasso_path as coordinate_descent

        _, coefs, _, iterations = coordinate_descent(
            x,
            y,
            alphas=np.asarray(grid, dtype=np.float64),
            tol=tol,
            max_iter=100_000,
            return_n_iter=True,
        )
    points = []
    for k, alpha in enumerate(grid):
        w = np.array(coefs[:, k])
        residual = y - x @ w
        gap = relative_duality_gap(y, w, float(alpha), residual, x.T @ residual)
        points.append((w, int(iterations[k]), gap))
    return points


@dataclass(frozen=True)
class _Design:
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


def _design(x: np.ndarray, y: np.ndarray, c: np.ndarray, lmm: bool) -> _Design:
    log_delta = None
    xt, yt, ct = x, y, c
    if not lmm and c.shape[1] == 1:  # the intercept only: X is centred already (normalized)
        centred = y - y.mean()
        return _Design(x, centred, x, y, c, None)
    q, _ = np.linalg.qr(c)
    if lmm:
        # only a batch effect needs SciPy (~0.2 s to import): loaded, then limited, here
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
    return _Design(px, py, xt, yt, ct, log_delta)


def _covariates(z: np.ndarray | None, n: int) -> np.ndarray:
    ones = np.ones((n, 1))
    return ones if z is None else np.column_stack((ones, z.reshape(n, -1)))


def _grid(design: _Design) -> np.ndarray:
    n = len(design.y)
    alpha_max = float(np.abs(design.x.T @ design.y).max()) / n
    alpha_max = alpha_max if alpha_max > 0 else 1.0
    return alpha_max * np.logspace(0.0, np.log10(ALPHA_RATIO), N_ALPHAS)


@dataclass(frozen=True)
class StandardFit:
    """The answer of the standard mode and everything needed to describe how it was reached."""

    coefficients: np.ndarray
    alpha: float
    lmm: bool
    cv_performance: dict[str, dict[str, float]]
    method: StandardMethod


class _FoldBuffers:
    """Room for one fold's rows and their scaled copy, written afresh by every fold.

    A fold's table is ~24 MB at 160 x 18,500: faulting in fresh pages for each
    fold cost more than the normalization itself (up to 2x with transparent
    huge pages), so the folds share two buffers.
    """

    def __init__(self, rows: int, columns: int) -> None:
        self.columns = columns
        self._rows = empty_without_huge_pages(rows * columns)
        self._scaled = empty_without_huge_pages(rows * columns)

    def rows(self, samples: np.ndarray, chosen: np.ndarray) -> np.ndarray:
        """samples[chosen] (C order), in the first buffer."""
        out = self._rows[: len(chosen) * self.columns].reshape(len(chosen), self.columns)
        return np.take(samples, chosen, axis=0, out=out, mode="clip")  # "raise" would buffer

    def scaled(self, rows: int) -> np.ndarray:
        """A Fortran-ordered rows x columns view of the second buffer."""
        return self._scaled[: rows * self.columns].reshape((rows, self.columns), order="F")


#: Per α of the grid: (prediction numbers with the squared error, selection numbers).
FoldRows = list[tuple[dict[str, float], dict[str, float]]]


def _fold_scores(
    x: np.ndarray,
    y: np.ndarray,
    z: np.ndarray | None,
    genes: Sequence[str],
    known: Sequence[str],
    *,
    grid: np.ndarray,
    lmm: bool,
    binary: bool,
) -> tuple[list[FoldRows], float, list[str]]:
    """Per fold and α: prediction numbers (with the squared error) and selection numbers."""
    folds: list[FoldRows] = []
    fallbacks: list[str] = []
    worst_gap = 0.0
    samples = empty_without_huge_pages(x.shape)  # a fold's rows are gathered ~4x faster from rows
    samples[...] = x
    folds_of = legacy_fold_indices(len(y), N_FOLDS)
    buffers = _FoldBuffers(max(len(train) for train, _ in folds_of), x.shape[1])
    for train, test in folds_of:
        x_train, x_test = normalize(
            buffers.rows(samples, train), samples[test], copy=False, out=buffers.scaled(len(train))
        )
        z_train = z_test = None
        if z is not None:
            z_train, z_test = normalize(z[train], z[test])
        design = _design(x_train, y[train], _covariates(z_train, len(train)), lmm)
        rows = []
        path = solve_path(design.x, design.y, grid)
        fallbacks += [path.fallback] if path.fallback else []
        c_test, y_test = _covariates(z_test, len(test)), y[test]  # the same for every α
        for coef, _, gap in path.points:
            worst_gap = max(worst_gap, gap)
            predicted = _product(x_test, coef) + c_test @ design.covariates(coef)
            scores = prediction_scores(y_test, predicted, binary=binary)
            scores["mse"] = float(np.mean((y_test - predicted) ** 2))
            selected = [gene for gene, _ in significant_genes(coef, genes)]
            rows.append((scores, selection_scores(selected, known)))
        folds.append(rows)
    return folds, worst_gap, fallbacks


def fit_standard(
    x: np.ndarray,
    y: np.ndarray,
    z: np.ndarray | None,
    genes: Sequence[str],
    known_genes: Sequence[str],
    *,
    binary: bool,
    select_by: SelectBy = "prediction",
) -> StandardFit:
    """Batch test, CV over the relative α grid, the converged final fit on all samples.

    Parameters
    ----------
    x, y, z
        Genes (samples x genes), the trait, and the condition (None: none).
    genes
        The column names of `x`.
    known_genes
        The trait's known genes: the selection scores of the CV, and α with
        `select_by="precision"`.
    binary
        Whether the trait is binary (the CV's prediction scores).
    select_by
        The α rule: "prediction" (least CV squared error) or "precision".

    Returns
    -------
    StandardFit
        The coefficients, α, the CV numbers and the `StandardMethod` behind them.
        `StandardModel` is the same fit as a scikit-learn estimator.
    """
    select_by = check_select_by(select_by)
    # one layout whatever the caller's: a column's sums then have the same bits either way
    x = np.asfortranarray(x, dtype=np.float64)
    # the batch test's and the normalization's (written once: core.empty_without_huge_pages)
    centred = np.subtract(x, np.mean(x, axis=0), out=empty_without_huge_pages(x.shape, order="F"))
    lmm = batch_effect_of_centred(centred)
    present = set(genes)
    known = [g for g in known_genes if g in present]
    x_all, _ = scale_centred(centred)
    z_all = None if z is None else normalize(z)[0]
    full = _design(x_all, y, _covariates(z_all, len(y)), lmm)
    grid = _grid(full)
    folds, cv_gap, fallbacks = _fold_scores(
        x, y, z, genes, known, grid=grid, lmm=lmm, binary=binary
    )
    per_alpha = [
        (mean_scores([fold[i][0] for fold in folds]), mean_scores([fold[i][1] for fold in folds]))
        for i in range(len(grid))
    ]
    by_loss = int(np.argmin([p["mse"] for p, _ in per_alpha]))  # the first (larger α) on ties
    precision = [s["precision"] for _, s in per_alpha]
    chosen, rule = by_loss, "least mean CV squared error"
    if select_by == "precision":
        # α_max selects nothing on the whole data by definition: the rule looks below it
        if max(precision[1:]) > 0:
            chosen = 1 + int(np.argmax(precision[1:]))
            rule = "highest mean CV selection precision (below alpha_max)"
        else:
            rule = "highest mean CV selection precision; none found a known gene: least CV error"
    path = solve_path(full.x, full.y, grid[: chosen + 1])
    fallbacks += [path.fallback] if path.fallback else []
    coef, _, gap = path.points[-1]
    iterations = sum(point[1] for point in path.points)  # from alpha_max down to the chosen one
    method = StandardMethod(
        model="LMM (X, y, 1 and Z rotated)" if lmm else "Lasso",
        solver=SOLVER,
        fallback=_fallback(fallbacks, N_FOLDS + 1),
        tolerance=STANDARD_TOL,
        alpha_grid=AlphaGrid(
            f"{N_ALPHAS} values log-spaced from alpha_max to alpha_max*{ALPHA_RATIO:g}",
            tuple(float(a) for a in grid),
        ),
        select_by=select_by,
        selection_rule=rule,
        alpha=float(grid[chosen]),
        log_delta=full.log_delta,
        final_iterations=iterations,  # kinks followed (or coordinate-descent epochs)
        final_relative_gap=gap,
        largest_cv_relative_gap=cv_gap,
        converged=bool(gap <= STANDARD_TOL and cv_gap <= STANDARD_TOL),
    )
    prediction, selection = per_alpha[chosen]
    performance = {"prediction": prediction, "selection": selection}
    return StandardFit(coef, float(grid[chosen]), lmm, performance, method)


def _fallback(reasons: list[str], paths: int) -> SolverFallback | None:
    """Which paths coordinate descent solved instead of the homotopy, and why (None: none did)."""
    if not reasons:
        return None
    from importlib.metadata import version

    return SolverFallback(
        f"scikit-learn {version('scikit-learn')} lasso_path (warm-started)",
        f"{len(reasons)} of {paths}",
        tuple(sorted(set(reasons))),
    )

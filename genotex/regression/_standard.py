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

import contextlib
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
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
from ._folds import Design, covariate_columns, design_of, fold_scores, rows_copy
from ._numerics import batch_effect_of_centred, mean_scores, normalize, scale_centred
from ._paths import STANDARD_TOL, SolvedPath, exact_path, solve_path

__all__ = [
    "ALPHA_RATIO",
    "N_ALPHAS",
    "SELECT_BY",
    "SOLVER",
    "STANDARD_TOL",
    "SolvedPath",
    "StandardFit",
    "exact_path",
    "fit_standard",
    "solve_path",
]

#: α values on the path, and the smallest as a share of α_max (glmnet's default for p > n).
N_ALPHAS = 10
ALPHA_RATIO = 1e-2
#: The CV's folds and the whole data's path are solved on this many threads. The homotopy's
#: small NumPy calls hold the GIL, but a fold's normalization and the optimality checks'
#: products do not: two threads take ~10% off a benchmark-size fit. The numbers do not
#: depend on it (each fold is computed from its own copies, on one BLAS thread).
FOLD_THREADS = 2

SOLVER = "exact Lasso homotopy (LARS-Lasso) on a screened working set, KKT-checked on all genes"


def _grid(design: Design) -> np.ndarray:
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


def _checked(
    x: np.ndarray, y: np.ndarray, z: np.ndarray | None, genes: Sequence[str]
) -> tuple[np.ndarray, np.ndarray]:
    """The arrays, refused in one sentence before any work when their shapes or values are not
    a problem's: x samples x genes, y one value a sample, all finite.
    """
    x, y = np.asarray(x), np.asarray(y)
    if x.ndim != 2 or y.ndim != 1:
        raise ValueError(f"x must be 2-D (samples x genes) and y 1-D, not {x.shape} and {y.shape}")
    if x.shape[0] != y.shape[0]:
        raise ValueError(
            f"x has {x.shape[0]} rows but y has {y.shape[0]} values: x must be samples x genes"
            + (" (it looks transposed)" if x.shape[1] == y.shape[0] else "")
        )
    if len(genes) != x.shape[1]:
        raise ValueError(f"x has {x.shape[1]} columns but {len(genes)} gene names are given")
    if z is not None and np.asarray(z).shape[0] != y.shape[0]:
        raise ValueError(f"z has {np.asarray(z).shape[0]} rows but y has {y.shape[0]} values")
    for name, values in (("y", y), ("x", x)) + ((("z", np.asarray(z)),) if z is not None else ()):
        try:
            bad = int(np.size(values) - np.count_nonzero(np.isfinite(values)))
        except TypeError:
            raise ValueError(f"{name} holds values that are not numbers") from None
        if bad:
            raise ValueError(
                f"{name} holds {bad} missing or non-finite values: drop or impute them first"
            )
    return x, y


def _batch_choice(x: np.ndarray, centred: np.ndarray, lmm: bool | None) -> bool:
    """Centre `x` into `centred` (the normalization reuses it) and say whether to fit the
    LMM: the batch-effect test's answer, unless the plain model was asked for (`lmm`).
    """
    found = batch_effect_of_centred(np.subtract(x, np.mean(x, axis=0), out=centred))
    return bool(found) if lmm is None else lmm


def fit_standard(
    x: np.ndarray,
    y: np.ndarray,
    z: np.ndarray | None,
    genes: Sequence[str],
    known_genes: Sequence[str],
    *,
    binary: bool,
    select_by: SelectBy = "prediction",
    lmm: bool | None = None,
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
    lmm
        Fit the LMM (True) or the plain Lasso (False) whatever the batch-effect
        test says; None (the default) lets the test choose.

    Returns
    -------
    StandardFit
        The coefficients, α, the CV numbers and the `StandardMethod` behind them.
        `StandardModel` is the same fit as a scikit-learn estimator.

    Notes
    -----
    The fit runs on one BLAS thread, as `answer_problem` does, so a call from a
    notebook gives the CLI's answer bit for bit. The five folds and the whole
    data's path are solved on `FOLD_THREADS` threads, each from its own copies:
    the answer does not depend on their number. SciPy's BLAS (a batch effect's
    `eigh`) is limited on the calling thread for them, since a limit set from a
    pool thread did not hold (SciPy's OpenBLAS 0.3.30), and scikit-learn's
    fallback only ever runs on the calling thread.
    """
    select_by = check_select_by(select_by)
    x, y = _checked(x, y, z, genes)
    # one layout whatever the caller's: a column's sums then have the same bits either way
    x = np.asfortranarray(x, dtype=np.float64)
    present = set(genes)
    known = [g for g in known_genes if g in present]
    with one_blas_thread(reference=False), ThreadPoolExecutor(FOLD_THREADS) as pool:
        samples = pool.submit(rows_copy, x)  # the folds' rows, copied beside the batch test
        # the batch test's and the normalization's (written once: core.empty_without_huge_pages)
        centred = empty_without_huge_pages(x.shape, order="F")
        lmm = _batch_choice(x, centred, lmm)
        # the folds' eigh run on pool threads, from which SciPy's BLAS cannot be limited
        limit = one_blas_thread(libraries=("scipy.linalg",)) if lmm else contextlib.nullcontext()
        with limit, _joined(pool):
            x_all, _ = scale_centred(centred)
            z_all = None if z is None else normalize(z)[0]
            full = design_of(x_all, y, covariate_columns(z_all, len(y)), lmm)
            grid = _grid(full)
            whole = pool.submit(exact_path, full.x, full.y, grid)  # α then picks a prefix
            folds, cv_gap, fallbacks = fold_scores(
                pool,
                samples.result(),
                y,
                z,
                genes=genes,
                known=known,
                grid=grid,
                lmm=lmm,
                binary=binary,
            )
            per_alpha = [
                (mean_scores([f[i][0] for f in folds]), mean_scores([f[i][1] for f in folds]))
                for i in range(len(grid))
            ]
            chosen, rule = _chosen_alpha(per_alpha, select_by)
            path = _prefix(whole.result(), full, grid, chosen)
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


@contextlib.contextmanager
def _joined(pool: ThreadPoolExecutor) -> Iterator[None]:
    """Leave the block only when the pool's threads are done (its work not begun: cancelled)."""
    try:
        yield
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _chosen_alpha(
    per_alpha: list[tuple[dict[str, float], dict[str, float]]], select_by: SelectBy
) -> tuple[int, str]:
    """The grid index the α rule picks from the mean CV numbers per α, and the rule's words."""
    by_loss = int(np.argmin([p["mse"] for p, _ in per_alpha]))  # the first (larger α) on ties
    if select_by != "precision":
        return by_loss, "least mean CV squared error"
    # α_max selects nothing on the whole data by definition: the rule looks below it
    precision = [s["precision"] for _, s in per_alpha]
    if max(precision[1:]) > 0:
        chosen = 1 + int(np.argmax(precision[1:]))
        return chosen, "highest mean CV selection precision (below alpha_max)"
    return by_loss, "highest mean CV selection precision; none found a known gene: least CV error"


def _prefix(whole: SolvedPath | str, design: Design, grid: np.ndarray, chosen: int) -> SolvedPath:
    """The path from α_max down to grid[chosen], from the exact path over the whole grid.

    The homotopy never looks ahead, so the whole path's first `chosen + 1` points
    are the shorter path's, bit for bit, and when it was accepted so is every
    prefix. A whole path it could not solve (perhaps only below the chosen α) is
    solved again over the prefix, as the shorter path alone would have been.
    """
    if isinstance(whole, SolvedPath):
        return SolvedPath(whole.points[: chosen + 1])
    return solve_path(design.x, design.y, grid[: chosen + 1])


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

"""The standard mode's Lasso paths: exact by homotopy, else coordinate descent.

`exact_path` is the homotopy alone (`_homotopy`), NumPy only, so it may run on
any thread; `solve_path` falls back to scikit-learn's warm-started coordinate
descent when the homotopy cannot follow a path or its duality gap is too large.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ._blas import one_blas_thread
from ._homotopy import HomotopyFailed, lasso_path, relative_duality_gap

__all__ = ["STANDARD_TOL", "SolvedPath", "exact_path", "solve_path"]

#: The largest duality gap accepted, over ‖y‖²/n (scikit-learn's and celer's criterion): the
#: homotopy's gaps are ~1e-15; a fallback path is solved until it holds.
STANDARD_TOL = 1e-4


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
    exact = exact_path(x, y, grid, tol=tol)
    if isinstance(exact, SolvedPath):
        return exact
    return SolvedPath(
        _coordinate_descent_path(x, y, grid, tol), fallback=f"the homotopy failed: {exact}"
    )


def exact_path(
    x: np.ndarray, y: np.ndarray, grid: Sequence[float] | np.ndarray, *, tol: float = STANDARD_TOL
) -> SolvedPath | str:
    """`solve_path` by the homotopy alone: its path, or why it was not accepted.

    NumPy only, so it may run on any thread: scikit-learn's fallback loads SciPy's
    BLAS, whose thread count cannot be limited from a pool thread (`fit_standard`).
    """
    x = np.asfortranarray(x, dtype=np.float64)
    y = np.ascontiguousarray(y, dtype=np.float64)
    try:
        exact = lasso_path(x, y, grid)
    except HomotopyFailed as failure:
        return str(failure)
    worst = max((point.relative_gap for point in exact), default=0.0)
    if worst > tol:
        return f"its duality gap {worst:.1e} exceeds {tol:g}"
    return SolvedPath([(p.coefficients, p.steps, p.relative_gap) for p in exact])


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

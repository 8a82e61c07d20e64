#!/usr/bin/env python3
"""Lasso solvers on a benchmark-size problem: time to solve a warm-started α path to a tolerance.

    python scripts/bench_solvers.py [--n 160] [--p 18500] [--repeat 3]

The problem is generated (correlated genes, 20 planted ones, normalized as the
pipeline normalizes). Each solver walks the same relative α grid (20 values,
α_max down to α_max·1e-3), warm-started, at a duality-gap tolerance; reported:
the median seconds over `--repeat` runs, the largest relative duality gap
along the path (checked here by one formula for all), and the objective at the
smallest α against the best found. Solvers: scikit-learn's `lasso_path`,
scikit-learn `Lasso(warm_start=True)`, celer and skglm (when installed), and the
reference's capped `Lasso(alpha)` (max_iter 1000, tol 1e-4) for comparison, and
genotex's exact homotopy (`genotex.regression.lasso_path`, the standard mode's).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def problem(n: int, p: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    factors = rng.normal(size=(n, 30))
    x = factors @ rng.normal(size=(30, p)) * 0.5 + rng.normal(size=(n, p))
    x = (x - x.mean(0)) / x.std(0)
    w = np.zeros(p)
    w[rng.choice(p, 20, replace=False)] = rng.normal(0, 1, 20)
    y = x @ w + rng.normal(size=n)
    return np.asfortranarray(x), y - y.mean()


def objective(x, y, w, alpha):
    r = y - x @ w
    return 0.5 * r @ r / len(y) + alpha * np.abs(w).sum()


def relative_gap(x, y, w, alpha):
    """Duality gap of the Lasso (no intercept, centred data) over ||y||²/(2n)."""
    n = len(y)
    r = y - x @ w
    scale = min(1.0, alpha * n / max(np.abs(x.T @ r).max(), 1e-300))
    theta = r * scale
    dual = 0.5 * (y @ y - (y - theta) @ (y - theta)) / n
    return (objective(x, y, w, alpha) - dual) / (0.5 * y @ y / n)


def solvers(tol: float):
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.linear_model import Lasso, lasso_path

    def sk_path(x, y, grid):
        _, coefs, _ = lasso_path(x, y, alphas=grid, tol=tol, max_iter=100_000)
        return [coefs[:, i] for i in range(len(grid))]

    def sk_warm(x, y, grid):
        model = Lasso(fit_intercept=False, warm_start=True, tol=tol, max_iter=100_000)
        out = []
        for alpha in grid:
            out.append(model.set_params(alpha=alpha).fit(x, y).coef_.copy())
        return out

    def reference(x, y, grid):
        out = []
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            for alpha in grid:
                out.append(Lasso(alpha=alpha, fit_intercept=False).fit(x, y).coef_.copy())
        return out

    found = {"scikit-learn lasso_path": sk_path, "scikit-learn Lasso warm": sk_warm}
    try:
        import celer

        def with_celer(x, y, grid):
            model = celer.Lasso(fit_intercept=False, warm_start=True, tol=tol, max_iter=100)
            return [model.set_params(alpha=a).fit(x, y).coef_.copy() for a in grid]

        found[f"celer {celer.__version__}"] = with_celer
    except ImportError:
        pass
    try:
        import skglm

        def with_skglm(x, y, grid):
            model = skglm.Lasso(fit_intercept=False, warm_start=True, tol=tol, max_iter=100)
            return [model.set_params(alpha=a).fit(x, y).coef_.copy() for a in grid]

        found[f"skglm {skglm.__version__}"] = with_skglm
    except ImportError:
        pass
    from genotex.regression import lasso_path as homotopy

    def exact(x, y, grid):
        return [point.coefficients for point in homotopy(x, y, grid)]

    found["genotex homotopy (exact; tol unused)"] = exact
    found["reference: capped Lasso(alpha), tol 1e-4"] = reference
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=160)
    parser.add_argument("--p", type=int, default=18_500)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--tol", type=float, default=1e-6)
    parser.add_argument("--alphas", type=int, default=20, help="alphas on the path")
    parser.add_argument("--ratio", type=float, default=1e-3, help="smallest alpha / alpha_max")
    args = parser.parse_args()
    x, y = problem(args.n, args.p)
    alpha_max = np.abs(x.T @ y).max() / len(y)
    grid = alpha_max * np.logspace(0, np.log10(args.ratio), args.alphas)
    rows = []
    for name, solve in solvers(args.tol).items():
        solve(x, y, grid[:2])  # warm-up (numba compilation for skglm)
        times, paths = [], None
        for _ in range(args.repeat):
            started = time.perf_counter()
            paths = solve(x, y, grid)
            times.append(time.perf_counter() - started)
        gaps = [relative_gap(x, y, w, a) for w, a in zip(paths, grid, strict=True)]
        rows.append(
            (name, statistics.median(times), max(gaps), objective(x, y, paths[-1], grid[-1]))
        )
    best = min(r[3] for r in rows)
    print(
        f"n = {args.n}, p = {args.p}, {args.alphas} alphas from alpha_max to "
        f"alpha_max*{args.ratio:g}, tol {args.tol:g}"
    )
    print("| solver | median s | largest relative gap | objective at smallest alpha / best |")
    print("|---|---:|---:|---:|")
    for name, seconds, gap, obj in rows:
        print(f"| {name} | {seconds:.2f} | {gap:.1e} | {obj / best:.4f} |")


if __name__ == "__main__":
    main()

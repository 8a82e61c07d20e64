"""The standard mode's Lasso: the exact homotopy path against scikit-learn converged to 1e-12."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.linear_model import Lasso

from genotex.regression import HomotopyFailed, fit_standard, lasso_path, solve_path
from genotex.regression import _paths as paths
from genotex.regression import _standard as standard


def _objective(x, y, w, alpha):
    r = y - x @ w
    return 0.5 * r @ r / len(y) + alpha * np.abs(w).sum()


def _tight(x, y, alpha):
    """scikit-learn's coordinate descent run to a 1e-12 tolerance: the independent answer."""
    fit = Lasso(alpha=alpha, fit_intercept=False, tol=1e-12, max_iter=1_000_000).fit(x, y)
    return fit.coef_


def _problem(n, p, seed, planted=8):
    rng = np.random.default_rng(seed)
    factors = rng.normal(size=(n, 10))
    x = factors @ rng.normal(size=(10, p)) * 0.5 + rng.normal(size=(n, p))
    x = (x - x.mean(0)) / x.std(0)
    y = x[:, :planted] @ rng.normal(size=planted) + rng.normal(size=n)
    return np.asfortranarray(x), y - y.mean()


@pytest.mark.parametrize(("n", "p", "seed"), [(60, 40, 0), (50, 400, 1), (80, 3000, 2)])
def test_the_path_equals_scikit_learn_converged_to_1e_12(n, p, seed):
    x, y = _problem(n, p, seed)
    alpha_max = np.abs(x.T @ y).max() / n
    grid = alpha_max * np.logspace(0, -2, 8)
    points = lasso_path(x, y, grid)
    for alpha, point in zip(grid, points, strict=True):
        tight = _tight(x, y, alpha)
        assert _objective(x, y, point.coefficients, alpha) <= _objective(x, y, tight, alpha) + 1e-12
        np.testing.assert_allclose(point.coefficients, tight, atol=1e-6)
        assert set(np.flatnonzero(np.abs(tight) > 1e-6)) == set(np.flatnonzero(point.coefficients))
        assert point.relative_gap <= 1e-12


def test_alpha_max_selects_nothing_and_above_it_too():
    x, y = _problem(40, 100, 3)
    alpha_max = np.abs(x.T @ y).max() / len(y)
    points = lasso_path(x, y, [2 * alpha_max, alpha_max])
    assert all(not np.any(point.coefficients) for point in points)


def test_the_grid_must_go_down():
    x, y = _problem(20, 30, 4)
    with pytest.raises(ValueError, match="decreasing"):
        lasso_path(x, y, [0.1, 0.2])


def test_a_gene_the_screen_misses_still_enters():
    """Gene 1 is orthogonal to y (|x_1ᵀy| = 0, so no screen keeps it at first), yet y follows
    gene 0 − gene 1: only the KKT check on all genes can bring gene 1 in."""
    rng = np.random.default_rng(5)
    n, p = 100, 500
    x = rng.normal(size=(n, p))
    x[:, 2:12] += rng.normal(size=(n, 1)) * 2  # a correlated block that wins the first screens
    noise = rng.normal(size=n)
    y = 0.3 * x[:, 2:12].sum(1) + noise
    y -= y.mean()
    z = rng.normal(size=n)
    z -= z.mean()
    z -= (z @ y) / (y @ y) * y  # orthogonal to y
    x[:, 1] = z
    x[:, 0] = z + 0.5 * (noise - noise.mean())
    x = np.asfortranarray((x - x.mean(0)) / x.std(0))
    start = np.abs(x.T @ y)
    assert start[1] < 1e-9 * start.max()
    alpha = 0.005 * start.max() / n
    (point,) = lasso_path(x, y, [alpha])
    assert point.coefficients[0] > 0 > point.coefficients[1]
    np.testing.assert_allclose(point.coefficients, _tight(x, y, alpha), atol=1e-6)


def test_duplicated_and_constant_genes_reach_the_optimum():
    x, y = _problem(50, 300, 6)
    x[:, 10] = x[:, 0]  # a duplicated gene: the optimum is not unique, its value is
    x[:, 11] = 0.0  # a constant gene, centred
    grid = np.abs(x.T @ y).max() / 50 * np.logspace(0, -1.5, 6)
    for alpha, point in zip(grid, lasso_path(x, y, grid), strict=True):
        best = _objective(x, y, _tight(x, y, alpha), alpha)
        assert abs(_objective(x, y, point.coefficients, alpha) - best) <= 1e-10
        assert point.coefficients[11] == 0.0


def test_a_failed_homotopy_falls_back_to_coordinate_descent_and_says_so(monkeypatch):
    x, y = _problem(60, 200, 7)

    def fails(*args, **kwargs):
        raise HomotopyFailed("the active genes' Gram matrix is singular")

    monkeypatch.setattr(paths, "lasso_path", fails)
    path = solve_path(x, y, [0.1])
    assert path.fallback == "the homotopy failed: the active genes' Gram matrix is singular"
    ((coef, iterations, gap),) = path.points
    assert gap <= paths.STANDARD_TOL and iterations >= 1
    np.testing.assert_allclose(coef, _tight(x, y, 0.1), atol=5e-3)
    genes = [f"G{i}" for i in range(200)]
    fit = fit_standard(x, (y > 0).astype(float), None, genes, genes[:8], binary=True)
    fallback = fit.method.fallback
    assert fallback is not None
    assert fallback.paths == "6 of 6" and fallback.solver.startswith("scikit-learn ")
    assert fallback.reasons == ("the homotopy failed: the active genes' Gram matrix is singular",)


def test_the_homotopy_solves_every_path_of_a_standard_fit():
    x, y = _problem(60, 200, 8)
    genes = [f"G{i}" for i in range(200)]
    fit = fit_standard(x, (y > 0).astype(float), None, genes, genes[:8], binary=True)
    assert fit.method.solver == standard.SOLVER and fit.method.fallback is None
    assert fit.method.largest_cv_relative_gap <= 1e-12


def test_a_dominant_factor_does_not_make_the_working_set_p_wide():
    """Every gene loads on one factor that drives y: all correlations are near the largest, and
    screening by threshold alone would form a p × p Gram matrix."""
    rng = np.random.default_rng(9)
    n, p = 60, 6000
    factor = rng.normal(size=n)
    x = np.outer(factor, rng.uniform(0.9, 1.1, p)) + 0.05 * rng.normal(size=(n, p))
    x = np.asfortranarray((x - x.mean(0)) / x.std(0))
    y = factor + 0.3 * rng.normal(size=n)
    y -= y.mean()
    alpha_max = np.abs(x.T @ y).max() / n
    grid = alpha_max * np.logspace(0, -2, 6)
    points = lasso_path(x, y, grid)
    assert max(point.working_set for point in points) <= 0.5 * p
    for alpha, point in zip(grid, points, strict=True):
        # optimality, checked here on all genes: |x_j'r|/n <= alpha, = alpha*sign(w_j) if w_j != 0
        gradient = x.T @ (y - x @ point.coefficients) / n
        assert np.all(np.abs(gradient) <= alpha * (1 + 1e-9))
        active = point.coefficients != 0
        np.testing.assert_allclose(
            gradient[active], alpha * np.sign(point.coefficients[active]), rtol=1e-8
        )


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(5, 40),
    p=st.integers(1, 120),
    kind=st.sampled_from(["normal", "discrete", "duplicated", "sparse binary"]),
    depth=st.floats(1.0, 3.0),
)
def test_optimality_holds_on_any_design(seed, n, p, kind, depth):
    """Ties (discrete values), duplicated and negated genes, constant genes, p < n or p > n: the
    KKT conditions hold on every gene at every alpha, or the homotopy says it failed."""
    rng = np.random.default_rng(seed)
    if kind == "discrete":
        x = rng.integers(0, 3, size=(n, p)).astype(float)
    elif kind == "sparse binary":
        x = (rng.random((n, p)) < 0.15).astype(float)
    else:
        x = rng.normal(size=(n, p))
    if kind == "duplicated" and p > 2:
        x[:, p // 2 :] = x[:, : p - p // 2] * rng.choice([-1.0, 1.0], p - p // 2)
    std = x.std(0)
    x = np.asfortranarray((x - x.mean(0)) / np.where(std == 0, 1, std))
    y = x[:, : min(3, p)] @ rng.normal(size=min(3, p)) + rng.normal(size=n)
    y -= y.mean()
    alpha_max = np.abs(x.T @ y).max() / n
    if alpha_max == 0:
        return
    grid = alpha_max * np.logspace(0, -depth, 6)
    try:
        points = lasso_path(x, y, grid)
    except HomotopyFailed:
        return  # solve_path then falls back (tested above); a failure must not be a wrong answer
    for alpha, point in zip(grid, points, strict=True):
        gradient = x.T @ (y - x @ point.coefficients) / n
        assert np.abs(gradient).max() <= alpha * (1 + 1e-8)
        active = point.coefficients != 0
        np.testing.assert_allclose(
            gradient[active], alpha * np.sign(point.coefficients[active]), rtol=1e-7
        )


@pytest.mark.parametrize("keep", [1, 4, 9])
def test_a_path_begins_with_the_path_over_the_first_alphas_bit_for_bit(keep):
    """fit_standard solves the whole data's path over the whole grid beside the folds and
    keeps the points down to the chosen α: that is only the shorter path if the homotopy
    never looks ahead (its screen, working set and steps up to an α use no later α)."""
    x, y = _problem(70, 900, 12)
    alpha_max = np.abs(x.T @ y).max() / len(y)
    grid = alpha_max * np.logspace(0, -2, 10)
    whole = lasso_path(x, y, grid)
    shorter = lasso_path(x, y, grid[:keep])
    assert len(shorter) == keep
    for long, short in zip(whole, shorter, strict=False):
        assert long.coefficients.tobytes() == short.coefficients.tobytes()
        assert (long.steps, long.relative_gap, long.working_set) == (
            short.steps,
            short.relative_gap,
            short.working_set,
        )


def test_the_working_sets_gram_matrix_is_exactly_symmetric():
    """A segment reads the active genes' Gram columns as rows (they gather faster): the
    same numbers only if the Gram matrix grown block by block is symmetric bit for bit."""
    from genotex.regression._homotopy import _WorkingSet

    x, y = _problem(70, 900, 13)
    state = _WorkingSet(x, y)
    rng = np.random.default_rng(0)
    for size in (5, 40, 3, 200, 1):
        state.grow(rng.choice(900, size=size, replace=False))
    gram = state.gram
    assert len(gram) > 200
    assert np.array_equal(gram, gram.T)
    np.testing.assert_allclose(gram, x[:, state.genes].T @ x[:, state.genes], rtol=1e-12)

"""The regression models of the GenoTEX pipeline (regression.md §§ 3-4), as estimators.

`LassoModel` and `LMMModel` share one small interface (fit / predict / coef_);
`Residualizer` wraps either to regress out a condition first. `StandardModel` is
the standard mode's fit behind the same contract. Hyper-parameters
are stored unchanged in `__init__`; fitted state ends in `_`. Convergence is
recorded (`converged_`), never hidden behind a global warnings filter.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.linalg
from sklearn.base import BaseEstimator, clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import Lasso

from ..core import SelectBy
from ._constants import LOG_DELTA_INTERVALS, LOG_DELTA_RANGE
from ._homotopy import relative_duality_gap
from ._numerics import estimate_log_delta, significant_genes
from ._standard import fit_standard

__all__ = [
    "LassoModel",
    "LMMModel",
    "NullModel",
    "Residualizer",
    "StandardModel",
    "fit_null_model",
]


def _fit_lasso(alpha: float, x: np.ndarray, y: np.ndarray) -> Lasso:
    """scikit-learn's Lasso with its defaults, y as an n x 1 column, as the reference fits it."""
    model = Lasso(alpha=alpha)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # recorded as converged_ instead
        model.fit(x, y.reshape(-1, 1))
    return model


def _check_alpha(alpha: object) -> float:
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not alpha >= 0:
        raise ValueError(f"alpha must be a non-negative number, got {alpha!r}")
    return float(alpha)


class _LassoFitted:
    """Fitted state shared by the Lasso and the LMM: the scikit-learn fit and its diagnostics."""

    def _record(self, lasso: Lasso, x: np.ndarray, y: np.ndarray) -> None:
        """Keep the fit, and what its check needs (the check is made when first asked for:
        a CV fit is never asked, so it costs nothing there).
        """
        self.lasso_ = lasso
        self.coef_ = np.ravel(lasso.coef_)
        self.intercept_ = float(np.ravel(lasso.intercept_)[0])
        self.n_iter_ = int(lasso.n_iter_)
        self._fitted_to: tuple[np.ndarray, np.ndarray] | None = (x, y)
        self._relative_gap: float | None = None

    @property
    def relative_gap_(self) -> float:
        """The fit's duality gap over ‖y‖²/n on the data it was fitted to (centred, as
        scikit-learn fits an intercept): computed, not assumed.
        """
        cached = self._relative_gap
        if cached is None:
            assert self._fitted_to is not None  # kept until the gap is computed
            x, y = self._fitted_to
            centred_x = x - x.mean(axis=0)
            centred_y = np.ravel(y) - float(np.mean(y))
            residual = centred_y - centred_x @ self.coef_
            cached = relative_duality_gap(
                centred_y, self.coef_, float(self.lasso_.alpha), residual, centred_x.T @ residual
            )
            self._relative_gap = cached
            self._fitted_to = None  # the data is not kept once the check is made
        return cached

    @property
    def converged_(self) -> bool:
        """Stopped before max_iter with the duality gap within scikit-learn's tol."""
        lasso = self.lasso_
        return bool(lasso.n_iter_ < lasso.max_iter and self.relative_gap_ <= lasso.tol)


class LassoModel(_LassoFitted, BaseEstimator):
    """L1-penalized linear regression: scikit-learn `Lasso(alpha)` with its default settings.

    Parameters
    ----------
    alpha
        The L1 penalty.

    Attributes
    ----------
    coef_, intercept_
        Gene coefficients and intercept of the fit.
    n_iter_, relative_gap_, converged_
        Coordinate-descent iterations, the fit's duality gap over ‖y‖²/n, and
        whether it converged: stopped before the 1,000-iteration cap with that gap
        within scikit-learn's tol (the reference's fits often do not: recorded,
        not hidden).
    """

    def __init__(self, *, alpha: float = 1.0) -> None:
        self.alpha = alpha

    def fit(self, x: np.ndarray, y: np.ndarray) -> LassoModel:
        self._record(_fit_lasso(_check_alpha(self.alpha), x, y), x, y)
        return self

    def predict(self, x: np.ndarray) -> np.ndarray:
        return np.ravel(self.lasso_.predict(x))


@dataclass(frozen=True)
class NullModel:
    """What the LMM's variance-component search finds for one design matrix and target.

    `rotated_x` is diag((S+δ)^-½)·Uᵀ·X; it depends on X and y but not on λ, so a
    cross-validation fold computes it once for every λ of the grid.
    """

    log_delta: float
    eigenvalues: np.ndarray
    rotated_x: np.ndarray


def fit_null_model(
    x: np.ndarray,
    y: np.ndarray,
    *,
    intervals: int = LOG_DELTA_INTERVALS,
    log_delta_range: tuple[float, float] = LOG_DELTA_RANGE,
) -> NullModel:
    """Estimate log δ by grid + Brent refinement, then rotate X (regression.md § 4, LMM).

    K = X·Xᵀ is decomposed with `scipy.linalg.eigh`: the eigenvectors' signs
    change the fitted model (y is not rotated), and that is the reference's call.
    """
    kernel = x @ x.T
    eigenvalues, eigenvectors = scipy.linalg.eigh(kernel)
    uy = eigenvectors.T @ y.reshape(-1, 1)
    best = estimate_log_delta(eigenvalues, uy, intervals=intervals, log_delta_range=log_delta_range)
    scale = np.sqrt(1.0 / (eigenvalues + np.exp(best)))
    rotated = (eigenvectors.T @ x) * np.tile(scale, (x.shape[1], 1)).T
    return NullModel(float(best), eigenvalues, rotated)


class LMMModel(_LassoFitted, BaseEstimator):
    """The reference's "modified" linear mixed model: confounder correction, then Lasso.

    X is rotated by the null model's eigenvectors and variance ratio; y is not
    (the reference's formulation, whose answer depends on eigenvector signs).
    Coefficients apply to the un-rotated X: predict(X) = X·coef + intercept.

    Parameters
    ----------
    alpha
        The Lasso penalty (the reference's λ, "lamda").
    """

    def __init__(self, *, alpha: float = 0.1) -> None:
        self.alpha = alpha

    def fit(self, x: np.ndarray, y: np.ndarray, *, null_model: NullModel | None = None) -> LMMModel:
        """Fit; `null_model` reuses a variance-component search made for the same X and y."""
        alpha = _check_alpha(self.alpha)
        self.null_model_ = null_model if null_model is not None else fit_null_model(x, y)
        rotated = self.null_model_.rotated_x
        self._record(_fit_lasso(alpha, rotated, y), rotated, y)
        return self

    def predict(self, x: np.ndarray) -> np.ndarray:
        return (x @ self.coef_.reshape(-1, 1) + self.intercept_).ravel()


def _with_intercept(z: np.ndarray) -> np.ndarray:
    return np.column_stack((np.ones(z.shape[0]), z.reshape(z.shape[0], -1)))


class Residualizer(BaseEstimator):
    """Regress y on [1, Z] by least squares first, then fit a clone of `model` to the residual.

    Parameters
    ----------
    model
        An unfitted `LassoModel` or `LMMModel`; it is cloned, never fitted in place.

    Attributes
    ----------
    estimator_
        The fitted clone of `model`.
    coef_
        Its gene coefficients.
    beta_z_
        The least-squares coefficients of [1, Z] (n x 1), or None without Z.
    condition_coef_
        The coefficient of the condition Z, or None without Z.
    n_iter_, converged_
        The fitted model's diagnostics.
    """

    def __init__(self, model: LassoModel | LMMModel) -> None:
        self.model = model

    def fit(
        self, x: np.ndarray, y: np.ndarray, z: np.ndarray | None = None, **fit_params: Any
    ) -> Residualizer:
        """Regress y on [1, Z], then fit the model to the residual."""
        target, beta_z = self.residual(y, z)
        return self.fit_residual(x, target, beta_z, **fit_params)

    @property
    def relative_gap_(self) -> float:
        """The fitted model's duality gap over ‖y‖²/n (computed when first asked for)."""
        return float(self.estimator_.relative_gap_)

    @property
    def converged_(self) -> bool:
        """Whether the fitted model converged (its gap within tolerance, before max_iter)."""
        return bool(self.estimator_.converged_)

    def fit_residual(
        self, x: np.ndarray, target: np.ndarray, beta_z: np.ndarray | None, **fit_params: Any
    ) -> Residualizer:
        """Fit to a residual already computed by `residual` (a CV fold shares it across α)."""
        self.beta_z_ = beta_z
        self.estimator_ = clone(self.model).fit(x, target, **fit_params)
        self.coef_ = self.estimator_.coef_
        self.n_iter_ = self.estimator_.n_iter_
        self.condition_coef_ = None if beta_z is None else float(beta_z[1, 0])
        return self

    @staticmethod
    def residual(y: np.ndarray, z: np.ndarray | None) -> tuple[np.ndarray, np.ndarray | None]:
        """(y − Z1·β_Z as an n x 1 column, β_Z); (y, None) without Z."""
        target = y.reshape(-1, 1)
        if z is None:
            return target, None
        z1 = _with_intercept(z)
        beta = np.linalg.pinv(z1.T @ z1) @ z1.T @ target
        return target - z1 @ beta, beta

    def predict(self, x: np.ndarray, z: np.ndarray | None = None) -> np.ndarray:
        prediction = self.estimator_.predict(x)
        if z is not None and self.beta_z_ is not None:
            prediction = prediction + _with_intercept(z) @ self.beta_z_.ravel()
        return prediction


class StandardModel(BaseEstimator):
    """The standard mode's fit as an estimator: exact Lasso path, CV over a relative α grid.

    The same computation as `fit_standard` (which the CLI calls, to keep
    scikit-learn's import out of the standard mode's start-up), with the
    scikit-learn contract: hyper-parameters stored unchanged in `__init__`,
    `fit` returns the estimator, fitted state ends in `_`, `get_params`,
    `set_params` and `clone` work.

    Parameters
    ----------
    select_by
        The α rule: "prediction" (least mean CV squared error, without the
        answer key) or "precision" (the reference's rule, against `known_genes`).
    known_genes
        The trait's known genes: the CV's selection scores, and α with "precision".

    Attributes
    ----------
    coef_
        Gene coefficients of the final fit (on normalized genes).
    alpha_
        The α chosen.
    lmm_
        Whether a batch effect made it a linear mixed model.
    cv_performance_
        The CV's mean prediction and selection scores at `alpha_`.
    method_
        The `StandardMethod`: solver, grid, rule, convergence diagnostics.
    converged_
        Whether every fit's duality gap is within the tolerance.
    genes_
        The genes `coef_` refers to.
    """

    def __init__(
        self, *, select_by: SelectBy = "prediction", known_genes: Sequence[str] = ()
    ) -> None:
        self.select_by = select_by
        self.known_genes = known_genes

    def fit(
        self,
        x: np.ndarray,
        y: np.ndarray,
        z: np.ndarray | None = None,
        *,
        genes: Sequence[str] | None = None,
        binary: bool | None = None,
    ) -> StandardModel:
        """Fit on samples x genes `x`, trait `y` and optional condition `z`.

        `genes` names the columns (default: "x0", "x1", ...); `binary` says
        whether the trait is binary (default: whether `y` holds only 0 and 1).
        """
        x = np.asarray(x, dtype=np.float64)
        y = np.asarray(y, dtype=np.float64).ravel()
        names = [f"x{i}" for i in range(x.shape[1])] if genes is None else list(genes)
        if len(names) != x.shape[1]:
            raise ValueError(f"{len(names)} gene names for {x.shape[1]} columns")
        if binary is None:
            binary = bool(np.isin(y, (0.0, 1.0)).all())
        fit = fit_standard(
            x, y, z, names, list(self.known_genes), binary=binary, select_by=self.select_by
        )
        self.coef_ = fit.coefficients
        self.alpha_ = fit.alpha
        self.lmm_ = fit.lmm
        self.cv_performance_ = fit.cv_performance
        self.method_ = fit.method
        self.converged_ = fit.method.converged
        self.genes_ = tuple(names)
        return self

    def selected_genes(self) -> list[tuple[str, float]]:
        """The genes with a nonzero coefficient, ranked as a result file lists them."""
        return significant_genes(self.coef_, self.genes_)

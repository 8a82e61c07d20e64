"""The regression models of the GenoTEX pipeline (regression.md §§ 3-4), as estimators.

`LassoModel` and `LMMModel` share one small interface (fit / predict / coef_);
`Residualizer` wraps either to regress out a condition first. Hyper-parameters
are stored unchanged in `__init__`; fitted state ends in `_`. Convergence is
recorded (`converged_`), never hidden behind a global warnings filter.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import scipy.linalg
import scipy.optimize
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import Lasso

__all__ = [
    "BATCH_GAP_NUMERATOR",
    "LassoModel",
    "LMMModel",
    "NullModel",
    "Residualizer",
    "detect_batch_effect",
    "fit_null_model",
    "normalize",
]

#: A batch effect is declared when a gap between the top normalized eigenvalues exceeds this / n.
BATCH_GAP_NUMERATOR = 200.0


def normalize(train: np.ndarray, test: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray | None]:
    """Z-score columns by the training set's mean and population std (std 0: only centred)."""
    mean = np.mean(train, axis=0)
    std = np.std(train, axis=0)
    std = np.where(std == 0, 1, std)
    return (train - mean) / std, None if test is None else (test - mean) / std


def detect_batch_effect(x: np.ndarray) -> bool:
    """Eigen-gap test: any gap > 200/n among the 10 largest eigenvalues of X0·X0ᵀ (normalized)."""
    n = x.shape[0]
    centred = x - x.mean(axis=0)
    eigenvalues = np.sort(np.linalg.eigvalsh(centred @ centred.T))[::-1][:10]
    normalized = eigenvalues / eigenvalues[0]
    gaps = normalized[:-1] - normalized[1:]
    return bool(np.any(gaps > BATCH_GAP_NUMERATOR / n))


def _fit_lasso(alpha: float, x: np.ndarray, y: np.ndarray) -> Lasso:
    """scikit-learn's Lasso with its defaults, y as an n x 1 column, as the reference fits it."""
    model = Lasso(alpha=alpha)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # recorded as converged_ instead
        model.fit(x, y.reshape(-1, 1))
    return model


class LassoModel:
    """L1-penalized linear regression (scikit-learn `Lasso(alpha)`, default settings)."""

    def __init__(self, *, alpha: float = 1.0) -> None:
        self.alpha = alpha

    def fit(self, x: np.ndarray, y: np.ndarray) -> "LassoModel":
        self.lasso_ = _fit_lasso(self.alpha, x, y)
        self.coef_ = np.ravel(self.lasso_.coef_)
        self.converged_ = bool(self.lasso_.n_iter_ < self.lasso_.max_iter)
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


def _negative_log_likelihood(log_delta: float, uy: np.ndarray, eigenvalues: np.ndarray) -> float:
    n = uy.shape[0]
    shifted = eigenvalues + np.exp(log_delta)
    log_det = np.sum(np.log(shifted))
    flat = uy.ravel()
    variance = 1.0 / n * (flat * flat * (1.0 / shifted)).sum()
    return 0.5 * (n * np.log(2.0 * np.pi) + log_det + n + n * np.log(variance))


def fit_null_model(x: np.ndarray, y: np.ndarray, *, intervals: int = 500,
                   log_delta_range: tuple[float, float] = (-5.0, 5.0)) -> NullModel:  # fmt: skip
    """Estimate log δ by grid + Brent refinement, then rotate X (regression.md § 4, LMM).

    K = X·Xᵀ is decomposed with `scipy.linalg.eigh`: the eigenvectors' signs
    change the fitted model (y is not rotated), and that is the reference's call.
    """
    kernel = x @ x.T
    eigenvalues, eigenvectors = scipy.linalg.eigh(kernel)
    uy = eigenvectors.T @ y.reshape(-1, 1)
    low, high = log_delta_range
    grid = np.arange(intervals + 1) / (intervals * 1.0) * (high - low) + low
    nll = np.array([_negative_log_likelihood(g, uy, eigenvalues) for g in grid])
    best_nll = nll.min()
    best = grid[nll.argmin()]
    for i in range(1, intervals):
        if nll[i] < nll[i - 1] and nll[i] < nll[i + 1]:
            log_delta, value, _, _ = scipy.optimize.brent(
                _negative_log_likelihood, (uy, eigenvalues), (grid[i - 1], grid[i], grid[i + 1]), full_output=True
            )
            if value < best_nll:
                best_nll, best = value, log_delta
    scale = np.sqrt(1.0 / (eigenvalues + np.exp(best)))
    rotated = (eigenvectors.T @ x) * np.tile(scale, (x.shape[1], 1)).T
    return NullModel(float(best), eigenvalues, rotated)


class LMMModel:
    """The reference's "modified" linear mixed model: confounder correction, then Lasso.

    X is rotated by the null model's eigenvectors and variance ratio; y is not.
    Coefficients apply to the un-rotated X: predict(X) = X·coef + intercept.
    """

    def __init__(self, *, alpha: float = 0.1) -> None:
        self.alpha = alpha  # the reference's λ ("lamda")

    def fit(self, x: np.ndarray, y: np.ndarray, *, null_model: NullModel | None = None) -> "LMMModel":
        self.null_model_ = null_model if null_model is not None else fit_null_model(x, y)
        self.lasso_ = _fit_lasso(self.alpha, self.null_model_.rotated_x, y)
        self.coef_ = np.ravel(self.lasso_.coef_)
        self.converged_ = bool(self.lasso_.n_iter_ < self.lasso_.max_iter)
        return self

    def predict(self, x: np.ndarray) -> np.ndarray:
        return (x @ self.coef_.reshape(-1, 1) + self.lasso_.intercept_).ravel()


def _with_intercept(z: np.ndarray) -> np.ndarray:
    return np.column_stack((np.ones(z.shape[0]), z.reshape(z.shape[0], -1)))


class Residualizer:
    """Regress y on [1, Z] by least squares first, then fit the model to the residual.

    `coef_` is [β_Z without its intercept] followed by the model's gene coefficients.
    """

    def __init__(self, model: LassoModel | LMMModel) -> None:
        self.model = model

    def fit(self, x: np.ndarray, y: np.ndarray, z: np.ndarray | None = None, **fit_params) -> "Residualizer":
        target, self.beta_z_ = self.residual(y, z)
        self.model.fit(x, target, **fit_params)
        return self

    def fit_residual(self, x: np.ndarray, target: np.ndarray, beta_z: np.ndarray | None,
                     **fit_params) -> "Residualizer":  # fmt: skip
        """Fit the model to a residual already computed by `residual` (shared across α)."""
        self.beta_z_ = beta_z
        self.model.fit(x, target, **fit_params)
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
        prediction = self.model.predict(x)
        if z is not None and self.beta_z_ is not None:
            prediction = prediction + _with_intercept(z) @ self.beta_z_.ravel()
        return prediction

    @property
    def coef_(self) -> np.ndarray:
        genes = np.ravel(self.model.coef_)
        if self.beta_z_ is None:
            return genes
        return np.concatenate((self.beta_z_[1:].ravel(), genes))

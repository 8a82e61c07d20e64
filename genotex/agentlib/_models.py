"""The statistics' building blocks at the paper's level: the normalization, the model classes,
the residualization regressor built from a model constructor, the cross-validation tuner over a
constructor and a grid, and the two-step's first-stage models.

The Statistician assembles a problem's fit from these, as the paper's did: which columns are
X, whether to residualize on a condition, which model, which grid, what is normalized before
the final fit. The numbers are the reference pipeline's (every fit on one BLAS thread, so
the same calls give the same bytes).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
from sklearn import linear_model as _sk

from ..regression import one_blas_thread
from ..regression._models import LassoModel, LMMModel, Residualizer
from ._settings import lmm_allowed

__all__ = [
    "LMM",
    "Lasso",
    "LinearRegression",
    "LogisticRegression",
    "ResidualizationRegressor",
    "normalize_data",
    "tune_hyperparameters",
]

_NO_BEC = "batch-effect correction is off in this run (No BEC): use Lasso, not LMM"


def _matrix(values: Any, what: str) -> np.ndarray:
    """`values` (a DataFrame, a Series or an array) as finite floats, column-major when 2-D
    (one memory order for every caller: the sums, and so the bits, do not depend on how the
    caller extracted the matrix).
    """
    array = np.asarray(values.to_numpy(float) if isinstance(values, (pd.DataFrame, pd.Series))
                       else values, dtype=float)  # fmt: skip
    if array.ndim not in (1, 2) or array.shape[0] == 0:
        raise ValueError(f"{what} must be a non-empty 1-D or 2-D array, not shape {array.shape}")
    if not np.isfinite(array).all():
        raise ValueError(f"{what} has missing or infinite values: handle them first")
    return np.asfortranarray(array) if array.ndim == 2 else array.copy()


def normalize_data(X_train: Any, X_test: Any = None) -> tuple[np.ndarray, np.ndarray | None]:
    """Z-score each column by `X_train`'s mean and population standard deviation (a column
    with no spread is only centred); `X_test`, when given, with the training set's numbers.

    Returns ``(X_train normalized, X_test normalized or None)`` as arrays. Normalize X before
    the final fit; `tune_hyperparameters` normalizes each fold itself, so give it X as loaded.
    """
    from ..regression import normalize

    train = _matrix(X_train, "X_train")
    test = None if X_test is None else _matrix(X_test, "X_test")
    return normalize(train, test)


class Lasso(LassoModel):
    """The Lasso (scikit-learn's, with its defaults): ``Lasso(alpha=1.0)``.

    ``fit(X, y)``, ``predict(X)``; after the fit ``coef_`` holds each column's coefficient.
    Its only argument is ``alpha``, the L1 penalty.
    """


class LMM(LMMModel):
    """The sparse linear mixed model (the Lasso after rotating out the samples' relatedness,
    X·Xᵀ): ``LMM(alpha=0.1)``, for samples that fall into batches.

    ``fit(X, y)``, ``predict(X)``; after the fit ``coef_``. Its only argument is ``alpha``.
    Refused when the run turns batch-effect correction off (No BEC).
    """

    def __init__(self, *, alpha: float = 0.1) -> None:
        if not lmm_allowed():
            raise ValueError(_NO_BEC)
        super().__init__(alpha=alpha)


class LinearRegression(_sk.LinearRegression):
    """scikit-learn's ordinary least squares, for a two-step problem's first stage (a
    continuous condition, fewer regressors than samples). Every argument of scikit-learn's.
    """


class LogisticRegression(_sk.LogisticRegression):
    """scikit-learn's logistic regression, for a two-step problem's first stage (a binary
    condition; ``predict_proba(X)[:, 1]`` is the probability of the class 1). Every argument of
    scikit-learn's: an L1 penalty is ``solver="liblinear"`` with ``l1_ratio=1.0`` (scikit-learn
    1.8 and later) or ``penalty="l1"`` (before it).
    """


def _model_class(model_constructor: Any) -> type[Lasso] | type[LMM]:
    if model_constructor not in (Lasso, LMM):
        raise TypeError(f"the model constructor must be Lasso or LMM, not {model_constructor!r}")
    if model_constructor is LMM and not lmm_allowed():
        raise ValueError(_NO_BEC)
    return model_constructor


class ResidualizationRegressor:
    """A model of Y on X after Y is regressed on the condition Z: ``ResidualizationRegressor(
    model_constructor, params)`` builds ``model_constructor(**params)`` (``Lasso`` or ``LMM``,
    ``params`` such as ``{"alpha": 0.01}``).

    ``fit(X, Y, Z=None)``: without Z, the model is fitted to Y; with Z (a column, or one per
    condition), Y is first regressed on ``[1, Z]`` by least squares and the model is fitted to
    the residual. ``predict(X, Z=None)`` adds Z's part back. After the fit ``coef_`` (and
    ``get_coefficients()``) holds each column of X's coefficient, ``condition_coef_`` Z's.
    X and Z are used as given: normalize them first.
    """

    def __init__(self, model_constructor: Any, params: dict | None = None) -> None:
        self.model_constructor = model_constructor
        self.params = dict(params or {})
        self._model = _model_class(model_constructor)(**self.params)

    def fit(self, X: Any, Y: Any, Z: Any = None) -> ResidualizationRegressor:
        x, y = _matrix(X, "X"), _matrix(Y, "Y").ravel()
        if x.ndim != 2 or len(y) != x.shape[0]:
            raise ValueError(f"X must be samples × genes with one Y per sample: X is "
                             f"{x.shape}, Y has {len(y)} values")  # fmt: skip
        z = None if Z is None else _matrix(Z, "Z")
        if z is not None and z.shape[0] != len(y):
            raise ValueError(f"Z has {z.shape[0]} rows, Y {len(y)}: one per sample")
        with one_blas_thread(reference=True):
            self.fitted_ = Residualizer(self._model).fit(x, y, z)
        self.coef_ = self.fitted_.coef_
        self.condition_coef_ = self.fitted_.condition_coef_
        return self

    def get_coefficients(self) -> np.ndarray:
        """Each column of X's coefficient, in X's column order."""
        return self.coef_

    def predict(self, X: Any, Z: Any = None) -> np.ndarray:
        with one_blas_thread(reference=True):
            return self.fitted_.predict(_matrix(X, "X"), None if Z is None else _matrix(Z, "Z"))


def _grid(param_values: Sequence[Any]) -> tuple[float, ...]:
    values = list(param_values) if not isinstance(param_values, (str, bytes, dict)) else []
    good = all(not isinstance(v, bool) and isinstance(v, (int, float, np.number)) and v >= 0
               for v in values)  # fmt: skip
    if not values or not good:
        raise ValueError(f"param_values must be a non-empty list of α ≥ 0, not {param_values!r}")
    return tuple(float(v) for v in values)


def tune_hyperparameters(  # noqa: PLR0917 - the paper's signature, called positionally
    model_constructor: Any,
    param_values: Sequence[float],
    X: Any,
    Y: Any,
    var_names: Sequence[str],
    known_genes: Sequence[str],
    Z: Any = None,
) -> tuple[dict, dict]:
    """Choose α by 5-fold cross-validation of ``model_constructor`` (``Lasso`` or ``LMM``) at
    each α of `param_values` (the benchmark's grid: ``[1e-6, 1e-5, ..., 1]``).

    X (samples × genes, named `var_names`) and Z are given as loaded: each fold is normalized
    by its training part, and with Z, Y is residualized on it as `ResidualizationRegressor`
    does. The α whose selected genes hold the largest share of `known_genes` (precision)
    wins; when no α selects a known gene, α = 0.1.

    Returns ``(best_config, performance)``: ``{"alpha": α}`` (the params of
    `ResidualizationRegressor`) and the CV numbers, ``{"prediction": ..., "selection": ...}``,
    to save with the answer.
    """
    from ..regression._cv import cross_validate  # scikit-learn: imported when first needed

    lmm = _model_class(model_constructor) is LMM
    x, y = _matrix(X, "X"), _matrix(Y, "Y").ravel()
    names = [str(name) for name in var_names]
    if x.ndim != 2 or x.shape != (len(y), len(names)):
        raise ValueError(f"X is {x.shape}: it must be {len(y)} samples (Y) × {len(names)} "
                         "genes (var_names)")  # fmt: skip
    z = None if Z is None else _matrix(Z, "Z")
    with one_blas_thread(reference=True):
        known = [str(g) for g in known_genes]
        binary = len(np.unique(y)) == 2
        choice = cross_validate(
            x, y, z, names, known, lmm=lmm, binary=binary, grid=_grid(param_values)
        )
    return {"alpha": float(choice.alpha)}, choice.performance

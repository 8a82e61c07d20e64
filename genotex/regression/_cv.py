"""Cross-validated choice of the penalty (regression.md § 5), with per-fold work done once.

The reference rebuilds each fold's normalization, residual and (for the LMM)
X·Xᵀ, its eigendecomposition, the δ search and the rotation for every α of
the grid; none of them depends on α, so a `Fold` holds them and only the
Lasso is fitted per α. The fits themselves are the reference's, unchanged,
so the chosen α and the CV numbers are identical.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ._constants import ALPHA_GRID, FALLBACK_ALPHA
from ._models import LassoModel, LMMModel, NullModel, Residualizer, fit_null_model
from ._numerics import (
    legacy_fold_indices,
    mean_scores,
    normalize,
    prediction_scores,
    selection_scores,
    significant_genes,
)

__all__ = [
    "ALPHA_GRID",
    "FALLBACK_ALPHA",
    "CVChoice",
    "Fold",
    "cross_validate",
]


@dataclass(frozen=True)
class Fold:
    """Everything of one CV fold that does not depend on α."""

    x_train: np.ndarray
    x_test: np.ndarray
    y_test: np.ndarray
    z_test: np.ndarray | None
    target: np.ndarray  # residual of y_train on [1, Z_train], n x 1
    beta_z: np.ndarray | None
    null_model: NullModel | None

    @classmethod
    def prepare(
        cls,
        x: np.ndarray,
        y: np.ndarray,
        z: np.ndarray | None,
        train: np.ndarray,
        test: np.ndarray,
        *,
        lmm: bool,
    ) -> Fold:
        x_train, x_test = normalize(x[train], x[test])
        z_train = z_test = None
        if z is not None:
            z_train, z_test = normalize(z[train], z[test])
        target, beta_z = Residualizer.residual(y[train], z_train)
        x_train = np.asfortranarray(x_train)
        null_model = fit_null_model(x_train, target) if lmm else None
        return cls(x_train, x_test, y[test], z_test, target, beta_z, null_model)

    def fit(self, alpha: float, *, lmm: bool) -> Residualizer:
        if lmm:
            return Residualizer(LMMModel(alpha=alpha)).fit_residual(
                self.x_train, self.target, self.beta_z, null_model=self.null_model
            )
        return Residualizer(LassoModel(alpha=alpha)).fit_residual(
            self.x_train, self.target, self.beta_z
        )


@dataclass(frozen=True)
class CVChoice:
    """The chosen α and the CV numbers reported in `cv_performance`."""

    alpha: float
    fallback: bool  # no α selected a known gene: α = FALLBACK_ALPHA
    performance: dict[str, dict[str, float]]  # {"prediction": ..., "selection": ...}
    per_alpha: dict[float, dict[str, dict[str, float]]]


def cross_validate(
    x: np.ndarray,
    y: np.ndarray,
    z: np.ndarray | None,
    genes: Sequence[str],
    known_genes: Sequence[str],
    *,
    lmm: bool,
    binary: bool,
    grid: Sequence[float] = ALPHA_GRID,
) -> CVChoice:
    """5-fold CV of every α; choose the α with the highest mean selection precision."""
    folds = [
        Fold.prepare(x, y, z, train, test, lmm=lmm) for train, test in legacy_fold_indices(len(y))
    ]
    gene_set = set(genes)
    reference = [g for g in known_genes if g in gene_set]
    prediction_key = "f1" if binary else "r_squared"
    best_prediction = best_selection = -np.inf
    chosen = grid[0]
    performance: dict[str, dict[str, float]] = {}
    per_alpha = {}
    for alpha in grid:
        predictions, selections = [], []
        for fold in folds:
            model = fold.fit(alpha, lmm=lmm)
            predicted = model.predict(fold.x_test, fold.z_test)
            predictions.append(prediction_scores(fold.y_test, predicted, binary=binary))
            selected = [gene for gene, _ in significant_genes(model.coef_, genes)]
            selections.append(selection_scores(selected, reference))
        result = {"prediction": mean_scores(predictions), "selection": mean_scores(selections)}
        per_alpha[alpha] = result
        if result["prediction"][prediction_key] > best_prediction:
            best_prediction = result["prediction"][prediction_key]
            performance["prediction"] = result["prediction"]
        if result["selection"]["precision"] > best_selection:
            best_selection = result["selection"]["precision"]
            chosen = alpha
            performance["selection"] = result["selection"]
    fallback = best_selection <= 0
    return CVChoice(FALLBACK_ALPHA if fallback else chosen, fallback, performance, per_alpha)

"""A problem's statistics, one transformation a call: the cohorts chosen and loaded, the
two-step's regressors and predicted condition, the batch-effect test, the α chosen by
cross-validation on the standard grid and folds, the final fit, the ranked genes, the file.

Every fit runs on one BLAS thread, so the same calls give the same numbers byte for byte.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from ..core import (
    CohortInfoReader,
    GuardedTree,
    ProblemId,
    ResultFile,
    TaskInfo,
    gene_regressors,
    read_table,
    select_cohorts,
    selected_cohorts,
)
from ..regression import one_blas_thread, result_path
from ..regression import predict_condition as _predict_condition
from ..regression import significant_genes as _significant_genes
from ._settings import lmm_allowed

__all__ = [
    "CVResult",
    "LoadedCohorts",
    "cross_validation",
    "detect_batch_effect",
    "fit_model",
    "get_gene_regressors",
    "get_known_genes",
    "interpret_result",
    "predict_condition",
    "save_result",
    "select_and_load_cohort",
    "split_features",
]

_NOT_GENES = ("Age", "Gender")


@dataclass(frozen=True)
class LoadedCohorts:
    """What `select_and_load_cohort` gives: the cohort IDs chosen, the trait cohort's linked
    table, and (two-step problems) the condition cohort's linked table.
    """

    cohorts: tuple[str, ...]
    trait_data: pd.DataFrame
    condition_data: pd.DataFrame | None = None


def _linked(data_dir: Path, trait: str, cohort: str) -> pd.DataFrame:
    path = data_dir / trait / f"{cohort}.csv"
    table = read_table(path, features_are_rows=False)
    return pd.DataFrame(table.values, index=pd.Index(table.row_labels, dtype=object),
                        columns=pd.Index(table.column_labels, dtype=object))  # fmt: skip


def select_and_load_cohort(
    data_dir: str, trait: str, condition: str | None, task_info_file: str
) -> LoadedCohorts | None:
    """Choose the cohort(s) of a problem as the benchmark does and load their linked tables.

    One-step problems (no condition, ``Age`` or ``Gender``): the usable cohort of the
    trait with the most samples (that records the condition). Two-step problems
    (the condition is another trait): the pair of usable cohorts, one of each trait, with
    the largest product of sample sizes that shares at least one gene regressor. None
    when no cohort (pair) can answer.
    """
    problem = ProblemId(trait, None if condition in (None, "None") else condition)
    root = Path(data_dir)
    reader = CohortInfoReader(GuardedTree.trusted(root, prefix=""), lambda *_: None,
                              unreadable_as_missing=True, folder="")  # fmt: skip
    chosen = selected_cohorts(select_cohorts(reader, problem, TaskInfo.read(task_info_file)))
    if not chosen:
        return None
    condition_data = None
    if len(chosen) == 2 and problem.condition is not None:
        condition_data = _linked(root, problem.condition, chosen[1])
    return LoadedCohorts(chosen, _linked(root, trait, chosen[0]), condition_data)


def split_features(
    data: pd.DataFrame, trait: str, condition: str | None = None
) -> tuple[pd.DataFrame, pd.Series, pd.Series | None]:
    """``(X, Y, Z)`` of a linked table: X the genes (every column but the trait, ``Age``,
    ``Gender`` and the condition), Y the trait, Z the condition's column (None without one).
    """
    dropped = {trait, *_NOT_GENES, *([condition] if condition else [])}
    x = data[[c for c in data.columns if c not in dropped]]
    z = data[condition] if condition and condition in data.columns else None
    return x, data[trait], z


def get_known_genes(task_info_file: str, trait: str) -> list[str]:
    """The genes known to be related to `trait` (task_info.json): what cross-validation
    counts as a correct selection.
    """
    return list(TaskInfo.read(task_info_file).genes_of(trait))


def get_gene_regressors(
    trait: str, condition: str, trait_data: pd.DataFrame, condition_data: pd.DataFrame,
    task_info_file: str,
) -> list[str]:  # fmt: skip
    """The two-step's features: genes known for the condition but not for the trait, present
    in both tables, in the order of the condition's known genes.
    """
    info = TaskInfo.read(task_info_file)
    return gene_regressors(trait, condition, trait_data.columns, condition_data.columns, info)


def predict_condition(
    condition_data: pd.DataFrame, trait_data: pd.DataFrame, condition: str, regressors: list[str]
) -> np.ndarray:
    """The two-step's first step: a model of `condition` trained on the condition cohort's
    `regressors`, predicting it for each sample of the trait cohort (a probability when the
    condition is binary). Use the result as Z of the trait's model.
    """
    if not regressors:
        raise ValueError("no regressor gene: the two-step cannot predict the condition")
    with one_blas_thread(reference=True):
        predicted, _ = _predict_condition(
            *(
                np.ascontiguousarray(frame.to_numpy(float))
                for frame in (
                    condition_data[regressors],
                    condition_data[condition],
                    trait_data[regressors],
                )
            )
        )  # C order, as the reference's columns are stacked: sums are order-sensitive
    return predicted


def detect_batch_effect(x: pd.DataFrame) -> bool:
    """Whether the samples fall into batches (the gap test on the top eigenvalues of the
    normalized X·Xᵀ): if so, fit the linear mixed model (``model="lmm"``).
    """
    from ..regression import detect_batch_effect as _detect

    return bool(_detect(x.to_numpy(float)))


@dataclass(frozen=True)
class CVResult:
    """The α chosen by 5-fold cross-validation and the CV numbers behind it."""

    alpha: float
    performance: dict


def _arrays(
    x: pd.DataFrame, y: pd.Series, z: np.ndarray | pd.Series | None
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    values = x.to_numpy(float)
    if not np.isfinite(values).all() or not np.isfinite(np.asarray(y, float)).all():
        raise ValueError("X or Y has missing or infinite values: handle them first")
    zz = None if z is None else np.asarray(z, dtype=float)
    return np.asfortranarray(values), np.asarray(y, float).copy(), zz


def _lmm(model: str) -> bool:
    if model not in ("lasso", "lmm"):
        raise ValueError(f"model must be 'lasso' or 'lmm', not {model!r}")
    if model == "lmm" and not lmm_allowed():
        raise ValueError("batch-effect correction is off in this run (No BEC): use model='lasso'")
    return model == "lmm"


def cross_validation(
    x: pd.DataFrame,
    y: pd.Series,
    z: np.ndarray | pd.Series | None = None,
    *,
    model: str,
    known_genes: list[str],
) -> CVResult:
    """5-fold cross-validation of each α of the standard grid; the α whose selected genes hold
    the most `known_genes` (precision) wins (0.1 when none finds one). `model` is
    ``"lasso"`` or ``"lmm"``.
    """
    from ..regression._cv import cross_validate  # scikit-learn: imported when first needed

    lmm = _lmm(model)
    xx, yy, zz = _arrays(x, y, z)
    with one_blas_thread(reference=True):
        choice = cross_validate(xx, yy, zz, [str(c) for c in x.columns], list(known_genes),
                                lmm=lmm, binary=len(np.unique(yy)) == 2)  # fmt: skip
    return CVResult(float(choice.alpha), choice.performance)


def fit_model(
    x: pd.DataFrame,
    y: pd.Series,
    z: np.ndarray | pd.Series | None = None,
    *,
    model: str,
    alpha: float,
) -> pd.Series:
    """The final fit on all samples (X normalized; with Z, Y is first regressed on it): each
    gene's coefficient, in X's column order.
    """
    from ..regression import normalize
    from ..regression._models import LassoModel, LMMModel, Residualizer

    lmm = _lmm(model)
    xx, yy, zz = _arrays(x, y, z)
    with one_blas_thread(reference=True):
        normalized, _ = normalize(xx)
        condition = None if zz is None else normalize(zz)[0]
        estimator = LMMModel(alpha=alpha) if lmm else LassoModel(alpha=alpha)
        fitted = Residualizer(estimator).fit(np.asfortranarray(normalized), yy, condition)
    return pd.Series(fitted.coef_, index=[str(c) for c in x.columns], dtype=float)


def interpret_result(coefficients: pd.Series) -> list[tuple[str, float]]:
    """The genes with a non-zero coefficient, largest absolute value first (ties keep order)."""
    return _significant_genes(coefficients.to_numpy(float), [str(g) for g in coefficients.index])


def save_result(
    out_dir: str, trait: str, condition: str | None, genes: list[tuple[str, float]],
    cv_performance: dict,
) -> str:  # fmt: skip
    """Write the answer, ``<out_dir>/<trait>/significant_genes_condition_<condition>.json``:
    the ranked `(gene, coefficient)` pairs and the CV numbers. Returns its path.
    """
    path = result_path(
        out_dir, ProblemId(trait, None if condition in (None, "None") else condition)
    )
    ResultFile(tuple(str(g) for g, _ in genes), tuple(float(c) for _, c in genes),
               dict(cv_performance)).write(path)  # fmt: skip
    return str(path)

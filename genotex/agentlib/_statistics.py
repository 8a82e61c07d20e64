"""A problem's data and answer: the cohorts chosen and loaded, the trait's known genes, the
two-step's gene regressors, the batch-effect test, the ranked genes of a fitted model, the file.

The fit between them is the Statistician's, from the pieces of `_models`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..core import (
    CohortInfoReader,
    GuardedTree,
    ProblemId,
    ResultFile,
    TaskInfo,
    finite_or_none,
    gene_regressors,
    read_table,
    select_cohorts,
    selected_cohorts,
)
from ..regression import result_path
from ..regression import significant_genes as _significant_genes
from ._models import _matrix

__all__ = [
    "LoadedCohorts",
    "detect_batch_effect",
    "get_gene_regressors",
    "get_known_genes",
    "interpret_result",
    "save_result",
    "select_and_load_cohort",
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


def detect_batch_effect(X: Any) -> bool:
    """Whether the samples (rows of X, the genes as loaded) fall into batches: the gap test on
    the top eigenvalues of the normalized X·Xᵀ. If so, the LMM models them.
    """
    from ..regression import detect_batch_effect as _detect

    return bool(_detect(_matrix(X, "X")))


def interpret_result(model: Any, var_names: Sequence[str]) -> list[tuple[str, float]]:
    """The ranked answer of a fitted model (a `ResidualizationRegressor`, `Lasso` or `LMM`):
    ``(gene, coefficient)`` for each of `var_names` (X's columns, in order) whose coefficient
    is non-zero, largest absolute value first (ties keep X's order). A coefficient that is
    not a finite number is never ranked.
    """
    coefficients = np.asarray(getattr(model, "coef_", None), dtype=float).ravel()
    names = [str(name) for name in var_names]
    if coefficients.shape != (len(names),):
        raise ValueError(f"the model has {coefficients.size} coefficients, var_names "
                         f"{len(names)} names: give X's column names, in order")  # fmt: skip
    finite = np.where(np.isfinite(coefficients), coefficients, 0.0)
    return _significant_genes(finite, names)


def save_result(
    out_dir: str, trait: str, condition: str | None, genes: list[tuple[str, float]],
    cv_performance: dict,
) -> str:  # fmt: skip
    """Write the answer, ``<out_dir>/<trait>/significant_genes_condition_<condition>.json``:
    the ranked `(gene, coefficient)` pairs and the CV numbers. Returns its path.

    A coefficient that is not a finite number is refused (ValueError); a CV number that is
    not (an F1 no fold could compute) is written as null, which the evaluator reads as
    absent, not as 0.
    """
    path = result_path(
        out_dir, ProblemId(trait, None if condition in (None, "None") else condition)
    )
    pairs = [(str(g), float(c)) for g, c in genes]
    bad = next((g for g, c in pairs if not math.isfinite(c)), None)
    if bad is not None:  # JSON has no NaN: refused, never written as a bare NaN token
        raise ValueError(f"the coefficient of {bad} is not a finite number: rank finite "
                         "coefficients only (interpret_result does)")  # fmt: skip
    cv = finite_or_none(dict(cv_performance))  # an undefined CV number is written null
    ResultFile(tuple(g for g, _ in pairs), tuple(c for _, c in pairs), cv).write(path)
    return str(path)

"""The data of one problem: chosen cohort(s), X, Y, Z (regression.md §§ 1-2)."""

from __future__ import annotations

import logging
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ..core import (
    CohortInfoReader,
    GenotexError,
    GuardedTree,
    LabelledTable,
    ProblemId,
    TableCache,
    TableError,
    TaskInfo,
    gene_regressors,
    read_table,
    select_cohorts,
    selected_cohorts,
)
from ._constants import LEGACY_SEED, N_FOLDS
from ._numerics import normalize

if TYPE_CHECKING:  # scikit-learn is imported where it is used: `--mode standard` never needs it
    from sklearn.linear_model import LogisticRegression

__all__ = ["ProblemData", "ProblemSkipped", "ProblemFailed", "load_problem", "predict_condition"]

_AGE_GENDER = ("Age", "Gender")
log = logging.getLogger("genotex.regression")


class ProblemSkipped(Exception):
    """The problem has no data to answer it (no usable cohort or pair): not an error."""


class ProblemFailed(GenotexError):
    """The problem's data exist but cannot be analysed (unreadable, non-numeric, constant trait)."""


@dataclass(frozen=True)
class ProblemData:
    """X (genes), Y (trait) and Z (condition) of one problem, with the names behind them."""

    problem: ProblemId
    cohorts: tuple[str, ...]  # (trait cohort,) or (trait cohort, condition cohort)
    x: np.ndarray  # samples x genes, as loaded
    y: np.ndarray  # samples
    z: np.ndarray | None  # samples, or None for the unconditional problem
    genes: tuple[str, ...]  # the columns of x
    regressors: tuple[str, ...] = ()  # two-step: genes that predict the condition
    condition_model: str | None = None  # two-step: the model that predicted the condition

    @property
    def binary(self) -> bool:
        """The trait is binary when the whole Y has exactly two distinct values."""
        return len(np.unique(self.y)) == 2


def _logistic_l1() -> LogisticRegression:
    """`LogisticRegression(penalty="l1", solver="liblinear", random_state=LEGACY_SEED)`, as the
    reference.

    scikit-learn 1.8 deprecated `penalty`; `l1_ratio=1` is the same model there.
    """
    import sklearn
    from sklearn.linear_model import LogisticRegression

    major, minor = (int(part) for part in sklearn.__version__.split(".")[:2])
    if (major, minor) >= (1, 8):
        return LogisticRegression(l1_ratio=1.0, solver="liblinear", random_state=LEGACY_SEED)
    return LogisticRegression(penalty="l1", solver="liblinear", random_state=LEGACY_SEED)


def predict_condition(
    x_condition: np.ndarray, y_condition: np.ndarray, x_trait: np.ndarray
) -> tuple[np.ndarray, str]:
    """Train the condition on its cohort's regressor genes; predict it in the trait cohort.

    The models are scikit-learn's, as the reference's (imported here: only
    two-step problems need them).
    """
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.linear_model import Lasso, LinearRegression, LogisticRegression

    binary = len(np.unique(y_condition)) == 2
    wide = x_condition.shape[1] > x_condition.shape[0]
    if binary:
        model = _logistic_l1() if wide else LogisticRegression()
        name = "L1 logistic regression" if wide else "logistic regression"
    else:
        model = Lasso() if wide else LinearRegression()
        name = "Lasso (alpha 1)" if wide else "linear regression"
    # column-major, as the trait's genes are normalized (and as the paper library's
    # `normalize_data` does whatever order it is given): the column sums, so the last bits,
    # depend on the order; the reference's row-major sums differ from these in the last bits
    train, _ = normalize(np.asfortranarray(x_condition))
    target, _ = normalize(np.asfortranarray(x_trait))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model.fit(train, y_condition)
    predicted = model.predict_proba(target)[:, 1] if binary else model.predict(target)
    return predicted, name


def _load(data_dir: Path, trait: str, cohort: str, cache: TableCache | None) -> LabelledTable:
    path = data_dir / trait / f"{cohort}.csv"
    try:
        table = read_table(path, features_are_rows=False, cache=cache)
    except TableError as exc:
        raise ProblemFailed(exc.reason, path=path) from None
    if table.bad_cells:
        column = table.column_labels[next(iter(table.bad_cells))]
        raise ProblemFailed(f"column {column!r} holds non-numeric values", path=path)
    return table


def _column(table: LabelledTable, name: str, path: Path) -> np.ndarray:
    positions = np.flatnonzero(table.column_labels == name)
    if len(positions) == 0:
        raise ProblemFailed(f"the table has no column {name!r}", path=path)
    return table.values[:, positions[0]]


def _check_finite(values: np.ndarray, what: str, path: Path) -> None:
    if not np.isfinite(values).all():
        raise ProblemFailed(f"{what} has missing or infinite values", path=path)


def _warn(file: str, reason: str) -> None:
    """What the cohort reader finds wrong in the data folder (bad record, unreadable header)."""
    log.warning("%s: %s", file, reason)


def _choose(data_dir: Path, problem: ProblemId, task_info: TaskInfo) -> tuple[str, ...]:
    """The chosen cohort(s): (trait cohort,) or (trait cohort, condition cohort); else skipped."""
    reader = CohortInfoReader(
        GuardedTree.trusted(data_dir, prefix=""), _warn, unreadable_as_missing=True, folder=""
    )
    choice = select_cohorts(reader, problem, task_info, report=_warn)
    if choice is not None:
        return selected_cohorts(choice)
    if reader.read(problem.trait) is None:
        raise ProblemSkipped(f"no readable cohort_info.json for {problem.trait}")
    if problem.one_step and problem.condition is not None:  # Age or Gender: in the trait's data
        raise ProblemSkipped(f"no usable cohort of {problem.trait} records {problem.condition}")
    if problem.condition is not None and reader.read(problem.condition) is None:
        raise ProblemSkipped(f"no readable cohort_info.json for {problem.condition}")
    raise ProblemSkipped("no usable cohort" if problem.one_step else "no usable cohort pair")


def _predicted_condition(
    data_dir: Path,
    problem: ProblemId,
    condition_id: str,
    table: LabelledTable,
    *,
    trait_path: Path,
    task_info: TaskInfo,
    cache: TableCache | None,
) -> tuple[np.ndarray, tuple[str, ...], str]:
    """Two-step: (Z predicted in the trait cohort, the regressor genes, the condition model)."""
    trait, condition = problem.trait, problem.condition
    if condition is None:
        raise ValueError(f"{problem.key} is a one-step problem: it has no condition cohort")
    condition_path = data_dir / condition / f"{condition_id}.csv"
    condition_table = _load(data_dir, condition, condition_id, cache)
    labels = list(table.column_labels)
    regressors = tuple(
        gene_regressors(trait, condition, labels, condition_table.column_labels, task_info)
    )
    x_condition = np.column_stack([_column(condition_table, g, condition_path) for g in regressors])
    y_condition = _column(condition_table, condition, condition_path)
    _check_finite(x_condition, "the condition cohort's regressor genes", condition_path)
    _check_finite(y_condition, f"the condition column {condition!r}", condition_path)
    x_regressors = np.column_stack([_column(table, g, trait_path) for g in regressors])
    _check_finite(x_regressors, "the regressor genes", trait_path)
    for values, path in ((x_condition, condition_path), (x_regressors, trait_path)):
        if values.shape[0] == 0:
            raise ProblemFailed("the table has no samples", path=path)
    z, model = predict_condition(x_condition, y_condition, x_regressors)
    return z, regressors, model


def _check_problem(
    x: np.ndarray, y: np.ndarray, z: np.ndarray | None, problem: ProblemId, path: Path
) -> None:
    """Refuse data the pipeline cannot analyse, with the reason and the file."""
    _check_finite(y, f"the trait column {problem.trait!r}", path)
    _check_finite(x, "the gene columns", path)
    if z is not None:
        _check_finite(z, f"the condition {problem.condition!r}", path)
    if len(np.unique(y)) < 2:
        raise ProblemFailed(f"the trait column {problem.trait!r} is constant", path=path)
    if x.shape[1] == 0:
        raise ProblemFailed("the table has no gene columns", path=path)
    if len(y) < N_FOLDS:
        reason = f"fewer samples ({len(y)}) than cross-validation folds ({N_FOLDS})"
        raise ProblemFailed(reason, path=path)


def load_problem(
    data_dir: str | Path,
    problem: ProblemId,
    task_info: TaskInfo,
    *,
    cache: TableCache | None = None,
    cohorts: tuple[str, ...] | None = None,
) -> ProblemData:
    """Choose the cohort(s) of a problem and build X, Y, Z from the linked table(s).

    `cohorts` names them instead ((trait cohort,) or (trait cohort, condition cohort)):
    what `genotex diagnose` does to run the pipeline on another tree's choice.

    The linked tables are read through `cache` when one is given (a cohort's table
    is then parsed once for all its problems). Raises `ProblemSkipped` when no
    cohort (pair) can answer it and `ProblemFailed` when the chosen data cannot be
    analysed.
    """
    data_dir = Path(data_dir)
    trait, condition = problem.trait, problem.condition
    if cohorts is None:
        cohorts = _choose(data_dir, problem, task_info)
    elif len(cohorts) != (1 if problem.one_step else 2):
        raise ValueError(f"{problem.key} needs {1 if problem.one_step else 2} cohort(s): {cohorts}")
    trait_path = data_dir / trait / f"{cohorts[0]}.csv"
    table = _load(data_dir, trait, cohorts[0], cache)
    labels = list(table.column_labels)
    if trait not in labels:
        raise ProblemFailed(f"the table has no column {trait!r}", path=trait_path)
    y = _column(table, trait, trait_path)
    regressors: tuple[str, ...] = ()
    condition_model = z = None
    if condition is not None and problem.one_step:
        z = _column(table, condition, trait_path)  # Age or Gender, from the same table
    elif condition is not None:
        z, regressors, condition_model = _predicted_condition(
            data_dir,
            problem,
            cohorts[1],
            table,
            trait_path=trait_path,
            task_info=task_info,
            cache=cache,
        )
    # Age and Gender are never genes; a one-step condition is Z, the trait is Y
    not_genes = {*_AGE_GENDER, trait, condition}
    gene_positions = [i for i, label in enumerate(labels) if label not in not_genes]
    x = table.values[:, gene_positions]
    _check_problem(x, y, z, problem, trait_path)
    return ProblemData(
        problem,
        cohorts,
        np.asfortranarray(x),
        y.copy(),
        None if z is None else z.copy(),
        tuple(labels[i] for i in gene_positions),
        regressors,
        condition_model,
    )

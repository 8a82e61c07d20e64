"""Answer one problem: batch test, CV, final fit, ranked genes (regression.md §§ 3-6)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ..core import (
    AlphaGrid,
    Method,
    Mode,
    ProblemId,
    ReferenceMethod,
    ResultFile,
    SelectBy,
    StandardMethod,
    TableCache,
    TaskInfo,
    TaskInfoError,
    check_mode,
    notebook_table,
    output_path,
    regress_file_name,
)
from ._blas import one_blas_thread
from ._constants import ALPHA_GRID, check_model, forced_lmm
from ._data import ProblemData, load_problem
from ._inputs import input_digests
from ._numerics import detect_batch_effect, normalize, significant_genes
from ._order import order_check
from ._standard import fit_standard

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "RegressionResult",
    "analyse",
    "answer_problem",
    "result_path",
    "write_result",
]


@dataclass(frozen=True)
class RegressionResult:
    """The answer to one problem and how it was reached."""

    problem: ProblemId
    genes: tuple[tuple[str, float], ...]  # ranked (gene, coefficient)
    cv_performance: dict[str, dict[str, float]]
    model: str  # "Lasso" or "LMM"
    batch_effect: bool
    alpha: float
    alpha_fallback: bool
    condition_coefficient: float | None
    cohorts: tuple[str, ...]
    regressors: tuple[str, ...] = ()
    condition_model: str | None = None
    converged: bool = True
    cv_per_alpha: dict[float, Any] = field(default_factory=dict, repr=False)
    method: Method | None = None  # mode, solver, tolerance, α rule, diagnostics
    #: the model was asked for (`model="lmm"` or `"lasso"`), not chosen by the batch-effect test
    model_forced: bool = False
    #: the sha256 of what the answer read (`input_digests`), written beside the method
    inputs: Mapping[str, str] | None = None

    def to_file(self) -> ResultFile:
        """The `significant_genes_condition_<C>.json` content (layout.md)."""
        return ResultFile(
            tuple(gene for gene, _ in self.genes),
            tuple(coefficient for _, coefficient in self.genes),
            self.cv_performance,
            ({"method": self.method.to_dict()} if self.method is not None else {})
            | ({"inputs": dict(self.inputs)} if self.inputs else {}),
        )

    def __repr__(self) -> str:
        top = ", ".join(gene for gene, _ in self.genes[:5])
        more = f", ... ({len(self.genes)} genes)" if len(self.genes) > 5 else ""
        return (
            f"RegressionResult({self.problem.key}: {self.model}, alpha {self.alpha:g}, "
            f"[{top}{more}])"
        )

    def to_frame(
        self, data: ProblemData | None = None, *, resamples: int = 50, seed: int = 0
    ) -> pd.DataFrame:
        """The genes as a table: without `data`, the selected ones (`coefficient`, `rank`);
        with the problem's data (`load_problem`), every gene's row of `gene_table` (the
        selection frequency for a standard-mode result, over `resamples` seeded halves).
        """
        import pandas as pd

        from ._gene_table import gene_table

        if data is None:
            frame = pd.DataFrame(
                {"coefficient": [c for _, c in self.genes], "rank": range(1, len(self.genes) + 1)},
                index=pd.Index([g for g, _ in self.genes], name="gene"),
            )
            return frame
        standard = isinstance(self.method, StandardMethod)
        return gene_table(
            data.x, data.y, data.genes, data.z, self.genes,
            frequency_alpha=self.alpha if standard else None, lmm=self.batch_effect,
            resamples=resamples, seed=seed,
        )  # fmt: skip

    def _repr_html_(self) -> str:
        rows = [
            ("model", f"{self.model}, alpha {self.alpha:g}"),
            ("cohorts", " + ".join(self.cohorts)),
        ]
        rows += [(gene, f"{coefficient:+.4g}") for gene, coefficient in self.genes]
        return notebook_table(f"{self.problem.key}: {len(self.genes)} genes", rows)

    def describe(self) -> str:
        """One log line: cohorts, model and why, α, the condition's coefficient."""
        cohorts = " + ".join(self.cohorts)
        if self.model_forced:
            why = f"forced: model={self.model.lower()} was asked for, no batch-effect test"
        else:
            why = "batch effect (eigenvalue gap)" if self.batch_effect else "no batch effect"
        said = isinstance(self.method, ReferenceMethod) and "alpha_fallback" in self.method.flags
        alpha = f"{self.alpha:g}" + (
            " (fallback: no alpha selected a known gene)"
            if self.alpha_fallback and not said
            else ""
        )
        parts = [
            f"cohort {cohorts}",
            f"{self.model} ({why})",
            f"alpha {alpha}",
            f"{len(self.genes)} genes",
        ]
        if self.condition_coefficient is not None:
            parts.append(f"{self.problem.condition} coefficient {self.condition_coefficient:.4g}")
        if self.condition_model:
            parts.append(
                f"condition predicted by {self.condition_model} on {len(self.regressors)} genes"
            )
        if isinstance(self.method, StandardMethod):
            gap = self.method.final_relative_gap
            state = "converged" if self.converged else "NOT converged"
            parts.append(f"standard mode, {self.method.select_by} rule, {state} (gap {gap:.1e})")
        elif isinstance(self.method, ReferenceMethod):
            parts += [f"WARNING: {w}" for w in self.method.warnings()]
            if not self.converged and "iteration_limit" not in self.method.flags:
                reached = self.method.final_relative_gap or 0.0
                parts.append(f"WARNING: the final fit did not converge (gap {reached:.1e})")
        elif not self.converged:
            parts.append("the final fit did not converge")
        return "; ".join(parts)


#: The reference mode's `method` object: what produced its numbers.
_REFERENCE_SOLVER = "scikit-learn Lasso, its defaults (max_iter 1000, tol 1e-4), cold-started"


def _reference(data: ProblemData, task_info: TaskInfo, model: str = "auto") -> RegressionResult:
    # scikit-learn is imported here, not at the top: `--mode standard` never needs it
    from ._cv import cross_validate
    from ._models import LassoModel, LMMModel, Residualizer

    forced = forced_lmm(model)
    lmm = detect_batch_effect(data.x) if forced is None else forced
    choice = cross_validate(
        data.x,
        data.y,
        data.z,
        data.genes,
        task_info.genes_of(data.problem.trait),
        lmm=lmm,
        binary=data.binary,
    )
    x, _ = normalize(data.x)
    z = None if data.z is None else normalize(data.z)[0]
    model = Residualizer(LMMModel(alpha=choice.alpha) if lmm else LassoModel(alpha=choice.alpha))
    model.fit(np.asfortranarray(x), data.y, z)
    genes = tuple(significant_genes(model.coef_, data.genes))
    flags = [
        *(["alpha_at_grid_edge"] if choice.alpha in (min(ALPHA_GRID), max(ALPHA_GRID)) else []),
        *(["iteration_limit"] if model.n_iter_ >= ReferenceMethod.max_iter else []),
    ]
    reversed_columns = order_check(model, (x, data.y, z), flags, lmm=lmm,
                                    performance=choice.performance)  # fmt: skip
    if choice.fallback:  # said, but not a reason to refit in reverse (the fit is as published)
        flags.append("alpha_fallback")
    method = ReferenceMethod(
        model="LMM (X rotated, y not)" if lmm else "Lasso",
        solver=_REFERENCE_SOLVER,
        alpha_grid=AlphaGrid("the reference's absolute grid", ALPHA_GRID),
        selection_rule="highest mean CV selection precision; 0.1 when none finds a known gene",
        alpha=choice.alpha,
        final_iterations=model.n_iter_,
        converged=model.converged_,
        final_relative_gap=model.relative_gap_,
        flags=tuple(flags),
        reversed_columns=reversed_columns,
    )
    return RegressionResult(
        problem=data.problem,
        genes=genes,
        cv_performance=choice.performance,
        model="LMM" if lmm else "Lasso",
        batch_effect=lmm,
        alpha=choice.alpha,
        alpha_fallback=choice.fallback,
        condition_coefficient=model.condition_coef_,
        cohorts=data.cohorts,
        regressors=data.regressors,
        condition_model=data.condition_model,
        converged=model.converged_,
        cv_per_alpha=choice.per_alpha,
        method=method,
        model_forced=forced is not None,
    )


def _standard(
    data: ProblemData, task_info: TaskInfo, select_by: SelectBy, model: str = "auto"
) -> RegressionResult:
    fit = fit_standard(
        data.x,
        data.y,
        data.z,
        data.genes,
        task_info.genes_of(data.problem.trait),
        binary=data.binary,
        select_by=select_by,
        lmm=forced_lmm(model),
    )
    return RegressionResult(
        problem=data.problem,
        genes=tuple(significant_genes(fit.coefficients, data.genes)),
        cv_performance=fit.cv_performance,
        model="LMM" if fit.lmm else "Lasso",
        batch_effect=fit.lmm,
        alpha=fit.alpha,
        alpha_fallback=False,
        condition_coefficient=None,
        cohorts=data.cohorts,
        regressors=data.regressors,
        condition_model=data.condition_model,
        converged=fit.method.converged,
        method=fit.method,
        model_forced=forced_lmm(model) is not None,
    )


def analyse(
    data: ProblemData,
    task_info: TaskInfo,
    *,
    mode: Mode = "reference",
    select_by: SelectBy = "prediction",
    model: str = "auto",
) -> RegressionResult:
    """Batch-effect test, CV over the α grid, final fit on all samples, ranked genes.

    `mode="reference"` reproduces the published pipeline exactly;
    `mode="standard"` is the converged, sign-invariant variant
    (`genotex.regression.fit_standard`), whose α rule is `select_by`. `model` is
    "auto" (the batch-effect test chooses the LMM or the Lasso, as published), or
    "lasso" or "lmm" to fit that model whatever the test says (the paper's plain
    Lasso and LMM rows of Table 3).
    """
    check_model(model)
    if check_mode(mode) == "reference":
        return _reference(data, task_info, model)
    return _standard(data, task_info, select_by, model)


def answer_problem(
    data_dir: str | Path,
    problem: ProblemId | str,
    task_info: TaskInfo | str | Path,
    *,
    mode: Mode = "reference",
    select_by: SelectBy = "prediction",
    cache: TableCache | None = None,
    model: str = "auto",
) -> RegressionResult:
    """Load a problem's data and analyse it, on one BLAS thread (byte-identical results).

    Parameters
    ----------
    data_dir
        The preprocess folder (`<trait>/cohort_info.json` and the linked CSVs).
    problem
        A `ProblemId` or its key, `"Trait|Condition"` (`"Trait|None"` or `"Trait"`:
        the unconditional problem).
    task_info
        A `TaskInfo` or the path of its `task_info.json`.
    mode, select_by
        `"reference"` (the default) reproduces the published pipeline, whose α is
        chosen by how many of task_info's known genes each α selects: its answer
        uses the answer key. For one's own analysis use `mode="standard"` (a
        converged fit, α chosen by cross-validated prediction, `select_by`).
    model
        "auto" (the batch-effect test chooses), "lasso" or "lmm" (see `analyse`).
    cache
        Where parsed linked tables are kept by content (`TableCache`); None
        parses them. The answer is the same either way.

    Returns
    -------
    RegressionResult
        The ranked genes, the CV numbers, and how they were reached.

    Raises
    ------
    ProblemSkipped
        The problem has no data (no usable cohort).
    ProblemFailed
        Its data cannot be used.

    Notes
    -----
    Every BLAS library the regression uses is loaded before the limit is
    entered (`one_blas_thread`), so the answer is the same whether the problem
    is asked alone, after others, in a worker process or on Dask, and in
    reference mode equals the reference pipeline run on one BLAS thread.
    """
    problem = _problem_of(problem)
    if not isinstance(task_info, TaskInfo):
        task_info = TaskInfo.read(task_info)
    if problem.trait not in task_info.related_genes:  # a misspelt trait: not "no data"
        raise TaskInfoError(f"task_info has no trait {problem.trait!r}", path=task_info.source)
    with one_blas_thread(reference=mode == "reference"):
        data = load_problem(data_dir, problem, task_info, cache=cache)
        result = analyse(data, task_info, mode=mode, select_by=select_by, model=model)
    inputs = input_digests(data_dir, result.problem, result.cohorts, task_info)
    return replace(result, inputs=inputs)


def _problem_of(problem: object) -> ProblemId:
    """A problem given as a `ProblemId`, its key, a trait alone, or (trait, condition)."""
    if isinstance(problem, ProblemId):
        return problem
    if isinstance(problem, str):
        return ProblemId.from_key(problem if "|" in problem else f"{problem}|None")
    if isinstance(problem, tuple) and len(problem) == 2 and isinstance(problem[0], str):
        condition = problem[1]
        if condition is None or isinstance(condition, str):
            return ProblemId.from_key(f"{problem[0]}|{condition or 'None'}")
    raise TypeError(
        f"a problem is a ProblemId, 'Trait|Condition' or (trait, condition), not {problem!r:.80}"
    )


def result_path(out_dir: str | Path, problem: ProblemId) -> Path:
    """`out_dir/<trait>/significant_genes_condition_<C>.json`, checked to stay inside `out_dir`."""
    return output_path(out_dir, problem.trait, regress_file_name(problem.condition))


def write_result(out_dir: str | Path, result: RegressionResult) -> Path:
    """Write the result JSON atomically: an interrupted run leaves no half-written file."""
    path = result_path(out_dir, result.problem)
    result.to_file().write(path)
    return path

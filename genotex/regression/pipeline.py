"""Answer one problem: batch test, CV, final fit, ranked genes (regression.md §§ 3-6)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from threadpoolctl import threadpool_limits

from ..atomic import write_text_atomic
from ..layout import ProblemId, TaskInfo, regress_file_name
from .cv import CVChoice, cross_validate, significant_genes
from .data import ProblemData, load_problem
from .models import LassoModel, LMMModel, Residualizer, detect_batch_effect, normalize

__all__ = ["RegressionResult", "analyse", "answer_problem", "read_result", "result_path", "write_result"]


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

    def to_dict(self) -> dict[str, Any]:
        """The `significant_genes_condition_<C>.json` content (layout.md)."""
        return {
            "significant_genes": {
                "Variable": [gene for gene, _ in self.genes],
                "Coefficient": [coefficient for _, coefficient in self.genes],
                "Absolute Coefficient": [abs(coefficient) for _, coefficient in self.genes],
            },
            "cv_performance": self.cv_performance,
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=4) + "\n"

    def describe(self) -> str:
        """One log line: cohorts, model and why, α, the condition's coefficient."""
        cohorts = " + ".join(self.cohorts)
        why = "batch effect (eigenvalue gap)" if self.batch_effect else "no batch effect"
        alpha = f"{self.alpha:g}" + (" (fallback: no alpha selected a known gene)" if self.alpha_fallback else "")
        parts = [f"cohort {cohorts}", f"{self.model} ({why})", f"alpha {alpha}", f"{len(self.genes)} genes"]
        if self.condition_coefficient is not None:
            parts.append(f"{self.problem.condition} coefficient {self.condition_coefficient:.4g}")
        if self.condition_model:
            parts.append(f"condition predicted by {self.condition_model} on {len(self.regressors)} genes")
        if not self.converged:
            parts.append("the final fit hit max_iter")
        return "; ".join(parts)


def analyse(data: ProblemData, task_info: TaskInfo) -> RegressionResult:
    """Batch-effect test, CV over the α grid, final fit on all samples, ranked genes."""
    lmm = detect_batch_effect(data.x)
    choice: CVChoice = cross_validate(data.x, data.y, data.z, data.genes, task_info.genes_of(data.problem.trait),
                                      lmm=lmm, binary=data.binary)  # fmt: skip
    x, _ = normalize(data.x)
    z = None if data.z is None else normalize(data.z)[0]
    model = Residualizer(LMMModel(alpha=choice.alpha) if lmm else LassoModel(alpha=choice.alpha))
    model.fit(np.asfortranarray(x), data.y, z)
    coefficients = np.ravel(model.model.coef_)
    condition_coefficient = None if model.beta_z_ is None else float(model.beta_z_[1, 0])
    return RegressionResult(
        problem=data.problem,
        genes=tuple(significant_genes(coefficients, data.genes)),
        cv_performance=choice.performance,
        model="LMM" if lmm else "Lasso",
        batch_effect=lmm,
        alpha=choice.alpha,
        alpha_fallback=choice.fallback,
        condition_coefficient=condition_coefficient,
        cohorts=data.cohorts,
        regressors=data.regressors,
        condition_model=data.condition_model,
        converged=model.model.converged_,
        cv_per_alpha=choice.per_alpha,
    )


def answer_problem(data_dir: str | Path, problem: ProblemId, task_info: TaskInfo) -> RegressionResult:
    """Load a problem's data and analyse it, on one BLAS thread (byte-identical results).

    Raises `ProblemSkipped` (no data) or `ProblemFailed` (unusable data).
    """
    with threadpool_limits(limits=1):
        return analyse(load_problem(data_dir, problem, task_info), task_info)


def result_path(out_dir: str | Path, problem: ProblemId) -> Path:
    return Path(out_dir) / problem.trait / regress_file_name(problem.condition)


def write_result(out_dir: str | Path, result: RegressionResult) -> Path:
    """Write the result JSON atomically: an interrupted run leaves no half-written file."""
    path = result_path(out_dir, result.problem)
    write_text_atomic(path, result.to_json())
    return path


def read_result(path: str | Path) -> dict[str, Any] | None:
    """A result JSON with both keys and a gene list, or None if absent or incomplete."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or not {"significant_genes", "cv_performance"} <= set(data):
        return None
    genes = data["significant_genes"]
    if not isinstance(genes, dict) or not isinstance(genes.get("Variable"), list):
        return None
    return data



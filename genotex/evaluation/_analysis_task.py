"""Task 3, statistical analysis: every reference result file's gene list (evaluation.md § 3)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field

from ..core import (
    MISSING,
    GuardedTree,
    MalformedResult,
    ProblemId,
    RejectedFile,
    ResultFile,
    approximate_auroc,
    condition_from_regress_file,
    gene_selection_scores,
    gsea_enrichment_score,
)
from ._common import Findings, Progress, no_progress
from ._scores import Finding, ProblemScore

__all__ = [
    "Lists",
    "evaluate_analysis",
    "reference_results",
    "score_gene_list",
    "score_result_file",
]


@dataclass
class Lists:
    """Each scored problem's gene lists: prediction (genes, coefficients) and reference."""

    predictions: dict[str, tuple[tuple[str, ...], tuple[float, ...] | None]] = field(
        default_factory=dict
    )
    references: dict[str, tuple[str, ...]] = field(default_factory=dict)


def score_gene_list(pred: Sequence[str], ref: Sequence[str]) -> dict[str, float]:
    """Precision, recall, F1, approximate AUROC and GSEA-ES of a gene list."""
    return {
        **gene_selection_scores(pred, ref),
        "auroc": approximate_auroc(pred, ref),
        "gsea_es": gsea_enrichment_score(pred, ref),
    }


def _failed(problem: ProblemId, status: str) -> ProblemScore:
    return ProblemScore(problem, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, status=status)


def score_result_file(
    pred: GuardedTree,
    ref: GuardedTree,
    trait: str,
    file_name: str,
    condition: str | None,
    *,
    lists: Lists | None = None,
) -> tuple[ProblemScore | None, list[Finding]]:
    """Score one problem's prediction JSON; `None` if the reference file is malformed.

    With `lists`, the two gene lists (and the prediction's coefficients) are
    kept there by problem key, for the statistics computed on request.
    """
    problem = ProblemId(trait, condition)
    ref_path = ref.path("regress", trait, file_name)
    pred_path = pred.path("regress", trait, file_name)
    try:
        ref_genes = ResultFile.from_dict(ref.read_json(ref_path)).genes
    except (RejectedFile, MalformedResult) as exc:
        reason = f"{exc.reason}; the problem is not scored"
        return None, [Finding(ref.relative(ref_path), reason)]
    try:
        data = pred.read_json(pred_path)
    except RejectedFile as exc:
        return _failed(problem, "malformed"), [
            Finding(exc.relative, f"{exc.reason}; the problem is failed")
        ]
    if data is MISSING:
        return _failed(problem, "missing"), [
            Finding(
                pred.relative(pred_path), "the prediction has no such file; the problem is failed"
            )
        ]
    try:
        result = ResultFile.from_dict(data)
    except MalformedResult as exc:
        reason = f"{exc.reason}; the problem is failed"
        return _failed(problem, "malformed"), [Finding(pred.relative(pred_path), reason)]
    found = []
    numbers = {}
    for key in ("accuracy", "f1"):
        numbers[f"trait_pred_{key}"], problem_text = result.cv_number(key)
        if problem_text:
            found.append(Finding(pred.relative(pred_path), problem_text))
    score = ProblemScore(problem, 100.0, **score_gene_list(result.genes, ref_genes), **numbers)
    if lists is not None:
        lists.predictions[problem.key] = (result.genes, result.coefficients)
        lists.references[problem.key] = ref_genes
    return score, found


def reference_results(ref: GuardedTree) -> list[tuple[str, str, str | None]]:
    """(trait, file name, condition) of every reference result file, in sorted order."""
    root = ref.path("regress")
    if not root.is_dir():
        return []
    results = []
    for trait_dir in sorted(p for p in root.iterdir() if p.is_dir()):
        for file in sorted(f.name for f in trait_dir.iterdir() if f.is_file()):
            condition = condition_from_regress_file(file)
            if condition is not None:
                results.append((trait_dir.name, file, None if condition == "None" else condition))
    return results


def evaluate_analysis(
    pred: GuardedTree,
    ref: GuardedTree,
    *,
    findings: Findings | None = None,
    progress: Progress | None = None,
    lists: Lists | None = None,
) -> tuple[ProblemScore, ...]:
    """Scores of every reference result file (empty when PRED has no regress/ folder)."""
    findings = findings or Findings()
    progress = progress or no_progress
    if not os.path.isdir(pred.path("regress")):
        findings.add(pred.relative(pred.path("regress")), "the prediction has no regress/ folder")
        return ()
    scores = []
    results = reference_results(ref)
    for trait, file_name, condition in progress(results, "regression results", len(results)):
        score, found = score_result_file(pred, ref, trait, file_name, condition, lists=lists)
        findings.extend(found)
        if score is not None:
            scores.append(score)
    return tuple(scores)

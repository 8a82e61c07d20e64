"""Task 3, statistical analysis: every reference result file's gene list (evaluation.md § 3)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..core import (
    CHANCE_ACCURACY,
    GSEA_UNIVERSE,
    MISSING,
    GuardedTree,
    MalformedResult,
    ProblemId,
    ReferenceMethod,
    RejectedFile,
    ResultFile,
    accuracy_at_chance,
    approximate_auroc,
    condition_from_regress_file,
    gene_selection_scores,
    gsea_enrichment_score,
)
from ._common import Findings, Progress, no_progress
from ._scores import CV_ABSENT, Finding, ProblemScore

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


def gene_list_numbers(pred: Sequence[str], ref: Sequence[str]) -> dict[str, float]:
    """Precision, recall, F1 (0-100), approximate AUROC and GSEA-ES (0-1) of a gene list."""
    return {
        **gene_selection_scores(pred, ref),
        "auroc": approximate_auroc(pred, ref),
        "gsea_es": gsea_enrichment_score(pred, ref),
    }


@dataclass(frozen=True)
class GeneListScores:
    """A ranked gene list scored against reference genes, as the evaluator scores a problem.

    `precision`, `recall` and `f1` are percentages (0-100), `auroc` and `gsea_es`
    lie on 0-1, all higher is better. `auroc` is the paper's approximate AUROC
    (a 20,000-gene universe); with a `universe`, `auroc_exact` and
    `average_precision` are computed over it. `notes` say why a number is NaN.
    """

    precision: float
    recall: float
    f1: float
    auroc: float
    gsea_es: float
    auroc_exact: float | None = None
    average_precision: float | None = None
    notes: tuple[str, ...] = ()


def score_gene_list(
    pred: Sequence[str], ref: Sequence[str], *, universe: Sequence[str] | None = None
) -> GeneListScores:
    """Score a ranked gene list (most important first) against reference genes.

    Symbols are compared exactly, as the evaluator compares them (`"tp53"` is not
    `"TP53"`: normalize them first, e.g. with `normalize_gene_table`'s synonyms).

    Raises
    ------
    TypeError
        `pred` or `ref` is one string (its letters would be scored as genes).
    """
    for name, genes in (("pred", pred), ("ref", ref)):
        if isinstance(genes, str):
            raise TypeError(f"{name} must be a list of gene symbols, not the string {genes!r}")
    numbers = gene_list_numbers(pred, ref)
    notes = []
    if not ref:
        notes.append("the reference is empty: AUROC and GSEA-ES are undefined")
    elif len(pred) > GSEA_UNIVERSE:
        notes.append(f"GSEA-ES is NaN: the list is longer than {GSEA_UNIVERSE:,} genes")
    elif not set(pred) & set(ref):
        notes.append("GSEA-ES is NaN: no gene of the list is in the reference")
    exact: dict = {}
    if universe is not None:
        from ._statistics import exact_ranking_scores

        exact = exact_ranking_scores(pred, ref, universe)
        if exact.get("note"):
            notes.append(f"exact AUROC and AP are undefined: {exact['note']}")
    return GeneListScores(
        **numbers,
        auroc_exact=exact.get("auroc_exact"),
        average_precision=exact.get("average_precision"),
        notes=tuple(notes),
    )


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
        ref_result = ResultFile.from_dict(ref.read_json(ref_path))
    except (RejectedFile, MalformedResult) as exc:
        reason = f"{exc.reason}; the problem is not scored"
        return None, [Finding(ref.relative(ref_path), reason)]
    ref_genes = ref_result.genes
    said_of_reference = _reference_fit(ref_result)
    found = [Finding(ref.relative(ref_path), said_of_reference)] if said_of_reference else []
    return _score_prediction(pred, problem, pred_path, ref_genes, lists, found=found)


def _reference_fit(result: ResultFile) -> str | None:
    """What makes a reference answer itself a poor key, in words (None: nothing): its own
    recorded cross-validated accuracy at chance, or a selection that depends on column order.
    """
    said = []
    accuracy = accuracy_at_chance(result.cv_performance)
    if accuracy is not None:
        said.append(
            f"the reference answer's own cross-validated prediction accuracy is {accuracy:.1f}%, "
            f"under {CHANCE_ACCURACY:g}%: its fit is at chance, so its {len(result.genes)} genes "
            "are no better than a draw (scored against as published)"
        )
    method = result.method
    if isinstance(method, ReferenceMethod) and "column_order_dependent" in method.flags:
        said.append("the reference answer's genes depend on the order of its table's gene "
                    "columns: the same data in another order gives other genes")  # fmt: skip
    return "; ".join(said) or None


def _score_prediction(
    pred: GuardedTree,
    problem: ProblemId,
    pred_path: Path,
    ref_genes: tuple[str, ...],
    lists: Lists | None,
    *,
    found: list[Finding],
) -> tuple[ProblemScore | None, list[Finding]]:
    """Score the prediction's result file of `problem` against the reference's genes."""
    try:
        data = pred.read_json(pred_path)
    except RejectedFile as exc:
        return ProblemScore.failed(problem, "malformed"), [
            *found,
            Finding(exc.relative, f"{exc.reason}; the problem is failed"),
        ]
    if data is MISSING:
        return ProblemScore.failed(problem, "missing"), [
            *found,
            Finding(
                pred.relative(pred_path), "the prediction has no such file; the problem is failed"
            ),
        ]
    try:
        result = ResultFile.from_dict(data)
    except MalformedResult as exc:
        reason = f"{exc.reason}; the problem is failed"
        return ProblemScore.failed(problem, "malformed"), [
            *found,
            Finding(pred.relative(pred_path), reason),
        ]
    numbers = {"success": 100.0, **gene_list_numbers(result.genes, ref_genes)}
    for key in ("accuracy", "f1"):
        numbers[f"trait_pred_{key}"], problem_text = result.cv_number(key)
        if problem_text:
            found.append(Finding(pred.relative(pred_path), problem_text))
    method = result.method
    if isinstance(method, ReferenceMethod) and method.warnings():  # said, never scored
        said = "; ".join(method.warnings())
        found.append(Finding(pred.relative(pred_path), f"its reference-mode fit: {said}"))
    absent = [k for k in ("accuracy", "f1") if not result.cv_present(k)]
    # the published metric reads an absent number as 0; compare and leaderboard leave it out
    score = ProblemScore.from_values(
        problem, numbers, extra={CV_ABSENT: absent} if absent else None
    )
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
    traits: Sequence[str] = (),
) -> tuple[ProblemScore, ...]:
    """Scores of every reference result file (empty when PRED has no regress/ folder); with
    `traits`, of those traits' files only.
    """
    findings = findings or Findings()
    progress = progress or no_progress
    if not os.path.isdir(pred.path("regress")):
        findings.add(pred.relative(pred.path("regress")), "the prediction has no regress/ folder")
        return ()
    scores = []
    results = [r for r in reference_results(ref) if not traits or r[0] in traits]
    for trait, file_name, condition in progress(results, "regression results", len(results)):
        score, found = score_result_file(pred, ref, trait, file_name, condition, lists=lists)
        findings.extend(found)
        if score is not None:
            scores.append(score)
    return tuple(scores)

"""Bootstrap intervals on every average of a report, and the extra per-problem statistics.

Both are computed only on request (`EvalOptions.ci`, `EvalOptions.exact`): the
parity path never runs them.
"""

from __future__ import annotations

import contextlib
import io
import logging
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from ..core import (
    FILTERING_METRICS,
    PREPROCESSING_METRICS,
    CohortInfoReader,
    GuardedTree,
    ProblemId,
    TableError,
    TaskInfo,
    linked_header,
    select_cohorts,
)
from ._report import EvalReport, group_key
from ._scores import ProblemScore, metric_value
from ._statistics import BootstrapSettings, Interval, bootstrap_interval, exact_ranking_scores

__all__ = ["add_exact_statistics", "add_intervals", "gsea_prerank", "problem_universe"]

log = logging.getLogger("genotex.evaluation")

_NOT_GENES = ("Age", "Gender")


def _intervals_of(
    rows: Sequence[object], metrics: Sequence[str], settings: BootstrapSettings
) -> dict[str, Interval]:
    return {m: bootstrap_interval([metric_value(r, m) for r in rows], settings) for m in metrics}


def add_intervals(report: EvalReport, settings: BootstrapSettings) -> EvalReport:
    """The report with a bootstrap interval on every average, and the settings in `run`.

    Over traits (DF), problems (DS, and analysis per category and overall) and
    files (preprocessing, per subtask), as the averages themselves are taken.
    """
    intervals: dict[str, dict[str, Interval]] = {}
    if report.filtering is not None:
        intervals["filtering"] = _intervals_of(report.filtering, FILTERING_METRICS, settings)
        intervals["selection"] = _intervals_of(report.selection or (), ("accuracy",), settings)
    for subtask, scores in (report.preprocessing or {}).items():
        if scores is not None:
            key = group_key("preprocessing", subtask)
            intervals[key] = _intervals_of(scores, PREPROCESSING_METRICS, settings)
    if report.analysis:
        metrics = report.analysis_metrics
        for name, rows in report.analysis_groups().items():
            if rows:
                intervals[group_key("analysis", name)] = _intervals_of(rows, metrics, settings)
    run = {**report.run, "bootstrap": settings.to_dict()}
    return replace(report, intervals=intervals, run=run)


def problem_universe(
    reader: CohortInfoReader, problem: ProblemId, task_info: TaskInfo
) -> list[str] | None:
    """The genes of the linked table of the cohort the reference selects for a problem.

    For a two-step problem, the trait cohort's. None when the reference selects
    no cohort or its table cannot be read.
    """
    choice = select_cohorts(reader, problem, task_info)
    if choice is None:
        return None
    cohort = choice if isinstance(choice, str) else choice[0]
    try:
        header = linked_header(reader, problem.trait, cohort)
    except TableError:
        return None
    if header is None:
        return None
    not_genes = {*_NOT_GENES, problem.trait, problem.condition}
    return [column for column in header if column not in not_genes]


#: The longest ranking GSEA prerank is run on: more names than any genome's gene symbols. A
#: prediction listing millions of names made gseapy's permutations abort the process.
MAX_GSEA_GENES = 100_000


def gsea_prerank(
    ranking: Mapping[str, float], reference: Sequence[str], *, permutations: int, seed: int
) -> dict[str, float | None]:
    """GSEA prerank (gseapy) of the reference gene set against a ranking: ES, NES, nominal p.

    `ranking` maps every gene of the universe to its score (predicted genes by
    |coefficient| or by list order; the rest 0, tied at the bottom). Genes are
    ordered by score, then name, so that ties are deterministic. `min_size=1`.
    """
    import gseapy
    import pandas as pd

    genes = sorted(ranking, key=lambda g: (-ranking[g], g))
    series = pd.Series([float(ranking[g]) for g in genes], index=genes)
    members = [g for g in dict.fromkeys(reference) if g in ranking]
    if not members or len(members) == len(genes):
        return {"es": None, "nes": None, "pval": None}
    # gseapy makes a logger per call writing to stderr, and warns about pandas deprecations
    # and tied scores (ties are expected: every unpredicted gene scores 0, and they cannot
    # change ES with weight 1): none of it is the user's business
    with warnings.catch_warnings(), contextlib.redirect_stderr(io.StringIO()):
        warnings.simplefilter("ignore")
        result = gseapy.prerank(
            rnk=series,
            gene_sets={"reference": members},
            min_size=1,
            max_size=len(genes),
            permutation_num=permutations,
            seed=seed,
            outdir=None,
            threads=1,
            verbose=False,
            no_plot=True,
        )
    row = result.res2d.iloc[0]
    return {"es": float(row["ES"]), "nes": float(row["NES"]), "pval": float(row["NOM p-val"])}


def _ranking(
    genes: Sequence[str], coefficients: Sequence[float] | None, universe: Sequence[str]
) -> dict[str, Any]:
    ranked = list(dict.fromkeys(genes))
    if coefficients is not None and len(coefficients) == len(genes):
        by_gene = {g: abs(c) for g, c in zip(genes, coefficients, strict=True)}
        scores = {g: by_gene[g] for g in ranked}
    else:
        scores = {g: float(len(ranked) - i) for i, g in enumerate(ranked)}
    return {**dict.fromkeys(universe, 0.0), **scores}


def extra_statistics(
    pred: Sequence[str],
    coefficients: Sequence[float] | None,
    ref: Sequence[str],
    universe: Sequence[str] | None,
    *,
    permutations: int,
    seed: int,
) -> dict[str, object]:
    """Exact AUROC, average precision and GSEA prerank of one problem's prediction."""
    if universe is None:
        note = "the reference selects no readable cohort: no gene universe"
        return {"auroc_exact": None, "average_precision": None, "exact_note": note}
    exact = exact_ranking_scores(pred, ref, universe)
    out: dict[str, object] = {
        "auroc_exact": exact["auroc_exact"],
        "average_precision": exact["average_precision"],
        "universe_size": len(set(universe) | set(pred)),
        "reference_outside": exact["reference_outside"],
    }
    if exact["note"]:
        out["exact_note"] = exact["note"]
    ranked = len(set(universe) | set(pred))
    if pred and exact["auroc_exact"] is not None and ranked <= MAX_GSEA_GENES:
        gsea = gsea_prerank(
            _ranking(pred, coefficients, universe), ref, permutations=permutations, seed=seed
        )
        out.update({f"gsea_prerank_{k}": v for k, v in gsea.items()})
    else:
        out.update(dict.fromkeys(("gsea_prerank_es", "gsea_prerank_nes", "gsea_prerank_pval")))
        if ranked > MAX_GSEA_GENES:  # its permutations would take memory in proportion
            out["gsea_note"] = (
                f"not computed: the ranking holds {ranked:,} names, more than the "
                f"{MAX_GSEA_GENES:,} GSEA is run on (a genome has ~60,000 gene symbols)"
            )
    return out


def add_exact_statistics(
    report: EvalReport,
    predictions: Mapping[str, tuple[Sequence[str], Sequence[float] | None]],
    references: Mapping[str, Sequence[str]],
    ref_tree: GuardedTree,
    task_info: TaskInfo,
    *,
    permutations: int,
    seed: int,
) -> EvalReport:
    """The report with exact AUROC, AP and GSEA prerank on every scored problem (`extra`)."""
    reader = CohortInfoReader(ref_tree, lambda file, reason: None, unreadable_as_missing=True)
    scores: list[ProblemScore] = []
    for score in report.analysis or ():
        key = score.problem.key
        if key not in predictions or key not in references:  # failed problems: nothing to rank
            scores.append(score)
            continue
        genes, coefficients = predictions[key]
        universe = problem_universe(reader, score.problem, task_info)
        extra = extra_statistics(
            genes, coefficients, references[key], universe, permutations=permutations, seed=seed
        )
        scores.append(replace(score, extra={**score.extra, **extra}))  # CV_ABSENT kept
    settings = {"gsea_permutations": permutations, "gsea_seed": seed, "gsea_min_size": 1}
    return replace(report, analysis=tuple(scores), run={**report.run, "exact_statistics": settings})

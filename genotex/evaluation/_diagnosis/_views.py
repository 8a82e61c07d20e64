"""A diagnosis as text, as tables (pandas and CSV), and two diagnoses compared."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...core import csv_text, write_text_atomic
from ._model import ERROR_CLASSES, STAGES, Diagnosis

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "compare_diagnoses",
    "diagnosis_frames",
    "render_diagnosis",
    "render_diagnosis_comparison",
    "write_diagnosis_csv",
]


def _problem_rows(diagnosis: Diagnosis) -> list[dict[str, Any]]:
    rows = []
    for p in diagnosis.problems:
        top = diagnosis.findings[p.top] if p.top is not None else None
        rows.append(
            {
                "problem": p.problem.key,
                "category": p.problem.category,
                "f1": p.f1["agent"],
                **{f"f1_{k}": p.f1[k] for k in ("own_data", "ref_data", "ref_cohorts")},
                **{f"lost_{stage}": p.shares[stage] for stage in STAGES},
                "main_stage": p.main_stage or "",
                "top_class": top.error_class if top else "",
                "top_finding": top.text() if top else "",
                "agent_cohorts": " + ".join(p.agent_cohorts),
                "reference_cohorts": " + ".join(p.reference_cohorts),
                "notes": "; ".join(p.notes),
            }
        )
    return rows


def _finding_rows(diagnosis: Diagnosis) -> list[dict[str, Any]]:
    return [
        {
            "class": f.error_class,
            "stage": f.stage,
            "file": f.file,
            "trait": f.trait,
            "cohort": f.cohort or "",
            "problem": f.problem or "",
            "message": f.message,
        }
        for f in diagnosis.findings
    ]


def _stage_rows(diagnosis: Diagnosis) -> list[dict[str, Any]]:
    return [
        {
            "category": a.category,
            "stage": a.stage,
            "mean_lost": a.mean,
            "ci_low": a.low,
            "ci_high": a.high,
            "n": a.n,
        }  # fmt: skip
        for a in diagnosis.averages
    ]


def diagnosis_frames(diagnosis: Diagnosis) -> dict[str, pd.DataFrame]:
    """The diagnosis as three DataFrames: "problems", "findings" and "stages"."""
    import pandas as pd

    return {
        "problems": pd.DataFrame(_problem_rows(diagnosis)),
        "findings": pd.DataFrame(_finding_rows(diagnosis)),
        "stages": pd.DataFrame(_stage_rows(diagnosis)),
    }


def write_diagnosis_csv(diagnosis: Diagnosis, folder: str | Path) -> list[Path]:
    """problems.csv, findings.csv and stages.csv in `folder` (each written atomically)."""
    written = []
    tables = {
        "problems": _problem_rows(diagnosis),
        "findings": _finding_rows(diagnosis),
        "stages": _stage_rows(diagnosis),
    }
    for name, rows in tables.items():
        text = csv_text(list(rows[0]), [list(row.values()) for row in rows]) if rows else ""
        path = Path(folder) / f"{name}.csv"
        write_text_atomic(path, text)
        written.append(path)
    return written


def _interval(low: float | None, high: float | None) -> str:
    return "" if low is None or high is None else f"[{low:.1f}, {high:.1f}]"


def _reached_pipeline(steps: object) -> list[str]:
    """The warning first, when the agent called genotex's own pipeline (a saved diagnosis is
    untrusted: a list of texts, cut).
    """
    if not isinstance(steps, list) or not steps:
        return []
    named = "; ".join(str(step)[:200] for step in steps[:5]) + ("; ..." if len(steps) > 5 else "")
    warning = (
        f"The agent called genotex's pipeline: {len(steps)} step(s) reached for genotex's "
        f"own one-call pipelines, which the paper library's kernel refused ({named})."
    )
    return [warning, ""]


def render_diagnosis(diagnosis: Diagnosis, *, limit: int = 40) -> str:
    """The stage table, the error classes, and one line per problem that lost points."""
    mode = diagnosis.run.get("mode", "?")
    lines = _reached_pipeline(diagnosis.run.get("reached_pipeline"))
    lines += [
        f"Where the points were lost (F1 points; substitutes made by the {mode} mode)",
        f"  {'category':<24}" + "".join(f"{s:>22}" for s in STAGES) + f"{'n':>6}",
    ]
    by_category: dict[str, dict[str, Any]] = {}
    for a in diagnosis.averages:
        by_category.setdefault(a.category, {})[a.stage] = a
    for category, stages in by_category.items():
        cells = "".join(
            f"{stages[s].mean:>7.1f} {_interval(stages[s].low, stages[s].high):>14}" for s in STAGES
        )
        lines.append(f"  {category:<24}{cells}{stages[STAGES[0]].n:>6}")
    floor = (
        "0 where its pipeline made the reference, on one BLAS thread"
        if mode == "reference"
        else ("how far the standard pipeline is from the reference answers even on their own data")
    )
    lines.append(f"  floor: {floor}; a negative share: the agent did better there than the "
                 f"{mode} pipeline")  # fmt: skip
    counts = diagnosis.class_counts()
    errors = {k: v for k, v in counts.items() if ERROR_CLASSES[k][0] != "floor"}
    limits = {k: v for k, v in counts.items() if ERROR_CLASSES[k][0] == "floor"}
    lines.append("")
    lines.append("Error classes: " + (", ".join(f"{k} {v}" for k, v in errors.items()) or "none"))
    if limits:  # not the agent's errors: what the reference (or the substitutes' pipeline) is
        lines.append("Limits of the reference, not errors: "
                     + ", ".join(f"{k} {v}" for k, v in limits.items()))  # fmt: skip
    lost = [p for p in diagnosis.problems if p.lost > 0]
    if lost:
        lines += ["", f"Problems that lost points ({len(lost)}):"]
    for p in lost[:limit]:
        top = diagnosis.findings[p.top].text() if p.top is not None else "no finding"
        lines.append(f"  {p.problem.key:<40} F1 {p.f1['agent']:5.1f}  {p.main_stage:<13} {top}")
    if len(lost) > limit:
        lines.append(f"  ... and {len(lost) - limit} more (the CSV tables have them all)")
    return "\n".join(lines) + "\n"


def compare_diagnoses(
    a: Diagnosis, b: Diagnosis, labels: Sequence[str] = ("A", "B")
) -> dict[str, Any]:
    """Which error classes each run makes, and the other does not; each stage's mean loss."""
    ca, cb = a.class_counts(), b.class_counts()
    classes = [c for c in ERROR_CLASSES if c in ca or c in cb]
    overall = {
        label: {x.stage: x.mean for x in d.averages if x.category == "Overall"}
        for label, d in zip(labels, (a, b), strict=True)
    }
    return {
        "labels": list(labels),
        "classes": {c: [ca.get(c, 0), cb.get(c, 0)] for c in classes},
        f"only_{labels[0]}": [c for c in classes if c in ca and c not in cb],
        f"only_{labels[1]}": [c for c in classes if c in cb and c not in ca],
        "stages": overall,
    }


def render_diagnosis_comparison(comparison: dict[str, Any]) -> str:
    """`compare_diagnoses`' result as text: each class's counts, then what only one run makes."""
    a, b = comparison["labels"]
    lines = [f"  {'error class':<26}{a[:14]:>16}{b[:14]:>16}"]
    for name, (na, nb) in comparison["classes"].items():
        lines.append(f"  {name:<26}{na:>16}{nb:>16}")
    lines.append(f"Only {a}: " + (", ".join(comparison[f"only_{a}"]) or "none"))
    lines.append(f"Only {b}: " + (", ".join(comparison[f"only_{b}"]) or "none"))
    for label, stages in comparison["stages"].items():
        shares = ", ".join(f"{stage} {value:.1f}" for stage, value in stages.items())
        lines.append(f"{label}: mean F1 points lost by stage: {shares or 'none'}")
    return "\n".join(lines) + "\n"

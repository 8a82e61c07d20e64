"""The diagnosis' section of the HTML report: stage shares, error classes, problems that lost."""

from __future__ import annotations

from typing import Any

from .._html_parts import html_table
from ._model import ERROR_CLASSES, STAGES, Diagnosis

__all__ = ["diagnosis_section"]

#: Problems listed on the page (the CSV tables have them all).
_ROWS = 200


def _interval(low: float | None, high: float | None) -> str:
    return "" if low is None or high is None else f" [{low:.1f}, {high:.1f}]"


def diagnosis_section(diagnosis: Diagnosis) -> dict[str, Any]:
    """The section's tables and figure, for the report's template (every cell escaped there)."""
    by_category: dict[str, dict[str, Any]] = {}
    for a in diagnosis.averages:
        by_category.setdefault(a.category, {})[a.stage] = a
    stage_rows = [
        [
            category,
            *(f"{s[x].mean:.1f}{_interval(s[x].low, s[x].high)}" for x in STAGES),
            str(s[STAGES[0]].n),
        ]  # fmt: skip
        for category, s in by_category.items()
    ]
    mode = diagnosis.run.get("mode", "?")
    stages = html_table(
        f"F1 points lost per problem, by stage (mean, 95% bootstrap interval); substitutes made "
        f"by the {mode} mode, whose own distance from the reference answers is the floor",
        ["category", *STAGES, "n"],
        stage_rows,
    )
    counts = diagnosis.class_counts()
    classes = html_table(
        "Error classes found",
        ["class", "stage", "findings", "meaning"],
        [
            [name, ERROR_CLASSES[name][0], str(n), ERROR_CLASSES[name][1]]
            for name, n in counts.items()
            if ERROR_CLASSES[name][0] != "floor"
        ],
        text=True,
    )
    limits = [[name, str(n), ERROR_CLASSES[name][1]] for name, n in counts.items()
              if ERROR_CLASSES[name][0] == "floor"]  # fmt: skip
    if limits:  # the floor: a limit of the reference or of the substitutes, never an error
        classes["note"] = "Limits of the reference, not errors: " + "; ".join(
            f"{name} ({n}): {meaning}" for name, n, meaning in limits
        )
    lost = [p for p in diagnosis.problems if p.lost > 0]
    rows = [
        [
            p.problem.key,
            f"{p.f1['agent']:.1f}",
            *(f"{p.shares[s]:.1f}" for s in STAGES),
            diagnosis.findings[p.top].text() if p.top is not None else "",
        ]
        for p in lost[:_ROWS]
    ]
    more = f" (the first {_ROWS}; the CSV tables have all {len(lost)})" if len(lost) > _ROWS else ""
    problems = html_table(
        f"{len(lost)} problems that lost points{more}",
        ["problem", "F1", *STAGES, "top finding"],
        rows,
        text=True,
    )
    return {
        "id": "diagnosis",
        "title": "Where the points were lost",
        "tables": [stages, classes, problems],
        "figures": ["error_classes"],
    }

"""Samples' reports as one run's, and epochs' as one: in benchmark order, reduced item by item."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import fields, replace
from typing import Any

from ...core import TaskInfo
from ...evaluation import EvalReport, Finding

__all__ = ["merge_reports", "reduce_reports"]


def _sort_key(task_info: TaskInfo) -> Callable[[Any], tuple]:
    order = {p.key: i for i, p in enumerate(task_info.problems())}
    return lambda p: (order.get(p.key, len(order)), p.key)


def _findings(reports: Iterable[EvalReport]) -> tuple[Finding, ...]:
    """The reports' findings, each once, by file."""
    found = {f for r in reports for f in r.findings}
    return tuple(sorted(found, key=lambda f: (f.file, f.reason)))


def merge_reports(parts: Sequence[EvalReport], task_info: TaskInfo) -> EvalReport:
    """One report of several samples' own reports: their items together, in benchmark order."""
    problem_order = _sort_key(task_info)

    def joined(name: str, key: Callable[[Any], Any]) -> tuple | None:
        present = [getattr(p, name) for p in parts if getattr(p, name) is not None]
        if not present:
            return None
        return tuple(sorted((row for rows in present for row in rows), key=key))

    preprocessing: dict[str, tuple | None] | None = None
    subtasks = [p.preprocessing for p in parts if p.preprocessing is not None]
    if subtasks:
        preprocessing = {}
        for name in subtasks[0]:
            rows = [r for sub in subtasks for r in (sub.get(name) or ())]
            have = any(sub.get(name) is not None for sub in subtasks)
            preprocessing[name] = tuple(sorted(rows, key=lambda r: r.file)) if have else None
    return EvalReport(
        filtering=joined("filtering", lambda r: r.trait),
        selection=joined("selection", lambda r: problem_order(r.problem)),
        preprocessing=preprocessing,
        analysis=joined("analysis", lambda r: problem_order(r.problem)),
        findings=_findings(parts),
        run=dict(parts[0].run) if parts else {},
    )


def _reduce_rows(rows: Sequence[Any], statistic: Callable[[list[float]], float]) -> Any:
    """One row from the same item's rows over epochs: each float field reduced (NaN ignored)."""
    first = rows[0]
    changes: dict[str, Any] = {}
    for spec in fields(first):
        value = getattr(first, spec.name)
        if isinstance(value, float):
            found = [getattr(r, spec.name) for r in rows]
            finite = [v for v in found if isinstance(v, float) and not math.isnan(v)]
            changes[spec.name] = float(statistic(finite)) if finite else math.nan
    if "status" in {f.name for f in fields(first)}:
        statuses = {r.status for r in rows}
        changes["status"] = first.status if len(statuses) == 1 else "ok"
    return replace(first, **changes)


def reduce_reports(
    reports: Sequence[EvalReport], statistic: Callable[[list[float]], float]
) -> EvalReport:
    """The epochs' reports as one: every item's numbers reduced over the epochs.

    The reports hold the same items (each epoch scores the same slice), so each
    item is matched by its position; counts (a filtering's TP...) are epoch 1's.
    """
    if len(reports) == 1:
        return reports[0]
    first = reports[0]

    def reduced(rows_by_epoch: Sequence[tuple | None]) -> tuple | None:
        if rows_by_epoch[0] is None:
            return None
        return tuple(_reduce_rows(group, statistic) for group in zip(*rows_by_epoch, strict=True))

    preprocessing = None
    if first.preprocessing is not None:
        preprocessing = {
            name: reduced([(r.preprocessing or {}).get(name) for r in reports])
            for name in first.preprocessing
        }
    return replace(
        first,
        filtering=reduced([r.filtering for r in reports]),
        selection=reduced([r.selection for r in reports]),
        preprocessing=preprocessing,
        analysis=reduced([r.analysis for r in reports]),
        findings=_findings(reports),
    )

"""The report's per-item tables: as CSV files (`eval --csv`) and as pandas frames (`to_frame`).

One builder, `item_tables`, gives both the same rows with unrounded numbers;
CSV writes NaN as an empty cell and floats with `repr` (every digit kept).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from ..core import FILTERING_METRICS, PREPROCESSING_METRICS, csv_text, write_text_atomic
from ._render import average_rows, choice_text
from ._report_data import ReportData
from ._statistics import Interval

__all__ = ["FRAME_LEVELS", "interval_cells", "item_tables", "report_frame", "write_csv_tables"]


def item_tables(report: ReportData) -> dict[str, tuple[list[str], list[list[object]]]]:
    """Name -> (headers, rows) of every per-item table the report holds (unrounded numbers)."""
    tables: dict[str, tuple[list[str], list[list[object]]]] = {}
    if report.filtering is not None:
        metrics = FILTERING_METRICS
        rows = (
            [s.trait, s.tp, s.fp, s.tn, s.fn, *(getattr(s, m) for m in metrics)]
            for s in report.filtering
        )
        tables["filtering_per_trait"] = (["trait", "tp", "fp", "tn", "fn", *metrics], list(rows))
        headers = [
            "trait",
            "condition",
            "category",
            "accuracy",
            "reference_choice",
            "predicted_choice",
        ]
        rows = (
            [
                s.problem.trait,
                s.problem.condition or "None",
                s.problem.category,
                s.accuracy,
                choice_text(s.reference_choice),
                choice_text(s.predicted_choice),
            ]
            for s in report.selection or ()
        )
        tables["selection_per_problem"] = (headers, list(rows))
    if report.preprocessing is not None:
        rows = (
            [s.subtask, s.trait, s.file, s.status, *(getattr(s, m) for m in PREPROCESSING_METRICS)]
            for scores in report.preprocessing.values()
            for s in scores or ()
        )
        headers = ["subtask", "trait", "file", "status", *PREPROCESSING_METRICS]
        tables["preprocessing_per_file"] = (headers, list(rows))
    if report.analysis is not None:
        analysis_metrics = report.analysis_metrics
        rows = (
            [
                s.problem.trait,
                s.problem.condition or "None",
                s.category,
                s.status,
                *(s.value(m) for m in analysis_metrics),
            ]
            for s in report.analysis
        )
        headers = ["trait", "condition", "category", "status", *analysis_metrics]
        tables["analysis_per_problem"] = (headers, list(rows))
    tables["problems_found"] = (["file", "reason"], [[f.file, f.reason] for f in report.findings])
    if report.intervals:
        tables["averages"] = _averages(report)
    return tables


def _averages(report: ReportData) -> tuple[list[str], list[list[object]]]:
    """Every average with its interval and the n it was taken over."""
    rows = [
        [section, group, metric, value, *(interval_cells(interval)), n]
        for section, group, metric, value, interval, n in average_rows(report)
    ]
    headers = ["section", "group", "metric", "average", "ci_low", "ci_high", "ci_note", "n"]
    return headers, rows


def interval_cells(interval: Interval | None) -> list[object]:
    """low, high, note of an interval as table cells (NaN where undefined)."""
    if interval is None:
        return [math.nan, math.nan, "not computed"]
    if not interval.defined:
        return [math.nan, math.nan, interval.note]
    return [interval.low, interval.high, interval.note]


def write_csv_tables(report: ReportData, folder: str | Path) -> list[Path]:
    """Write the per-trait, per-problem and per-file tables as CSV files; return their paths."""
    written = []
    for name, (headers, rows) in item_tables(report).items():
        path = Path(folder) / f"{name}.csv"
        write_text_atomic(path, csv_text(headers, rows))
        written.append(path)
    return written


#: `ReportData.to_frame(level)` levels, and the table(s) each reads.
FRAME_LEVELS = {
    "problem": "analysis_per_problem",
    "file": "preprocessing_per_file",
    "trait": "filtering_per_trait",
    "selection": "selection_per_problem",
    "average": "averages",
    "finding": "problems_found",
}


def report_frame(report: ReportData, level: str = "problem") -> Any:
    """One of the report's tables as a pandas DataFrame (unrounded numbers, NaN where undefined).

    Parameters
    ----------
    level
        "problem": a row per analysis problem, every metric the report holds;
        "file": a row per preprocessed table; "trait": a row per trait, its
        dataset-filtering counts and scores (prefixed `df_`) beside the averages
        of its analysis problems; "selection": a row per problem's dataset
        choice; "average": every average with its interval and n; "finding":
        every file found missing or malformed.
    """
    import pandas as pd

    if level not in FRAME_LEVELS:
        raise ValueError(f"unknown level {level!r}; levels: {', '.join(FRAME_LEVELS)}")
    name = FRAME_LEVELS[level]
    tables = item_tables(report)
    if name == "averages":  # the averages always, their intervals where they were computed
        tables[name] = _averages(report)
    if name not in tables:  # a section the run did not score: its columns, no rows
        headers = _EMPTY_HEADERS[name] if name in _EMPTY_HEADERS else _averages(report)[0]
        tables[name] = (headers, [])
    headers, rows = tables[name]
    frame = pd.DataFrame(rows, columns=headers)
    if level == "trait":
        frame = frame.rename(columns={c: f"df_{c}" for c in frame.columns if c != "trait"})
        by_trait = pd.DataFrame.from_dict(report.analysis_by_trait(), orient="index")
        by_trait.index.name = "trait"
        frame = frame.set_index("trait").join(by_trait, how="outer").reset_index()
    return frame


#: The columns of each table, for a report that lacks the section.
_EMPTY_HEADERS = {
    name: headers
    for name, (headers, _) in item_tables(
        ReportData(filtering=(), selection=(), preprocessing={}, analysis=())
    ).items()
}

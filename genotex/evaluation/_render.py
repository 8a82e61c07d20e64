"""Human-readable and CSV renderings of an `EvalReport` (the JSON is `report.to_json()`)."""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Iterable, Sequence
from pathlib import Path

from ..core import (
    ANALYSIS_METRICS,
    CATEGORIES,
    FILTERING_METRICS,
    PREPROCESSING_METRICS,
    get_metric,
    write_text_atomic,
)
from ._report import OVERALL, EvalReport

__all__ = ["format_table", "render_text", "write_csv_tables"]


def _label(metric: str) -> str:
    return get_metric(metric).label


def _fmt(value: object) -> str:
    if isinstance(value, float):
        return "nan" if math.isnan(value) else f"{round(value, 2):.2f}"
    return str(value)


def format_table(headers: Sequence[str], rows: Iterable[Sequence[object]]) -> str:
    """A plain-text table: first column left-aligned, the others right-aligned."""
    cells = [[_fmt(v) for v in row] for row in rows]
    widths = [len(h) for h in headers]
    for row in cells:
        widths = [max(w, len(c)) for w, c in zip(widths, row, strict=True)]

    def line(values: Sequence[str]) -> str:
        rest = zip(values[1:], widths[1:], strict=True)
        parts = [values[0].ljust(widths[0])] + [v.rjust(w) for v, w in rest]
        return "  ".join(parts).rstrip()

    out = [line(list(headers)), line(["-" * w for w in widths])]
    out.extend(line(row) for row in cells)
    return "\n".join(out)


def _averages_row(
    label: str, averages: dict[str, float], metrics: Sequence[str], count: int
) -> list:
    return [label, *(averages.get(m, math.nan) for m in metrics), count]


def _choice(choice: object) -> str:
    if choice is None:
        return "-"
    if isinstance(choice, tuple):
        return " + ".join(choice)
    return str(choice)


def render_text(report: EvalReport, *, details: bool = False, max_findings: int = 40) -> str:
    """The printed evaluation: per-task summaries, optional details, problems found."""
    blocks: list[str] = []
    if report.filtering is not None:
        metrics = FILTERING_METRICS
        rows = [
            _averages_row(
                "Dataset filtering (DF)", report.filtering_average(), metrics, len(report.filtering)
            )
        ]
        selection = report.selection or ()
        ds = report.selection_average().get("accuracy", math.nan)
        rows.append(["Dataset selection (DS)", "", "", "", ds, len(selection)])
        blocks.append(
            "== Dataset selection ==\n"
            + format_table(["task", *(_label(m) for m in metrics), "n"], rows)
        )
        if details:
            blocks.append(
                "-- DF per trait --\n"
                + format_table(
                    ["trait", "TP", "FP", "TN", "FN", *(_label(m) for m in metrics)],
                    (
                        [s.trait, s.tp, s.fp, s.tn, s.fn, *(getattr(s, m) for m in metrics)]
                        for s in report.filtering
                    ),
                )
            )
            blocks.append(
                "-- DS per problem --\n"
                + format_table(
                    ["problem", "Acc", "reference", "prediction"],
                    (
                        [
                            s.problem.key,
                            s.accuracy,
                            _choice(s.reference_choice),
                            _choice(s.predicted_choice),
                        ]
                        for s in selection
                    ),
                )
            )
    if report.preprocessing is not None:
        metrics = PREPROCESSING_METRICS
        rows = []
        for subtask, scores in report.preprocessing.items():
            if scores is None:
                rows.append([subtask, *(["-"] * len(metrics)), "no preprocess/"])
                continue
            rows.append(
                _averages_row(subtask, report.preprocessing_average(subtask), metrics, len(scores))
            )
        blocks.append(
            "== Preprocessing ==\n"
            + format_table(["subtask", *(_label(m) for m in metrics), "files"], rows)
        )
        if details:
            for subtask, scores in report.preprocessing.items():
                if scores:
                    blocks.append(
                        f"-- {subtask} per file --\n"
                        + format_table(
                            ["file", *(_label(m) for m in metrics), "status"],
                            ([s.file, *(getattr(s, m) for m in metrics), s.status] for s in scores),
                        )
                    )
    if report.analysis is not None:
        metrics = ANALYSIS_METRICS
        headers = ["category", *(_label(m) for m in metrics), "n"]
        if not report.analysis:
            blocks.append("== Statistical analysis ==\n(no scored problems)")
        else:
            by_category = report.analysis_by_category()
            counts = {c: sum(1 for s in report.analysis if s.category == c) for c in CATEGORIES}
            counts[OVERALL] = len(report.analysis)
            rows = [
                _averages_row(name, by_category[name], metrics, counts[name])
                for name in (*CATEGORIES, OVERALL)
                if counts[name]
            ]
            blocks.append("== Statistical analysis ==\n" + format_table(headers, rows))
        if details and report.analysis:
            blocks.append(
                "-- analysis per trait --\n"
                + format_table(
                    ["trait", *(_label(m) for m in metrics)],
                    (
                        [trait, *(avg[m] for m in metrics)]
                        for trait, avg in report.analysis_by_trait().items()
                    ),
                )
            )
            blocks.append(
                "-- analysis per problem --\n"
                + format_table(
                    ["problem", *(_label(m) for m in metrics), "status"],
                    (
                        [s.problem.key, *(getattr(s, m) for m in metrics), s.status]
                        for s in report.analysis
                    ),
                )
            )
    findings = report.findings
    if findings:
        lines = [f"== Problems found ({len(findings)}) =="]
        lines += [f"- {f.file}: {f.reason}" for f in findings[:max_findings]]
        if len(findings) > max_findings:
            lines.append(
                f"... and {len(findings) - max_findings} more (all of them are in --json / --csv)"
            )
        blocks.append("\n".join(lines))
    else:
        blocks.append("== Problems found ==\nnone")
    return "\n\n".join(blocks) + "\n"


def _csv_text(headers: Sequence[str], rows: Iterable[Sequence[object]]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(headers)
    for row in rows:
        writer.writerow(
            [
                ""
                if isinstance(v, float) and math.isnan(v)
                else repr(v)
                if isinstance(v, float)
                else v
                for v in row
            ]
        )
    return buffer.getvalue()


def write_csv_tables(report: EvalReport, folder: str | Path) -> list[Path]:
    """Write the per-trait, per-problem and per-file tables as CSV files; return their paths."""
    folder = Path(folder)
    tables: dict[str, str] = {}
    if report.filtering is not None:
        tables["filtering_per_trait.csv"] = _csv_text(
            ["trait", "tp", "fp", "tn", "fn", *FILTERING_METRICS],
            (
                [s.trait, s.tp, s.fp, s.tn, s.fn, *(getattr(s, m) for m in FILTERING_METRICS)]
                for s in report.filtering
            ),
        )
        tables["selection_per_problem.csv"] = _csv_text(
            ["trait", "condition", "category", "accuracy", "reference_choice", "predicted_choice"],
            (
                [
                    s.problem.trait,
                    s.problem.condition or "None",
                    s.problem.category,
                    s.accuracy,
                    _choice(s.reference_choice),
                    _choice(s.predicted_choice),
                ]
                for s in report.selection or ()
            ),
        )
    if report.preprocessing is not None:
        tables["preprocessing_per_file.csv"] = _csv_text(
            ["subtask", "trait", "file", "status", *PREPROCESSING_METRICS],
            (
                [
                    s.subtask,
                    s.trait,
                    s.file,
                    s.status,
                    *(getattr(s, m) for m in PREPROCESSING_METRICS),
                ]
                for scores in report.preprocessing.values()
                for s in scores or ()
            ),
        )
    if report.analysis is not None:
        tables["analysis_per_problem.csv"] = _csv_text(
            ["trait", "condition", "category", "status", *ANALYSIS_METRICS],
            (
                [
                    s.problem.trait,
                    s.problem.condition or "None",
                    s.category,
                    s.status,
                    *(getattr(s, m) for m in ANALYSIS_METRICS),
                ]
                for s in report.analysis
            ),
        )
    tables["problems_found.csv"] = _csv_text(
        ["file", "reason"], ([f.file, f.reason] for f in report.findings)
    )
    written = []
    for name, text in tables.items():
        write_text_atomic(folder / name, text)
        written.append(folder / name)
    return written

"""Human-readable and CSV renderings of a report (the JSON is `report.to_json()`)."""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Sequence

from ..core import (
    ANALYSIS_METRICS,
    CATEGORIES,
    FILTERING_METRICS,
    METRICS,
    PREPROCESSING_METRICS,
    get_metric,
)
from ._diagnosis._views import render_diagnosis
from ._report_data import ReportData, group_key
from ._scores import MISSING_MARK, OVERALL, counted, cv_absent_note
from ._statistics import Interval

__all__ = ["average_rows", "choice_text", "format_p", "format_table", "format_value", "render_text"]

#: Metrics printed in scientific notation (a p-value of 0.0004 is not "0.00").
P_VALUES = frozenset(m for m, spec in METRICS.items() if spec.label == "p")


def _label(metric: str) -> str:
    return get_metric(metric).label


def _fmt(value: object) -> str:
    if isinstance(value, float):
        return "nan" if math.isnan(value) else f"{round(value, 2):.2f}"
    return str(value)


def format_p(p: float | None, permutations: int | None = None) -> str:
    """A p-value in scientific notation; a permutation p of 0 as `<1/permutations`."""
    if p is None or math.isnan(p):
        return "-"
    if p == 0 and permutations:
        return f"<{1 / permutations:.0e}"
    return f"{p:.1e}"


def format_value(metric: str, value: float | None, report: ReportData | None = None) -> str:
    """A metric's value as the tables print it: 2 decimals, p-values in scientific notation."""
    if metric in P_VALUES:
        exact = (report.run if report is not None else {}).get("exact_statistics") or {}
        return format_p(value, exact.get("gsea_permutations"))
    if value is None or math.isnan(value):
        return "-"
    return f"{value:.2f}"


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


def _counts_text(counts: Sequence[int]) -> str:
    """The n of several averages: one number when they agree, their range when not."""
    low, high = min(counts), max(counts)
    return str(low) if low == high else f"{low}-{high}"


def _averages_row(
    label: str, averages: dict[str, float], metrics: Sequence[str], count: int
) -> list:
    return [label, *(averages.get(m, math.nan) for m in metrics), count]


def choice_text(choice: object) -> str:
    if choice is None:
        return "-"
    if isinstance(choice, tuple):
        return " + ".join(choice)
    return str(choice)


def _labels(metrics: Sequence[str]) -> list[str]:
    return [_label(m) for m in metrics]


def _selection_blocks(report: ReportData, details: bool) -> list[str]:
    metrics = FILTERING_METRICS
    filtering, selection = report.filtering or (), report.selection or ()
    ds = report.selection_average().get("accuracy", math.nan)
    rows = [
        _averages_row(
            "Dataset filtering (DF)", report.filtering_average(), metrics, len(filtering)
        ),
        ["Dataset selection (DS)", "", "", "", ds, len(selection)],
    ]
    blocks = ["== Dataset selection ==\n" + format_table(["task", *_labels(metrics), "n"], rows)]
    if details:
        per_trait = (
            [s.trait, s.tp, s.fp, s.tn, s.fn, *(getattr(s, m) for m in metrics)] for s in filtering
        )
        headers = ["trait", "TP", "FP", "TN", "FN", *_labels(metrics)]
        blocks.append("-- DF per trait --\n" + format_table(headers, per_trait))
        per_problem = (
            [
                s.problem.key,
                s.accuracy,
                choice_text(s.reference_choice),
                choice_text(s.predicted_choice),
            ]
            for s in selection
        )
        headers = ["problem", "Acc", "reference", "prediction"]
        blocks.append("-- DS per problem --\n" + format_table(headers, per_problem))
    return blocks


def _preprocessing_blocks(report: ReportData, details: bool) -> list[str]:
    metrics = PREPROCESSING_METRICS
    rows = []
    for subtask, scores in (report.preprocessing or {}).items():
        if scores is None:
            rows.append([subtask, *(["-"] * len(metrics)), "no preprocess/"])
        else:
            averages = report.preprocessing_average(subtask)
            rows.append(_averages_row(subtask, averages, metrics, len(scores)))
    headers = ["subtask", *_labels(metrics), "files"]
    blocks = ["== Preprocessing ==\n" + format_table(headers, rows)]
    for subtask, scores in (report.preprocessing or {}).items():
        if details and scores:
            per_file = ([s.file, *(getattr(s, m) for m in metrics), s.status] for s in scores)
            headers = ["file", *_labels(metrics), "status"]
            blocks.append(f"-- {subtask} per file --\n" + format_table(headers, per_file))
    return blocks


def _analysis_blocks(report: ReportData, details: bool) -> list[str]:
    metrics, scores = ANALYSIS_METRICS, report.analysis or ()
    if not scores:
        return ["== Statistical analysis ==\n(no scored problems)"]
    by_category = report.analysis_by_category()
    counts = {c: sum(1 for s in scores if s.category == c) for c in CATEGORIES}
    counts[OVERALL] = len(scores)
    rows = [
        _averages_row(name, by_category[name], metrics, counts[name])
        for name in (*CATEGORIES, OVERALL)
        if counts[name]
    ]
    note = cv_absent_note(scores)
    marked = [label + (MISSING_MARK if note and m.startswith("trait_pred_") else "")
              for m, label in zip(metrics, _labels(metrics), strict=True)]  # fmt: skip
    headers = ["category", *marked, "n"]
    table = format_table(headers, rows)
    if note is not None:  # the published evaluator's 0, marked, and said in one line
        table += f"\n{MISSING_MARK} {note}"
    blocks = ["== Statistical analysis ==\n" + table]
    extras = report.analysis_metrics[len(metrics) :]
    if extras:
        groups = report.analysis_groups()
        rows = [
            [
                name,
                *(
                    format_value(m, by_category[name].get(m), report)
                    if m in P_VALUES
                    else by_category[name].get(m, math.nan)
                    for m in extras
                ),
                _counts_text([counted(groups[name], m) for m in extras]),
            ]
            for name in (*CATEGORIES, OVERALL)
            if counts[name]
        ]
        title = "== Beside the parity numbers (exact AUROC, AP, GSEA prerank) ==\n"
        blocks.append(title + format_table(["category", *_labels(extras), "n"], rows))
    if details:
        per_trait = (
            [trait, *(avg[m] for m in metrics)] for trait, avg in report.analysis_by_trait().items()
        )
        blocks.append(
            "-- analysis per trait --\n" + format_table(["trait", *_labels(metrics)], per_trait)
        )
        per_problem = ([s.problem.key, *(getattr(s, m) for m in metrics), s.status] for s in scores)
        headers = ["problem", *_labels(metrics), "status"]
        blocks.append("-- analysis per problem --\n" + format_table(headers, per_problem))
    return blocks


def _findings_block(report: ReportData, max_findings: int) -> str:
    findings = report.findings
    if not findings:
        return "== Problems found ==\nnone"
    lines = [f"== Problems found ({len(findings)}) =="]
    lines += [f"- {f.file}: {f.reason}" for f in findings[:max_findings]]
    if len(findings) > max_findings:
        more = len(findings) - max_findings
        lines.append(f"... and {more} more (all of them are in the JSON and CSV outputs)")
    return "\n".join(lines)


#: The line a report scored against itself opens with (text; the page says the same).
PREDICTION_IS_REFERENCE = (
    "warning: the prediction is the reference (the same folder, or the same files): every "
    "score below is the reference scored against itself, not a run's"
)


def _benchmark_lines(provenance: object) -> str:
    """The downloaded benchmark the reference came from (repo, revision, commit), and a
    warning when the reference differs from what was downloaded.
    """
    if not isinstance(provenance, dict) or not isinstance(provenance.get("benchmark"), dict):
        return ""
    benchmark = provenance["benchmark"]
    names = [str(benchmark.get(k) or "?")[:80] for k in ("repo", "revision", "commit")]
    lines = [f"reference: {names[0]} at {names[1]} (commit {names[2][:12]})"]
    modified = benchmark.get("modified")
    if isinstance(modified, int) and not isinstance(modified, bool) and modified > 0:
        shown = benchmark.get("modified_files")
        first = ", ".join(str(f)[:120] for f in shown[:3]) if isinstance(shown, list) else ""
        lines.append(
            f"warning: the reference or its task_info was modified since download ({modified:,} "
            f"files differ "
            f"from its marker: {first}{', ...' if modified > 3 else ''}); its scores are not "
            "the benchmark's"
        )
    return "\n".join(lines)


def render_text(report: ReportData, *, details: bool = False, max_findings: int = 40) -> str:
    """The printed evaluation: per-task summaries, optional details, problems found."""
    blocks: list[str] = []
    if (report.run or {}).get("prediction_is_reference"):
        blocks.append(PREDICTION_IS_REFERENCE)
    subset = (report.run or {}).get("traits")
    if isinstance(subset, list) and subset:
        names = ", ".join(str(t)[:60] for t in subset[:20])
        blocks.append(f"subset: {names} only (the other traits are not scored, not failed)")
    said = _benchmark_lines((report.run or {}).get("provenance"))
    if said:
        blocks.append(said)
    if report.filtering is not None:
        blocks += _selection_blocks(report, details)
    if report.preprocessing is not None:
        blocks += _preprocessing_blocks(report, details)
    if report.analysis is not None:
        blocks += _analysis_blocks(report, details)
    if report.intervals:
        blocks.append(_intervals_block(report, details))
    blocks.append(_findings_block(report, max_findings))
    if report.diagnosis is not None:
        blocks.append("== Diagnosis ==\n" + render_diagnosis(report.diagnosis).rstrip("\n"))
    return "\n\n".join(blocks) + "\n"


#: The metrics whose intervals the text shows without --details (every one is in the CSV).
_HEADLINE = {"f1", "accuracy", "composite_similarity_correlation", "auroc", "auroc_exact"}
_SECTIONS = {
    "filtering": "DF",
    "selection": "DS",
    "preprocessing": "Preprocessing",
    "analysis": "Analysis",
}


def average_rows(report: ReportData) -> Iterator[tuple[str, str, str, float, Interval | None, int]]:
    """(section, group, metric, average, interval, items) of every average the report holds."""
    if report.filtering is not None:
        averages = report.filtering_average()
        for m in FILTERING_METRICS:
            yield (
                "filtering",
                "",
                m,
                averages.get(m, math.nan),
                report.interval("filtering", m),
                len(report.filtering),
            )
        accuracy = report.selection_average().get("accuracy", math.nan)
        yield (
            "selection",
            "",
            "accuracy",
            accuracy,
            report.interval("selection", "accuracy"),
            len(report.selection or ()),
        )
    for subtask, scores in (report.preprocessing or {}).items():
        averages, key = report.preprocessing_average(subtask), group_key("preprocessing", subtask)
        for m in PREPROCESSING_METRICS:
            yield (
                "preprocessing",
                subtask,
                m,
                averages.get(m, math.nan),
                report.interval(key, m),
                len(scores or ()),
            )
    groups = report.analysis_groups() if report.analysis else {}
    for name, averages in report.analysis_by_category().items():
        key = group_key("analysis", name)
        for m in report.analysis_metrics:
            yield (
                "analysis",
                name,
                m,
                averages.get(m, math.nan),
                report.interval(key, m),
                counted(groups[name], m),
            )


def _intervals_block(report: ReportData, details: bool) -> str:
    settings = report.run.get("bootstrap", {})
    title = (
        f"== {settings.get('confidence', 0.95):.0%} intervals (percentile bootstrap, "
        f"{settings.get('resamples', '?')} resamples, seed {settings.get('seed', '?')}) =="
    )
    rows = []
    for section, group, metric, value, interval, n in average_rows(report):
        if interval is None or not (details or metric in _HEADLINE):
            continue
        label = " ".join(part for part in (_SECTIONS[section], group) if part)
        low, high = (interval.low, interval.high) if interval.defined else ("-", "-")
        rows.append([label, _label(metric), value, low, high, n, interval.note])
    headers = ["average", "metric", "value", "low", "high", "n", "note"]
    return title + "\n" + format_table(headers, rows)

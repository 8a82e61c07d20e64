"""`genotex eval --report DIR` and `genotex report RUN.json`: one self-contained HTML page.

`DIR/index.html` holds every number in a table and every figure inline (no
network, readable without JavaScript), with a glossary of every column; the
figures are also written as `DIR/figures/<name>.png|svg|pdf`. The page is
rendered from the report alone: it recomputes nothing, and says what the
report lacks. The published Tables 4 and 5 stand beside the selection and
preprocessing numbers, Table 2 beside the analysis numbers, each labelled as
published, in the paper's vocabulary.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..core import (
    ANALYSIS_METRICS,
    FILTERING_METRICS,
    PREPROCESSING_METRICS,
    get_metric,
    prepare_output_folder,
    regress_file_name,
)
from ._diagnosis._section import diagnosis_section
from ._figure_files import DEFAULT_DPI, FIGURE_FORMATS, RenderedFigure, make_figures
from ._figures import headline_averages
from ._html_parts import (
    figure_files,
    glossary_table,
    html_table,
    inline_figures,
    number_text,
    page_template,
    percent_text,
    with_interval,
    write_files,
)
from ._isolation import not_isolated, reached_pipeline
from ._leaderboard import paper_table
from ._leaderboard_render import paper_comparison
from ._preprocessing_task import SUBTASK_LABELS
from ._render import average_rows
from ._report import EvalReport, group_key
from ._scores import MISSING_MARK, ProblemScore, counted, cv_absent_note

__all__ = ["render_html", "write_report"]


def _averages_table(report: EvalReport, section: str, caption: str) -> dict:
    rows = []
    for sec, group, metric, value, interval, n in average_rows(report):
        if sec == section:
            label = " ".join(x for x in (group, get_metric(metric).label) if x)
            rows.append(
                [
                    label,
                    with_interval(value, interval, metric, report),
                    str(n),
                    interval.note if interval else "",
                ]
            )
    return html_table(caption, ["average", "value [95% interval]", "n", "note"], rows)


def _selection_section(report: EvalReport) -> dict:
    tables = [_averages_table(report, "filtering", "Dataset filtering (per trait)")]
    tables.append(_averages_table(report, "selection", "Dataset selection (per problem)"))
    published = [
        [f"{r['method']} (published, Table 4)", r["df_f1"], r["ds_accuracy"]]
        for r in paper_table("paper_table4.csv")
    ]
    ours = [
        [
            report.run.get("label") or "this run",
            number_text(report.filtering_average().get("f1")),
            number_text(report.selection_average().get("accuracy")),
        ]
    ]
    tables.append(
        html_table(
            "Beside the paper's Table 4 (DF F1, DS accuracy)",
            ["run", "DF F1", "DS accuracy"],
            ours,
            published,
        )
    )
    per_trait = [
        [s.trait, *(number_text(getattr(s, m)) for m in FILTERING_METRICS)]
        for s in report.filtering or ()
    ]
    tables.append(
        html_table(
            "DF per trait", ["trait", *(get_metric(m).label for m in FILTERING_METRICS)], per_trait
        )
    )
    return {
        "id": "selection",
        "title": "Dataset filtering and selection",
        "tables": tables,
        "figures": [],
    }


def _preprocessing_section(report: EvalReport) -> dict:
    tables = []
    for subtask in report.preprocessing or {}:
        rows = [
            [
                get_metric(m).label,
                with_interval(
                    report.preprocessing_average(subtask).get(m, math.nan),
                    report.interval(group_key("preprocessing", subtask), m),
                    m,
                ),
            ]
            for m in PREPROCESSING_METRICS
        ]
        tables.append(
            html_table(
                f"Preprocessing: {SUBTASK_LABELS.get(subtask, subtask)} data "
                f"({subtask} tables, averaged per file)",
                ["metric", "value [95% interval]"],
                rows,
            )
        )
    published = [
        [f"{r['method']} (published, Table 5)", r["data"], r["aj"], r["sj"], r["csc"]]
        for r in paper_table("paper_table5.csv")
    ]
    metrics = ("attributes_jaccard", "samples_jaccard", "composite_similarity_correlation")
    ours = [
        [
            report.run.get("label") or "this run",
            SUBTASK_LABELS.get(s, s),
            *(percent_text(report.preprocessing_average(s).get(m)) for m in metrics),
        ]
        for s in report.preprocessing or {}
    ]
    tables.append(
        html_table(
            "Beside the paper's Table 5 (AJ, SJ and CSC in percent, as the paper prints them)",
            ["run", "data", "AJ", "SJ", "CSC"],
            ours,
            published,
        )
    )
    return {
        "id": "preprocessing",
        "title": "Preprocessing",
        "tables": tables,
        "figures": ["csc_per_trait"],
    }


def _category_table(report: EvalReport, caption: str, metrics: Sequence[str]) -> dict:
    """Per category and overall, each metric's average with its interval, and the n."""
    groups = report.analysis_groups()
    rows = [
        [
            name,
            *(
                with_interval(
                    averages.get(m), report.interval(group_key("analysis", name), m), m, report
                )
                for m in metrics
            ),
            _counts(groups[name], metrics),
        ]
        for name, averages in report.analysis_by_category().items()
        if groups[name]
    ]
    return html_table(caption, ["category", *(get_metric(m).label for m in metrics), "n"], rows)


def _analysis_section(report: EvalReport) -> dict:
    parity, extras = ANALYSIS_METRICS, report.analysis_metrics[len(ANALYSIS_METRICS) :]
    first = _category_table(report, "Analysis per category (per problem)", parity)
    note = cv_absent_note(report.analysis or ())
    if note is not None:  # the published evaluator's 0, marked, and said in one line
        marked = [
            h + (MISSING_MARK if h in ("PredAcc", "PredF1") else "") for h in first["headers"]
        ]
        first = {**first, "headers": marked, "note": f"{MISSING_MARK} {note}"}
    tables = [first]
    if extras:
        caption = "Beside the parity numbers: exact AUROC, AP and GSEA prerank (per problem)"
        tables.append(_category_table(report, caption, extras))
    headers, ours, published, warning = paper_comparison(
        report, report.run.get("label") or "this run"
    )
    table = html_table("Beside the paper's Table 2 (end to end)", headers, [ours], published)
    tables.append({**table, "note": warning})
    return {
        "id": "analysis",
        "title": "Statistical analysis",
        "tables": tables,
        "figures": ["trait_category_f1", "problem_distributions"],
    }


def _counts(rows: Sequence[ProblemScore], metrics: Sequence[str]) -> str:
    """The n of a row of averages: the problems, and fewer where some values are undefined."""
    n = len(rows)
    fewer = {get_metric(m).label: k for m in metrics if (k := counted(rows, m)) != n}
    if not fewer:
        return str(n)
    if len(fewer) == len(metrics) and len(set(fewer.values())) == 1:
        return f"{next(iter(fewer.values()))} of {n}"  # every column averaged over the same few
    return f"{n} ({', '.join(f'{label}: {k}' for label, k in fewer.items())})"


def _findings_table(report: EvalReport) -> dict | None:
    files = {f.file for f in report.findings}
    failed = [
        [s.problem.key, s.status]
        for s in report.analysis or ()
        if s.status != "ok"  # a problem whose file is listed below is listed once, there
        and f"regress/{s.problem.trait}/{regress_file_name(s.problem.condition)}" not in files
    ]
    rows = [[f.file, f.reason] for f in report.findings]
    if not rows and not failed:
        return None
    n_failed = sum(s.status != "ok" for s in report.analysis or ())
    return html_table(
        f"{n_failed} failed problems; {len(rows)} files missing or malformed",
        ["file or problem", "reason"],
        [[k, f"problem {s}"] for k, s in failed] + rows,
        text=True,
    )


def _provenance_table(report: EvalReport) -> dict:
    block = report.run.get("provenance")
    if not block and not isinstance(block, (int, float)):
        return html_table(
            "Provenance",
            ["field", "value"],
            [["provenance", "missing (a report from genotex 0.1?)"]],
        )
    if not isinstance(block, dict):  # a saved report is untrusted: shown, escaped, as it is
        said = f"not an object: {_plain(block)[:200]}"
        return html_table("Provenance", ["field", "value"], [["provenance", said]], text=True)
    rows = []
    for key, value in sorted(block.items()):  # sorted: the same page from memory or from JSON
        if isinstance(value, dict):
            rows += [[f"{key}.{k}", _plain(v)] for k, v in sorted(value.items())]
        else:
            rows.append([key, _plain(value)])
    for key in ("bootstrap", "exact_statistics"):
        if key in report.run:
            rows.append([key, _plain(report.run[key])])
    caption = "Provenance (times excepted, the report is deterministic)"
    return html_table(caption, ["field", "value"], rows, text=True)


def _plain(value: Any) -> str:
    """A provenance value as text (nested objects as sorted JSON)."""
    if isinstance(value, dict | list):
        return json.dumps(value, sort_keys=True)
    return "-" if value is None else str(value)


def _cards(report: EvalReport) -> list[dict]:
    cards = []
    for label, _, value, interval in headline_averages(report):
        if label in _CARDS:
            card_id, title = _CARDS[label]
            cards.append(
                {
                    "id": card_id,
                    "label": title,
                    "raw": repr(value),
                    "value": number_text(value),
                    "ci": with_interval(value, interval),
                }
            )
    return cards


#: The headline cards: which averages, under which words (the AUROC is the paper's approximation).
_CARDS = {
    "Analysis AUROC": ("auroc", "Analysis AUROC (the paper's approximate AUROC, all problems)"),
    "CSC Linked": ("csc", "Linked-data CSC (per file)"),
}


def render_html(report: EvalReport, figures: Mapping[str, RenderedFigure]) -> str:
    """The page's HTML for a report and its figures (PNG inlined as base64)."""
    sections = []
    if report.filtering is not None:
        sections.append(_selection_section(report))
    if report.preprocessing is not None:
        sections.append(_preprocessing_section(report))
    if report.analysis:
        sections.append(_analysis_section(report))
    if report.diagnosis is not None:
        sections.append(diagnosis_section(report.diagnosis))
    return page_template("report.html.j2").render(
        run=report.run,
        cards=_cards(report),
        sections=sections,
        figures=inline_figures(figures),
        findings=_findings_table(report),
        glossary=glossary_table(),
        provenance=_provenance_table(report),
        intervals=bool(report.intervals),
        exact="exact_statistics" in report.run,
        not_isolated=_not_isolated_sandbox(report),
        reached_pipeline=reached_pipeline(report),
        prediction_is_reference=bool(report.run.get("prediction_is_reference")),
    )


def _not_isolated_sandbox(report: EvalReport) -> str | None:
    """The sandbox of an agent run that was not isolated from the host, for the page's warning."""
    if not not_isolated(report):
        return None
    return str(report.run["harness"].get("sandbox"))[:40]


def write_report(
    report: EvalReport,
    folder: str | Path,
    *,
    formats: Sequence[str] = FIGURE_FORMATS,
    dpi: int = DEFAULT_DPI,
) -> Path:
    """Write `index.html` and `figures/<name>.<format>` into `folder`; return the page's path.

    Parameters
    ----------
    report
        A report from `evaluate` or `load_report`.
    folder
        Created if missing; files of an earlier report there are replaced.
    formats
        The figure files to write, among "png", "svg" and "pdf" (the page
        inlines the PNG whatever is asked).
    dpi
        The PNG's resolution; 300 by default, what journals ask of figures.
    """
    folder = prepare_output_folder(folder, what="report folder")
    figures = make_figures(report, formats=formats, dpi=dpi)
    files: dict[tuple[str, ...], bytes] = {
        ("index.html",): render_html(report, figures).encode("utf-8")
    }
    files.update(figure_files(figures))
    write_files(folder, files)
    return folder / "index.html"

"""`genotex eval --report DIR` and `genotex report RUN.json`: one self-contained HTML page.

`DIR/index.html` holds every number in a table and every figure inline (no
network, readable without JavaScript); the figures are also written as
`DIR/figures/<name>.png` and `.svg`. The page is rendered from the report
alone: it recomputes nothing, and says what the report lacks. The published
Tables 4 and 5 stand beside the selection and preprocessing numbers, Table 2
beside the analysis numbers, each labelled as published.
"""

from __future__ import annotations

import base64
import json
import math
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ..core import (
    FILTERING_METRICS,
    PREPROCESSING_METRICS,
    atomic_output,
    get_metric,
    output_path,
    prepare_output_folder,
)
from ._figures import make_figures
from ._leaderboard import paper_comparison, paper_table
from ._render import average_rows
from ._report import EvalReport, group_key
from ._scores import OVERALL

__all__ = ["render_html", "write_report"]


def _number(value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    return f"{value:.2f}" if isinstance(value, float) else str(value)


def _percent(value: float | None) -> str:
    return _number(None if value is None else value * 100)


def _with_interval(value: float, interval) -> str:
    text = _number(value)
    if interval is not None and interval.defined:
        text += f" [{interval.low:.2f}, {interval.high:.2f}]"
    return text


def _table(
    caption: str, headers: list[str], rows: Iterable[list[str]], published=(), *, text=False
) -> dict:
    """A table for the template; `text` tables are left-aligned (paths, reasons)."""
    rows = [{"cells": r, "published": False} for r in rows]
    rows += [{"cells": r, "published": True} for r in published]
    return {"caption": caption, "headers": headers, "rows": rows, "text": text}


def _averages_table(report: EvalReport, section: str, caption: str) -> dict:
    rows = []
    for sec, group, metric, value, interval, n in average_rows(report):
        if sec == section:
            label = " ".join(x for x in (group, get_metric(metric).label) if x)
            rows.append(
                [label, _with_interval(value, interval), str(n), interval.note if interval else ""]
            )
    return _table(caption, ["average", "value [95% interval]", "items", "note"], rows)


def _selection_section(report: EvalReport) -> dict:
    tables = [_averages_table(report, "filtering", "Dataset filtering (per trait)")]
    tables.append(_averages_table(report, "selection", "Dataset selection (per problem)"))
    published = [
        [f"{r['method']} (published, Table 4)", r["df_f1"], r["ds_accuracy"]]
        for r in paper_table("paper_table4.csv")
    ]
    ours = [
        [
            "this run",
            _number(report.filtering_average().get("f1")),
            _number(report.selection_average().get("accuracy")),
        ]
    ]
    tables.append(
        _table(
            "Beside the paper's Table 4 (DF F1, DS accuracy)",
            ["run", "DF F1", "DS accuracy"],
            ours,
            published,
        )
    )
    per_trait = [
        [s.trait, *(_number(getattr(s, m)) for m in FILTERING_METRICS)]
        for s in report.filtering or ()
    ]
    tables.append(
        _table(
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
                _with_interval(
                    report.preprocessing_average(subtask).get(m, math.nan),
                    report.interval(group_key("preprocessing", subtask), m),
                ),
            ]
            for m in PREPROCESSING_METRICS
        ]
        tables.append(
            _table(
                f"Preprocessing: {subtask} tables (per file)",
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
        ["this run", s, *(_percent(report.preprocessing_average(s).get(m)) for m in metrics)]
        for s in report.preprocessing or {}
    ]
    tables.append(
        _table(
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


def _analysis_section(report: EvalReport) -> dict:
    metrics = report.analysis_metrics
    groups = report.analysis_groups()
    rows = []
    for name, averages in report.analysis_by_category().items():
        if groups[name]:
            key = group_key("analysis", name)
            rows.append(
                [
                    name,
                    *(_with_interval(averages.get(m), report.interval(key, m)) for m in metrics),
                    str(len(groups[name])),
                ]
            )
    tables = [
        _table(
            "Analysis per category (per problem)",
            ["category", *(get_metric(m).label for m in metrics), "n"],
            rows,
        )
    ]
    headers, ours, published, warning = paper_comparison(
        report, report.run.get("label") or "this run"
    )
    table = _table("Beside the paper's Table 2 (end to end)", headers, [ours], published)
    tables.append({**table, "note": warning})
    return {
        "id": "analysis",
        "title": "Statistical analysis",
        "tables": tables,
        "figures": ["trait_category_f1", "problem_distributions"],
    }


def _findings_table(report: EvalReport) -> dict | None:
    failed = [[s.problem.key, s.status] for s in report.analysis or () if s.status != "ok"]
    rows = [[f.file, f.reason] for f in report.findings]
    if not rows and not failed:
        return None
    return _table(
        f"{len(failed)} failed problems; {len(rows)} findings",
        ["file or problem", "reason"],
        [[k, f"problem {s}"] for k, s in failed] + rows,
        text=True,
    )


def _provenance_table(report: EvalReport) -> dict:
    block = report.run.get("provenance")
    if not block:
        return _table(
            "Provenance",
            ["field", "value"],
            [["provenance", "missing (a report from genotex 0.1?)"]],
        )
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
    return _table(caption, ["field", "value"], rows, text=True)


def _plain(value: Any) -> str:
    """A provenance value as text (nested objects as sorted JSON)."""
    if isinstance(value, dict | list):
        return json.dumps(value, sort_keys=True)
    return "-" if value is None else str(value)


def _cards(report: EvalReport) -> list[dict]:
    cards = []
    overall = report.analysis_by_category().get(OVERALL, {})
    if overall:
        interval = report.interval(group_key("analysis", OVERALL), "auroc")
        cards.append(
            {
                "id": "auroc",
                "label": "Analysis AUROC (overall)",
                "raw": repr(overall["auroc"]),
                "value": _number(overall["auroc"]),
                "ci": _with_interval(overall["auroc"], interval),
            }
        )
    if report.preprocessing and report.preprocessing.get("linked") is not None:
        value = report.preprocessing_average("linked").get(
            "composite_similarity_correlation", math.nan
        )
        interval = report.interval(
            group_key("preprocessing", "linked"), "composite_similarity_correlation"
        )
        cards.append(
            {
                "id": "csc",
                "label": "Linked-data CSC",
                "raw": repr(value),
                "value": _number(value),
                "ci": _with_interval(value, interval),
            }
        )
    return cards


def render_html(report: EvalReport, figures: dict[str, tuple[bytes, bytes, str]]) -> str:
    """The page's HTML for a report and its figures (PNG inlined as base64)."""
    from jinja2 import Environment, PackageLoader

    env = Environment(
        # autoescape=True: select_autoescape() goes by the name and does not escape a `.j2` file
        loader=PackageLoader("genotex.evaluation", "templates"),
        autoescape=True,
    )
    sections = []
    if report.filtering is not None:
        sections.append(_selection_section(report))
    if report.preprocessing is not None:
        sections.append(_preprocessing_section(report))
    if report.analysis:
        sections.append(_analysis_section(report))
    inline = {
        name: {"png": base64.b64encode(png).decode(), "alt": alt}
        for name, (png, _, alt) in figures.items()
    }
    return env.get_template("report.html.j2").render(
        run=report.run,
        cards=_cards(report),
        sections=sections,
        figures=inline,
        findings=_findings_table(report),
        provenance=_provenance_table(report),
        intervals=bool(report.intervals),
        exact="exact_statistics" in report.run,
    )


def write_report(report: EvalReport, folder: str | Path) -> Path:
    """Write `index.html` and `figures/*.png|svg` into `folder`; return the page's path.

    Every file is written into a staging folder first and moved into place only
    when all are written, so a full disk leaves the earlier report (or nothing),
    never figures without their page.
    """
    folder = prepare_output_folder(folder, what="report folder")
    figures = make_figures(report)
    files = {("index.html",): render_html(report, figures).encode("utf-8")}
    for name, (png, svg, _) in figures.items():
        files[("figures", f"{name}.png")] = png
        files[("figures", f"{name}.svg")] = svg
    targets = {parts: output_path(folder, *parts) for parts in files}  # all checked first
    with tempfile.TemporaryDirectory(prefix=".report-", dir=folder) as staging:
        staged = {}
        for parts, data in files.items():
            with atomic_output(Path(staging, *parts)) as tmp:
                tmp.write_bytes(data)
            staged[parts] = Path(staging, *parts)
        output_path(folder, "figures").mkdir(exist_ok=True)
        for parts, path in staged.items():  # renames within one file system: no space needed
            os.replace(path, targets[parts])
    return targets[("index.html",)]

"""What both HTML pages share: cells, tables, the glossary, the template, writing the files."""

from __future__ import annotations

import base64
import math
import os
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core import METRICS, atomic_output, gate_write, output_path
from ._figure_files import RenderedFigure
from ._render import format_value
from ._statistics import Interval

if TYPE_CHECKING:
    import jinja2

    from ._report import EvalReport

__all__ = [
    "figure_files",
    "glossary_table",
    "html_table",
    "inline_figures",
    "number_text",
    "page_template",
    "percent_text",
    "with_interval",
    "write_files",
]


def number_text(value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    return f"{value:.2f}" if isinstance(value, float) else str(value)


def percent_text(value: float | None) -> str:
    return number_text(None if value is None else value * 100)


def with_interval(
    value: float | None,
    interval: Interval | None,
    metric: str = "",
    report: EvalReport | None = None,
) -> str:
    """A value and its interval, each printed as the metric's tables print it."""
    text = format_value(metric, value, report) if metric else number_text(value)
    bounds = None if interval is None else interval.bounds
    if bounds is not None:
        if metric:
            low, high = (format_value(metric, v, report) for v in bounds)
        else:
            low, high = f"{bounds[0]:.2f}", f"{bounds[1]:.2f}"
        text += f" [{low}, {high}]"
    return text


def html_table(
    caption: str,
    headers: list[str],
    rows: Iterable[list[str]],
    published: Iterable[list[str]] = (),
    *,
    text: bool = False,
) -> dict[str, Any]:
    """A table for the template; `text` tables are left-aligned (paths, reasons)."""
    cells = [{"cells": r, "published": False} for r in rows]
    cells += [{"cells": r, "published": True} for r in published]
    return {"caption": caption, "headers": headers, "rows": cells, "text": text}


#: Columns of the tables that are not metrics of the registry.
_OTHER_COLUMNS = (
    (
        "n",
        "the number of values averaged: problems, files or traits; where some values are "
        "undefined (a problem without its file has no exact statistics), 'k of n' when every "
        "column was averaged over the same k, else each column's own count in parentheses",
        "count",
        "",
        "genotex",
    ),
    (
        "[low, high]",
        "95% percentile-bootstrap interval of the average (problems, files or "
        "traits resampled with replacement, seed recorded in the provenance)",
        "as the value",
        "",
        "genotex",
    ),
    (
        "Succ., Tk.(K), Cost($), Time(s)",
        "the agent's runs that ended, tokens in thousands, "
        "dollars and seconds per problem, from the harness's runtime block",
        "as printed",
        "lower is better except Succ.",
        "paper",
    ),
    (
        "DF, DS",
        "dataset filtering (is a cohort usable: P, R, F1, Acc per trait) and dataset "
        "selection (the cohort or pair chosen, Acc per problem)",
        "0 to 100",
        "higher",
        "paper",
    ),
    (
        "Gene, Trait, Linked",
        "the preprocessing data kinds of the paper's Table 5: gene "
        "expression tables, clinical (trait) tables, and the two linked",
        "",
        "",
        "paper",
    ),
)


def glossary_table() -> dict:
    """What each column of the page means: scale, which way is better, and whose definition."""
    rows = [
        [
            spec.label,
            spec.description,
            spec.scale_text,
            spec.direction,
            spec.origin,
        ]
        for spec in METRICS.values()
    ]
    rows += [list(row) for row in _OTHER_COLUMNS]
    return html_table(
        "Glossary: every column of this page ('paper': as the published evaluator "
        "defines it; 'genotex': added by genotex)",
        ["column", "what it is", "scale", "better", "defined by"],
        rows,
        text=True,
    )


def page_template(name: str) -> jinja2.Template:
    """The named page template, autoescaped, with the shared macros."""
    from jinja2 import Environment, PackageLoader

    env = Environment(
        # autoescape=True: select_autoescape() goes by the name and does not escape a `.j2` file
        loader=PackageLoader("genotex.evaluation", "templates"),
        autoescape=True,
    )
    return env.get_template(name)


def inline_figures(figures: Mapping[str, RenderedFigure]) -> dict[str, dict]:
    return {
        name: {
            "png": base64.b64encode(figure.png).decode(),
            "caption": figure.caption,
            "files": sorted(figure.files),
        }
        for name, figure in figures.items()
    }


def write_files(folder: Path, files: Mapping[tuple[str, ...], bytes]) -> None:
    """Write every file into a staging folder, then move all into place.

    A full disk leaves the earlier report (or nothing), never figures without their page.
    """
    targets = {parts: gate_write(output_path(folder, *parts)) for parts in files}  # checked first
    with tempfile.TemporaryDirectory(prefix=".report-", dir=folder) as staging:
        staged = {}
        for parts, data in files.items():
            with atomic_output(Path(staging, *parts)) as tmp:
                tmp.write_bytes(data)
            staged[parts] = Path(staging, *parts)
        output_path(folder, "figures").mkdir(exist_ok=True)
        for parts, path in staged.items():  # renames within one file system: no space needed
            os.replace(path, targets[parts])


def figure_files(figures: Mapping[str, RenderedFigure]) -> dict[tuple[str, ...], bytes]:
    return {
        ("figures", f"{name}.{fmt}"): data
        for name, figure in figures.items()
        for fmt, data in figure.files.items()
    }

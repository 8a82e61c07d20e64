"""`genotex report A.json B.json ...`: one page comparing several saved runs.

The runs' headline averages with their intervals, side by side in a table
(averages as rows, runs as columns) and in the `runs_compared` figure; a
metric a run lacks reads "n/a". Runs scored against different references are
refused, as `compare` refuses them.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..core import prepare_output_folder
from ._compare import check_same_reference
from ._figure_files import (
    DEFAULT_DPI,
    FIGURE_FORMATS,
    RUNS_CAPTION,
    RenderedFigure,
    render_figure,
)
from ._figures import headline_averages, runs_compared
from ._html_parts import (
    figure_files,
    glossary_table,
    html_table,
    inline_figures,
    page_template,
    with_interval,
    write_files,
)
from ._report import EvalReport

__all__ = ["render_runs_html", "write_runs_report"]


def _runs_table(reports: Sequence[EvalReport], labels: Sequence[str]) -> dict:
    """Each headline average (a row) of each run (a column), with its interval; n/a if none."""
    values: dict[str, dict[int, tuple[float, Any]]] = {}
    for k, report in enumerate(reports):
        for label, _, value, interval in headline_averages(report):
            values.setdefault(label, {})[k] = (value, interval)
    rows = [
        [label, *(with_interval(*cells[k]) if k in cells else "n/a" for k in range(len(reports)))]
        for label, cells in values.items()
    ]
    rows.append(["problems scored", *(str(len(r.analysis or ())) for r in reports)])
    caption = "Headline averages per run, with 95% intervals where the run computed them"
    return html_table(caption, ["average", *labels], rows)


def render_runs_html(
    reports: Sequence[EvalReport], labels: Sequence[str], figure: RenderedFigure
) -> str:
    """The page comparing several saved runs: the runs figure, the headline table, the glossary."""
    return page_template("runs.html.j2").render(
        labels=labels,
        table=_runs_table(reports, labels),
        figures=inline_figures({figure.name: figure}),
        glossary=glossary_table(),
        provenance=[
            (label, report.run.get("prediction"), report.run.get("genotex_version"))
            for label, report in zip(labels, reports, strict=True)
        ],
    )


def write_runs_report(
    reports: Sequence[EvalReport],
    folder: str | Path,
    *,
    labels: Sequence[str] | None = None,
    formats: Sequence[str] = FIGURE_FORMATS,
    dpi: int = DEFAULT_DPI,
) -> Path:
    """Write a page comparing several saved runs (figure `runs_compared`); return its path.

    `labels` name the runs (default: the label each run recorded, else "run 1", "run 2"...).
    Runs scored against different reference trees or task_info are refused
    (`ReportError`), as `compare` refuses them: their numbers are not comparable.
    """
    if labels is None:
        labels = [r.run.get("label") or f"run {k}" for k, r in enumerate(reports, 1)]
        labels = [
            label if labels.count(label) == 1 else f"{label} ({k})"
            for k, label in enumerate(labels, 1)
        ]
    if len(labels) != len(reports) or len(set(labels)) != len(labels):
        raise ValueError(f"{len(reports)} runs need {len(reports)} different labels: {labels}")
    check_same_reference(dict(zip(labels, reports, strict=True)))
    folder = prepare_output_folder(folder, what="report folder")
    figure = render_figure(
        "runs_compared", runs_compared(reports, labels), RUNS_CAPTION, formats, dpi
    )
    files: dict[tuple[str, ...], bytes] = {
        ("index.html",): render_runs_html(reports, labels, figure).encode("utf-8")
    }
    files.update(figure_files({figure.name: figure}))
    write_files(folder, files)
    return folder / "index.html"

"""The report's figures as files: which figures a report has, their captions, their bytes.

Saved as PNG at a chosen dpi (300 by default), SVG whose text stays text, and
PDF with embedded TrueType fonts; fixed metadata and SVG hash salt, so that the
same report gives the same bytes in every format.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core import atomic_output
from ._diagnosis._figure import error_class_histogram
from ._diagnosis._model import Diagnosis, DiagnosisError
from ._figures import (
    csc_per_trait,
    headline_averages,
    problem_distributions,
    scores_per_task,
    trait_category_heatmap,
)
from ._report import EvalReport

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = [
    "DEFAULT_DPI",
    "FIGURES",
    "FIGURE_FORMATS",
    "RUNS_CAPTION",
    "FigureSpec",
    "RenderedFigure",
    "figure_bytes",
    "figure_format_of",
    "make_figures",
    "render_figure",
    "write_diagnosis_figure",
]

#: The formats a figure can be saved in; the report writes all three unless told otherwise.
FIGURE_FORMATS = ("png", "svg", "pdf")
#: PNG resolution: what journals ask of line art and charts.
DEFAULT_DPI = 300

_METADATA = {
    "png": {"Software": None},
    "svg": {"Date": None, "Creator": None},
    "pdf": {"CreationDate": None, "ModDate": None, "Creator": None, "Producer": None},
}


@dataclass(frozen=True)
class FigureSpec:
    """A figure of the single-run report: how to draw it, its caption, and when it applies."""

    draw: Callable[[EvalReport], Any]
    caption: str
    applies: Callable[[EvalReport], bool]


FIGURES: dict[str, FigureSpec] = {
    "scores_per_task": FigureSpec(
        scores_per_task,
        "Headline average of each task, one panel per scale (F1 and accuracy 0–100; CSC and "
        "the paper's approximate AUROC 0–1), with 95% percentile-bootstrap intervals where "
        "computed; n/a: the run has no value.",
        lambda r: bool(headline_averages(r)),
    ),
    "trait_category_f1": FigureSpec(
        trait_category_heatmap,
        "Analysis F1 (0–100) per trait and problem category, averaged as in the tables; "
        "blank: no such problem; grey: every problem of the cell is missing.",
        lambda r: bool(r.analysis),
    ),
    "problem_distributions": FigureSpec(
        problem_distributions,
        "Distribution of per-problem AUROC (0–1) and F1 (0–100); problems whose result "
        "file is missing are counted in the panel, not drawn.",
        lambda r: bool(r.analysis),
    ),
    "csc_per_trait": FigureSpec(
        csc_per_trait,
        "Average CSC of the preprocessed tables per trait and data kind (Gene, Trait, Linked, "
        "as in the paper's Table 5); n/a: every file of that trait is missing.",
        lambda r: any((r.preprocessing or {}).values()),
    ),
}

FIGURES["error_classes"] = FigureSpec(
    lambda r: error_class_histogram(r.diagnosis),  # type: ignore[arg-type]  # applies: not None
    "How many findings of each error class the diagnosis made, coloured by the stage the "
    "class belongs to (genotex diagnose; classes not found are left out).",
    lambda r: r.diagnosis is not None,
)

RUNS_CAPTION = (
    "Headline averages of each run side by side, one panel per scale, with 95% "
    "percentile-bootstrap intervals where the run computed them; n/a: the run has no value."
)


@dataclass(frozen=True)
class RenderedFigure:
    """One figure's bytes in each format asked for, its PNG for the page, and its caption."""

    name: str
    caption: str
    png: bytes
    files: Mapping[str, bytes]


def figure_bytes(fig: Figure, fmt: str, *, dpi: int = DEFAULT_DPI) -> bytes:
    """A figure as PNG, SVG or PDF bytes, the same bytes for the same figure.

    SVG keeps its text as `<text>` elements and PDF embeds TrueType fonts, so
    labels stay editable and searchable; PNG records `dpi` in its header.
    """
    import matplotlib

    if fmt not in FIGURE_FORMATS:
        raise ValueError(f"unknown figure format {fmt!r}; known: {', '.join(FIGURE_FORMATS)}")
    buffer = io.BytesIO()
    with matplotlib.rc_context(
        {"svg.hashsalt": "genotex", "svg.fonttype": "none", "pdf.fonttype": 42}
    ):
        fig.savefig(buffer, format=fmt, dpi=dpi, metadata=_METADATA[fmt])
    return buffer.getvalue()


def render_figure(
    name: str,
    fig: Figure,
    caption: str,
    formats: Sequence[str] = FIGURE_FORMATS,
    dpi: int = DEFAULT_DPI,
) -> RenderedFigure:
    """Save one figure in each format (PNG always, for the page)."""
    png = figure_bytes(fig, "png", dpi=dpi)
    files = {fmt: png if fmt == "png" else figure_bytes(fig, fmt, dpi=dpi) for fmt in formats}
    return RenderedFigure(name, caption, png, files)


def make_figures(
    report: EvalReport, *, formats: Sequence[str] = FIGURE_FORMATS, dpi: int = DEFAULT_DPI
) -> dict[str, RenderedFigure]:
    """Every figure the report has data for, rendered in `formats` at `dpi`."""
    return {
        name: render_figure(name, spec.draw(report), spec.caption, formats, dpi)
        for name, spec in FIGURES.items()
        if spec.applies(report)
    }


def figure_format_of(path: str | Path) -> str:
    """The figure format a file name asks for ("png", "svg" or "pdf"), from its suffix;
    `DiagnosisError` naming the file for any other.
    """
    fmt = Path(path).suffix.lstrip(".").lower()
    if fmt not in FIGURE_FORMATS:
        known = ", ".join("." + f for f in FIGURE_FORMATS)
        raise DiagnosisError(f"a figure file ends in {known}", path=path)
    return fmt


def write_diagnosis_figure(
    diagnosis: Diagnosis, path: str | Path, *, dpi: int = DEFAULT_DPI
) -> Path:
    """The diagnosis' error-class histogram as PNG, SVG or PDF (from the file's suffix),
    written atomically.
    """
    path = Path(path)
    data = figure_bytes(error_class_histogram(diagnosis), figure_format_of(path), dpi=dpi)
    with atomic_output(path) as tmp:
        tmp.write_bytes(data)
    return path

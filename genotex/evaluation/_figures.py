"""The report's figures: one function per figure, data in, a matplotlib `Figure` out.

Agg backend, the object API (no pyplot state), and fixed metadata and SVG
hash salt, so that the same report gives the same PNG and SVG bytes.
"""

from __future__ import annotations

import io
import math
from collections.abc import Sequence

from ..core import CATEGORIES
from ._report import EvalReport, group_key
from ._scores import OVERALL

__all__ = ["FIGURES", "figure_bytes", "make_figures"]

_PNG_METADATA = {"Software": None}
_SVG_METADATA = {"Date": None, "Creator": None}


def _figure(width: float, height: float):
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), dpi=100, layout="constrained")


def scores_per_task(report: EvalReport):
    """Headline average of each task with its bootstrap interval (when the report has one)."""
    bars: list[tuple[str, float, tuple[float, float] | None]] = []

    def add(label: str, value: float, key: str, metric: str, scale: float) -> None:
        interval = report.interval(key, metric)
        bounds = None
        if interval is not None and interval.defined:
            bounds = (interval.low / scale, interval.high / scale)
        bars.append((label, value / scale, bounds))

    if report.filtering is not None:
        add("DF F1", report.filtering_average().get("f1", math.nan), "filtering", "f1", 100)
        add(
            "DS accuracy",
            report.selection_average().get("accuracy", math.nan),
            "selection",
            "accuracy",
            100,
        )
    for subtask in report.preprocessing or {}:
        value = report.preprocessing_average(subtask).get(
            "composite_similarity_correlation", math.nan
        )
        add(
            f"CSC {subtask}",
            value,
            group_key("preprocessing", subtask),
            "composite_similarity_correlation",
            1,
        )
    overall = report.analysis_by_category().get(OVERALL, {})
    key = group_key("analysis", OVERALL)
    if overall:
        add("Analysis F1", overall["f1"], key, "f1", 100)
        add("Analysis AUROC", overall["auroc"], key, "auroc", 1)
    fig = _figure(7, 3.2)
    ax = fig.add_subplot()
    positions = range(len(bars))
    values = [0.0 if math.isnan(v) else v for _, v, _ in bars]
    ax.bar(positions, values, color="#4878a8")
    for x, (_, value, bounds) in zip(positions, bars, strict=True):
        if bounds is not None:
            ax.errorbar(
                x, value, yerr=[[value - bounds[0]], [bounds[1] - value]], color="black", capsize=4
            )
    ax.set_xticks(list(positions), [label for label, _, _ in bars], rotation=20, ha="right")
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("score (0-1; F1 and accuracy / 100)")
    ax.set_title("Scores per task (bars: 95% bootstrap interval where computed)")
    return fig


def trait_category_heatmap(report: EvalReport, metric: str = "f1"):
    """Per trait and category, the average of one analysis metric."""
    import numpy as np

    traits = sorted({s.problem.trait for s in report.analysis or ()})
    grid = np.full((len(traits), len(CATEGORIES)), np.nan)
    for i, trait in enumerate(traits):
        for j, category in enumerate(CATEGORIES):
            values = [
                s.value(metric)
                for s in report.analysis or ()
                if s.problem.trait == trait and s.category == category
            ]
            values = [v for v in values if not math.isnan(v)]
            if values:
                grid[i, j] = float(np.mean(values))
    fig = _figure(6.5, max(2.5, 0.35 * len(traits) + 1.5))
    ax = fig.add_subplot()
    image = ax.imshow(
        grid, aspect="auto", cmap="viridis", vmin=0, vmax=100 if metric == "f1" else 1
    )
    ax.set_xticks(range(len(CATEGORIES)), [c.replace(" ", "\n", 1) for c in CATEGORIES])
    ax.set_yticks(range(len(traits)), traits)
    for i in range(len(traits)):
        for j in range(len(CATEGORIES)):
            if not math.isnan(grid[i, j]):
                ax.text(
                    j, i, f"{grid[i, j]:.1f}", ha="center", va="center", color="white", fontsize=8
                )
    fig.colorbar(image, ax=ax, label=metric.upper())
    ax.set_title(f"{metric.upper()} per trait and category (blank: no problem)")
    return fig


def _histogram(ax, values: Sequence[float], title: str, upper: float) -> None:
    kept = [v for v in values if not math.isnan(v)]
    ax.hist(kept, bins=20, range=(0, upper), color="#6a9f58")
    ax.set_title(f"{title} (n = {len(kept)})")
    ax.set_ylabel("problems")


def problem_distributions(report: EvalReport):
    """Per-problem AUROC and F1, as histograms."""
    fig = _figure(7, 3)
    left, right = fig.subplots(1, 2)
    scores = report.analysis or ()
    _histogram(left, [s.auroc for s in scores], "AUROC per problem", 1.0)
    _histogram(right, [s.f1 for s in scores], "F1 per problem", 100.0)
    return fig


def csc_per_trait(report: EvalReport):
    """Average CSC per trait, one bar group per preprocessing subtask."""
    subtasks = [s for s, scores in (report.preprocessing or {}).items() if scores]
    traits = sorted({f.trait for s in subtasks for f in report.preprocessing[s]})
    fig = _figure(7, max(2.5, 0.3 * len(traits) + 1.5))
    ax = fig.add_subplot()
    height = 0.8 / max(1, len(subtasks))
    for k, subtask in enumerate(subtasks):
        values = []
        for trait in traits:
            rows = [
                f.composite_similarity_correlation
                for f in report.preprocessing[subtask]
                if f.trait == trait
            ]
            values.append(sum(rows) / len(rows) if rows else 0.0)
        ax.barh([i + k * height for i in range(len(traits))], values, height=height, label=subtask)
    ax.set_yticks([i + 0.4 - height / 2 for i in range(len(traits))], traits)
    ax.set_xlim(0, 1)
    ax.set_xlabel("CSC")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0))
    ax.set_title("Preprocessing CSC per trait")
    return fig


#: name -> (function, alt text): every figure of the report.
FIGURES = {
    "scores_per_task": (
        scores_per_task,
        "Bar chart of each task's headline score with its interval",
    ),
    "trait_category_f1": (trait_category_heatmap, "Heatmap of analysis F1 per trait and category"),
    "problem_distributions": (problem_distributions, "Histograms of per-problem AUROC and F1"),
    "csc_per_trait": (csc_per_trait, "Bars of preprocessing CSC per trait and subtask"),
}


def figure_bytes(fig, fmt: str) -> bytes:
    """A figure as PNG or SVG bytes, the same bytes for the same figure."""
    import matplotlib

    buffer = io.BytesIO()
    with matplotlib.rc_context({"svg.hashsalt": "genotex", "svg.fonttype": "path"}):
        metadata = _PNG_METADATA if fmt == "png" else _SVG_METADATA
        fig.savefig(buffer, format=fmt, metadata=metadata)
    return buffer.getvalue()


def make_figures(report: EvalReport) -> dict[str, tuple[bytes, bytes, str]]:
    """name -> (PNG, SVG, alt text) of each figure the report has data for."""
    out = {}
    for name, (function, alt) in FIGURES.items():
        if name in ("trait_category_f1", "problem_distributions") and not report.analysis:
            continue
        if name == "csc_per_trait" and not any((report.preprocessing or {}).values()):
            continue
        fig = function(report)
        out[name] = (figure_bytes(fig, "png"), figure_bytes(fig, "svg"), alt)
    return out

"""The report's figures: one function per figure, data in, a matplotlib `Figure` out.

Made for a paper: no title inside the image (the report and the paper carry the
caption), one scale per panel (0-100 numbers and 0-1 numbers never share an
axis), trait names as a reader writes them, and a missing value drawn as
missing ("n/a", grey), never as an empty bar or a 0 a reader would take for a
real score. Agg backend and the object API (no pyplot state); saving them is
`_figure_files`' job.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..core import CATEGORIES, get_metric, trait_label
from ._preprocessing_task import SUBTASK_LABELS
from ._report import EvalReport, group_key
from ._scores import OVERALL

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = [
    "csc_per_trait",
    "headline_averages",
    "problem_distributions",
    "runs_compared",
    "scores_per_task",
    "trait_category_heatmap",
]

_BAR = "#4878a8"
_MISSING = "#9aa3ad"
_RUN_COLOURS = ("#4878a8", "#e1812c", "#3a923a", "#c03d3e", "#9372b2", "#845b53", "#d684bd")
_SCALES = {"0-100": "0 to 100", "0-1": "0 to 1"}  # the two scales a bar panel can have
#: (name or None, colour, {metric: (value, interval bounds or None)}): one run's bars
_Series = tuple["str | None", str, "Mapping[str, tuple[float, tuple[float, float] | None]]"]


def _figure(width: float, height: float) -> Figure:
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), layout="constrained")


def _missing(value: float | None) -> bool:
    return value is None or math.isnan(value)


_NA_STYLE: dict[str, Any] = {"color": _MISSING, "fontsize": 8, "fontstyle": "italic"}


def _mark_missing(ax: Axes, x: float, *, horizontal: bool = False) -> None:
    """Write "n/a" where a bar would stand: a missing value is not a zero."""
    if horizontal:
        ax.text(0.01, x, "n/a", va="center", transform=ax.get_yaxis_transform(), **_NA_STYLE)
    else:
        ax.text(x, 0.01, "n/a", ha="center", transform=ax.get_xaxis_transform(), **_NA_STYLE)


def _grouped_bars(
    ax: Axes, metrics: Sequence[str], series: Sequence[_Series], *, scale: str
) -> None:
    """A group of bars per metric, a bar per series, intervals as whiskers, on one scale's axis.

    `series` are (name or None, colour, {metric: (value, (low, high) or None)}); a
    metric a series lacks, or whose value is NaN, reads "n/a" where its bar would be.
    """
    upper = 100.0 if scale == "0-100" else 1.0
    width = 0.8 / max(1, len(series))
    lowest = 0.0
    for k, (name, colour, values) in enumerate(series):
        for i, metric in enumerate(metrics):
            x = i - 0.4 + width * (k + 0.5)
            value, bounds = values.get(metric, (math.nan, None))
            if _missing(value):
                _mark_missing(ax, x)
                continue
            ax.bar(x, value, width=width * 0.92, color=colour, label=name)
            name = None  # in the legend once
            lowest = min(lowest, value)
            if bounds is not None:
                error = [[value - bounds[0]], [bounds[1] - value]]
                ax.errorbar(x, value, yerr=error, color="black", capsize=3, linewidth=0.9)
                lowest = min(lowest, bounds[0])
    ax.set_xticks(range(len(metrics)), metrics, rotation=20, ha="right")
    ax.set_xlim(-0.6, len(metrics) - 0.4)
    ax.set_ylim(lowest * 1.05, upper * 1.05)
    ax.set_ylabel(f"score ({_SCALES[scale]})")


def headline_averages(report: EvalReport) -> list[tuple[str, str, float, Any]]:
    """(label, scale, value, interval) of each headline average the report holds.

    The figures, the report's cards and the runs table all read this one list.
    """
    rows: list[tuple[str, str, float, Any]] = []
    if report.filtering is not None:
        rows.append(
            (
                "DF F1",
                "0-100",
                report.filtering_average().get("f1", math.nan),
                report.interval("filtering", "f1"),
            )
        )
        rows.append(
            (
                "DS accuracy",
                "0-100",
                report.selection_average().get("accuracy", math.nan),
                report.interval("selection", "accuracy"),
            )
        )
    csc = "composite_similarity_correlation"
    for subtask in report.preprocessing or {}:
        rows.append(
            (
                f"CSC {SUBTASK_LABELS.get(subtask, subtask)}",
                "0-1",
                report.preprocessing_average(subtask).get(csc, math.nan),
                report.interval(group_key("preprocessing", subtask), csc),
            )
        )
    overall = report.analysis_by_category().get(OVERALL, {})
    if overall:
        key = group_key("analysis", OVERALL)
        rows.append(("Analysis F1", "0-100", overall["f1"], report.interval(key, "f1")))
        rows.append(("Analysis AUROC", "0-1", overall["auroc"], report.interval(key, "auroc")))
    return rows


def _panels(
    rows_by_scale: Mapping[str, Sequence[Any]], width: float = 7.0, height: float = 3.0
) -> tuple[Figure, dict[str, Axes]]:
    """A figure with one panel per scale present, widths proportional to their bar counts."""
    scales = [s for s in ("0-100", "0-1") if rows_by_scale.get(s)]
    fig = _figure(width, height)
    ratios = [max(2, len(rows_by_scale[s])) for s in scales]
    axes = fig.subplots(1, len(scales), width_ratios=ratios, squeeze=False)[0]
    return fig, dict(zip(scales, axes, strict=True))


def _by_scale(reports: Sequence[EvalReport]) -> tuple[dict[str, list[str]], list[dict]]:
    """The headline metrics per scale (in first-seen order), and each report's values."""
    scales: dict[str, list[str]] = {}
    values = []
    for report in reports:
        own = {}
        for label, scale, value, interval in headline_averages(report):
            if label not in scales.setdefault(scale, []):
                scales[scale].append(label)
            own[label] = (value, None if interval is None else interval.bounds)
        values.append(own)
    return scales, values


def scores_per_task(report: EvalReport) -> Figure:
    """Headline average of each task with its 95% bootstrap interval, one panel per scale."""
    scales, (values,) = _by_scale([report])
    fig, axes = _panels(scales)
    for scale, ax in axes.items():
        _grouped_bars(ax, scales[scale], [(None, _BAR, values)], scale=scale)
    return fig


def runs_compared(reports: Sequence[EvalReport], labels: Sequence[str]) -> Figure:
    """Several runs side by side: each headline average with its interval, one panel per scale.

    A metric one run lacks (a task it was not scored on) is drawn as "n/a" for that run.
    """
    scales, values = _by_scale(reports)
    fig, axes = _panels(scales, height=3.2)
    colours = [_RUN_COLOURS[k % len(_RUN_COLOURS)] for k in range(len(reports))]
    handles: dict[str, Any] = {}
    for scale, ax in axes.items():
        _grouped_bars(
            ax, scales[scale], list(zip(labels, colours, values, strict=True)), scale=scale
        )
        for handle, name in zip(*ax.get_legend_handles_labels(), strict=True):
            handles.setdefault(name, handle)  # a run absent from one panel is in the other
    ordered = [name for name in labels if name in handles]
    fig.legend(
        [handles[n] for n in ordered],
        ordered,
        loc="outside upper center",
        ncols=min(4, len(ordered)),
        fontsize=8,
    )
    return fig


def trait_category_heatmap(report: EvalReport, metric: str = "f1") -> Figure:
    """Per trait and category, the average of one analysis metric (as the tables average it).

    A cell without any problem is blank; a cell whose every problem is missing
    reads "missing" on grey; a cell with some missing problems shows how many.
    """
    import numpy as np

    scores = report.analysis or ()
    traits = sorted({s.problem.trait for s in scores})
    grid = np.full((len(traits), len(CATEGORIES)), np.nan)
    notes: dict[tuple[int, int], str] = {}
    for i, trait in enumerate(traits):
        for j, category in enumerate(CATEGORIES):
            cell = [s for s in scores if s.problem.trait == trait and s.category == category]
            if not cell:
                continue
            missing = sum(s.status == "missing" for s in cell)
            values = [v for s in cell if not math.isnan(v := s.value(metric))]
            if missing == len(cell):
                notes[(i, j)] = "missing"
            elif values:
                grid[i, j] = float(np.mean(values))
                if missing:
                    notes[(i, j)] = f"{missing} missing"
    spec = get_metric(metric)
    upper = 100 if spec.scale == "0-100" else 1
    fig = _figure(6.5, max(2.5, 0.32 * len(traits) + 1.3))
    ax = fig.add_subplot()
    import matplotlib

    cmap = matplotlib.colormaps["viridis"].with_extremes(bad="#ffffff")
    image = ax.imshow(grid, aspect="auto", cmap=cmap, vmin=0, vmax=upper)
    ax.set_xticks(range(len(CATEGORIES)), [c.replace(" ", "\n", 1) for c in CATEGORIES])
    ax.set_yticks(range(len(traits)), [trait_label(t) for t in traits])
    for i in range(len(traits)):
        for j in range(len(CATEGORIES)):
            note = notes.get((i, j))
            if note == "missing":
                ax.add_patch(
                    matplotlib.patches.Rectangle(
                        (j - 0.5, i - 0.5), 1, 1, facecolor="#e9ecef", edgecolor="none"
                    )
                )
                ax.text(j, i, "missing", ha="center", va="center", color="#5a6473", fontsize=7)
            elif not math.isnan(grid[i, j]):
                value = grid[i, j]
                text = f"{value:.1f}" if upper == 100 else f"{value:.2f}"
                if note:
                    text += f"\n({note})"
                dark = value < 0.6 * upper
                colour = "white" if dark else "black"
                ax.text(j, i, text, ha="center", va="center", color=colour, fontsize=7)
    fig.colorbar(image, ax=ax, label=f"{spec.label} ({spec.scale_text})")
    return fig


def _histogram(ax: Axes, values: Sequence[float], label: str, upper: float, missing: int) -> None:
    kept = [v for v in values if not math.isnan(v)]
    ax.hist(kept, bins=20, range=(0, upper), color="#6a9f58")
    ax.set_xlabel(label)
    ax.set_ylabel("problems")
    text = f"n = {len(kept)}"
    if missing:
        text += f"\n{missing} missing, not drawn"
    ax.text(0.98, 0.97, text, transform=ax.transAxes, ha="right", va="top", fontsize=8)


def problem_distributions(report: EvalReport) -> Figure:
    """Per-problem AUROC (0-1) and F1 (0-100) as histograms; missing problems counted apart."""
    fig = _figure(7, 2.8)
    left, right = fig.subplots(1, 2)
    scores = [s for s in report.analysis or () if s.status != "missing"]
    missing = len(report.analysis or ()) - len(scores)
    _histogram(left, [s.auroc for s in scores], "AUROC per problem (0–1)", 1.0, missing)
    _histogram(right, [s.f1 for s in scores], "F1 per problem (0–100)", 100.0, missing)
    return fig


def csc_per_trait(report: EvalReport) -> Figure:
    """Average CSC per trait, a bar per data kind; "n/a" where every file of one is missing."""
    preprocessing = report.preprocessing or {}
    subtasks = [s for s, scores in preprocessing.items() if scores]
    files = {s: preprocessing[s] or () for s in subtasks}
    traits = sorted({f.trait for s in subtasks for f in files[s]})
    fig = _figure(7, max(2.5, 0.3 * len(traits) * max(1, len(subtasks)) / 2 + 1.3))
    ax = fig.add_subplot()
    height = 0.8 / max(1, len(subtasks))
    lowest = 0.0
    for k, subtask in enumerate(subtasks):
        colour = _RUN_COLOURS[k % len(_RUN_COLOURS)]
        named = False  # the subtask is named in the legend by its first bar drawn
        for i, trait in enumerate(traits):
            rows = [f for f in files[subtask] if f.trait == trait]
            y = i - 0.4 + height * (k + 0.5)
            if not rows:
                continue  # the reference has no such file: nothing to draw
            if all(f.status == "missing" for f in rows):
                _mark_missing(ax, y, horizontal=True)
                continue
            value = sum(f.composite_similarity_correlation for f in rows) / len(rows)
            lowest = min(lowest, value)
            label = None if named else SUBTASK_LABELS.get(subtask, subtask)
            named = True
            ax.barh(y, value, height=height * 0.92, color=colour, label=label)
    ax.set_yticks(range(len(traits)), [trait_label(t) for t in traits])
    ax.set_ylim(len(traits) - 0.5, -0.5)  # first trait on top; rows of only "n/a" kept
    ax.set_xlim(lowest * 1.05, 1.0)
    ax.set_xlabel(f"CSC ({get_metric('composite_similarity_correlation').scale_text})")
    if ax.get_legend_handles_labels()[0]:  # no bar drawn (every file missing): no legend
        ax.legend(
            loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, title="data", title_fontsize=8
        )
    return fig

"""The figures of a problem's gene table: a volcano of the marginal statistics, with the
model's genes marked, and the selection frequency of the most often selected genes.

Both take `GeneAnalysis.to_frame()`'s table and return a matplotlib `Figure`
(no pyplot state: safe in scripts and notebooks alike), in the report's style: a title
when given (`GeneAnalysis.plot` names the trait and the cohort), labelled axes, the
selected genes in the report's blue, the others grey.
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

__all__ = ["frequency_plot", "volcano_plot"]

_SELECTED = "#4878a8"
_OTHER = "#9aa3ad"
_LINE = "#c03d3e"


def _significance_line(table: pd.DataFrame, fdr: float) -> float | None:
    """The largest p-value whose BH FDR is at most `fdr` (None: no gene passes)."""
    passing = table.loc[table["fdr"] <= fdr, "p_value"]
    return None if passing.empty else float(passing.max())


def _labelled(data: pd.DataFrame, selected: np.ndarray, labels: int) -> pd.DataFrame:
    """The genes to name, in the order they are given a place: the model's genes first, by
    rank (the answer), then the most significant marginally (a strong marker the Lasso left
    out, its signal carried by another gene).
    """
    by_rank = list(data[selected].sort_values("rank").index)
    by_p = [g for g in data.sort_values(["p_value", "rank"]).index if g not in set(by_rank)]
    return data.loc[(by_rank + by_p)[:labels]]


#: Where a label may sit beside its point (points right and up, then around it), in order.
_OFFSETS = ((4, 3), (4, -9), (-4, 3), (-4, -9), (0, 9), (0, -14), (10, 12), (-10, 12),
            (10, -18), (-10, -18), (14, 0), (-14, 0), (0, 18), (0, -24))  # fmt: skip


def _place_labels(fig: Figure, ax: Any, named: pd.DataFrame, heights: pd.Series) -> int:
    """Name each gene beside its point where its text overlaps no other label and stays in
    the axes (the first free place of `_OFFSETS`), else leave it out; how many were placed.

    The figure is laid out first and then kept as it is, so that the measured places hold.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    FigureCanvasAgg(fig)
    fig.canvas.draw()
    fig.set_layout_engine("none")
    renderer = fig.canvas.get_renderer()  # type: ignore[attr-defined]
    inside = ax.get_window_extent(renderer)
    placed: list[Any] = []
    for gene, row in named.iterrows():
        point = (float(row["effect"]), float(heights.loc[gene]))  # type: ignore[call-overload]
        for dx, dy in _OFFSETS:
            text = ax.annotate(str(gene), point, xytext=(dx, dy), textcoords="offset points",
                               fontsize=7, ha="left" if dx >= 0 else "right")  # fmt: skip
            box = text.get_window_extent(renderer).expanded(1.05, 1.1)
            fits = inside.x0 <= box.x0 and box.x1 <= inside.x1
            fits = fits and inside.y0 <= box.y0 and box.y1 <= inside.y1
            if fits and not any(box.overlaps(other) for other in placed):
                placed.append(box)
                break
            text.remove()
    return len(placed)


def volcano_plot(
    table: pd.DataFrame,
    *,
    fdr: float = 0.05,
    labels: int = 12,
    adjusted_for: Sequence[str] = (),
    title: str | None = None,
    log2: bool = False,
    effect_label: str | None = None,
) -> Figure:
    """Each gene's marginal `effect` against -log10 `p_value`; the model's genes marked; a
    dashed line where the BH FDR crosses `fdr`.

    Up to `labels` genes are named, the model's first by rank, then the most significant
    marginally, each where its text overlaps no other label and stays inside the axes (a
    gene with no free place is left unnamed; the model's genes are placed first). With
    `log2` (the genes are log2-scaled) the effect is named a log2 fold change; `effect_label`
    names it otherwise (a coefficient other than a two-group trait's: an interaction, a
    slope, a contrast; `GeneAnalysis.plot` passes it).
    `adjusted_for` names the covariates the marginal effect was adjusted for
    (`GeneAnalysis.plot` passes its condition and covariates), for the axis' label, which
    is wrapped to the figure's width; `title` heads it (`GeneAnalysis.plot` names the
    trait, the condition and the cohort). The layout is fixed when the figure is made, so
    a plain `fig.savefig(path)` saves it whole.
    """
    from matplotlib.figure import Figure

    data = table[np.isfinite(table["p_value"]) & np.isfinite(table["effect"])]
    heights = -np.log10(np.clip(data["p_value"].astype(float), 1e-300, 1.0))
    height = heights.to_numpy(dtype=float)
    selected = data["selected"].to_numpy(dtype=bool)
    fig = Figure(figsize=(5.6, 4.2), layout="constrained")
    ax = fig.add_subplot()
    effect = data["effect"].to_numpy(dtype=float)
    ax.scatter(effect[~selected], height[~selected], s=6, color=_OTHER, label="not selected",
               linewidths=0, rasterized=len(data) > 5000)  # fmt: skip
    ax.scatter(effect[selected], height[selected], s=18, color=_SELECTED,
               label="selected by the model")  # fmt: skip
    line = _significance_line(data, fdr)
    if line is not None:
        ax.axhline(-np.log10(line), color=_LINE, linestyle="--", linewidth=0.8,
                   label=f"BH FDR {fdr:g}")  # fmt: skip
    label = ("marginal effect: log2 fold change (case - control mean of log2 values)" if log2
             else "marginal effect: case - control mean, in expression units")  # fmt: skip
    label = effect_label or label
    if len(adjusted_for):  # on a line of its own (wrapped): a long list never runs off the page
        label += "\n" + textwrap.fill(f"adjusted for {', '.join(adjusted_for)}", 70)
    ax.set_xlabel(label)
    if title:
        ax.set_title(textwrap.fill(title, 60), fontsize=9)
    ax.set_ylabel("-log10 p-value")
    ax.spines[["top", "right"]].set_visible(False)
    fig.legend(fontsize=7, frameon=False, loc="outside lower center", ncols=3)
    if labels > 0 and len(data):
        _place_labels(fig, ax, _labelled(data, selected, labels), heights)
    return fig


def frequency_plot(table: pd.DataFrame, *, top: int = 30, title: str | None = None) -> Figure:
    """The `top` genes by selection frequency over the resamples, the model's genes in blue;
    `title` heads it.
    """
    from matplotlib.figure import Figure
    from matplotlib.patches import Patch

    if "frequency" not in table.columns:
        raise ValueError("the table has no selection frequency (standard mode, resamples > 0)")
    data = table.sort_values(["frequency", "rank"], ascending=[False, True]).head(top)[::-1]
    fig = Figure(figsize=(5.0, 0.8 + 0.2 * len(data)), layout="constrained")
    ax = fig.add_subplot()
    colours = [_SELECTED if s else _OTHER for s in data["selected"]]
    ax.barh([str(g) for g in data.index], data["frequency"], color=colours)
    ax.set_xlim(0, 1)
    ax.set_xlabel("selection frequency over random halves of the samples")
    if title:
        ax.set_title(textwrap.fill(title, 55), fontsize=9)
    ax.tick_params(axis="y", labelsize=7)
    ax.spines[["top", "right"]].set_visible(False)
    ax.legend(handles=[Patch(color=_SELECTED, label="selected on all samples"),
                       Patch(color=_OTHER, label="not selected")],
              fontsize=7, frameon=False, loc="lower right")  # fmt: skip
    return fig

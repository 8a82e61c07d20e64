"""The figures of a problem's gene table: a volcano of the marginal statistics, with the
model's genes marked, and the selection frequency of the most often selected genes.

Both take `GeneAnalysis.to_frame()`'s table and return a matplotlib `Figure`
(no pyplot state: safe in scripts and notebooks alike), in the report's style:
no title (the caption is the reader's), labelled axes, the selected genes in the
report's blue, the others grey.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

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


def volcano_plot(table: pd.DataFrame, *, fdr: float = 0.05, labels: int = 10) -> Figure:
    """Each gene's marginal `effect` against -log10 `p_value`; the model's genes marked and the
    first `labels` of them named; a dashed line where the BH FDR crosses `fdr`.
    """
    from matplotlib.figure import Figure

    data = table[np.isfinite(table["p_value"]) & np.isfinite(table["effect"])]
    height = -np.log10(np.clip(data["p_value"].to_numpy(dtype=float), 1e-300, 1.0))
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
    named = data[selected].sort_values("rank").head(labels)
    for gene, row in named.iterrows():
        ax.annotate(str(gene), (row["effect"], -np.log10(max(row["p_value"], 1e-300))),
                    fontsize=7, xytext=(3, 2), textcoords="offset points")  # fmt: skip
    ax.set_xlabel("marginal effect (trait coefficient, adjusted for the covariates)")
    ax.set_ylabel("-log10 p-value")
    ax.spines[["top", "right"]].set_visible(False)
    fig.legend(fontsize=7, frameon=False, loc="outside lower center", ncols=3)
    return fig


def frequency_plot(table: pd.DataFrame, *, top: int = 30) -> Figure:
    """The `top` genes by selection frequency over the resamples, the model's genes in blue."""
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
    ax.tick_params(axis="y", labelsize=7)
    ax.spines[["top", "right"]].set_visible(False)
    ax.legend(handles=[Patch(color=_SELECTED, label="selected on all samples"),
                       Patch(color=_OTHER, label="not selected")],
              fontsize=7, frameon=False, loc="lower right")  # fmt: skip
    return fig

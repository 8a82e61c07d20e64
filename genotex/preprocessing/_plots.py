"""A preprocessed cohort's quality at a glance: samples kept, probes mapped, trait, Age, Gender.

`cohort_qc_plot` takes `cohort_anndata`'s AnnData and returns a matplotlib
`Figure` (no pyplot state), in the report's style: one small panel a question,
no title, labelled axes, n/a where the cohort has no such column.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = ["cohort_qc_plot"]

_BAR = "#4878a8"
_MISSING = "#9aa3ad"


def _missing(ax: Axes, what: str) -> None:
    """An empty panel saying what it lacks, wrapped to stay inside its own panel."""
    import textwrap

    said = textwrap.fill(f"no {what}", width=20)
    ax.text(0.5, 0.5, said, ha="center", va="center", color=_MISSING, fontsize=8,
            transform=ax.transAxes)  # fmt: skip
    ax.set_xticks([])
    ax.set_yticks([])


def _counts(ax: Axes, values: Any, names: dict[float, str], what: str) -> None:
    values = np.asarray(values, dtype=float)
    values = values[np.isfinite(values)]
    if not len(values):
        _missing(ax, what)
        return
    levels, counts = np.unique(values, return_counts=True)
    ax.bar([names.get(v, f"{v:g}") for v in levels], counts, color=_BAR)
    ax.tick_params(axis="x", labelsize=7)
    ax.set_ylabel("samples")
    ax.set_xlabel(what)


def cohort_qc_plot(adata: Any) -> Figure:
    """Four panels: samples kept of the series matrix's (when known), the trait's values,
    Age's distribution and Gender's counts (0 female, 1 male, the benchmark's coding),
    under a title naming the trait and the cohort (a subset says so), so a saved image says
    what it shows.
    """
    from matplotlib.figure import Figure

    from ..core import cohort_label, is_anndata

    if not is_anndata(adata):
        raise TypeError(
            f"cohort_qc_plot takes cohort_anndata's AnnData, not {type(adata).__name__} "
            "(genotex.core.linked_to_anndata makes one from a linked table)"
        )
    info = adata.uns.get("genotex", {})
    trait = info.get("trait") or adata.obs.columns[0]
    fig = Figure(figsize=(11.0, 2.4), layout="constrained")
    kept, genes_ax, balance, age, gender = fig.subplots(1, 5)
    raw = info.get("raw_samples")
    bars = {"kept": adata.n_obs} | ({"in the series matrix": raw} if raw else {})
    kept.bar(list(bars), list(bars.values()), color=[_BAR, _MISSING][: len(bars)])
    kept.set_ylabel("samples")
    kept.tick_params(axis="x", labelsize=7)
    mapping = info.get("mapping") or {}
    if mapping:
        steps = {"probes": mapping["probes"], "mapped": mapping["probes_mapped"],
                 "genes": mapping["genes"]}  # fmt: skip
        genes_ax.bar(list(steps), list(steps.values()), color=[_MISSING, _BAR, _BAR])
        genes_ax.set_ylabel("rows")
        genes_ax.set_xlabel("probes mapped to gene symbols")
    else:
        _missing(genes_ax, "probe mapping (a Xena cohort, or no recipe)")
    if trait in adata.obs:
        _counts(balance, adata.obs[trait], {0.0: "control\n(0)", 1.0: "case\n(1)"}, trait)
    else:
        _missing(balance, trait)
    if "Age" in adata.obs and np.isfinite(np.asarray(adata.obs["Age"], dtype=float)).any():
        values = np.asarray(adata.obs["Age"], dtype=float)
        age.hist(values[np.isfinite(values)], bins=15, color=_BAR)
        age.set_xlabel("Age")
        age.set_ylabel("samples")
    else:
        _missing(age, "Age")
    if "Gender" in adata.obs:
        _counts(gender, adata.obs["Gender"], {0.0: "female", 1.0: "male"}, "Gender")
    else:
        _missing(gender, "Gender")
    for ax in (kept, genes_ax, balance, age, gender):
        ax.spines[["top", "right"]].set_visible(False)
    fig.suptitle(f"{trait} · {cohort_label(info, adata.n_obs)}: cohort QC", fontsize=9)
    return fig

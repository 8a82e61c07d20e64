"""The diagnosis' figure: how often each error class was found, coloured by its stage."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._model import ERROR_CLASSES, Diagnosis

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["error_class_histogram"]

_STAGE_COLOURS = {
    "preprocessing": "#4878a8",
    "selection": "#e1812c",
    "analysis": "#3a923a",
    "floor": "#9aa3ad",
}


def error_class_histogram(diagnosis: Diagnosis) -> Figure:
    """A horizontal bar per error class found (count of findings), coloured by stage."""
    from matplotlib.figure import Figure
    from matplotlib.patches import Patch
    from matplotlib.ticker import MaxNLocator

    counts = diagnosis.class_counts()
    names = list(reversed(counts)) or ["(none)"]
    fig = Figure(figsize=(6.4, 0.9 + 0.32 * len(names)), layout="constrained")
    ax = fig.add_subplot()
    values = [counts.get(n, 0) for n in names]
    colours = [_STAGE_COLOURS[ERROR_CLASSES[n][0]] if n in ERROR_CLASSES else "#ffffff"
               for n in names]  # fmt: skip
    ax.barh(names, values, color=colours)
    for y, value in enumerate(values):
        if value:
            ax.text(value, y, f" {value}", va="center", fontsize=8)
    ax.set_xlabel("findings")
    ax.spines[["top", "right"]].set_visible(False)
    stages = dict.fromkeys(ERROR_CLASSES[n][0] for n in counts)
    ax.legend(handles=[Patch(color=_STAGE_COLOURS[s], label=s) for s in stages],
              fontsize=7, frameon=False, loc="upper left", bbox_to_anchor=(1.0, 1.0))  # fmt: skip
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    return fig

"""Whether a reference-mode fit's selection depends on the genes' column order: the final fit
made again on the columns reversed (a unique Lasso solution selects the same genes).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core import accuracy_at_chance

__all__ = ["order_check"]


def order_check(
    model: Any,
    data: tuple[np.ndarray, np.ndarray, np.ndarray | None],
    flags: list[str],
    *,
    lmm: bool,
    performance: Any,
) -> tuple[int, int] | None:
    """The reversed-column check of a fit that may not be unique, `column_order_dependent`
    added to `flags` when it fails; None when the fit needs none. Checked: a fragile fit
    (flagged, not converged, more genes than samples), an LMM (its X is rotated, y not: its
    selection is often a draw) and a fit at chance.
    """
    x, y, z = data
    genes = int(np.count_nonzero(model.coef_))
    fragile = flags or not model.converged_ or genes > len(y)
    if not (fragile or lmm or accuracy_at_chance(performance) is not None):
        return None
    reversed_columns = _reversed_selection(model, x, y, z)
    if reversed_columns != (genes, genes):
        flags.append("column_order_dependent")
    return reversed_columns


def _reversed_selection(
    fitted: Any, x: np.ndarray, y: np.ndarray, z: np.ndarray | None
) -> tuple[int, int]:
    """(genes selected, genes in common with `fitted`) when the final fit is made again on
    the genes in reverse column order (its coefficients mapped back before comparing): a
    unique Lasso solution selects the same genes either way.
    """
    from sklearn.base import clone

    refit = clone(fitted).fit(np.asfortranarray(x[:, ::-1]), y, z)
    nonzero = np.flatnonzero(refit.coef_[::-1])
    first = set(np.flatnonzero(fitted.coef_))
    return len(nonzero), len(first & set(nonzero.tolist()))

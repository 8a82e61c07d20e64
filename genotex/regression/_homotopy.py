"""The exact Lasso path by homotopy (LARS-Lasso) on a screened working set of genes.

The Lasso's solution is piecewise linear in its penalty (Osborne, Presnell and
Turlach 2000; Efron et al. 2004): between two kinks the active coefficients
move along G_AA⁻¹·s, where G_AA is the active genes' Gram matrix and s their
signs, and a kink is where an inactive gene's correlation with the residual
reaches the penalty (it enters) or an active coefficient reaches zero (it
leaves). Following the kinks from α_max down gives the solution at every α of
a grid exactly, up to rounding, where coordinate descent stops at a tolerance.

With n samples and p ≫ n genes the kinks are followed on a working set: the
genes whose correlation with the residual is already near the penalty (a
tighter screen than the sequential strong rule of Tibshirani et al. 2012),
whose Gram matrix is formed once and grown by blocks. The inverse of the
active genes' Gram matrix is updated in place as a gene enters or leaves (O(k²),
NumPy only) and computed afresh every `REFRESH` updates; at each α of the grid the
active coefficients are solved afresh from the active set and signs, so no
rounding of the updates stays in the answer. At each α the optimality (KKT)
conditions are checked on all p genes; if a gene outside the working set
violates them, the segment since the previous α is followed again with the
violators added. The answer is therefore the Lasso's over all p genes; the
screen and its constants only decide how fast it is found.

The objective is (1/2n)·‖y − Xw‖² + α·‖w‖₁ with no intercept: the caller
centres (or partials out the covariates of) X and y first.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ._kinks import HomotopyFailed, Segment

__all__ = ["HomotopyFailed", "PathPoint", "lasso_path", "relative_duality_gap"]

#: Screening: at the segment λ → λ', keep the genes with |x_jᵀr| ≥ λ − SCREEN·(λ − λ').
SCREEN = 0.5
#: After a KKT violation, add the genes with |x_jᵀr| ≥ REDO·λ' at the segment's end.
REDO = 0.8
#: At most this many genes (times n, at least 500) join the working set at once, the largest
#: |x_jᵀr| first: many near-equal correlations (a dominant factor) must not make the Gram matrix
#: p × p. The KKT check brings in any gene left out.
GROWTH = 2
#: KKT check: a gene violates when |x_jᵀr| > λ·(1 + KKT_SLACK) (rounding is ~1e-15).
KKT_SLACK = 1e-9


@dataclass(frozen=True)
class PathPoint:
    """The Lasso's solution at one α of the grid.

    Attributes
    ----------
    coefficients
        The p gene coefficients.
    steps
        Kinks followed since the previous α (including segments followed again).
    relative_gap
        The duality gap over ‖y‖²/n: zero up to rounding, computed, not assumed.
    working_set
        Genes in the working set by then (its Gram matrix is working_set² numbers).
    """

    coefficients: np.ndarray
    steps: int
    relative_gap: float
    working_set: int


def relative_duality_gap(
    y: np.ndarray, w: np.ndarray, alpha: float, residual: np.ndarray, correlations: np.ndarray
) -> float:
    """The Lasso's duality gap at w over ‖y‖²/n, given its residual y − Xw and Xᵀ(y − Xw).

    The dual point is the residual scaled into the dual's feasible set
    (|x_jᵀθ| ≤ nα), the usual choice (e.g. celer's, scikit-learn's).
    """
    n = len(y)
    largest = float(np.abs(correlations).max()) if len(correlations) else 0.0
    scale = 1.0 if largest <= n * alpha else n * alpha / largest
    primal = 0.5 * float(residual @ residual) / n + alpha * float(np.abs(w).sum())
    shifted = y - scale * residual
    dual = 0.5 * (float(y @ y) - float(shifted @ shifted)) / n
    norm = float(y @ y) / n
    return max(primal - dual, 0.0) / norm if norm > 0 else 0.0


class _WorkingSet:
    """The screened genes, their Gram matrix and Xᵀy, and the path's state on them.

    The working genes' columns and Gram matrix live in buffers with room to
    grow (doubled when full), so a growth computes only the new blocks.
    """

    def __init__(self, x: np.ndarray, y: np.ndarray) -> None:
        self.x = x
        self.xty_all = x.T @ y
        self.genes = np.zeros(0, dtype=np.intp)  # working genes, in the order they joined
        self.position = np.full(x.shape[1], -1, dtype=np.intp)  # gene -> place, or -1
        self._columns = np.empty((x.shape[0], 0), order="F")  # x[:, genes], then room
        self._gram = np.empty((0, 0))
        self.xty = np.zeros(0)
        self.w = np.zeros(0)
        self.active: list[int] = []  # places of the active genes
        self.signs: list[float] = []
        self.lam = float(np.abs(self.xty_all).max()) if x.shape[1] else 0.0
        self.steps = 0

    @property
    def gram(self) -> np.ndarray:
        """The working genes' Gram matrix (a view of its buffer)."""
        m = len(self.genes)
        return self._gram[:m, :m]

    def grow(self, genes: np.ndarray) -> None:
        """Add genes to the working set (the Gram matrix grows by blocks)."""
        genes = genes[self.position[genes] < 0]
        if not len(genes):
            return
        m, k = len(self.genes), len(genes)
        if m + k > len(self._gram):
            self._make_room(max(2 * len(self._gram), m + k))
        new = self.x[:, genes]
        self._columns[:, m : m + k] = new
        gram = self._gram
        gram[:m, m : m + k] = self._columns[:, :m].T @ new
        gram[m : m + k, :m] = gram[:m, m : m + k].T
        gram[m : m + k, m : m + k] = new.T @ new
        self.position[genes] = np.arange(m, m + k)
        self.genes = np.concatenate((self.genes, genes))
        self.xty = self.xty_all[self.genes]
        self.w = np.concatenate((self.w, np.zeros(k)))

    def _make_room(self, capacity: int) -> None:
        m = len(self.genes)
        columns = np.empty((self.x.shape[0], capacity), order="F")
        columns[:, :m] = self._columns[:, :m]
        gram = np.empty((capacity, capacity))
        gram[:m, :m] = self._gram[:m, :m]
        self._columns, self._gram = columns, gram

    def save(self) -> tuple:
        """The path's state, to follow a segment again from its start."""
        return self.w.copy(), list(self.active), list(self.signs), self.lam

    def restore(self, saved: tuple) -> None:
        """Back to a saved state, keeping the genes added since (and counting the steps)."""
        w, active, signs, self.lam = saved
        self.w = np.concatenate((w, np.zeros(len(self.genes) - len(w))))
        self.active, self.signs = list(active), list(signs)

    def coefficients(self) -> np.ndarray:
        full = np.zeros(self.x.shape[1])
        full[self.genes] = self.w
        return full

    def residual(self, y: np.ndarray) -> np.ndarray:
        """y − Xw, from the active genes' columns only."""
        if not self.active:
            return y
        places = np.asarray(self.active)
        return y - self._columns[:, places] @ self.w[places]  # x[:, genes[places]], gathered

    def follow(self, target: float, max_steps: int) -> None:
        """Follow the kinks from the current λ down to `target` (λ = nα) on the working set."""
        with np.errstate(divide="ignore", invalid="ignore"):  # an entry or exit time never met
            path = Segment(self)
            path.follow(target, max_steps)
        self.active, self.signs = path.places.tolist(), path.sign_vector.tolist()
        self.lam = target


def _strongest(
    correlations: np.ndarray, threshold: float, state: _WorkingSet, most: int
) -> np.ndarray:
    """Genes outside the working set with |x_jᵀr| ≥ threshold, at most `most`, largest first."""
    strength = np.where(state.position < 0, np.abs(correlations), -1.0)
    candidates = np.flatnonzero(strength >= threshold)
    if len(candidates) > most:
        candidates = candidates[np.argsort(-strength[candidates], kind="stable")[:most]]
    return candidates


def lasso_path(
    x: np.ndarray, y: np.ndarray, alphas: Sequence[float] | np.ndarray
) -> list[PathPoint]:
    """The Lasso's exact solutions at a decreasing grid of α, by homotopy.

    Parameters
    ----------
    x
        n × p design, centred (Fortran order is fastest: columns are gathered).
    y
        n targets, centred.
    alphas
        Decreasing penalties, in scikit-learn's scale (objective (1/2n)‖y − Xw‖² + α‖w‖₁).

    Returns
    -------
    list of PathPoint
        One per α, in the grid's order.

    Raises
    ------
    ValueError
        When the α are not non-negative and decreasing.
    HomotopyFailed
        When the kinks cannot be followed: the caller falls back to an iterative solver.
    """
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    grid = np.asarray(alphas, dtype=np.float64)
    if np.any(grid < 0) or np.any(np.diff(grid) > 0):
        raise ValueError("alphas must be non-negative and decreasing (the path is followed down)")
    n = len(y)
    state = _WorkingSet(x, y)
    correlations, residual = state.xty_all, y
    max_steps = 50 * n + 1_000
    growth = max(GROWTH * n, 500)
    points = []
    for alpha in grid:
        target = float(alpha) * n
        steps_before = state.steps
        # (at α_max itself, rounding must not let a gene in with a coefficient of 1e-17)
        if target < state.lam * (1 - 1e-12):
            lam = state.lam
            keep = _strongest(correlations, lam - SCREEN * (lam - target), state, growth)
            while True:
                state.grow(keep)
                saved = state.save()
                state.follow(target, max_steps)
                residual = state.residual(y)
                correlations = x.T @ residual
                outside = state.position < 0
                if not np.any(outside & (np.abs(correlations) > target * (1 + KKT_SLACK))):
                    break
                state.restore(saved)
                keep = _strongest(correlations, REDO * target, state, growth)
        w = state.coefficients()
        gap = relative_duality_gap(y, w, float(alpha), residual, correlations)
        points.append(PathPoint(w, state.steps - steps_before, gap, len(state.genes)))
    return points

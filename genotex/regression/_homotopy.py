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

__all__ = ["HomotopyFailed", "PathPoint", "lasso_path", "relative_duality_gap"]

#: Screening: at the segment λ → λ', keep the genes with |x_jᵀr| ≥ λ − SCREEN·(λ − λ').
SCREEN = 0.5
#: After a KKT violation, add the genes with |x_jᵀr| ≥ REDO·λ' at the segment's end.
REDO = 0.8
#: At most this many genes (times n, at least 500) join the working set at once, the largest
#: |x_jᵀr| first: many near-equal correlations (a dominant factor) must not make the Gram matrix
#: p × p. The KKT check brings in any gene left out.
GROWTH = 2
#: A gene whose column lies in the span of the active ones (|residual|² ≤ this × its norm²)
#: never enters: its correlation moves with theirs (duplicated or collinear genes).
COLLINEAR = 1e-10
#: The inverse of the active Gram matrix is updated as genes enter and leave, and computed
#: afresh after this many updates and at every α, so its rounding cannot build up.
REFRESH = 50
#: KKT check: a gene violates when |x_jᵀr| > λ·(1 + KKT_SLACK) (rounding is ~1e-15).
KKT_SLACK = 1e-9


class HomotopyFailed(ArithmeticError):
    """The kinks could not be followed (too many, or a singular active Gram matrix)."""


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
    """The screened genes, their Gram matrix and Xᵀy, and the path's state on them."""

    def __init__(self, x: np.ndarray, y: np.ndarray) -> None:
        self.x = x
        self.xty_all = x.T @ y
        self.genes = np.zeros(0, dtype=np.intp)  # working genes, in the order they joined
        self.position = np.full(x.shape[1], -1, dtype=np.intp)  # gene -> place, or -1
        self.gram = np.zeros((0, 0))
        self.xty = np.zeros(0)
        self.w = np.zeros(0)
        self.active: list[int] = []  # places of the active genes
        self.signs: list[float] = []
        self.lam = float(np.abs(self.xty_all).max()) if x.shape[1] else 0.0
        self.steps = 0

    def grow(self, genes: np.ndarray) -> None:
        """Add genes to the working set (the Gram matrix grows by blocks)."""
        genes = genes[self.position[genes] < 0]
        if not len(genes):
            return
        m, k = len(self.genes), len(genes)
        old, new = self.x[:, self.genes], self.x[:, genes]
        gram = np.empty((m + k, m + k))
        gram[:m, :m] = self.gram
        gram[:m, m:] = old.T @ new
        gram[m:, :m] = gram[:m, m:].T
        gram[m:, m:] = new.T @ new
        self.gram = gram
        self.position[genes] = np.arange(m, m + k)
        self.genes = np.concatenate((self.genes, genes))
        self.xty = self.xty_all[self.genes]
        self.w = np.concatenate((self.w, np.zeros(k)))

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
        return y - self.x[:, self.genes[places]] @ self.w[places]

    def follow(self, target: float, max_steps: int) -> None:
        """Follow the kinks from the current λ down to `target` (λ = nα) on the working set."""
        with np.errstate(divide="ignore", invalid="ignore"):  # an entry or exit time never met
            self._follow(target, max_steps)

    def _follow(self, target: float, max_steps: int) -> None:
        gram, xty, w, active, signs = self.gram, self.xty, self.w, self.active, self.signs
        m = len(xty)
        closed = np.zeros(m)  # inf for genes that may not enter (the active ones), else 0
        closed[active] = np.inf
        lam, left = self.lam, -1  # left: the gene that just left may not re-enter at t = 0
        columns = np.empty((m, max(2 * len(active), 16)))  # gram[:, active], kept in order
        columns[:, : len(active)] = gram[:, active]
        inverse = _Inverse(columns, active)
        updates = 0  # since the inverse was last computed afresh
        c = xty - columns[:, : len(active)] @ w[active]  # then updated along the path
        while True:
            k = len(active)  # with none active, the largest |x_jᵀr| enters at λ = |x_jᵀr|
            self.steps += 1
            if self.steps > max_steps:
                raise HomotopyFailed(f"more than {max_steps} kinks")
            places = np.asarray(active, dtype=np.intp)  # once per step (w is read and written)
            wa = w[places]
            if updates >= REFRESH:
                inverse.refresh(columns, active)
                updates = 0
            d = inverse.matrix @ np.asarray(signs)
            a = columns[:, :k] @ d
            t_in = _entry_times(c, a, lam)
            t_in += closed
            if left >= 0 and t_in[left] <= 1e-12 * lam:  # (later in the segment it may)
                t_in[left] = np.inf
            j_in = int(np.argmin(t_in))
            t_leave, j_out = _exit_time(wa, d)
            t_end = lam - target
            t = min(t_in[j_in], t_leave, t_end)
            w[places] = wa + t * d
            c -= t * a
            lam -= t
            left = -1
            if t == t_end:
                self.lam = target
                _polish(w, active, signs, columns, xty=xty, lam=target)
                return
            if t == t_leave:
                left = _remove(active, signs, columns, j_out)
                w[left] = 0.0
                closed[left] = 0.0
                inverse.shrink(j_out)
                updates += 1
                continue
            # j_in enters: the inverse grows by a row and a column (its Schur complement)
            u = inverse.matrix @ columns[j_in, :k]
            rest = gram[j_in, j_in] - float(columns[j_in, :k] @ u)
            closed[j_in] = np.inf
            if rest <= COLLINEAR * gram[j_in, j_in]:
                continue  # in the span of the active genes: never enters
            if k == columns.shape[1]:
                columns = np.concatenate((columns, np.empty_like(columns)), axis=1)
            columns[:, k] = gram[:, j_in]
            inverse.grow(u, rest)
            updates += 1
            active.append(j_in)
            signs.append(float(np.sign(c[j_in])))


def _exit_time(wa: np.ndarray, d: np.ndarray) -> tuple[float, int]:
    """How far λ falls before an active coefficient reaches 0, and whose (inf, -1: none)."""
    if not len(wa):
        return np.inf, -1
    t_out = np.where(wa * d < 0, -wa / d, np.inf)
    place = int(np.argmin(t_out))
    return float(t_out[place]), place


def _remove(active: list[int], signs: list[float], columns: np.ndarray, place: int) -> int:
    """Take the active gene at `place` out (the last one takes its place); return it."""
    gene, last = active[place], len(active) - 1
    active[place], signs[place] = active[last], signs[last]
    columns[:, place] = columns[:, last]
    active.pop()
    signs.pop()
    return gene


def _entry_times(c: np.ndarray, a: np.ndarray, lam: float) -> np.ndarray:
    """How far λ falls before each gene's |c_j − t·a_j| reaches λ − t (inf: never).

    Called inside `np.errstate(divide="ignore", invalid="ignore")` (`follow`).
    """
    up = np.maximum(lam - c, 0.0) / (1.0 - a)
    down = np.maximum(lam + c, 0.0) / (1.0 + a)
    up[a > 1.0 - 1e-12] = np.inf
    down[a < -1.0 + 1e-12] = np.inf
    return np.minimum(up, down)


class _Inverse:
    """G_AA⁻¹, the inverse of the active genes' Gram matrix, updated as genes enter and leave.

    It is the top-left k × k block of a buffer with room to grow, so an update is
    a rank-one change in place, O(k²), without a copy of the matrix per kink.
    """

    def __init__(self, columns: np.ndarray, active: list[int]) -> None:
        self.buffer, self.k = np.empty((0, 0)), 0
        self.refresh(columns, active)

    @property
    def matrix(self) -> np.ndarray:
        return self.buffer[: self.k, : self.k]

    def refresh(self, columns: np.ndarray, active: list[int]) -> None:
        """Computed afresh from the active genes' Gram matrix (`columns` = gram[:, active])."""
        k = len(active)
        try:
            inverse = np.linalg.inv(columns[active, :k])
        except np.linalg.LinAlgError:
            raise HomotopyFailed("the active genes' Gram matrix is singular") from None
        if not np.all(np.isfinite(inverse)):
            raise HomotopyFailed("the active genes' Gram matrix is singular")
        if len(self.buffer) <= k:
            self.buffer = np.empty((2 * k + 16, 2 * k + 16))
        self.buffer[:k, :k] = inverse
        self.k = k

    def grow(self, u: np.ndarray, rest: float) -> None:
        """One more gene, from u = G⁻¹·g and its Schur complement `rest`."""
        k = self.k
        if k == len(self.buffer):
            self.buffer = np.pad(self.matrix, (0, k))  # room for k more
        update = np.outer(u, u)
        update /= rest
        self.buffer[:k, :k] += update
        self.buffer[:k, k] = self.buffer[k, :k] = -u / rest
        self.buffer[k, k] = 1.0 / rest
        self.k = k + 1

    def shrink(self, place: int) -> None:
        """Without the gene at `place`, whose slot the last gene took (`_remove`).

        G⁻¹ − G⁻¹[:, place]·G⁻¹[place, :] / G⁻¹[place, place] (the Schur
        complement), then the last row and column moved into `place`.
        """
        inverse, last = self.matrix, self.k - 1
        update = np.outer(inverse[:, place], inverse[place, :])
        update /= inverse[place, place]
        inverse -= update
        inverse[place, :] = inverse[last, :]
        inverse[:, place] = inverse[:, last]
        self.k = last


def _polish(
    w: np.ndarray,
    active: list[int],
    signs: list[float],
    columns: np.ndarray,
    *,
    xty: np.ndarray,
    lam: float,
) -> None:
    """At an α of the grid, the active coefficients afresh: G_AA·w_A = Xᵀy_A − λ·s.

    Given the active set and signs the homotopy found, this is the Lasso's solution
    (so the updates of the inverse along the segment leave no drift in the answer).
    """
    if not active:
        return
    k = len(active)
    try:
        w[active] = np.linalg.solve(columns[active, :k], xty[active] - lam * np.asarray(signs))
    except np.linalg.LinAlgError:
        raise HomotopyFailed("the active genes' Gram matrix is singular") from None


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

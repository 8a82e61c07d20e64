"""Following the kinks of the Lasso's path on a working set (the homotopy's inner loop).

Between two kinks the active coefficients move along G_AA⁻¹·s; `Segment`
finds the next kink (a gene entering, an active one leaving, or the segment's
end), moves there, and updates G_AA⁻¹ in place (`_Inverse`). At the segment's
end the active coefficients are solved afresh (`_polish`). `_homotopy` owns the
working set, the screen and the optimality check around it.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np

__all__ = ["COLLINEAR", "REFRESH", "HomotopyFailed", "Segment"]

#: A gene whose column lies in the span of the active ones (|residual|² ≤ this × its norm²)
#: never enters: its correlation moves with theirs (duplicated or collinear genes).
COLLINEAR = 1e-10
#: The inverse of the active Gram matrix is updated as genes enter and leave, and computed
#: afresh after this many updates and at every α, so its rounding cannot build up.
REFRESH = 50


class HomotopyFailed(ArithmeticError):
    """The kinks could not be followed (too many, or a singular active Gram matrix)."""


class _State(Protocol):
    """What a segment reads and moves: `_homotopy._WorkingSet`."""

    xty: np.ndarray
    w: np.ndarray
    active: list[int]
    signs: list[float]
    lam: float
    steps: int

    @property
    def gram(self) -> np.ndarray: ...


class Segment:
    """The kinks of one segment λ → target on a working set.

    It holds the active genes (their places, signs and Gram columns, kept in
    order, with room for all m working genes), the inverse of their Gram matrix,
    and the working genes' correlations c = Xᵀr, updated along the segment.
    """

    def __init__(self, state: _State) -> None:
        self.state = state
        gram, m, k = state.gram, len(state.xty), len(state.active)
        self.k = k
        self.active = np.empty(m, dtype=np.intp)
        self.active[:k] = state.active
        self.signs = np.empty(m)
        self.signs[:k] = state.signs
        self.closed = np.zeros(m)  # inf for genes that may not enter (the active ones), else 0
        self.closed[self.places] = np.inf
        self.columns = np.empty((m, max(2 * k, 16)))  # gram[:, active], kept in order
        self.columns[:, :k] = gram[self.places].T  # rows: gram is symmetric, rows gather faster
        self.inverse = _Inverse(self.columns, self.places)
        self.c = state.xty - self.columns[:, :k] @ state.w[self.places]  # updated along the path

    @property
    def places(self) -> np.ndarray:
        """The active genes' places in the working set."""
        return self.active[: self.k]

    @property
    def sign_vector(self) -> np.ndarray:
        """The active genes' signs, in the same order."""
        return self.signs[: self.k]

    def follow(self, target: float, max_steps: int) -> None:
        """Kink after kink from the state's λ down to `target`; the coefficients move in place."""
        state, c, closed = self.state, self.c, self.closed
        gram, xty, w = state.gram, state.xty, state.w
        lam, left = state.lam, -1  # left: the gene that just left may not re-enter at t = 0
        updates = 0  # since the inverse was last computed afresh
        while True:
            k = self.k  # with none active, the largest |x_jᵀr| enters at λ = |x_jᵀr|
            state.steps += 1
            if state.steps > max_steps:
                raise HomotopyFailed(f"more than {max_steps} kinks")
            places = self.active[:k]
            wa = w[places]
            if updates >= REFRESH:
                self.inverse.refresh(self.columns, places)
                updates = 0
            d = self.inverse.matrix @ self.signs[:k]
            a = self.columns[:, :k] @ d
            t_in = _entry_times(c, a, lam, closed)
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
                _polish(w, places, self.signs[:k], self.columns, xty=xty, lam=target)
                return
            if t == t_leave:
                left = self._remove(j_out)
                w[left] = 0.0
                closed[left] = 0.0
                updates += 1
                continue
            if self._enter(j_in, gram, float(np.sign(c[j_in]))):
                updates += 1

    def _remove(self, place: int) -> int:
        """Take the active gene at `place` out (the last one takes its place); return it."""
        last = self.k - 1
        gene = int(self.active[place])
        self.active[place], self.signs[place] = self.active[last], self.signs[last]
        self.columns[:, place] = self.columns[:, last]
        self.inverse.shrink(place)
        self.k = last
        return gene

    def _enter(self, gene: int, gram: np.ndarray, sign: float) -> bool:
        """Let `gene` in: the inverse grows by a row and a column (its Schur complement).

        A gene in the span of the active ones never enters (False).
        """
        k = self.k
        row = self.columns[gene, :k]
        u = self.inverse.matrix @ row
        rest = gram[gene, gene] - float(row @ u)
        self.closed[gene] = np.inf
        if rest <= COLLINEAR * gram[gene, gene]:
            return False
        if k == self.columns.shape[1]:
            self.columns = np.concatenate((self.columns, np.empty_like(self.columns)), axis=1)
        self.columns[:, k] = gram[:, gene]
        self.inverse.grow(u, rest)
        self.active[k], self.signs[k] = gene, sign
        self.k = k + 1
        return True


def _exit_time(wa: np.ndarray, d: np.ndarray) -> tuple[float, int]:
    """How far λ falls before an active coefficient reaches 0, and whose (inf, -1: none)."""
    if not len(wa):
        return np.inf, -1
    t_out = np.where(wa * d < 0, -wa / d, np.inf)
    place = int(np.argmin(t_out))
    return float(t_out[place]), place


def _entry_times(c: np.ndarray, a: np.ndarray, lam: float, closed: np.ndarray) -> np.ndarray:
    """How far λ falls before each gene's |c_j − t·a_j| reaches λ − t (inf: never), plus `closed`.

    Called inside `np.errstate(divide="ignore", invalid="ignore")` (`follow`).
    """
    up = np.subtract(lam, c)
    np.maximum(up, 0.0, out=up)
    scale = np.subtract(1.0, a)
    up /= scale
    down = np.add(lam, c)
    np.maximum(down, 0.0, out=down)
    np.add(1.0, a, out=scale)
    down /= scale
    up[a > 1.0 - 1e-12] = np.inf
    down[a < -1.0 + 1e-12] = np.inf
    np.minimum(up, down, out=up)
    up += closed
    return up


class _Inverse:
    """G_AA⁻¹, the inverse of the active genes' Gram matrix, updated as genes enter and leave.

    It is the top-left k × k block of a buffer with room to grow, so an update is
    a rank-one change in place, O(k²), without a copy of the matrix per kink.
    """

    def __init__(self, columns: np.ndarray, active: np.ndarray) -> None:
        self.buffer, self.k = np.empty((0, 0)), 0
        self.refresh(columns, active)

    @property
    def matrix(self) -> np.ndarray:
        return self.buffer[: self.k, : self.k]

    def refresh(self, columns: np.ndarray, active: np.ndarray) -> None:
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
        """Without the gene at `place`, whose slot the last gene takes (`Segment._remove`).

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
    active: np.ndarray,
    signs: np.ndarray,
    columns: np.ndarray,
    *,
    xty: np.ndarray,
    lam: float,
) -> None:
    """At an α of the grid, the active coefficients afresh: G_AA·w_A = Xᵀy_A − λ·s.

    Given the active set and signs the homotopy found, this is the Lasso's solution
    (so the updates of the inverse along the segment leave no drift in the answer).
    """
    k = len(active)
    if not k:
        return
    try:
        w[active] = np.linalg.solve(columns[active, :k], xty[active] - lam * signs)
    except np.linalg.LinAlgError:
        raise HomotopyFailed("the active genes' Gram matrix is singular") from None

"""A notebook design checked before any fit: its covariates, its trait's groups.

Ordinary analyst choices give wrong numbers with no word when nothing looks at the design:
a covariate constant in the subset fitted (Gender in a males-only subset), one that
repeats another (Age given twice), nearly does (`12 * Age` plus rounding) or restates the
trait; a trait group of one sample. Each is caught here, before a fit: the covariates
constant or aliased at R's tolerance are left out with a `DesignWarning` naming them (as
R's `lm` reports an aliased coefficient) or refused under `strict`; a covariate collinear
with the trait is refused; a small group is flagged. The samples and gene columns are
checked in `_gene_columns`.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ._table_columns import SmallSampleWarning

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "ALIAS_TOLERANCE",
    "CheckedDesign",
    "DesignWarning",
    "MIN_GROUP",
    "checked_design",
    "checked_names",
    "refuse_infinite",
    "warn_small_groups",
    "within_groups",
]

#: The fewest samples a trait group may have without a warning (limma and DESeq2's users
#: are told the same: a group of one or two has no variance of its own).
MIN_GROUP = 3


class DesignWarning(UserWarning):
    """A covariate left out of the design: constant, or a combination of the others."""


#: R's `lm` (LINPACK's dqrdc2): a column is aliased when the pivoted QR leaves it less than
#: this share of its own norm, once the columns before it are taken out.
ALIAS_TOLERANCE = 1e-7
#: A share left below this is rounding only: the column is exactly a combination of the others.
_EXACTLY = 1e-12


class _Basis:
    """An orthonormal basis of the design's columns kept so far, grown one column at a time
    (Gram-Schmidt, twice for accuracy): each new column's share left outside it is R's
    |diag R| over the column's norm, on the scaled design.
    """

    def __init__(self, n: int) -> None:
        self.q = np.empty((n, 0))

    def left(self, column: np.ndarray) -> tuple[float, np.ndarray]:
        """The share of `column`'s norm outside the basis, and that part as a unit vector."""
        norm = float(np.linalg.norm(column))
        if norm == 0 or not np.isfinite(norm):
            return 0.0, column
        rest = column / norm
        for _ in range(2):
            rest = rest - self.q @ (self.q.T @ rest)
        share = float(np.linalg.norm(rest))
        return share, rest / share if share else rest

    def add(self, unit: np.ndarray) -> None:
        self.q = np.column_stack([self.q, unit])


@dataclass(frozen=True)
class CheckedDesign:
    """What the design check kept: the covariates and the trait's terms (interactions) that
    give `[1, covariates, trait, trait terms]` full rank at R's tolerance, those left out
    with why, and the kept design's condition number (its columns scaled to unit norm).
    """

    z: np.ndarray | None
    z_names: list[str]
    w: np.ndarray | None
    w_names: list[str]
    left: dict[str, str]
    condition_number: float


def _aliased_reason(share: float, before: list[str]) -> str:
    made = (f"a combination of {', '.join(repr(b) for b in before)} and the intercept"
            if before else "a combination of the intercept")  # fmt: skip
    if share > _EXACTLY:
        made = f"nearly {made} (it keeps {share:.1e} of its norm, under R's {ALIAS_TOLERANCE:g})"
    return made


def checked_design(
    y: np.ndarray,
    z: np.ndarray | None,
    names: Sequence[str],
    *,
    trait: str,
    strict: bool = False,
    w: np.ndarray | None = None,
    w_names: Sequence[str] = (),
) -> CheckedDesign:
    """The columns that give the design `[1, covariates, trait, trait terms]` full column
    rank, judged as R's `lm` judges aliasing.

    Each covariate, in order, is kept when the intercept and the covariates kept before it
    leave at least `ALIAS_TOLERANCE` of its norm (R's relative tolerance on the pivoted
    QR's |diag R|); a constant one, or one the others make or nearly make (a repeat, a
    sum, `12 * Age` plus rounding), is left out with its reason. Then the trait must keep
    a share of its own: one the covariates make, or nearly make, refuses the fit (the
    trait's effect cannot be told from theirs). Then each term of the trait (an
    interaction, `Trait:Age`), as a covariate is. Raises ValueError in one sentence for the
    trait, and for anything left out under `strict`; warns (`DesignWarning`) naming what
    was left out otherwise.
    """
    n = len(y)
    columns = np.empty((n, 0)) if z is None else np.asarray(z, dtype=np.float64).reshape(n, -1)
    extra = np.empty((n, 0)) if w is None else np.asarray(w, dtype=np.float64).reshape(n, -1)
    basis = _Basis(n)
    basis.add(np.full(n, 1 / np.sqrt(n)))
    left: dict[str, str] = {}

    def keep(block: np.ndarray, labels: Sequence[str], before: list[str]) -> list[int]:
        kept = []
        for index, name in enumerate(labels):
            column = block[:, index]
            if np.ptp(column) == 0:
                left[name] = f"constant ({column[0]:g} in every sample)"
                continue
            share, unit = basis.left(column)
            if share < ALIAS_TOLERANCE:
                left[name] = _aliased_reason(share, before)
                continue
            basis.add(unit)
            kept.append(index)
            before.append(name)
        return kept

    kept_names: list[str] = []
    kept = keep(columns, names, kept_names)
    share, unit = basis.left(np.asarray(y, dtype=np.float64))
    if share < ALIAS_TOLERANCE:
        made = ", ".join(repr(c) for c in kept_names) or "the intercept"
        nearly = "nearly " if share > _EXACTLY else ""
        raise ValueError(
            f"the trait {trait!r} is {nearly}collinear with the covariates ({made}): its effect "
            "cannot be told from theirs; leave out the covariate that restates the trait"
        )
    basis.add(unit)
    trait_kept = keep(extra, w_names, [*kept_names, trait])
    if left:
        said = "; ".join(f"{name!r}: {why}" for name, why in left.items())
        if strict:
            raise ValueError(f"the design is not of full rank ({said}); leave them out")
        warnings.warn(
            f"{len(left)} covariate(s) left out of the design, which they would make rank-"
            f"deficient: {said}",
            DesignWarning,
            stacklevel=4,
        )
    full = np.column_stack([np.ones(n), columns[:, kept], y, extra[:, trait_kept]])
    scaled = full / np.linalg.norm(full, axis=0)
    return CheckedDesign(
        columns[:, kept] if kept else None,
        [names[i] for i in kept],
        extra[:, trait_kept] if trait_kept else None,
        [w_names[i] for i in trait_kept],
        left,
        float(np.linalg.cond(scaled)),
    )


def warn_small_groups(counts: dict[str, int], trait: str) -> bool:
    """Warn (`SmallSampleWarning`) when a trait group compared (`counts`: its samples by
    group, "control" and "case", or a contrast's levels) has fewer than `MIN_GROUP`
    samples, with the counts; True when so.
    """
    if min(counts.values()) >= MIN_GROUP:
        return False
    said = [f"{n} {label}" for label, n in counts.items()]
    listed = " and ".join(said) if len(said) == 2 else ", ".join(said)
    warnings.warn(
        f"the trait {trait!r} has {listed} sample(s): a group under {MIN_GROUP} has no "
        "variance of its own, and its p-values and FDR are fragile; the result is flagged "
        "(few_samples_)",
        SmallSampleWarning,
        stacklevel=4,
    )
    return True


def within_groups(
    groups: np.ndarray, x: np.ndarray, target: np.ndarray, z: np.ndarray | None
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, int]:
    """x, y and z with each group's means taken out (one unpenalized indicator a group, by
    Frisch-Waugh-Lovell), and the degrees of freedom that costs.
    """
    import pandas as pd

    codes, labels = pd.factorize(groups)

    def within(values: np.ndarray) -> np.ndarray:
        sums = np.zeros((len(labels), values.shape[1]))
        np.add.at(sums, codes, values)
        counts = np.bincount(codes, minlength=len(labels))[:, None]
        return values - (sums / counts)[codes]

    xw = within(x)
    yw = within(target.reshape(-1, 1))[:, 0]
    zw = None if z is None else within(z.reshape(len(target), -1))
    return xw, yw, zw, len(labels) - 1


def refuse_infinite(
    values: np.ndarray, name: str, samples: pd.Index, *, what: str = "covariate"
) -> None:
    """An infinite value is neither a measurement nor a missing one: said as such, whether it
    was given (a covariate, the trait) or a formula's transform made it (`{1 / (Age - 60)}`).
    """
    infinite = np.isinf(values)
    if infinite.any():
        first = samples[int(np.argmax(infinite))]
        raise ValueError(
            f"the {what} {name!r} is infinite in {int(infinite.sum())} sample(s) (the first: "
            f"{first!r}): make it a number, or NaN to leave those samples out"
        )


def checked_names(trait: str, covariates: list[str]) -> list[str]:
    """The covariates (the condition first), each a column other than the trait, named once:
    a name given twice made pandas hand back two columns for one, and failed in its words.
    """
    if trait in covariates:
        raise ValueError(f"{trait!r} is the trait: it cannot also be a covariate")
    twice = next((c for c in covariates if covariates.count(c) > 1), None)
    if twice is not None:
        raise ValueError(f"the covariate {twice!r} is named twice (the condition counts as "
                         "one): name each column once")  # fmt: skip
    return covariates

"""A notebook design checked before any fit: its samples, its gene columns, its covariates.

Ordinary analyst choices give wrong numbers with no word when nothing looks at the design:
a covariate constant in the subset fitted (Gender in a males-only subset), one that
repeats another (Age given twice) or the trait itself; a sample given twice; the row
numbers a CSV read without `index_col` leaves as a column; a trait group of one sample.
Each is caught here, before a fit: the covariates constant or aliased are left out with a
`DesignWarning` naming them (as R's `lm` reports an aliased coefficient) or refused under
`strict`; a covariate collinear with the trait, a duplicated sample id, are refused; a
column that cannot be a gene is left out, said; a small group is flagged.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ._table_columns import SmallSampleWarning

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "DesignWarning",
    "MIN_GROUP",
    "checked_covariates",
    "checked_names",
    "no_duplicated_samples",
    "non_gene_columns",
    "not_gene_names",
    "refuse_infinite",
    "warn_small_groups",
    "within_groups",
]

#: The fewest samples a trait group may have without a warning (limma and DESeq2's users
#: are told the same: a group of one or two has no variance of its own).
MIN_GROUP = 3
#: What pandas names a header-less column when a CSV is read without `index_col`.
_UNNAMED = re.compile(r"^Unnamed: \d+$")


class DesignWarning(UserWarning):
    """A covariate left out of the design: constant, or a combination of the others."""


def _rank(matrix: np.ndarray) -> int:
    return int(np.linalg.matrix_rank(matrix))


def checked_covariates(
    y: np.ndarray,
    z: np.ndarray | None,
    names: Sequence[str],
    *,
    trait: str,
    strict: bool = False,
) -> tuple[np.ndarray | None, list[str], dict[str, str]]:
    """The covariates that give the design `[1, covariates, trait]` full column rank.

    Each covariate, in order, is kept when it adds a rank to the intercept and the
    covariates kept before it; a constant one, or one the others already make (a repeat,
    a sum), is left out with its reason. Then the trait must add a rank of its own: one
    that the covariates make refuses the fit (the trait's effect cannot be told from
    theirs). Raises ValueError in one sentence for that, and for anything left out under
    `strict`; warns (`DesignWarning`) naming what was left out otherwise.

    Returns the kept columns (None when none is), their names, and the names left out with
    why.
    """
    n = len(y)
    if z is None or not len(names):
        return None, [], {}
    columns = np.asarray(z, dtype=np.float64).reshape(n, -1)
    design = np.ones((n, 1))
    kept: list[int] = []
    left: dict[str, str] = {}
    for index, name in enumerate(names):
        column = columns[:, index]
        if np.ptp(column) == 0:
            left[name] = f"constant ({column[0]:g} in every sample)"
            continue
        candidate = np.column_stack([design, column])
        if _rank(candidate) < candidate.shape[1]:
            before = [names[i] for i in kept]
            left[name] = (
                f"a combination of {', '.join(repr(b) for b in before)} and the intercept"
                if before else "a combination of the intercept"
            )  # fmt: skip
            continue
        design, kept = candidate, [*kept, index]
    if _rank(np.column_stack([design, y])) < design.shape[1] + 1:
        made = ", ".join(repr(names[i]) for i in kept) or "the intercept"
        raise ValueError(
            f"the trait {trait!r} is collinear with the covariates ({made}): its effect cannot "
            "be told from theirs; leave out the covariate that restates the trait"
        )
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
    kept_names = [names[i] for i in kept]
    return (columns[:, kept] if kept else None), kept_names, left


def no_duplicated_samples(index: pd.Index, what: str = "the table") -> None:
    """Refuse a table whose sample ids repeat: a repeated sample counts twice, in the degrees
    of freedom and the variance alike.
    """
    repeated = index[index.duplicated()]
    if len(repeated):
        shown = ", ".join(repr(str(s)) for s in list(dict.fromkeys(repeated))[:3])
        count = len(set(repeated))
        more = ", ..." if count > 3 else ""
        raise ValueError(
            f"{what} holds {count} sample id(s) more than once ({shown}{more}): drop the "
            "repeats first (a repeated sample counts twice)"
        )


def not_gene_names(frame: pd.DataFrame, candidates: Sequence[object]) -> list[object]:
    """The columns among `candidates` that cannot be genes: an empty or missing name, the
    `Unnamed: 0` a CSV read without `index_col` leaves, and a whole-number column that is
    0, 1, ..., n-1 (row numbers under any name).
    """
    import pandas as pd

    found = []
    for column in candidates:
        name = "" if column is None else str(column)
        if (isinstance(column, float) and np.isnan(column)) or not name.strip():
            found.append(column)
        elif _UNNAMED.match(name):
            found.append(column)
        elif pd.api.types.is_integer_dtype(frame[column]) and len(frame) > 2:
            values = frame[column].to_numpy()
            if np.array_equal(values, np.arange(len(values))):
                found.append(column)
    return found


def warn_small_groups(y: np.ndarray, trait: str) -> bool:
    """Warn (`SmallSampleWarning`) when the smaller trait group has fewer than `MIN_GROUP`
    samples, with the counts; True when so.
    """
    ones = int(np.sum(y == 1))
    zeros = int(np.sum(y == 0))
    if min(ones, zeros) >= MIN_GROUP:
        return False
    warnings.warn(
        f"the trait {trait!r} has {zeros} control and {ones} case sample(s): a group under "
        f"{MIN_GROUP} has no variance of its own, and its p-values and FDR are fragile; the "
        "result is flagged (few_samples_)",
        SmallSampleWarning,
        stacklevel=4,
    )
    return True


def non_gene_columns(data: Any, not_genes: set[Any], asked: list[str] | None) -> set[Any]:
    """A DataFrame's columns that cannot be genes (row numbers, empty or missing names),
    left out with a warning naming them (none when the genes are named, or for an AnnData).
    """
    import pandas as pd

    if asked is not None or not isinstance(data, pd.DataFrame):
        return set()
    odd = not_gene_names(data, [c for c in data.columns if c not in not_genes])
    if odd:
        warnings.warn(
            f"{len(odd)} column(s) left out of the genes, being no gene: "
            f"{', '.join(repr(c) for c in odd[:5])} (row numbers, or no name; read a CSV "
            "with index_col=0)",
            UserWarning,
            stacklevel=5,
        )
    return set(odd)


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


def refuse_infinite(values: np.ndarray, name: str, samples: pd.Index) -> None:
    """An infinite covariate value is neither a measurement nor a missing one: said as such."""
    infinite = np.isinf(values)
    if infinite.any():
        first = samples[int(np.argmax(infinite))]
        raise ValueError(
            f"the covariate {name!r} is infinite in {int(infinite.sum())} sample(s) (the first: "
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

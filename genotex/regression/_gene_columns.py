"""A notebook table's gene columns and samples, checked before any fit.

A linked table carries more than genes: the row numbers a CSV read without `index_col`
leaves, `reset_index()`'s `index`, sample numbers, an integer `batch`, text annotations. And
the same sample can come twice under two ids (`an.concat(index_unique="-")`, `pd.concat`
then `reset_index`, a GEO array deposited twice), which adds degrees of freedom that do not
exist and makes every p-value too small. Each is caught here: a column that cannot be a gene
is left out and named; a repeated sample id, or a sample whose expression repeats another's
in every gene, is refused, naming them.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "REPEAT_DISTINCT",
    "no_duplicated_samples",
    "no_empty_gene_names",
    "no_repeated_samples",
    "non_gene_columns",
    "not_gene_names",
]

#: What pandas names a header-less column when a CSV is read without `index_col`.
_UNNAMED = re.compile(r"^Unnamed: \d+$")
#: A sample repeats another when the two are equal in every gene and the row holds at least
#: this many distinct values (or one a gene, in a table of fewer genes): a coincidence is
#: then out of reach, where two rows of a few small counts could match by chance.
REPEAT_DISTINCT = 20


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


def no_repeated_samples(block: pd.DataFrame, what: str = "the table") -> None:
    """Refuse samples whose expression repeats another sample's in every gene, whatever their
    ids (the rule: `REPEAT_DISTINCT`), naming them: the same array under two ids adds
    residual degrees of freedom that do not exist (three such samples on TCGA CHOL took
    9,492 genes at FDR 5% to 9,734).
    """
    import pandas as pd

    if block.shape[0] < 2 or block.shape[1] == 0:
        return
    hashes = pd.util.hash_pandas_object(block, index=False).to_numpy()
    order = np.argsort(hashes, kind="stable")
    same = np.flatnonzero(hashes[order][1:] == hashes[order][:-1])
    if not len(same):
        return
    values = block.to_numpy(dtype=np.float64)
    needed = min(REPEAT_DISTINCT, block.shape[1])
    pairs = []
    for k in same:
        first, second = sorted((int(order[k]), int(order[k + 1])))
        row = values[first]
        equal = np.array_equal(row, values[second], equal_nan=True)
        if equal and len(np.unique(row[np.isfinite(row)])) >= needed:
            pairs.append((block.index[second], block.index[first]))
    if pairs:
        position = {label: i for i, label in enumerate(block.index)}
        pairs.sort(key=lambda pair: position[pair[0]])  # in the table's order of the repeats
        shown = ", ".join(f"{str(a)!r} repeats {str(b)!r}" for a, b in pairs[:3])
        more = ", ..." if len(pairs) > 3 else ""
        raise ValueError(
            f"{what} holds {len(pairs)} sample(s) whose expression repeats another's in every "
            f"gene ({shown}{more}): the same sample under two ids (an.concat, pd.concat and "
            "reset_index, a series deposited twice); drop the repeats first "
            "(data[~data[genes].duplicated()])"
        )


def no_empty_gene_names(genes: Sequence[str], what: str = "the table") -> None:
    """Refuse a gene with an empty name: it cannot be reported, and is a lost header."""
    empty = [index for index, name in enumerate(genes) if not str(name).strip()]
    if empty:
        raise ValueError(f"{what} has {len(empty)} gene(s) with an empty name (the first at "
                         f"gene {empty[0] + 1}): name them or drop them")  # fmt: skip


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


def _odd_kind(frame: pd.DataFrame, candidates: Sequence[object]) -> list[object]:
    """Whole-number columns among a majority of decimal ones (an index, a batch, sample
    numbers among log intensities); none when most columns hold whole numbers (counts).
    """
    import pandas as pd

    numeric = [c for c in candidates if pd.api.types.is_numeric_dtype(frame[c])
               and not pd.api.types.is_bool_dtype(frame[c])]  # fmt: skip
    integers = [c for c in numeric if pd.api.types.is_integer_dtype(frame[c])]
    return integers if len(integers) * 2 < len(numeric) else []


def non_gene_columns(
    data: Any,
    not_genes: set[Any],
    asked: list[str] | None,
    symbols: Collection[str] | None = None,
) -> set[Any]:
    """A DataFrame's columns that cannot be genes, left out with a warning naming each and why
    (none when the genes are named, or for an AnnData, whose genes are its `var_names`):
    row numbers or no name; whole numbers among decimal genes; with `symbols` (the gene
    symbols and synonyms a table may hold), a numeric column named as no gene.
    """
    import pandas as pd

    if asked is not None or not isinstance(data, pd.DataFrame):
        return set()
    candidates = [c for c in data.columns if c not in not_genes]
    why: dict[Any, str] = {}
    for column in not_gene_names(data, candidates):
        why[column] = "row numbers, or no name: read a CSV with index_col=0"
    for column in _odd_kind(data, [c for c in candidates if c not in why]):
        why[column] = "whole numbers among decimal genes: an index, a batch, sample numbers"
    if symbols is not None:
        for column in candidates:
            numeric = pd.api.types.is_numeric_dtype(data[column])
            if column not in why and numeric and str(column) not in symbols:
                why[column] = "not a gene symbol of the table given"
    if why:
        said = "; ".join(f"{c!r} ({reason})" for c, reason in list(why.items())[:5])
        more = f"; and {len(why) - 5} more" if len(why) > 5 else ""
        warnings.warn(
            f"{len(why)} column(s) left out of the genes, being no gene: {said}{more} (name "
            "the genes with genes= to keep one)",
            UserWarning,
            stacklevel=5,
        )
    return set(why)

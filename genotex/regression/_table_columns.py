"""The columns of a linked table GeneAnalysis reads: genes, the trait, covariates, groups.

Each reader refuses what it cannot use in one sentence naming the column, and says what it
left out (a text column among the genes, a covariate that holds text or no value), so
that a fit never fails with a cause that is elsewhere ("the trait is constant" when every
sample had been dropped for its covariates).
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ..core import anndata_to_linked, is_anndata

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "DroppedSamplesWarning",
    "FEW_RESIDUAL_DF",
    "MIN_RESIDUAL_DF",
    "SmallSampleWarning",
    "annotations_and_genes",
    "binary_trait",
    "group_labels",
    "linked_frame",
    "not_transposed",
    "numeric_columns",
    "text_columns",
]


def linked_frame(data: Any) -> pd.DataFrame:
    """A linked table (samples x features) from a DataFrame or an AnnData (obs beside X).

    An AnnData's numeric `obs` columns come first (every one: give `anndata_to_linked`
    the columns to keep where others, such as QC metrics, are there), then its genes
    (`var_names`); a DataFrame is taken as it is.
    """
    import pandas as pd

    if isinstance(data, pd.DataFrame):
        return data
    if is_anndata(data):
        numeric = [c for c in data.obs.columns if pd.api.types.is_numeric_dtype(data.obs[c])]
        return anndata_to_linked(data, numeric)
    raise TypeError(
        f"a linked table is a pandas DataFrame (samples x features) or an AnnData, "
        f"not {type(data).__name__}"
    )


def numeric_columns(frame: pd.DataFrame, columns: Sequence[str], what: str) -> np.ndarray:
    """The columns as numbers (NaN where missing); a column holding text, or holding no value
    at all, is refused in one sentence naming it (it would drop every sample unsaid).
    """
    import pandas as pd

    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise ValueError(f"the table has no {what} column {missing[0]!r}")
    block = frame.loc[:, list(columns)].apply(pd.to_numeric, errors="coerce")
    for name in columns:
        given, numbers = frame[name], block[name]
        text = given.notna() & numbers.isna()
        if pd.api.types.is_bool_dtype(given):
            continue
        if bool(text.any()):
            shown = ", ".join(repr(str(v)) for v in pd.unique(given[text])[:3])
            raise ValueError(
                f"the {what} column {name!r} holds text ({shown}): code it as numbers first "
                "(e.g. Gender as 0 female, 1 male)"
            )
        if not bool(numbers.notna().any()):
            raise ValueError(f"the {what} column {name!r} holds no value: every sample lacks it")
    return block.to_numpy(dtype=np.float64)


#: The residual degrees of freedom below which a fit is refused, and below which it is
#: flagged: the marginal t tests divide by them, and with one or two the p-values and FDR
#: say nothing (5 samples with Age and Gender leave 1).
MIN_RESIDUAL_DF = 3
FEW_RESIDUAL_DF = 10


class SmallSampleWarning(UserWarning):
    """A fit with few residual degrees of freedom: its p-values and FDR are fragile."""


class DroppedSamplesWarning(UserWarning):
    """Samples were left out of a fit for a missing trait or covariate."""


def unique_columns(frame: pd.DataFrame, what: str) -> None:
    """Refuse a table with two columns of one name (which one is meant cannot be told)."""
    duplicated = frame.columns[frame.columns.duplicated()]
    if len(duplicated):
        name = duplicated[0]
        count = int((frame.columns == name).sum())
        raise ValueError(f"{what} has {count} columns named {name!r}: rename or drop all but one")


def annotations_and_genes(
    data: Any, not_genes: set[str], genes: Sequence[str] | None
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The sample annotations (trait, condition, covariates, groups) and the gene columns.

    An AnnData's genes are its `var_names` (never an `obs` column, such as scanpy's QC
    metrics), its annotations its `obs`. A DataFrame's genes are `genes` when given, else
    every numeric column but `not_genes` (booleans and text are annotations).
    """
    import pandas as pd

    if is_anndata(data):
        names = pd.Index(data.var_names)
        if names.has_duplicates:
            twice = names[names.duplicated()][0]
            raise ValueError(
                f"the AnnData's var_names hold duplicates ({twice!r} is there "
                f"{int((names == twice).sum())} times): make them unique first "
                "(adata.var_names_make_unique())"
            )
        not_transposed(
            names,
            data.obs.columns,
            data.obs_names,
            not_genes,
            what="the AnnData",
            transpose="adata.T",
        )
        clash = sorted(str(c) for c in not_genes if c in data.obs.columns and c in names)
        if clash:
            raise ValueError(f"the AnnData's obs column {clash[0]!r} has a gene's name (in "
                             "its var_names): rename one of them")  # fmt: skip
        block = data.to_df().astype(np.float64)
        annotations = data.obs
        unique_columns(annotations, "the AnnData's obs")
        if genes is not None:
            missing = [g for g in genes if g not in block.columns]
            if missing:
                raise ValueError(f"the AnnData has no gene {missing[0]!r} in its var_names")
            block = block.loc[:, list(genes)]
        return annotations, block
    data = linked_frame(data)  # a DataFrame as it is; anything else refused in one sentence
    not_transposed(
        data.columns, data.columns, data.index, not_genes, what="the table", transpose="data.T"
    )
    unique_columns(data, "the table")
    if genes is None:
        genes = [str(c) for c in data.columns if c not in not_genes and gene_like(data[c])]
    missing = [g for g in genes if g not in data.columns]
    if missing:
        raise ValueError(f"the table has no gene column {missing[0]!r}")
    block = data.loc[:, list(genes)].apply(pd.to_numeric, errors="coerce").astype(np.float64)
    return data, block


_SAMPLE_ID = re.compile(r"^(GSM\d+|TCGA-\w\w-\w{4}(-\w+)*)$")


def not_transposed(
    features: Any, annotations: Any, rows: Any, wanted: set[Any], *, what: str, transpose: str
) -> None:
    """Refuse a table the wrong way round (genes x samples), in one sentence naming the
    transpose: its features (gene columns, `var_names`) are sample IDs (GEO's GSM...,
    TCGA barcodes), or a column it should hold (the trait, a covariate) is a row label.
    """
    names = [str(c) for c in features]
    samples = sum(bool(_SAMPLE_ID.match(n)) for n in names)
    held, row_labels = {str(c) for c in annotations}, {str(r) for r in rows}
    wrong_way = sorted(str(t) for t in wanted if str(t) not in held and str(t) in row_labels)
    if (names and samples > len(names) / 2) or wrong_way:
        why = (f"{samples} of its {len(names)} columns are sample IDs" if samples > len(names) / 2
               else f"{wrong_way[0]!r} is a row, not a column")  # fmt: skip
        raise ValueError(f"{what} looks genes x samples ({why}): give it samples x genes "
                         f"({transpose})")  # fmt: skip


def text_columns(data: Any, not_genes: set[str], asked: Sequence[str] | None) -> list[str]:
    """A DataFrame's columns left out of the genes for holding text (annotations such as a
    tissue); one that also holds some numbers, most likely a damaged gene column, is said in
    a warning naming it (0.8.0 dropped it unsaid).
    """
    import pandas as pd

    if asked is not None or not isinstance(data, pd.DataFrame):
        return []
    left = [
        c for c in data.columns
        if c not in not_genes and not pd.api.types.is_bool_dtype(data[c])
        and not gene_like(data[c])
    ]  # fmt: skip
    partly = [str(c) for c in left if pd.to_numeric(data[c], errors="coerce").notna().any()]
    if partly:
        warnings.warn(
            f"{len(partly)} columns hold text among numbers and are left out of the genes: "
            f"{', '.join(repr(c) for c in partly[:5])}{', ...' if len(partly) > 5 else ''} "
            "(convert them with pd.to_numeric to keep them)",
            UserWarning,
            stacklevel=4,
        )
    texts = [str(c) for c in left if str(c) not in partly]
    if texts:  # annotations (a tissue), or a gene read as text: said either way, never unsaid
        warnings.warn(
            f"{len(texts)} column(s) hold text only and are left out of the genes as "
            f"annotations: {', '.join(repr(c) for c in texts[:5])}"
            f"{', ...' if len(texts) > 5 else ''} (text_columns_; convert a gene with "
            "pd.to_numeric to keep it)",
            UserWarning,
            stacklevel=4,
        )
    return [str(c) for c in left]


def gene_like(column: pd.Series) -> bool:
    """A column that holds gene values: numeric (not boolean), or text most of which are
    numbers (a damaged gene column, refused later with its count, never passed over).
    """
    import pandas as pd

    if pd.api.types.is_bool_dtype(column):
        return False
    if pd.api.types.is_numeric_dtype(column):
        return True
    return bool(pd.to_numeric(column, errors="coerce").notna().mean() > 0.5)


def binary_trait(annotations: pd.DataFrame, name: str, case: str | None) -> np.ndarray:
    """The trait's values coded 1 (the case) and 0, NaN where missing; anything else refused
    in one sentence (GenoTEX traits are binary).
    """
    import pandas as pd

    if name not in annotations.columns:
        if name in annotations.index:
            raise ValueError(
                f"the table has no trait column {name!r} but a row of that name: is it genes "
                "x samples? Transpose it (samples as rows)"
            )
        raise ValueError(f"the table has no trait column {name!r}")
    column = annotations[name]
    if pd.api.types.is_bool_dtype(column):
        return column.astype(np.float64).to_numpy()
    numbers = pd.to_numeric(column, errors="coerce")
    text = not pd.api.types.is_numeric_dtype(column) and bool(
        (numbers.isna() & column.notna()).any()
    )
    if text:
        levels = sorted(str(v) for v in pd.unique(column.dropna()))
        shown = ", ".join(repr(v) for v in levels[:5])
        if len(levels) != 2:
            raise ValueError(
                f"the trait column {name!r} holds {len(levels)} text levels ({shown}); a GenoTEX "
                "trait is binary: code it 0/1"
            )
        if case is None or case not in levels:
            asked = "" if case is None else f"case={case!r} is not one of them; "
            raise ValueError(
                f"the trait column {name!r} holds text ({shown}): {asked}name the case level, "
                f"e.g. GeneAnalysis({name!r}, case={levels[-1]!r})"
            )
        coded = (column.astype(str) == case).astype(np.float64)
        return coded.where(column.notna()).to_numpy(dtype=np.float64)
    values = numbers.to_numpy(dtype=np.float64)
    found = np.unique(values[np.isfinite(values)])
    if not set(found.tolist()) <= {0.0, 1.0}:
        shown = ", ".join(f"{v:g}" for v in found[:6])
        raise ValueError(
            f"the trait column {name!r} holds {len(found)} values ({shown}); a GenoTEX trait is "
            "binary: code it 0 (control) and 1 (case), or give continuous=True for a number"
        )
    return values


def group_labels(annotations: pd.DataFrame, column: str) -> np.ndarray:
    """Each sample's group, as text; a sample with no group is refused in one sentence."""
    import pandas as pd

    if column not in annotations.columns:
        raise ValueError(f"the table has no groups column {column!r}")
    values = annotations[column]
    missing = int(pd.isna(values).sum())
    if missing:
        raise ValueError(
            f"the groups column {column!r} has {missing} samples without a group: give each "
            "sample its group, or leave those samples out"
        )
    return values.astype(str).to_numpy()

"""AnnData, the container of the field's notebooks (scanpy, decoupler, muon), and genotex's tables.

A cohort's linked table (samples x [trait, Age, Gender, genes]) is one AnnData:
`X` the genes (samples x genes), `obs` the clinical columns, `uns["genotex"]`
where it came from. `anndata` is an optional dependency (`pip install
'genotex[anndata]'`), imported only here and only when asked.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ._errors import GenotexError, extra_hint

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "CLINICAL_COLUMNS",
    "anndata_to_linked",
    "cohort_label",
    "is_anndata",
    "linked_to_anndata",
]

#: The linked table's columns that are not genes, beside the trait.
CLINICAL_COLUMNS = ("Age", "Gender")


def is_anndata(data: object) -> bool:
    """Whether `data` is an AnnData (without importing anndata)."""
    return type(data).__name__ == "AnnData" and hasattr(data, "obs") and hasattr(data, "var")


def _anndata() -> Any:
    """The anndata module, ready to write what genotex makes.

    Under pandas 3 every text index and column is a `StringArray`, which anndata
    0.11 and later write and read, but only once `allow_write_nullable_strings`
    is on (anndata 0.12.6 refuses `write_h5ad` otherwise, for any AnnData): genotex
    turns it on, so its AnnData (and the session's others) can be saved. Such a
    file needs anndata 0.11 or later to be read.
    """
    try:
        import anndata
    except ImportError:  # pragma: no cover - depends on the installation
        raise GenotexError(f"AnnData needs the anndata package: {extra_hint('anndata')}") from None
    import pandas as pd

    settings: Any = getattr(anndata, "settings", None)
    pandas_3 = int(pd.__version__.split(".")[0]) >= 3
    if pandas_3 and hasattr(settings, "allow_write_nullable_strings"):
        settings.allow_write_nullable_strings = True
    return anndata


def linked_to_anndata(
    linked: pd.DataFrame,
    *,
    obs_columns: Sequence[str],
    uns: Mapping[str, Any] | None = None,
) -> Any:
    """A linked table as an AnnData: `obs_columns` (present ones) in `obs`, the rest in `X`.

    The values are the table's float64 numbers, unchanged; the sample and gene
    labels become `obs_names` and `var_names`.
    """
    import pandas as pd

    if is_anndata(linked):
        raise TypeError("it is already an AnnData: linked_to_anndata takes a linked DataFrame")
    if not isinstance(linked, pd.DataFrame):
        raise TypeError(f"a linked table is a pandas DataFrame, not {type(linked).__name__}")
    anndata = _anndata()
    clinical = [c for c in obs_columns if c in linked.columns]
    genes = [c for c in linked.columns if c not in clinical]
    obs = linked.loc[:, clinical].copy()
    obs.index = obs.index.astype(str)
    var = pd.DataFrame(index=pd.Index([str(g) for g in genes]))
    matrix = linked.loc[:, genes].to_numpy(dtype=np.float64, copy=True)  # writable, its own
    return anndata.AnnData(X=matrix, obs=obs, var=var, uns={"genotex": dict(uns or {})})


def anndata_to_linked(adata: Any, columns: Sequence[str] | None = None) -> pd.DataFrame:
    """An AnnData as a linked table: the `obs` columns named in `columns` (the trait, Age,
    Gender, covariates: those the AnnData has) first, then its genes.

    Only those `obs` columns are carried: any other (scanpy's QC metrics such as
    `total_counts`, free-text characteristics) is an annotation, never a column of the
    table, where it would be taken for a gene. One of them that shares a gene's name is
    refused, naming it (0.11 dropped it unsaid). A linked table holds numbers: a carried
    column holding text (a stage, "case"/"control") is refused, naming it and its values
    (0.14 made them NaN, and a fit then said every sample lacked it); booleans become 0/1.
    `GeneAnalysis` reads such columns from the AnnData itself (`case=`, a formula's
    `C(stage)`).

    Without `columns` (0.10's call), every numeric `obs` column is carried, with a
    `FutureWarning`: `columns` is required from 1.0.
    """
    import pandas as pd

    if not is_anndata(adata):
        raise TypeError(f"not an AnnData: {type(adata).__name__}")
    if columns is None:
        columns = [c for c in adata.obs.columns if pd.api.types.is_numeric_dtype(adata.obs[c])]
        warnings.warn(
            "anndata_to_linked(adata) without columns carries every numeric obs column, "
            f"scanpy's QC metrics among them ({len(columns)} here), which a fit would take for "
            "genes: pass columns=[the trait, 'Age', 'Gender', ...]; columns is required from 1.0",
            FutureWarning,
            stacklevel=2,
        )
    genes = adata.to_df()
    carried = [c for c in columns if c in adata.obs.columns]
    clash = [c for c in carried if c in genes.columns]
    if clash:
        raise ValueError(f"the AnnData's obs column {clash[0]!r} has a gene's name (in its "
                         "var_names): rename one of them")  # fmt: skip
    given = adata.obs.loc[:, carried]
    obs = given.apply(pd.to_numeric, errors="coerce").astype(np.float64)
    for name in carried:
        text = given[name].notna().to_numpy() & obs[name].isna().to_numpy()
        if text.any():
            shown = ", ".join(repr(str(v)) for v in pd.unique(given[name][text])[:3])
            raise ValueError(
                f"the AnnData's obs column {name!r} holds text ({shown}): a linked table holds "
                "numbers; code it first (e.g. 0 control, 1 case), or give the AnnData to "
                "GeneAnalysis itself (case=, or C(...) in a design formula)"
            )
    return pd.concat([obs, genes.astype(np.float64)], axis=1)


def cohort_label(info: Any, samples: int | None = None) -> str:
    """How a figure names a cohort from its AnnData's `uns["genotex"]`: the GEO series, or a
    TCGA cohort's Xena folder (never the bare "Xena"); with `samples` fewer than the cohort
    holds, "(subset: n of N samples)". "in-memory" when nothing says where it came from.
    """
    info = info if isinstance(info, Mapping) else {}
    cohort = str(info.get("cohort") or "in-memory")[:80]
    record = info.get("cohort_info") if isinstance(info.get("cohort_info"), Mapping) else {}
    if cohort == "Xena":
        note = str(record.get("note") or "")
        found = re.search(r"TCGA Xena (\S+?);", note)
        source = str(info.get("source") or "")
        cohort = found.group(1) if found else (Path(source).name if source else "TCGA (Xena)")
    size = record.get("sample_size")
    if samples is not None and isinstance(size, int) and 0 < samples < size:
        cohort += f" (subset: {samples} of {size} samples)"
    return cohort

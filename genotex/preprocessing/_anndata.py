"""A cohort's preprocessed result as one AnnData: samples x genes, clinical columns in `obs`.

`cohort_anndata` reads what `genotex preprocess` wrote for a cohort (its linked
table and its `cohort_info.json` record), and with the benchmark's `input/` the
cohort's raw characteristics (GEO series matrix) beside the trait, Age and
Gender. `uns["genotex"]` says where it came from. The way back is
`genotex.core.anndata_to_linked` (and every call that takes a linked table
takes the AnnData itself).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .._version import __version__
from ..core import (
    CLINICAL_COLUMNS,
    CohortInfo,
    GenotexError,
    check_safe_name,
    file_sha256,
    linked_to_anndata,
    read_json,
    read_table,
)
from ._cohort_files import find_matrix
from ._geo import read_series_matrix
from ._pipeline import geo_gene_table
from ._recipe import Recipe

__all__ = ["cohort_anndata"]


def _record(folder: Path, cohort: str) -> dict[str, Any] | None:
    path = folder / "cohort_info.json"
    if not path.is_file():
        return None
    info, _ = CohortInfo.from_dict(read_json(path))
    record = info.records.get(cohort)
    return None if record is None else record.to_dict()


def _raw(
    input_dir: Path | None,
    trait: str,
    cohort: str,
    recipe: Recipe | str | Path | None,
    synonyms: Mapping[str, str] | None,
) -> tuple[Any, dict[str, int]]:
    """(characteristics: samples x rows as text, the probe mapping's counts) of a GEO cohort's
    raw files, the series matrix read once: mapped again when the recipe and synonyms are
    given, else only its metadata. (None, {}) where there is no such GEO cohort.
    """
    cohort_dir = None if input_dir is None else input_dir / "GEO" / trait / cohort
    if cohort_dir is None or not cohort_dir.is_dir():
        return None, {}
    mapping: dict[str, int] = {}
    if recipe is not None and synonyms is not None:
        recipe = recipe if isinstance(recipe, Recipe) else Recipe.read(recipe)
        genes, characteristics, _ = geo_gene_table(
            cohort_dir, recipe, synonyms, input_root=input_dir
        )
        mapping = dict(genes.attrs.get("mapping", {}))
    else:
        characteristics = read_series_matrix(
            find_matrix(cohort_dir), expression=False
        ).characteristics
    table = characteristics.T
    table.columns = [f"characteristics_{i}" for i in range(table.shape[1])]
    return table, mapping


def cohort_anndata(
    preprocess_dir: str | Path,
    trait: str,
    cohort: str,
    *,
    input_dir: str | Path | None = None,
    recipe: Recipe | str | Path | None = None,
    synonyms: Mapping[str, str] | None = None,
) -> Any:
    """One preprocessed cohort as an AnnData.

    Parameters
    ----------
    preprocess_dir
        The preprocess folder (`<trait>/<cohort>.csv`, `<trait>/cohort_info.json`).
    trait, cohort
        Which table: a trait's folder name and a cohort ID (`GSE...` or `Xena`).
    input_dir
        The benchmark's `input/`: a GEO cohort's characteristics rows join `obs`
        as text (`characteristics_0`, ...), for the samples of the table.
    recipe, synonyms
        With `input_dir`, a GEO cohort's recipe and the synonym table: its probes
        are mapped again to count them (`uns["genotex"]["mapping"]`: probes in the
        matrix, probes mapped to a symbol, genes; the QC plot shows them).

    Returns
    -------
    anndata.AnnData
        `X` the genes (float64, as written), `obs` the trait, Age and Gender (and
        the characteristics), `uns["genotex"]`: trait, cohort, the cohort's record,
        the linked file and its sha256, the genotex version (and, with
        `input_dir`, `raw_samples`: the samples of the series matrix).

    Raises
    ------
    GenotexError
        The cohort has no linked table (it is not usable), or it cannot be read.
    UnsafeNameError
        The trait or the cohort is not one folder's or file's name (`../Obesity/GSE1`).
    """
    import pandas as pd

    check_safe_name(trait, what="trait name")  # one folder each: no `..`, no `/`
    check_safe_name(cohort, what="cohort ID")
    folder = Path(preprocess_dir) / trait
    path = folder / f"{cohort}.csv"
    if not path.is_file():
        raise GenotexError(f"{cohort} of {trait} has no linked table (is it usable?)", path=path)
    table = read_table(path, features_are_rows=False)
    linked = pd.DataFrame(table.values, index=table.row_labels, columns=table.column_labels)
    uns = {
        "trait": trait,
        "cohort": cohort,
        "cohort_info": _record(folder, cohort),
        "linked_file": str(path),
        "linked_sha256": file_sha256(path),
        "genotex_version": __version__,
    }
    adata = linked_to_anndata(linked, obs_columns=(trait, *CLINICAL_COLUMNS), uns=uns)
    raw, mapping = _raw(
        None if input_dir is None else Path(input_dir), trait, cohort, recipe, synonyms
    )
    if mapping:
        adata.uns["genotex"]["mapping"] = mapping
    if raw is not None:
        adata.uns["genotex"]["raw_samples"] = int(raw.shape[0])
        raw.index = raw.index.astype(str)
        for column in raw.columns:
            adata.obs[column] = raw[column].reindex(adata.obs_names).astype(object)
    return adata


def label_groups(adata: Any, columns: Mapping[str, tuple[str, str]] | None = None) -> Any:
    """A copy of a cohort's AnnData whose 0/1 `obs` columns have a labelled twin, as the
    categories scanpy's group tools need (`sc.tl.rank_genes_groups(adata, groupby=...)`).

    The numeric columns stay as they are (GeneAnalysis and the linked table read them);
    each labelled one is `<column>_group`, a pandas categorical, missing where the number
    is. By default the trait (from `uns["genotex"]["trait"]`, else every column named in
    `columns`) is "control"/"case" and Gender "female"/"male" (GenoTEX codes female 0,
    male 1).

    Parameters
    ----------
    adata
        An AnnData, e.g. from `cohort_anndata`.
    columns
        `{column: (label of 0, label of 1)}`; default: the trait and Gender.
    """
    import pandas as pd

    labelled = adata.copy()
    if columns is None:
        trait = (labelled.uns.get("genotex") or {}).get("trait")
        columns = {**({str(trait): ("control", "case")} if trait else {}),
                   "Gender": ("female", "male")}  # fmt: skip
    for column, (zero, one) in columns.items():
        if column not in labelled.obs.columns:
            continue
        values = pd.to_numeric(labelled.obs[column], errors="coerce")
        odd = sorted(set(values.dropna().unique()) - {0.0, 1.0})
        if odd:
            raise ValueError(
                f"the obs column {column!r} holds {float(odd[0]):g}, not only 0 and 1: it has no "
                "groups"
            )
        names = values.map({0.0: zero, 1.0: one})
        labelled.obs[f"{column}_group"] = pd.Categorical(names, categories=[zero, one])
    return labelled

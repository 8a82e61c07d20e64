"""From gene and clinical tables to a cohort's outputs (preprocessing.md § Linking, § Outputs).

Linking, the missing-value steps, the bias test, the files each outcome writes,
and `cohort_info.json` records written under a file lock, atomically, so that
concurrent writers never lose another cohort's record.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..core import (
    CohortInfo,
    CohortRecord,
    GenotexError,
    Outcome,
    anndata_to_linked,
    is_anndata,
    output_path,
    write_table,
)

__all__ = [
    "CohortOutcome",
    "handle_missing_values",
    "is_biased",
    "link",
    "cohort_paths",
    "decide",
    "drop_biased_covariates",
    "remove_cohort",
    "write_cohort",
]

COVARIATES = ("Age", "Gender")
#: A gene missing in more than this share of the samples is dropped (preprocessing.md).
MAX_GENE_MISSING = 0.2
#: A sample missing more than this share of the remaining genes is dropped.
MAX_SAMPLE_MISSING = 0.05
#: A binary variable is biased when its rarer class is under this share of the samples ...
RARE_CLASS_SHARE = 0.1
#: ... and under this many samples.
RARE_CLASS_COUNT = 5
#: A linked table needs more columns than this (trait, Age, Gender and genes) to be usable.
MIN_LINKED_COLUMNS = 4


def link(clinical: pd.DataFrame, genes: pd.DataFrame) -> pd.DataFrame:
    """Samples x [clinical rows..., genes...]: the clinical rows stacked over the gene rows,
    transposed.
    """
    shared = [s for s in clinical.columns if s in set(genes.columns)]
    return pd.concat([clinical[shared], genes[shared]], axis=0).T


def handle_missing_values(linked: pd.DataFrame | Any, trait: str) -> pd.DataFrame:
    """Drop samples without the trait, genes missing in >20%, samples missing >5% of genes; impute.

    Age gets its mean, Gender its mode (dropped when all missing), genes their
    means. Done on arrays: pandas' per-column `fillna` takes ~30 s on a
    20,000-gene table. `linked` is a linked table or an AnnData (its numeric
    `obs` and its genes); the result is a linked table.
    """
    if is_anndata(linked):
        linked = anndata_to_linked(linked, (trait, *COVARIATES))
    covariates = [c for c in linked.columns if c in (trait, *COVARIATES)]
    gene_columns = [c for c in linked.columns if c not in (trait, *COVARIATES)]
    df = linked[linked[trait].notna()]
    genes = df[gene_columns].to_numpy(dtype=np.float64)
    with np.errstate(invalid="ignore"):
        keep_genes = (
            np.isnan(genes).mean(axis=0) <= MAX_GENE_MISSING
            if len(df)
            else np.zeros(len(gene_columns), bool)
        )
        genes = genes[:, keep_genes]
        sample_missing = (
            np.isnan(genes).mean(axis=1) if genes.shape[1] else np.full(len(df), np.nan)
        )
    keep_samples = sample_missing <= MAX_SAMPLE_MISSING
    genes = genes[keep_samples]
    clinical = df[covariates][keep_samples].copy()
    if "Age" in clinical.columns:
        clinical["Age"] = clinical["Age"].fillna(clinical["Age"].mean())
    if "Gender" in clinical.columns:
        mode = clinical["Gender"].mode()
        if len(mode):
            clinical["Gender"] = clinical["Gender"].fillna(mode[0])
        else:
            clinical = clinical.drop(columns="Gender")
    with np.errstate(invalid="ignore"):
        means = np.nanmean(genes, axis=0) if len(genes) else np.full(genes.shape[1], np.nan)
    genes = np.where(np.isnan(genes), means, genes)
    kept_names = [c for c, k in zip(gene_columns, keep_genes, strict=True) if k]
    gene_frame = pd.DataFrame(
        genes, index=clinical.index, columns=pd.Index(kept_names, dtype=object)
    )
    return pd.concat([clinical, gene_frame], axis=1)


def is_biased(values: pd.Series) -> bool:
    """Binary: fewer than 2 classes, or the rarer class < 10% and < 5 samples; else: all values
    equal.
    """
    counts = values.dropna().value_counts()
    if len(counts) <= 1:
        return True
    if len(counts) == 2:
        rare = counts.min()
        return bool(rare < RARE_CLASS_SHARE * counts.sum() and rare < RARE_CLASS_COUNT)
    return False


def drop_biased_covariates(linked: pd.DataFrame) -> pd.DataFrame:
    """The linked table without `Age` or `Gender` when that covariate is itself biased."""
    for covariate in COVARIATES:
        if covariate in linked.columns and is_biased(linked[covariate]):
            linked = linked.drop(columns=covariate)
    return linked


@dataclass(frozen=True)
class CohortOutcome:
    """What preprocessing decided for one cohort, and the tables it wrote."""

    trait: str
    cohort: str
    record: CohortRecord
    gene_data: pd.DataFrame | None = None
    clinical_data: pd.DataFrame | None = None
    linked: pd.DataFrame | None = None
    details: str = ""  # how it was read (the gene column, the Age and Gender sources)

    @property
    def outcome(self) -> Outcome:
        """Usable (with its sample count) or not usable (with the first reason)."""
        r = self.record
        if r.is_usable:
            return Outcome("usable", f"{r.sample_size} samples")
        if not r.is_gene_available:
            return Outcome("not usable", "no usable gene data")
        if not r.is_trait_available:
            return Outcome("not usable", "trait not available")
        if r.is_biased:
            return Outcome("not usable", "trait biased")
        return Outcome("not usable")

    def __repr__(self) -> str:
        shapes = ", ".join(
            f"{name} {frame.shape[0]}x{frame.shape[1]}"
            for name, frame in (
                ("gene_data", self.gene_data),
                ("clinical_data", self.clinical_data),
                ("linked", self.linked),
            )
            if frame is not None
        )
        return f"CohortOutcome({self.trait}/{self.cohort}: {self.outcome}; {shapes or 'no tables'})"


def decide(
    trait: str,
    cohort: str,
    genes: pd.DataFrame | Any | None,
    clinical: pd.DataFrame | None = None,
    *,
    note: str = "",
    index_name: str | None = None,
) -> CohortOutcome:
    """The outcome of a cohort from its normalized gene table and its clinical rows (or their
    absence).

    `genes` is genes x samples with `clinical` features x samples, or one AnnData
    (samples x genes, the clinical columns in `obs`) with `clinical` left out.
    """
    if is_anndata(genes):
        if clinical is not None:
            raise ValueError("an AnnData holds the clinical columns itself: give no clinical")
        linked = anndata_to_linked(genes, (trait, *COVARIATES))
        features = [c for c in (trait, *COVARIATES) if c in linked.columns]
        clinical = linked.loc[:, features].T if trait in features else None
        genes = linked.drop(columns=features).T
    if genes is None or genes.empty:
        return CohortOutcome(
            trait,
            cohort,
            CohortRecord.decide(cohort, gene=False, trait=clinical is not None, note=note),
        )
    if clinical is None or trait not in clinical.index:
        return CohortOutcome(
            trait,
            cohort,
            CohortRecord.decide(cohort, gene=True, trait=False, note=note),
            gene_data=genes,
        )
    linked = handle_missing_values(link(clinical, genes), trait)
    if index_name:
        linked.index.name = index_name
    if linked.empty or linked.shape[1] <= MIN_LINKED_COLUMNS:
        return CohortOutcome(
            trait,
            cohort,
            CohortRecord.decide(cohort, gene=False, trait=not linked.empty, note=note),
        )
    linked = drop_biased_covariates(linked)
    biased = is_biased(linked[trait])
    record = CohortRecord.decide(
        cohort,
        gene=True,
        trait=True,
        biased=biased,
        age="Age" in linked.columns,
        gender="Gender" in linked.columns,
        size=len(linked),
        note=note,
    )
    return CohortOutcome(trait, cohort, record, genes, clinical, None if biased else linked)


def _write_csv(path: Path, frame: pd.DataFrame | None) -> None:
    if frame is None:
        path.unlink(missing_ok=True)  # a re-run replaces what an earlier outcome wrote
        return
    if frame.index.has_duplicates or frame.columns.has_duplicates:
        raise GenotexError("the table to write has repeated row or column labels", path=path)
    write_table(path, frame)


def cohort_paths(out_root: str | Path, trait: str, cohort: str) -> dict[str, Path]:
    """Where a cohort's gene, clinical and linked CSVs and its record go, all inside `out_root`."""
    return {
        "gene": output_path(out_root, trait, "gene_data", f"{cohort}.csv"),
        "clinical": output_path(out_root, trait, "clinical_data", f"{cohort}.csv"),
        "linked": output_path(out_root, trait, f"{cohort}.csv"),
        "record": output_path(out_root, trait, "cohort_info.json"),
    }


def write_cohort(out_root: str | Path, outcome: CohortOutcome) -> None:
    """Write the outcome's CSVs (and remove stale ones of this cohort), then its record.

    The linked table's row count is the record's `sample_size`, always.
    """
    paths = cohort_paths(out_root, outcome.trait, outcome.cohort)
    if outcome.linked is not None and len(outcome.linked) != outcome.record.sample_size:
        raise GenotexError(
            f"the linked table has {len(outcome.linked)} rows but the record says "
            f"{outcome.record.sample_size} samples",
            path=paths["linked"],
        )
    _write_csv(paths["gene"], outcome.gene_data)
    _write_csv(paths["clinical"], outcome.clinical_data)
    _write_csv(paths["linked"], outcome.linked)
    CohortInfo.update(paths["record"], outcome.record)


def remove_cohort(out_root: str | Path, trait: str, cohort: str) -> None:
    """Remove a cohort's CSVs and record: a failed re-run must not leave an old result behind."""
    paths = cohort_paths(out_root, trait, cohort)
    for kind in ("gene", "clinical", "linked"):
        paths[kind].unlink(missing_ok=True)
    CohortInfo.remove(paths["record"], cohort)

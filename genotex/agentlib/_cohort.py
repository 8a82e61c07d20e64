"""A cohort's tables joined, cleaned, judged and saved: each call one transformation, and
the save writes what the agent decided (no hidden decision).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from ..core import CohortRecord
from ..preprocessing import (
    CohortOutcome,
    drop_biased_covariates,
    is_biased,
    link,
    write_cohort,
)
from ..preprocessing import handle_missing_values as _handle_missing_values

__all__ = [
    "geo_link_clinical_genetic_data",
    "handle_missing_values",
    "judge_and_remove_biased_features",
    "preview",
    "validate_and_save_cohort_info",
]


def preview(table: pd.DataFrame | pd.Series, n: int = 5) -> dict[str, list]:
    """The first `n` values of each column (of a Series: its own), to print and read."""
    if isinstance(table, pd.Series):
        return {str(table.name): table.head(n).tolist()}
    return {str(column): table[column].head(n).tolist() for column in table.columns}


def geo_link_clinical_genetic_data(clinical: pd.DataFrame, genes: pd.DataFrame) -> pd.DataFrame:
    """Samples x [trait, Age, Gender, genes...]: the clinical rows over the gene rows of the
    samples both tables have, transposed. Works for a TCGA cohort's tables too.
    """
    return link(clinical, genes)


def handle_missing_values(linked: pd.DataFrame, trait: str) -> pd.DataFrame:
    """The linked table with its missing values handled, in this order: samples without the
    trait dropped; genes missing in more than 20% of the samples dropped; samples missing more
    than 5% of the remaining genes dropped; then a missing ``Age`` gets the mean age, a
    missing ``Gender`` the most frequent gender (the column is dropped when all are missing),
    a missing gene value the gene's mean.
    """
    return _handle_missing_values(linked, trait)


def judge_and_remove_biased_features(linked: pd.DataFrame, trait: str) -> tuple[bool, pd.DataFrame]:
    """``(trait_is_biased, linked)``: whether the trait is too uneven to study, and the table
    without ``Age`` or ``Gender`` when that covariate is itself biased.

    A binary variable is biased when it has fewer than two classes, or when its rarer
    class is under 10% of the samples and under 5 samples; a continuous one when all
    its values are equal.
    """
    if trait not in linked.columns:
        raise KeyError(f"the linked table has no column {trait!r}")
    kept = drop_biased_covariates(linked)
    return is_biased(kept[trait]), kept


def _checked_linked(linked: pd.DataFrame, trait: str) -> None:
    if trait not in linked.columns:
        raise ValueError(f"the linked table has no column {trait!r}")
    if linked.empty or linked[trait].isna().any():
        raise ValueError("the linked table is empty or has samples without the trait: "
                         "handle its missing values first")  # fmt: skip


def validate_and_save_cohort_info(
    out_dir: str,
    trait: str,
    cohort: str,
    *,
    is_gene_available: bool,
    is_trait_available: bool,
    is_biased: bool | None = None,
    linked_data: pd.DataFrame | None = None,
    gene_data: pd.DataFrame | None = None,
    clinical_data: pd.DataFrame | None = None,
    note: str = "",
) -> bool:
    """Save a cohort's CSVs and its record in ``<out_dir>/<trait>/cohort_info.json``; return
    whether the cohort is usable.

    The record says what you decided: usable means gene data and the trait are available
    and the trait is not biased (then `is_biased` must be given, and `linked_data`: its rows
    are the sample size, its ``Age`` and ``Gender`` columns say which covariates it has).
    `gene_data` (genes x samples) and `clinical_data` (features x samples) are saved when
    given; the linked table only for a usable cohort. Say why in `note` when it is not usable.
    """
    available = bool(is_gene_available) and bool(is_trait_available)
    if available and not isinstance(is_biased, bool):
        raise ValueError("is_biased must be True or False when gene data and the trait are "
                         "available (judge_and_remove_biased_features says it)")  # fmt: skip
    usable = available and is_biased is False
    if usable and linked_data is None:
        raise ValueError("a usable cohort needs its linked_data")
    columns = linked_data.columns if linked_data is not None else pd.Index([])
    if linked_data is not None and available:
        _checked_linked(linked_data, trait)
    record = CohortRecord.decide(
        cohort, gene=bool(is_gene_available), trait=bool(is_trait_available), biased=is_biased,
        age="Age" in columns, gender="Gender" in columns,
        size=len(linked_data) if linked_data is not None else None, note=str(note),
    )  # fmt: skip
    linked = linked_data.copy() if usable and linked_data is not None else None
    if linked is not None and cohort == "Xena":
        linked.index.name = "sampleID"  # the layout's name for TCGA sample barcodes
    write_cohort(
        Path(out_dir), CohortOutcome(trait, cohort, record, gene_data, clinical_data, linked)
    )
    return usable

"""A TCGA (UCSC Xena) cohort, one transformation a call: its files, its tables, candidate
clinical columns, and the standard converters of the trait, age and gender.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from ..core import GenotexError
from ..preprocessing import age_from_cell, gender_from_cell, read_xena, trait_from_barcode

__all__ = [
    "tcga_convert_age",
    "tcga_convert_gender",
    "tcga_convert_trait",
    "tcga_find_candidate_columns",
    "tcga_get_relevant_filepaths",
    "tcga_read_cohort",
    "tcga_select_clinical_features",
]


def tcga_get_relevant_filepaths(cohort_dir: str) -> tuple[str, str]:
    """The clinical matrix and the expression table of a Xena cohort folder.

    Returns ``(clinical_file, genetic_file)``: the file ending in ``clinicalMatrix``
    and the ``*PANCAN*`` (else the only other) expression file.
    """
    folder = Path(cohort_dir)
    files = sorted(p for p in folder.iterdir() if p.is_file()) if folder.is_dir() else []
    clinical = [p for p in files if p.name.endswith("clinicalMatrix")]
    others = [p for p in files if p not in clinical]
    genetic = [p for p in others if "PANCAN" in p.name] or others
    if not clinical or not genetic:
        raise GenotexError("is not a Xena cohort folder (a clinicalMatrix and an expression file)",
                           path=folder)  # fmt: skip
    return str(clinical[0]), str(genetic[0])


def tcga_read_cohort(cohort_dir: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``(clinical, genetic)`` of a Xena cohort: samples x clinical columns (text, the sample
    barcodes as the index), and gene symbols x samples (numbers).
    """
    cohort = read_xena(cohort_dir)
    return cohort.clinical.copy(), cohort.expression.copy()


def tcga_find_candidate_columns(clinical: pd.DataFrame, keywords: Sequence[str]) -> list[str]:
    """The clinical columns whose name contains any keyword (case ignored), in table order.

    For example ``tcga_find_candidate_columns(clinical, ["age"])``; preview them to choose.
    """
    words = [k.lower() for k in keywords]
    return [str(c) for c in clinical.columns if any(w in str(c).lower() for w in words)]


def tcga_convert_trait(sample_id: str) -> float:
    """The trait from a sample barcode's last two digits: 01-09 tumour (1), 10-19 normal (0),
    anything else None (as NaN).
    """
    return trait_from_barcode(str(sample_id))


def tcga_convert_age(value: object) -> float:
    """Age in years: the first whole number in the cell's text (NaN when there is none)."""
    return age_from_cell(value)


def tcga_convert_gender(value: object) -> float:
    """Gender: ``female`` 0, ``male`` 1 (case ignored), anything else NaN."""
    return gender_from_cell(value)


def tcga_select_clinical_features(
    clinical: pd.DataFrame,
    trait: str,
    age_col: str | None = None,
    gender_col: str | None = None,
) -> pd.DataFrame:
    """The clinical table: rows `trait` (from each barcode, `tcga_convert_trait`), ``Age``
    (`age_col` by `tcga_convert_age`) and ``Gender`` (`gender_col` by `tcga_convert_gender`),
    those whose column is given, x samples.
    """
    rows = {trait: pd.Series([tcga_convert_trait(s) for s in clinical.index], index=clinical.index)}
    for name, column, convert in (("Age", age_col, tcga_convert_age),
                                  ("Gender", gender_col, tcga_convert_gender)):  # fmt: skip
        if column is None:
            continue
        if column not in clinical.columns:
            raise KeyError(f"the clinical table has no column {column!r}")
        rows[name] = clinical[column].map(convert)
    return pd.DataFrame(rows).T.astype(float)

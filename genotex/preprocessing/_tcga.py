"""TCGA cohorts from UCSC Xena, fully automatic (preprocessing.md § TCGA)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import polars as pl

from ..core import GenotexError, blank_as_missing

__all__ = [
    "XenaCohort",
    "XenaError",
    "age_from_cell",
    "choose_age_column",
    "clinical_features",
    "find_xena_folder",
    "gender_from_cell",
    "is_xena_folder_of",
    "read_xena",
    "trait_from_barcode",
]

AGE_COLUMN = "age_at_initial_pathologic_diagnosis"
GENDER_COLUMN = "gender"


class XenaError(GenotexError):
    """A Xena cohort folder without its files, or with unreadable ones."""


def _key(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", name.lower())


def find_xena_folder(tcga_root: str | Path, trait: str) -> Path | None:
    """The Xena folder of a trait: `TCGA_<name>_(CODE)` whose <name> equals the trait, ignoring case
    and punctuation.
    """
    root = Path(tcga_root)
    if not root.is_dir():
        return None
    for folder in sorted(p for p in root.iterdir() if p.is_dir()):
        if is_xena_folder_of(folder.name, trait):
            return folder
    return None


def is_xena_folder_of(name: str, trait: str) -> bool:
    """Whether a Xena folder's name (`TCGA_<name>_(CODE)`) is the trait's: its <name> equal to
    the trait, ignoring case and every character that is not a letter or digit.
    """
    bare = re.sub(r"_\([^)]*\)$", "", re.sub(r"^TCGA_", "", name))
    return _key(bare) == _key(trait)


@dataclass(frozen=True)
class XenaCohort:
    folder: Path
    clinical: pd.DataFrame  # samples x clinical columns (text)
    expression: pd.DataFrame  # genes x samples (float)


def _one(folder: Path, pattern: str) -> Path:
    found = sorted(p for p in folder.iterdir() if p.is_file() and re.search(pattern, p.name))
    if not found:
        raise XenaError(f"has no file matching {pattern!r}", path=folder)
    return found[0]


def read_xena(folder: str | Path) -> XenaCohort:
    """The clinical matrix (`*clinicalMatrix`) and expression (`*PANCAN*`) of a Xena folder."""
    folder = Path(folder)
    clinical_path = _one(folder, r"clinicalMatrix$")
    expression_path = _one(folder, r"PANCAN")
    try:
        clinical = pd.read_csv(
            clinical_path, sep="\t", index_col=0, dtype=str, keep_default_na=False
        )
    except (OSError, ValueError, pd.errors.ParserError) as exc:
        raise XenaError(
            f"cannot be read as a clinical matrix ({exc})", path=clinical_path
        ) from None
    try:
        frame = pl.read_csv(expression_path, separator="\t", infer_schema=False)
    except (pl.exceptions.PolarsError, OSError) as exc:
        raise XenaError(
            f"cannot be read as an expression table ({str(exc).splitlines()[0]})",
            path=expression_path,
        ) from None
    if len(frame.columns) < 2:  # a header of gene IDs only: polars cannot make its matrix
        raise XenaError(
            "holds no sample (its header has no column after the gene IDs)", path=expression_path
        )
    genes = frame.get_column(frame.columns[0]).to_list()
    values = frame.select(
        pl.col(c).cast(pl.Float64, strict=False) for c in frame.columns[1:]
    ).to_numpy()
    np.putmask(values, np.isinf(values), np.nan)  # non-finite cells are missing, never clipped
    samples = pd.Index(frame.columns[1:], dtype=object)
    renamed = [c for c in samples if re.search(r"_duplicated_\d+$", c)]  # polars' renaming
    if renamed:
        original = re.sub(r"_duplicated_\d+$", "", renamed[0])
        raise XenaError(f"repeats the sample ID {original!r} in its header", path=expression_path)
    for labels, where in ((samples, expression_path), (clinical.index, clinical_path)):
        if labels.has_duplicates:
            repeated = ", ".join(map(repr, list(dict.fromkeys(labels[labels.duplicated()]))[:3]))
            raise XenaError(f"repeats the sample IDs {repeated}", path=where)
    expression = pd.DataFrame(values, index=pd.Index(genes, dtype=object), columns=samples)
    return XenaCohort(folder, blank_as_missing(clinical), expression)


def trait_from_barcode(sample: str) -> float:
    """Tumour (01-09) -> 1, normal (10-19) -> 0, anything else -> missing."""
    try:
        code = int(sample[-2:])
    except ValueError:
        return np.nan
    if 1 <= code <= 9:
        return 1.0
    if 10 <= code <= 19:
        return 0.0
    return np.nan


def age_from_cell(cell: object) -> float:
    """Age in years from a clinical cell: its first whole number (NaN when it has none)."""
    found = re.search(r"\d+", str(cell)) if isinstance(cell, str) else None
    value = float(found.group()) if found else np.nan
    return value if np.isfinite(value) else np.nan  # 400 digits: missing, never inf


def gender_from_cell(cell: object) -> float:
    """Gender from a clinical cell: `female` 0, `male` 1 (case ignored), anything else NaN."""
    return (
        {"female": 0.0, "male": 1.0}.get(cell.lower(), np.nan) if isinstance(cell, str) else np.nan
    )


def choose_age_column(clinical: pd.DataFrame) -> str | None:
    """`age_at_initial_pathologic_diagnosis`, else the age-like column with the most numbers."""
    if AGE_COLUMN in clinical.columns:
        return AGE_COLUMN
    candidates = [c for c in clinical.columns if "age" in c.lower()]
    scored = [(clinical[c].map(age_from_cell).notna().sum(), c) for c in candidates]
    scored = [s for s in scored if s[0] > 0]
    return max(scored, key=lambda s: s[0])[1] if scored else None


def clinical_features(
    clinical: pd.DataFrame, trait: str
) -> tuple[pd.DataFrame, dict[str, str | None]]:
    """Rows trait, Age, Gender x samples, and the columns chosen for Age and Gender."""
    rows = {trait: pd.Series([trait_from_barcode(s) for s in clinical.index], index=clinical.index)}
    age_column = choose_age_column(clinical)
    if age_column is not None:
        rows["Age"] = clinical[age_column].map(age_from_cell)
    gender_column = GENDER_COLUMN if GENDER_COLUMN in clinical.columns else None
    if gender_column is not None:
        rows["Gender"] = clinical[gender_column].map(gender_from_cell)
    return pd.DataFrame(rows).T.astype(float), {"Age": age_column, "Gender": gender_column}

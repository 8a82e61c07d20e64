"""A GEO cohort, one transformation a call: files, background, characteristics, clinical
features from the rows and converters the agent chose, expression, annotation, mapping.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path

import pandas as pd

from ..core import GenotexError
from ..preprocessing import (
    characteristics_dictionary,
    load_synonyms,
    map_probes,
    normalize_gene_table,
    probe_gene_pairs,
    read_series_matrix,
    read_soft,
)

__all__ = [
    "apply_gene_mapping",
    "geo_get_relevant_filepaths",
    "geo_select_clinical_features",
    "get_background_and_clinical_data",
    "get_gene_annotation",
    "get_gene_mapping",
    "get_genetic_data",
    "get_unique_values_by_row",
    "normalize_gene_symbols_in_index",
]


def geo_get_relevant_filepaths(cohort_dir: str) -> tuple[str, str]:
    """The family SOFT file and the series matrix file of a GEO cohort folder.

    Returns ``(soft_file, matrix_file)``. When a series has several matrices (one
    per platform, ``GSEnnn-GPLmmm_series_matrix.txt.gz``) the first by name is
    returned: list the folder to choose another.
    """
    folder = Path(cohort_dir)
    found = []
    for pattern in ("*family.soft*", "*series_matrix*"):
        names = sorted(p for p in folder.glob(pattern) if p.is_file())
        if not names:
            raise GenotexError(f"holds no file matching {pattern!r}", path=folder)
        found.append(str(names[0]))
    return found[0], found[1]


def get_background_and_clinical_data(matrix_file: str) -> tuple[str, pd.DataFrame]:
    """The series' background and its sample characteristics, from a series matrix file.

    Returns ``(background, characteristics)``: the background is the series'
    title, summary and overall design as text; `characteristics` has one row per
    ``!Sample_characteristics_ch1`` line (rows numbered 0, 1, ...) and one column
    per sample (GSM ID); each cell is the text GEO gives, e.g. ``"disease state: case"``.
    """
    matrix = read_series_matrix(matrix_file, expression=False)
    return matrix.background, matrix.characteristics.copy()


def get_unique_values_by_row(
    characteristics: pd.DataFrame, max_values: int = 30
) -> dict[int, list[str]]:
    """Each characteristics row's distinct values, most frequent first (at most `max_values`).

    Read it to decide which row holds the trait, which age and which gender.
    """
    return characteristics_dictionary(characteristics, max_values=max_values)


def _number(value: object, name: str, cell: str) -> float:
    """A converter's answer as a float: None, NaN or a missing answer is NaN."""
    if value is None:
        return math.nan
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise ValueError(
            f"convert for {name} returned {value!r} for the cell {cell!r}: "
            "it must return a number or None"
        ) from None
    if math.isinf(number):
        raise ValueError(f"convert for {name} returned an infinite value for the cell {cell!r}")
    return number


def _feature(
    characteristics: pd.DataFrame, row: int, convert: Callable[[str], object], name: str
) -> pd.Series:
    if not callable(convert):
        raise TypeError(f"the converter for {name} must be a function of one cell's text")
    if not isinstance(row, int) or not 0 <= row < len(characteristics):
        rows = len(characteristics)
        raise ValueError(f"{name}: row {row!r} is not a characteristics row (0 to {rows - 1})")
    values = []
    for cell in characteristics.iloc[row]:
        text = None if cell is None or (isinstance(cell, float) and math.isnan(cell)) else cell
        values.append(math.nan if text is None else _number(convert(str(text)), name, str(text)))
    return pd.Series(values, index=characteristics.columns, dtype=float)


def geo_select_clinical_features(
    characteristics: pd.DataFrame,
    trait: str,
    trait_row: int,
    convert_trait: Callable[[str], object],
    *,
    age_row: int | None = None,
    convert_age: Callable[[str], object] | None = None,
    gender_row: int | None = None,
    convert_gender: Callable[[str], object] | None = None,
) -> pd.DataFrame:
    """The clinical table: rows `trait`, ``Age``, ``Gender`` (those given) x samples.

    Each ``convert_*`` is a function you write: it receives one cell's whole text
    (e.g. ``"gender: female"``) and returns a number, or None when the value is
    unknown. Binary traits are 1 (case) and 0 (control); age is in years; gender
    is 0 female and 1 male. A row left as None leaves its feature out.
    """
    rows = {trait: _feature(characteristics, trait_row, convert_trait, trait)}
    for name, row, convert in (
        ("Age", age_row, convert_age),
        ("Gender", gender_row, convert_gender),
    ):
        if row is not None:
            if convert is None:
                raise ValueError(f"{name}: a row is given without its converter")
            rows[name] = _feature(characteristics, row, convert, name)
    return pd.DataFrame(rows).T


def get_genetic_data(matrix_file: str) -> pd.DataFrame:
    """The expression table of a series matrix: identifiers (rows, as given) x samples.

    The row identifiers are whatever the submitter used: probe IDs of the platform,
    Entrez IDs or gene symbols; print some to tell which.
    """
    expression = read_series_matrix(matrix_file).expression.copy()
    expression.index.name = "ID"
    return expression


def get_gene_annotation(soft_file: str, platform: str | None = None) -> pd.DataFrame:
    """The platform's annotation table from a family SOFT file (all its columns, as text).

    Give `platform` (a GPL ID) when the file holds several platforms.
    """
    return read_soft(soft_file).platform(platform).copy()


def get_gene_mapping(annotation: pd.DataFrame, prob_col: str, gene_col: str) -> pd.DataFrame:
    """The probe-to-gene table: columns ``ID`` (from `prob_col`) and ``Gene`` (`gene_col`).

    `gene_col` must hold gene symbols (one or several per cell, e.g. ``"A1BG /// A2M"``).
    """
    return probe_gene_pairs(annotation, probe_column=prob_col, gene_column=gene_col)


def apply_gene_mapping(expression: pd.DataFrame, mapping: pd.DataFrame) -> pd.DataFrame:
    """Genes x samples from probes x samples: each probe's value is split equally over its
    symbols, then the shares are summed per gene (a missing value counts as 0).
    """
    return map_probes(expression, mapping, aggregation="sum")


def normalize_gene_symbols_in_index(genes: pd.DataFrame, synonyms_file: str) -> pd.DataFrame:
    """The gene table with its symbols made official (synonyms mapped, unknown symbols dropped,
    rows of one official symbol averaged), by the synonym table in `synonyms_file`.
    """
    return normalize_gene_table(genes, load_synonyms(synonyms_file))

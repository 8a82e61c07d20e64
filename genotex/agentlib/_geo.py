"""A GEO cohort, one transformation a call: files, background, characteristics, clinical
features from the rows and converters the agent chose, expression, annotation, mapping.
"""

from __future__ import annotations

import math
import numbers
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
    if isinstance(max_values, bool) or not isinstance(max_values, numbers.Integral):
        raise TypeError(f"max_values must be a whole number, not {_shown(max_values)}")
    if max_values < 1:
        raise ValueError(f"max_values must be 1 or more, not {int(max_values)}")
    return characteristics_dictionary(characteristics, max_values=int(max_values))


#: The most characters of a value or a cell an error message shows (a converter's answer
#: can be megabytes; the message reaches the agent's prompt)
SHOWN_CHARS = 120


def _shown(value: object) -> str:
    """`repr(value)`, clipped to SHOWN_CHARS (and never an error itself)."""
    try:
        text = repr(value)
    except (ValueError, RecursionError):  # an int of more digits than str() allows
        text = f"<{type(value).__name__} that cannot be shown>"
    if len(text) <= SHOWN_CHARS:
        return text
    return f"{text[:SHOWN_CHARS]}... ({len(text):,} characters)"


def _number(value: object, name: str, cell: str) -> tuple[float, bool]:
    """A converter's answer as a float (None, NaN or a missing answer is NaN), and whether
    it was a number outside a float's range (then NaN too).
    """
    if value is None:
        return math.nan, False
    try:
        number = float(value)  # type: ignore[arg-type]
    except OverflowError:
        return math.nan, True
    except (TypeError, ValueError):
        raise ValueError(
            f"convert for {name} returned {_shown(value)} for the cell {_shown(cell)}: "
            "it must return a number or None"
        ) from None
    if math.isinf(number):
        raise ValueError(
            f"convert for {name} returned an infinite value for the cell {_shown(cell)}"
        )
    return number, False


def _call(convert: Callable[[str], object], cell: str, name: str) -> object:
    """The converter's answer for one cell; its own error, whatever it is, said in a
    sentence of bounded length (the message reaches the agent's prompt).
    """
    try:
        return convert(cell)
    except Exception as exc:  # noqa: BLE001 - the agent's code: any error, said and clipped
        detail = _shown(str(exc))[1:-1] if str(exc) else ""
        raise ValueError(
            f"convert for {name} failed on the cell {_shown(cell)}: "
            f"{type(exc).__name__}{': ' + detail if detail else ''}"
        ) from None


def _feature(
    characteristics: pd.DataFrame, row: int, convert: Callable[[str], object], name: str
) -> pd.Series:
    if not callable(convert):
        raise TypeError(f"the converter for {name} must be a function of one cell's text")
    rows = len(characteristics)
    whole = isinstance(row, numbers.Integral) and not isinstance(row, bool)
    if not whole or not 0 <= int(row) < rows:
        raise ValueError(
            f"{name}: row {_shown(row)} is not a characteristics row (0 to {rows - 1})"
        )
    values, beyond = [], []
    for cell in characteristics.iloc[int(row)]:
        text = None if cell is None or (isinstance(cell, float) and math.isnan(cell)) else cell
        number, out_of_range = (
            (math.nan, False) if text is None else _number(_call(convert, str(text), name),
                                                           name, str(text))
        )  # fmt: skip
        values.append(number)
        if out_of_range:
            beyond.append(str(text))
    if beyond:
        print(
            f"note: convert for {name} returned a number beyond a float's range for "
            f"{len(beyond)} cell(s), e.g. {_shown(beyond[0])}: those samples' values are missing"
        )
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

"""Reading the benchmark's CSV tables: whole (for scoring) or just their header.

The published evaluator reads every CSV with pandas' C parser (`index_col=0`),
so we do too: labels and NaN spellings are then exactly the reference's.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from pandas.api.types import infer_dtype, is_bool_dtype, is_numeric_dtype

from .errors import GenotexError

__all__ = ["TableError", "LabelledTable", "read_table", "read_header", "numeric_block"]

_NUMERIC_OBJECT_KINDS = {"floating", "integer", "mixed-integer-float", "empty", "decimal"}


class TableError(GenotexError):
    """A CSV that cannot be read or scored (unparseable, duplicated labels, non-numeric)."""


@dataclass(frozen=True)
class LabelledTable:
    """A CSV read with its first column as the index, oriented by what its axes hold.

    `frame` is the table as stored; `features_are_rows` says whether its rows are
    features (gene_data, clinical_data) or samples (linked tables).
    """

    frame: pd.DataFrame
    features_are_rows: bool

    @property
    def features(self) -> pd.Index:
        return self.frame.index if self.features_are_rows else self.frame.columns

    @property
    def samples(self) -> pd.Index:
        return self.frame.columns if self.features_are_rows else self.frame.index

    @property
    def empty(self) -> bool:
        return self.frame.empty

    def block(self, features: pd.Index, samples: pd.Index) -> np.ndarray:
        """The numeric values at these labels as a C-ordered (features x samples) array."""
        if self.features_are_rows:
            return np.ascontiguousarray(numeric_block(self.frame, features, samples))
        return np.ascontiguousarray(numeric_block(self.frame, samples, features).T)


def read_header(path: str | Path) -> list[str]:
    """Column labels of a CSV (its first row, without the index column's own label).

    Only the first record is parsed, so a wide table costs one line, not the table.
    """
    path = Path(path)
    try:
        with open(path, newline="", encoding="utf-8") as handle:
            row = next(csv.reader(handle), None)
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise TableError(f"the header cannot be read ({exc.__class__.__name__})", path=path) from None
    if not row:
        raise TableError("the file has no header row", path=path)
    return row[1:]


def read_table(path: str | Path, *, features_are_rows: bool) -> LabelledTable:
    """Read a CSV whose first column holds the row labels; refuse duplicated labels."""
    path = Path(path)
    try:
        with open(path, "rb") as handle:
            raw = handle.read()
        header = next(csv.reader(io.StringIO(raw.split(b"\n", 1)[0].decode("utf-8"))), [])
        frame = pd.read_csv(io.BytesIO(raw), index_col=0)
    except pd.errors.EmptyDataError:
        raise TableError("the file is empty", path=path) from None
    except (OSError, UnicodeDecodeError, ValueError, csv.Error, pd.errors.ParserError) as exc:
        reason = str(exc).splitlines()[0] if str(exc) else exc.__class__.__name__
        raise TableError(f"the CSV cannot be parsed ({reason})", path=path) from None
    frame.index.name = None
    frame.columns.name = None
    column_labels = header[1:]
    if len(set(column_labels)) != len(column_labels):
        raise TableError("the header has duplicated column labels", path=path)
    if frame.index.has_duplicates:
        raise TableError("the first column has duplicated row labels", path=path)
    return LabelledTable(frame, features_are_rows)


def numeric_block(frame: pd.DataFrame, rows: pd.Index, columns: pd.Index) -> np.ndarray:
    """`frame.loc[rows, columns]` as float64, refusing any non-numeric value in it."""
    row_positions = frame.index.get_indexer(rows)
    column_positions = frame.columns.get_indexer(columns)
    if len(row_positions) == len(frame.index) and (row_positions == np.arange(len(frame.index))).all():
        row_positions = slice(None)
    if len(column_positions) == len(frame.columns) and (
        column_positions == np.arange(len(frame.columns))
    ).all():
        column_positions = slice(None)
    sub = frame.iloc[row_positions, column_positions]
    for label, dtype in sub.dtypes.items():
        if is_numeric_dtype(dtype) and not is_bool_dtype(dtype):
            continue
        if dtype == object and infer_dtype(sub[label], skipna=True) in _NUMERIC_OBJECT_KINDS:
            continue
        raise TableError(f"column {label!r} holds non-numeric values")
    return sub.to_numpy(dtype=np.float64, na_value=np.nan)

"""Reading the benchmark's CSV tables: whole (for scoring) or just their header.

Tables are parsed with polars: on a linked table (~300 samples x 18,000 genes)
it reads 84 MB/s where pandas' C parser reads 44 MB/s on this machine, and wide
tables dominate an evaluation (scripts/bench_eval.py). Its reading is made to
agree with pandas' `read_csv(index_col=0)`, which the published evaluator
used: the same NA spellings become missing, short rows are padded, long rows
are an error. Labels are kept as text (pandas would turn all-numeric row
labels into numbers: the sets compare the same unless a file mixes `1` and
`1.0`), in NumPy object arrays. Neither polars nor pandas is imported here:
polars by the functions that parse (a table read from the cache never needs
it), and pandas nowhere: labels are matched by dictionary (within 1.3x of
pandas' `get_indexer`), so that a regression reading from the cache pays
neither import (~0.5 s of its start-up).
"""

from __future__ import annotations

import csv
import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import numpy as np

from ._atomic import atomic_output
from ._errors import GenotexError

if TYPE_CHECKING:
    import pandas as pd
    import polars as pl

__all__ = [
    "MAX_COLUMNS",
    "TableError",
    "LabelledTable",
    "read_table",
    "read_header",
    "write_table",
    "PANDAS_NA_VALUES",
]

#: The strings pandas' `read_csv` reads as missing by default (the reference's NaN).
PANDAS_NA_VALUES = [
    "", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND",
    "1.#QNAN", "<NA>", "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan", "null",
]  # fmt: skip


#: What parsing a CSV's rows gives: row labels, float64 values (rows x columns) and the
#: non-numeric cells (column position -> row positions).
ParsedRows = tuple[np.ndarray, np.ndarray, dict[int, np.ndarray]]


class ParsedRowSource(Protocol):
    """Parsed rows by content, as `TableCache` gives them (the tables never import the cache)."""

    def rows(self, path: Path, header: list[str]) -> ParsedRows: ...


def label_array(labels: Sequence[str | None]) -> np.ndarray:
    """Labels as a 1-D NumPy object array (text, or None for a missing label)."""
    array = np.empty(len(labels), dtype=object)
    array[:] = labels
    return array


def _missing_as_none(label: object) -> object:
    """A missing label as the tables spell it: None (NaN, from pandas, is not equal to itself)."""
    return None if label is None or label != label else label


class TableError(GenotexError):
    """A CSV that cannot be read or scored (unparseable, duplicated labels, non-numeric)."""


@dataclass(frozen=True)
class LabelledTable:
    """A CSV with its first column as row labels, as a float array plus labels.

    The labels are 1-D object arrays of text (None: a missing row label).
    `features_are_rows` says whether rows are features (gene_data, clinical_data)
    or samples (linked tables). `bad_cells` maps a column position to the row
    positions of cells that are neither a number nor a missing value.
    """

    row_labels: np.ndarray
    column_labels: np.ndarray
    values: np.ndarray  # rows x columns, float64, NaN for missing
    features_are_rows: bool
    bad_cells: dict[int, np.ndarray] = field(default_factory=dict)

    @property
    def features(self) -> np.ndarray:
        return self.row_labels if self.features_are_rows else self.column_labels

    @property
    def samples(self) -> np.ndarray:
        return self.column_labels if self.features_are_rows else self.row_labels

    @property
    def empty(self) -> bool:
        return self.values.size == 0

    def block(self, features: Sequence[object], samples: Sequence[object]) -> np.ndarray:
        """Values at these labels as a C-ordered (features x samples) array.

        Raises `KeyError` for a label the table does not have, and `TableError`
        if a non-numeric cell lies inside the block.
        """
        if self.features_are_rows:
            rows, columns = (
                self._positions(self.row_labels, features),
                self._positions(self.column_labels, samples),
            )
        else:
            rows, columns = (
                self._positions(self.row_labels, samples),
                self._positions(self.column_labels, features),
            )
        self._check_numeric(rows, columns)
        # features x samples: gathered from the transposed view when rows are samples, so the
        # one copy the gather makes is already C-ordered (4x faster than gather, then transpose)
        values, first, second = (
            (self.values, rows, columns)
            if self.features_are_rows
            else (self.values.T, columns, rows)
        )
        if isinstance(first, slice) or isinstance(second, slice):
            return np.ascontiguousarray(values[first, second])
        return values[np.ix_(first, second)]  # one copy, not a copy of the rows and another

    @staticmethod
    def _positions(index: np.ndarray, labels: Sequence[object]) -> np.ndarray | slice:
        place = {label: i for i, label in enumerate(index.tolist())}  # unique; missing: None
        if hasattr(labels, "tolist"):  # a pandas Index of strings iterates ~20x slower than this
            labels = labels.tolist()
        try:
            positions = np.fromiter((place[label] for label in labels), np.intp, len(labels))
        except KeyError:  # pandas' set operations spell a missing label NaN
            missing = (_missing_as_none(label) for label in labels)
            positions = np.fromiter((place[label] for label in missing), np.intp, len(labels))
        if len(positions) == len(index) and np.array_equal(positions, np.arange(len(index))):
            return slice(None)
        return positions

    def _check_numeric(self, rows: np.ndarray | slice, columns: np.ndarray | slice) -> None:
        if not self.bad_cells:
            return
        wanted_columns = (
            set(range(len(self.column_labels)))
            if isinstance(columns, slice)
            else set(columns.tolist())
        )
        for column, bad_rows in self.bad_cells.items():
            if column not in wanted_columns:
                continue
            if isinstance(rows, slice) or np.isin(bad_rows, rows).any():
                raise TableError(f"column {self.column_labels[column]!r} holds non-numeric values")


#: Most columns a table may have (a linked table has ~20,000-60,000): a header-only CSV of a
#: million columns cost 1.8 GB to parse; past the limit a table is refused before it is parsed.
MAX_COLUMNS = 200_000


def _first_record(path: Path, *, rows: bool = False) -> tuple[list[str], bool]:
    """The first record, and with `rows` whether anything but blank lines follows it (a
    header-only table is empty), in one pass over the file's start.
    """
    with open(path, newline="", encoding="utf-8") as handle:
        header = next(csv.reader(handle), [])
        return header, rows and any(line.strip() for line in handle)


def read_header(path: str | Path) -> list[str]:
    """Column labels of a CSV (its first row, without the index column's own label).

    Only the first record is parsed, so a wide table costs one line, not the table.
    """
    path = Path(path)
    try:
        row, _ = _first_record(path)
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise TableError(
            f"the header cannot be read ({exc.__class__.__name__})", path=path
        ) from None
    if not row:
        raise TableError("the file has no header row", path=path)
    return row[1:]


_BLANK_LINE = re.compile(rb"(?<=\n)\r?\n")

#: Above this many columns a table is parsed line by line (see `_read_wide`).
WIDE_TABLE_COLUMNS = 1000


def _labels(series: pl.Series) -> np.ndarray:
    """Row labels as text; NA spellings are missing labels, as pandas reads them."""
    import polars as pl

    labels = pl.select(
        pl.when(series.is_in(PANDAS_NA_VALUES)).then(None).otherwise(series)
    ).to_series()
    return label_array(labels.to_list())


def _numbers(tokens: pl.Series) -> tuple[pl.Series, np.ndarray]:
    """Text cells as float64 (NA spellings and empty cells missing) and a mask of non-numbers."""
    import polars as pl

    missing = tokens.is_null() | tokens.is_in(PANDAS_NA_VALUES)
    numbers = tokens.str.strip_chars().cast(pl.Float64, strict=False)
    return numbers, (numbers.is_null() & ~missing).to_numpy()


def _read_general(path: Path, data: bytes, header: list[str]) -> ParsedRows:
    """Any CSV, with polars' CSV reader (fastest on long tables: ~270 MB/s here).

    First as all-numbers with an explicit schema (no type inference, no NA-string
    matching); a file that is not all numbers is read again as text and
    converted cell by cell, as pandas would.
    """
    import polars as pl

    if data.count(b'"') % 2:  # a quote left open swallows the rows after it
        raise TableError(
            "has an unbalanced quote (an odd number of '\"'): its rows cannot be told apart",
            path=path,
        )
    if b"\n\n" in data or b"\n\r\n" in data:
        data = _BLANK_LINE.sub(b"", data)  # pandas skips blank lines; polars reads them as rows
    names = [f"c{i}" for i in range(len(header))]  # positional: the labels come from the csv module
    read = functools.partial(pl.read_csv, data, has_header=True, new_columns=names)
    try:
        frame = read(schema={n: (pl.String if i == 0 else pl.Float64) for i, n in enumerate(names)})
        values = frame.drop(names[0]).to_numpy(order="fortran") if len(names) > 1 else None
        bad_cells: dict[int, np.ndarray] = {}
    except pl.exceptions.ComputeError:
        frame = read(infer_schema=False)
        if frame.width != len(header):
            raise TableError(
                "the header and the rows disagree on the number of columns", path=path
            ) from None
        columns, bad_cells = [], {}
        for position, name in enumerate(names[1:]):
            numbers, bad = _numbers(frame.get_column(name))
            columns.append(numbers)
            if bad.any():
                bad_cells[position] = np.flatnonzero(bad)
        values = pl.DataFrame(columns).to_numpy(order="fortran") if columns else None
    if values is None:
        values = np.empty((frame.height, 0))
    return _labels(frame.get_column(names[0])), values.astype(np.float64, copy=False), bad_cells


def _read_wide(data: bytes, header: list[str]) -> ParsedRows | None:
    """A wide unquoted CSV, split line by line in polars (~150 MB/s where its CSV reader does ~90).

    CSV readers pay per column; a linked table has ~18,000 columns and a few
    hundred rows. Returns None when the file needs the general reader (quotes,
    rows of another length).
    """
    import polars as pl

    lines = pl.read_csv(
        data,
        has_header=False,
        separator="\x1f",
        quote_char=None,
        skip_rows=1,
        new_columns=["line"],
        infer_schema=False,
        raise_if_empty=False,
    )
    if lines.width != 1:
        return None
    text = lines.to_series().str.strip_suffix("\r")
    text = text.filter(text.is_not_null() & (text != ""))
    if text.str.contains('"', literal=True).any():
        return None
    fields = text.str.split(",")
    if (fields.list.len() != len(header)).any():
        return None
    numbers, bad = _numbers(fields.list.slice(1).explode())
    n_columns = len(header) - 1
    values = numbers.to_numpy().reshape(len(text), n_columns)
    bad_cells: dict[int, np.ndarray] = {}
    if bad.any():
        rows, columns = np.divmod(np.flatnonzero(bad), n_columns)
        for column in np.unique(columns):
            bad_cells[int(column)] = rows[columns == column]
    return _labels(fields.list.first()), values, bad_cells


def _checked_header(path: Path, max_columns: int | None) -> tuple[list[str], bool]:
    """A CSV's header (index label first) and whether rows follow it, refused if it cannot be
    a table: unreadable, empty, too wide, or with duplicated column labels.
    """
    try:
        header, has_rows = _first_record(path, rows=True)
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise TableError(f"the CSV cannot be read ({exc.__class__.__name__})", path=path) from None
    if not header:
        raise TableError("the file is empty", path=path)
    if max_columns is not None and len(header) - 1 > max_columns:
        raise TableError(
            f"has {len(header) - 1:,} columns, more than the limit of {max_columns:,}", path=path
        )
    column_labels = header[1:]
    if len(set(column_labels)) != len(column_labels):
        raise TableError("the header has duplicated column labels", path=path)
    return header, has_rows


def parse_rows(path: Path, data: bytes, header: list[str]) -> ParsedRows:
    """Row labels, values and non-numeric cells of a CSV's bytes whose header was checked.

    `path` only names the file in errors.
    """
    import polars as pl

    try:
        wide = len(header) > WIDE_TABLE_COLUMNS and not any("\n" in label for label in header)
        parsed = _read_wide(data, header) if wide else None
        row_labels, values, bad_cells = (
            parsed if parsed is not None else _read_general(path, data, header)
        )
    except pl.exceptions.NoDataError:
        raise TableError("the file is empty", path=path) from None
    except (pl.exceptions.PolarsError, OSError, ValueError) as exc:
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else exc.__class__.__name__
        raise TableError(f"the CSV cannot be parsed ({reason})", path=path) from None
    if len(set(row_labels.tolist())) != len(row_labels):
        raise TableError("the first column has duplicated row labels", path=path)
    return row_labels, values, bad_cells


def read_table(
    path: str | Path,
    *,
    features_are_rows: bool,
    max_columns: int | None = MAX_COLUMNS,
    cache: ParsedRowSource | None = None,
) -> LabelledTable:
    """Read a CSV whose first column holds the row labels; refuse duplicated labels.

    Parameters
    ----------
    path
        The CSV.
    features_are_rows
        Whether rows are features (gene and clinical data) or samples (linked data).
    max_columns
        A table of more columns (None: no limit) is refused before its rows are parsed.
    cache
        Where parsed tables are kept by content (`TableCache`): the file is still
        hashed and its header checked, and its rows come from the entry of its
        content when there is one. None parses the file. The table read is the same
        either way, value for value.
    """
    path = Path(path)
    header, has_rows = _checked_header(path, max_columns)
    columns = label_array(header[1:])
    if not has_rows:  # nothing to parse: polars would still build a schema of every column
        empty = np.empty((0, len(columns)))
        return LabelledTable(label_array([]), columns, empty, features_are_rows, {})
    try:
        if cache is None:
            row_labels, values, bad_cells = parse_rows(path, path.read_bytes(), header)
        else:
            row_labels, values, bad_cells = cache.rows(path, header)
    except OSError as exc:
        raise TableError(f"the CSV cannot be read ({exc.__class__.__name__})", path=path) from None
    return LabelledTable(row_labels, columns, values, features_are_rows, bad_cells)


def write_table(path: str | Path, frame: pd.DataFrame) -> None:
    """Write a float table as CSV with its index first, atomically (polars: ~10x pandas' `to_csv`).

    Floats are written in their shortest round-trip form and NaN as an empty
    cell, so pandas (and `read_table`) read back exactly the same values.
    """
    import polars as pl

    columns = {"": [str(label) for label in frame.index]}
    out = pl.DataFrame(columns)
    values = frame.to_numpy(dtype=np.float64)
    body = pl.DataFrame(values, schema=[f"c{i}" for i in range(values.shape[1])], orient="row")
    body = body.with_columns(pl.all().fill_nan(None))
    out = pl.concat([out, body], how="horizontal")
    header = [frame.index.name or "", *(str(c) for c in frame.columns)]
    with atomic_output(path) as tmp:
        with open(tmp, "w", encoding="utf-8", newline="") as handle:
            csv.writer(handle, lineterminator="\n").writerow(header)
            handle.write(out.write_csv(include_header=False))

"""Reading GEO series matrices (preprocessing.md § GEO), and what every GEO reader shares.

A series matrix is read in one streaming pass (ISA-L decompression, 8 MB at a
time): the metadata lines give the background text and the characteristics
table, the block between the table markers is parsed by polars. A matrix
repeating a probe or sample ID is malformed; non-finite cells are missing values.
"""

from __future__ import annotations

import csv
import functools
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import polars as pl

from ..core import blank_as_missing, empty_without_huge_pages
from ._geo_text import GEOFormatError, lines_of, text_chunks

__all__ = [
    "GEOFormatError",
    "SeriesMatrix",
    "lines_of",
    "characteristics_dictionary",
    "read_series_matrix",
]

BACKGROUND_KEYS = ("!Series_title", "!Series_summary", "!Series_overall_design")
_TABLE_BEGIN, _TABLE_END = "!series_matrix_table_begin", "!series_matrix_table_end"


@dataclass
class _MatrixText:
    """What one streaming pass over a series matrix finds: metadata lines, the table header,
    and (when parsed) the probe IDs and values.
    """

    metadata: list[str] = field(default_factory=list)
    begun: bool = False  # the table's begin marker was found
    header: list[str] | None = None
    ended: bool = False  # the table's end marker was found
    ids: list[str] = field(default_factory=list)
    values: np.ndarray | None = None  # rows x samples, C order, grown as blocks are parsed


def _read_matrix(path: Path, *, parse: bool) -> _MatrixText:
    """Stream the file once: the metadata lines, the table header, and with `parse` the table,
    parsed by polars a chunk of lines at a time into one preallocated array.

    Reading stops at the table's end marker. The array is allocated from the
    gzip trailer's size estimate (pages never filled cost no memory), so peak
    memory is the table plus one chunk.
    """
    found = _MatrixText()
    for first, data in text_chunks(path):
        position = 0
        number = first
        while found.header is None and position < len(data):  # metadata: line by line
            end = data.index(b"\n", position)
            line = data[position:end]
            if number == 0:
                line = line.removeprefix(b"\xef\xbb\xbf")  # a byte-order mark
            if not _in_table(found, line, path):
                found.metadata.append(line.decode("utf-8", "replace") + "\n")
            position, number = end + 1, number + 1
        if found.header is None:
            continue
        table = data[position:] if position else data
        if table.startswith(_TABLE_END.encode()):  # the end marker right after the last row
            found.ended, table = True, b""
        elif (end := table.find(_END_LINE)) != -1:
            found.ended = True
            table = table[: end + 1]
        if parse and table:
            _parse_table(found, table, number, path)
        if found.ended:
            break
    return found


_END_LINE = b"\n" + _TABLE_END.encode()
_BLANK_LINES = re.compile(rb"(?m)^[ \t\r]*\n")


def _parse_table(found: _MatrixText, table: bytes, first: int, path: Path) -> None:
    """Parse whole table lines (line `first` onwards) into the array; refuse a ragged row."""
    assert found.header is not None
    names = [f"c{i}" for i in range(len(found.header))]
    try:
        frame = _parse_block(table, names, path)
    except GEOFormatError:
        _ragged(found.header, table, first, path)  # a longer row, balanced by a shorter one
        raise
    ids = frame.get_column(names[0]).str.strip_chars()
    if (ids.is_null() | (ids == "")).any():  # blank lines (of nothing, or spaces) in the text
        _ragged(found.header, table, first, path)  # checked while the line numbers hold
        table = _BLANK_LINES.sub(b"", table)
        if not table:
            return
        frame = _parse_block(table, names, path)
        ids = frame.get_column(names[0]).str.strip_chars()
    # a shorter row ends in missing cells; only then are the cells counted (a pass over the text)
    last = frame.get_column(names[-1])
    if last.null_count() and table.count(b"\t") != frame.height * (len(names) - 1):
        _ragged(found.header, table, first, path)
    start = len(found.ids)
    found.ids.extend(ids.to_list())
    if found.values is None:
        columns = len(names) - 1
        shape = (_expected_rows(path, frame.height, len(table), columns), columns)
        found.values = empty_without_huge_pages(shape)  # written once: no compaction stall
    if len(found.ids) > found.values.shape[0]:  # grown in place: realloc copies no row
        rows = max(len(found.ids), int(found.values.shape[0] * 1.25))
        found.values.resize((rows, len(names) - 1), refcheck=False)
    block = found.values[start : len(found.ids)]
    # polars copies its columns out as they are (column-major); one transposing copy into place
    block[...] = frame.drop(names[0]).to_numpy(order="fortran")
    np.putmask(block, np.isinf(block), np.nan)  # missing, never clipped; while in cache


def _ragged(header: list[str], table: bytes, first: int, path: Path) -> None:
    """Raise for the first non-blank line whose cell count is not the header's."""
    for offset, line in enumerate(table.split(b"\n")[:-1]):
        if line.strip() and (cells := line.count(b"\t") + 1) != len(header):
            raise GEOFormatError(
                f"line {first + offset + 1} has {cells} cells where the table header has "
                f"{len(header)}: a ragged row would shift its values by a sample",
                path=path,
            )


def _in_table(found: _MatrixText, line: bytes, path: Path) -> bool:
    """Whether `line` is the table's begin marker or its header (recorded in `found`)."""
    if found.begun:
        if line.startswith(_TABLE_END.encode()):  # the end marker where the header should be
            raise GEOFormatError("its expression table is empty (not even a header row)", path=path)
        text = line.decode("utf-8", "replace").rstrip("\r")
        try:
            found.header = next(csv.reader([text], delimiter="\t"), [])
        except csv.Error as exc:  # e.g. a carriage return inside a cell
            reason = str(exc).split(" - ")[0]
            raise GEOFormatError(f"the table header cannot be read ({reason})", path=path) from None
        return True
    found.begun = line.startswith(_TABLE_BEGIN.encode())
    return found.begun


def _cells(line: str) -> list[str]:
    """Tab-separated cells of a metadata line, without the key and the surrounding quotes."""
    return [cell.strip().strip('"') for cell in line.rstrip("\r\n").split("\t")[1:]]


@dataclass(frozen=True)
class SeriesMatrix:
    """One `*_series_matrix.txt(.gz)`: background, characteristics, expression table."""

    path: Path
    background: str
    samples: tuple[str, ...]
    characteristics: pd.DataFrame  # rows 0..k-1 (one per characteristics line) x GSM IDs, text
    expression: pd.DataFrame  # probe IDs (text) x GSM IDs, float64 (non-numeric cells are NaN)
    # every metadata key (`!Series_type`, `!Sample_organism_ch1`...) -> its cells, in file order
    attributes: dict[str, list[str]] = field(default_factory=dict)

    def __repr__(self) -> str:
        rows, samples = self.expression.shape[0], len(self.samples)
        return (
            f"SeriesMatrix({self.path.name}: {rows} probes x {samples} samples, "
            f"{len(self.characteristics)} characteristics rows)"
        )

    def _repr_html_(self) -> str:
        from ..core import notebook_table

        rows = [("expression", f"{self.expression.shape[0]} probes x {len(self.samples)} samples")]
        for position, (_, row) in enumerate(self.characteristics.iterrows()):
            values = row.dropna().astype(str).unique()
            rows.append(
                (f"row {position}", ", ".join(values[:4]) + (" ..." if len(values) > 4 else ""))
            )
        return notebook_table(f"SeriesMatrix {self.path.name}", rows)


def _parse_block(data: bytes, names: list[str], path: Path) -> pl.DataFrame:
    """One block of table lines: IDs text, values Float64 (non-numeric cells NaN)."""
    read = functools.partial(
        pl.read_csv,
        data,
        separator="\t",
        quote_char='"',
        has_header=False,
        new_columns=names,
        truncate_ragged_lines=False,  # a longer row is an error (shorter: missing cells)
    )
    try:
        try:
            return read(
                schema={n: pl.String if i == 0 else pl.Float64 for i, n in enumerate(names)}
            )
        except pl.exceptions.ComputeError:  # a non-numeric cell: parse as text, cast leniently
            frame = read(infer_schema=False)
            return frame.with_columns(
                pl.col(n).str.strip_chars().cast(pl.Float64, strict=False) for n in names[1:]
            )
    except (pl.exceptions.PolarsError, OSError) as exc:  # OSError: bytes polars took for gzip
        raise GEOFormatError(
            f"has an unreadable expression table ({str(exc).splitlines()[0]})", path=path
        ) from None


#: The most float64 bytes allocated on the trailer's word (a crafted trailer may claim 4 GiB
#: of text); a larger table grows past it in place.
_FIRST_ALLOCATION = 256 << 20


def _expected_rows(path: Path, block_rows: int, block_bytes: int, columns: int) -> int:
    """Rows to allocate first: from the gzip trailer's text size (the size mod 4 GiB) and the
    first block's share of it, at most `_FIRST_ALLOCATION`; at least the first block. Pages
    never filled cost nothing.
    """
    try:
        with open(path, "rb") as handle:
            if handle.read(2) != b"\x1f\x8b":
                return block_rows
            handle.seek(-4, os.SEEK_END)
            text_size = int.from_bytes(handle.read(4), "little")
    except OSError:
        return block_rows
    estimate = int(text_size / max(1, block_bytes) * block_rows)
    return max(block_rows, min(estimate, _FIRST_ALLOCATION // (8 * max(1, columns))))


def _expression(path: Path, found: _MatrixText) -> pd.DataFrame:
    """The parsed table as a frame: probe IDs x GSM IDs (non-finite cells missing)."""
    if not found.header:
        raise GEOFormatError("has an empty expression table", path=path)
    values = found.values
    if values is None:
        values = np.empty((0, len(found.header) - 1))
    values.resize((len(found.ids), values.shape[1]), refcheck=False)  # the estimate's tail
    index = pd.Index(found.ids, dtype=object, name="ID")
    _refuse_repeats(index, "probe IDs", path)
    columns = pd.Index(found.header[1:], dtype=object)
    _refuse_repeats(columns, "sample IDs in the table header", path)
    return pd.DataFrame(values, index=index, columns=columns, copy=False)


def _refuse_repeats(labels: pd.Index | list[str], what: str, path: Path) -> None:
    """A GEO table never repeats an ID: one that does is malformed, named with its first repeats."""
    index = pd.Index(labels)
    if index.has_duplicates:
        repeated = list(dict.fromkeys(index[index.duplicated()]))[:3]
        shown = ", ".join(map(repr, repeated))
        raise GEOFormatError(
            f"repeats {what} ({shown}): GEO never publishes such a table", path=path
        )


def read_series_matrix(path: str | Path, *, expression: bool = True) -> SeriesMatrix:
    """Read a series matrix; a truncated file or one without the table markers is a
    `GEOFormatError`.

    With `expression=False` the table is checked but not parsed (its frame has
    no rows): what a recipe proposal or an inspection of the metadata needs.
    """
    path = Path(path)
    found = _read_matrix(path, parse=expression)
    if not found.ended:
        missing = _TABLE_END if found.begun else _TABLE_BEGIN
        raise GEOFormatError(f"has no '{missing}' marker: not a complete series matrix", path=path)
    background: list[str] = []
    samples: tuple[str, ...] = ()
    characteristics: list[list[str]] = []
    attributes: dict[str, list[str]] = {}
    for line in found.metadata:
        key = line.split("\t", 1)[0]
        attributes.setdefault(key, []).extend(_cells(line))
        if key in BACKGROUND_KEYS:
            background.append(f"{key}\t" + "\t".join(f'"{c}"' for c in _cells(line)))
        elif key == "!Sample_geo_accession":
            samples = tuple(_cells(line))
        elif key == "!Sample_characteristics_ch1":
            characteristics.append(_cells(line))
    _refuse_repeats(list(samples), "sample IDs (!Sample_geo_accession)", path)
    if expression:
        table = _expression(path, found)
    else:
        header = (found.header or [""])[1:]
        table = pd.DataFrame(columns=pd.Index(header, dtype=object), dtype=np.float64)
    columns = list(samples) if samples else list(table.columns)
    rows = [row + [""] * (len(columns) - len(row)) for row in characteristics]
    clinical = pd.DataFrame([row[: len(columns)] for row in rows], columns=columns, dtype=object)
    clinical = blank_as_missing(clinical)
    background_text = "\n".join(background)
    return SeriesMatrix(path, background_text, tuple(columns), clinical, table, attributes)


def characteristics_dictionary(
    characteristics: pd.DataFrame, max_values: int = 30
) -> dict[int, list[str]]:
    """Row number -> its distinct values, most frequent first (ties: first seen), at most 30."""
    result = {}
    for position, (_, row) in enumerate(characteristics.iterrows()):
        counts = row.dropna().value_counts(sort=True)
        result[position] = [str(v) for v in counts.index[:max_values]]
    return result

"""Reading GEO series matrices (preprocessing.md § GEO), and what every GEO reader shares.

A series matrix is read in two streaming passes: the metadata lines give the
background text and the characteristics table, the block between the table
markers is parsed by polars. A matrix repeating a probe or sample ID is
malformed; non-finite cells are missing values.
"""

from __future__ import annotations

import csv
import functools
import gzip
import io
import math
import os
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import polars as pl

from ..core import GenotexError, open_regular

__all__ = [
    "GEOFormatError",
    "SeriesMatrix",
    "characteristics_dictionary",
    "read_series_matrix",
]

BACKGROUND_KEYS = ("!Series_title", "!Series_summary", "!Series_overall_design")
_TABLE_BEGIN, _TABLE_END = "!series_matrix_table_begin", "!series_matrix_table_end"


class GEOFormatError(GenotexError):
    """A GEO file that is truncated, not gzip, or lacks the parts it must have."""


#: Longest line and most decompressed text a GEO file may hold, in MB; the environment
#: variables raise them (`genotex preprocess/inspect --max-line-mb/--max-text-mb` set them).
#: A series-matrix line of 2,000 samples is ~40 KB; the largest GEO matrices are a few GB.
DEFAULT_MAX_LINE_MB, DEFAULT_MAX_TEXT_MB = 64, 32 * 1024
MAX_LINE_ENV, MAX_TEXT_ENV = "GENOTEX_MAX_LINE_MB", "GENOTEX_MAX_TEXT_MB"


def _limit(variable: str, default: float) -> int:
    """A limit in bytes: the environment's value in MB if it is a positive number, else the
    default.
    """
    try:
        value = float(os.environ.get(variable, default))
    except ValueError:
        value = default
    return int((value if math.isfinite(value) and value > 0 else default) * 1024 * 1024)


def _open_binary(path: Path) -> gzip.GzipFile | io.BufferedReader:
    """The file's bytes, through gzip when it starts with gzip's magic number.

    Only a regular file is opened (a FIFO named like a matrix would block forever).
    """
    try:
        with open_regular(path, error=GEOFormatError) as probe:
            gzipped = probe.read(2) == b"\x1f\x8b"
    except OSError as exc:
        raise GEOFormatError(f"cannot be read ({exc.strerror or exc})", path=path) from None
    return gzip.open(path, "rb") if gzipped else open(path, "rb")


def bounded_lines(handle: Any, path: Path) -> Iterator[Any]:
    """The lines of a handle (binary or text), refusing one longer than the line limit and text
    past the size limit (a small gzip can hold one line of hundreds of MB).
    """
    max_line, max_text = (
        _limit(MAX_LINE_ENV, DEFAULT_MAX_LINE_MB),
        _limit(MAX_TEXT_ENV, DEFAULT_MAX_TEXT_MB),
    )
    total = 0
    number = 0
    while True:
        line = handle.readline(max_line + 1)
        if not line:
            return
        number += 1
        if len(line) > max_line:
            raise GEOFormatError(
                f"line {number} is longer than {max_line // 1048576} MB "
                f"(set {MAX_LINE_ENV} to raise the limit)",
                path=path,
            )
        total += len(line)
        if total > max_text:
            raise GEOFormatError(
                f"holds more than {max_text // 1048576:,} MB of text "
                f"(set {MAX_TEXT_ENV} to raise the limit)",
                path=path,
            )
        yield line


@dataclass(frozen=True)
class _MatrixLayout:
    """What one streaming pass over a series matrix finds: metadata lines and where the table is."""

    metadata: list[str]
    header: list[str]
    skip: int  # lines before the table's header line
    rows: int  # non-empty table lines after the header


def _scan_matrix(path: Path) -> _MatrixLayout:
    """Stream the file once (constant memory): metadata, table header, both markers present."""
    metadata: list[str] = []
    header: list[str] | None = None
    skip = None
    rows = 0
    try:
        with _open_binary(path) as handle:
            for number, line in enumerate(bounded_lines(handle, path)):
                if number == 0:
                    line = line.removeprefix(b"\xef\xbb\xbf")  # a byte-order mark
                if skip is None:
                    if line.startswith(_TABLE_BEGIN.encode()):
                        skip = number + 1
                    else:
                        metadata.append(line.decode("utf-8", "replace"))
                elif header is None:
                    header = next(
                        csv.reader([line.decode("utf-8", "replace").rstrip("\r\n")], delimiter="\t")
                    )
                elif line.startswith(_TABLE_END.encode()):
                    return _MatrixLayout(metadata, header, skip, rows)
                elif line.strip():
                    rows += 1
    except (OSError, EOFError, zlib.error) as exc:
        raise GEOFormatError(f"is a truncated or corrupt gzip file ({exc})", path=path) from None
    missing = _TABLE_BEGIN if skip is None else _TABLE_END
    raise GEOFormatError(f"has no '{missing}' marker: not a complete series matrix", path=path)


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


_BLOCK_LINES = 4096


def _parse_block(lines: list[bytes], names: list[str], path: Path) -> pl.DataFrame:
    """One block of table lines: IDs text, values Float64 (non-numeric cells NaN)."""
    read = functools.partial(
        pl.read_csv,
        b"".join(lines),
        separator="\t",
        quote_char='"',
        has_header=False,
        new_columns=names,
        truncate_ragged_lines=True,
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
    except pl.exceptions.PolarsError as exc:
        raise GEOFormatError(
            f"has an unreadable expression table ({str(exc).splitlines()[0]})", path=path
        ) from None


def _read_expression(path: Path, layout: _MatrixLayout) -> pd.DataFrame:
    """The expression table, parsed by polars in blocks of lines into one preallocated float64
    array.

    Peak memory is the table plus one block (~1.7x the float table here, where
    parsing the whole file at once took 4x: the text, polars' copy and NumPy's).
    """
    if not layout.header:
        raise GEOFormatError("has an empty expression table", path=path)
    names = [f"c{i}" for i in range(len(layout.header))]
    values = np.empty((layout.rows, len(names) - 1), dtype=np.float64, order="F")
    ids: list[str] = []
    block: list[bytes] = []

    def flush() -> None:
        frame = _parse_block(block, names, path)
        ids.extend(frame.to_series(0).str.strip_chars().to_list())
        values[len(ids) - frame.height : len(ids)] = frame.drop(names[0]).to_numpy()
        block.clear()

    tabs = len(names) - 1
    with _open_binary(path) as handle:
        for number, line in enumerate(bounded_lines(handle, path)):
            if number <= layout.skip:  # metadata lines and the header line
                continue
            if line.startswith(b"!"):
                break
            if line.strip():
                if (cells := line.count(b"\t") + 1) != tabs + 1:
                    raise GEOFormatError(
                        f"line {number + 1} has {cells} cells where the table "
                        f"header has {tabs + 1}: a ragged row would shift its values by a sample",
                        path=path,
                    )
                block.append(line)
                if len(block) == _BLOCK_LINES:
                    flush()
        if block:
            flush()
    np.putmask(values, np.isinf(values), np.nan)  # non-finite cells are missing, never clipped
    index = pd.Index(ids, dtype=object, name="ID")
    _refuse_repeats(index, "probe IDs", path)
    columns = pd.Index(layout.header[1:], dtype=object)
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
    layout = _scan_matrix(path)
    background: list[str] = []
    samples: tuple[str, ...] = ()
    characteristics: list[list[str]] = []
    attributes: dict[str, list[str]] = {}
    for line in layout.metadata:
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
        table = _read_expression(path, layout)
    else:
        table = pd.DataFrame(columns=pd.Index(layout.header[1:], dtype=object), dtype=np.float64)
    columns = list(samples) if samples else list(table.columns)
    rows = [row + [""] * (len(columns) - len(row)) for row in characteristics]
    clinical = pd.DataFrame([row[: len(columns)] for row in rows], columns=columns, dtype=object)
    clinical = clinical.replace("", np.nan)
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


def lines_of(path: Path) -> Iterator[str]:
    try:
        with (
            _open_binary(path) as raw,
            # utf-8-sig: a byte-order mark (Windows editors write one) is not part of the text;
            # universal newlines read CRLF line ends as LF
            io.TextIOWrapper(raw, encoding="utf-8-sig", errors="replace") as handle,
        ):
            yield from bounded_lines(handle, path)
    except (OSError, EOFError, zlib.error) as exc:
        raise GEOFormatError(f"is a truncated or corrupt gzip file ({exc})", path=path) from None

"""Reading GEO files: series matrices and family SOFT files (preprocessing.md § GEO).

A series matrix is read in one pass: the metadata lines give the background
text and the characteristics table, the block between the table markers is
parsed by polars. A SOFT file is streamed line by line; platform tables are
kept, per-sample data tables are skipped without being parsed.
"""

from __future__ import annotations

import csv
import functools
import gzip
import io
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import polars as pl

from ..core import GenotexError

__all__ = [
    "GEOFormatError",
    "SeriesMatrix",
    "SoftFile",
    "characteristics_dictionary",
    "read_series_matrix",
    "read_soft",
]

_BACKGROUND_KEYS = ("!Series_title", "!Series_summary", "!Series_overall_design")
_TABLE_BEGIN, _TABLE_END = "!series_matrix_table_begin", "!series_matrix_table_end"


class GEOFormatError(GenotexError):
    """A GEO file that is truncated, not gzip, or lacks the parts it must have."""


def _open_binary(path: Path):
    """The file's bytes, through gzip when it starts with gzip's magic number."""
    try:
        with open(path, "rb") as probe:
            gzipped = probe.read(2) == b"\x1f\x8b"
    except OSError as exc:
        raise GEOFormatError(f"cannot be read ({exc.strerror or exc})", path=path) from None
    return gzip.open(path, "rb") if gzipped else open(path, "rb")


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
            for number, line in enumerate(handle):
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

    with _open_binary(path) as handle:
        for number, line in enumerate(handle):
            if number <= layout.skip:  # metadata lines and the header line
                continue
            if line.startswith(b"!"):
                break
            if line.strip():
                block.append(line)
                if len(block) == _BLOCK_LINES:
                    flush()
        if block:
            flush()
    index = pd.Index(ids, dtype=object, name="ID")
    return pd.DataFrame(
        values, index=index, columns=pd.Index(layout.header[1:], dtype=object), copy=False
    )


def read_series_matrix(path: str | Path) -> SeriesMatrix:
    """Read a series matrix; a truncated file or one without the table markers is a
    `GEOFormatError`.
    """
    path = Path(path)
    layout = _scan_matrix(path)
    background, samples, characteristics = [], (), []
    for line in layout.metadata:
        key = line.split("\t", 1)[0]
        if key in _BACKGROUND_KEYS:
            background.append(f"{key}\t" + "\t".join(f'"{c}"' for c in _cells(line)))
        elif key == "!Sample_geo_accession":
            samples = tuple(_cells(line))
        elif key == "!Sample_characteristics_ch1":
            characteristics.append(_cells(line))
    expression = _read_expression(path, layout)
    columns = list(samples) if samples else list(expression.columns)
    rows = [row + [""] * (len(columns) - len(row)) for row in characteristics]
    clinical = pd.DataFrame([row[: len(columns)] for row in rows], columns=columns, dtype=object)
    clinical = clinical.replace("", np.nan)
    return SeriesMatrix(path, "\n".join(background), tuple(columns), clinical, expression)


def characteristics_dictionary(
    characteristics: pd.DataFrame, max_values: int = 30
) -> dict[int, list[str]]:
    """Row number -> its distinct values, most frequent first (ties: first seen), at most 30."""
    result = {}
    for position, (_, row) in enumerate(characteristics.iterrows()):
        counts = row.dropna().value_counts(sort=True)
        result[position] = [str(v) for v in counts.index[:max_values]]
    return result


@dataclass
class SoftFile:
    """What a family SOFT (or stand-alone GPL) file holds that preprocessing needs."""

    path: Path
    series: dict[str, list[str]] = field(default_factory=dict)  # !Series_* attributes
    platforms: dict[str, pd.DataFrame] = field(
        default_factory=dict
    )  # GPL -> annotation table (text)
    samples: dict[str, dict[str, list[str]]] = field(default_factory=dict)  # GSM -> attributes

    @property
    def background(self) -> str:
        return "\n".join(
            f"{key}\t{value}" for key in _BACKGROUND_KEYS for value in self.series.get(key, [])
        )

    def characteristics(self) -> pd.DataFrame:
        """Characteristics rows x samples, as in a series matrix (row i = i-th line per sample)."""
        columns = list(self.samples)
        depth = max(
            (len(a.get("!Sample_characteristics_ch1", [])) for a in self.samples.values()),
            default=0,
        )
        rows = [
            [
                (a.get("!Sample_characteristics_ch1", []) + [None] * depth)[i]
                for a in self.samples.values()
            ]
            for i in range(depth)
        ]
        return pd.DataFrame(rows, columns=columns, dtype=object)

    def platform(self, accession: str | None = None) -> pd.DataFrame:
        """One platform table: the one named, or the only one (several: name it)."""
        if not self.platforms:
            raise GEOFormatError("has no platform table", path=self.path)
        if accession is None:
            if len(self.platforms) > 1:
                raise GEOFormatError(
                    f"has several platforms ({', '.join(self.platforms)}): say which",
                    path=self.path,
                )
            return next(iter(self.platforms.values()))
        if accession not in self.platforms:
            raise GEOFormatError(
                f"has no platform {accession} (it has {', '.join(self.platforms)})", path=self.path
            )
        return self.platforms[accession]


def _lines(path: Path) -> Iterator[str]:
    try:
        with (
            _open_binary(path) as raw,
            io.TextIOWrapper(raw, encoding="utf-8", errors="replace") as handle,
        ):
            yield from handle
    except (OSError, EOFError, zlib.error) as exc:
        raise GEOFormatError(f"is a truncated or corrupt gzip file ({exc})", path=path) from None


def _platform_table(lines: list[str], path: Path) -> pd.DataFrame:
    """A platform table; cells are unquoted as pandas' (and so GEOparse's) tab-separated reader
    does.
    """
    records = list(csv.reader((line.rstrip("\r\n") for line in lines), delimiter="\t"))
    header = records[0]
    seen: dict[str, int] = {}
    names = []
    for name in header:  # pandas-style names for duplicated columns: GB_ACC, GB_ACC.1
        count = seen.get(name, 0)
        names.append(name if count == 0 else f"{name}.{count}")
        seen[name] = count + 1
    rows = [row for row in records[1:] if any(cell.strip() for cell in row)]
    width = len(names)
    rows = [(row + [""] * width)[:width] for row in rows]
    table = pd.DataFrame(rows, columns=names, dtype=object)
    return table.replace("", np.nan)


def read_soft(path: str | Path) -> SoftFile:
    """Stream a family SOFT or GPL file: series and sample attributes, platform tables."""
    path = Path(path)
    soft = SoftFile(path)
    entity, accession = None, None
    table: list[str] | None = None
    in_sample_table = False
    for line in _lines(path):
        if in_sample_table:
            in_sample_table = not line.startswith("!sample_table_end")
            continue
        if table is not None:
            if line.startswith("!platform_table_end"):
                soft.platforms[accession] = (
                    _platform_table(table, path) if table else pd.DataFrame()
                )
                table = None
            else:
                table.append(line)
            continue
        if line.startswith("^"):
            entity, _, accession = line[1:].partition("=")
            entity, accession = entity.strip().upper(), accession.strip()
            if entity == "SAMPLE":
                soft.samples[accession] = {}
            continue
        if line.startswith("!platform_table_begin"):
            table = []
            continue
        if line.startswith("!sample_table_begin"):
            in_sample_table = True
            continue
        if not line.startswith("!"):
            continue
        key, _, value = line.rstrip("\r\n").partition(" = ")
        if entity == "SERIES":
            soft.series.setdefault(key, []).append(value)
        elif entity == "SAMPLE":
            soft.samples[accession].setdefault(key, []).append(value)
    if table is not None:
        raise GEOFormatError("ends inside a platform table (truncated?)", path=path)
    return soft

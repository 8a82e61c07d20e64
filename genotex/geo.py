"""Reading GEO files: series matrices and family SOFT files (preprocessing.md § GEO).

A series matrix is read in one pass: the metadata lines give the background
text and the characteristics table, the block between the table markers is
parsed by polars. A SOFT file is streamed line by line; platform tables are
kept, per-sample data tables are skipped without being parsed.
"""

from __future__ import annotations

import csv
import gzip
import io
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

import numpy as np
import pandas as pd
import polars as pl

from .errors import GenotexError

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


def _read_text(path: Path) -> str:
    """The whole decompressed text of a (possibly gzipped) GEO file."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise GEOFormatError(f"cannot be read ({exc.strerror or exc})", path=path) from None
    if raw[:2] == b"\x1f\x8b":
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError, zlib.error) as exc:
            raise GEOFormatError(f"is a truncated or corrupt gzip file ({exc})", path=path) from None
    return raw.decode("utf-8", errors="replace")


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


def _numeric_table(text: str, path: Path) -> pd.DataFrame:
    """The tab-separated block between the table markers as floats, its first column as text IDs."""
    if not text.strip():
        raise GEOFormatError("has an empty expression table", path=path)
    try:
        frame = pl.read_csv(io.StringIO(text), separator="\t", quote_char='"', infer_schema=False,
                            truncate_ragged_lines=True, raise_if_empty=True)  # fmt: skip
    except pl.exceptions.PolarsError as exc:
        raise GEOFormatError(f"has an unreadable expression table ({str(exc).splitlines()[0]})", path=path) from None
    id_column = frame.columns[0]
    values = frame.select(
        pl.col(c).str.strip_chars().cast(pl.Float64, strict=False) for c in frame.columns[1:]
    ).to_numpy(order="fortran") if frame.width > 1 else np.empty((frame.height, 0))
    index = pd.Index(frame.get_column(id_column).str.strip_chars().to_list(), dtype=object, name="ID")
    return pd.DataFrame(values, index=index, columns=pd.Index(frame.columns[1:], dtype=object))


def read_series_matrix(path: str | Path) -> SeriesMatrix:
    """Read a series matrix; a file without the table markers is a `GEOFormatError`."""
    path = Path(path)
    text = _read_text(path)
    begin = text.find(_TABLE_BEGIN)
    end = text.find(_TABLE_END, begin + 1)
    if begin < 0 or end < 0:
        missing = _TABLE_BEGIN if begin < 0 else _TABLE_END
        raise GEOFormatError(f"has no '{missing}' marker: not a complete series matrix", path=path)
    background, samples, characteristics = [], (), []
    for line in text[:begin].splitlines():
        key = line.split("\t", 1)[0]
        if key in _BACKGROUND_KEYS:
            background.append(f"{key}\t" + "\t".join(f'"{c}"' for c in _cells(line)))
        elif key == "!Sample_geo_accession":
            samples = tuple(_cells(line))
        elif key == "!Sample_characteristics_ch1":
            characteristics.append(_cells(line))
    table_start = text.index("\n", begin) + 1
    expression = _numeric_table(text[table_start:end], path)
    columns = list(samples) if samples else list(expression.columns)
    rows = [row + [""] * (len(columns) - len(row)) for row in characteristics]
    clinical = pd.DataFrame([row[: len(columns)] for row in rows], columns=columns, dtype=object)
    clinical = clinical.replace("", np.nan)
    return SeriesMatrix(path, "\n".join(background), tuple(columns), clinical, expression)


def characteristics_dictionary(characteristics: pd.DataFrame, max_values: int = 30) -> dict[int, list[str]]:
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
    platforms: dict[str, pd.DataFrame] = field(default_factory=dict)  # GPL -> annotation table (text)
    samples: dict[str, dict[str, list[str]]] = field(default_factory=dict)  # GSM -> attributes

    @property
    def background(self) -> str:
        return "\n".join(f"{key}\t{value}" for key in _BACKGROUND_KEYS for value in self.series.get(key, []))

    def characteristics(self) -> pd.DataFrame:
        """Characteristics rows x samples, as in a series matrix (row i = i-th line per sample)."""
        columns = list(self.samples)
        depth = max((len(a.get("!Sample_characteristics_ch1", [])) for a in self.samples.values()), default=0)
        rows = [[(a.get("!Sample_characteristics_ch1", []) + [None] * depth)[i] for a in self.samples.values()]
                for i in range(depth)]  # fmt: skip
        return pd.DataFrame(rows, columns=columns, dtype=object)

    def platform(self, accession: str | None = None) -> pd.DataFrame:
        """One platform table: the one named, or the only one (several: name it)."""
        if not self.platforms:
            raise GEOFormatError("has no platform table", path=self.path)
        if accession is None:
            if len(self.platforms) > 1:
                raise GEOFormatError(f"has several platforms ({', '.join(self.platforms)}): say which", path=self.path)
            return next(iter(self.platforms.values()))
        if accession not in self.platforms:
            raise GEOFormatError(f"has no platform {accession} (it has {', '.join(self.platforms)})", path=self.path)
        return self.platforms[accession]


def _lines(path: Path) -> Iterator[str]:
    try:
        with open(path, "rb") as probe:
            opener = gzip.open if probe.read(2) == b"\x1f\x8b" else open
    except OSError as exc:
        raise GEOFormatError(f"cannot be read ({exc.strerror or exc})", path=path) from None
    try:
        with opener(path, "rt", encoding="utf-8", errors="replace") as handle:
            yield from handle
    except (OSError, EOFError, zlib.error) as exc:
        raise GEOFormatError(f"is a truncated or corrupt gzip file ({exc})", path=path) from None


def _platform_table(lines: list[str], path: Path) -> pd.DataFrame:
    """A platform table; cells are unquoted as pandas' (and so GEOparse's) tab-separated reader does."""
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
                soft.platforms[accession] = _platform_table(table, path) if table else pd.DataFrame()
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

"""Family SOFT, stand-alone GPL and `.annot` files: series and sample attributes, platform tables.

The file is streamed line by line; platform tables are kept, per-sample data
tables skipped without being parsed. A file that is not one of these (empty,
a GDS, a lone GSM, not SOFT) is a one-line error naming it and what it is.
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from ..core import blank_as_missing, clipped, notebook_table
from ._geo import BACKGROUND_KEYS, GEOFormatError, lines_of

__all__ = ["SoftFile", "read_soft", "unique_names"]


@dataclass
class SoftFile:
    """What a family SOFT (or stand-alone GPL / `.annot`) file holds that preprocessing needs."""

    path: Path
    series: dict[str, list[str]] = field(default_factory=dict)  # !Series_* attributes
    platforms: dict[str, pd.DataFrame] = field(default_factory=dict)  # GPL -> table (text)
    samples: dict[str, dict[str, list[str]]] = field(default_factory=dict)  # GSM -> attributes
    # every ^PLATFORM, with a table or not, in file order (a dict: lookups stay linear overall)
    declared: dict[str, None] = field(default_factory=dict)

    def __repr__(self) -> str:
        tables = ", ".join(f"{a} ({t.shape[0]} rows x {t.shape[1]} columns)"
                           for a, t in self.platforms.items())  # fmt: skip
        title = (self.series.get("!Series_title") or [""])[0]
        return clipped(
            f"SoftFile({self.path.name}: {tables or 'no platform table'}; "
            f"{len(self.samples)} samples; {title!r})"
        )

    def _repr_html_(self) -> str:
        rows = [("title", (self.series.get("!Series_title") or [""])[0])]
        rows += [(a, f"{t.shape[0]} rows: {', '.join(map(str, t.columns))}")
                 for a, t in self.platforms.items()]  # fmt: skip
        rows += [("samples", f"{len(self.samples)}: {', '.join(list(self.samples)[:5])}")]
        return notebook_table(f"SoftFile {self.path.name}", rows)

    @property
    def background(self) -> str:
        return "\n".join(
            f"{key}\t{value}" for key in BACKGROUND_KEYS for value in self.series.get(key, [])
        )

    @property
    def tableless(self) -> list[str]:
        """Platforms declared without a table (sequencing platforms, typically)."""
        return [accession for accession in self.declared if accession not in self.platforms]

    def characteristics(self) -> pd.DataFrame:
        """Characteristics rows x samples, as in a series matrix (row i = i-th line per sample)."""
        columns = list(self.samples)
        lists = [a.get("!Sample_characteristics_ch1", []) for a in self.samples.values()]
        depth = max((len(cells) for cells in lists), default=0)
        rows = [[(cells + [None] * depth)[i] or None for cells in lists] for i in range(depth)]
        return pd.DataFrame(rows, columns=columns, dtype=object)

    def platform(self, accession: str | None = None) -> pd.DataFrame:
        """One platform table: the one named, or the only one (several: name it)."""
        if accession is not None and accession in self.tableless:
            raise GEOFormatError(
                f"declares platform {accession} without a table (a sequencing platform?): "
                "its probes cannot be mapped to genes",
                path=self.path,
            )
        if not self.platforms:
            without = (
                f" (it declares {', '.join(self.tableless)} without one)" if self.declared else ""
            )
            raise GEOFormatError(f"has no platform table{without}", path=self.path)
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


def unique_names(names: list[str]) -> list[str]:
    """Repeated column names made unique as pandas' `read_csv` does: `A, A, A.1` -> `A, A.2, A.1`.

    A repeat gets `.1`, `.2`, ... skipping any name the header already holds.
    """
    header = set(names)
    counts: dict[str, int] = {}
    out = []
    for original in names:
        name, count = original, counts.get(original, 0)
        while count > 0:
            counts[original] = count + 1
            name = f"{original}.{count}"
            count = count + 1 if name in header else counts.get(name, 0)
        out.append(name)
        counts[name] = count + 1
    return out


def _platform_table(lines: list[str], path: Path, first_line: int = 1) -> pd.DataFrame:
    """A platform table, its cells unquoted as pandas' (and so GEOparse's) tab-separated reader.

    A row with more or fewer cells than the header is an error naming its line
    (`first_line` is the file's line number of the table's header): padding or
    cutting it would put a probe's values, or its gene, in another column.
    """
    records = list(csv.reader((line.rstrip("\r\n") for line in lines), delimiter="\t"))
    if not records:
        return pd.DataFrame()
    names = unique_names(records[0])
    width = len(names)
    rows = []
    for offset, row in enumerate(records[1:], start=1):
        if not any(cell.strip() for cell in row):
            continue
        if len(row) != width:
            raise GEOFormatError(
                f"line {first_line + offset} has {len(row)} cells where its platform table's "
                f"header has {width}: a ragged row would put values under the wrong column",
                path=path,
            )
        rows.append(row)
    table = pd.DataFrame(rows, columns=names, dtype=object)
    return blank_as_missing(table)


_NOT_FAMILY = {
    "DATASET": "a GEO DataSet (GDS) file, not a family SOFT or platform file",
    "SUBSET": "a GEO DataSet (GDS) file, not a family SOFT or platform file",
}


def _check_kind(soft: SoftFile, entities: set[str], first: str | None) -> None:
    """Refuse what is not a family SOFT or platform file, saying what it is."""
    if first is None:
        raise GEOFormatError("is empty: not a SOFT file", path=soft.path)
    if not first.startswith(("^", "!", "#")):
        raise GEOFormatError(f"is not a SOFT file (it starts with {first[:40]!r})", path=soft.path)
    for entity, what in _NOT_FAMILY.items():
        if entity in entities:
            raise GEOFormatError(f"is {what}", path=soft.path)
    if entities and entities <= {"SAMPLE", "DATABASE"}:
        raise GEOFormatError(
            "is a single-sample (GSM) SOFT file, not a family SOFT or platform file", path=soft.path
        )
    if not entities & {"SERIES", "PLATFORM", "ANNOTATION", "SAMPLE"}:
        raise GEOFormatError(
            "holds no GEO series, platform or sample: not a SOFT file", path=soft.path
        )


class _SoftReader:
    """The state of one pass over a SOFT file (entities, the table being read, declared counts)."""

    def __init__(self, path: Path) -> None:
        self.soft = SoftFile(path)
        self.entity: str | None = None
        self.accession = ""
        self.entities: set[str] = set()
        self.table: list[str] | None = None
        self.table_line = 0  # the file's line number of the table's begin marker
        self.line = 0  # the line being fed
        self.in_sample_table = False
        self.declared_rows: dict[str, int] = {}
        self.annotation_platform = ""

    def entity_line(self, line: str) -> None:
        entity, _, accession = line[1:].partition("=")
        self.entity, self.accession = entity.strip().upper(), accession.strip()
        self.entities.add(self.entity)
        if self.entity == "SAMPLE":
            self.soft.samples[self.accession] = {}
        elif self.entity == "PLATFORM":
            self.soft.declared.setdefault(self.accession)

    def attribute_line(self, line: str) -> None:
        key, _, value = line.partition("=")
        key, value = key.strip(), value.strip(" \t\r\n")  # GEO writes `!Series_summary =` too
        if self.entity == "SERIES":
            self.soft.series.setdefault(key, []).append(value)
        elif self.entity == "SAMPLE":
            self.soft.samples[self.accession].setdefault(key, []).append(value)
        elif (
            key in ("!Platform_data_row_count", "!Annotation_platform")
            and self.accession is not None
        ):
            if key == "!Annotation_platform":
                self.annotation_platform = value
            elif value.isascii() and value.isdigit():
                self.declared_rows[self.accession] = int(value)

    def table_name(self) -> str:
        """The table's platform: the accession, else `!Annotation_platform`, else the file's GPL."""
        if self.accession:
            return self.accession
        if self.annotation_platform:
            return self.annotation_platform
        found = re.match(r"GPL\d+", self.soft.path.name)
        return found.group() if found else ""

    def end_table(self) -> None:
        name = self.table_name()
        table = _platform_table(self.table or [], self.soft.path, self.table_line + 1)
        declared = self.declared_rows.get(self.accession)
        if declared is not None and declared != len(table):
            raise GEOFormatError(
                f"has {len(table)} rows in the table of platform {name}, which declares "
                f"{declared} (!Platform_data_row_count): truncated?",
                path=self.soft.path,
            )
        self.soft.platforms[name] = table
        self.soft.declared.setdefault(name)
        self.table = None

    def feed(self, line: str) -> None:
        if self.in_sample_table:
            self.in_sample_table = not line.startswith("!sample_table_end")
        elif self.table is not None:
            if line.startswith("!platform_table_end"):
                self.end_table()
            else:
                self.table.append(line)
        elif line.startswith("^"):
            self.entity_line(line)
        elif line.startswith("!platform_table_begin"):
            self.table, self.table_line = [], self.line
        elif line.startswith("!sample_table_begin"):
            self.in_sample_table = True
        elif line.startswith("!"):
            self.attribute_line(line)


def read_soft(path: str | Path) -> SoftFile:
    """Stream a family SOFT, GPL or `.annot` file: series and sample attributes, platform tables.

    Raises `GEOFormatError` for a file that is not one (empty, a GDS, a lone GSM,
    not SOFT at all), a table cut short of its declared row count, or one
    whose end marker is missing.
    """
    reader = _SoftReader(Path(path))
    lines = enumerate(lines_of(reader.soft.path), start=1)
    first = None
    for reader.line, line in lines:
        if line.strip():
            first = line.strip()
            reader.feed(line)
            break
    for reader.line, line in lines:  # the hot path inline: sample tables are most of the lines
        if reader.in_sample_table:
            if line.startswith("!sample_table_end"):
                reader.in_sample_table = False
        elif reader.table is not None and not line.startswith("!platform_table_end"):
            reader.table.append(line)
        else:
            reader.feed(line)
    if reader.table is not None:
        raise GEOFormatError("ends inside a platform table (truncated?)", path=reader.soft.path)
    _check_kind(reader.soft, reader.entities, first)
    return reader.soft

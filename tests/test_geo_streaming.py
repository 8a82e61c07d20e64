"""The one-pass series-matrix reader across chunk boundaries: values equal pandas' reading of
the table, however the text is cut, compressed or sized (its gzip trailer may mislead the
row estimate), and ragged or blank rows are found in any chunk.
"""

from __future__ import annotations

import gzip
import io

import numpy as np
import pandas as pd
import pytest

from genotex.preprocessing import GEOFormatError, _geo_text, read_series_matrix

SAMPLES = [f"GSM{i}" for i in range(1, 7)]


def _table_text(rows: int, seed: int = 0) -> tuple[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    values = rng.normal(8, 2, size=(rows, len(SAMPLES))).round(4)
    values[3, 2] = np.nan
    lines = [
        f'"P{i}_at"\t' + "\t".join("" if np.isnan(v) else repr(float(v)) for v in row)
        for i, row in enumerate(values)
    ]
    return "\n".join(lines) + "\n", values


def _matrix(table: str) -> str:
    quoted = "\t".join(f'"{s}"' for s in SAMPLES)
    return (
        f'!Series_title\t"streamed"\n!Sample_geo_accession\t{quoted}\n'
        f'!series_matrix_table_begin\n"ID_REF"\t{quoted}\n{table}!series_matrix_table_end\n'
    )


def _expected(table: str) -> pd.DataFrame:
    """pandas' reading of the table alone: an independent parse of the same text."""
    header = "ID_REF\t" + "\t".join(SAMPLES) + "\n"
    return pd.read_csv(io.StringIO(header + table), sep="\t", index_col=0)


@pytest.fixture
def small_chunks(monkeypatch):
    """Chunks of 1 KB: a 2,000-row table crosses ~200 chunk boundaries."""
    monkeypatch.setattr(_geo_text, "_CHUNK", 1024)


@pytest.mark.parametrize("form", ["plain", "gzip", "two gzip members", "crlf"])
def test_values_equal_pandas_across_chunk_boundaries(tmp_path, small_chunks, form):
    table, _ = _table_text(2000)
    text = _matrix(table)
    path = tmp_path / ("m.txt.gz" if "gzip" in form else "m.txt")
    if form == "plain":
        path.write_text(text)
    elif form == "crlf":
        path.write_bytes(text.replace("\n", "\r\n").encode())
    elif form == "gzip":
        path.write_bytes(gzip.compress(text.encode()))
    else:  # the trailer gives the last member's size only: the row estimate is far too small
        middle = len(text) - 40
        path.write_bytes(
            gzip.compress(text[:middle].encode()) + gzip.compress(text[middle:].encode())
        )
    matrix = read_series_matrix(path)
    expected = _expected(table)
    assert list(matrix.expression.index) == list(expected.index)
    assert list(matrix.expression.columns) == SAMPLES
    np.testing.assert_array_equal(matrix.expression.to_numpy(), expected.to_numpy())


def test_blank_lines_in_any_chunk_are_skipped(tmp_path, small_chunks):
    table, _ = _table_text(600)
    lines = table.splitlines(keepends=True)
    for position in (500, 250, 5):  # from the end, so the positions stay valid
        lines.insert(position, "\n" if position != 250 else "  \r\n")
    path = tmp_path / "m.txt"
    path.write_text(_matrix("".join(lines)))
    matrix = read_series_matrix(path)
    np.testing.assert_array_equal(matrix.expression.to_numpy(), _expected(table).to_numpy())


@pytest.mark.parametrize("kind", ["short", "long", "short and long"])
def test_a_ragged_row_deep_in_the_table_names_its_line(tmp_path, small_chunks, kind):
    table, _ = _table_text(1500)
    lines = table.splitlines(keepends=True)
    if "short" in kind:
        lines[1200] = lines[1200].rsplit("\t", 1)[0] + "\n"
    if "long" in kind:
        lines[1201] = lines[1201].rstrip("\n") + "\t1.0\n"
    path = tmp_path / "m.txt"
    path.write_text(_matrix("".join(lines)))
    first_bad = 1200 if "short" in kind else 1201
    line = first_bad + 5  # four metadata lines and the header come first (1-based)
    with pytest.raises(GEOFormatError, match=rf"line {line} has \d cells where the table header"):
        read_series_matrix(path)


def test_reading_stops_at_the_end_marker(tmp_path):
    """What follows the table is never decompressed (a damaged tail does not matter)."""
    table, _ = _table_text(50)
    text = _matrix(table).encode()
    path = tmp_path / "m.txt.gz"
    path.write_bytes(gzip.compress(text) + b"\x1f\x8b garbage after the member")
    with pytest.raises(GEOFormatError, match="truncated or corrupt gzip"):
        read_series_matrix(path)  # a second member that is garbage: corrupt, said as such
    path.write_bytes(gzip.compress(text))
    assert read_series_matrix(path).expression.shape == (50, len(SAMPLES))


def test_a_trailer_claiming_4_gib_allocates_no_more_than_the_first_allocation(tmp_path):
    """A crafted gzip trailer must not make the reader reserve gigabytes."""
    table, _ = _table_text(40)
    data = bytearray(gzip.compress(_matrix(table).encode()))
    data[-4:] = (2**32 - 1).to_bytes(4, "little")  # ISIZE: 4 GiB of text, the largest it can say
    path = tmp_path / "m.txt.gz"
    path.write_bytes(bytes(data))
    from genotex.preprocessing import _geo

    rows = _geo._expected_rows(path, 40, len(table), len(SAMPLES))
    assert rows * len(SAMPLES) * 8 <= _geo._FIRST_ALLOCATION
    with pytest.raises(GEOFormatError, match="truncated or corrupt gzip"):
        read_series_matrix(path)  # the trailer's size check fails: corrupt, said as such


def test_infinite_cells_in_any_chunk_are_missing(tmp_path, small_chunks):
    """inf, -Inf and a number beyond float range (1e999) are missing values, never clipped,
    in whichever chunk they fall (each chunk's block is cleaned as it is written)."""
    table, values = _table_text(2_000, seed=3)
    lines = table.splitlines()
    spots = {5: "inf", 700: "-Inf", 1_999: "1e999"}  # the first, a middle and the last chunk
    for row, cell in spots.items():
        cells = lines[row].split("\t")
        cells[4] = cell
        lines[row] = "\t".join(cells)
        values[row, 3] = np.nan
    path = tmp_path / "m.txt"
    path.write_text(_matrix("\n".join(lines) + "\n"))
    got = read_series_matrix(path).expression.to_numpy()
    np.testing.assert_array_equal(np.isnan(got), np.isnan(values))
    np.testing.assert_array_equal(got[~np.isnan(got)], values[~np.isnan(values)])


def test_a_table_allocated_without_huge_pages_leaves_numpys_advice_as_it_was(monkeypatch):
    """The switch is process-wide: it must be back as it was, and without it this is np.empty."""
    from genotex.core import _memory

    calls = []
    state = {"on": True}

    def switch(enabled):
        calls.append(enabled)
        previous, state["on"] = state["on"], enabled
        return previous

    monkeypatch.setattr(_memory, "_toggle", lambda: switch)
    table = _memory.empty_without_huge_pages((3, 4), order="F")
    assert calls == [False, True] and state["on"] is True
    assert table.shape == (3, 4) and table.dtype == np.float64 and table.flags.f_contiguous
    assert table.flags.owndata  # the GEO reader grows it in place
    monkeypatch.setattr(_memory, "_toggle", lambda: None)
    assert _memory.empty_without_huge_pages(5).shape == (5,)


def test_this_numpy_has_the_huge_page_switch():
    """Without it the GEO table is allocated with NumPy's advice again (slower, not wrong):
    a NumPy that drops the private switch should be noticed here, not in a benchmark."""
    from genotex.core import _memory

    assert callable(_memory._toggle())

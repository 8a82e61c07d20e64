"""GEO files from Windows editors are read; damaged GEO files are errors, never shifted values."""

from __future__ import annotations

import gzip
import time

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from genotex.core import GenotexError
from genotex.preprocessing import GEOFormatError, read_series_matrix, read_soft


def _matrix(rows: list[str], samples=("GSM1", "GSM2", "GSM3")) -> str:
    header = "\t".join(f'"{s}"' for s in ("ID_REF", *samples))
    return (
        '!Series_title\t"A study"\n'
        + "!Sample_geo_accession\t"
        + "\t".join(f'"{s}"' for s in samples)
        + '\n!Sample_characteristics_ch1\t"disease: a"\t"disease: b"\t"disease: a"\n'
        + "!series_matrix_table_begin\n"
        + header
        + "\n"
        + "".join(row + "\n" for row in rows)
        + "!series_matrix_table_end\n"
    )


def _rows(n: int) -> list[str]:
    return [f'"P{i}"\t{i}.0\t{i}.5\t{i}.25' for i in range(n)]


def test_a_matrix_with_a_byte_order_mark_and_crlf_reads_like_the_plain_one(tmp_path):
    plain, windows = tmp_path / "plain.txt", tmp_path / "windows.txt"
    text = _matrix(_rows(5))
    plain.write_text(text)
    windows.write_bytes(b"\xef\xbb\xbf" + text.replace("\n", "\r\n").encode())
    a, b = read_series_matrix(plain), read_series_matrix(windows)
    assert a.background == b.background and "!Series_title" in b.attributes
    assert a.samples == b.samples == ("GSM1", "GSM2", "GSM3")
    np.testing.assert_array_equal(a.expression.to_numpy(), b.expression.to_numpy())
    assert list(b.expression.index) == [f"P{i}" for i in range(5)]


@pytest.mark.parametrize("row", ['"P7"\t7.0\t7.5', '"P7"\t7.0\t7.5\t7.25\t9.0'])
def test_a_ragged_row_past_the_first_of_its_block_is_an_error_naming_its_line(tmp_path, row):
    rows = _rows(10)
    rows[7] = row  # the 8th table row: inside the block, not its first line
    path = tmp_path / "m.txt"
    path.write_text(_matrix(rows))
    with pytest.raises(GEOFormatError, match=r"line 13 has \d cells where the table header has 4"):
        read_series_matrix(path)


def _soft(platform_rows: list[str], platforms: int = 1) -> str:
    head = "^SERIES = GSE1\n!Series_title = A study\n"
    tables = "".join(
        f"^PLATFORM = GPL{k}\n!Platform_title = array {k}\n" for k in range(2, platforms + 1)
    )
    return (
        head
        + tables
        + "^PLATFORM = GPL1\n!platform_table_begin\nID\tGene Symbol\tSPOT\n"
        + "".join(r + "\n" for r in platform_rows)
        + "!platform_table_end\n"
        + "^SAMPLE = GSM1\n!Sample_characteristics_ch1 = disease: a\n"
    )


def test_a_carriage_return_inside_the_table_header_is_an_error_naming_the_file(tmp_path):
    """Found by the fuzz test below on CI: the csv module refuses a lone CR inside a cell, and
    that reached the user as a traceback."""
    path = tmp_path / "GSE1_series_matrix.txt"
    path.write_text(_matrix(_rows(3)).replace('"GSM2"\t"GSM3"\n"P0"', '"GSM2"\r\t"GSM3"\n"P0"'))
    assert b'"GSM2"\r\t' in path.read_bytes()
    with pytest.raises(GEOFormatError, match=r"the table header cannot be read") as error:
        read_series_matrix(path)
    assert "GSE1_series_matrix.txt" in str(error.value)


def test_a_family_soft_with_a_byte_order_mark_and_crlf_is_read(tmp_path):
    path = tmp_path / "GSE1_family.soft.gz"
    text = _soft(["p1\tTP53\t1", "p2\tEGFR\t2"]).replace("\n", "\r\n")
    path.write_bytes(gzip.compress(b"\xef\xbb\xbf" + text.encode()))
    soft = read_soft(path)
    assert soft.series["!Series_title"] == ["A study"]
    assert soft.platforms["GPL1"]["Gene Symbol"].tolist() == ["TP53", "EGFR"]
    assert soft.platforms["GPL1"]["SPOT"].tolist() == ["1", "2"]  # no '\r' left in the last cell


def test_a_platform_row_with_an_extra_field_is_an_error_not_a_shifted_gene(tmp_path):
    path = tmp_path / "GSE1_family.soft"
    path.write_text(_soft(["p1\tTP53\t1", "p2\t\tEGFR\t2"]))
    with pytest.raises(GEOFormatError, match="line 7 has 4 cells where its platform table's"):
        read_soft(path)


def test_many_declared_platforms_are_read_in_linear_time(tmp_path):
    timings = []
    for count in (5_000, 20_000):
        path = tmp_path / f"GSE{count}_family.soft"
        path.write_text(_soft(["p1\tTP53\t1"], platforms=count))
        started = time.perf_counter()
        soft = read_soft(path)
        timings.append(time.perf_counter() - started)
        assert len(soft.declared) == count and len(soft.tableless) == count - 1
    # 4x the platforms: a quadratic lookup took ~16x (31 s for 60,000); linear takes ~4x
    assert timings[1] < 10 * timings[0] + 0.5


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    cut=st.integers(min_value=0, max_value=400),
    junk=st.binary(max_size=6),
    gzipped=st.booleans(),
    kind=st.sampled_from(["matrix", "soft"]),
)
@example(cut=183, junk=b"\r", gzipped=False, kind="matrix")  # a CR in the table header
@example(cut=191, junk=b"\x1f\x8b", gzipped=False, kind="matrix")  # rows polars took for gzip
def test_damaged_geo_files_give_a_genotex_error_or_a_table(
    tmp_path_factory, cut, junk, gzipped, kind
):
    """A GEO file cut anywhere, with junk inserted: read, or refused with a GenotexError."""
    text = (
        _matrix(_rows(6)) if kind == "matrix" else _soft(["p1\tTP53\t1", "p2\tEGFR\t2"])
    ).encode()
    data = text[:cut] + junk + text[cut:]
    path = tmp_path_factory.mktemp("geo") / ("f.txt.gz" if gzipped else "f.txt")
    path.write_bytes(gzip.compress(data) if gzipped else data)
    try:
        if kind == "matrix":
            read_series_matrix(path)
        else:
            read_soft(path)
    except GenotexError:
        pass


def test_a_gzip_of_one_huge_line_is_refused_at_the_line_limit(tmp_path, monkeypatch):
    path = tmp_path / "GSE1_series_matrix.txt.gz"
    with gzip.open(path, "wb") as handle:  # ~3 MB of one line, a few KB compressed
        handle.write(b"!Series_title\t" + b"x" * 3_000_000 + b"\n")
    monkeypatch.setenv("GENOTEX_MAX_LINE_MB", "1")
    with pytest.raises(GEOFormatError, match="line 1 is longer than 1 MB"):
        read_series_matrix(path)
    with pytest.raises(GEOFormatError, match="line 1 is longer than 1 MB"):
        read_soft(path)
    monkeypatch.setenv("GENOTEX_MAX_LINE_MB", "64")
    monkeypatch.setenv("GENOTEX_MAX_TEXT_MB", "2")
    with pytest.raises(GEOFormatError, match="more than 2 MB of text"):
        read_series_matrix(path)


@pytest.mark.skipif(not hasattr(__import__("os"), "mkfifo"), reason="no FIFOs on this system")
def test_a_fifo_named_like_a_series_matrix_is_refused_not_waited_on(tmp_path):
    import os
    import subprocess
    import sys

    cohort = tmp_path / "input" / "GEO" / "Asthma" / "GSE1"
    cohort.mkdir(parents=True)
    os.mkfifo(cohort / "GSE1_series_matrix.txt.gz")
    with pytest.raises(GEOFormatError, match="not a regular file"):
        read_series_matrix(cohort / "GSE1_series_matrix.txt.gz")
    done = subprocess.run(  # the command as a user runs it: it must end, with one sentence
        [sys.executable, "-m", "genotex", "inspect", str(cohort)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1 and "not a regular file" in done.stderr, done.stderr


def test_an_empty_expression_table_is_said_to_be_empty_not_unended(tmp_path):
    head = '!Series_title\t"x"\n!Sample_geo_accession\t"GSM1"\t"GSM2"\n!series_matrix_table_begin\n'
    no_header = tmp_path / "GSE1_series_matrix.txt.gz"
    no_header.write_bytes(gzip.compress((head + "!series_matrix_table_end\n").encode()))
    with pytest.raises(GEOFormatError, match="its expression table is empty"):
        read_series_matrix(no_header)
    no_rows = tmp_path / "GSE2_series_matrix.txt.gz"
    table = '"ID_REF"\t"GSM1"\t"GSM2"\n!series_matrix_table_end\n'
    no_rows.write_bytes(gzip.compress((head + table).encode()))
    matrix = read_series_matrix(no_rows)  # a header and no row: a table of no probe
    assert matrix.samples == ("GSM1", "GSM2") and len(matrix.expression) == 0

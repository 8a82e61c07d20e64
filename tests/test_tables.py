"""The table reader agrees with pandas' read_csv(index_col=0), as the published evaluator read."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from genotex.core import TableError, read_header, read_table
from genotex.core import _tables as tables
from genotex.evaluation import table_similarity


@pytest.fixture(params=["general", "wide"])
def reader_path(request, monkeypatch):
    """Run a test through both parsing paths of read_table."""
    monkeypatch.setattr(tables, "WIDE_TABLE_COLUMNS", 0 if request.param == "wide" else 10**9)
    return request.param


def test_fixture_tables_read_as_pandas_reads_them(eval_fixtures, reader_path):
    files = sorted(eval_fixtures.glob("case1/*/output/preprocess/*/**/*.csv"))
    assert len(files) > 20
    for path in files:
        # round_trip: pandas 3's default (and only) parse; pandas 2's default is off in the
        # last bit
        exact = {"float_precision": "round_trip"} if pd.__version__ < "3" else {}
        expected = pd.read_csv(path, index_col=0, **exact)
        table = read_table(path, features_are_rows=False)
        assert list(table.row_labels) == [str(x) for x in expected.index], path
        assert list(table.column_labels) == list(expected.columns), path
        np.testing.assert_allclose(
            table.values, expected.to_numpy(dtype=float), rtol=1e-15, equal_nan=True
        )


def test_pandas_na_spellings_are_missing_and_short_rows_padded(tmp_path, reader_path):
    path = tmp_path / "t.csv"
    path.write_text(",a,b,c\nx,NA,1.5,\ny,n/a,null\nz,2,NaN,3\n")
    table = read_table(path, features_are_rows=False)
    expected = pd.read_csv(path, index_col=0).to_numpy(dtype=float)
    np.testing.assert_array_equal(np.isnan(table.values), np.isnan(expected))
    assert table.values[2, 0] == 2.0


def test_a_late_non_number_is_found_after_the_inference_window(tmp_path):
    path = tmp_path / "t.csv"
    rows = "".join(f"r{i},{i}\n" for i in range(2000))
    path.write_text(",a\n" + rows + "r2000,abc\n")
    table = read_table(path, features_are_rows=True)
    assert table.bad_cells and list(table.bad_cells) == [0]
    with pytest.raises(TableError, match="non-numeric"):
        table.block(table.features, table.samples)
    clean_rows = table.features[:10]
    assert table.block(clean_rows, table.samples).shape == (10, 1)


def test_both_paths_agree_with_pandas_on_crlf_blank_lines_and_bad_cells(tmp_path, reader_path):
    path = tmp_path / "t.csv"
    path.write_bytes(b",a,b,c\r\nNA,1,2,3\r\n\r\ny,4, 5 ,x\r\nz,1e-3,inf,-2\r\n")
    table = read_table(path, features_are_rows=False)
    expected = pd.read_csv(path, index_col=0)
    assert [None if pd.isna(x) else x for x in expected.index] == list(table.row_labels)
    np.testing.assert_array_equal(table.values[[0, 2]], expected.iloc[[0, 2]].to_numpy(dtype=float))
    assert {k: v.tolist() for k, v in table.bad_cells.items()} == {2: [1]}  # "x" in row y, column c


def test_quoted_wide_tables_fall_back_to_the_general_reader(tmp_path, monkeypatch):
    monkeypatch.setattr(tables, "WIDE_TABLE_COLUMNS", 0)
    path = tmp_path / "t.csv"
    path.write_text(',a,b\n"GENE,1",1,2\nG2,3,4\n')
    table = read_table(path, features_are_rows=True)
    assert list(table.row_labels) == ["GENE,1", "G2"]


def test_a_quoted_header_spanning_two_lines(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text('"",a,"b\nc"\nx,1,2\ny,3,4\n')
    table = read_table(path, features_are_rows=False)
    assert list(table.column_labels) == ["a", "b\nc"] and table.values.tolist() == [[1, 2], [3, 4]]


def test_numeric_row_labels_stay_text(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("ID,a\n1,0.5\n2,0.25\n")
    assert list(read_table(path, features_are_rows=False).row_labels) == ["1", "2"]


def test_header_only_reads_the_first_record(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text('"",trait,"GENE,1",Age\nrow,1,2,3\n' + "garbage\x00\n" * 3)
    assert read_header(path) == ["trait", "GENE,1", "Age"]
    (tmp_path / "empty.csv").write_text("")
    with pytest.raises(TableError, match="no header"):
        read_header(tmp_path / "empty.csv")


def test_a_missing_row_label_in_both_tables_is_one_label_through_pandas_set_operations(tmp_path):
    """Missing labels are None in a table; pandas' intersection returns them as NaN. Both are
    the same missing label when a block is read (as pandas' get_indexer matched them)."""
    pred, ref = tmp_path / "pred.csv", tmp_path / "ref.csv"
    pred.write_text("ID,S1,S2\nA,1,2\nNA,3,4\nC,5,6\n")
    ref.write_text("ID,S2,S1\nNA,30,40\nA,10,20\n")
    tables = [read_table(path, features_are_rows=True) for path in (pred, ref)]
    features = pd.Index(tables[0].features).intersection(pd.Index(tables[1].features))
    samples = pd.Index(tables[0].samples).intersection(pd.Index(tables[1].samples))
    assert list(features)[0] == "A" and pd.isna(list(features)[1])  # NaN, not None
    assert tables[0].block(features, samples).tolist() == [[1, 2], [3, 4]]
    assert tables[1].block(features, samples).tolist() == [[20, 10], [40, 30]]
    scores = table_similarity(*tables)
    assert scores["attributes_jaccard"] == 2 / 3 and scores["samples_jaccard"] == 1.0

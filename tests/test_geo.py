"""The GEO readers, cross-checked against GEOparse where both read the same thing."""

from __future__ import annotations

import gzip

import numpy as np
import pytest

from genotex.preprocessing import (
    GEOFormatError,
    characteristics_dictionary,
    extract_symbols,
    map_probes,
    read_series_matrix,
    read_soft,
)

GEOparse = pytest.importorskip("GEOparse")


@pytest.fixture(scope="module")
def real(shared):
    return shared / "data" / "real" / "geo"


@pytest.mark.parametrize(
    ("soft", "platform"),
    [
        ("GSE19161/GSE19161_family.soft.gz", "GPL9717"),
        ("GSE51280/GSE51280_family.soft.gz", "GPL17590"),
        ("GSE12080/GSE12080_family.soft.gz", "GPL7025"),
        ("platforms/GPL96.txt.gz", "GPL96"),
    ],
)
def test_platform_tables_agree_with_geoparse(real, soft, platform):
    ours = read_soft(real / soft).platforms[platform]
    theirs = GEOparse.get_GEO(filepath=str(real / soft), silent=True)
    theirs = theirs.table if platform == "GPL96" else theirs.gpls[platform].table
    assert list(ours.columns) == list(theirs.columns)  # both rename a duplicated GB_ACC to GB_ACC.1
    assert ours["ID"].astype(str).tolist() == theirs["ID"].astype(str).tolist()
    for column in ours.columns:  # compare as text: GEOparse reads numeric-looking cells as numbers
        a = ours[column].fillna("").astype(str).str.strip()
        b = (
            theirs[column]
            .map(
                lambda v: (
                    ""
                    if v != v
                    else (str(int(v)) if isinstance(v, float) and v.is_integer() else str(v))
                )
            )
            .str.strip()
        )
        mismatch = (a != b).sum()
        assert mismatch == 0, f"{column}: {mismatch} cells differ"


@pytest.mark.parametrize("series", ["GSE19161", "GSE51280"])
def test_series_matrix_values_agree_with_the_samples_value_columns(real, series):
    matrix = read_series_matrix(next((real / series).glob("*_series_matrix.txt.gz")))
    gse = GEOparse.get_GEO(filepath=str(real / series / f"{series}_family.soft.gz"), silent=True)
    assert list(matrix.samples) == list(gse.gsms)
    for name, gsm in gse.gsms.items():
        values = gsm.table.set_index(gsm.table["ID_REF"].astype(str))["VALUE"].astype(float)
        ours = matrix.expression[name]
        shared_ids = ours.index.intersection(values.index)
        assert len(shared_ids) == len(ours)
        np.testing.assert_allclose(
            ours.loc[shared_ids].to_numpy(), values.loc[shared_ids].to_numpy(), equal_nan=True
        )


def _raw_matrix(path):
    """A series matrix read with nothing but the standard library: the expected values' source."""
    lines = gzip.decompress(path.read_bytes()).decode().splitlines()
    begin = lines.index("!series_matrix_table_begin")
    end = lines.index("!series_matrix_table_end")
    header, *rows = (line.split("\t") for line in lines[begin + 1 : end] if line.strip())
    characteristics = [
        [cell.strip('"') for cell in line.split("\t")[1:]]
        for line in lines[:begin]
        if line.startswith("!Sample_characteristics_ch1")
    ]
    return header, rows, characteristics


@pytest.mark.parametrize("series", ["GSE19161", "GSE51280"])
def test_series_matrix_quirks_against_the_raw_file(real, series):
    path = real / series / f"{series}_series_matrix.txt.gz"
    header, rows, characteristics = _raw_matrix(path)
    matrix = read_series_matrix(path)
    assert matrix.expression.shape == (len(rows), len(header) - 1)
    ids = [
        row[0].strip('"') for row in rows
    ]  # quoted (GSE19161) or not (GSE51280): text either way
    assert list(matrix.expression.index) == ids and all(
        isinstance(i, str) for i in matrix.expression.index
    )
    empty = sum(cell.strip().strip('"') == "" for row in rows for cell in row[1:])
    assert int(matrix.expression.isna().sum().sum()) == empty  # empty cells are missing values
    rows_found = characteristics_dictionary(matrix.characteristics)
    assert len(rows_found) == len(characteristics)
    for position, cells in enumerate(characteristics):
        distinct = {c for c in cells if c}
        assert set(rows_found[position]) <= distinct
        assert len(rows_found[position]) == min(len(distinct), 30)  # at most 30 values a row


def test_symbols_split_multi_gene_probes_and_skip_noise():
    assert extract_symbols("RPS27A /// UBB /// UBC") == ["RPS27A", "UBB", "UBC"]
    assert extract_symbols("LOC644315 /// RPS7") == ["RPS7"]
    assert extract_symbols("NM_001 // TP53 // DNA binding // TP53") == ["TP53"]
    assert extract_symbols("C10orf54; NR_024 | LINC00473") == ["C10orf54"]
    assert extract_symbols(float("nan")) == []


def test_a_probe_with_k_genes_gives_each_one_kth_and_genes_sum():
    import pandas as pd

    expression = pd.DataFrame(
        {"S1": [6.0, 2.0, np.nan], "S2": [3.0, 1.0, 4.0]}, index=["p1", "p2", "p3"]
    )
    pairs = pd.DataFrame(
        {"ID": ["p1", "p2", "p3", "p9"], "Gene": ["AKT1 /// BRCA1 /// CDK2", "AKT1", "CDK2", "ZYX"]}
    )
    genes = map_probes(expression, pairs)
    assert list(genes.index) == ["AKT1", "BRCA1", "CDK2"]
    np.testing.assert_allclose(genes.loc["AKT1"], [2.0 + 2.0, 1.0 + 1.0])
    np.testing.assert_allclose(
        genes.loc["CDK2"], [2.0 + 0.0, 1.0 + 4.0]
    )  # a missing value counts as 0


def test_bad_geo_files_are_clear_errors(tmp_path, real):
    truncated = tmp_path / "GSE1_series_matrix.txt.gz"
    truncated.write_bytes((real / "GSE51280" / "GSE51280_series_matrix.txt.gz").read_bytes()[:5000])
    with pytest.raises(GEOFormatError, match="truncated or corrupt gzip"):
        read_series_matrix(truncated)
    no_table = tmp_path / "GSE2_series_matrix.txt.gz"
    no_table.write_bytes(gzip.compress(b'!Series_title\t"x"\n!Sample_geo_accession\t"GSM1"\n'))
    with pytest.raises(GEOFormatError, match="series_matrix_table_begin"):
        read_series_matrix(no_table)
    soft = tmp_path / "GSE3_family.soft.gz"
    soft.write_bytes(
        gzip.compress(b"^SERIES = GSE3\n!Series_title = x\n^SAMPLE = GSM1\n!Sample_title = a\n")
    )
    with pytest.raises(GEOFormatError, match="no platform table"):
        read_soft(soft).platform()


def test_platforms_keyed_by_entrez_ids_map_through_gene_info(shared):
    import pandas as pd

    from genotex.preprocessing import entrez_to_symbol, gene_id_symbols

    ids = gene_id_symbols(shared / "data" / "real" / "ncbi" / "Homo_sapiens.gene_info.gz")
    assert ids["7157"] == "TP53"
    pairs = pd.DataFrame({"ID": ["p1", "p2", "p3"], "Gene": ["7157", "1956.0", "999999999"]})
    mapped = entrez_to_symbol(pairs, ids)
    assert mapped["Gene"].tolist() == [
        "TP53",
        "EGFR",
    ]  # unknown IDs dropped, float-looking IDs read

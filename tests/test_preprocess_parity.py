"""Preprocessing parity on real inputs (shared/data/real) against shared/fixtures/preprocess."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from genotex.cli import main
from genotex.preprocessing import build_synonym_table

RECIPES = Path(__file__).parent / "recipes"
COHORTS = [
    ("Liver_Cancer", "GSE14520", "geo/GSE14520", "Liver_Cancer/GSE14520.toml"),
    ("Ovarian_Cancer", "GSE19161", "geo/GSE19161", "Ovarian_Cancer/GSE19161.toml"),
    ("Breast_Cancer", "GSE51280", "geo/GSE51280", "Breast_Cancer/GSE51280.json"),
    ("Bile_Duct_Cancer", "Xena", "tcga/TCGA_Bile_Duct_Cancer_(CHOL)", None),
    ("Large_B-cell_Lymphoma", "Xena", "tcga/TCGA_Large_Bcell_Lymphoma_(DLBC)", None),
]


@pytest.fixture(scope="module")
def preprocessed(shared, tmp_path_factory):
    out = tmp_path_factory.mktemp("preprocess")
    synonyms = shared / "fixtures" / "preprocess" / "metadata" / "gene_synonym.json"
    for trait, _cohort, folder, recipe in COHORTS:
        args = [
            "preprocess",
            "--trait",
            trait,
            "--cohort-dir",
            str(shared / "data" / "real" / folder),
            "--synonyms",
            str(synonyms),
            "--out",
            str(out),
        ]
        if recipe:
            args += ["--recipe", str(RECIPES / recipe)]
        result = CliRunner().invoke(main, args)
        assert result.exit_code == 0, result.output
    return out


@pytest.mark.parametrize(("trait", "cohort"), [(t, c) for t, c, _, _ in COHORTS])
def test_outputs_match_the_reference(shared, preprocessed, trait, cohort):
    expected_root = (
        shared / "fixtures" / "preprocess" / "expected" / "output" / "preprocess" / trait
    )
    for sub in ("gene_data", "clinical_data", ""):
        expected_path = expected_root / sub / f"{cohort}.csv"
        actual_path = preprocessed / trait / sub / f"{cohort}.csv"
        assert actual_path.exists() == expected_path.exists(), f"{sub or 'linked'} presence"
        if not expected_path.exists():
            continue
        expected = pd.read_csv(expected_path, index_col=0)
        actual = pd.read_csv(actual_path, index_col=0)
        expected.index, actual.index = expected.index.astype(str), actual.index.astype(str)
        assert set(expected.index) == set(actual.index) and set(expected.columns) == set(
            actual.columns
        )
        np.testing.assert_allclose(
            actual.loc[expected.index, expected.columns].to_numpy(float),
            expected.to_numpy(float),
            rtol=1e-9,
            atol=1e-12,
            equal_nan=True,
        )
    expected_record = json.loads((expected_root / "cohort_info.json").read_text())[cohort]
    actual_record = json.loads((preprocessed / trait / "cohort_info.json").read_text())[cohort]
    expected_record.pop("note"), actual_record.pop("note")
    assert actual_record == expected_record


def test_the_shared_comparator_agrees(shared, preprocessed):
    done = subprocess.run(
        [
            sys.executable,
            str(shared / "tools" / "compare_preprocess.py"),
            str(shared / "fixtures" / "preprocess" / "expected" / "output" / "preprocess"),
            str(preprocessed),
            *(f"{t}/{c}" for t, c, _, _ in COHORTS),
        ],
        capture_output=True,
        text=True,
    )
    last = done.stdout.strip().splitlines()[-1]
    assert done.returncode == 0 and last == "preprocess parity 16/16", done.stdout


def test_the_synonym_table_built_from_gene_info_equals_the_published_one_but_its_dash_key(shared):
    built = build_synonym_table(shared / "data" / "real" / "ncbi" / "Homo_sapiens.gene_info.gz")
    published = json.loads(
        (shared / "fixtures" / "preprocess" / "metadata" / "gene_synonym.json").read_text()
    )
    assert "-" in published and "-" not in built
    published.pop("-")
    assert built == published
    assert built["C11ORF52"] == "HSPB2-C11orf52"  # lower-case official symbols are not protected

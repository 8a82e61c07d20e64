"""Property tests: every reader, fed damaged inputs, returns a value or raises a GenotexError.

Each test takes a well-formed file, cuts it anywhere and inserts random bytes
there, and asserts that only `GenotexError` escapes (never a traceback of
another kind) and that nothing is written outside the output folder. The JSON,
series-matrix and SOFT readers have theirs beside their other tests
(test_json_reader.py, test_geo_damaged.py).
"""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from genotex.core import GenotexError, read_table
from genotex.evaluation import evaluate, load_report, write_report
from genotex.preprocessing import Recipe, read_xena

_DAMAGE = {
    "cut": st.integers(min_value=0, max_value=2_000),
    "junk": st.binary(max_size=12),
}
_SETTINGS = settings(
    max_examples=120,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)


def _damaged(data: bytes, cut: int, junk: bytes) -> bytes:
    cut = min(cut, len(data))
    return data[:cut] + junk + data[cut:]


_CSV = b',TP53,EGFR,Age\nGSM1,1.5,2.25,61\nGSM2,"3.0",NA,47\nGSM3,-0.5,1e3,\n'


@_SETTINGS
@given(**_DAMAGE, rows=st.booleans())
def test_a_damaged_csv_is_a_table_or_a_table_error(tmp_path_factory, cut, junk, rows):
    path = tmp_path_factory.mktemp("csv") / "t.csv"
    path.write_bytes(_damaged(_CSV, cut, junk))
    try:
        table = read_table(path, features_are_rows=rows)
    except GenotexError:
        return
    assert table.values.shape == (len(table.row_labels), len(table.column_labels))


_CLINICAL = b"sampleID\tage_at_initial_pathologic_diagnosis\tgender\nTCGA-AA-0001-01\t61\tMALE\n"
_EXPRESSION = b"sample\tTCGA-AA-0001-01\tTCGA-AA-0002-11\nTP53\t1.5\t2.0\nEGFR\t0.5\tNA\n"


@_SETTINGS
@given(**_DAMAGE, which=st.sampled_from(["clinical", "expression"]))
def test_a_damaged_xena_cohort_is_read_or_a_genotex_error(tmp_path_factory, cut, junk, which):
    folder = tmp_path_factory.mktemp("xena")
    clinical = _damaged(_CLINICAL, cut, junk) if which == "clinical" else _CLINICAL
    expression = _damaged(_EXPRESSION, cut, junk) if which == "expression" else _EXPRESSION
    (folder / "TCGA.AA.sampleMap_AA_clinicalMatrix").write_bytes(clinical)
    (folder / "TCGA.AA.sampleMap_HiSeqV2_PANCAN").write_bytes(expression)
    try:
        read_xena(folder)
    except GenotexError:
        pass


_TOML = b"""trait = "Asthma"
cohort = "GSE1"

[gene]
usable = true

[variables.trait]
row = 0
rules = [{ match = "asthma", value = 1 }, { match = "control", value = 0 }]
"""


@_SETTINGS
@given(**_DAMAGE, kind=st.sampled_from(["toml", "json"]))
def test_a_damaged_recipe_is_read_or_a_recipe_error(tmp_path_factory, cut, junk, kind):
    folder = tmp_path_factory.mktemp("recipe")
    if kind == "toml":
        text = _TOML
    else:
        text = json.dumps(
            {"trait": "Asthma", "cohort": "GSE1", "gene": {"usable": True}, "variables": {}}
        ).encode()
    path = folder / f"GSE1.{kind}"
    path.write_bytes(_damaged(text, cut, junk))
    try:
        Recipe.read(path)
    except GenotexError:
        pass


@pytest.fixture(scope="module")
def saved_report(eval_fixtures):
    case = eval_fixtures / "case1"
    info = case / "ref" / "metadata" / "task_info.json"
    return evaluate(case / "pred" / "output", case / "ref" / "output", info).to_json().encode()


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(cut=st.integers(min_value=0, max_value=60_000), junk=st.binary(max_size=12))
def test_a_damaged_saved_report_renders_or_is_a_report_error(
    tmp_path_factory, saved_report, cut, junk
):
    folder = tmp_path_factory.mktemp("report")
    saved = folder / "run.json"
    saved.write_bytes(_damaged(saved_report, cut, junk))
    try:
        write_report(load_report(saved), folder / "out")
    except GenotexError:
        pass
    assert sorted(p.name for p in folder.iterdir()) in (["run.json"], ["out", "run.json"])

"""metadata.json: valid Croissant JSON-LD whose every file, JSON path and column exists in the
fixtures.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from genotex.core import read_header

METADATA = Path(__file__).resolve().parents[1] / "metadata.json"


@pytest.fixture(scope="module")
def metadata():
    return json.loads(METADATA.read_text())


def test_mlcroissant_validates_it():
    mlc = pytest.importorskip("mlcroissant")
    dataset = mlc.Dataset(jsonld=str(METADATA))
    assert {r.name for r in dataset.metadata.record_sets} == {
        "task_info",
        "cohort_info",
        "gene_data",
        "clinical_data",
        "linked_data",
        "significant_genes",
    }


def _json_path(data, path: str):
    """Values at a simple JSONPath ($.a.b, $.*.b, $.a['b c']) in parsed JSON."""
    parts = path.removeprefix("$.").replace("['", ".").replace("']", "").split(".")
    nodes = [data]
    for part in parts:
        if part == "*":
            nodes = [v for n in nodes if isinstance(n, dict) for v in n.values()]
        else:
            nodes = [n[part] for n in nodes if isinstance(n, dict) and part in n]
    return nodes


def test_every_field_exists_in_the_fixture_trees(metadata, eval_fixtures):
    root = eval_fixtures / "case1" / "ref"
    files = {d["@id"]: d for d in metadata["distribution"]}
    for record_set in metadata["recordSet"]:
        for field in record_set["field"]:
            source = field["source"]
            holder = files[(source.get("fileSet") or source.get("fileObject"))["@id"]]
            pattern = holder.get("includes") or holder["contentUrl"]
            paths = (
                sorted((root / "output").glob(pattern.removeprefix("output/")))
                if pattern.startswith("output/")
                else [root / pattern]
            )
            paths = [p for p in paths if p.is_file()]
            assert paths, f"{field['@id']}: no fixture file matches {pattern}"
            extract = source["extract"]
            if "jsonPath" in extract:
                found = [
                    v
                    for p in paths
                    for v in _json_path(json.loads(p.read_text()), extract["jsonPath"])
                ]
                assert found, f"{field['@id']}: {extract['jsonPath']} not found"
            elif "column" in extract:
                headers = [read_header(p) for p in paths]
                assert any(extract["column"] in h for h in headers), (
                    f"{field['@id']}: no column {extract['column']}"
                )
            else:
                assert extract == {"fileProperty": "fullpath"}

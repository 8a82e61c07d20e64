"""The MyGene.info synonym path, against a local stub server (no network)."""

from __future__ import annotations

from http.server import BaseHTTPRequestHandler
from urllib.parse import parse_qs

import pandas as pd
import pytest

from genotex.preprocessing import MyGeneSynonyms, SynonymError, normalize_gene_table
from tests.conftest import local_server, send_json

pytest.importorskip("mygene")
KNOWN = {"P53": "TP53", "TP53": "TP53", "HER2": "ERBB2", "ERBB2": "ERBB2"}


class _Stub(BaseHTTPRequestHandler):
    queries: list[list[str]] = []

    def do_POST(self):  # noqa: N802 - the HTTP verb
        length = int(self.headers.get("Content-Length", 0))
        form = parse_qs(self.rfile.read(length).decode())
        terms = [t.strip('"') for t in form["q"][0].split(",")]
        _Stub.queries.append(terms)
        assert form["species"][0] == "human" and "alias" in form["scopes"][0]
        hits = [
            {"query": t, "symbol": KNOWN[t.upper()], "_score": 10}
            if t.upper() in KNOWN
            else {"query": t, "notfound": True}
            for t in terms
        ]
        send_json(self, hits)

    def log_message(self, *args):  # keep test output clean
        pass


@pytest.fixture()
def stub():
    _Stub.queries = []
    with local_server(_Stub) as url:
        yield f"{url}/v3"


def test_genes_are_normalized_through_mygene(stub):
    table = pd.DataFrame({"S1": [1.0, 3.0, 5.0, 7.0]}, index=["p53", "TP53", "her2", "NOTAGENE"])
    synonyms = MyGeneSynonyms(url=stub, batch=2)
    normalized = normalize_gene_table(table, synonyms)
    assert list(normalized.index) == ["ERBB2", "TP53"]
    assert normalized.loc["TP53", "S1"] == 2.0  # p53 and TP53 averaged
    assert len(_Stub.queries) == 2  # batches of 2
    normalize_gene_table(table, synonyms)
    assert len(_Stub.queries) == 2  # nothing asked twice


def test_an_unreachable_service_is_one_clear_error():
    with pytest.raises(SynonymError, match="MyGene.info did not answer"):
        MyGeneSynonyms(url="http://127.0.0.1:9/v3").prefetch(["TP53"])

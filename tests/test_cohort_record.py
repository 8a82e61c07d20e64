"""`genotex inspect --record`: a cohort folder as a line of the proposer's records (#62,
item 7: the proposer guide's `--records` example needed the development records, which a
reader of the clone does not have; now the page writes its own record)."""

from __future__ import annotations

import gzip
import json
from collections import Counter

from click.testing import CliRunner

from genotex.cli import main
from genotex.preprocessing import cohort_record, propose_cohort, propose_records
from genotex.workflows import write_raw_benchmark


def _rows_by_hand(matrix) -> dict[str, list[str]]:
    """Each !Sample_characteristics_ch1 line's distinct values, most frequent first (ties in
    order of appearance), read with nothing but gzip and split."""
    rows = {}
    for line in gzip.decompress(matrix.read_bytes()).decode().splitlines():
        if line.startswith("!Sample_characteristics_ch1"):
            cells = [c.strip('"') for c in line.split("\t")[1:]]
            counts = Counter(c for c in cells if c)
            order = {value: i for i, value in reversed(list(enumerate(cells)))}
            ranked = sorted(counts, key=lambda v: (-counts[v], order[v]))
            rows[str(len(rows))] = ranked
    return rows


def test_a_record_holds_the_rows_as_the_matrix_has_them(tmp_path):
    root = write_raw_benchmark(tmp_path / "bench").root
    folder = root / "input/GEO/Asthma/GSE100001"
    record = cohort_record(folder, "Asthma")
    assert record["trait"] == "Asthma" and record["cohort"] == "GSE100001"
    assert record["characteristics"] == _rows_by_hand(folder / "GSE100001_series_matrix.txt.gz")
    assert "!Series_title" in record["background"]


def test_the_printed_record_is_proposed_as_the_folder_is(tmp_path):
    root = write_raw_benchmark(tmp_path / "bench").root
    folder = root / "input/GEO/Asthma/GSE100001"
    result = CliRunner().invoke(main, ["inspect", str(folder), "--trait", "Asthma", "--record"])
    assert result.exit_code == 0, result.output
    assert result.stdout.count("\n") == 1  # one JSON line, nothing else
    (tmp_path / "r.jsonl").write_text(result.stdout)
    propose_records(tmp_path / "r.jsonl", tmp_path / "p.jsonl")
    answer = json.loads((tmp_path / "p.jsonl").read_text())
    direct = propose_cohort(folder, "Asthma").proposal.record()
    assert answer["trait_row"] == direct["trait_row"] and answer["trait_map"] == direct["trait_map"]


def test_a_record_needs_its_trait(tmp_path):
    result = CliRunner().invoke(main, ["inspect", str(tmp_path), "--record"])
    assert result.exit_code == 2 and "--record needs --trait" in result.stderr

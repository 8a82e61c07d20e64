"""`genotex validate` and `genotex tasks` (#62 item 3): a misnamed answer scored 0 with no
hint; now each missing, misnamed, malformed or extra file is named before scoring.
"""

from __future__ import annotations

import json
import shutil

import pytest
from click.testing import CliRunner

from genotex.cli import main
from genotex.evaluation import validate_submission
from genotex.workflows import write_raw_benchmark


@pytest.fixture(scope="module")
def bench(tmp_path_factory):
    return write_raw_benchmark(tmp_path_factory.mktemp("validate"), recipes=False)


@pytest.fixture
def pred(bench, tmp_path):
    out = tmp_path / "output"
    shutil.copytree(bench.reference_output, out)
    return out


def test_a_copy_of_the_reference_keeps_the_contract(bench, pred):
    check = validate_submission(pred, bench.task_info, bench.reference_output)
    assert check.ok and check.checked > 8


def test_each_kind_of_finding_is_named_with_its_file(bench, pred):
    answers = pred / "regress" / "Asthma"
    (answers / "significant_genes_condition_None.json").rename(
        answers / "significant_genes_condition_none.json")  # fmt: skip
    (answers / "significant_genes_condition_Age.json").write_text('{"x": 1}')
    (answers / "significant_genes_condition_Gender.json").unlink()
    (answers / "notes.json").write_text("{}")
    shutil.move(pred / "preprocess" / "Psoriasis", pred / "preprocess" / "psoriasis")
    check = validate_submission(pred, bench.task_info, bench.reference_output)
    said = {f.path: (f.kind, f.message) for f in check.findings}
    kind, message = said["regress/Asthma/significant_genes_condition_none.json"]
    assert kind == "misnamed"
    assert message.endswith("regress/Asthma/significant_genes_condition_None.json")
    assert said["regress/Asthma/significant_genes_condition_Age.json"][0] == "malformed"
    assert said["regress/Asthma/significant_genes_condition_Gender.json"][0] == "missing"
    assert said["regress/Asthma/notes.json"][0] == "extra"
    assert said["preprocess/psoriasis"] == ("misnamed", "preprocess/psoriasis/: misnamed; the "
                                            "trait's folder is preprocess/Psoriasis")  # fmt: skip
    assert check.counts() == {"missing": 1, "misnamed": 2, "malformed": 1, "extra": 1}


def test_the_commands_say_one_line_a_file_and_exit_1(bench, pred):
    answers = pred / "regress" / "Asthma"
    (answers / "significant_genes_condition_None.json").rename(
        answers / "significant_genes_condition_none.json")  # fmt: skip
    ref = str(bench.reference_output)
    result = CliRunner().invoke(main, ["validate", str(pred), "-r", ref])
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert "significant_genes_condition_None.json" in result.output
    scored = CliRunner().invoke(main, ["eval", "-p", str(pred), "-r", ref])
    assert scored.exit_code == 0
    assert "validate: " in scored.output and "1 misnamed" in scored.output
    listed = CliRunner().invoke(main, ["tasks", str(bench.root)])
    assert listed.exit_code == 0
    info = json.loads(bench.task_info.read_text())
    for trait, entry in info.items():
        assert f"{trait}: {len(entry['related_genes'])} known genes; conditions: " in listed.output
    assert "3 traits, 8 problems" in listed.output


def test_eval_asks_about_names_only_and_reads_no_table_again(bench, pred):
    """eval has just read and judged every table: its validate line asks about names only."""
    table = next((pred / "preprocess" / "Asthma").glob("*.csv"))
    table.write_text("")  # no header, no row: refused by read_table
    answers = pred / "regress" / "Asthma"
    (answers / "significant_genes_condition_None.json").rename(
        answers / "significant_genes_condition_none.json")  # fmt: skip
    full = validate_submission(pred, bench.task_info, bench.reference_output)
    names = validate_submission(pred, bench.task_info, bench.reference_output, read_tables=False)
    assert any(f.path.endswith(table.name) for f in full.findings if f.kind == "malformed")
    assert [f.kind for f in names.findings] == ["misnamed"]

"""An output folder that cannot be written is one sentence and exit 1, before any work."""

from __future__ import annotations

import os

import pytest
from click.testing import CliRunner

from genotex.cli import main


@pytest.fixture(scope="module")
def regress_case(shared):
    case = shared / "fixtures" / "regress" / "synthetic"
    return case / "output" / "preprocess", case / "metadata" / "task_info.json"


def _commands(tmp_path, out, regress_case, eval_fixtures):
    data, info = regress_case
    case = eval_fixtures / "case1"
    evaluation = ["eval", "-p", str(case / "pred" / "output"), "-r", str(case / "ref" / "output")]
    evaluation += ["--task-info", str(case / "ref" / "metadata" / "task_info.json")]
    synonyms = tmp_path / "gene_synonym.json"
    synonyms.write_text('{"TP53": "TP53"}')
    return {
        "regress": ["regress", "--data", str(data), "--task-info", str(info), "--out", str(out)]
        + ["--all"],
        "preprocess": ["preprocess", "--all", "--input", str(tmp_path), "--out", str(out)]
        + ["--task-info", str(info), "--synonyms", str(synonyms)],
        "eval --report": [*evaluation, "--report", str(out)],
        "eval --json": [*evaluation, "--json", str(out / "run.json")],
        "eval --csv": [*evaluation, "--csv", str(out)],
    }


@pytest.mark.parametrize(
    "name", ["regress", "preprocess", "eval --report", "eval --json", "eval --csv"]
)
def test_a_file_in_place_of_the_output_folder_is_one_sentence(
    tmp_path, regress_case, eval_fixtures, name
):
    blocker = tmp_path / "out"
    blocker.write_text("a file")
    command = _commands(tmp_path, blocker, regress_case, eval_fixtures)[name]
    result = CliRunner().invoke(main, command)
    assert result.exit_code == 1, result.output
    lines = [line for line in result.output.splitlines() if line.startswith("genotex: error")]
    assert len(lines) == 1 and str(blocker) in lines[0], result.output
    assert "unexpected" not in result.output and "NotADirectoryError" not in result.output
    assert "answered" not in result.output  # nothing was attempted
    assert blocker.read_text() == "a file"


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
def test_a_read_only_output_folder_is_one_sentence(tmp_path, regress_case, eval_fixtures):
    out = tmp_path / "ro"
    out.mkdir()
    out.chmod(0o555)
    result = CliRunner().invoke(
        main, _commands(tmp_path, out, regress_case, eval_fixtures)["regress"]
    )
    assert result.exit_code == 1 and "cannot be written to" in result.output

"""Every report CSV genotex writes makes a formula inert (issue #45, 7): a gene, run or file
name that a spreadsheet would run (`=HYPERLINK(...)`, `@SUM`, `+cmd`, `-cmd`) is written with
a leading `'`; numbers are never touched.
"""

from __future__ import annotations

import csv
import io
import json
import math
import shutil

import pandas as pd
import pytest
from click.testing import CliRunner

from genotex.cli import main
from genotex.core import safe_cell
from genotex.workflows import write_raw_benchmark

EVIL = '=HYPERLINK("http://evil","x")'


@pytest.mark.parametrize(
    ("value", "written"),
    [
        (EVIL, "'" + EVIL),
        ("@SUM(A1)", "'@SUM(A1)"),
        ("+cmd|' /C calc'!A0", "'+cmd|' /C calc'!A0"),
        ("-gene", "'-gene"),
        ("\tx", "'\tx"),
        ("-0.5", "-0.5"),  # text that is a number stays a number
        ("+1e3", "+1e3"),
        ("IL13", "IL13"),
        (-0.5, "-0.5"),
        (0.1 + 0.2, "0.30000000000000004"),  # unrounded
        (math.nan, ""),
        (None, ""),
        (3, 3),
    ],
)
def test_a_cell_is_made_inert_and_a_number_is_not_touched(value, written):
    assert safe_cell(value) == written


def _cells(path) -> list[str]:
    return [cell for row in csv.reader(io.StringIO(path.read_text())) for cell in row]


def test_regress_csv_writes_a_formula_gene_name_inert(tmp_path):
    bench = write_raw_benchmark(tmp_path / "bench", recipes=False)
    data = tmp_path / "data"
    shutil.copytree(bench.reference_output / "preprocess", data)
    for linked in (data / "Asthma").glob("*.csv"):
        table = pd.read_csv(linked, index_col=0)
        gene = table.columns[-1]
        table.rename(columns={gene: EVIL}).to_csv(linked)
    out, tables = tmp_path / "regress", tmp_path / "tables"
    result = CliRunner().invoke(
        main,
        ["regress", "--trait", "Asthma", "--condition", "None", "--data", str(data),
         "--task-info", str(bench.task_info), "--out", str(out), "--csv", str(tables),
         "--frequency-resamples", "5"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    cells = _cells(tables / "Asthma" / "gene_table_condition_None.csv")
    assert "'" + EVIL in cells and EVIL not in cells
    numbers = pd.read_csv(tables / "Asthma" / "gene_table_condition_None.csv", index_col=0)
    assert numbers["t"].dtype == float  # the numbers are still numbers


def test_a_runs_label_is_inert_in_the_leaderboards_and_evals_csv(tmp_path):
    bench = write_raw_benchmark(tmp_path / "bench", recipes=False)
    run = tmp_path / "run.json"
    result = CliRunner().invoke(
        main,
        ["eval", "-p", str(bench.reference_output), "-r", str(bench.reference_output),
         "--task-info", str(bench.task_info), "--json", str(run), "--label", EVIL,
         "--csv", str(tmp_path / "tables")],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert json.loads(run.read_text())["run"]["label"] == EVIL  # the JSON keeps it as it is
    board = CliRunner().invoke(main, ["leaderboard", str(run), "--format", "csv"])
    assert board.exit_code == 0, board.output
    rows = list(csv.reader(io.StringIO(board.stdout)))
    assert rows[1][0] == "'" + EVIL
    for table in (tmp_path / "tables").glob("*.csv"):
        assert not any(cell.startswith(("=", "@")) for cell in _cells(table)), table

"""A number is never silently shifted, padded or made inf; every file scored 0 is a finding."""

from __future__ import annotations

import json
import math
import shutil

import pandas as pd
import pytest

from genotex.evaluation import evaluate
from genotex.preprocessing import clinical_features, parse_number


@pytest.mark.parametrize("text", ["9" * 400, "age: " + "9" * 400 + " years", "9" * 310 + " months"])
def test_an_age_beyond_float_range_is_missing_not_inf(text):
    assert math.isnan(parse_number(text, age=True))
    assert parse_number("age: 6 months", age=True) == 0.5  # an ordinary age still converts


def test_a_tcga_age_beyond_float_range_is_missing_not_inf():
    clinical = pd.DataFrame(
        {"age_at_initial_pathologic_diagnosis": ["61", "9" * 400], "gender": ["MALE", "FEMALE"]},
        index=["TCGA-AA-0001-01", "TCGA-AA-0002-01"],
    )
    features, _ = clinical_features(clinical, "Cancer")
    assert features.loc["Age"].iloc[0] == 61.0 and math.isnan(features.loc["Age"].iloc[1])


@pytest.fixture
def damaged(eval_fixtures, tmp_path):
    case = eval_fixtures / "case1"
    pred = tmp_path / "pred"
    shutil.copytree(case / "pred" / "output", pred)
    return case, pred


def _evaluate(case, pred):
    info = case / "ref" / "metadata" / "task_info.json"
    return evaluate(pred, case / "ref" / "output", info)


def test_a_csv_with_an_unbalanced_quote_is_a_finding_not_a_silent_zero(damaged):
    case, pred = damaged
    target = next((pred / "preprocess").glob("*/GSE*.csv"))
    lines = target.read_text().splitlines()
    lines[2] = '"' + lines[2]  # a quote opened and never closed
    target.write_text("\n".join(lines) + "\n")
    report = _evaluate(case, pred)
    key = f"{target.parent.name}/{target.name}"
    score = next(s for s in report.preprocessing["linked"] if s.file == key)
    assert score.status == "unreadable" and score.composite_similarity_correlation == 0
    assert any("unbalanced quote" in f.reason and target.name in f.file for f in report.findings)


def test_a_file_read_but_scored_zero_says_why(damaged):
    case, pred = damaged
    target = next((pred / "preprocess").glob("*/GSE*.csv"))
    table = pd.read_csv(target, index_col=0)
    table.index = [f"other{i}" for i in range(len(table))]  # linked: rows are samples
    table.to_csv(target)
    report = _evaluate(case, pred)
    reasons = [f.reason for f in report.findings if target.name in f.file]
    assert reasons == ["scored 0: no sample in common with the reference"]


def test_a_million_column_header_only_csv_is_refused_in_bounded_memory(damaged, tmp_path):
    import subprocess
    import sys

    case, pred = damaged
    target = next((pred / "preprocess").glob("*/GSE*.csv"))
    target.write_text(",".join(["", *(f"G{i}" for i in range(1_000_000))]) + "\n")
    out = tmp_path / "r.json"
    command = [sys.executable, "-m", "genotex", "eval", "-p", str(pred)]
    command += ["-r", str(case / "ref" / "output"), "--no-progress", "--json", str(out)]
    command += ["--task-info", str(case / "ref" / "metadata" / "task_info.json")]
    # a parent of its own, so that the peak is this eval's and not an earlier test's child's
    measure = (
        "import resource, subprocess, sys\n"
        "code = subprocess.run(sys.argv[1:]).returncode\n"
        "print(code, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
    )
    done = subprocess.run([sys.executable, "-c", measure, *command], capture_output=True, text=True)
    code, peak_kb = done.stdout.splitlines()[-1].split()
    assert code == "0", done.stderr
    assert int(peak_kb) / 1024 < 700, f"{int(peak_kb) / 1024:.0f} MB"  # ~1,800 MB before
    found = json.loads(out.read_text())["problems_found"]
    assert any("1,000,000 columns, more than the limit of 200,000" in f["reason"] for f in found)

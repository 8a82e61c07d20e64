"""Parity with the published evaluator on every case of ../shared/fixtures/eval."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from genotex.cli import main
from tests.conftest import eval_args, eval_case_names


def _leaves(expected, actual, path=""):
    """Yield (path, expected, actual, rounded) for every number of `expected`."""
    if isinstance(expected, dict):
        for key, value in expected.items():
            assert isinstance(actual, dict) and key in actual, f"{path}/{key} is missing"
            rounded = key in ("average", "categorized")
            for leaf in _leaves(value, actual[key], f"{path}/{key}"):
                yield leaf[0], leaf[1], leaf[2], leaf[3] or rounded
        return
    yield path, expected, actual, False


def _run_case(case: Path, out: Path) -> dict:
    result = CliRunner().invoke(main, eval_args(case, "--json", str(out), "--no-progress"))
    assert result.exit_code == 0, result.output
    return json.loads(out.read_text())


@pytest.mark.parametrize("case_name", eval_case_names())
def test_every_expected_number_is_reproduced(eval_fixtures, case_name, tmp_path):
    case = eval_fixtures / case_name
    expected = json.loads((case / "expected.json").read_text())
    actual = _run_case(case, tmp_path / "report.json")
    checked = 0
    for path, e, a, rounded in _leaves(expected, actual):
        checked += 1
        if e is None:
            assert a is None, f"{path}: expected NaN, got {a}"
            continue
        assert isinstance(a, (int, float)), f"{path}: expected {e}, got {a!r}"
        if rounded:
            assert round(a, 2) == pytest.approx(e, abs=1e-9), path
        else:
            assert abs(a - e) <= 1e-9 * max(1.0, abs(e)), f"{path}: expected {e}, got {a}"
    assert checked > 100


@pytest.mark.parametrize("case_name", eval_case_names())
def test_the_shared_comparator_agrees(shared, eval_fixtures, case_name, tmp_path):
    case = eval_fixtures / case_name
    report = tmp_path / "report.json"
    _run_case(case, report)
    tool = shared / "tools" / "compare_eval.py"
    done = subprocess.run(
        [sys.executable, str(tool), str(case / "expected.json"), str(report)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout
    last = done.stdout.strip().splitlines()[-1]
    matched, total = last.removeprefix("parity ").split("/")
    assert matched == total and int(total) > 100


def test_reports_are_byte_for_byte_deterministic(eval_fixtures, tmp_path):
    case = eval_fixtures / "case1"
    first, second = tmp_path / "a.json", tmp_path / "b.json"
    _run_case(case, first)
    _run_case(case, second)
    assert _without_times(first) == _without_times(second)
    assert b'"started":' in first.read_bytes()  # the provenance block is there, with its time


def _without_times(path: Path) -> bytes:
    """A report's bytes but the provenance block's two times (the only lines allowed to differ)."""
    lines = path.read_bytes().split(b"\n")
    return b"\n".join(
        ln for ln in lines if b'"started":' not in ln and b'"wall_seconds":' not in ln
    )


def test_parallel_scoring_gives_the_same_report(eval_fixtures, tmp_path):
    case = eval_fixtures / "case2"
    serial = _run_case(case, tmp_path / "serial.json")
    extra = ("--json", str(tmp_path / "parallel.json"), "--jobs", "2", "--no-progress")
    result = CliRunner().invoke(main, eval_args(case, *extra))
    assert result.exit_code == 0, result.output
    parallel = json.loads((tmp_path / "parallel.json").read_text())
    assert parallel.pop("run")["provenance"]["options"]["jobs"] == 2  # the run says how it ran
    serial.pop("run")
    assert parallel == serial


def test_a_missing_prediction_regress_folder_leaves_the_analysis_empty(eval_fixtures, tmp_path):
    actual = _run_case(eval_fixtures / "case4", tmp_path / "r.json")
    assert actual["analysis"]["per_problem"] == {} and actual["analysis"]["categorized"] == {}
    assert any(f["file"] == "regress" for f in actual["problems_found"])


def test_nan_is_written_as_null_and_averages_ignore_it(eval_fixtures, tmp_path):
    actual = _run_case(eval_fixtures / "case3", tmp_path / "r.json")
    per_problem = actual["analysis"]["per_problem"]
    assert per_problem["Cervical_Cancer|None"]["auroc"] is None
    es = [v["gsea_es"] for v in per_problem.values() if v["gsea_es"] is not None]
    overall = actual["analysis"]["categorized"]["Overall"]["gsea_es"]
    assert math.isclose(overall, sum(es) / len(es), rel_tol=1e-12)


def test_a_report_round_trips_through_its_json(eval_fixtures, tmp_path):
    from genotex.evaluation import EvalReport

    report = _run_case(eval_fixtures / "case3", tmp_path / "r.json")
    rebuilt = EvalReport.from_dict(report)
    assert json.loads(rebuilt.to_json()) == report

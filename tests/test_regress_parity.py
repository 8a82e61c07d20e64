"""Parity of `genotex regress` with the reference pipeline's answers (../shared/fixtures/regress).

Every skip/run decision and model choice must match. Gene lists, coefficients and
cv_performance must match exactly for Lasso problems. For LMM problems they are
compared only where this machine's BLAS reproduces the reference's eigenvectors:
the reference does not rotate y, so its answer depends on each eigenvector's sign,
and 1e-15 changes in X·Xᵀ (another CPU's BLAS kernels) flip those signs. On this
machine kind's CPU (AVX2, no AVX-512) the fixture's LMM answers are not reproduced
by any implementation of the spec's algorithm, including the reference's own
library; see the README.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from genotex.cli import main
from genotex.core import RunStatus
from tests.one_thread import one_thread_run


def _case_args(case: Path, out: Path) -> list[str]:
    """`regress` options reading a fixture case and writing to `out`."""
    data, info = case / "output" / "preprocess", case / "metadata" / "task_info.json"
    return ["regress", "--data", str(data), "--task-info", str(info), "--out", str(out)]


def _regress(case: Path, out: Path, *extra: str):
    return CliRunner().invoke(main, [*_case_args(case, out), "--all", *extra])


def _close(expected, actual, path=""):
    if isinstance(expected, dict):
        assert set(expected) == set(actual), path
        for key in expected:
            _close(expected[key], actual[key], f"{path}/{key}")
    elif isinstance(expected, list):
        assert len(expected) == len(actual), path
        for i, (e, a) in enumerate(zip(expected, actual, strict=True)):
            _close(e, a, f"{path}[{i}]")
    elif isinstance(expected, str):
        assert expected == actual, path
    else:
        assert abs(actual - expected) <= 1e-6 * max(1.0, abs(expected)), (
            f"{path}: {expected} vs {actual}"
        )


def _check_case(case: Path, out: Path) -> tuple[int, int]:
    status = json.loads((case / "expected" / "status.json").read_text())
    ours = json.loads((out / "status.json").read_text())
    exact = 0
    for key, expected in status.items():
        trait, condition = key.split("|")
        name = f"significant_genes_condition_{condition}.json"
        assert ours[key]["status"].split(":")[0] == expected["status"].split(":")[0], key
        assert ours[key]["model"] == expected["model"], key
        produced = out / trait / name
        assert produced.exists() == (expected["status"] == "ok"), key
        if expected["status"] == "ok" and expected["model"] == "Lasso":
            answer = json.loads(produced.read_text())
            assert answer.pop("method")["mode"] == "reference"  # beside the compared keys
            inputs = answer.pop("inputs")  # what it read, for a re-run to compare (#62)
            assert f"{trait}/cohort_info.json" in inputs and f"known genes of {trait}" in inputs
            expected_answer = json.loads((case / "expected" / "regress" / trait / name).read_text())
            _close(expected_answer, answer, key)
            exact += 1
    return exact, len(status)


@pytest.fixture(scope="module")
def synthetic_run(shared, tmp_path_factory):
    """`genotex regress --all` (reference mode) of the synthetic case, in a process on one
    BLAS thread: the run test_regress_determinism asks every other way for (made once)."""
    case = shared / "fixtures" / "regress" / "synthetic"
    return case, one_thread_run(tmp_path_factory, case, "reference")


def test_synthetic_decisions_and_lasso_answers_match(synthetic_run):
    case, out = synthetic_run
    exact, total = _check_case(case, out)
    expected = RunStatus.read(case / "expected" / "status.json").problems
    assert total == len(expected)
    assert exact == sum(p.kind == "ok" and p.model == "Lasso" for p in expected)


def test_the_shared_comparator_counts_every_non_lmm_problem(synthetic_run, shared):
    import subprocess
    import sys

    case, out = synthetic_run
    done = subprocess.run(
        [
            sys.executable,
            str(shared / "tools" / "compare_regress.py"),
            str(case / "expected"),
            str(out),
        ],
        capture_output=True,
        text=True,
    )
    matched, total = done.stdout.strip().splitlines()[-1].split()[2].split("/")
    lmm = sum(
        v["model"] == "LMM"
        for v in json.loads((case / "expected" / "status.json").read_text()).values()
    )
    assert int(matched) == int(total) - lmm


def test_outputs_are_byte_identical_across_runs_and_with_jobs(synthetic_run, tmp_path):
    case, out = synthetic_run
    again = tmp_path / "again"
    result = _regress(case, again, "--jobs", "2")
    assert result.exit_code == 0, result.output
    first = sorted(p.relative_to(out) for p in out.rglob("*.json") if p.name != "status.json")
    assert first == sorted(
        p.relative_to(again) for p in again.rglob("*.json") if p.name != "status.json"
    )
    for relative in first:
        assert (out / relative).read_bytes() == (again / relative).read_bytes(), relative


def test_a_rerun_skips_finished_problems_unless_forced(synthetic_run, tmp_path):
    case, _ = synthetic_run
    out = tmp_path / "r"
    args = ["--trait", "Prostate_Cancer", "--condition", "Liver_cirrhosis"]
    runner = CliRunner()
    base = [*_case_args(case, out), *args]
    assert runner.invoke(main, base).exit_code == 0
    target = out / "Prostate_Cancer" / "significant_genes_condition_Liver_cirrhosis.json"
    stamp = target.stat().st_mtime_ns
    made = json.loads((out / "status.json").read_text())["Prostate_Cancer|Liver_cirrhosis"]
    again = runner.invoke(main, base)
    assert again.exit_code == 0 and "0 answered, 1 kept from an earlier run" in again.output
    assert target.stat().st_mtime_ns == stamp
    # the kept result's line is the line of the run that made it
    assert json.loads((out / "status.json").read_text())["Prostate_Cancer|Liver_cirrhosis"] == made
    target.write_text('{"significant_genes": {}}')  # incomplete: redone
    assert runner.invoke(main, base).exit_code == 0
    assert "Variable" in json.loads(target.read_text())["significant_genes"]
    # eval scores numbers in Variable as malformed, so regress must not skip them as done
    target.write_text('{"significant_genes": {"Variable": [1, 2]}, "cv_performance": {}}')
    assert runner.invoke(main, base).exit_code == 0
    assert all(
        isinstance(g, str) for g in json.loads(target.read_text())["significant_genes"]["Variable"]
    )
    assert runner.invoke(main, [*base, "--force"]).exit_code == 0
    assert not list(out.rglob("*.tmp"))


def test_dask_local_cluster_gives_the_same_answers(synthetic_run, tmp_path):
    distributed = pytest.importorskip("dask.distributed")
    case, out = synthetic_run
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0"
    ) as cluster:
        result = CliRunner().invoke(
            main,
            [
                *_case_args(case, tmp_path / "dask"),
                *("--trait", "Prostate_Cancer", "--trait", "Autism_spectrum_disorder_(ASD)"),
                *("--scheduler", cluster.scheduler_address),
            ],
        )
    assert result.exit_code == 0, result.output
    produced = sorted(
        p.relative_to(tmp_path / "dask") for p in (tmp_path / "dask").rglob("significant_*.json")
    )
    assert len(produced) == 4
    for relative in produced:
        assert (tmp_path / "dask" / relative).read_bytes() == (out / relative).read_bytes()


@pytest.mark.slow
def test_real_cohorts_match_the_reference(shared, tmp_path):
    case = shared / "fixtures" / "regress" / "real"
    result = _regress(case, tmp_path / "real", "--jobs", "2")
    assert result.exit_code == 0, result.output
    exact, total = _check_case(case, tmp_path / "real")
    assert (exact, total) == (5, 8)

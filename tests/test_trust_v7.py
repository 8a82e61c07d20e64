"""Trust v7 (issue #74): what a newcomer meets.

One meaning for a missing number in every command and format; the leaderboard's best mark
only among complete rows; `genotex doctor`; extras and placeholders refused before any work;
first-run messages that say what happened; output fit for a pipe.
"""

from __future__ import annotations

import importlib.util
import json
import re
import shutil

import pytest
from click.testing import CliRunner

from genotex.cli import main

MISSING = "8 of 8 answers hold no cv_performance, counted as 0 as the published evaluator does"


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    """The demo benchmark: its reference answers hold no cv_performance (as the paper's key)."""
    from genotex.workflows import write_raw_benchmark

    return write_raw_benchmark(tmp_path_factory.mktemp("trust") / "demo")


@pytest.fixture(scope="module")
def reports(demo, tmp_path_factory):
    """eval --json of the reference scored against itself, whole and for Asthma only."""
    folder = tmp_path_factory.mktemp("reports")
    ref = str(demo.reference_output)
    made = {}
    for name, extra in (("whole", []), ("asthma", ["--trait", "Asthma"])):
        out = folder / f"{name}.json"
        done = CliRunner().invoke(main, ["eval", "-p", ref, "-r", ref, "--no-cache",
                                         "--json", str(out), *extra])  # fmt: skip
        assert done.exit_code == 0, done.output
        made[name] = out
    return made


def test_eval_shows_the_published_zero_marked_and_says_so_in_text_json_and_html(demo, tmp_path):
    ref = str(demo.reference_output)
    page = tmp_path / "report"
    done = CliRunner().invoke(main, ["eval", "-p", ref, "-r", ref, "--no-cache", "--json",
                                     str(tmp_path / "r.json"), "--report", str(page)])  # fmt: skip
    assert done.exit_code == 0, done.output
    assert f"† {MISSING}" in done.stdout
    header = next(line for line in done.stdout.splitlines() if line.startswith("category"))
    assert "PredAcc†" in header and "PredF1†" in header
    saved = json.loads((tmp_path / "r.json").read_text())
    absent = saved["analysis"]["cv_performance_absent"]
    assert absent == {"answers": 8, "of": 8, "counted_as": 0.0, "note": MISSING}
    assert saved["analysis"]["categorized"]["Overall"]["trait_pred_accuracy"] == 0.0
    assert MISSING in (page / "index.html").read_text(encoding="utf-8")


def test_the_leaderboard_marks_zero_counted_values_and_never_a_partial_run_best(reports):
    done = CliRunner().invoke(main, ["leaderboard", str(reports["whole"]),
                                     str(reports["asthma"])])  # fmt: skip
    assert done.exit_code == 0, done.output
    rows = {line.split()[0]: line for line in done.stdout.splitlines()
            if line.startswith(("whole", "asthma"))}  # fmt: skip
    assert "0.00†" in rows["whole"] and "*" in rows["whole"]  # complete: ranked
    assert "*" not in rows["asthma"]  # over fewer problems: its 100s are over other problems
    assert "asthma is over 4 problems where others are over 8: never marked best" in done.output
    assert f"whole: {MISSING} (Acc. and F1 (pred.) marked †)" in done.output
    both = [str(reports["whole"]), str(reports["asthma"])]
    markdown = CliRunner().invoke(main, ["leaderboard", *both, "--format", "markdown"])
    assert "0.00†" in markdown.stdout and "**" not in markdown.stdout.split("asthma")[1]
    beside = CliRunner().invoke(main, ["leaderboard", str(reports["whole"]), "--paper",
                                       "end-to-end"])  # fmt: skip
    ours = next(line for line in beside.stdout.splitlines() if line.startswith("whole"))
    assert "*" not in ours  # 8 of the paper's 1,384 problems: never above the published rows
    assert "*" in beside.stdout.split("whole", 1)[1]  # the published rows are ranked


def test_compare_shows_numbers_never_nan_and_no_p_where_every_pair_ties(reports, demo):
    done = CliRunner().invoke(main, ["compare", str(reports["whole"]), str(reports["whole"])])
    assert done.exit_code == 0, done.output
    assert "nan" not in done.stdout and "n/a" not in done.stdout
    assert f"A: {MISSING} (PredAcc and PredF1 marked †)" in done.stdout
    assert "p is - where every pair ties" in done.stdout
    gsea = next(line for line in done.stdout.splitlines() if line.startswith("GSEA"))
    assert re.search(r"\s-\s+0/8/0\s*$", gsea), gsea  # W/T/L 0/8/0 and no p beside it


def test_doctor_names_the_extras_and_tries_the_sandboxes():
    done = CliRunner().invoke(main, ["doctor", "--json"])
    assert done.exit_code == 0, done.output
    found = json.loads(done.stdout)
    extras = {c["name"]: c for c in found["extras"]}
    assert extras["harness"]["ok"] == (importlib.util.find_spec("inspect_ai") is not None)
    assert "Inspect tasks" in extras["harness"]["enables"]
    sandboxes = {c["name"]: c for c in found["sandboxes"]}
    assert set(sandboxes) == {"bwrap", "podman", "docker", "local"}
    if shutil.which("bwrap") and found["versions"]["platform"].startswith("Linux"):
        assert sandboxes["bwrap"]["ok"], sandboxes["bwrap"]  # CI's machine runs bwrap
    text = CliRunner().invoke(main, ["doctor", "--no-sandboxes"])
    assert text.exit_code == 0 and "harness:" in text.stdout and "cache:" in text.stdout


def test_a_scheduler_without_dask_fails_before_any_answer(demo, tmp_path, monkeypatch):
    found = importlib.util.find_spec

    def without_dask(name, *rest):
        return None if name == "distributed" else found(name, *rest)

    monkeypatch.setattr(importlib.util, "find_spec", without_dask)
    out = tmp_path / "regress"
    done = CliRunner().invoke(main, [
        "regress", "--all", "--preprocessed", str(demo.reference_output / "preprocess"),
        "--task-info", str(demo.root / "metadata" / "task_info.json"), "--out", str(out),
        "--scheduler", "tcp://127.0.0.1:9",
    ])  # fmt: skip
    assert done.exit_code == 1 and "needs dask.distributed" in done.output
    assert "[dask]" in done.output and not out.exists()


def test_the_guides_model_placeholder_is_one_sentence_before_any_sample():
    pytest.importorskip("inspect_ai", reason="the harness extra")
    from inspect_ai._util.error import PrerequisiteError
    from inspect_ai.model import get_model

    import genotex.harness._registry  # noqa: F401 - Inspect's entry point, as inspect eval loads it

    with pytest.raises(PrerequisiteError, match="PROVIDER/MODEL is the guides' placeholder"):
        get_model("PROVIDER/MODEL")


def test_a_first_run_says_computed_a_second_kept_and_force_computed_again(demo, tmp_path):
    task_info = str(demo.root / "metadata" / "task_info.json")
    args = ["regress", "--trait", "Asthma", "--condition", "None", "--preprocessed",
            str(demo.reference_output / "preprocess"), "--task-info", task_info,
            "--out", str(tmp_path / "r")]  # fmt: skip
    first = CliRunner().invoke(main, args)
    assert first.exit_code == 0, first.output
    assert "Asthma|None: ok, computed" in first.output and "again" not in first.output
    second = CliRunner().invoke(main, args)
    line = next(x for x in second.output.splitlines() if "Asthma|None: ok" in x)
    assert re.search(r"ok, kept from a run at \d{4}-\d\d-\d\dT", line), line
    assert not re.search(r"\(\d+\.\d s[;)]", line), line  # the earlier run's time is not now's
    forced = CliRunner().invoke(main, [*args, "--force"])
    assert "Asthma|None: ok, computed again (--force)" in forced.output

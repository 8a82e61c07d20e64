"""A prediction that is the reference is scored, and said to be (issue #52, item 6).

0.8.0's `genotex eval -p output` in a demo folder (where `-r` defaults to `output`) printed
100 everywhere with no warning. The documented `eval -p reference/output -r
reference/output` still runs, flagged: in the JSON, the text and the page.
"""

from __future__ import annotations

import json
import os
import shutil

from click.testing import CliRunner

from genotex.cli import main
from genotex.evaluation import load_report, write_report
from genotex.workflows import run_baseline, write_raw_benchmark


def test_the_reference_scored_against_itself_is_flagged_everywhere(tmp_path, monkeypatch):
    bench = tmp_path / "bench"
    write_raw_benchmark(bench, recipes=False)
    run_baseline(bench)
    shutil.copytree(bench / "reference" / "output", tmp_path / "copy")
    runner = CliRunner()
    monkeypatch.chdir(bench / "reference")
    # with no -r, the default output/ is the prediction itself: refused since 0.12 (#62), the
    # reference's own row needs -r given
    refused = runner.invoke(main, ["eval", "-p", "output", "--task-info",
                                   str(bench / "metadata" / "task_info.json")])  # fmt: skip
    assert refused.exit_code == 2 and "the prediction is the reference" in refused.output
    cases = {
        "the same folder": ["eval", "-p", "output", "-r", str(bench / "reference" / "output")],
        "the same files elsewhere": ["eval", "-p", str(tmp_path / "copy"), "-r", "output"],
    }
    for name, args in cases.items():
        saved = tmp_path / f"{len(os.listdir(tmp_path))}.json"
        done = runner.invoke(main, [*args, "--json", str(saved), "--task-info",
                                    str(bench / "metadata" / "task_info.json")])  # fmt: skip
        assert done.exit_code == 0, (name, done.output)
        assert done.output.startswith("warning: the prediction is the reference"), name
        assert json.loads(saved.read_text())["run"]["prediction_is_reference"] is True, name
    page = write_report(load_report(saved), tmp_path / "page").read_text()
    assert 'data-testid="prediction-is-reference"' in page
    # a real run is not flagged
    monkeypatch.chdir(bench)
    done = runner.invoke(main, ["eval", "-p", "output", "-r", "reference/output", "--json",
                                str(tmp_path / "real.json")])  # fmt: skip
    assert done.exit_code == 0 and "warning: the prediction is the reference" not in done.output
    assert (
        json.loads((tmp_path / "real.json").read_text())["run"]["prediction_is_reference"] is False
    )
    page = write_report(load_report(tmp_path / "real.json"), tmp_path / "page2").read_text()
    assert 'data-testid="prediction-is-reference"' not in page


def test_the_average_frame_has_the_averages_without_intervals(tmp_path):
    """0.8.0's `report.to_frame("average")` (the README's call) was empty unless intervals
    had been asked for (issue #52, item 12).
    """
    import math

    from genotex.evaluation import evaluate

    bench = tmp_path / "bench"
    write_raw_benchmark(bench, recipes=False)
    run_baseline(bench)
    report = evaluate(bench / "output", bench / "reference" / "output",
                      bench / "metadata" / "task_info.json")  # fmt: skip
    frame = report.to_frame("average")
    f1 = frame[(frame["section"] == "analysis") & (frame["metric"] == "f1")]
    overall = f1[f1["group"] == "Overall"]
    problems = report.to_frame("problem")
    assert len(overall) == 1 and int(overall["n"].iloc[0]) == len(problems) == 8
    assert math.isclose(overall["average"].iloc[0], problems["f1"].mean())
    assert set(frame["ci_note"]) == {"not computed"}


def test_eval_of_one_trait_scores_it_as_a_subset(tmp_path):
    """0.8.0 had no trait filter: a one-trait run scored every other trait as failed (#52,
    item 9). Expected numbers: the whole evaluation's own rows for the trait.
    """
    from genotex.core import TaskInfoError
    from genotex.evaluation import EvalOptions, evaluate

    bench = tmp_path / "bench"
    write_raw_benchmark(bench, recipes=False)
    run_baseline(bench)
    ref, info = bench / "reference" / "output", bench / "metadata" / "task_info.json"
    whole = evaluate(bench / "output", ref, info)
    shutil.rmtree(bench / "output" / "regress" / "Psoriasis")  # a run that did Asthma only
    one = evaluate(bench / "output", ref, info, options=EvalOptions(traits=("Asthma",)))
    assert one.run["traits"] == ["Asthma"]
    assert {s.problem.trait for s in one.analysis} == {"Asthma"}
    wanted = {s.problem.key: s.f1 for s in whole.analysis if s.problem.trait == "Asthma"}
    assert {s.problem.key: s.f1 for s in one.analysis} == wanted
    assert not [f for f in one.findings if "Psoriasis" in f.file]
    done = CliRunner().invoke(main, ["eval", "-p", str(bench / "output"), "-r", str(ref),
                                     "--task-info", str(info), "--trait", "Asthma"])  # fmt: skip
    assert done.exit_code == 0 and "subset: Asthma only" in done.output
    try:
        evaluate(bench / "output", ref, info, options=EvalOptions(traits=("Asthmaa",)))
    except TaskInfoError as exc:
        assert "did you mean Asthma?" in str(exc)
    else:
        raise AssertionError("an unknown trait was scored")

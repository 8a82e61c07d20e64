"""One rule for a missing cv_performance in every command (#74 item 1, replacing #62 item 4's
n/a in compare and leaderboard): the published evaluator's value, 0, shown marked, and one
line saying how many answers hold no number, counted as 0 as the published evaluator does.
"""

from __future__ import annotations

import json
import shutil

import pytest

from genotex.evaluation import compare_reports, evaluate, leaderboard, render_comparison
from genotex.workflows import DEMO_SPEC, write_example


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    folder = tmp_path_factory.mktemp("cv")
    example = write_example(folder / "ex", DEMO_SPEC, seed=7)
    b_out = folder / "b" / "output"
    shutil.copytree(example.pred_output, b_out)
    for path in (b_out / "regress").rglob("significant_genes_*.json"):
        data = json.loads(path.read_text())
        data.pop("cv_performance", None)
        path.write_text(json.dumps(data))
    a = evaluate(example.pred_output, example.ref_output, example.task_info)
    b = evaluate(b_out, example.ref_output, example.task_info)
    return a, b


def test_the_published_metric_still_reads_a_missing_number_as_0(runs):
    _, b = runs
    assert all(s.trait_pred_accuracy == 0.0 for s in b.analysis)  # parity with the evaluator


def test_compare_pairs_the_published_zero_marked_and_says_so(runs):
    a, b = runs
    comparison = compare_reports(a, b)
    rows = {r.metric: r for r in comparison.sections["analysis (per problem)"]}
    accuracy = rows["trait_pred_accuracy"]
    failed = [s.problem.key for s in b.analysis if s.status != "ok"]
    answered = len(b.analysis) - len(failed)
    # by hand: every problem is paired; B's 0 is the published evaluator's value
    assert accuracy.n == len(b.analysis) and accuracy.mean_b == 0.0
    expected_a = sum(s.trait_pred_accuracy for s in a.analysis) / len(a.analysis)
    assert accuracy.mean_a == pytest.approx(expected_a, rel=1e-12)
    assert comparison.cv_absent == (0, answered)
    text = render_comparison(comparison)
    said = (f"B: {answered} of {len(b.analysis)} answers hold no cv_performance, counted as 0 "
            "as the published evaluator does (PredAcc and PredF1 marked †)")  # fmt: skip
    assert said in text and "n/a" not in text and "nan" not in text
    line = next(t for t in text.splitlines() if t.startswith("PredAcc"))
    assert "0.00†" in line


def test_the_leaderboard_shows_the_zero_marked_and_says_why(runs, tmp_path):
    paths = []
    for name, report in zip("ab", runs, strict=True):  # through the saved JSON, as a user has it
        (tmp_path / f"{name}.json").write_text(report.to_json())
        paths.append(tmp_path / f"{name}.json")
    board = leaderboard(paths, labels=["a", "b"])
    row = next(r for r in board.rows if r.name == "b")
    assert row.cell("trait_pred_accuracy") == "0.00†"
    other = next(r for r in board.rows if r.name == "a")
    assert "†" not in other.cell("trait_pred_accuracy")
    assert any(w.startswith("b: ") and "counted as 0 as the published evaluator does" in w
               for w in board.warnings)  # fmt: skip

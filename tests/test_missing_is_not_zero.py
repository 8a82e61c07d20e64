"""A missing cv_performance is n/a, not 0, in compare and leaderboard (#62 item 4): the
reference "lost" PredAcc by 92 points to any run that reports one.
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


def test_compare_shows_n_a_and_leaves_it_out_of_w_t_l(runs):
    a, b = runs
    comparison = compare_reports(a, b)
    rows = {r.metric: r for r in comparison.sections["analysis (per problem)"]}
    accuracy = rows["trait_pred_accuracy"]
    # by hand: only the problems both runs failed (no answer file: scored 0 in both, a
    # failure, not a missing number) are paired; every answer B wrote is n/a there
    failed = [s.problem.key for s in b.analysis if s.status != "ok"]
    answered = len(b.analysis) - len(failed)
    assert accuracy.n == len(failed) and accuracy.wins == accuracy.losses == 0
    assert comparison.cv_absent == (0, answered)
    text = render_comparison(comparison)
    assert f"no cv_performance in 0 answers of A and {answered} of B" in text
    line = next(t for t in text.splitlines() if t.startswith("PredAcc"))
    assert f"{accuracy.n}  " in line and f"0/{len(failed)}/0" in line


def test_the_leaderboard_shows_a_dash_and_says_why(runs, tmp_path):
    paths = []
    for name, report in zip("ab", runs, strict=True):  # through the saved JSON, as a user has it
        (tmp_path / f"{name}.json").write_text(report.to_json())
        paths.append(tmp_path / f"{name}.json")
    board = leaderboard(paths, labels=["a", "b"])
    row = next(r for r in board.rows if r.name == "b")
    b = runs[1]
    failed = [s for s in b.analysis if s.status != "ok"]
    # over the answers that hold the number, or failed: a failed problem scores 0 there
    assert row.cell("trait_pred_accuracy") == ("0.00" if failed else "-")
    other = next(r for r in board.rows if r.name == "a")
    assert other.cell("trait_pred_accuracy") != "-"
    assert any("b: " in w and "hold no cv_performance" in w for w in board.warnings)

"""`genotex demo --realistic`: a benchmark on which the baseline is not perfect, a careful
team (tests/realistic_team.py, written from the cohorts' printed rows) scores above it, and
each classic mistake costs the careful team on the metric it touches.
"""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import pytest

from genotex.evaluation import evaluate
from genotex.workflows import run_baseline, write_realistic_benchmark
from tests.paper_team import run_team
from tests.realistic_team import CORRECT, MISTAKES, with_mistake


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file()}  # fmt: skip


@pytest.fixture(scope="module")
def realistic(tmp_path_factory):
    """The benchmark, the baseline's output on it, and the careful team's."""
    folder = tmp_path_factory.mktemp("realistic")
    bench = write_realistic_benchmark(folder / "root")
    with contextlib.redirect_stdout(io.StringIO()):  # the steps' printing
        run_baseline(bench.root, out=folder / "baseline")
        run_team(CORRECT, bench.root, folder / "team" / "output")
    return folder


def _report(output: Path, root: Path):
    return evaluate(output, root / "reference/output", root / "metadata/task_info.json")


def _f1(report) -> dict[str, float]:
    frame = report.to_frame("problem")
    return {f"{t}|{c}": f for t, c, f in zip(frame["trait"], frame["condition"], frame["f1"],
                                             strict=True)}  # fmt: skip


def _average(report, section: str, group: str, metric: str) -> float:
    frame = report.to_frame("average")
    row = frame[(frame["section"] == section) & (frame["group"] == group)
                & (frame["metric"] == metric)]  # fmt: skip
    return float(row["average"].iloc[0])


def test_the_same_seed_writes_the_same_bytes_and_another_seed_other_values(tmp_path):
    first = _tree(write_realistic_benchmark(tmp_path / "a").root)
    again = _tree(write_realistic_benchmark(tmp_path / "b").root)
    other = _tree(write_realistic_benchmark(tmp_path / "c", seed=8).root)
    assert first == again
    assert first.keys() == other.keys() and first != other


def test_the_benchmark_holds_what_it_says_it_varies(realistic):
    root = realistic / "root"
    assert sorted(p.name for p in (root / "input/TCGA").iterdir()) == [
        "TCGA_Psoriasis_(DEMO)", "TCGA_Skin_Cutaneous_Melanoma_(SKCM)"]  # fmt: skip
    records = (root / "reference/output/preprocess/Obesity/cohort_info.json").read_text()
    assert records.count('"is_available": true') == 1  # one of three obesity series usable
    from genotex.core import read_table
    from genotex.regression import detect_batch_effect

    batched = read_table(root / "reference/output/preprocess/Obesity/GSE200003.csv",
                         features_are_rows=False)  # fmt: skip
    assert detect_batch_effect(batched.values[:, 3:])  # the LMM is the reference's choice


def test_the_baseline_loses_points_a_careful_reader_keeps(realistic):
    root = realistic / "root"
    baseline = _report(realistic / "baseline/output", root)
    team = _report(realistic / "team/output", root)
    # by hand: the baseline takes the all-obese series and the cell-line series as usable
    # obesity cohorts and misses the lean/obese one, so dataset filtering loses precision
    assert _average(baseline, "filtering", "", "f1") < 100.0
    assert _average(team, "filtering", "", "f1") == 100.0
    assert _average(baseline, "preprocessing", "linked", "samples_jaccard") < 1.0
    base_f1, team_f1 = _f1(baseline), _f1(team)
    assert sum(team_f1.values()) > sum(base_f1.values())
    assert team_f1["Asthma|Obesity"] > base_f1["Asthma|Obesity"]
    assert team_f1["Obesity|None"] > base_f1["Obesity|None"]


#: What each mistake must cost the careful team, worked out by hand from the benchmark:
#: (the problems whose F1 drops, the preprocessing (group, metric) that drops or None).
#: - the sex code read as 1 = male inverts GSE200002's Gender: its clinical correlation drops;
#:   Asthma's problems are answered from GSE200001 (the larger), so no F1 moves;
#: - symbols looked for under 'Gene Symbol' leave GSE200002 without a gene table: it is
#:   missing from every preprocessing group, and no problem is answered from it;
#: - the condition ignored answers Asthma | Obesity as the unconditional problem: the
#:   reference's conditional answer differs, so only that problem's F1 drops;
#: - the Lasso where the batch test calls for the LMM: the obesity problems (GSE200003, the
#:   batched series) drop, and only they;
#: - the melanoma folder taken for psoriasis: Psoriasis/Xena holds other samples (every
#:   preprocessing group loses them); the problems are answered from GEO, so no F1 moves.
EXPECTED_LOSS = {
    "sex code read as written": (set(), ("clinical", "feature_correlation")),
    "the annotation's other column": (set(), ("gene", "samples_jaccard")),
    "the condition ignored": ({"Asthma|Obesity"}, None),
    "an LMM problem fitted as a Lasso": ({"Obesity|None", "Obesity|Gender"}, None),
    "the wrong TCGA folder": (set(), ("gene", "samples_jaccard")),
}


def test_every_mistake_has_its_expected_loss():
    assert EXPECTED_LOSS.keys() == MISTAKES.keys()


@pytest.mark.parametrize("mistake", sorted(EXPECTED_LOSS))
def test_each_classic_mistake_costs_the_careful_team_on_the_metric_it_touches(
    realistic, tmp_path, mistake
):
    root = realistic / "root"
    with contextlib.redirect_stdout(io.StringIO()):
        run_team(with_mistake(mistake), root, tmp_path / "output")
    correct, wrong = _report(realistic / "team/output", root), _report(tmp_path / "output", root)
    dropped, metric = EXPECTED_LOSS[mistake]
    right_f1, wrong_f1 = _f1(correct), _f1(wrong)
    assert {p for p in right_f1 if wrong_f1[p] < right_f1[p]} == dropped
    assert all(wrong_f1[p] == right_f1[p] for p in right_f1 if p not in dropped)
    if metric is not None:
        group, name = metric
        assert _average(wrong, "preprocessing", group, name) < _average(
            correct, "preprocessing", group, name)  # fmt: skip

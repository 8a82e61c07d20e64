"""`genotex demo --realistic`: a benchmark on which the baseline is not perfect, a careful
team (tests/realistic_team.py, written from the cohorts' printed rows) scores above it, and
each classic mistake costs the careful team on the metric it touches.
"""

from __future__ import annotations

import contextlib
import io
import json
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
    # TCGA's folders are cancers: liver cancer's is the Liver_Cancer trait's, melanoma's no
    # trait's; Psoriasis, not a cancer, has no Xena cohort in the answers
    assert sorted(p.name for p in (root / "input/TCGA").iterdir()) == [
        "TCGA_Liver_Cancer_(LIHC)", "TCGA_Skin_Cutaneous_Melanoma_(SKCM)"]  # fmt: skip
    reference = root / "reference/output/preprocess"
    assert not (reference / "Psoriasis/Xena.csv").exists()
    assert (reference / "Liver_Cancer/Xena.csv").is_file()
    records = (reference / "Obesity/cohort_info.json").read_text()
    assert records.count('"is_available": true') == 1  # one of three obesity series usable
    from genotex.core import read_table
    from genotex.regression import detect_batch_effect

    batched = read_table(reference / "Obesity/GSE200003.csv", features_are_rows=False)
    assert detect_batch_effect(batched.values[:, 3:])  # the LMM is the reference's choice
    # the genes in every table sorted, as the paper's grouping by symbol leaves them
    genes = list(batched.column_labels[3:])
    assert genes == sorted(genes) and len(genes) == 240
    info = json.loads((root / "metadata/task_info.json").read_text())
    for trait, entry in info.items():  # each known gene listed once
        assert len(entry["related_genes"]) == len(set(entry["related_genes"])), trait


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


#: What each mistake must cost the careful team, worked out by hand from the benchmark (seed
#: 7: Asthma's GSE200002 has 82 samples, GSE200001 72): (the problems whose F1 drops, the
#: (section, group, metric) that drops or None).
#: - the sex code read as 1 = male inverts GSE200002's Gender: its clinical correlation drops;
#:   a covariate's sign changes no residual, so no F1 moves;
#: - symbols looked for under 'Gene Symbol' leave GSE200002 without a gene table: it is
#:   missing from every preprocessing group, and Asthma's problems, which its larger cohort
#:   answered, are answered from GSE200001 instead;
#: - the condition ignored answers Asthma | Obesity as the unconditional problem: the
#:   reference's conditional answer differs, so only that problem's F1 drops;
#: - the Lasso where the batch test calls for the LMM: the obesity problems (GSE200003, the
#:   batched series) drop, and only they;
#: - the melanoma folder taken for psoriasis: the team's Psoriasis/Xena is a cohort the
#:   reference does not have, so dataset filtering loses precision; it is smaller than
#:   GSE200006, which still answers the problems, so no F1 moves.
ASTHMA = {"Asthma|None", "Asthma|Age", "Asthma|Gender", "Asthma|Obesity"}
EXPECTED_LOSS = {
    "sex code read as written": (set(), ("preprocessing", "clinical", "feature_correlation")),
    "the annotation's other column": (ASTHMA, ("preprocessing", "gene", "samples_jaccard")),
    "the condition ignored": ({"Asthma|Obesity"}, None),
    "an LMM problem fitted as a Lasso": ({"Obesity|None", "Obesity|Gender"}, None),
    "the wrong TCGA folder": (set(), ("filtering", "", "precision")),
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
        assert _average(wrong, *metric) < _average(correct, *metric)


# ---- the key: made as the benchmark's is, so correct work scores 100 (issue #69) ---------------
def _frames(path: Path):
    import pandas as pd

    return pd.read_csv(path, index_col=0)


def _check_tables_and_answers(root: Path, team: Path, baseline: Path) -> None:
    """The team's tables equal the key's (values and order), the baseline's gene tables and
    linked tables too, and the reference pipeline on the team's tables gives every key answer.
    """
    from genotex.core import ResultFile, TaskInfo
    from genotex.regression import answer_problem, one_blas_thread

    key = root / "reference/output/preprocess"
    tables = sorted(key.rglob("*.csv"))
    assert tables
    for table in tables:
        relative = table.relative_to(key)
        expected = _frames(table)
        written = _frames(team / "preprocess" / relative)
        assert list(written.columns) == list(expected.columns), relative
        assert list(written.index) == list(expected.index), relative
        assert (written.to_numpy() == expected.to_numpy()).all(), relative
        theirs = baseline / "preprocess" / relative
        if relative.parts[1] == "gene_data" or (len(relative.parts) == 2 and theirs.exists()):
            mine = _frames(theirs)
            assert list(mine.columns) == list(expected.columns), relative
            assert (mine.to_numpy() == expected.to_numpy()).all(), relative
    info = TaskInfo.read(root / "metadata/task_info.json")
    answers = sorted((root / "reference/output/regress").rglob("*.json"))
    assert len(answers) == len(list(info.problems()))
    with one_blas_thread(reference=True):
        for problem in info.problems():
            result = answer_problem(team / "preprocess", problem, info)
            path = root / "reference/output/regress" / problem.trait / (
                f"significant_genes_condition_{problem.condition}.json")  # fmt: skip
            assert [g for g, _ in result.genes] == list(ResultFile.read(path).genes), problem


def test_the_careful_team_and_the_baseline_write_the_keys_tables_and_score_100(realistic):
    root = realistic / "root"
    _check_tables_and_answers(root, realistic / "team/output", realistic / "baseline/output")
    assert set(_f1(_report(realistic / "team/output", root)).values()) == {100.0}


@pytest.mark.slow
@pytest.mark.parametrize("seed", [20261201])
def test_on_other_seeds_correct_work_scores_100(tmp_path, seed):
    """Seed 20261201 is the one whose old key selected 239 of 240 genes (seed 3 was checked
    the same way for 0.15.0, and left out of the suite for its time, #71)."""
    bench = write_realistic_benchmark(tmp_path / "root", seed=seed)
    with contextlib.redirect_stdout(io.StringIO()):
        run_baseline(bench.root, out=tmp_path / "baseline")
        run_team(CORRECT, bench.root, tmp_path / "team" / "output")
    _check_tables_and_answers(bench.root, tmp_path / "team/output", tmp_path / "baseline/output")
    assert set(_f1(_report(tmp_path / "team/output", bench.root)).values()) == {100.0}


def test_the_generator_prints_each_keys_cv_numbers_and_marks_the_fits_at_chance(tmp_path):
    from click.testing import CliRunner

    from genotex.cli import main

    done = CliRunner().invoke(
        main, ["demo", "--realistic", "--inputs-only", "--out", str(tmp_path / "d")]
    )
    assert done.exit_code == 0, done.output
    lines = {line.split()[0]: line for line in done.output.splitlines()
             if line.startswith("  ") and "|" in line.split()[0]}  # fmt: skip
    answers = sorted((tmp_path / "d/reference/output/regress").rglob("*.json"))
    assert len(lines) == len(answers) == 10
    for path in answers:
        written = json.loads(path.read_text())
        problem = f"{path.parent.name}|{path.stem.rsplit('_', 1)[1]}"
        accuracy = written["cv_performance"]["prediction"]["accuracy"]
        precision = written["cv_performance"]["selection"]["precision"]
        line = lines[problem]
        assert f"CV accuracy {accuracy:5.1f}" in line and f"precision {precision:5.1f}" in line
        assert ("AT CHANCE" in line) == (accuracy < 60), line
    # the batched cohort's LMM fits, and only they, are at chance (the published LMM rotates
    # X but not y; scripts/lmm_trap_sweep.py: no batch design gets it past chance honestly)
    assert {p for p, line in lines.items() if "AT CHANCE" in line} == {
        "Obesity|None", "Obesity|Gender"}  # fmt: skip
    assert "2 of 10 answers come from a fit at chance" in done.output


def test_eval_names_the_keys_at_chance_and_diagnose_a_column_order_dependent_one(
    realistic, tmp_path
):
    """By hand: the team's tables with GSE200003's gene columns reversed hold the same values;
    the published LMM on them selects other genes, so an order-dependent key's problem loses F1
    though nothing is wrong with the data, and diagnose says the key is the cause, not a stage
    of the agent's. Which of Obesity's two keys at chance is order-dependent depends on the
    BLAS kernel (Haswell: None; SkylakeX: Gender): eval names it, and that one is taken.
    """
    import shutil

    from genotex.evaluation import REFERENCE_CAUSES
    from genotex.workflows import diagnose

    root = realistic / "root"
    found = _report(realistic / "team/output", root).findings
    at_chance = [f for f in found if "own cross-validated prediction accuracy" in f.reason]
    assert sorted(f.file for f in at_chance) == [
        "REF:regress/Obesity/significant_genes_condition_Gender.json",
        "REF:regress/Obesity/significant_genes_condition_None.json",
    ]
    ordered = [f.file for f in at_chance if "order of its table's gene columns" in f.reason]
    assert len(ordered) >= 1, "no key at chance was found order-dependent"
    condition = ordered[0].rsplit("significant_genes_condition_", 1)[1].removesuffix(".json")
    pred = tmp_path / "pred"
    shutil.copytree(realistic / "team/output", pred)
    linked = pred / "preprocess/Obesity/GSE200003.csv"
    table = _frames(linked)
    table[[*table.columns[:3], *table.columns[3:][::-1]]].to_csv(linked)
    from genotex.core import ProblemId, TaskInfo
    from genotex.regression import answer_problem, one_blas_thread, write_result

    info = TaskInfo.read(root / "metadata/task_info.json")
    with one_blas_thread(reference=True):
        problem_id = ProblemId("Obesity", None if condition == "None" else condition)
        write_result(pred / "regress", answer_problem(pred / "preprocess", problem_id, info))
    found = diagnose(pred, root / "reference/output", info, mode="reference")
    problem = next(p for p in found.problems if p.problem.key == f"Obesity|{condition}")
    assert problem.lost > 0
    classes = {found.findings[i].error_class for i in problem.findings}
    assert {"reference_at_chance", "reference_order_dependent"} <= classes
    assert found.findings[problem.top].error_class in REFERENCE_CAUSES

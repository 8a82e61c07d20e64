"""Writes stay inside the output folder; names the file system refuses are one cohort's failure."""

from __future__ import annotations

import os
import sys

import pytest

from genotex.core import UnsafeNameError, check_safe_name, write_text_atomic
from genotex.evaluation import evaluate, write_report
from genotex.preprocessing import plan_layout
from genotex.workflows import write_raw_benchmark
from genotex.workflows._baseline import propose_tree


def test_a_long_legal_name_gets_a_legal_temporary_file(tmp_path):
    for name in ("significant_genes_condition_" + "C" * 215 + ".json", "r" * 240 + ".json"):
        path = tmp_path / name
        write_text_atomic(path, "{}")
        assert path.read_text() == "{}"
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_names_the_file_system_refuses_are_refused_by_name():
    with pytest.raises(UnsafeNameError, match="bytes long"):
        check_safe_name("x" * 256)
    with pytest.raises(UnsafeNameError, match="not valid UTF-8"):
        check_safe_name(os.fsdecode(b"GSE\xff1"))
    assert check_safe_name("é" * 127) == "é" * 127  # 254 bytes


@pytest.mark.parametrize("bad", ["a\nb", "a\tb", "a\rb", "\x1b[31mred", "a\x7fb", "x\x01"])
def test_a_control_character_in_a_name_is_refused(bad):
    """A newline or tab in a name would make two trees' digest lines the same (issue #50)."""
    with pytest.raises(UnsafeNameError, match="control character"):
        check_safe_name(bad)


def test_two_trees_one_digest_cannot_be_packed():
    """`a\t1\tX` as a name forges a second tree's line: refused where the digest is made."""
    from genotex.core import check_relative, tree_digest_of

    with pytest.raises(UnsafeNameError):
        check_relative("a\t1\tforged")
    # the digest's line format itself is unchanged (0.8.0 logs and markers still verify)
    import hashlib

    line = "a.json\t2\t" + "0" * 64
    assert tree_digest_of([("a.json", 2, "0" * 64)]) == hashlib.sha256(line.encode()).hexdigest()


def test_a_report_is_never_written_through_a_symlinked_figures_folder(tmp_path, eval_fixtures):
    case = eval_fixtures / "case1"
    info = case / "ref" / "metadata" / "task_info.json"
    report = evaluate(case / "pred" / "output", case / "ref" / "output", info)
    out, elsewhere = tmp_path / "report", tmp_path / "elsewhere"
    out.mkdir()
    elsewhere.mkdir()
    (out / "figures").symlink_to(elsewhere)
    with pytest.raises(UnsafeNameError, match="outside the output folder"):
        write_report(report, out)
    assert list(elsewhere.iterdir()) == []


@pytest.fixture
def bench(tmp_path):
    return write_raw_benchmark(tmp_path / "bench", recipes=False)


def test_baseline_never_writes_a_recipe_through_a_symlinked_trait_folder(tmp_path, bench):
    root = tmp_path / "bench"
    trait = next(p.name for p in (root / "input" / "GEO").iterdir())
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (root / "recipes").mkdir(exist_ok=True)
    (root / "recipes" / trait).symlink_to(elsewhere)
    proposed, _, failed = propose_tree(root / "input", root / "recipes")
    assert list(elsewhere.iterdir()) == []
    assert failed and all(k.startswith(f"{trait}/") for k in failed)
    assert all("outside the output folder" in v for v in failed.values())
    assert proposed  # the other traits' cohorts are proposed


@pytest.mark.skipif(sys.platform == "darwin", reason="macOS refuses non-UTF-8 file names itself")
def test_a_non_utf8_cohort_folder_fails_that_cohort_only(tmp_path, bench):
    root = tmp_path / "bench"
    trait = next(p for p in (root / "input" / "GEO").iterdir())
    os.mkdir(os.fsencode(trait) + b"/GSE\xff9")
    proposed, _, failed = propose_tree(root / "input", root / "recipes")
    assert list(failed) == [trait.name + "/GSE\\xff9"]  # printable: the byte written out
    assert "not valid UTF-8" in failed[trait.name + "/GSE\\xff9"]
    assert proposed


def test_a_cohort_with_two_recipes_is_one_failed_job_not_two_racing_ones(tmp_path):
    recipes = tmp_path / "recipes" / "Asthma"
    recipes.mkdir(parents=True)
    (recipes / "GSE1.toml").write_text('trait = "Asthma"\ncohort = "GSE1"\n')
    (recipes / "GSE1.json").write_text('{"trait": "Asthma", "cohort": "GSE1"}')
    (recipes / "GSE2.toml").write_text('trait = "Asthma"\ncohort = "GSE2"\n')
    jobs = plan_layout(tmp_path / "input", tmp_path / "recipes", ["Asthma"])
    assert [(j.cohort, bool(j.problem)) for j in jobs] == [("GSE1", True), ("GSE2", False)]
    assert "two recipes (GSE1.json and GSE1.toml)" in jobs[0].problem


def test_fake_cohort_records_do_not_make_two_step_selection_quadratic(
    shared, tmp_path, monkeypatch
):
    import json
    import shutil

    from genotex.core import (
        CohortInfoReader,
        GuardedTree,
        ProblemId,
        TaskInfo,
        _selection,
        select_cohorts,
    )

    case = shared / "fixtures" / "regress" / "synthetic"
    tree = tmp_path / "output"
    shutil.copytree(case / "output", tree)
    info = TaskInfo.read(case / "metadata" / "task_info.json")
    problem = ProblemId("Liver_cirrhosis", "Prostate_Cancer")

    def selected():
        reader = CohortInfoReader(GuardedTree.untrusted(tree), lambda *a: None)
        return select_cohorts(reader, problem, info)

    expected = selected()
    assert expected is not None
    for trait in ("Liver_cirrhosis", "Prostate_Cancer"):
        path = tree / "preprocess" / trait / "cohort_info.json"
        records = json.loads(path.read_text())
        fake = {"is_usable": True, "is_available": True, "sample_size": 10_000}
        records.update({f"GSE9{i:05d}": dict(fake) for i in range(2_000)})  # no tables exist
        path.write_text(json.dumps(records))
    sizes = []
    pairs = _selection.two_step_pairs
    monkeypatch.setattr(
        _selection,
        "two_step_pairs",
        lambda t, c: sizes.append((len(t), len(c))) or pairs(t, c),
    )
    assert selected() == expected
    assert sizes and all(t < 10 and c < 10 for t, c in sizes)  # not 2,000 x 2,000 pairs


def test_cohort_info_lists_records_in_plan_order_whatever_order_workers_finish(tmp_path):
    import json

    from genotex.core import CohortInfo, CohortRecord

    out = tmp_path / "pre"
    path = out / "Asthma" / "cohort_info.json"
    for cohort in ("GSE3", "GSE1", "GSE2"):  # the order in which two workers finished
        CohortInfo.update(path, CohortRecord(cohort, is_usable=True, sample_size=50))
    CohortInfo.reorder(path, ["GSE1", "GSE2", "GSE3"])  # the plan's order (run_jobs passes it)
    assert list(json.loads(path.read_text())) == ["GSE1", "GSE2", "GSE3"]
    CohortInfo.update(path, CohortRecord("GSE0", is_usable=True, sample_size=50))
    CohortInfo.reorder(path, ["GSE2", "GSE1"])
    assert list(json.loads(path.read_text())) == ["GSE2", "GSE1", "GSE3", "GSE0"]


def test_preprocessing_with_two_jobs_writes_what_one_job_writes(tmp_path):
    from genotex.core import TaskInfo
    from genotex.preprocessing import load_synonyms, preprocess_tree

    bench = write_raw_benchmark(tmp_path / "bench")
    root = tmp_path / "bench"
    info = TaskInfo.read(root / "metadata" / "task_info.json")
    synonyms = load_synonyms(root / "metadata" / "gene_synonym.json")
    outputs = {}
    for jobs in (1, 2):
        out = tmp_path / f"out{jobs}"
        preprocess_tree(root / "input", out, synonyms, info, recipes=root / "recipes", jobs=jobs)
        outputs[jobs] = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    assert outputs[1] == outputs[2] and bench is not None

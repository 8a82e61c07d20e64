"""genotex demo (the whole pipeline) and the notebook guide's example, run verbatim."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from genotex.cli import main

NOTEBOOK = Path(__file__).resolve().parents[1] / "docs" / "guides" / "notebook.md"


def test_the_whole_pipeline_demo(tmp_path):
    result = CliRunner().invoke(main, ["demo", "--out", str(tmp_path / "demo")])
    assert result.exit_code == 0, result.output
    report = json.loads((tmp_path / "demo" / "eval_report.json").read_text())
    overall = report["analysis"]["categorized"]["Overall"]
    assert overall["success"] == 100.0 and overall["f1"] > 60  # the planted genes are found
    assert report["selection"]["selection"]["average"]["accuracy"] == 100.0
    linked = report["preprocessing"]["linked"]["average"]
    assert (
        linked["composite_similarity_correlation"] > 0.99
    )  # preprocessing recovers the true tables
    for folder in (
        "input/GEO",
        "input/TCGA",
        "recipes",
        "output/preprocess",
        "output/regress",
        "reference/output",
    ):
        assert (tmp_path / "demo" / folder).is_dir(), folder
    assert "Where everything is" in result.output
    # #37: every point the LLM-free baseline lost is explained, with a stage and a finding
    demo = tmp_path / "demo"
    diagnosed = CliRunner().invoke(
        main,
        ["diagnose", "-p", str(demo / "output"), "-r", str(demo / "reference/output"),
         "--task-info", str(demo / "metadata/task_info.json"), "--mode", "reference",
         "--json", str(tmp_path / "diagnosis.json")],
    )  # fmt: skip
    assert diagnosed.exit_code == 0, diagnosed.output
    diagnosis = json.loads((tmp_path / "diagnosis.json").read_text())
    lost = [p for p in diagnosis["problems"] if p["f1"]["agent"] < 100]
    assert lost, "the demo's baseline is not perfect: the diagnosis has something to explain"
    for problem in lost:
        assert problem["top"] is not None, problem
        assert sum(problem["shares"].values()) == pytest.approx(100 - problem["f1"]["agent"])


def test_the_readme_notebook_example_runs_verbatim(tmp_path, monkeypatch):
    text = NOTEBOOK.read_text()
    block = re.search(r"<!-- notebook-example -->\s*```python\n(.*?)```", text, re.S)
    assert block, "the notebook guide lost its example"
    monkeypatch.chdir(tmp_path)
    namespace: dict = {}
    exec(compile(block.group(1), "notebook guide example", "exec"), namespace)  # noqa: S102 - our own documentation
    assert namespace["status"].counts() == {
        "ok": 8,
        "skipped": 0,
        "failed": 0,
    }  # 3 traits, 8 problems
    assert namespace["report"].analysis_by_category()["Overall"]["success"] == 100.0
    modules = re.findall(r"^\s*(?:from|import) (\S+)", block.group(1), re.M)
    allowed = {"genotex", "genotex.preprocessing", "genotex.regression", "genotex.evaluation"}
    assert set(modules) <= allowed, (
        "the notebook example imports from genotex and its stage packages only"
    )
    assert (
        tmp_path
        / "demo-bench"
        / "output"
        / "regress"
        / "Asthma"
        / "significant_genes_condition_None.json"
    ).exists()


def test_notebook_objects_print_short(tmp_path, shared):
    """What a notebook prints of a result is a line, not the frames inside it (~100 KB before)."""
    import genotex
    from genotex.evaluation import evaluate
    from genotex.preprocessing import read_series_matrix

    matrix = read_series_matrix(
        shared / "data" / "real" / "geo" / "GSE14520" / "GSE14520-GPL571_series_matrix.txt.gz"
    )
    assert len(repr(matrix)) < 200 and "22268 probes" in repr(matrix)
    page = matrix._repr_html_()
    assert len(page.encode()) <= 1024 and "Tissue: Liver Tumor Tissue" in page
    case = shared / "fixtures" / "eval" / "case1"
    report = evaluate(
        case / "pred" / "output",
        case / "ref" / "output",
        case / "ref" / "metadata" / "task_info.json",
    )
    assert len(repr(report)) < 300 and repr(report).startswith("EvalReport(")
    assert "<table>" in report._repr_html_() and len(report._repr_html_()) < 5000
    regress = shared / "fixtures" / "regress" / "synthetic"
    info = genotex.load_task_info(regress / "metadata" / "task_info.json")
    result = genotex.answer_problem(
        regress / "output" / "preprocess", genotex.ProblemId("Prostate_Cancer", None), info
    )
    assert len(repr(result)) < 300 and "Prostate_Cancer|None: Lasso" in repr(result)
    assert len(result._repr_html_().encode()) <= 1024 and "<table>" in result._repr_html_()


def test_soft_files_and_recipes_print_in_a_line_and_a_small_escaped_table(shared):
    """#38: a SoftFile printed its whole platform table (6,899 characters), a Recipe one line of
    ~1,300; both are now a line under 200 characters and a table under 1 KB."""
    from genotex.preprocessing import Recipe, read_soft

    soft = read_soft(shared / "data" / "real" / "geo" / "platforms" / "GPL96.txt.gz")
    assert len(repr(soft)) <= 200 and "GPL96" in repr(soft) and "rows x" in repr(soft)
    assert len(soft._repr_html_().encode()) <= 1024
    rules = [{"match": f"stage {i}<b>", "value": i} for i in range(40)]
    recipe = Recipe.from_dict(
        {"trait": "Liver_Cancer", "cohort": "GSE14520", "note": "<script>alert(1)</script>" * 20,
         "variables": {"trait": {"row": 3, "rules": rules}, "age": {"row": 5, "numeric": True}}}
    )  # fmt: skip
    assert len(repr(recipe)) <= 200 and "trait row 3, 40 rules" in repr(recipe)
    page = recipe._repr_html_()
    assert len(page.encode()) <= 1024 and "<script>" not in page and "&lt;script&gt;" in page


def test_answer_problem_takes_paths_and_keys_as_a_notebook_gives_them(shared):
    import genotex

    regress = shared / "fixtures" / "regress" / "synthetic"
    info_path = regress / "metadata" / "task_info.json"
    by_objects = genotex.answer_problem(
        regress / "output" / "preprocess",
        genotex.ProblemId("Prostate_Cancer", None),
        genotex.load_task_info(info_path),
    )
    for problem in ("Prostate_Cancer|None", "Prostate_Cancer"):
        by_text = genotex.answer_problem(str(regress / "output" / "preprocess"), problem, info_path)
        assert by_text.to_file() == by_objects.to_file()

"""genotex demo (the whole pipeline) and the README's notebook example, run verbatim."""

from __future__ import annotations

import json
import re
from pathlib import Path

from click.testing import CliRunner

from genotex.cli import main

README = Path(__file__).resolve().parents[1] / "README.md"


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


def test_the_readme_notebook_example_runs_verbatim(tmp_path, monkeypatch):
    text = README.read_text()
    block = re.search(r"<!-- notebook-example -->\s*```python\n(.*?)```", text, re.S)
    assert block, "the README lost its notebook example"
    monkeypatch.chdir(tmp_path)
    namespace: dict = {}
    exec(compile(block.group(1), "README notebook example", "exec"), namespace)  # noqa: S102 - our own README
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

"""The command line: option habits of the published evaluator, outputs, demo."""

from __future__ import annotations

import csv
import json

import pytest
from click.testing import CliRunner

from genotex.cli import main
from genotex.cli._common import _expand_greedy
from genotex.workflows import SynthSpec, write_example

GREEDY = {"-t", "-s"}


@pytest.mark.parametrize(
    ("argv", "expanded"),
    [
        (
            ["-t", "selection", "analysis", "-p", "x"],
            ["-t", "selection", "-t", "analysis", "-p", "x"],
        ),
        (["-t", "selection", "-t", "analysis"], ["-t", "selection", "-t", "analysis"]),
        (["-s", "gene", "linked"], ["-s", "gene", "-s", "linked"]),
        (["-t"], ["-t"]),
        (["-t", "--details"], ["-t", "--details"]),
        (["--", "-t", "a", "b"], ["--", "-t", "a", "b"]),
    ],
)
def test_several_values_after_one_flag(argv, expanded):
    assert _expand_greedy(argv, GREEDY) == expanded


@pytest.fixture(scope="module")
def example(tmp_path_factory):
    spec = SynthSpec(n_traits=3, n_cohorts=6, samples=(10, 16), n_genes=50, n_related=8)
    return write_example(tmp_path_factory.mktemp("cli"), spec, seed=11)


def _eval(example, *extra):
    return CliRunner().invoke(
        main,
        [
            "eval",
            "-p",
            str(example.pred_output),
            "-r",
            str(example.ref_output),
            "--no-progress",
            *extra,
        ],
    )


def test_tasks_and_subtasks_restrict_the_report(example, tmp_path):
    out = tmp_path / "r.json"
    result = _eval(
        example, "-t", "preprocessing", "analysis", "-s", "gene", "clinical", "--json", str(out)
    )
    assert result.exit_code == 0, result.output
    report = json.loads(out.read_text())
    assert "selection" not in report and set(report["preprocessing"]) == {"gene", "clinical"}
    assert (
        "== Dataset selection ==" not in result.output
        and "== Statistical analysis ==" in result.output
    )


def test_an_unknown_task_is_a_usage_error(example):
    result = _eval(example, "-t", "everything")
    assert result.exit_code == 2 and "everything" in result.output


def test_task_info_defaults_to_the_metadata_next_to_ref(example, tmp_path):
    # example.ref_output is <root>/ref/output and task_info is <root>/ref/metadata/task_info.json
    result = _eval(example, "--json", str(tmp_path / "r.json"))
    assert result.exit_code == 0, result.output
    run = json.loads((tmp_path / "r.json").read_text())["run"]
    assert run["task_info"].endswith("ref/metadata/task_info.json")


def test_details_print_per_trait_problem_and_file_tables(example):
    result = _eval(example, "--details")
    assert result.exit_code == 0
    for heading in (
        "-- DF per trait --",
        "-- DS per problem --",
        "-- gene per file --",
        "-- analysis per trait --",
        "-- analysis per problem --",
    ):
        assert heading in result.output


def test_csv_tables_match_the_json_report(example, tmp_path):
    result = _eval(example, "--csv", str(tmp_path / "tables"), "--json", str(tmp_path / "r.json"))
    assert result.exit_code == 0
    names = sorted(p.name for p in (tmp_path / "tables").iterdir())
    assert names == [
        "analysis_per_problem.csv",
        "filtering_per_trait.csv",
        "preprocessing_per_file.csv",
        "problems_found.csv",
        "selection_per_problem.csv",
    ]
    report = json.loads((tmp_path / "r.json").read_text())
    with open(tmp_path / "tables" / "analysis_per_problem.csv") as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == len(report["analysis"]["per_problem"])
    row = rows[0]
    expected = report["analysis"]["per_problem"][f"{row['trait']}|{row['condition']}"]
    assert (float(row["f1"]) if row["f1"] else None) == expected["f1"]


def test_version():
    result = CliRunner().invoke(main, ["--version"])
    assert result.exit_code == 0 and "genotex" in result.output


def test_eval_only_demo_writes_an_example_and_evaluates_it(tmp_path):
    result = CliRunner().invoke(main, ["demo", "--eval-only", "--out", str(tmp_path / "demo")])
    assert result.exit_code == 0, result.output
    assert "== Statistical analysis ==" in result.output and "Overall" in result.output
    report = json.loads((tmp_path / "demo" / "eval_report.json").read_text())
    assert report["analysis"]["per_problem"] and report["problems_found"]


def test_library_messages_name_no_cli_flag():
    """A notebook user has no --debug, --force or "proposal above": the CLI adds its own words."""
    import ast
    import re
    from pathlib import Path

    package = Path(__file__).resolve().parents[1] / "genotex"
    flag = re.compile(r"(?<![\w-])--[a-z][a-z-]+")
    found = []
    for path in package.rglob("*.py"):
        if path.parts[-2] == "cli" or path.name == "_tasks.py":  # the CLI; the harness's commands
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Raise) or (
                isinstance(node, ast.Call) and getattr(node.func, "attr", "") in ("warn", "append")
            ):
                for text in (n.value for n in ast.walk(node) if isinstance(n, ast.Constant)):
                    if isinstance(text, str) and (flag.search(text) or "proposal above" in text):
                        found.append(f"{path.relative_to(package)}: {text[:60]!r}")
    assert found == []

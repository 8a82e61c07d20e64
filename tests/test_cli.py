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


def _leaf_commands():
    import click

    from genotex.cli import main

    def walk(command, path):
        if isinstance(command, click.Group):
            for name, sub in sorted(command.commands.items()):
                yield from walk(sub, [*path, name])
        else:
            yield " ".join(path), command

    return list(walk(main, []))


@pytest.mark.parametrize("name, command", _leaf_commands(), ids=lambda v: str(v))
def test_every_command_has_help_on_every_option_an_example_and_q_v(name, command):
    import click

    options = [p for p in command.params if isinstance(p, click.Option)]
    missing = [p.opts[0] for p in options if not p.help and p.name != "help"]
    assert not missing, f"genotex {name}: options without help: {missing}"
    assert "Example" in (command.help or ""), f"genotex {name} --help has no example"
    flags = {opt for p in options for opt in p.opts}
    assert {"-q", "--quiet", "-v", "--verbose", "--debug", "--no-progress"} <= flags, name
    if any(o in flags for o in ("--out", "--jobs")):  # one vocabulary: the same short names
        assert "--out" not in flags or "-o" in flags, name
        assert "--jobs" not in flags or "-j" in flags, name


def test_the_same_thing_has_the_same_name_in_every_command():
    """#62 item 8: `-i` named input/ in preprocess and output/preprocess in regress. Now
    -i/--input is the raw input/ folder wherever shown, --preprocessed the preprocess folder,
    --out what is written, --jobs the workers (default 1)."""
    import click

    for name, command in _leaf_commands():
        for param in command.params:
            if not isinstance(param, click.Option):
                continue
            if "--jobs" in param.opts:
                assert param.default == 1, f"genotex {name} --jobs defaults to {param.default}"
            if ("-i" in param.opts or "--input" in param.opts) and not param.hidden:
                assert param.opts[:2] == ["-i", "--input"], (name, param.opts)
                assert "input/" in param.help and "preprocess folder" not in param.help, name
            assert "--data" not in param.opts or "--preprocessed" in param.opts, name
    regress = dict(_leaf_commands())["regress"]
    data = next(p for p in regress.params if p.name == "data")
    assert data.opts == ["--preprocessed", "--data"]  # the 0.2 name still works


def test_regress_old_i_still_works_with_a_warning_and_never_with_preprocessed(shared, tmp_path):
    from genotex.cli import main

    case = shared / "fixtures" / "regress" / "synthetic"
    argv = ["regress", "--trait", "Prostate_Cancer", "--condition", "None",
            "--task-info", str(case / "metadata/task_info.json")]  # fmt: skip
    old = CliRunner().invoke(
        main, [*argv, "-i", str(case / "output/preprocess"), "--out", str(tmp_path / "a")]
    )
    assert old.exit_code == 0, old.output
    assert "regress's -i/--input is --preprocessed since 0.13" in old.stderr
    assert (tmp_path / "a/Prostate_Cancer/significant_genes_condition_None.json").is_file()
    both = CliRunner().invoke(main, [*argv, "-i", "x", "--preprocessed", "y", "--out", "z"])
    assert both.exit_code == 2 and "give one of them" in both.stderr


def test_no_progress_drops_the_count_and_the_time_left_not_the_results(shared, tmp_path):
    """#62 item 8: --no-progress existed on some commands only; now on all, one meaning."""
    result = _regress(shared, tmp_path / "a", "--no-progress")
    assert result.exit_code == 0, result.output
    lines = [ln for ln in result.stderr.splitlines() if ln.startswith("Prostate_Cancer|")]
    assert len(lines) == 4 and not any("ETA" in ln or "elapsed" in ln for ln in lines), lines
    assert "[1/4]" not in result.stderr
    assert result.stderr.strip().splitlines()[-1].startswith("4 problems:")


def test_download_kinds_are_subcommands_with_their_own_options():
    from genotex.cli import main

    runner = CliRunner()
    geo = runner.invoke(main, ["download", "geo", "--help"]).output
    gene_info = runner.invoke(main, ["download", "gene-info", "--help"]).output
    assert "--manifest" in geo and "--only" in geo and "--sha256" not in geo
    assert "--sha256" in gene_info and "--manifest" not in gene_info
    result = runner.invoke(main, ["download", "gene-info", "--out", "x", "--manifest", "m.json"])
    assert result.exit_code == 2 and "No such option '--manifest'" in result.stderr


def test_preprocess_takes_the_cohort_folder_as_inspect_does(tmp_path):
    from genotex.cli import main

    result = CliRunner().invoke(main, ["preprocess", "a", "--cohort-dir", "b", "--trait", "T"])
    assert result.exit_code == 2 and "COHORT and --cohort-dir name two folders" in result.stderr
    synonyms = tmp_path / "gene_synonym.json"
    synonyms.write_text('{"TP53": "TP53"}')
    argv = ["preprocess", str(tmp_path / "nowhere"), "--trait", "T", "--synonyms", str(synonyms)]
    result = CliRunner().invoke(main, argv)
    assert result.exit_code == 1 and "nowhere" in result.stderr  # taken as the cohort folder


def _regress(shared, out, *extra):
    from genotex.cli import main

    case = shared / "fixtures" / "regress" / "synthetic"
    argv = ["regress", "--trait", "Prostate_Cancer"]
    argv += ["--preprocessed", str(case / "output/preprocess")]
    argv += ["--task-info", str(case / "metadata/task_info.json"), "--out", str(out), *extra]
    return CliRunner().invoke(main, argv)


def test_a_long_run_says_where_it_is_and_q_v_say_less_or_more(shared, tmp_path):
    import re

    result = _regress(shared, tmp_path / "a")
    assert result.exit_code == 0, result.output
    lines = [ln for ln in result.stderr.splitlines() if ln.startswith("[")]
    assert len(lines) == 4  # Prostate_Cancer's four problems
    pattern = (
        r"\[(\d)/4\] Prostate_Cancer\|\w+: (ok|skipped).* "
        r"\(\d+\.\d s; elapsed \d:\d\d:\d\d, ETA \d:\d\d:\d\d\)"
    )
    matches = [re.fullmatch(pattern, ln) for ln in lines]
    assert all(matches), lines
    assert [m.group(1) for m in matches] == ["1", "2", "3", "4"]
    assert lines[-1].endswith("ETA 0:00:00)")
    assert result.stderr.strip().splitlines()[-1].startswith("4 problems:")

    quiet = _regress(shared, tmp_path / "b", "-q")
    assert quiet.exit_code == 0 and quiet.stderr.splitlines() == [
        f"4 problems: 2 answered, 0 kept from an earlier run, 2 skipped, 0 failed; "
        f"results in {tmp_path / 'b'}"
    ]
    loud = _regress(shared, tmp_path / "c", "-v", "--force")
    assert loud.exit_code == 0 and "[4/4]" in loud.stderr
    assert len(loud.stderr) > len(result.stderr)  # the library's debug log too
    both = _regress(shared, tmp_path / "d", "-q", "-v")
    assert both.exit_code == 2 and "-q and -v contradict each other" in both.stderr


def test_eval_q_prints_the_scores_and_nothing_else(eval_fixtures, tmp_path):
    from genotex.cli import main
    from tests.conftest import eval_args

    case = eval_fixtures / "case1"
    normal = CliRunner().invoke(main, eval_args(case, "--json", str(tmp_path / "r.json")))
    quiet = CliRunner().invoke(main, eval_args(case, "--json", str(tmp_path / "q.json"), "-q"))
    assert normal.exit_code == quiet.exit_code == 0
    assert "evaluated in" in normal.stderr and "JSON report" in normal.stderr
    assert quiet.stderr == "" and quiet.stdout == normal.stdout
    assert (tmp_path / "q.json").exists()


def test_eval_says_each_stage_once_in_a_log(tmp_path):
    """#36: in a log (stderr not a terminal) eval said nothing for minutes; #74: then 28
    `[k/N] ... ETA` lines; now one line a stage when it is done, and none with --no-progress
    or -q."""
    import subprocess
    import sys

    from genotex.workflows import SynthSpec, write_example

    spec = SynthSpec(n_traits=4, n_cohorts=12, samples=(10, 16), n_genes=60, n_related=8)
    example = write_example(tmp_path / "tree", spec, seed=21)  # 22 tables: a long stage
    args = ["eval", "-p", str(example.pred_output), "-r", str(example.ref_output), "--no-cache"]
    outputs = {}
    for extra in ([], ["--no-progress"], ["-q"]):
        done = subprocess.run(
            [sys.executable, "-m", "genotex", *args, *extra], capture_output=True, text=True
        )
        assert done.returncode == 0, done.stderr
        outputs[" ".join(extra)] = done.stderr
    tables = list(example.ref_output.rglob("preprocess/**/*.csv"))
    assert not [line for line in outputs[""].splitlines() if line.startswith("[")]
    stage = [line for line in outputs[""].splitlines() if "preprocessed tables" in line]
    assert len(stage) == 1, outputs[""]
    assert stage[0].startswith(f"preprocessed tables: {len(tables)} of {len(tables)} done in ")
    assert "preprocessed tables" not in outputs["--no-progress"] + outputs["-q"]


def test_a_missing_optional_package_is_an_install_hint(monkeypatch):
    """0.8.0: "unexpected ModuleNotFoundError" with no hint (issue #52, item 17)."""
    import builtins

    from click.testing import CliRunner

    from genotex.cli import main

    real = builtins.__import__

    def without_inspect(name, *args, **kwargs):
        if name.startswith("inspect_ai") or name.endswith("._export") or name == "harness":
            raise ModuleNotFoundError(f"No module named {'inspect_ai'!r}", name="inspect_ai")
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", without_inspect)
    done = CliRunner().invoke(main, ["harness", "export", "x.eval", "--reference", ".",
                                     "--out", "o"])  # fmt: skip
    assert done.exit_code != 0 and "Traceback" not in done.output
    assert (
        "install genotex's [harness] extra (pip install -e '.[harness]' in its clone)"
        in done.output
    ), done.output


def test_a_replay_past_its_caps_names_the_flag_on_the_command_line(monkeypatch, tmp_path):
    """The library's sentence names its argument (`allow_log_limits=True`); the command's
    names the flag a command line has."""
    import genotex.harness
    from genotex.harness import ReplayLimitsError

    def refused(log, **_):
        raise ReplayLimitsError(
            "asks for more than a replay takes from a log without your word: cohort_seconds "
            "86400 (cap 3,600); allow_log_limits=True runs it so",
            path=log,
        )

    monkeypatch.setattr(genotex.harness, "replay_run", refused)
    log = tmp_path / "run.eval"
    log.write_bytes(b"")
    done = CliRunner().invoke(main, ["harness", "replay", str(log), "--root", str(tmp_path)])
    assert done.exit_code == 1 and "Traceback" not in done.output
    assert "cohort_seconds 86400 (cap 3,600); pass --allow-log-limits to run it so" in done.output
    assert "allow_log_limits=True" not in done.output

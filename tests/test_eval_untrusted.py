"""A submission is untrusted (evaluation.md § 4): bad files are scored, listed, never fatal."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from genotex import evaluate
from genotex.cli import main
from genotex.evaluation import EvalOptions
from genotex.workflows import SynthSpec, write_example

SPEC = SynthSpec(
    n_traits=3,
    n_cohorts=6,
    samples=(12, 20),
    n_genes=60,
    n_related=10,
    unusable_share=0.0,
    missing_share=0.0,
    malformed_results=0,
)


@pytest.fixture(scope="module")
def clean(tmp_path_factory):
    return write_example(tmp_path_factory.mktemp("clean"), SPEC, seed=3)


@pytest.fixture()
def example(clean, tmp_path):
    shutil.copytree(clean.root, tmp_path / "ex")
    root = tmp_path / "ex"
    return (
        root / "pred" / "output",
        root / "ref" / "output",
        root / "ref" / "metadata" / "task_info.json",
    )


def _report(pred, ref, task_info, **options):
    return evaluate(pred, ref, task_info, options=EvalOptions(**options))


def _problem(report, key):
    return next(s for s in report.analysis if s.problem.key == key)


def _file(report, subtask, key):
    return next(s for s in report.preprocessing[subtask] if s.file == key)


def _reasons(report, fragment):
    return [f.reason for f in report.findings if fragment in f.file]


def _first_result(pred: Path) -> Path:
    return sorted((pred / "regress").rglob("significant_genes_condition_None.json"))[0]


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        ("{not json", "not valid JSON"),
        ("[1, 2]", "not a JSON object"),
        ('{"significant_genes": {}}', "no significant_genes.Variable"),
        ('{"significant_genes": {"Variable": "TP53, EGFR"}}', "not a list of gene symbols"),
        ('{"significant_genes": {"Variable": [1, 2]}}', "not a list of gene symbols"),
        ('{"significant_genes": {"Variable": ["TP53", null]}}', "not a list of gene symbols"),
    ],
)
def test_a_malformed_result_fails_its_problem_only(example, content, reason):
    pred, ref, task_info = example
    before = _report(pred, ref, task_info)
    target = _first_result(pred)
    key = f"{target.parent.name}|None"
    target.write_text(content)
    after = _report(pred, ref, task_info)
    broken = _problem(after, key)
    assert broken.success == 0 and broken.status == "malformed"
    assert all(getattr(broken, m) == 0 for m in ("precision", "recall", "f1", "auroc", "gsea_es"))
    assert any(reason in r for r in _reasons(after, target.relative_to(pred).as_posix()))
    others = [s for s in after.analysis if s.problem.key != key]
    assert others == [s for s in before.analysis if s.problem.key != key]
    assert after.selection == before.selection and after.preprocessing == before.preprocessing


def test_garbage_never_scores_better_than_nothing(example):
    pred, ref, task_info = example
    target = _first_result(pred)
    key = f"{target.parent.name}|None"
    target.write_text("garbage")
    malformed = _problem(_report(pred, ref, task_info), key)
    target.unlink()
    missing = _problem(_report(pred, ref, task_info), key)
    assert malformed.success == missing.success == 0
    assert malformed.f1 == missing.f1 == 0


def test_a_non_numeric_cv_number_is_zero_and_reported(example):
    pred, ref, task_info = example
    target = _first_result(pred)
    data = json.loads(target.read_text())
    data["cv_performance"]["prediction"]["accuracy"] = "high"
    del data["cv_performance"]["prediction"]["f1"]
    target.write_text(json.dumps(data))
    report = _report(pred, ref, task_info)
    score = _problem(report, f"{target.parent.name}|None")
    assert score.success == 100 and score.trait_pred_accuracy == 0 and score.trait_pred_f1 == 0
    reasons = _reasons(report, target.relative_to(pred).as_posix())
    assert (
        len(reasons) == 1 and "accuracy" in reasons[0]
    )  # a missing f1 is silent, as in the reference


def test_a_symlink_leading_outside_the_submission_is_unreadable(example, tmp_path):
    pred, ref, task_info = example
    target = _first_result(pred)
    reference_copy = ref / target.relative_to(pred)
    target.unlink()
    os.symlink(reference_copy.resolve(), target)  # copying the reference's answer by a link
    report = _report(pred, ref, task_info)
    score = _problem(report, f"{target.parent.name}|None")
    assert score.success == 0 and score.f1 == 0
    assert any("symbolic link" in r for r in _reasons(report, target.relative_to(pred).as_posix()))


def test_a_symlinked_folder_leading_outside_is_unreadable_too(example):
    pred, ref, task_info = example
    trait_dir = sorted((pred / "preprocess").iterdir())[0]
    shutil.rmtree(trait_dir)
    os.symlink((ref / "preprocess" / trait_dir.name).resolve(), trait_dir)
    report = _report(pred, ref, task_info)
    linked = [s for s in report.preprocessing["linked"] if s.trait == trait_dir.name]
    assert linked and all(
        s.status == "unreadable" and s.composite_similarity_correlation == 0 for s in linked
    )


def test_files_over_the_size_limit_are_unreadable(example):
    pred, ref, task_info = example
    report = _report(pred, ref, task_info, max_file_mb=0.001)  # ~1 KB: every table is over
    present = [s for s in report.preprocessing["gene"] if s.status != "missing"]
    assert present and all(s.status == "unreadable" for s in present)
    assert any("larger than the size limit" in f.reason for f in report.findings)


def _first_table(pred: Path, pattern: str) -> Path:
    return sorted((pred / "preprocess").rglob(pattern))[0]


@pytest.mark.parametrize(
    ("mutate", "reason"),
    [
        (lambda p: p.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00binary"), "cannot"),
        (lambda p: p.write_text(""), "empty"),
        (lambda p: p.write_text(_dup_rows(p)), "duplicated row"),
        (lambda p: p.write_text(_dup_columns(p)), "duplicated column"),
        (lambda p: p.write_text(_text_values(p)), "non-numeric"),
        (lambda p: p.write_text(_ragged(p)), "cannot be parsed"),
    ],
)
def test_a_bad_table_scores_zero_and_is_reported(example, mutate, reason):
    pred, ref, task_info = example
    target = _first_table(pred, "gene_data/*.csv")
    key = f"{target.parent.parent.name}/{target.name}"
    before = _report(pred, ref, task_info)
    mutate(target)
    after = _report(pred, ref, task_info)
    score = _file(after, "gene", key)
    assert score.status == "unreadable"
    assert (
        score.attributes_jaccard,
        score.samples_jaccard,
        score.composite_similarity_correlation,
    ) == (0, 0, 0)
    assert any(reason in r for r in _reasons(after, target.relative_to(pred).as_posix())), (
        after.findings
    )
    untouched = [s for s in after.preprocessing["gene"] if s.file != key]
    assert untouched == [s for s in before.preprocessing["gene"] if s.file != key]


def _dup_rows(path: Path) -> str:
    lines = path.read_text().splitlines()
    return "\n".join([lines[0], lines[1], lines[1], *lines[2:]]) + "\n"


def _dup_columns(path: Path) -> str:
    lines = path.read_text().splitlines()
    header = lines[0].split(",")
    header[2] = header[1]
    return "\n".join([",".join(header), *lines[1:]]) + "\n"


def _text_values(path: Path) -> str:
    lines = path.read_text().splitlines()
    cells = lines[1].split(",")
    cells[1] = "high"
    return "\n".join([lines[0], ",".join(cells), *lines[2:]]) + "\n"


def _ragged(path: Path) -> str:
    lines = path.read_text().splitlines()
    return "\n".join([lines[0], lines[1] + ",1,2,3", *lines[2:]]) + "\n"


def test_non_numeric_values_outside_the_common_block_do_not_matter(example):
    pred, ref, task_info = example
    target = _first_table(pred, "gene_data/*.csv")
    key = f"{target.parent.parent.name}/{target.name}"
    before = _file(_report(pred, ref, task_info), "gene", key)
    lines = target.read_text().splitlines()
    width = len(lines[0].split(","))
    target.write_text("\n".join([*lines, "NOT_A_GENE," + ",".join(["n/a?"] * (width - 1))]) + "\n")
    after = _file(_report(pred, ref, task_info), "gene", key)
    assert after.status == "ok"
    assert after.feature_correlation == pytest.approx(before.feature_correlation, abs=1e-12)
    assert after.attributes_jaccard < before.attributes_jaccard  # one more, foreign feature


def test_bad_cohort_info_is_read_as_empty_and_bad_records_are_ignored(example):
    pred, ref, task_info = example
    traits = sorted(p.name for p in (pred / "preprocess").iterdir())
    (pred / "preprocess" / traits[0] / "cohort_info.json").write_text("{oops")
    info_path = pred / "preprocess" / traits[1] / "cohort_info.json"
    records = json.loads(info_path.read_text())
    first = next(iter(records))
    records[first]["is_available"] = "false"  # a string: not JSON true, so false
    records[first]["sample_size"] = "big"
    records["GSE_BROKEN"] = 42
    info_path.write_text(json.dumps(records))
    report = _report(pred, ref, task_info)
    reasons = [f"{f.file}: {f.reason}" for f in report.findings]
    assert any("not valid JSON" in r and traits[0] in r for r in reasons)
    assert any("GSE_BROKEN" in r and "ignored" in r for r in reasons)
    assert any("is_available" in r and "read as false" in r for r in reasons)
    assert any("sample_size" in r and "read as 0" in r for r in reasons)
    df = {s.trait: s for s in report.filtering}
    assert df[traits[0]].tp == 0 and df[traits[0]].fp == 0  # read as {}


def test_the_cli_lists_problems_and_exits_zero_on_a_broken_submission(example, tmp_path):
    pred, ref, task_info = example
    _first_result(pred).write_text("{")
    _first_table(pred, "*.csv").write_text("")
    result = CliRunner().invoke(
        main,
        [
            "eval",
            "-p",
            str(pred),
            "-r",
            str(ref),
            "--no-progress",
            "--json",
            str(tmp_path / "r.json"),
        ],
    )
    assert result.exit_code == 0, result.output
    assert "Problems found" in result.output and "Traceback" not in result.output
    found = json.loads((tmp_path / "r.json").read_text())["problems_found"]
    assert {"file", "reason"} == set(found[0]) and len(found) >= 2


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["-r", "{root}/nowhere"], "reference folder does not exist"),
        (["-r", "{root}/ref"], "neither preprocess/ nor regress/"),
        (["--task-info", "{root}/missing.json"], "missing.json: the file does not exist"),
        (["-p", "{root}/no_prediction"], "prediction folder does not exist"),
        (["-p", "{pred_root}"], "neither preprocess/ nor regress/ (is it an output/ folder? it"),
    ],
)
def test_an_unusable_reference_or_task_info_is_one_sentence_and_exit_1(example, args, message):
    pred, ref, task_info = example
    root = ref.parent.parent
    options = {"-p": str(pred), "-r": str(ref)}
    options.update({args[0]: args[1].format(root=root, pred_root=pred.parent)})
    argv = ["eval", "--no-progress", *(x for pair in options.items() for x in pair)]
    result = CliRunner().invoke(main, argv)
    assert result.exit_code == 1
    assert message in result.output and "Traceback" not in result.output
    assert len(result.output.strip().splitlines()) == 1


def test_corrupt_task_info_is_an_error(example):
    pred, ref, task_info = example
    task_info.write_text("[]")
    result = CliRunner().invoke(main, ["eval", "-p", str(pred), "-r", str(ref), "--no-progress"])
    assert result.exit_code == 1 and "task_info" in result.output


def test_debug_shows_the_traceback(example):
    pred, ref, task_info = example
    result = CliRunner().invoke(main, ["eval", "-p", str(pred), "-r", str(ref / "x"), "--debug"])
    assert result.exit_code != 0 and result.exception is not None

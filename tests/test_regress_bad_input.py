"""Bad regression input: one clear reason per problem, the others go on, no output file."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

from genotex.cli import main


def _cohort(folder, trait, cohort, table: str, **record):
    (folder / trait).mkdir(parents=True, exist_ok=True)
    (folder / trait / f"{cohort}.csv").write_text(table)
    info_path = folder / trait / "cohort_info.json"
    info = json.loads(info_path.read_text()) if info_path.exists() else {}
    info[cohort] = {
        "is_usable": True,
        "is_available": True,
        "has_age": record.get("has_age", False),
        "has_gender": False,
        "sample_size": record.get("n", 30),
    }
    info_path.write_text(json.dumps(info))


def _table(trait, n=30, genes=8, seed=0, extra=None):
    rng = np.random.default_rng(seed)
    columns = [trait, *(extra or {}), *(f"G{i}" for i in range(genes))]
    lines = ["," + ",".join(columns)]
    for i in range(n):
        values = (
            [float(i % 2)] + [v[i] for v in (extra or {}).values()] + list(rng.normal(size=genes))
        )
        lines.append(f"S{i}," + ",".join(str(v) for v in values))
    return "\n".join(lines) + "\n"


@pytest.fixture()
def tree(tmp_path):
    data = tmp_path / "preprocess"
    info = {"Good": {"related_genes": ["G1"], "conditions": []}}
    _cohort(data, "Good", "GSE1", _table("Good"))
    return tmp_path, data, info


def _run(tmp_path, data, info, *args):
    (tmp_path / "task_info.json").write_text(json.dumps(info))
    return CliRunner().invoke(
        main,
        [
            "regress",
            "--data",
            str(data),
            "--task-info",
            str(tmp_path / "task_info.json"),
            "--out",
            str(tmp_path / "out"),
            *args,
        ],
    )


@pytest.mark.parametrize(
    ("table", "reason"),
    [
        (lambda: _table("Bad").replace("S3,1.0,", "S3,abc,"), "non-numeric"),
        (lambda: _table("Bad").replace(",0.0,", ",,", 3), "missing"),
        (lambda: _table("Bad").replace(",1.0,", ",0.0,"), "constant"),
        (lambda: "", "empty"),
        (lambda: _table("Bad", n=4), "fewer samples"),
    ],
)
def test_a_bad_cohort_fails_its_problem_only(tree, table, reason):
    tmp_path, data, info = tree
    _cohort(data, "Bad", "GSE2", table())
    info["Bad"] = {"related_genes": ["G1"], "conditions": []}
    result = _run(tmp_path, data, info, "--all")
    assert result.exit_code == 1 and "Traceback" not in result.output
    status = json.loads((tmp_path / "out" / "status.json").read_text())
    assert status["Good|None"]["status"] == "ok"
    assert (
        status["Bad|None"]["status"].startswith("failed") and reason in status["Bad|None"]["status"]
    )
    assert not (tmp_path / "out" / "Bad").exists()
    assert (tmp_path / "out" / "Good" / "significant_genes_condition_None.json").exists()


def test_a_missing_cohort_file_fails_with_the_file_named(tree):
    tmp_path, data, info = tree
    (data / "Good" / "GSE1.csv").unlink()
    result = _run(tmp_path, data, info, "--all")
    status = json.loads((tmp_path / "out" / "status.json").read_text())
    assert (
        status["Good|None"]["status"].startswith("failed")
        and "GSE1.csv" in status["Good|None"]["status"]
    )
    assert result.exit_code == 1


def test_a_condition_absent_from_the_table(tree):
    tmp_path, data, info = tree
    info["Good"]["conditions"] = ["Age"]
    record = json.loads((data / "Good" / "cohort_info.json").read_text())
    record["GSE1"]["has_age"] = True  # claims Age, but the table has no Age column
    (data / "Good" / "cohort_info.json").write_text(json.dumps(record))
    _run(tmp_path, data, info, "--all")
    status = json.loads((tmp_path / "out" / "status.json").read_text())
    assert (
        status["Good|Age"]["status"].startswith("failed")
        and "'Age'" in status["Good|Age"]["status"]
    )


def test_no_usable_cohort_is_a_skip_not_a_failure(tree):
    tmp_path, data, info = tree
    info["Other"] = {"related_genes": [], "conditions": ["Good"]}
    result = _run(tmp_path, data, info, "--all")
    status = json.loads((tmp_path / "out" / "status.json").read_text())
    assert status["Other|None"]["status"].startswith("skipped")
    assert status["Other|Good"]["status"].startswith("skipped")
    assert result.exit_code == 0


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--trait", "Unknown"], "no trait 'Unknown'"),
        (["--trait", "../etc"], "escape"),
        (["--all", "--trait", "Good"], "either --all or --trait"),  # a usage error: exit 2
        (["--trait", "Good", "--condition", "../x"], "escape"),
    ],
)
def test_bad_requests_are_one_sentence(tree, args, message):
    tmp_path, data, info = tree
    result = _run(tmp_path, data, info, *args)
    assert result.exit_code != 0 and message in result.output and "Traceback" not in result.output


def test_answer_problem_names_a_misspelt_trait_and_takes_a_tuple(tree):
    """#36 item 11: a misspelt trait was "no readable cohort_info.json", a tuple AttributeError."""
    from genotex.core import TaskInfo, TaskInfoError
    from genotex.regression import answer_problem

    tmp_path, data, info = tree
    task_info = TaskInfo.from_dict(info)
    with pytest.raises(TaskInfoError, match="task_info has no trait 'Goood'"):
        answer_problem(data, "Goood|None", task_info, mode="standard")
    by_key = answer_problem(data, "Good|None", task_info, mode="standard")
    by_tuple = answer_problem(data, ("Good", None), task_info, mode="standard")
    assert by_tuple.genes == by_key.genes and by_tuple.problem == by_key.problem
    with pytest.raises(TypeError, match="a problem is a ProblemId"):
        answer_problem(data, ["Good", None], task_info, mode="standard")


def test_a_demographic_condition_given_as_a_key_is_the_clis_answer(tmp_path):
    """#36 item 11: 'Liver_Cancer|Age' was read as a trait named 'Age' ("no readable
    cohort_info.json for Age"); the key, the tuple and the CLI must give one answer."""
    import json

    from genotex.regression import ProblemSkipped, answer_problem
    from genotex.workflows import SynthSpec, write_example

    spec = SynthSpec(n_traits=2, n_cohorts=3, samples=(30, 40), n_genes=80, n_related=8)
    unanswerable = write_example(tmp_path / "none", spec, seed=3)  # no cohort records Age
    with pytest.raises(ProblemSkipped, match="no usable cohort of Asthma records Age"):
        answer_problem(unanswerable.ref_output / "preprocess", "Asthma|Age", unanswerable.task_info)
    spec = SynthSpec(n_traits=3, n_cohorts=4, samples=(30, 40), n_genes=80, n_related=8)
    example = write_example(tmp_path / "tree", spec, seed=3)
    data = example.ref_output / "preprocess"
    by_key = answer_problem(data, "Asthma|Age", example.task_info, mode="standard")
    by_tuple = answer_problem(data, ("Asthma", "Age"), example.task_info, mode="standard")
    result = CliRunner().invoke(
        main,
        ["regress", "--data", str(data), "--task-info", str(example.task_info),
         "--out", str(tmp_path / "out"), "--trait", "Asthma", "--condition", "Age",
         "--mode", "standard"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    written = json.loads(
        (tmp_path / "out" / "Asthma" / "significant_genes_condition_Age.json").read_text()
    )
    assert by_key.problem.condition == "Age" and by_key.genes
    assert by_key.genes == by_tuple.genes
    assert [gene for gene, _ in by_key.genes] == written["significant_genes"]["Variable"]

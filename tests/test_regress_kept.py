"""A result kept from an earlier run is one made with the same options and inputs (#62 item 1):
a different α rule, model or input is computed again; the scheduler, the cache and the number
of jobs never cause a redo.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from genotex.workflows import write_raw_benchmark


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> Path:
    bench = write_raw_benchmark(tmp_path_factory.mktemp("kept"))
    return bench.root


def _regress(root: Path, out: Path, *options: str) -> str:
    command = [sys.executable, "-m", "genotex", "regress", "--data",
               str(root / "reference/output/preprocess"), "--task-info",
               str(root / "metadata/task_info.json"), "--trait", "Asthma", "--out", str(out),
               "--mode", "standard", "--jobs", "1", *options]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stderr + done.stdout


def _rules(out: Path) -> set[str]:
    return {json.loads(p.read_text())["method"]["select_by"]
            for p in (out / "Asthma").glob("significant_genes_*.json")}  # fmt: skip


def test_another_alpha_rule_is_computed_again_and_the_first_one_again_after(data, tmp_path):
    out = tmp_path / "regress"
    _regress(data, out, "--select-by", "prediction")
    assert _rules(out) == {"prediction"}
    said = _regress(data, out, "--select-by", "precision")
    assert _rules(out) == {"precision"} and "0 kept from an earlier run" in said
    _regress(data, out, "--select-by", "prediction")
    assert _rules(out) == {"prediction"}


def test_options_that_cannot_change_an_answer_keep_it(data, tmp_path):
    out = tmp_path / "regress"
    _regress(data, out, "--select-by", "prediction")
    said = _regress(data, out, "--select-by", "prediction", "--no-cache")
    assert "4 kept from an earlier run" in said


def test_a_changed_input_is_computed_again(data, tmp_path):
    import shutil

    copy = tmp_path / "root"
    shutil.copytree(data / "reference/output/preprocess", copy / "reference/output/preprocess")
    shutil.copytree(data / "metadata", copy / "metadata")
    out = tmp_path / "regress"
    _regress(copy, out)
    table = copy / "reference/output/preprocess/Asthma/GSE100001.csv"
    lines = table.read_text().splitlines()
    table.write_text("\n".join(lines[:-1]) + "\n")  # one sample fewer
    said = _regress(copy, out)
    assert "4 kept from an earlier run" not in said
    recorded = json.loads((out / "Asthma/significant_genes_condition_None.json").read_text())
    assert recorded["inputs"]["Asthma/GSE100001.csv"] != "" and len(recorded["inputs"]) >= 3


@pytest.mark.parametrize(
    ("option", "value", "said"),
    [
        ("--condition", "age", "task_info has no condition 'age'; did you mean Age?"),
        ("--condition", "Obesty", "did you mean Obesity?"),
        ("--trait", "asthma", "task_info has no trait 'asthma'; did you mean Asthma?"),
    ],
)
def test_a_near_miss_is_refused_before_any_work_with_the_closest_name(
    data, tmp_path, option, value, said
):
    """#62 item 2: `--condition age` ran for 19 s and wrote an `Asthma|age` status entry."""
    out = tmp_path / "regress"
    trait = ["--trait", "Asthma"] if option == "--condition" else []
    command = [sys.executable, "-m", "genotex", "regress", "--data",
               str(data / "reference/output/preprocess"), "--task-info",
               str(data / "metadata/task_info.json"), *trait, option, value,
               "--out", str(out)]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True)
    assert done.returncode != 0 and said in done.stderr and "Traceback" not in done.stderr
    assert not out.exists()  # no result, no status.json


def test_a_condition_unlike_every_known_one_is_still_asked():
    from genotex.core import ProblemId, TaskInfo

    info = TaskInfo.from_dict({"Asthma": {"related_genes": ["IL4"], "conditions": ["Age"]}})
    assert info.select(["Asthma"], "Smoking") == [ProblemId("Asthma", "Smoking")]
    assert info.select(["Asthma"], "none") == [ProblemId("Asthma", None)]

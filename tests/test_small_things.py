"""The smaller items of #62 (item 8), each checked: the install hint for the way genotex was
installed, the baseline's printed eval command, a prediction scored against itself.
"""

from __future__ import annotations

import json
import subprocess
import sys

from genotex.core import _errors


class _Distribution:
    def __init__(self, text: str | None) -> None:
        self.text = text

    def read_text(self, name: str) -> str | None:
        assert name == "direct_url.json"
        return self.text


def test_the_extra_hint_is_the_one_for_how_genotex_was_installed(monkeypatch):
    from importlib import metadata

    wheel = {"url": "file:///home/me/dist/genotex-0.12.0-py3-none-any.whl", "archive_info": {}}
    clone = {"url": "file:///home/me/genotex", "dir_info": {"editable": True}}
    for record, said in (
        (wheel, "pip install '/home/me/dist/genotex-0.12.0-py3-none-any.whl[hub]'"),
        (clone, "pip install -e '.[hub]' in its clone"),
        (None, "pip install -e '.[hub]' in its clone"),
    ):
        text = None if record is None else json.dumps(record)
        monkeypatch.setattr(metadata, "distribution", lambda _n, t=text: _Distribution(t))
        assert said in _errors.extra_hint("hub")


def test_eval_refuses_to_score_a_prediction_against_itself(tmp_path):
    """In a demo root, `eval -p output` without `-r` scored the output against itself: a page
    of 100s, exit 0 (#62 item 8).
    """
    root = tmp_path / "demo"
    done = subprocess.run([sys.executable, "-m", "genotex", "demo", "--out", str(root)],
                          capture_output=True, text=True)  # fmt: skip
    assert done.returncode == 0, done.stderr
    scored = subprocess.run([sys.executable, "-m", "genotex", "eval", "-p", "output"],
                            cwd=root, capture_output=True, text=True)  # fmt: skip
    assert scored.returncode == 2 and "Traceback" not in scored.stderr
    assert "the prediction is the reference" in scored.stderr
    assert "reference/output" in scored.stderr  # where the demo's answers are


def test_the_baseline_prints_the_reference_it_knows(tmp_path):
    root = tmp_path / "bench"
    subprocess.run([sys.executable, "-m", "genotex", "demo", "--inputs-only", "--out", str(root)],
                   check=True, capture_output=True)  # fmt: skip
    done = subprocess.run([sys.executable, "-m", "genotex", "baseline", str(root)],
                          capture_output=True, text=True)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "REFERENCE_OUTPUT" not in done.stderr + done.stdout
    assert f"-r {root / 'reference' / 'output'}" in done.stderr + done.stdout


def test_a_report_with_no_preprocessed_file_draws_without_a_warning(tmp_path):
    """#62 item 8: matplotlib's "No artists with labels" leaked from the CSC figure."""
    import shutil
    import warnings

    from genotex.evaluation import evaluate
    from genotex.evaluation._figures import csc_per_trait
    from genotex.workflows import write_raw_benchmark

    bench = write_raw_benchmark(tmp_path / "bench", recipes=False)
    pred = tmp_path / "pred"
    (pred / "preprocess").mkdir(parents=True)
    shutil.copytree(bench.reference_output / "regress", pred / "regress")
    report = evaluate(pred, bench.reference_output, bench.task_info)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        figure = csc_per_trait(report)
    assert figure.axes[0].get_legend() is None  # every file missing: nothing to name


def test_a_task_info_listing_a_gene_twice_is_said_and_kept_as_published(tmp_path):
    """Issue #69: the realistic demo listed GATA11 twice for Psoriasis. genotex's generators
    list each gene once; a downloaded task_info is kept as it is (the published CV's recall
    counts each listing), and regress says so in one line naming the file.
    """
    from click.testing import CliRunner

    from genotex.cli import main
    from genotex.core import TaskInfo

    path = tmp_path / "task_info.json"
    path.write_text(json.dumps({"Psoriasis": {"related_genes": ["GATA11", "IL17A", "GATA11"],
                                              "conditions": []}}))  # fmt: skip
    info = TaskInfo.read(path)
    assert info.genes_of("Psoriasis") == ("GATA11", "IL17A", "GATA11")  # kept as listed
    assert info.repeated_genes() == {"Psoriasis": ("GATA11",)}
    (tmp_path / "data").mkdir()
    done = CliRunner().invoke(main, ["regress", "--all", "--preprocessed", str(tmp_path / "data"),
                                     "--task-info", str(path), "--out", str(tmp_path / "out"),
                                     "--no-progress"])  # fmt: skip
    note = [line for line in done.output.splitlines() if line.startswith("note:")]
    assert len(note) == 1 and str(path) in note[0] and "Psoriasis: GATA11" in note[0], done.output

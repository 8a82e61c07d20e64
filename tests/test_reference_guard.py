"""Nothing a user runs writes into a reference (issue #52, item 1).

A downloaded benchmark keeps its reference answers in `BENCH/output` (the published
layout); 0.8.0's `genotex baseline BENCH` overwrote 22 of its 44 files and exited 0.
Every writing command is run here against that layout (with a marker, and without one)
and against the demo's, with its target in or over the reference: each refuses in one
sentence, exits non-zero, and leaves the reference byte-identical. A command added later
that writes without the rule fails `test_every_writing_command_is_covered`.
"""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from genotex.cli import main
from genotex.workflows import run_baseline, write_raw_benchmark

#: The commands that make references, exempt for their own: they write one.
EXEMPT = {"download geo", "download tcga", "download benchmark", "download gene-info", "demo"}
#: The options through which a command writes.
WRITING_OPTIONS = {"out", "json_path", "csv_dir", "report_dir", "figure_path", "writable"}


def _tree(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("guard") / "demo"
    write_raw_benchmark(root, recipes=False)
    run_baseline(root)  # the demo layout: ROOT/output is the baseline's own, beside reference/
    return root


def _published(demo: Path, folder: Path, *, marker: bool, inputs: bool = True) -> Path:
    """The Hub's layout: BENCH/output is the reference; a marker, or none."""
    bench = folder / ("marked" if marker else "unmarked")
    shutil.copytree(demo / "metadata", bench / "metadata")
    if inputs:
        shutil.copytree(demo / "input", bench / "input")
    shutil.copytree(demo / "reference" / "output", bench / "output")
    (bench / "code" / "Asthma").mkdir(parents=True)  # the experts' notebooks, as the Hub has
    if marker:
        (bench / "genotex-benchmark.json").write_text("{}")
    return bench


def _commands(bench: Path, run: Path) -> dict[str, list[list[str]]]:
    """Each writing command, aimed at the reference (`bench/output`) or over it (`bench`)."""
    ref, info = bench / "output", bench / "metadata" / "task_info.json"
    pred = run / "output"
    return {
        "baseline": [["baseline", str(bench)], ["baseline", str(bench), "--out", str(ref / "x")]],
        "preprocess": [
            [
                "preprocess",
                "--all-cohorts",
                "--input-root",
                str(bench / "input"),
                "--task-info",
                str(info),
                "--synonyms",
                str(bench / "metadata" / "gene_synonym.json"),
                "--out",
                str(ref / "preprocess"),
            ],
        ],  # fmt: skip
        "regress": [
            [
                "regress",
                "--all-problems",
                "--data",
                str(pred / "preprocess"),
                "--task-info",
                str(info),
                "--out",
                str(target),
            ]
            for target in (ref / "regress", bench)
        ],  # fmt: skip
        "eval": [
            ["eval", "-p", str(pred), "-r", str(ref), "--json", str(ref / "r.json")],
            ["eval", "-p", str(pred), "-r", str(ref), "--csv", str(ref / "tables")],
            ["eval", "-p", str(pred), "-r", str(ref), "--report", str(bench)],
        ],
        "diagnose": [
            ["diagnose", "-p", str(pred), "-r", str(ref), "--json", str(ref / "d.json")],
            ["diagnose", "-p", str(pred), "-r", str(ref), "--csv", str(ref / "regress")],
            ["diagnose", "-p", str(pred), "-r", str(ref), "--figure", str(ref / "f.png")],
        ],
        "report": [["report", str(run / "a.json"), "--out", str(ref / "page")]],
        "compare": [
            ["compare", str(run / "a.json"), str(run / "a.json"), "--json", str(ref / "c.json")]
        ],  # fmt: skip
        "recipe propose": [
            [
                "recipe",
                "propose",
                str(next((bench / "input" / "GEO").glob("*/*"), bench)),
                "--trait",
                "Asthma",
                "--out",
                str(ref / "r.toml"),
            ],
        ],  # fmt: skip
        "synonyms build": [
            [
                "synonyms",
                "build",
                "--gene-info",
                str(run / "gene_info.gz"),
                "--out",
                str(ref / "s.json"),
            ]
        ],  # fmt: skip
        "harness export": [["harness", "export", str(run / "none.eval"), "--out", str(ref)]],
        "mcp": [["mcp", "--root", str(bench), "--write", str(ref)]],
    }


def _covered() -> set[str]:
    return set(_commands(Path("/b"), Path("/r")))


def _writers() -> set[str]:
    found = set()

    def walk(command: click.Command, path: tuple[str, ...]) -> None:
        if isinstance(command, click.Group):
            for name, sub in command.commands.items():
                walk(sub, (*path, name))
        elif any(p.name in WRITING_OPTIONS for p in command.params):
            found.add(" ".join(path))

    walk(main, ())
    return found - EXEMPT


def test_every_writing_command_is_covered():
    """A writing command added without a case here (and so without the rule) fails."""
    assert _writers() == _covered(), _writers() ^ _covered()


@pytest.mark.parametrize("layout", ["marked", "unmarked", "marked-without-inputs"])
def test_no_writing_command_changes_a_downloaded_reference(demo, tmp_path, layout):
    bench = _published(
        demo, tmp_path, marker=layout.startswith("marked"), inputs=layout != "marked-without-inputs"
    )
    if layout == "marked-without-inputs":  # a `--parts reference,metadata` download
        (tmp_path / "input").mkdir()  # never looked for: only the marker says it
    run = tmp_path / "run"
    shutil.copytree(demo / "output", run / "output")
    runner = CliRunner()
    saved = runner.invoke(main, ["eval", "-p", str(run / "output"), "-r", str(demo / "reference"
                          / "output"), "--json", str(run / "a.json")])  # fmt: skip
    assert saved.exit_code == 0, saved.output
    before = _tree(bench / "output")
    for name, calls in _commands(bench, run).items():
        for args in calls:
            if layout == "marked-without-inputs" and any("input" in a for a in args):
                continue
            done = runner.invoke(main, args)
            said = done.output.strip()
            assert done.exit_code != 0, (name, args, said)
            assert "Traceback" not in said, (name, said)
            assert _tree(bench / "output") == before, (name, args)
    assert _tree(bench / "output") == before


def test_baseline_writes_beside_a_downloaded_reference_with_out(demo, tmp_path):
    bench = _published(demo, tmp_path, marker=True)
    before = _tree(bench / "output")
    done = CliRunner().invoke(main, ["baseline", str(bench)])
    assert done.exit_code == 2 and "--out FOLDER" in done.output
    assert "holds the benchmark's reference answers" in done.output
    assert _tree(bench / "output") == before and not (bench / "recipes").exists()
    done = CliRunner().invoke(main, ["baseline", str(bench), "--out", str(tmp_path / "mine")])
    assert done.exit_code == 0, done.output
    assert (tmp_path / "mine" / "output" / "regress").is_dir()
    assert f"{tmp_path / 'mine'}/output" in done.output  # it says where
    assert _tree(bench / "output") == before


def test_the_demo_layouts_baseline_still_replaces_its_own_output(demo):
    """In the demo layout the reference is reference/output: ROOT/output is the baseline's."""
    before = _tree(demo / "reference" / "output")
    done = CliRunner().invoke(main, ["baseline", str(demo)])
    assert done.exit_code == 0, done.output
    assert _tree(demo / "reference" / "output") == before


def test_an_agents_own_output_is_never_taken_for_a_reference(tmp_path):
    """A harness sample's folder (input/, metadata/, output/ with answers, no code/) looks like
    a benchmark root; its own answers stay writable (a second regress replaces them).
    """
    from genotex.core import known_references

    folder = tmp_path / "sample"
    for part in ("input/GEO", "metadata", "output/regress/Asthma"):
        (folder / part).mkdir(parents=True)
    (folder / "output/regress/Asthma/significant_genes_condition_None.json").write_text("{}")
    assert known_references(folder / "output" / "regress") == []

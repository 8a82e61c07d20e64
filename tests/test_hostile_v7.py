"""Hostile input v7 (issue #72): each case the review found in 0.14, with its refusal sentence,
the right result, or a time bound. The write gate's cases are in test_write_gate.py.
"""

from __future__ import annotations

import json
import os
import shutil
import threading
import time
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest
from click.testing import CliRunner

from genotex.cli import main
from genotex.evaluation import validate_submission
from genotex.workflows import write_raw_benchmark
from tests.conftest import answer_bytes, local_server


@pytest.fixture(scope="module")
def bench(tmp_path_factory):
    return write_raw_benchmark(tmp_path_factory.mktemp("v7") / "root", recipes=False)


# ---- the demo -----------------------------------------------------------------------------
def test_the_demo_regenerated_over_a_link_to_a_reference_answer_replaces_the_link(tmp_path):
    """0.14 wrote with write_bytes: a demo input linked to a reference answer left gzip bytes
    in that answer. Now each file is replaced: the link goes, the answer keeps its bytes."""
    made = write_raw_benchmark(tmp_path / "demo")
    answer = next((made.reference_output / "regress" / "Asthma").glob("*.json"))
    outside = tmp_path / "outside.json"
    shutil.copyfile(answer, outside)
    kept = outside.read_bytes()
    series = next((made.root / "input" / "GEO" / "Asthma").rglob("*_series_matrix.txt.gz"))
    series.unlink()
    series.symlink_to(outside)  # a demo input that is a link to another file
    hard = next((made.root / "input" / "GEO" / "Psoriasis").rglob("*_family.soft.gz"))
    hard.unlink()
    os.link(outside, hard)  # and one that is a hard link of it
    write_raw_benchmark(tmp_path / "demo")  # the same demo, made again in place
    assert outside.read_bytes() == kept
    assert not series.is_symlink() and series.read_bytes()[:2] == b"\x1f\x8b"


def test_a_demo_of_another_kind_is_removed_first_and_said(tmp_path):
    """0.14 kept the plain demo's cohorts among the realistic demo's own."""
    folder = tmp_path / "demo"
    write_raw_benchmark(folder)
    from genotex.workflows import write_realistic_benchmark

    made = write_realistic_benchmark(folder)
    assert made.replaced is not None and "plain demo of seed 7" in made.replaced
    cohorts = sorted(p.name for p in (folder / "input" / "GEO").rglob("GSE*") if p.is_dir())
    assert cohorts == [f"GSE20000{i}" for i in range(1, 7)]  # the realistic demo's alone
    assert not (folder / "recipes").exists()  # the plain demo's hand-written recipes, gone
    again = write_realistic_benchmark(folder)
    assert again.replaced is None  # the same demo again: in place


def test_a_seed_in_other_digits_is_refused():
    done = CliRunner().invoke(main, ["demo", "--eval-only", "--seed", "\u0663"])
    assert done.exit_code == 2 and "not a whole number written in ASCII digits" in done.output


# ---- readers bounded ------------------------------------------------------------------------
@pytest.mark.parametrize("kind", ["fifo", "device"])
def test_records_that_are_no_regular_file_are_refused_at_once(tmp_path, kind):
    """0.14's `recipe propose --records` read a FIFO or /dev/zero forever."""
    path = Path("/dev/zero") if kind == "device" else tmp_path / "records.jsonl"
    if kind == "fifo":
        os.mkfifo(path)
    started = time.perf_counter()
    done = CliRunner().invoke(main, ["recipe", "propose", "--records", str(path), "--out",
                                     str(tmp_path / "out.jsonl")])  # fmt: skip
    assert done.exit_code == 1 and "it is not a regular file" in done.output, done.output
    assert time.perf_counter() - started < 10 and not (tmp_path / "out.jsonl").exists()


def test_a_record_line_holding_a_line_separator_stays_one_line(tmp_path):
    """0.14's `inspect --record` kept U+2028 raw: `str.splitlines` split the line in two and
    `recipe propose --records` refused it."""
    from genotex.core import json_line

    values = ["disease state: asthma", "disease state: control"]
    record = {"trait": "Asthma", "cohort": "GSE1", "background": "a\u2028b\u2029c\x85d",
              "characteristics": {"0": values}}  # fmt: skip
    line = json_line(record)
    assert len(line.splitlines()) == 1 and json.loads(line) == record
    path = tmp_path / "records.jsonl"
    path.write_text(line + "\n", encoding="utf-8")
    done = CliRunner().invoke(main, ["recipe", "propose", "--records", str(path), "--out",
                                     str(tmp_path / "out.jsonl")])  # fmt: skip
    assert done.exit_code == 0, done.output
    answers = (tmp_path / "out.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(answers) == 1 and json.loads(answers[0]).get("error") is None


# ---- validate --------------------------------------------------------------------------------
def _task_info(path: Path, traits: dict[str, list[str]]) -> Path:
    path.write_text(json.dumps({t: {"related_genes": ["IL13"], "conditions": c}
                                for t, c in traits.items()}))  # fmt: skip
    return path


def test_validate_runs_in_time_linear_in_files_and_problems(tmp_path):
    """0.14 cost files x problems, a stat per expected answer for every unexpected file: 5,000
    near misses on 1,500 problems ran past 200 s."""
    traits = {f"Trait_{i}": [f"Trait_{(i + k) % 300}" for k in range(1, 5)] for i in range(300)}
    info = _task_info(tmp_path / "task_info.json", traits)
    pred = tmp_path / "output" / "regress"
    for i in range(5000):  # near misses: each trait's condition file with one letter wrong
        trait = f"Trait_{i % 300}"
        (pred / trait).mkdir(parents=True, exist_ok=True)
        (pred / trait / f"significant_genes_condition_Trait_{i % 997}x.json").write_text("{}")
    started = time.perf_counter()
    check = validate_submission(tmp_path / "output", info)
    seconds = time.perf_counter() - started
    assert seconds < 30, seconds  # 1,500 problems and 5,000 files: linear, a few seconds
    assert check.counts()["misnamed"] == 5000  # no file is one the task asks for
    expected = {f"{t}/significant_genes_condition_{c}.json" for t, cs in traits.items()
                for c in ["None", *cs]}  # fmt: skip
    missing = {f.path.removeprefix("regress/") for f in check.findings if f.kind == "missing"}
    stood_for = {f.message.rsplit("regress/", 1)[1] for f in check.findings
                 if f.kind == "misnamed"}  # fmt: skip
    assert missing | stood_for == expected and not missing & stood_for  # each problem said once


def test_validate_names_the_problem_of_a_condition_holding_an_underscore(tmp_path):
    """0.14 split the file name at `_`: `...condition_Type_2_Diabetes.json: missing (the answer
    to Asthma|Diabetes)`."""
    info = _task_info(tmp_path / "task_info.json", {"Asthma": ["Type_2_Diabetes"],
                                                    "Type_2_Diabetes": []})  # fmt: skip
    (tmp_path / "output" / "regress").mkdir(parents=True)
    check = validate_submission(tmp_path / "output", info)
    said = [f.message for f in check.findings if "Type_2_Diabetes.json" in f.path]
    assert said == ["regress/Asthma/significant_genes_condition_Type_2_Diabetes.json: missing "
                    "(the answer to Asthma|Type_2_Diabetes)"]  # fmt: skip


def test_validate_says_a_missing_reference_folder_is_missing(bench, tmp_path):
    done = CliRunner().invoke(main, ["validate", str(bench.reference_output), "-r",
                                     str(tmp_path / "nowhere")])  # fmt: skip
    assert done.exit_code == 1 and "the reference folder does not exist" in done.output
    assert "extra" not in done.output


def test_validate_names_a_fifo_in_place_of_a_table(bench, tmp_path):
    pred = tmp_path / "output"
    shutil.copytree(bench.reference_output, pred)
    table = next((pred / "preprocess" / "Asthma").glob("GSE*.csv"))
    table.unlink()
    os.mkfifo(table)
    started = time.perf_counter()
    check = validate_submission(pred, bench.task_info, bench.reference_output)
    assert time.perf_counter() - started < 10
    said = [f for f in check.findings if f.path.endswith(table.name)]
    assert said and said[0].kind == "malformed" and "not a regular file" in said[0].message


def test_names_reach_the_terminal_escaped(tmp_path):
    """ESC, BEL, the C1 CSI and U+202E in validate's names, U+009B and U+2028 in tasks'."""
    info = _task_info(tmp_path / "task_info.json", {"A\u009bB\u2028C": []})
    listed = CliRunner().invoke(main, ["tasks", "--task-info", str(info), "--all"])
    assert listed.exit_code == 0, listed.output
    assert "A\\x9bB\\u2028C" in listed.output and "\u009b" not in listed.output
    pred = tmp_path / "output" / "regress" / "X\x1b[31m\x07\u202e"
    pred.mkdir(parents=True)
    (pred / "significant_genes_condition_None.json").write_text("{}")
    done = CliRunner().invoke(main, ["validate", str(tmp_path / "output"), "--task-info",
                                     str(info)])  # fmt: skip
    assert "X\\x1b[31m\\x07\\u202e" in done.output
    assert not any(c in done.output for c in "\x1b\x07\u202e\u2028\u009b")


def test_tasks_lists_every_problem_with_all_or_json(bench):
    listed = CliRunner().invoke(main, ["tasks", str(bench.root), "--json"])
    found = json.loads(listed.output)
    assert len(found["problems"]) == 8 and set(found["traits"]) == {"Asthma", "Obesity",
                                                                    "Psoriasis"}  # fmt: skip
    whole = CliRunner().invoke(main, ["tasks", str(bench.root), "--all"])
    assert all(p in whole.output for p in found["problems"]) and "..." not in whole.output


# ---- downloads ------------------------------------------------------------------------------
def _serving(answer):
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 - http.server's name
            answer(self)

        def log_message(self, *args):
            pass

    return Handler


def test_a_200_html_page_is_not_kept_as_a_series(tmp_path):
    """0.14 saved a 200 OK HTML page as a `.txt.gz` series and exited 0."""
    from genotex.preprocessing._download import fetch
    from genotex.preprocessing._geo_accessions import accession_downloads

    page = b"<!DOCTYPE html><html><body>Please sign in</body></html>"
    with local_server(_serving(lambda r: answer_bytes(r, page))) as url:
        matrix, soft = accession_downloads(tmp_path / "GEO", series=["GSE1"], base_url=url)
        done = fetch(matrix)
    assert matrix.path.name == "GSE1_series_matrix.txt.gz"
    assert not done.ok and "an HTML page, not the file" in done.outcome.reason
    assert not matrix.path.exists() and not list(matrix.path.parent.glob("*.part"))


def test_a_stale_part_longer_than_the_file_starts_over(tmp_path):
    """0.14 failed the download ("it has 5,000 bytes where the Hub lists 178")."""
    from genotex.preprocessing._download import Download, fetch

    body = b"x" * 178
    target = tmp_path / "file.json"
    (tmp_path / "file.json.part").write_bytes(b"y" * 5000)
    with local_server(_serving(lambda r: answer_bytes(r, body))) as url:
        done = fetch(Download(f"{url}/file.json", target, None), max_bytes=178)
    assert done.ok, done.outcome.reason
    assert target.read_bytes() == body


def test_a_redirect_to_another_scheme_is_named_as_such(tmp_path):
    """0.14 refused it but said "redirected ... in a loop (302)"."""
    from genotex.preprocessing._download import Download, fetch

    def redirect(request):
        request.send_response(302)
        request.send_header("Location", "file:///etc/hostname")
        request.end_headers()

    with local_server(_serving(redirect)) as url:
        done = fetch(Download(f"{url}/x.gz", tmp_path / "x.gz", None))
    assert not done.ok and "another scheme than http or https" in done.outcome.reason
    assert "(file:)" in done.outcome.reason and not (tmp_path / "x.gz").exists()


def test_download_geo_is_refused_before_any_folder_is_made_in_a_reference(tmp_path):
    """0.14 made folders inside the reference answers before the per-file gate."""
    made = write_raw_benchmark(tmp_path / "demo")
    before = sorted(p.relative_to(made.reference_output) for p in made.reference_output.rglob("*"))
    target = made.reference_output / "input" / "GEO"
    done = CliRunner().invoke(main, ["download", "geo", "--out", str(target), "--only", "Asthma",
                                     "--base-url", "http://127.0.0.1:9/none"])  # fmt: skip
    assert done.exit_code != 0 and "Traceback" not in done.output
    after = sorted(p.relative_to(made.reference_output) for p in made.reference_output.rglob("*"))
    assert after == before


def test_a_redirect_loop_is_still_said_as_one(tmp_path):
    from genotex.preprocessing._download import Download, fetch

    def loop(request):
        request.send_response(302)
        request.send_header("Location", request.path)
        request.end_headers()

    with local_server(_serving(loop)) as url:
        done = fetch(Download(f"{url}/y", tmp_path / "y", None), retries=1)
    assert not done.ok and "another scheme" not in done.outcome.reason


def test_nothing_here_leaves_a_thread_running():
    assert threading.active_count() < 20

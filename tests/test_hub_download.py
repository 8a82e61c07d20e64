"""`genotex download benchmark` (issue #46) against a stand-in Hub on 127.0.0.1 serving the
demo benchmark in the Hub's layout: whole, in parts and for a trait, resumed, refused in one
sentence (wrong bytes, an unknown revision, 401, a redirect loop, a full disk), recorded in
the marker and in every run's provenance; then scored and run as the README says.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("huggingface_hub", reason="the hub extra (huggingface_hub) is not installed")
from tests.conftest import INSPECT_WARNINGS  # noqa: E402

pytestmark = INSPECT_WARNINGS

from genotex.core import MARKER_NAME, BenchmarkMarker, MarkerError  # noqa: E402
from genotex.workflows import write_raw_benchmark  # noqa: E402
from tests.fake_hub import COMMIT, FakeHub, git_blob_id, published_files  # noqa: E402
from tests.test_download import _small_disk  # noqa: E402


@pytest.fixture(scope="module")
def hub_files(tmp_path_factory) -> dict[str, bytes]:
    """The demo benchmark as the Hub holds it: input/, output/ (the reference), metadata/,
    and code/ (a notebook a cohort).
    """
    root = tmp_path_factory.mktemp("hub") / "demo"
    write_raw_benchmark(root)
    files = published_files(root)
    for trait in ("Asthma", "Obesity", "Psoriasis"):
        files[f"code/{trait}/notebook.ipynb"] = json.dumps({"cells": [], "trait": trait}).encode()
    files[".gitattributes"] = b"*.gz filter=lfs diff=lfs merge=lfs -text\n"
    return files


def _hub(files: dict[str, bytes], **options) -> FakeHub:
    return FakeHub(dict(files), lfs={p for p in files if p.endswith(".gz")}, **options)


def _genotex(*args: str, endpoint: str, tmp_path: Path, token: str | None = None):
    env = {k: v for k, v in os.environ.items() if not k.startswith("HF_")}
    env.update(HF_ENDPOINT=endpoint, HF_HOME=str(tmp_path / "hf-home"),
               HF_HUB_DISABLE_TELEMETRY="1")  # fmt: skip
    if token is not None:
        env["HF_TOKEN"] = token
    return subprocess.run([sys.executable, "-m", "genotex", *args], capture_output=True,
                          text=True, env=env, timeout=600)  # fmt: skip


def _tree(folder: Path) -> dict[str, bytes]:
    """The files of a benchmark folder, the Hub client's own `.cache/` and the marker aside."""
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in folder.rglob("*")
        if p.is_file() and not p.relative_to(folder).as_posix().startswith(".cache/")
        and p.name != MARKER_NAME
    }  # fmt: skip


def test_the_whole_benchmark_comes_verified_with_its_marker_and_scores_as_the_readme_says(
    hub_files, tmp_path
):
    bench = tmp_path / "BENCH"
    with _hub(hub_files) as url:
        done = _genotex("download", "benchmark", "--out", str(bench), endpoint=url,
                        tmp_path=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stderr
    expected = {k: v for k, v in hub_files.items() if not k.startswith(".")}
    assert _tree(bench) == expected  # real files, byte for byte, no link
    assert not any(p.is_symlink() for p in bench.rglob("*"))
    assert f"from Liu-Hy/GenoTEX at {COMMIT[:12]} (main)" in done.stdout
    assert f"[{len(expected)}/{len(expected)}]" in done.stderr  # a line a file, and the whole
    marker = BenchmarkMarker.read(bench / MARKER_NAME)
    assert marker.commit == COMMIT and set(marker.files) == set(expected)
    gz = next(p for p in expected if p.endswith(".gz"))
    sha = hashlib.sha256(expected[gz]).hexdigest()
    assert marker.files[gz] == (len(expected[gz]), f"sha256:{sha}")
    json_file = "metadata/task_info.json"
    assert marker.files[json_file][1] == "git-sha1:" + git_blob_id(expected[json_file])
    # by hand: sha256 over the sorted "path<TAB>bytes<TAB>digest" lines, joined by newlines
    lines = "\n".join(f"{p}\t{n}\t{d}" for p, (n, d) in sorted(marker.files.items()))
    assert marker.digest == hashlib.sha256(lines.encode()).hexdigest()

    verify = subprocess.run([sys.executable, "-m", "genotex", "download", "verify", str(bench)],
                            capture_output=True, text=True)  # fmt: skip
    assert verify.returncode == 0 and f"{len(expected)} verified, 0 differ" in verify.stdout
    # the README's next step, as printed: score against the reference it fetched
    scored = subprocess.run(
        [sys.executable, "-m", "genotex", "eval", "-p", str(bench / "output"), "-r",
         str(bench / "output"), "--json", str(tmp_path / "report.json")],
        capture_output=True, text=True,
    )  # fmt: skip
    assert scored.returncode == 0, scored.stderr
    provenance = json.loads((tmp_path / "report.json").read_text())["run"]["provenance"]
    assert provenance["benchmark"] == {**marker.summary(), "modified": 0, "modified_files": []}
    assert f"reference: Liu-Hy/GenoTEX at main (commit {COMMIT[:12]})" in scored.stdout
    assert "modified since download" not in scored.stdout
    # a reference file edited after the download: said, in the text and the JSON (#52, item 7)
    answer = next(p for p in sorted((bench / "output" / "regress").rglob("*.json")))
    answer.write_text(answer.read_text().replace("]", ', "FORGED"]', 1))
    edited, said = _scored_against_itself(bench, tmp_path / "edited.json")
    relative = answer.relative_to(bench).as_posix()
    assert said["modified"] == 1 and said["modified_files"] == [relative]
    assert (
        f"warning: the reference or its task_info was modified since download (1 files "
        f"differ from its marker: {relative})" in edited.stdout
    )
    # task_info.json edited after the download: said too (#63 item 1: it was modified=0)
    answer.write_text(answer.read_text().replace(', "FORGED"]', "]", 1))
    task_info = bench / "metadata" / "task_info.json"
    task_info.write_text(task_info.read_text().replace("[", "[ ", 1))
    again, said = _scored_against_itself(bench, tmp_path / "again.json")
    assert said["modified"] == 1 and said["modified_files"] == ["metadata/task_info.json"]


def _scored_against_itself(bench: Path, report: Path) -> tuple[Any, dict]:
    """`eval` of the downloaded reference against itself: the run, and what its report's
    provenance says of the benchmark."""
    done = subprocess.run(
        [sys.executable, "-m", "genotex", "eval", "-p", str(bench / "output"), "-r",
         str(bench / "output"), "--json", str(report)],
        capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done, json.loads(report.read_text())["run"]["provenance"]["benchmark"]


def test_a_run_on_a_fetched_benchmark_records_its_marker_in_the_log_and_the_export(
    hub_files, tmp_path
):
    pytest.importorskip("inspect_ai", reason="the harness extra is not installed")
    from inspect_ai import eval as inspect_eval

    from genotex.harness import export_run
    from genotex.harness.runs._tasks import e2e
    from genotex.harness.solvers._reference import gold

    bench = tmp_path / "BENCH"
    with _hub(hub_files) as url:
        done = _genotex("download", "benchmark", "--out", str(bench), "--only", "Psoriasis",
                        "--no-progress", endpoint=url, tmp_path=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stderr
    summary = BenchmarkMarker.read(bench / MARKER_NAME).summary()
    task = e2e(root=str(bench), traits="Psoriasis", sandbox="local")
    log = inspect_eval(task, model="none", solver=gold(), log_dir=str(tmp_path / "logs"),
                       display="none")[0]  # fmt: skip
    assert log.status == "success" and log.eval.metadata["benchmark"] == summary
    path = export_run(log.location, tmp_path / "run", reference=bench / "output")
    assert json.loads(path.read_text())["run"]["provenance"]["benchmark"] == summary


def test_only_a_trait_and_some_parts_bring_what_its_problems_need(hub_files, tmp_path):
    bench = tmp_path / "BENCH"
    with _hub(hub_files) as url:
        dry = _genotex("download", "benchmark", "--out", str(bench), "--only", "Asthma",
                       "--parts", "metadata,reference,inputs", "--dry-run", endpoint=url,
                       tmp_path=tmp_path)  # fmt: skip
        assert dry.returncode == 0, dry.stderr
        assert not bench.exists()  # a dry run writes nothing
        done = _genotex("download", "benchmark", "--out", str(bench), "--only", "Asthma",
                        "--parts", "metadata,reference,inputs", endpoint=url,
                        tmp_path=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stderr
    got = set(_tree(bench))
    # by hand: Asthma's GEO inputs (no TCGA folder is Asthma's), its reference, the data and
    # the GEO inputs of Obesity (a condition of Asthma's two-step problem, which the paper's
    # end-to-end task preprocesses), all metadata; no code
    want = {p for p in hub_files if p.startswith(("input/GEO/Asthma/", "output/preprocess/Asthma/",
            "output/regress/Asthma/", "output/preprocess/Obesity/", "metadata/",
            "input/GEO/Obesity/"))}  # fmt: skip
    assert got == want
    # verify --only checks the marker's entries for the trait (0.8.0 checked the shipped
    # manifest and called 20 files of a folder that had just verified missing) (#52, item 8)
    verify = subprocess.run([sys.executable, "-m", "genotex", "download", "verify", str(bench),
                             "--only", "Asthma"], capture_output=True, text=True)  # fmt: skip
    assert verify.returncode == 0, verify.stdout + verify.stderr
    assert f"{len(want)} verified, 0 differ, 0 missing" in verify.stdout
    first = sorted(p for p in want if p.startswith("input/GEO/Asthma/"))[0]
    (bench / first).unlink()
    verify = subprocess.run([sys.executable, "-m", "genotex", "download", "verify", str(bench),
                             "--only", "Asthma"], capture_output=True, text=True)  # fmt: skip
    assert verify.returncode == 1 and f"MISSING {first}" in verify.stdout
    listed = [line.split()[-1] for line in dry.stdout.splitlines()[:-1]]
    assert sorted(listed) == sorted(want)
    sizes = sum(len(hub_files[p]) for p in want)
    assert dry.stdout.splitlines()[-1].startswith(f"{len(want)} files, {sizes / 1e6:,.1f} MB")
    with _hub(hub_files) as url:  # -T tcga=all's inputs: every Xena folder besides
        every = _genotex("download", "benchmark", "--out", str(bench), "--only", "Asthma",
                         "--parts", "inputs", "--all-tcga", "--dry-run", endpoint=url,
                         tmp_path=tmp_path)  # fmt: skip
    listed = {line.split()[-1] for line in every.stdout.splitlines()[:-1]}
    tcga = {p for p in hub_files if p.startswith("input/TCGA/")}
    assert tcga and listed == tcga | {p for p in want if p.startswith("input/")}


def test_an_unknown_trait_or_part_is_one_sentence(hub_files, tmp_path):
    with _hub(hub_files) as url:
        trait = _genotex("download", "benchmark", "--out", str(tmp_path / "B"), "--only",
                         "Asthmaa", endpoint=url, tmp_path=tmp_path)  # fmt: skip
        part = _genotex("download", "benchmark", "--out", str(tmp_path / "B"), "--parts",
                        "answers", endpoint=url, tmp_path=tmp_path)  # fmt: skip
    assert trait.returncode == 2 and "did you mean Asthma?" in trait.stderr
    assert part.returncode == 1 and "has no part 'answers'" in part.stderr
    assert "Traceback" not in trait.stderr + part.stderr and not (tmp_path / "B").exists()


def test_an_interrupted_transfer_is_resumed_and_a_second_run_fetches_nothing(hub_files, tmp_path):
    """A 24 MiB file cut after 12 MiB: every byte received is in its `.part`, so it is resumed
    from 12 MiB (a Range request; the Hub client of 0.9.0 kept 10 MiB), and ends whole.
    """
    bench = tmp_path / "BENCH"
    big = "input/GEO/Asthma/GSE100001/GSE100001-GPL1_series_matrix.txt.gz"
    files = {**hub_files, big: os.urandom(24 * 1024 * 1024)}
    hub = _hub(files, cut_once={big})
    with hub as url:
        first = _genotex("download", "benchmark", "--out", str(bench), "--parts", "inputs",
                         endpoint=url, tmp_path=tmp_path)  # fmt: skip
        assert first.returncode == 0, first.stderr
        ranged = [r for r in hub.requests if r[0] == "GET" and r[1].endswith(big) and r[2]]
        assert [r[2] for r in ranged] == [f"bytes={12 * 1024 * 1024}-"]  # resumed, not redone
        assert (bench / big).read_bytes() == files[big]
        hub.requests.clear()
        again = _genotex("download", "benchmark", "--out", str(bench), "--parts", "inputs",
                         endpoint=url, tmp_path=tmp_path)  # fmt: skip
    assert again.returncode == 0 and "0 files fetched" in again.stdout
    assert not [r for r in hub.requests if "/resolve/" in r[1]]


def test_a_file_whose_bytes_differ_from_the_hubs_sha256_is_removed_and_named(hub_files, tmp_path):
    bench = tmp_path / "BENCH"
    bad = sorted(p for p in hub_files if p.endswith(".gz"))[1]
    with _hub(hub_files, corrupt={bad}) as url:
        done = _genotex("download", "benchmark", "--out", str(bench), "--parts", "inputs",
                        endpoint=url, tmp_path=tmp_path)  # fmt: skip
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert f"{bad}: its bytes do not match the Hub's sha256" in done.stderr
    assert not (bench / bad).exists()
    marker = BenchmarkMarker.read(bench / MARKER_NAME)  # what was checked before it is kept
    assert bad not in marker.files and len(marker.files) == 1


@pytest.mark.parametrize("lfs", [True, False])
def test_an_input_the_manifest_lists_otherwise_is_refused(tmp_path, lfs):
    """Whatever the Hub's storage: 0.9.0 checked only a large (LFS) file against the shipped
    manifest, and kept a plain git file's wrong bytes (issue #52, item 4).
    """
    from genotex.preprocessing import load_manifest, packaged_manifest

    relative = sorted(load_manifest(packaged_manifest("geo")))[0]
    files = {f"input/GEO/{relative}": b"not the series the manifest lists"}
    with FakeHub(files, lfs=set(files) if lfs else set()) as url:
        done = _genotex("download", "benchmark", "--out", str(tmp_path / "B"), endpoint=url,
                        tmp_path=tmp_path)  # fmt: skip
    assert done.returncode == 1
    assert f"input/GEO/{relative}: its sha256 differs from the benchmark's manifest" in done.stderr
    assert not (tmp_path / "B" / "input" / "GEO" / relative).exists()


@pytest.mark.parametrize(
    ("options", "args", "says"),
    [
        ({}, ["--revision", "v9"], "the Hub's Liu-Hy/GenoTEX has no revision 'v9'"),
        ({"token": "s3cret"}, [], "the Hub refused Liu-Hy/GenoTEX (401): it is gated, private"),
        ({"redirect_loop": True}, [], "the Hub redirected Liu-Hy/GenoTEX ("),
    ],
)
def test_a_refusal_is_one_sentence_and_leaves_no_file(hub_files, tmp_path, options, args, says):
    bench = tmp_path / "BENCH"
    with _hub(hub_files, **options) as url:
        done = _genotex("download", "benchmark", "--out", str(bench), "--parts", "metadata",
                        *args, endpoint=url, tmp_path=tmp_path)  # fmt: skip
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert says in done.stderr and len(done.stderr.strip().splitlines()) <= 3
    assert _tree(bench) == {} if bench.exists() else True


def test_the_token_opens_a_gated_copy(hub_files, tmp_path):
    with _hub(hub_files, token="s3cret") as url:
        done = _genotex("download", "benchmark", "--out", str(tmp_path / "B"), "--parts",
                        "metadata", endpoint=url, tmp_path=tmp_path, token="s3cret")  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert set(_tree(tmp_path / "B")) == {p for p in hub_files if p.startswith("metadata/")}


def test_a_disk_too_small_is_refused_before_any_transfer(hub_files, tmp_path):
    files = {**hub_files, "input/GEO/Asthma/GSE100001/big.gz": os.urandom(3 * 1024 * 1024)}
    with _small_disk(tmp_path / "disk", 2) as disk, _hub(files) as url:
        done = _genotex("download", "benchmark", "--out", str(disk / "BENCH"), "--parts",
                        "inputs", endpoint=url, tmp_path=tmp_path)  # fmt: skip
        assert done.returncode == 1 and "Traceback" not in done.stderr
        assert "the download needs" in done.stderr and "nothing was fetched" in done.stderr
        assert _tree(disk / "BENCH") == {}


def test_a_file_longer_than_the_hub_declared_is_stopped_there(hub_files, tmp_path):
    """Listed at 10 bytes, served as 6 MiB: 0.9.0's transfer took it all (288 MB of a file
    declared as 1 KB) and filled a small disk; now the body is cut past the declared size and
    nothing of it is kept (issue #52, item 3).
    """
    big = "input/GEO/Asthma/GSE100001/big.gz"
    files = {**hub_files, big: os.urandom(6 * 1024 * 1024)}
    with _small_disk(tmp_path / "disk", 8) as disk, _hub(files, understate={big}) as url:
        done = _genotex("download", "benchmark", "--out", str(disk / "BENCH"), "--parts",
                        "inputs", endpoint=url, tmp_path=tmp_path)  # fmt: skip
        assert done.returncode == 1 and "Traceback" not in done.stderr
        assert f"the transfer of {big} failed: the server sent more than the 10 bytes" in (
            done.stderr
        ), done.stderr
        left = [p for p in (disk / "BENCH").rglob("big.gz*")]
        assert left == []  # nothing under its final name, no .part


def test_a_folder_of_another_revision_or_a_hostile_marker_is_refused(hub_files, tmp_path):
    bench = tmp_path / "BENCH"
    bench.mkdir()
    other = BenchmarkMarker("Liu-Hy/GenoTEX", "v1", "f" * 40, {})
    other.write(bench)
    with _hub(hub_files) as url:
        done = _genotex("download", "benchmark", "--out", str(bench), "--parts", "metadata",
                        endpoint=url, tmp_path=tmp_path)  # fmt: skip
    assert done.returncode == 1 and "would mix two revisions" in done.stderr
    (bench / MARKER_NAME).write_text(json.dumps({
        "repo": "r", "revision": "main", "commit": "a" * 40,
        "files": {"../../etc/passwd": {"bytes": 1, "digest": "sha256:" + "0" * 64}},
    }))  # fmt: skip
    with pytest.raises(MarkerError, match="lies outside the benchmark"):
        BenchmarkMarker.read(bench / MARKER_NAME)
    verify = subprocess.run([sys.executable, "-m", "genotex", "download", "verify", str(bench)],
                            capture_output=True, text=True)  # fmt: skip
    assert verify.returncode == 1 and "lies outside the benchmark" in verify.stderr
    assert "Traceback" not in verify.stderr


def test_verify_names_a_fetched_file_that_changed_or_went(hub_files, tmp_path):
    bench = tmp_path / "BENCH"
    with _hub(hub_files) as url:
        done = _genotex("download", "benchmark", "--out", str(bench), "--parts", "metadata,code",
                        endpoint=url, tmp_path=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stderr
    (bench / "metadata" / "task_info.json").write_text("{}")
    (bench / "code" / "Asthma" / "notebook.ipynb").unlink()
    verify = subprocess.run([sys.executable, "-m", "genotex", "download", "verify", str(bench)],
                            capture_output=True, text=True)  # fmt: skip
    assert verify.returncode == 1
    assert "DIFFERS metadata/task_info.json" in verify.stdout
    assert "MISSING code/Asthma/notebook.ipynb" in verify.stdout


@pytest.mark.parametrize(
    ("args", "says"),
    [(["--parts", ""], "names no part"), (["--only", ""], "an empty trait name")],
)
def test_an_empty_selection_is_refused(hub_files, tmp_path, args, says):
    """0.8.0: `--parts ""` downloaded nothing with exit 0 and wrote a marker; `--only ""`
    selected the whole benchmark (issue #52, item 5)."""
    bench = tmp_path / "BENCH"
    with _hub(hub_files) as url:
        done = _genotex("download", "benchmark", "--out", str(bench), *args, endpoint=url,
                        tmp_path=tmp_path)  # fmt: skip
    assert done.returncode == 2 and says in done.stderr and not bench.exists()


def test_a_link_for_the_clients_cache_or_a_folder_for_the_marker_is_refused_first(
    hub_files, tmp_path
):
    """A link at BENCH/.cache sent 0.8.0's cache and lock files outside BENCH; a folder where
    the marker goes was found after the whole transfer (issue #52, items 2 and 5)."""
    outside = tmp_path / "outside"
    outside.mkdir()
    for name, make in ((".cache", lambda p: p.symlink_to(outside)),
                       (MARKER_NAME, lambda p: p.mkdir())):  # fmt: skip
        bench = tmp_path / f"BENCH{len(name)}"
        bench.mkdir()
        make(bench / name)
        with _hub(hub_files) as url:
            done = _genotex("download", "benchmark", "--out", str(bench), endpoint=url,
                            tmp_path=tmp_path)  # fmt: skip
        assert done.returncode == 1 and "nothing was fetched" in done.stderr, done.stderr
        assert not (bench / "metadata").exists() and list(outside.iterdir()) == []


def test_two_downloads_into_one_folder_at_once_are_refused(hub_files, tmp_path):
    import fcntl

    bench = tmp_path / "BENCH"
    (bench / ".cache").mkdir(parents=True)
    with open(
        bench / ".cache" / "genotex-download.lock", "w"
    ) as held:  # another download, under way
        fcntl.flock(held, fcntl.LOCK_EX)
        with _hub(hub_files) as url:
            done = _genotex("download", "benchmark", "--out", str(bench), endpoint=url,
                            tmp_path=tmp_path)  # fmt: skip
    assert done.returncode == 1 and "another download into" in done.stderr
    assert not (bench / MARKER_NAME).exists()


def test_a_server_error_and_a_folder_in_the_way_are_named_as_what_they_are(hub_files, tmp_path):
    """0.8.0 said a Hub answering 500 "has no file", and a folder where a file goes "could
    not be reached" (issue #52, item 13)."""
    name = "metadata/task_info.json"
    bench = tmp_path / "BENCH"
    with _hub(hub_files, broken={name}) as url:
        done = _genotex("download", "benchmark", "--out", str(bench), "--parts", "metadata",
                        endpoint=url, tmp_path=tmp_path)  # fmt: skip
    assert done.returncode == 1 and "has no file" not in done.stderr
    assert "a server or network error" in done.stderr and "500" in done.stderr, done.stderr
    other = tmp_path / "OTHER"
    (other / name).mkdir(parents=True)  # a folder where the file goes
    with _hub(hub_files) as url:
        done = _genotex("download", "benchmark", "--out", str(other), "--parts", "metadata",
                        endpoint=url, tmp_path=tmp_path)  # fmt: skip
    assert done.returncode == 1 and "could not be reached" not in done.stderr
    assert "stands in its way" in done.stderr or "is a folder" in done.stderr, done.stderr


def test_a_dry_run_writes_nothing_anywhere_and_a_looping_listing_is_refused(
    hub_files, tmp_path, monkeypatch
):
    """0.9.0's `--dry-run --only` fetched task_info.json through a scratch folder in TMPDIR
    (270-800 MB from a hostile Hub), and followed a tree listing whose pages loop forever
    (issue #52, items 2 and 5).
    """
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    bench = tmp_path / "BENCH"
    with _hub(hub_files) as url:
        dry = subprocess.run(
            [sys.executable, "-m", "genotex", "download", "benchmark", "--out", str(bench),
             "--only", "Asthma", "--dry-run"],
            capture_output=True, text=True, timeout=120,
            env={**os.environ, "HF_ENDPOINT": url, "TMPDIR": str(scratch),
                 "HF_HOME": str(tmp_path / "hf")},
        )  # fmt: skip
    assert dry.returncode == 0, dry.stderr
    assert "input/GEO/Obesity/" in dry.stdout  # the condition's inputs: task_info was read
    assert list(scratch.iterdir()) == [] and not bench.exists()
    # in the process: no scratch folder is made at all (0.9.0 made one to fetch task_info into)
    from genotex.preprocessing import plan_benchmark

    def refused(*args, **kwargs):
        raise AssertionError("a planned download made a temporary folder")

    monkeypatch.setattr("tempfile.mkdtemp", refused)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    with _hub(hub_files) as url:
        plan = plan_benchmark(only=["Asthma"], endpoint=url)
    assert any(f.path.startswith("input/GEO/Obesity/") for f in plan.files)
    monkeypatch.undo()
    with _hub(hub_files, loop_tree=True) as url:
        looped = _genotex("download", "benchmark", "--out", str(bench), "--dry-run",
                          endpoint=url, tmp_path=tmp_path)  # fmt: skip
    assert looped.returncode == 1 and "Traceback" not in looped.stderr
    assert "its pages loop" in looped.stderr, looped.stderr


def test_verify_after_a_stopped_download_names_every_file_it_never_fetched(hub_files, tmp_path):
    """0.9.0's marker listed only what was checked: after a download that stopped at its
    second file, `verify` said "1 verified, 0 missing" (issue #52, item 4). Files are fetched
    in path order: by hand, metadata/gene_synonym.json comes, metadata/task_info.json fails.
    """
    bench = tmp_path / "BENCH"
    with _hub(hub_files, broken={"metadata/task_info.json"}) as url:
        done = _genotex("download", "benchmark", "--out", str(bench), "--parts", "metadata",
                        endpoint=url, tmp_path=tmp_path)  # fmt: skip
    assert done.returncode == 1
    verify = subprocess.run([sys.executable, "-m", "genotex", "download", "verify", str(bench)],
                            capture_output=True, text=True)  # fmt: skip
    assert verify.returncode == 1, verify.stdout
    assert "MISSING metadata/task_info.json" in verify.stdout
    assert "1 verified, 0 differ, 1 missing" in verify.stdout, verify.stdout
    with _hub(hub_files) as url:  # the same download again: it goes on and completes
        again = _genotex("download", "benchmark", "--out", str(bench), "--parts", "metadata",
                         endpoint=url, tmp_path=tmp_path)  # fmt: skip
    assert again.returncode == 0, again.stderr
    marker = json.loads((bench / MARKER_NAME).read_text())
    assert "pending" not in marker and len(marker["files"]) == 2


def test_a_file_smaller_than_the_hub_lists_is_refused_at_download(hub_files, tmp_path):
    """0.9.0 "verified" it at download (its digest matched) and `verify` then said DIFFERS."""
    name = "metadata/task_info.json"
    with _hub(hub_files, overstate={name}) as url:
        done = _genotex("download", "benchmark", "--out", str(tmp_path / "B"), "--parts",
                        "metadata", endpoint=url, tmp_path=tmp_path)  # fmt: skip
    size = len(hub_files[name])
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert f"{name}: it has {size:,} bytes where the Hub lists {size + 100:,}" in done.stderr
    assert not (tmp_path / "B" / name).exists()

"""The benchmark downloader against a local HTTP server (127.0.0.1): resume, verify, summarize."""

from __future__ import annotations

import contextlib
import hashlib
import json
import shutil
import subprocess
import sys
import time
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest

from genotex.preprocessing import Download, fetch, geo_downloads, load_manifest, tcga_downloads
from tests.conftest import local_server

GENOTEX = [sys.executable, "-m", "genotex", "download"]


class _Files(BaseHTTPRequestHandler):
    files: dict[str, bytes] = {}
    requests: list[tuple[str, str | None]] = []

    def do_GET(self):  # noqa: N802 - the HTTP verb
        _Files.requests.append((self.path, self.headers.get("Range")))
        body = _Files.files.get(self.path)
        if body is None:
            self.send_error(404, "Not Found")
            return
        start = 0
        if self.headers.get("Range"):
            start = int(self.headers["Range"].split("=")[1].split("-")[0])
            if start >= len(body):
                self.send_error(416, "Range Not Satisfiable")
                return
            self.send_response(206)
            self.send_header("Content-Range", f"bytes {start}-{len(body) - 1}/{len(body)}")
        else:
            self.send_response(200)
        self.send_header("Content-Length", str(len(body) - start))
        self.end_headers()
        self.wfile.write(body[start:])

    def log_message(self, *args):
        pass


@pytest.fixture()
def server():
    _Files.files, _Files.requests = {}, []
    with local_server(_Files) as url:
        yield url


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def test_urls_follow_the_public_sources_layout(tmp_path):
    geo = geo_downloads(
        {
            "Asthma/GSE207744/GSE207744_family.soft.gz": "a",
            "Asthma/GSE1234/GSE1234-GPL570_series_matrix.txt.gz": "b",
        },
        tmp_path,
    )
    urls = sorted(d.url for d in geo)
    assert urls == [
        "https://ftp.ncbi.nlm.nih.gov/geo/series/GSE1nnn/GSE1234/matrix/GSE1234-GPL570_series_matrix.txt.gz",
        "https://ftp.ncbi.nlm.nih.gov/geo/series/GSE207nnn/GSE207744/soft/GSE207744_family.soft.gz",
    ]
    tcga = tcga_downloads(
        {
            "TCGA_Liver_Cancer_(LIHC)/TCGA.LIHC.sampleMap_HiSeqV2_PANCAN.gz": "c",
            ".DS_Store": "d",
            "CrawlData.ipynb": "e",
        },
        tmp_path,
    )
    assert [d.url for d in tcga] == [
        "https://tcga.xenahubs.net/download/TCGA.LIHC.sampleMap/HiSeqV2_PANCAN.gz"
    ]
    assert (
        tcga[0].path
        == tmp_path / "TCGA_Liver_Cancer_(LIHC)" / "TCGA.LIHC.sampleMap_HiSeqV2_PANCAN.gz"
    )


def test_the_shared_manifests_load(shared):
    geo = load_manifest(shared / "data" / "manifests" / "geo_manifest.json")
    assert len(geo) == 1815 and all(len(v) == 64 for v in geo.values())
    assert (
        len(
            tcga_downloads(load_manifest(shared / "data" / "manifests" / "tcga_manifest.json"), "x")
        )
        > 60
    )


def test_a_partial_file_is_resumed_and_verified(server, tmp_path):
    body = bytes(range(256)) * 4000
    _Files.files["/f.gz"] = body
    target = tmp_path / "f.gz"
    (tmp_path / "f.gz.part").write_bytes(body[:300_000])
    result = fetch(Download(f"{server}/f.gz", target, _sha(body)))
    assert result.outcome.kind == "resumed" and target.read_bytes() == body
    assert _Files.requests[-1] == ("/f.gz", "bytes=300000-")
    assert not (tmp_path / "f.gz.part").exists()
    again = fetch(Download(f"{server}/f.gz", target, _sha(body)))
    assert again.outcome.kind == "present" and len(_Files.requests) == 1  # verified, not refetched


def test_a_wrong_hash_is_a_failure_and_nothing_is_left_in_place(server, tmp_path):
    _Files.files["/bad.gz"] = b"tampered"
    result = fetch(Download(f"{server}/bad.gz", tmp_path / "bad.gz", _sha(b"original")))
    assert not result.ok and "sha256" in result.outcome.reason
    assert not (tmp_path / "bad.gz").exists() and not (tmp_path / "bad.gz.part").exists()


def test_the_command_downloads_a_manifest_and_summarizes_failures(server, tmp_path):
    good, other = b"matrix bytes" * 1000, b"soft bytes" * 500
    _Files.files["/GSE100nnn/GSE100001/matrix/GSE100001_series_matrix.txt.gz"] = good
    _Files.files["/GSE100nnn/GSE100001/soft/GSE100001_family.soft.gz"] = other
    manifest = tmp_path / "geo_manifest.json"
    manifest.write_text(
        json.dumps(
            {
                "dataset_name": "GEO",
                "files": {
                    "Asthma/GSE100001/GSE100001_series_matrix.txt.gz": _sha(good),
                    "Asthma/GSE100001/GSE100001_family.soft.gz": _sha(other),
                    "Asthma/GSE100002/GSE100002_series_matrix.txt.gz": _sha(
                        b"missing on the server"
                    ),
                },
            }
        )
    )
    out = tmp_path / "input" / "GEO"
    command = [
        *GENOTEX,
        "geo",
        "--manifest",
        str(manifest),
        "--out",
        str(out),
        "--base-url",
        server,
        "--no-progress",
    ]
    done = subprocess.run(command, capture_output=True, text=True)
    assert done.returncode == 1
    assert "3 files: 2 downloaded, 1 failed" in done.stdout and "HTTP 404" in done.stdout
    assert (out / "Asthma/GSE100001/GSE100001_series_matrix.txt.gz").read_bytes() == good
    _Files.files["/GSE100nnn/GSE100002/matrix/GSE100002_series_matrix.txt.gz"] = (
        b"missing on the server"
    )
    done = subprocess.run(command, capture_output=True, text=True)
    assert done.returncode == 0 and "2 present" in done.stdout and "1 downloaded" in done.stdout


def test_a_bad_manifest_is_one_sentence(tmp_path):
    manifest = tmp_path / "m.json"
    manifest.write_text("[]")
    done = subprocess.run(
        [*GENOTEX, "geo", "--manifest", str(manifest), "--out", str(tmp_path)],
        capture_output=True,
        text=True,
    )
    assert (
        done.returncode == 1 and "not a manifest" in done.stderr and "Traceback" not in done.stderr
    )


class _Short(BaseHTTPRequestHandler):
    """Announces 1,000 bytes and closes the connection after 400."""

    def do_GET(self):  # noqa: N802 - the HTTP verb
        self.send_response(200)
        self.send_header("Content-Length", "1000")
        self.end_headers()
        self.wfile.write(b"x" * 400)
        self.close_connection = True

    def log_message(self, *args):
        pass


def test_a_body_shorter_than_its_content_length_is_not_moved_into_place(tmp_path):
    target = tmp_path / "gene_info.gz"
    with local_server(_Short) as url:
        result = fetch(Download(f"{url}/gene_info.gz", target, None), retries=2)
    assert not result.ok and "400 of 1000 bytes" in result.outcome.reason
    assert not target.exists()  # the partial body stays a .part, to be resumed


@pytest.mark.parametrize(
    "key",
    [
        "../escape/GSE1/GSE1_series_matrix.txt.gz",
        "/abs/GSE1/GSE1_series_matrix.txt.gz",
        "Asthma/../../GSE1_series_matrix.txt.gz",
        "TCGA_..x/../TCGA.X.sampleMap_HiSeqV2.gz",
    ],
)
def test_a_manifest_path_that_leaves_the_output_folder_is_refused(tmp_path, key):
    manifest = tmp_path / "m.json"
    manifest.write_text(json.dumps({"files": {key: "0" * 64}}))
    done = subprocess.run(
        [*GENOTEX, "geo", "--manifest", str(manifest), "--out", str(tmp_path / "out")],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 1 and "outside the output folder" in done.stderr, done.stderr
    assert not (tmp_path / "escape").exists() and not (tmp_path / "out").exists()


def test_a_symlinked_cohort_folder_is_not_written_through(tmp_path):
    out, elsewhere = tmp_path / "out", tmp_path / "elsewhere"
    (out / "Asthma").mkdir(parents=True)
    elsewhere.mkdir()
    (out / "Asthma" / "GSE1").symlink_to(elsewhere)
    with pytest.raises(Exception, match="outside the output folder"):
        geo_downloads({"Asthma/GSE1/GSE1_series_matrix.txt.gz": "0" * 64}, out)


def test_an_unknown_trait_is_a_usage_error_naming_the_closest(tmp_path):
    manifest = tmp_path / "m.json"
    manifest.write_text(json.dumps({"files": {"Asthma/GSE1/GSE1_series_matrix.txt.gz": "0" * 64}}))
    done = subprocess.run(
        [*GENOTEX, "geo", "--manifest", str(manifest), "--out", str(tmp_path), "--only", "Asthmaa"],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 2 and "did you mean Asthma?" in done.stderr, done.stderr


def test_offline_every_file_failing_alike_is_said_once(tmp_path):
    files = {f"Asthma/GSE{i}/GSE{i}_series_matrix.txt.gz": "0" * 64 for i in range(1, 8)}
    manifest = tmp_path / "m.json"
    manifest.write_text(json.dumps({"files": files}))
    done = subprocess.run(  # a host name that never resolves (RFC 6761's .invalid)
        [*GENOTEX, "geo", "--manifest", str(manifest), "--out", str(tmp_path / "o")]
        + ["--base-url", "http://genotex.invalid", "--no-progress"],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 1
    failures = [line for line in done.stdout.splitlines() if "FAILED" in line]
    assert len(failures) == 1 and "all 7 files" in failures[0], done.stdout


def test_a_part_file_that_is_a_link_is_not_written_through(server, tmp_path):
    """#36 item 8: a `.part` link was truncated and written through, outside --out."""
    outside = tmp_path / "outside.txt"
    outside.write_bytes(b"a user's file, not to be touched")
    out = tmp_path / "out"
    out.mkdir()
    target = out / "f.gz"
    (out / "f.gz.part").symlink_to(outside)
    body = b"the file's bytes" * 100
    _Files.files["/f.gz"] = body
    result = fetch(Download(f"{server}/f.gz", target, _sha(body)))
    assert result.ok, result.outcome.reason
    assert target.read_bytes() == body
    assert outside.read_bytes() == b"a user's file, not to be touched"


class _Endless(BaseHTTPRequestHandler):
    """A body with no announced length that never ends, or one longer than it announced."""

    def do_GET(self):  # noqa: N802 - the HTTP verb
        self.send_response(200)
        if self.path == "/liar":
            self.send_header("Content-Length", "1000")
        self.end_headers()
        with contextlib.suppress(OSError):
            for _ in range(10_000):  # 640 MB, unless the client stops first
                self.wfile.write(b"x" * 65536)

    def log_message(self, *args):
        pass


def test_an_endless_body_is_cut_off_and_nothing_is_kept(tmp_path):
    target = tmp_path / "f.gz"
    with local_server(_Endless) as url:
        result = fetch(Download(f"{url}/endless", target, None), max_bytes=5_000_000)
    assert not result.ok
    assert "more than the 5,000,000 bytes a file may have" in result.outcome.reason
    assert not target.exists() and not (tmp_path / "f.gz.part").exists()


def test_a_body_longer_than_announced_is_taken_only_as_announced(tmp_path):
    target = tmp_path / "f.bin"  # its kind is not judged: the bytes are x
    with local_server(_Endless) as url:
        result = fetch(Download(f"{url}/liar", target, None))
    assert result.ok and target.stat().st_size == 1000


class _Trickle(BaseHTTPRequestHandler):
    def do_GET(self):  # noqa: N802 - the HTTP verb
        self.send_response(200)
        self.send_header("Content-Length", "100000")
        self.end_headers()
        with contextlib.suppress(OSError):
            for _ in range(100_000):
                self.wfile.write(b"x")
                self.wfile.flush()
                time.sleep(0.05)

    def log_message(self, *args):
        pass


def test_a_server_trickling_bytes_is_cut_off(tmp_path, monkeypatch):
    """A byte every 5 s was never cut off (the timeout is per read); here a byte every 50 ms
    against a floor of 1,024 bytes a second over 2 s windows."""
    from genotex.preprocessing import _transfer

    monkeypatch.setattr(_transfer, "WINDOW", 2.0)
    started = time.monotonic()
    with local_server(_Trickle) as url:
        result = fetch(Download(f"{url}/slow", tmp_path / "f.gz", None), retries=1)
    assert not result.ok and "less than 1,024 bytes a second" in result.outcome.reason
    assert time.monotonic() - started < 30


@contextlib.contextmanager
def _small_disk(folder, megabytes: int):
    """A folder on a tmpfs of `megabytes` (as root, as CI runs), else skipped with why."""
    import os
    import shutil

    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("a small disk is a tmpfs, which only root can mount here")
    folder.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={megabytes}m", "genotex-test", str(folder)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    try:
        yield folder
    finally:
        subprocess.run(["umount", "--lazy", str(folder)], capture_output=True)


class _Unending(BaseHTTPRequestHandler):
    """A body with no announced length that never ends (until the client goes)."""

    def do_GET(self):  # noqa: N802 - the HTTP verb
        self.send_response(200)
        self.end_headers()
        with contextlib.suppress(OSError):
            for _ in range(10_000):
                self.wfile.write(b"x" * 65536)

    def log_message(self, *args):
        pass


def test_an_endless_body_stops_before_the_disk_is_full_and_is_not_kept(tmp_path):
    """Issues #45, 11 and #52, 3: a manifest file has no size, and a body of no announced
    length that never ends used to fill the disk (its .part kept). It now stops with the
    disk's reserve still free (5% of 4 MB) and keeps nothing: an endless body is no file to
    resume.
    """
    with _small_disk(tmp_path / "disk", 4) as disk, local_server(_Unending) as url:
        target = disk / "GSE1_series_matrix.txt.gz"
        started = time.monotonic()
        result = fetch(Download(f"{url}/endless", target, None))
        assert time.monotonic() - started < 30
        assert not result.ok and list(disk.iterdir()) == []
        assert result.outcome.reason.startswith("the disk would be full after ")
        assert "its server did not say how long it is, so nothing was kept" in result.outcome.reason
        assert shutil.disk_usage(disk).free >= 4 * 2**20 // 20


class _FillsTheDisk(BaseHTTPRequestHandler):
    """A 2 MB body whose length is announced; between the headers and the body something
    else (`filler`) takes most of the disk that was free when the download began.
    """

    filler: Path

    def do_GET(self):  # noqa: N802 - the HTTP verb
        self.send_response(200)
        self.send_header("Content-Length", str(2 * 2**20))
        self.end_headers()
        time.sleep(0.5)  # the client has checked the room by now
        self.filler.write_bytes(b"f" * (3 * 2**20))
        with contextlib.suppress(OSError):
            self.wfile.write(b"x" * (2 * 2**20))

    def log_message(self, *args):
        pass


def test_a_disk_filled_by_another_writer_stops_a_sized_file_and_keeps_its_part(tmp_path):
    """A file of announced length that fitted when it began, on a disk something else then
    fills: the transfer stops before the disk is full and keeps its .part, to resume.
    """
    with _small_disk(tmp_path / "disk", 4) as disk:
        _FillsTheDisk.filler = disk / "someone-else"
        with local_server(_FillsTheDisk) as url:
            result = fetch(Download(f"{url}/file", disk / "f.gz", None))
        assert not result.ok and not (disk / "f.gz").exists()
        assert result.outcome.reason.startswith("the disk would be full after ")
        assert result.outcome.reason.endswith("its .part is kept, to resume when there is room")
        assert (disk / "f.gz.part").is_file()
        assert shutil.disk_usage(disk).free >= 4 * 2**20 // 20


def test_a_file_larger_than_the_free_space_is_refused_before_writing(server, tmp_path):
    _Files.files["/big"] = b"y" * (6 * 1024 * 1024)
    with _small_disk(tmp_path / "disk", 2) as disk:
        result = fetch(Download(f"{server}/big", disk / "big.gz", None))
        assert not result.ok
        assert "the file needs 6,291,456 bytes and its disk has" in result.outcome.reason
        assert list(disk.iterdir()) == []  # not even a .part


class _Dribble(BaseHTTPRequestHandler):
    """A byte every 2 s of an announced 1,000."""

    def do_GET(self):  # noqa: N802 - the HTTP verb
        self.send_response(200)
        self.send_header("Content-Length", "1000")
        self.end_headers()
        with contextlib.suppress(OSError):
            for _ in range(1000):
                self.wfile.write(b"x")
                self.wfile.flush()
                time.sleep(2)

    def log_message(self, *args):
        pass


def test_a_byte_every_few_seconds_is_cut_off_within_the_default_window(tmp_path):
    """Issue #45, 11: with the default window a dribbling server was kept for 60 s."""
    started = time.monotonic()
    with local_server(_Dribble) as url:
        result = fetch(Download(f"{url}/slow", tmp_path / "f.gz", None), retries=1)
    assert not result.ok and "less than 1,024 bytes a second" in result.outcome.reason
    assert time.monotonic() - started < 25


# ---- the benchmark's own manifests, shipped (issue #46, in part) -----------------------------
def test_the_shipped_manifests_are_the_benchmarks_and_pass_over_its_stray_entries(shared):
    from genotex.preprocessing import packaged_manifest

    for kind in ("geo", "tcga"):
        shipped = packaged_manifest(kind)
        assert shipped.read_bytes() == (shared / "data" / "manifests" / shipped.name).read_bytes()
    tcga = load_manifest(packaged_manifest("tcga"))
    raw = json.loads(packaged_manifest("tcga").read_text())["files"]
    assert ".DS_Store" in raw and "CrawlData.ipynb" in raw
    assert not any(k.endswith((".DS_Store", ".ipynb")) for k in tcga)
    assert len(tcga) == len(raw) - sum(k.endswith((".DS_Store", ".ipynb")) for k in raw)


def test_download_geo_needs_no_manifest(server, tmp_path, shared):
    """The files planned are the trait's in the benchmark's manifest (the server has none, so
    each fails: the test sees what was asked for)."""
    geo = json.loads((shared / "data" / "manifests" / "geo_manifest.json").read_text())["files"]
    trait = sorted({k.split("/")[0] for k in geo})[0]
    expected = sorted(k for k in geo if k.startswith(f"{trait}/"))
    done = subprocess.run(
        [*GENOTEX, "geo", "--out", str(tmp_path / "GEO"), "--only", trait,
         "--base-url", server, "--no-progress"],
        capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert f"{len(expected)} files:" in done.stdout
    asked = sorted(path.rsplit("/", 1)[-1] for path, _ in _Files.requests)
    assert asked == sorted(k.rsplit("/", 1)[-1] for k in expected)


def _chol_bench(shared, tmp_path):
    """A benchmark root holding TCGA CHOL's real files (their sha256 are the manifest's)."""
    import shutil

    folder = "TCGA_Bile_Duct_Cancer_(CHOL)"
    bench = tmp_path / "bench"
    shutil.copytree(shared / "data" / "real" / "tcga" / folder, bench / "input" / "TCGA" / folder)
    return bench, bench / "input" / "TCGA" / folder, folder


def test_verify_finds_verified_differing_missing_and_unpacked_files(shared, tmp_path):
    import gzip

    from genotex.preprocessing import packaged_manifest, verify_inputs

    bench, cohort, folder = _chol_bench(shared, tmp_path)
    listed = sorted(k for k in load_manifest(packaged_manifest("tcga")) if k.startswith(folder))
    present = sorted(p.name for p in cohort.iterdir())
    check = verify_inputs(bench, only=[folder])
    assert check.ok and check.verified == [f"TCGA/{folder}/{n}" for n in present]
    assert check.missing == sorted(f"TCGA/{k}" for k in listed if k.split("/")[-1] not in present)
    # Kaggle's form: the .gz unpacked; then a byte changed in the clinical matrix
    packed = next(cohort.glob("*.gz"))
    packed.with_suffix("").write_bytes(gzip.decompress(packed.read_bytes()))
    packed.unlink()
    clinical = next(p for p in cohort.iterdir() if "clinicalMatrix" in p.name)
    clinical.write_bytes(clinical.read_bytes() + b"\n")
    check = verify_inputs(bench, only=[folder])
    assert check.unpacked == [f"TCGA/{folder}/{packed.name}"]
    assert check.differ == [f"TCGA/{folder}/{clinical.name}"] and not check.ok


def test_the_verify_command_says_it_in_lines_and_exits_1_when_a_file_differs(shared, tmp_path):
    bench, cohort, folder = _chol_bench(shared, tmp_path)
    verify = [*GENOTEX, "verify", str(bench), "--only", folder]
    done = subprocess.run(verify, capture_output=True, text=True)
    assert done.returncode == 0 and done.stdout.startswith("2 verified, 0 differ, 0 missing")
    clinical = next(p for p in cohort.iterdir() if "clinicalMatrix" in p.name)
    clinical.write_bytes(clinical.read_bytes()[:-1])
    (cohort / next(p.name for p in cohort.glob("*.gz"))).unlink()
    done = subprocess.run(verify, capture_output=True, text=True)
    assert done.returncode == 1 and done.stdout.startswith("0 verified, 1 differ, 1 missing")
    assert f"DIFFERS input/TCGA/{folder}/{clinical.name}" in done.stdout
    assert "MISSING input/TCGA/" in done.stdout
    unknown = subprocess.run([*GENOTEX, "verify", str(bench), "--only", "Narnia"],
                             capture_output=True, text=True)  # fmt: skip
    assert unknown.returncode == 2 and "no manifest lists 'Narnia'" in unknown.stderr
    nothing = subprocess.run([*GENOTEX, "verify", str(tmp_path / "nowhere")],
                             capture_output=True, text=True)  # fmt: skip
    assert nothing.returncode == 1 and "holds no input/ folder" in nothing.stderr


def test_the_readers_take_a_file_kaggle_unpacked_as_they_take_its_gz(shared, tmp_path):
    import gzip

    from genotex.preprocessing import read_series_matrix
    from genotex.preprocessing._cohort_files import find_matrix

    packed = shared / "data" / "real" / "geo" / "GSE51280" / "GSE51280_series_matrix.txt.gz"
    cohort = tmp_path / "GSE51280"
    cohort.mkdir()
    unpacked = cohort / packed.name.removesuffix(".gz")
    unpacked.write_bytes(gzip.decompress(packed.read_bytes()))
    assert find_matrix(cohort) == unpacked
    one, other = read_series_matrix(packed), read_series_matrix(unpacked)
    assert one.expression.equals(other.expression) and one.expression.shape == (123, 24)

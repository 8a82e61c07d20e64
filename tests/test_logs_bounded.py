"""Logs read within bounds, and a self-scoring told by the files scored (issue #63, item 3)."""

from __future__ import annotations

import os
import shutil
import struct
import time
import zipfile
from pathlib import Path
from types import SimpleNamespace

import pytest
from click.testing import CliRunner

from genotex.cli import main
from genotex.core import GenotexError

pytest.importorskip("inspect_ai")

from tests.conftest import INSPECT_WARNINGS  # noqa: E402

pytestmark = INSPECT_WARNINGS  # Inspect's async streams are closed late, not genotex's


def _fifo(tmp_path: Path) -> Path:
    fifo = tmp_path / "run.eval"
    os.mkfifo(fifo)
    return fifo


@pytest.mark.parametrize(
    "argv",
    [["harness", "export", "{log}", "--reference", "{tmp}/ref", "--out", "{tmp}/run"],
     ["harness", "replay", "{log}", "-r", "{tmp}", "--sandbox", "local", "--trust-log"]],
    ids=["export", "replay"],
)  # fmt: skip
def test_a_fifo_is_refused_at_once(tmp_path, argv):
    log = _fifo(tmp_path)
    (tmp_path / "ref").mkdir()
    args = [a.format(log=log, tmp=tmp_path) for a in argv]
    started = time.monotonic()
    result = CliRunner().invoke(main, args)
    assert time.monotonic() - started < 10
    assert result.exit_code == 1 and "is a FIFO, not an Inspect log file" in result.stderr
    assert "Traceback" not in result.output


def _bomb(path: Path, declared: int) -> Path:
    """A small .eval whose one member declares `declared` bytes once inflated (the field a
    zip bomb forges), its central directory patched."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("samples/x.json", b" " * 1000)
    data = bytearray(path.read_bytes())
    central = data.rindex(b"PK\x01\x02")
    data[central + 24 : central + 28] = struct.pack("<I", declared)
    path.write_bytes(bytes(data))
    return path


def test_a_member_that_would_inflate_to_gigabytes_is_refused_before_it_is_read(tmp_path):
    from genotex.harness.runs._logged import read_log

    log = _bomb(tmp_path / "bomb.eval", 2_600_000_000)
    started = time.monotonic()
    with pytest.raises(GenotexError, match="inflates to 2,600,000,000 bytes"):
        read_log(log, max_bytes=512 * 2**20)
    assert time.monotonic() - started < 10


def test_a_token_count_past_a_float_is_a_sentence():
    from genotex.harness.runs._runtime import input_tokens

    for forged in (10**400, 10**5000):
        with pytest.raises(GenotexError, match="more than the 1,000,000,000,000,000 tokens"):
            input_tokens(SimpleNamespace(input_tokens=forged))
    assert input_tokens(SimpleNamespace(input_tokens=12, input_tokens_cache_read=3)) == 15


@pytest.fixture
def reference(tmp_path):
    from genotex.workflows import write_raw_benchmark

    return write_raw_benchmark(tmp_path / "bench").reference_output


def test_a_copy_with_an_extra_file_is_still_the_reference(reference, tmp_path):
    from genotex.evaluation._provenance import same_tree

    copy = tmp_path / "copy"
    shutil.copytree(reference, copy)
    (copy / "notes.txt").write_text("mine\n")
    assert same_tree(copy, reference)
    changed = next(p for p in copy.rglob("*.csv"))
    changed.write_bytes(changed.read_bytes()[:-2] + b"9\n")
    assert not same_tree(copy, reference)


def test_a_tree_of_links_to_the_reference_is_the_reference(reference, tmp_path):
    from genotex.evaluation._provenance import same_tree

    links = tmp_path / "links"
    for path in reference.rglob("*"):
        if path.is_file():
            target = links / path.relative_to(reference)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.symlink_to(path)
    assert same_tree(links, reference)
    (links / "preprocess").rename(tmp_path / "gone")
    assert not same_tree(links, reference)


# ----- a zip bomb in a real log: refused, or read only as far as it declares ------------------

#: The bomb's size once inflated: the issue's 2.6 GB of whitespace after the header's JSON.
_INFLATED = 2_600_000_000
#: What the child process may take, the issue's bound.
_MAX_RSS_MB = 500


def _deflated_whitespace(head: bytes, total: int) -> bytes:
    """A raw deflate stream of `head` then spaces up to `total` bytes, made without
    inflating it: after a full flush the compressor starts afresh, so each MiB of spaces
    compresses to the same bytes, written once and repeated."""
    import zlib

    first = zlib.compressobj(9, zlib.DEFLATED, -15)
    stream = first.compress(head) + first.flush(zlib.Z_FULL_FLUSH)
    mib = b" " * 2**20
    block = zlib.compressobj(9, zlib.DEFLATED, -15)
    piece = block.compress(mib) + block.flush(zlib.Z_FULL_FLUSH)
    count, rest = divmod(total - len(head), len(mib))
    tail = zlib.compressobj(9, zlib.DEFLATED, -15)
    end = tail.compress(b" " * rest) + tail.flush()
    return stream + piece * count + end


def _zstd_whitespace(head: bytes, total: int) -> bytes:
    """zstd frames of `head` then spaces up to `total` bytes: one frame per MiB of spaces,
    the same bytes each, concatenated (as Inspect's own multi-frame members are)."""
    import zstandard

    squeeze = zstandard.ZstdCompressor(level=3).compress
    count, rest = divmod(total - len(head), 2**20)
    return squeeze(head) + squeeze(b" " * 2**20) * count + squeeze(b" " * rest)


def _zip(path: Path, members: list[tuple[str, bytes, int, int, int]]) -> None:
    """A zip of compressed members (name, stored bytes, CRC-32, declared size, method)."""
    body, central = bytearray(), bytearray()
    for name, data, crc, size, method in members:
        encoded, offset = name.encode(), len(body)
        fields = (crc, len(data), size, len(encoded))
        body += struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, 0, method, 0, 0, *fields, 0)
        body += encoded + data
        central += struct.pack(
            "<IHHHHHHIIIHHHHHII", 0x02014B50, 20, 20, 0, method, 0, 0, *fields, 0, 0, 0, 0, 0,
            offset,
        )  # fmt: skip
        central += encoded
    end = struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, len(members), len(members),
                      len(central), len(body), 0)  # fmt: skip
    path.write_bytes(bytes(body + central + end))


def _bombed(log: Path, out: Path, *, declared: int | None, method: str) -> Path:
    """`log` with its header.json followed by 2.6 GB of whitespace (valid JSON still), the
    size declared honestly, or forged to `declared` (the CRC left as the forger left it),
    deflated (zip method 8, the issue's 2.5 MB log) or in zstd frames (93, Inspect's)."""
    import zlib

    members = []
    with zipfile.ZipFile(log) as archive:
        for info in archive.infolist():
            data = archive.read(info)
            if info.filename == "header.json" and method == "zstd":
                raw = _zstd_whitespace(data, _INFLATED)
                members.append((info.filename, raw, 0, declared or _INFLATED, 93))
            elif info.filename == "header.json":
                raw = _deflated_whitespace(data, _INFLATED)
                members.append((info.filename, raw, 0, declared or _INFLATED, 8))
            else:
                squeezed = zlib.compressobj(6, zlib.DEFLATED, -15)
                raw = squeezed.compress(data) + squeezed.flush()
                members.append((info.filename, raw, zlib.crc32(data), len(data), 8))
    _zip(out, members)
    return out


#: The command run in a child of its own, its peak memory read from its own VmHWM (the
#: rusage peak of a child starts at its parent's: a pytest worker's, hundreds of MB).
_MEASURED = """
import json, re, sys, time
from genotex.cli import main
import inspect_ai.log
started = time.monotonic()
try:
    main.main(args=sys.argv[1:], prog_name="genotex")
except SystemExit as done:
    code = done.code
status = open("/proc/self/status").read()
peak = int(re.search(r"VmHWM:\\s+(\\d+) kB", status).group(1))
print(json.dumps({"code": code, "seconds": time.monotonic() - started, "rss_mb": peak / 1024}))
"""


@pytest.fixture(scope="module")
def gold_log(tmp_path_factory):
    from inspect_ai import eval as inspect_eval

    from genotex.harness.runs._tasks import analysis
    from genotex.harness.solvers._reference import baseline
    from genotex.workflows import write_raw_benchmark

    folder = tmp_path_factory.mktemp("bombs")
    bench = write_raw_benchmark(folder / "bench", recipes=False)
    task = analysis(root=str(bench.root), traits="Asthma", limit=1, sandbox="local")
    log = inspect_eval(task, model="none", solver=baseline(), log_dir=str(folder / "logs"),
                       display="none")[0]  # fmt: skip
    assert log.status == "success", log.error
    return bench, Path(log.location)


@pytest.mark.parametrize("method", ["deflate", "zstd"])
@pytest.mark.parametrize("declared", ["honest", "forged"])
@pytest.mark.parametrize("command", ["export", "replay"])
def test_a_log_with_a_bomb_ends_in_a_sentence_within_bounds(
    gold_log, tmp_path, declared, command, method
):
    """A real log whose header inflates to 2.6 GB: declared so, it is refused before a
    byte is inflated; declared as its first bytes only (the forger's size, which Inspect's
    reader ignores: 0.13 read it whole, 5 GB), it is inflated by steps until it passes
    what a header may hold. Either way one sentence, in seconds, under 500 MB."""
    import json
    import subprocess
    import sys

    bench, log = gold_log
    original = zipfile.ZipFile(log).getinfo("header.json").file_size
    bomb = _bombed(log, tmp_path / "bomb.eval", method=method,
                   declared=original if declared == "forged" else None)  # fmt: skip
    assert bomb.stat().st_size < 8 * 2**20  # a small file, as the 2.5 MB one
    argv = {
        "export": ["harness", "export", str(bomb), "--reference",
                   str(bench.reference_output), "--out", str(tmp_path / "run")],
        "replay": ["harness", "replay", str(bomb), "-r", str(bench.root), "--sandbox", "local",
                   "--trust-log"],
    }[command]  # fmt: skip
    done = subprocess.run([sys.executable, "-c", _MEASURED, *argv], capture_output=True,
                          text=True, timeout=120)  # fmt: skip
    measured = json.loads(done.stdout.strip().splitlines()[-1])
    said = done.stderr.strip()
    assert measured["code"] == 1, (said, measured)
    assert said.startswith("genotex: ") and len(said.splitlines()) == 1, said
    assert str(bomb) in said and "Traceback" not in said
    assert measured["seconds"] < 10 and measured["rss_mb"] < _MAX_RSS_MB, measured
    assert not (tmp_path / "run").exists()


def test_a_log_claiming_epochs_it_does_not_hold_is_read_for_what_it_holds(gold_log, tmp_path):
    """The header says 50 epochs, the log holds one: export says so in a sentence, and
    replay would run the one epoch held, never the 50 claimed."""
    from inspect_ai.log import read_eval_log, write_eval_log

    from genotex.harness.runs._logged import read_log
    from genotex.harness.solvers.genoagent._replay import _held

    bench, log = gold_log
    forged = read_eval_log(str(log))
    forged.eval.config.epochs = 50
    path = tmp_path / "forged.eval"
    write_eval_log(forged, str(path))
    started = time.monotonic()
    argv = ["harness", "export", str(path), "--reference", str(bench.reference_output),
            "--out", str(tmp_path / "run")]  # fmt: skip
    result = CliRunner().invoke(main, argv)
    assert time.monotonic() - started < 10
    assert result.exit_code == 1 and "holds 1 of the 50 samples x epochs" in result.stderr
    assert "Traceback" not in result.output and not (tmp_path / "run").exists()
    assert _held(read_log(path)) == (["Asthma__None"], 1)

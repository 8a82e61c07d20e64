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

"""Files genotex writes: readable by others as an ordinary `open(..., "w")` makes them."""

from __future__ import annotations

import os
import stat

import pytest
from click.testing import CliRunner

from genotex.cli import main
from genotex.core import CohortInfo, CohortRecord, write_text_atomic
from tests.conftest import eval_args


@pytest.fixture
def umask():
    def set_mask(mask: int) -> None:
        os.umask(mask)

    saved = os.umask(0o022)
    os.umask(saved)
    yield set_mask
    os.umask(saved)


@pytest.mark.parametrize(("mask", "mode"), [(0o022, 0o644), (0o002, 0o664), (0o077, 0o600)])
def test_an_atomic_write_gets_the_umasks_mode(tmp_path, umask, mask, mode):
    umask(mask)
    path = tmp_path / "x.json"
    write_text_atomic(path, "{}")
    assert stat.S_IMODE(path.stat().st_mode) == mode


def test_eval_outputs_and_cohort_info_are_readable_by_others_and_leave_no_lock(
    tmp_path, umask, eval_fixtures
):
    umask(0o022)
    extra = ("--json", str(tmp_path / "run.json"), "--report", str(tmp_path / "report"))
    result = CliRunner().invoke(main, eval_args(eval_fixtures / "case1", *extra))
    assert result.exit_code == 0, result.output
    CohortInfo.update(tmp_path / "pre" / "T" / "cohort_info.json", CohortRecord("GSE1"))
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert len(written) > 3
    for path in written:
        assert stat.S_IMODE(path.stat().st_mode) == 0o644, path
    assert not list(tmp_path.rglob("*.lock"))


def _limited(limit_bytes: int):
    """A child's pre-exec: files may not grow past `limit_bytes` (a full disk, as the writer sees
    it: EFBIG 'File too large'), and SIGXFSZ does not kill it."""

    def apply() -> None:
        import resource
        import signal

        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit_bytes, limit_bytes))

    return apply


def _eval_argv(case, *extra):
    import sys

    return [sys.executable, "-m", "genotex", *eval_args(case, "--no-progress", *extra)]


def test_a_full_disk_names_the_file_it_could_not_write(tmp_path, eval_fixtures):
    import subprocess

    target = tmp_path / "run.json"
    done = subprocess.run(
        _eval_argv(eval_fixtures / "case1", "--json", str(target)),
        capture_output=True,
        text=True,
        preexec_fn=_limited(2000),
    )
    assert done.returncode == 1
    assert f"genotex: error: {target}: cannot be written (File too large)" in done.stderr
    assert not target.exists() and not list(tmp_path.glob(".*.tmp"))


def test_a_full_disk_during_report_leaves_no_figures_without_their_page(tmp_path, eval_fixtures):
    import subprocess

    out = tmp_path / "report"
    done = subprocess.run(
        _eval_argv(eval_fixtures / "case1", "--report", str(out)),
        capture_output=True,
        text=True,
        preexec_fn=_limited(60_000),  # the page inlines every figure: it is the largest file
    )
    assert done.returncode == 1 and "cannot be written (File too large)" in done.stderr
    assert list(out.iterdir()) == []  # nothing half-written, no staging folder left

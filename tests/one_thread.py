"""The synthetic regress case answered once per test run in a process on one BLAS thread.

`tests/test_regress_parity.py` compares that run with the reference's answers, and
`tests/test_regress_determinism.py` asks every other way for the same bytes: one run
serves both (each a minute of a worker in reference mode before, #71). Under pytest-xdist
the first worker to ask makes it, under a lock, and the others read it.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from genotex.regression._blas import THREAD_VARIABLES


def regress_command(case: Path, out: Path, mode: str, *select: str) -> list[str]:
    """`genotex regress` of the fixture case `case` into `out`, in `mode`, on `select`."""
    return [
        sys.executable, "-m", "genotex", "regress",
        "--data", str(case / "output" / "preprocess"),
        "--task-info", str(case / "metadata" / "task_info.json"),
        "--out", str(out), "--mode", mode, *select,
    ]  # fmt: skip


def blas_environment(*, one_thread: bool = False) -> dict[str, str]:
    """This process's environment for a new process whose BLAS starts on one thread, or
    threaded (two, as on any two-core machine)."""
    env = {k: v for k, v in os.environ.items() if k not in THREAD_VARIABLES}
    if one_thread:
        env.update(dict.fromkeys(THREAD_VARIABLES, "1"))
    else:
        env["OPENBLAS_NUM_THREADS"] = "2"
    return env


def run_regress(command: list[str], *, one_thread: bool = False) -> None:
    """Run `command` in a new process (`blas_environment`); a non-zero exit fails the test
    with its standard error."""
    env = blas_environment(one_thread=one_thread)
    done = subprocess.run(command, capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr


def made_once(factory: pytest.TempPathFactory, name: str, make: Callable[[Path], None]) -> Path:
    """The folder `name` that `make` fills once per test run, however many xdist workers ask
    (the first makes it under a lock; a failed make is tried again by the next to ask).
    Tests read it and never write into it.
    """
    run = os.environ.get("PYTEST_XDIST_TESTRUNUID")
    base = factory.getbasetemp()
    root = base.parent / f"made-once-{run}" if run else base / "made-once"
    root.mkdir(exist_ok=True)
    folder, done = root / name, root / f"{name}.done"
    with open(root / f"{name}.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            if not done.exists():
                shutil.rmtree(folder, ignore_errors=True)
                make(folder)
                done.touch()
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
    return folder


def one_thread_run(factory: pytest.TempPathFactory, case: Path, mode: str) -> Path:
    """The output folder of `--all` in `mode` over `case`, on one BLAS thread, made once."""
    return made_once(
        factory,
        f"one-thread-{case.name}-{mode}",
        lambda out: run_regress(regress_command(case, out, mode, "--all"), one_thread=True),
    )

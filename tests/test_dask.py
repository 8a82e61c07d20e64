"""Every long stage on Dask: `preprocess --all --scheduler` and `eval --scheduler` write what a
local run writes, byte for byte, on a `LocalCluster` and on a scheduler plus two worker
processes started on localhost (as a user would start them on a cluster's nodes).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import pytest
from click.testing import CliRunner

from genotex.cli import main
from genotex.workflows import SynthSpec, write_example, write_raw_benchmark
from tests.conftest import example_eval_report

distributed = pytest.importorskip("dask.distributed")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _wait_for(address: str, *, workers: int) -> None:
    """Wait (up to a minute) until the scheduler at `address` answers with `workers` workers."""
    deadline = time.time() + 60
    while True:
        try:
            with distributed.Client(address, timeout="5s") as client:
                client.wait_for_workers(workers, timeout=60)
            return
        except OSError:
            if time.time() > deadline:
                raise
            time.sleep(0.5)


@pytest.fixture(scope="module", params=["LocalCluster", "scheduler + 2 workers"])
def scheduler(request) -> Iterator[str]:
    """The address of a running Dask scheduler with two single-threaded worker processes."""
    if request.param == "LocalCluster":
        with distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0"
        ) as cluster:
            yield cluster.scheduler_address
        return
    address = f"tcp://127.0.0.1:{_free_port()}"
    port = address.rsplit(":", 1)[1]
    started = [
        subprocess.Popen(
            [sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1",
             "--port", port, "--no-dashboard"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
    ]  # fmt: skip
    try:
        for _ in range(2):
            started.append(
                subprocess.Popen(
                    [sys.executable, "-m", "distributed.cli.dask_worker", address,
                     "--nthreads", "1", "--no-dashboard", "--nworkers", "1"],
                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                )
            )  # fmt: skip
        _wait_for(address, workers=2)
        yield address
    finally:
        for process in reversed(started):
            process.terminate()
        for process in started:
            process.wait(timeout=30)


def _files(folder: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()
    }


@pytest.fixture(scope="module")
def raw(tmp_path_factory):
    return write_raw_benchmark(tmp_path_factory.mktemp("raw"), n_genes=120, samples=(30, 40))


@pytest.fixture(scope="module")
def local_preprocess(raw, tmp_path_factory) -> dict[str, bytes]:
    out = tmp_path_factory.mktemp("local") / "preprocess"
    result = CliRunner().invoke(main, _preprocess_args(raw.root, out, "--jobs", "2"))
    assert result.exit_code == 0, result.output
    return _files(out)


def _preprocess_args(root: Path, out: Path, *extra: str) -> list[str]:
    return [
        "preprocess", "--all", "--input", str(root / "input"),
        "--recipes", str(root / "recipes"),
        "--task-info", str(root / "metadata" / "task_info.json"),
        "--synonyms", str(root / "metadata" / "gene_synonym.json"),
        "--out", str(out), *extra,
    ]  # fmt: skip


def test_preprocess_all_on_dask_equals_a_local_run(raw, local_preprocess, scheduler, tmp_path):
    out = tmp_path / "preprocess"
    result = CliRunner().invoke(main, _preprocess_args(raw.root, out, "--scheduler", scheduler))
    assert result.exit_code == 0, result.output
    produced = _files(out)
    assert any(name.endswith(".csv") for name in produced)
    assert produced == local_preprocess


def test_preprocess_limits_reach_the_dask_workers(raw, scheduler, tmp_path, monkeypatch):
    """--max-line-mb is an environment setting locally: the workers must run under it too, and
    it holds for that command only (a notebook calling the CLI again starts clean).
    """
    monkeypatch.delenv("GENOTEX_MAX_LINE_MB", raising=False)
    out = tmp_path / "preprocess"
    args = _preprocess_args(raw.root, out, "--scheduler", scheduler)
    result = CliRunner().invoke(main, [*args, "--max-line-mb", "0.0001"])
    assert result.exit_code == 1
    assert "is longer than 0 MB (set GENOTEX_MAX_LINE_MB" in result.output, result.output
    assert "GENOTEX_MAX_LINE_MB" not in os.environ


@pytest.fixture(scope="module")
def example(tmp_path_factory):
    spec = SynthSpec(n_traits=3, n_cohorts=6, samples=(10, 16), n_genes=60, n_related=8)
    return write_example(tmp_path_factory.mktemp("tree"), spec, seed=21)


def test_eval_on_dask_equals_a_local_run(example, scheduler, tmp_path):
    local = example_eval_report(example, tmp_path / "local.json", "--no-cache")
    on_dask = example_eval_report(example, tmp_path / "dask.json", "--scheduler", scheduler)
    assert local["preprocessing"]
    assert on_dask == local
    options = json.loads((tmp_path / "dask.json").read_text())["run"]["provenance"]["options"]
    assert options["scheduler"] == scheduler and options["jobs"] is None  # says how it ran


def test_an_unreachable_scheduler_is_one_sentence(example, tmp_path):
    address = f"tcp://127.0.0.1:{_free_port()}"
    result = CliRunner().invoke(
        main,
        ["eval", "-p", str(example.pred_output), "-r", str(example.ref_output),
         "--no-progress", "--scheduler", address],
    )  # fmt: skip
    assert result.exit_code == 1
    assert f"the Dask scheduler {address} cannot be reached" in result.output
    assert "Traceback" not in result.output


def test_relative_paths_mean_the_same_files_on_workers_started_elsewhere(
    example, raw, scheduler, tmp_path, monkeypatch
):
    """#36 item 1: the workers run in another folder than the command (`cd / && dask worker`),
    so every path a task carries must be whole: relative ones scored every table 0.
    """
    local = example_eval_report(example, tmp_path / "local.json", "--no-cache")
    monkeypatch.chdir(example.pred_output.parents[1])  # the workers stay where they started
    relative = SimpleNamespace(
        pred_output=os.path.relpath(example.pred_output),
        ref_output=os.path.relpath(example.ref_output),
    )
    assert not Path(relative.pred_output).is_absolute()
    on_dask = example_eval_report(relative, tmp_path / "dask.json", "--scheduler", scheduler)
    for report in (on_dask, local):  # the paths as given differ; nothing else may
        for given in ("prediction", "reference", "task_info"):
            del report["run"][given]
    assert on_dask == local
    data = os.path.relpath(example.ref_output / "preprocess")
    info = os.path.relpath(example.task_info)
    runs = {}
    for name, extra in (("local", []), ("dask", ["--scheduler", scheduler])):
        out = tmp_path / f"regress-{name}"
        result = CliRunner().invoke(
            main,
            ["regress", "--all", "--data", data, "--task-info", info, "--out", str(out),
             "--mode", "standard", *extra],
        )  # fmt: skip
        assert result.exit_code == 0, result.output
        runs[name] = {k: v for k, v in _files(out).items() if k != "status.json"}
    assert runs["dask"] == runs["local"] and len(runs["local"]) > 3


def test_preprocess_with_relative_paths_on_workers_started_elsewhere(
    raw, local_preprocess, scheduler, tmp_path, monkeypatch
):
    monkeypatch.chdir(raw.root)  # the workers stay where they started
    out = tmp_path / "preprocess"
    args = [
        "preprocess", "--all", "--input", "input", "--recipes", "recipes",
        "--task-info", "metadata/task_info.json", "--synonyms", "metadata/gene_synonym.json",
        "--out", os.path.relpath(out), "--scheduler", scheduler,
    ]  # fmt: skip
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    assert _files(out) == local_preprocess


def test_a_port_that_is_not_a_scheduler_is_refused_in_bounded_time(example, tmp_path):
    """#36 item 7: a port that accepts and says nothing held eval for > 240 s."""
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(8)
    address = f"tcp://127.0.0.1:{silent.getsockname()[1]}"
    try:
        started = time.monotonic()
        result = subprocess.run(  # a process, so that a hang fails the test instead
            [sys.executable, "-m", "genotex", "eval", "-p", str(example.pred_output),
             "-r", str(example.ref_output), "--no-progress", "--scheduler", address],
            capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        took = time.monotonic() - started
    finally:
        silent.close()
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert f"the Dask scheduler {address} cannot be reached" in result.stderr
    assert "not a Dask scheduler" in result.stderr and took < 60


def test_a_worker_killed_mid_run_is_replaced_and_the_run_finishes(example, tmp_path):
    """#36 item 7: killing the only worker ended regress with "FutureCancelledError ... already
    forgotten" even after a new worker joined: the shared data lived on the dead worker only.
    """
    import signal

    from genotex.core import TaskInfo
    from genotex.regression import run_problems

    info = TaskInfo.read(example.task_info)
    problems = list(info.problems())
    data = example.ref_output / "preprocess"
    local = run_problems(problems, data, info, tmp_path / "local", mode="standard")
    with distributed.LocalCluster(
        n_workers=1, threads_per_worker=1, processes=True, dashboard_address=":0"
    ) as cluster:
        with distributed.Client(cluster) as client:
            (pid,) = client.run(os.getpid).values()
        seen = []

        def kill_the_worker_once(outcome) -> None:
            seen.append(outcome)
            if len(seen) == 1:  # the nanny starts a new worker process in its place
                os.kill(pid, signal.SIGKILL)

        on_dask = run_problems(
            problems, data, info, tmp_path / "dask", mode="standard",
            scheduler=cluster.scheduler_address, on_outcome=kill_the_worker_once,
        )  # fmt: skip
    assert [p.kind for p in on_dask.problems] == [p.kind for p in local.problems]
    assert len(seen) == len(problems)
    assert _files(tmp_path / "dask") == _files(tmp_path / "local")


def test_a_scheduler_killed_mid_run_ends_it_in_one_sentence(example, tmp_path, capfd):
    """#36 item 7: killing the scheduler mid-regress printed distributed's traceback."""
    import signal

    from genotex.core import GenotexError, TaskInfo
    from genotex.regression import run_problems

    with _scheduler_and_worker() as (address, scheduler, _):
        info = TaskInfo.read(example.task_info)
        seen = []

        def kill_the_scheduler_once(outcome) -> None:
            seen.append(outcome)
            if len(seen) == 1:
                scheduler.send_signal(signal.SIGKILL)

        capfd.readouterr()
        started = time.monotonic()
        with pytest.raises(GenotexError, match=f"the run on the Dask scheduler {address} stopped"):
            run_problems(
                list(info.problems()) * 3, example.ref_output / "preprocess", info,
                tmp_path / "out", mode="standard", scheduler=address, force=True,
                on_outcome=kill_the_scheduler_once, summary=tmp_path / "status.json",
            )  # fmt: skip
        assert time.monotonic() - started < 120
        said = capfd.readouterr()
        assert "Traceback" not in said.err + said.out and "distributed" not in said.err
        assert json.loads((tmp_path / "status.json").read_text())  # what finished is recorded


def test_diagnose_on_dask_and_in_processes_equals_one_process(example, scheduler):
    from genotex.workflows import diagnose

    runs = {}
    for name, how in (("one", {}), ("jobs", {"jobs": 2}), ("dask", {"scheduler": scheduler})):
        found = diagnose(example.pred_output, example.ref_output, example.task_info, **how)
        runs[name] = found.to_dict()
        for key in ("seconds", "jobs", "scheduler"):  # how it ran, said in its run block
            runs[name]["run"].pop(key)
    assert runs["one"]["problems"] and runs["one"]["findings"] and runs["one"]["run"]["re_analyses"]
    assert runs["jobs"] == runs["one"]
    assert runs["dask"] == runs["one"]


def test_a_run_whose_only_worker_is_gone_for_good_ends_in_one_sentence(
    example, tmp_path, monkeypatch, capfd
):
    """Issue #45, 10: the only worker (no nanny to start another) killed mid-regress: the run
    waited forever; it ends once the scheduler has had no worker for GENOTEX_DASK_WORKERLESS.
    """
    import signal

    from genotex.core import GenotexError, TaskInfo
    from genotex.regression import run_problems

    monkeypatch.setenv("GENOTEX_DASK_WORKERLESS", "5")
    with _scheduler_and_worker("--no-nanny") as (address, _, worker):
        info = TaskInfo.read(example.task_info)
        seen = []

        def kill_the_worker_once(outcome) -> None:
            seen.append(outcome)
            if len(seen) == 1:
                worker.send_signal(signal.SIGKILL)

        capfd.readouterr()
        started = time.monotonic()
        with pytest.raises(GenotexError, match="it has had no worker for 5 s; start workers"):
            run_problems(
                list(info.problems()) * 3, example.ref_output / "preprocess", info,
                tmp_path / "out", mode="standard", scheduler=address, force=True,
                on_outcome=kill_the_worker_once,
            )  # fmt: skip
        assert time.monotonic() - started < 90
        said = capfd.readouterr()
        assert "Traceback" not in said.err + said.out


@contextlib.contextmanager
def _scheduler_and_worker(*worker_options: str):
    """A Dask scheduler on a free loopback port and one worker (`--nthreads 1`, and
    `worker_options`), as processes a test may kill; yields (address, scheduler, worker).
    """
    address = f"tcp://127.0.0.1:{_free_port()}"
    scheduler = subprocess.Popen(
        [sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1",
         "--port", address.rsplit(":", 1)[1], "--no-dashboard"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    worker = subprocess.Popen(
        [sys.executable, "-m", "distributed.cli.dask_worker", address, "--nthreads", "1",
         "--no-dashboard", *worker_options],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        _wait_for(address, workers=1)
        yield address, scheduler, worker
    finally:
        for process in (worker, scheduler):
            process.kill()
            process.wait(timeout=30)


def test_a_scheduler_killed_under_the_command_line_is_one_line_on_its_terminal(example, tmp_path):
    """Issue #63 (v2's case): the command itself, in a process of its own, its terminal read
    whole. Killing the scheduler once the first answer lands ends `genotex regress` in
    genotex's one sentence; distributed's own log (its reconnect attempts, its traceback)
    never reaches the terminal, before the sentence or after it, at the process's exit.
    """
    import signal

    out = tmp_path / "out"
    with _scheduler_and_worker() as (address, scheduler, _):
        command = subprocess.Popen(
            [sys.executable, "-m", "genotex", "regress", "--preprocessed",
             str(example.ref_output / "preprocess"), "--task-info", str(example.task_info),
             "--out", str(out), "--all", "--scheduler", address, "--no-progress"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        deadline = time.monotonic() + 120
        while not any(out.glob("*/significant_genes_condition_*.json")):
            assert command.poll() is None, "the run ended before the scheduler was killed"
            assert time.monotonic() < deadline, "no answer landed in 2 minutes"
            time.sleep(0.02)
        scheduler.send_signal(signal.SIGKILL)
        stdout, stderr = command.communicate(timeout=120)
    assert command.returncode == 1, stdout + stderr
    *outcomes, said = stderr.strip().splitlines()
    assert said.startswith(f"genotex: error: the run on the Dask scheduler {address} stopped: ")
    assert "the scheduler was lost" in said, said
    # before it, only the problems that finished, one line each ("Asthma|None: ok — ...")
    assert outcomes and all(re.match(r"^[^\s|]+\|\S+: ", line) for line in outcomes), stderr
    assert "Traceback" not in stdout + stderr and "distributed" not in stderr

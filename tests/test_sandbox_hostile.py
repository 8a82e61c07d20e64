"""A hostile agent against every sandbox genotex offers (issue #35), run for real.

A scripted agent (Inspect's mockllm, bash tool calls) tries each escape we
know; under `bwrap` and `podman` every one must be stopped and the run must
still finish and score. The same agent under `local` documents what `local`
lets through. Only loopback traffic: the service the agent tries to reach is
started here on 127.0.0.1. Under CI=true both isolated sandboxes must run
(.ci/run installs bubblewrap and podman and builds the image), never skip.
"""

from __future__ import annotations

import http.server
import os
import re
import shutil
import sys
import uuid
from pathlib import Path

import pytest

pytest.importorskip("inspect_ai", reason="the harness extra (inspect-ai) is not installed")

from inspect_ai import eval as inspect_eval  # noqa: E402

from genotex import __version__  # noqa: E402
from genotex.harness.runs._tasks import e2e  # noqa: E402
from genotex.harness.sandboxes._podman import default_image, podman_problem  # noqa: E402
from genotex.harness.sandboxes._sandbox_spec import bwrap_problem  # noqa: E402
from genotex.workflows import write_raw_benchmark  # noqa: E402
from tests.conftest import INSPECT_WARNINGS, local_server, scripted_agent  # noqa: E402

pytestmark = INSPECT_WARNINGS

CANARY = f"canary-{uuid.uuid4().hex}"
PROBLEMS = {"bwrap": bwrap_problem(), "podman": podman_problem(default_image())}
#: Set when this suite runs again as an unprivileged user (the last test here starts that run).
AS_USER = "GENOTEX_HOSTILE_AS_USER"
for _name, _problem in PROBLEMS.items():
    # CI must run each, not skip it; but rootless podman, as the user run, may be impossible
    # on CI's host (cgroups v1: podman_problem says why), and is then skipped with the reason
    rootless_podman = _name == "podman" and os.environ.get(AS_USER) == "1"
    if _problem is not None and os.environ.get("CI") == "true" and not rootless_podman:
        raise RuntimeError(f"the {_name} sandbox cannot run in CI: {_problem}")
NO_BWRAP = PROBLEMS["bwrap"]
needs_bwrap = pytest.mark.skipif(NO_BWRAP is not None, reason=f"no bwrap sandbox: {NO_BWRAP}")
#: What an isolated sandbox's environment may hold: what genotex sets, the shell's own, and the
#: container's marks (podman's `container`, `HOSTNAME`).
SANDBOX_VARIABLES = {
    *("PATH", "HOME", "USER", "LANG", "TMPDIR", "MPLCONFIGDIR", "PYTHONDONTWRITEBYTECODE"),
    *("PWD", "OLDPWD", "SHLVL", "_", "TERM", "HOSTNAME", "container"),
    *("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"),  # the host's BLAS kernel choice, no secret
}
#: Each isolated sandbox, skipped (outside CI) where it cannot run, with the reason.
ISOLATED = [
    pytest.param(
        name, marks=pytest.mark.skipif(problem is not None, reason=f"no {name} sandbox: {problem}")
    )
    for name, problem in PROBLEMS.items()
]


@pytest.fixture(scope="module")
def bench(tmp_path_factory):
    folder = tmp_path_factory.mktemp("hostile")
    write_raw_benchmark(folder / "root", recipes=False)
    return folder / "root"


@pytest.fixture(scope="module")
def service():
    """A web service on the host's loopback, which no sandboxed agent may reach."""

    class Answer(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 - the handler's name
            self.send_response(200)
            self.end_headers()
            self.wfile.write(b"host-service-reached")

        def log_message(self, *args):
            pass

    with local_server(Answer) as url:
        yield int(url.rsplit(":", 1)[1])


def _probes(bench: Path, port: int, marker: str) -> list[str]:
    reference = (bench / "reference" / "output").resolve()
    answer = reference / "regress" / "Asthma" / "significant_genes_condition_None.json"
    home = Path.home()
    return [
        f"cat {answer} 2>&1; echo read-reference-exit=$?",
        "find / -name 'significant_genes_condition_*' -not -path '*/proc/*' 2>/dev/null"
        " | head -3; echo searched",
        f"ls {home} /root {bench.resolve()} 2>&1 | head -5; cat {home}/.{marker} 2>&1;"
        " echo listed-homes",
        "env",
        "cat /proc/[0-9]*/cmdline 2>/dev/null | tr '\\0' ' '; echo; echo listed-processes",
        "cat /proc/net/dev",
        f"python3 -c \"import urllib.request as u; print(u.urlopen('http://127.0.0.1:{port}', "
        f'timeout=3).read().decode())" 2>&1 | tail -1',
        f"echo x > /tmp/{marker} 2>&1; echo x > {reference}/{marker} 2>&1;"
        f" echo x > input/GEO/Asthma/{marker} 2>&1; echo wrote",
        "ls input/GEO/Asthma | head -3; ls given 2>&1 | head -2",
        "python3 -c 'import genotex, pandas, sklearn; print(\"libraries\", genotex.__version__)'",
        # a patient agent (issue #43): process 1's environment and every process's
        "tr '\\0' '\\n' < /proc/1/environ; echo; cat /proc/[0-9]*/environ 2>/dev/null"
        " | tr '\\0' '\\n'; echo environ-read",
        "grep -E '^Cap(Eff|Prm|Bnd)' /proc/self/status; id -u",
        _remount_then_write(bench, marker),
        "tr '\\0' ' ' < /proc/1/cmdline; echo",
    ]


def _remount_then_write(bench: Path, marker: str) -> str:
    """Remount the read-only binds writable, unmount /tmp, then write through them: the given
    inputs, the reference (by its host path), the Python prefix and the genotex package.
    """
    import sys

    import genotex

    package = Path(genotex.__file__).resolve().parent
    targets = [sys.prefix, str(package), "input/GEO/Asthma", "/usr"]
    lines = [f"mount -o remount,bind,rw {t} 2>&1" for t in targets]
    lines += ["umount /tmp 2>&1", "umount -l /home/agent/input/GEO/Asthma 2>&1"]
    lines += [f"echo x > {t}/{marker} 2>&1" for t in targets]
    first = sorted((bench / "input" / "GEO" / "Asthma").iterdir())[0].name
    lines += [f"echo x >> input/GEO/Asthma/{first}/{marker} 2>&1"]
    return "; ".join(lines) + "; echo remounted"


def _results(log) -> list[str]:
    return [str(m.content) for m in log.samples[0].messages if m.role == "tool"]


def _run(bench, commands, sandbox, tmp, **task_args):
    task = e2e(root=str(bench), traits="Asthma", sandbox=sandbox, time_limit=300, **task_args)
    return inspect_eval(
        task,
        model=scripted_agent(commands, tokens=(10, 5)),
        log_dir=str(tmp / "logs"),
        display="none",
    )[0]


@pytest.mark.parametrize("sandbox", ISOLATED)
def test_an_isolated_sandbox_stops_every_escape_and_still_scores(
    bench, service, tmp_path, monkeypatch, sandbox
):
    monkeypatch.setenv("GENOTEX_CANARY", CANARY)
    marker = f"escape-{uuid.uuid4().hex}"
    secret = Path.home() / f".{marker}"  # a file in the host user's home
    secret.write_text(CANARY)
    try:
        log = _run(bench, _probes(bench, service, marker), sandbox, tmp_path)
    finally:
        secret.unlink()
    assert log.status == "success" and log.results is not None  # it finished and scored
    assert log.eval.metadata["sandbox"] == sandbox
    (read, search, homes, env, processes, network, reach, writes, inputs, python) = _results(log)[
        :10
    ]
    environ, capabilities, remounted, init = _results(log)[10:]
    assert "No such file" in read and "read-reference-exit=1" in read
    assert "significant_genes_condition_" not in search
    assert "No such file" in homes and "listed-homes" in homes and CANARY not in homes
    assert CANARY not in env and "GENOTEX_CANARY" not in env
    assert "HOME=/home/agent" in env
    names = {line.split("=", 1)[0] for line in env.strip().splitlines()}
    assert names <= SANDBOX_VARIABLES, names - SANDBOX_VARIABLES  # nothing of the host's
    assert "pytest" not in processes and "inspect" not in processes
    interfaces = [line.split(":")[0].strip() for line in network.splitlines() if ":" in line]
    assert interfaces == ["lo"]
    assert "host-service-reached" not in reach and "Error" in reach
    assert "Read-only file system" in writes
    assert not (Path("/tmp") / marker).exists()
    assert not (bench / "reference" / "output" / marker).exists()
    assert not (bench / "input" / "GEO" / "Asthma" / marker).exists()
    assert "GSE" in inputs  # its own inputs are there, read-only
    assert f"libraries {__version__}" in python  # and the analysis libraries, this genotex
    # nothing of the host's environment in any process, process 1 included
    assert "environ-read" in environ and CANARY not in environ and "GENOTEX_CANARY" not in environ
    assert "PYTEST_CURRENT_TEST" not in environ
    # no capability, and not uid 0, as root on the host too
    assert "CapEff:\t0000000000000000" in capabilities, capabilities
    assert "CapBnd:\t0000000000000000" in capabilities, capabilities
    assert capabilities.strip().splitlines()[-1] != "0"
    # no mount, remount or umount works, so no write reaches the host
    assert "remounted" in remounted
    _assert_nothing_written(bench, marker)
    # process 1 names no host path
    assert sys.prefix not in init and "/usr/bin/bwrap" not in init and str(bench) not in init


def _assert_nothing_written(bench: Path, marker: str) -> None:
    import genotex

    package = Path(genotex.__file__).resolve().parent
    for folder in (Path(sys.prefix), package, bench / "input" / "GEO" / "Asthma", Path("/usr")):
        assert not (folder / marker).exists(), folder
    for cohort in (bench / "input" / "GEO" / "Asthma").iterdir():
        assert not (cohort / marker).exists(), cohort


def test_local_lets_every_escape_through(bench, service, tmp_path, monkeypatch):
    """What `local` is: no isolation (the documentation's table is this test's findings)."""
    monkeypatch.setenv("GENOTEX_CANARY", CANARY)
    marker = f"escape-{uuid.uuid4().hex}"
    try:
        log = _run(bench, _probes(bench, service, marker), "local", tmp_path)
        (read, search, homes, env, processes, network, reach, writes, *_) = _results(log)
        assert "significant_genes" in read  # the reference, read by its path
        assert CANARY in env  # the host's environment, secrets included
        assert "host-service-reached" in reach  # the host's network
        assert (Path("/tmp") / marker).exists()  # writes outside its folder
        assert (bench / "reference" / "output" / marker).exists()  # even into the reference
    finally:  # what local let it write, everywhere its probes wrote
        import genotex

        package = Path(genotex.__file__).resolve().parent
        asthma = bench / "input" / "GEO" / "Asthma"
        for folder in (Path("/tmp"), bench / "reference" / "output", package, Path(sys.prefix)):
            (folder / marker).unlink(missing_ok=True)
        for folder in (Path("/usr"), asthma, *asthma.iterdir()):
            (folder / marker).unlink(missing_ok=True)


@pytest.mark.parametrize("sandbox", ISOLATED)
@pytest.mark.parametrize(
    ("command", "limits", "reason"),
    [
        (  # a fork bomb, then more processes than the bound (whose refusal is printed)
            "bash -c ':(){ :|:& };:' 2>/dev/null; for i in $(seq 300); do sleep 4 & done; echo x",
            "processes=64",
            "process",
        ),
        ('python3 -c "x = bytearray(4 * 1024**3)"', "memory_mb=1024", "memory"),
        ("head -c 80000000 /dev/zero > big; echo wrote", "file_mb=50", "file size"),
        (
            "for i in 1 2 3 4; do head -c 30000000 /dev/zero > big$i; done; echo wrote",
            "disk_mb=100",
            "100 MB",
        ),
        ("python3 -c 'while True: pass'", "cpu_seconds=2", "CPU time"),
        ("head -c 80000000 /dev/zero > big", "file_mb=50", "file size"),
    ],
    ids=["fork", "allocate", "file", "disk", "cpu", "file-last"],
)
def test_each_limit_ends_the_sample_with_its_reason(
    bench, tmp_path, command, limits, reason, sandbox
):
    log = _run(bench, [command], sandbox, tmp_path, limits=limits)
    assert log.results is not None  # the run finished and scored
    sample = log.samples[0]
    score = next(iter(sample.scores.values()))
    assert "sandbox limit" in (score.metadata["failure"] or "")
    assert reason in score.metadata["failure"]
    assert score.value["f1"] == 0.0


@needs_bwrap
def test_without_a_sandbox_named_the_task_picks_bwrap_and_scores_what_local_scores(
    bench, tmp_path, capfd
):
    from genotex.harness.solvers._reference import baseline

    logs = {}
    asked = (None, "local") + (("podman",) if PROBLEMS["podman"] is None else ())
    for sandbox in asked:
        task = e2e(root=str(bench), traits="Psoriasis", sandbox=sandbox)
        logs[sandbox] = inspect_eval(
            task, model="none", solver=baseline(), log_dir=str(tmp_path), display="none"
        )[0]
    assert "runs in the bwrap sandbox" in capfd.readouterr().err  # it says which
    assert logs[None].eval.metadata["sandbox"] == "bwrap"
    scores = {
        k: {m: v.value for s in logs[k].results.scores for m, v in s.metrics.items()} for k in asked
    }
    assert scores[None]["f1"] > 0
    for sandbox in asked[1:]:  # the pipeline in the image scores what it scores on the host
        assert scores[sandbox] == scores[None], sandbox


@pytest.mark.skipif(PROBLEMS["podman"] is not None, reason=f"no podman: {PROBLEMS['podman']}")
def test_where_bwrap_cannot_run_the_task_picks_podman(bench, monkeypatch, capfd):
    from genotex.harness.sandboxes import _sandbox_spec

    monkeypatch.setenv("GENOTEX_BWRAP", "/bin/false")  # a bwrap that cannot isolate anything
    _sandbox_spec.bwrap_problem.cache_clear()
    try:
        task = e2e(root=str(bench), traits="Asthma")
    finally:
        _sandbox_spec.bwrap_problem.cache_clear()
    assert task.metadata["sandbox"] == "podman"
    assert "runs in the podman sandbox" in capfd.readouterr().err


def test_where_no_isolated_sandbox_runs_the_task_names_each_problem(bench, monkeypatch):
    from inspect_ai._util.error import PrerequisiteError

    from genotex.harness.sandboxes import _choice, _sandbox_spec

    monkeypatch.setenv("GENOTEX_BWRAP", "/bin/false")
    monkeypatch.setenv("GENOTEX_PODMAN", "/bin/false")
    monkeypatch.setenv("PATH", "/nonexistent")  # no docker
    for cached in (_sandbox_spec.bwrap_problem, _choice.podman_problem, _choice.docker_problem):
        cached.cache_clear()
    try:
        with pytest.raises(PrerequisiteError) as raised:
            e2e(root=str(bench), traits="Asthma")
    finally:
        for cached in (_sandbox_spec.bwrap_problem, _choice.podman_problem):
            cached.cache_clear()
        _choice.docker_problem.cache_clear()
    message = str(raised.value)
    assert "no isolated sandbox works" in message and "sandbox=local" in message
    assert "bwrap: " in message and "podman: " in message and "docker: no docker" in message


def test_a_run_made_under_local_is_marked_not_isolated(bench, tmp_path):
    import subprocess
    import sys

    from genotex.evaluation import load_report, write_report
    from genotex.harness import export_run
    from genotex.harness.solvers._reference import gold

    reference = bench / "reference" / "output"
    runs = {}
    for sandbox in ("local", "bwrap") if NO_BWRAP is None else ("local",):
        task = e2e(root=str(bench), traits="Asthma", sandbox=sandbox)
        log = inspect_eval(
            task, model="none", solver=gold(), log_dir=str(tmp_path / sandbox), display="none"
        )[0]
        runs[sandbox] = export_run(log.location, tmp_path / f"run-{sandbox}", reference=reference)
    board = subprocess.run(
        [sys.executable, "-m", "genotex", "leaderboard", *map(str, runs.values())],
        capture_output=True,
        text=True,
    )
    assert board.returncode == 0, board.stderr
    assert "run-local (not isolated)" in board.stdout
    assert "run-bwrap (not isolated)" not in board.stdout
    assert "not isolated from the host" in board.stderr + board.stdout
    page = write_report(load_report(runs["local"]), tmp_path / "page").read_text()
    assert 'data-testid="not-isolated"' in page and "<code>local</code>" in page
    if "bwrap" in runs:
        isolated = write_report(load_report(runs["bwrap"]), tmp_path / "page2").read_text()
        assert 'data-testid="not-isolated"' not in isolated
        assert load_report(runs["bwrap"]).run["harness"]["isolated"] is True


@pytest.mark.skipif(PROBLEMS["podman"] is not None, reason=f"no podman: {PROBLEMS['podman']}")
def test_a_podman_command_past_its_timeout_is_stopped_inside_the_container():
    import asyncio

    from genotex.harness.sandboxes._podman import PodmanSandbox

    async def run() -> tuple[bool, str]:
        environments = await PodmanSandbox.sample_init("timeout", None, {})
        try:
            sandbox = environments["default"]
            try:
                await sandbox.exec(["sleep", "60"], timeout=2)
                timed_out = False
            except TimeoutError:
                timed_out = True
            left = await sandbox.exec(["sh", "-c", "cat /proc/[0-9]*/cmdline | tr '\\0' ' '"])
            return timed_out, left.stdout
        finally:
            await PodmanSandbox.sample_cleanup("timeout", None, environments, False)

    timed_out, processes = asyncio.run(run())
    assert timed_out  # Inspect's tools report a timeout
    assert "sleep 60" not in processes  # and nothing of the command runs on in the container


# ---- a patient agent (issue #43): races, links, FIFOs, full folders, the plan ---------------
def _sandbox_class(name: str):
    from genotex.harness.sandboxes._bwrap import BubblewrapSandbox
    from genotex.harness.sandboxes._podman import PodmanSandbox

    return {"bwrap": BubblewrapSandbox, "podman": PodmanSandbox}[name]


def _in_sandbox(name: str, work, limits: str | None = None):
    """Run `await work(environment)` in a fresh sample sandbox of `name`, then tear it down."""
    import asyncio

    from genotex.harness.sandboxes._sandbox_spec import SampleSandbox, SandboxLimits

    cls = _sandbox_class(name)
    metadata = {"genotex_sandbox": SampleSandbox(limits=SandboxLimits.parse(limits)).to_metadata()}

    async def run():
        environments = await cls.sample_init("hostile", None, metadata)
        try:
            return await work(environments["default"])
        finally:
            await cls.sample_cleanup("hostile", None, environments, False)

    return asyncio.run(run())


@pytest.mark.parametrize("sandbox", ISOLATED)
def test_reading_a_fifo_from_the_host_never_blocks(sandbox):
    """A FIFO where a file was (swapped in by a background process): the host's read is
    refused at once instead of blocking in openat for good.
    """
    import threading

    outcome: dict[str, object] = {}

    async def work(environment):
        await environment.exec(["sh", "-c", "mkdir -p output && mkfifo output/answer.json"])
        path = environment.home / "output" / "answer.json"

        def read():
            import asyncio

            try:
                asyncio.run(environment.read_file("output/answer.json"))
                outcome["read"] = "returned"
            except Exception as exc:  # noqa: BLE001 - what it raised is the finding
                outcome["read"] = exc

        thread = threading.Thread(target=read, daemon=True)
        thread.start()
        thread.join(10)
        if thread.is_alive():  # unblock the old code's reader before failing
            with open(os.open(path, os.O_WRONLY | os.O_NONBLOCK), "wb"):
                pass
            thread.join(5)
            outcome["read"] = "blocked"

    _in_sandbox(sandbox, work)
    assert isinstance(outcome["read"], PermissionError), outcome
    assert "not a regular file" in str(outcome["read"])


@pytest.mark.parametrize("sandbox", ISOLATED)
def test_a_folder_swapped_for_a_link_after_the_check_is_not_followed(
    sandbox, tmp_path, monkeypatch
):
    """The race of a parent folder swapped for a link between the host's check and its use,
    made certain: the check is told the path is fine. No host write, no host read follows.
    """
    from genotex.harness.sandboxes import _folder_sandbox

    outside = tmp_path / "host-folder"
    outside.mkdir()
    (outside / "secret.txt").write_text(CANARY)
    found: dict[str, object] = {}

    async def work(environment):
        os.symlink(outside, environment.home / "output")
        monkeypatch.setattr(_folder_sandbox.os.path, "realpath", lambda p: str(p))
        for step, call in (
            ("write", lambda: environment.write_file("output/planted.txt", "x")),
            ("write-deep", lambda: environment.write_file("output/new/planted.txt", "x")),
            ("read", lambda: environment.read_file("output/secret.txt")),
        ):
            try:
                found[step] = await call()
            except Exception as exc:  # noqa: BLE001 - what it raised is the finding
                found[step] = exc
        monkeypatch.undo()
        found["listed"] = environment.list_files("output")

    _in_sandbox(sandbox, work)
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]  # nothing written there
    for step in ("write", "write-deep", "read"):
        assert isinstance(found[step], PermissionError), (step, found[step])
    assert found["listed"] == []


@pytest.mark.skipif(PROBLEMS["podman"] is not None, reason=f"no podman: {PROBLEMS['podman']}")
def test_nothing_the_agent_left_running_in_podman_outlives_the_capture():
    async def work(environment):
        await environment.exec(["sh", "-c", "nohup sleep 600 >/dev/null 2>&1 & echo started"])
        before = await environment.exec(["sh", "-c", "cat /proc/[0-9]*/cmdline | tr '\\0' ' '"])
        await environment.quiesce()
        after = await environment.exec(["sh", "-c", "cat /proc/[0-9]*/cmdline | tr '\\0' ' '"])
        return before.stdout, after.stdout

    before, after = _in_sandbox("podman", work)
    assert "sleep 600" in before and "sleep 600" not in after


@pytest.mark.parametrize("sandbox", ISOLATED)
def test_one_command_cannot_write_past_disk_mb(bench, tmp_path, sandbox):
    """As root the folders are a tmpfs of disk_mb: the write itself stops at the limit (the
    old check came after the command, when the host's disk had taken it all).
    """
    if os.geteuid() != 0:
        pytest.skip("a size-bounded folder needs root (mount); a user gets the check after")
    write = "mkdir -p output && head -c 150000000 /dev/zero > output/big; ls -l output/big"
    log = _run(bench, [write], sandbox, tmp_path, limits="disk_mb=100")
    sample = log.samples[0]
    score = next(iter(sample.scores.values()))
    assert "disk limit hit" in (score.metadata["failure"] or "")
    # nothing is read out of folders that filled up (issue #50): the log says so instead
    assert score.metadata["output"]["bytes"] == 0
    assert score.metadata["skipped"] == [
        {"path": "output/", "reason": "not read: the sample's folders were full"}
    ]


@pytest.mark.parametrize("sandbox", ISOLATED)
def test_a_time_limited_sample_keeps_its_files_in_the_log_and_scores_as_a_failure(
    bench, tmp_path, sandbox
):
    write = (
        'mkdir -p output/regress/Asthma && echo \'{"significant_genes": {"Variable": '
        '["IL13"]}}\' > output/regress/Asthma/significant_genes_condition_None.json'
    )
    task = e2e(root=str(bench), traits="Asthma", sandbox=sandbox, time_limit=8)
    log = inspect_eval(
        task,
        model=scripted_agent([write, "sleep 60"], tokens=(10, 5)),
        log_dir=str(tmp_path / "logs"),
        display="none",
    )[0]
    sample = log.samples[0]
    score = next(iter(sample.scores.values()))
    assert "time limit" in (score.metadata["failure"] or "")
    assert score.metadata["output"]["files"] == 1  # what it had written is in the log
    assert score.value["f1"] == 0.0  # and the score stays the documented failure
    stored = sample.store["genotex:output"]["files"]
    assert [f["path"] for f in stored] == ["regress/Asthma/significant_genes_condition_None.json"]


@pytest.mark.skipif(PROBLEMS["podman"] is not None, reason=f"no podman: {PROBLEMS['podman']}")
def test_podman_cleanup_removes_only_containers_of_ended_runs():
    import subprocess

    from genotex.harness.sandboxes._podman import (
        LABEL,
        RUN_LABEL,
        PodmanSandbox,
        default_image,
        run_limits,
    )
    from genotex.harness.sandboxes._sandbox_spec import SandboxLimits

    ended = f"genotex-ended-{uuid.uuid4().hex[:8]}"
    made = subprocess.run(
        ["podman", "run", "--detach", "--name", ended, "--label", LABEL, "--label",
         f"{RUN_LABEL}=999999999:1", "--network", "none", *run_limits(SandboxLimits()),
         default_image(), "sleep", "600"],
        capture_output=True, text=True,
    )  # fmt: skip
    assert made.returncode == 0, made.stderr

    async def work(environment):
        await PodmanSandbox.cli_cleanup(None)  # as `inspect sandbox cleanup genotex-podman`
        return (await environment.exec(["echo", "alive"])).stdout

    try:
        assert _in_sandbox("podman", work).strip() == "alive"  # the live run's container stayed
        gone = subprocess.run(["podman", "container", "exists", ended], capture_output=True)
        assert gone.returncode == 1  # the ended run's was removed
    finally:
        subprocess.run(["podman", "rm", "--force", "--time", "0", ended], capture_output=True)


@pytest.mark.parametrize("sandbox", ISOLATED)
def test_the_memory_bound_holds_for_the_sample_not_only_each_process(
    bench, tmp_path, monkeypatch, sandbox
):
    """Four processes of 200 MB each, every one under its 256 MB of address space: together
    past the sample's memory cgroup (256 MB and its 64 MB folders), which kills one; nothing
    is written in the folder the run was started from (podman's conmon leaves `oom` files).
    """
    started_in = tmp_path / "started-in"
    started_in.mkdir()
    monkeypatch.chdir(started_in)
    if os.geteuid() != 0:
        pytest.skip("a memory cgroup for bwrap needs root here; a user gets the per-process bound")
    allocate = (
        "for i in 1 2 3 4; do python3 -c 'import time; b = bytearray(200 * 2**20); "
        'b[::4096] = b"x" * len(b[::4096]); time.sleep(4)\' & done; wait; echo all-lived'
    )
    log = _run(bench, [allocate], sandbox, tmp_path, limits="memory_mb=256,disk_mb=64")
    score = next(iter(log.samples[0].scores.values()))
    assert "memory limit hit" in (score.metadata["failure"] or ""), score.metadata["failure"]
    assert list(started_in.iterdir()) == []


@needs_bwrap
def test_a_venv_under_tmp_runs_the_baseline_in_bwrap(bench, tmp_path_factory):
    """The interpreter bound after the sample's /tmp: a venv under /tmp (common in CI) is seen
    inside, and the baseline scores what it scores under local; a command that cannot run
    would be the sample's failure, never a silent 0.
    """
    import json
    import subprocess
    import tempfile

    folder = Path(tempfile.mkdtemp(prefix="genotex-venv-", dir="/tmp"))
    try:
        venv = folder / "venv"
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
        ours = [p for p in sys.path if p.endswith("site-packages") and Path(p).is_dir()]
        checkout = Path(__file__).resolve().parents[1]
        site = next((venv / "lib").glob("python3*/site-packages"))
        (site / "genotex-test.pth").write_text("\n".join([*ours, str(checkout)]) + "\n")
        script = folder / "run.py"
        script.write_text(
            "import json, os, sys\n"
            "os.environ['INSPECT_DISABLE_MODEL_API'] = '1'\n"
            "from inspect_ai import eval as run\n"
            "from genotex.harness.runs._tasks import e2e\n"
            "from genotex.harness.solvers._reference import baseline\n"
            "scores = {}\n"
            "for kind in ('bwrap', 'local'):\n"
            "    task = e2e(root=sys.argv[1], traits='Psoriasis', sandbox=kind)\n"
            "    log = run(task, model='none', solver=baseline(), log_dir=sys.argv[2],"
            " display='none')[0]\n"
            "    sample = next(iter(log.samples[0].scores.values()))\n"
            "    scores[kind] = [sample.value['f1'], sample.metadata['failure']]\n"
            "print(json.dumps(scores))\n"
        )
        done = subprocess.run(
            [str(venv / "bin" / "python"), str(script), str(bench), str(folder / "logs")],
            capture_output=True,
            text=True,
            timeout=900,
            cwd=folder,
        )
        assert done.returncode == 0, done.stderr[-2000:]
        scores = json.loads(done.stdout.strip().splitlines()[-1])
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    assert scores["local"][0] > 0 and scores["local"][1] is None
    assert scores["bwrap"] == scores["local"]


# ---- the same suite as an unprivileged user -------------------------------------------------
def _blocking_folder(path: Path) -> Path | None:
    """The first folder on `path`'s way that others may not pass through (e.g. /root), if any."""
    for folder in [*reversed(path.parents), path]:
        if folder.is_dir() and not os.stat(folder).st_mode & 0o001:
            return folder
    return None


def _exposing_script(needed: list[Path], stage: Path) -> str:
    """Shell lines, for a private mount namespace, that let any user reach `needed`: a folder
    on their way closed to others (root's home, mode 700) is covered by a tmpfs that others
    may pass through, with the needed folders bound back into it. Nothing changes on the host.
    """
    lines = ["set -e", "mount --make-rprivate /"]
    blocked: dict[Path, list[Path]] = {}
    for path in needed:
        folder = _blocking_folder(path)
        if folder is not None:
            blocked.setdefault(folder, []).append(path)
    for number, (folder, paths) in enumerate(sorted(blocked.items())):
        saved = stage / str(number)
        saved.mkdir()
        lines += [f"mount --rbind '{folder}' '{saved}'"]
        lines += [f"mount -t tmpfs -o mode=0755 genotex-expose '{folder}'"]
        for path in sorted(set(paths)):
            relative = path.relative_to(folder)
            lines += [f"mkdir -p '{path}'", f"mount --rbind '{saved / relative}' '{path}'"]
    return "\n".join(lines)


@pytest.mark.slow  # the suite again, as another user: the whole suite's, not the quick one's
@pytest.mark.skipif(os.geteuid() != 0, reason="it creates the user, so it runs as root")
@pytest.mark.skipif(os.environ.get(AS_USER) == "1", reason="this is the user's run")
@needs_bwrap
def test_the_hostile_suite_holds_as_an_unprivileged_user(tmp_path_factory):
    """Every probe above, issue #50's (`test_sandbox_escapes.py`), issue #59's
    (`test_sandbox_isolation.py`) and the kernel's again, as a user this test creates (uid
    4243): bwrap unprivileged, and rootless podman where the host lets it hold its limits
    (else skipped with why).
    """
    import pwd
    import subprocess
    import tempfile

    name, uid = "genotex-hostile", 4243
    try:
        pwd.getpwnam(name)
    except KeyError:
        made = subprocess.run(
            ["useradd", "--uid", str(uid), "--no-create-home", "--shell", "/bin/sh", name],
            capture_output=True,
            text=True,
        )
        assert made.returncode == 0, made.stderr
    uid = pwd.getpwnam(name).pw_uid
    home = Path(tempfile.mkdtemp(prefix="genotex-hostile-home-"))
    stage = Path(tempfile.mkdtemp(prefix="genotex-hostile-stage-"))
    os.chown(home, uid, uid)
    checkout = Path(__file__).resolve().parents[1]
    needed = [checkout, Path(os.path.realpath(sys.base_prefix)), Path(os.path.realpath(sys.prefix))]
    needed += [Path(os.path.realpath(p)) for p in sys.path if p and Path(p).is_dir()]
    environment = {
        "HOME": str(home),
        "PATH": f"{Path(sys.executable).parent}:/usr/local/bin:/usr/bin:/bin",
        "CI": os.environ.get("CI", ""),
        AS_USER: "1",
        "INSPECT_DISABLE_MODEL_API": "1",
        "PYTHONDONTWRITEBYTECODE": "1",
        "CONTAINERS_CONF": os.environ.get("CONTAINERS_CONF", ""),
    }
    variables = " ".join(f"{k}='{v}'" for k, v in environment.items())
    # two workers: the probes mostly wait on sandboxes and sleepers (56 s of CPU in 126 s alone)
    pytest_args = "-n 2 -v -rs -p no:cacheprovider -p no:logging -p no:hypothesispytest"
    script = (
        _exposing_script(sorted(set(needed)), stage)
        + f"\ncd '{checkout}'\nexec setpriv --reuid={uid} --regid={uid} --clear-groups -- "
        f"env -i {variables} '{sys.executable}' -m pytest {pytest_args} "
        f"--basetemp='{home}/pytest' tests/test_sandbox_hostile.py tests/test_sandbox_escapes.py "
        "tests/test_sandbox_isolation.py tests/test_kernel.py"
    )
    try:
        done = subprocess.run(
            ["unshare", "--mount", "--propagation", "private", "sh", "-c", script],
            capture_output=True,
            text=True,
            timeout=1500,
        )
    finally:
        shutil.rmtree(home, ignore_errors=True)
        shutil.rmtree(stage, ignore_errors=True)
    failed = [line for line in done.stdout.splitlines() if " FAILED" in line or "Error" in line]
    said = "\n".join(failed[:40]) + "\n" + done.stdout[-4000:] + done.stderr[-2000:]
    assert done.returncode == 0, said
    # each test's outcome, as pytest -v prints it with workers: "[gw0] [ 5%] PASSED path::name"
    said_outcomes = re.findall(r"(PASSED|SKIPPED|FAILED|ERROR) tests/\S+?\.py::(\S+)", done.stdout)
    outcomes = {name: outcome for outcome, name in said_outcomes}
    for test in (
        "test_an_isolated_sandbox_stops_every_escape_and_still_scores[bwrap] PASSED",
        "test_reading_a_fifo_from_the_host_never_blocks[bwrap] PASSED",
        "test_a_folder_swapped_for_a_link_after_the_check_is_not_followed[bwrap] PASSED",
        "test_a_time_limited_sample_keeps_its_files_in_the_log_and_scores_as_a_failure[bwrap]"
        " PASSED",
        "test_each_limit_ends_the_sample_with_its_reason[fork-bwrap] PASSED",
        # issue #50's probes, as a user
        "test_no_agent_process_has_host_uid_0[bwrap] PASSED",
        "test_no_sysctl_can_be_written_and_no_user_namespace_made[bwrap] PASSED",
        "test_an_import_path_that_holds_the_reference_is_refused_before_any_sample PASSED",
        "test_the_hosts_proxy_variables_never_reach_the_agent[bwrap] PASSED",
        "test_a_killed_runs_leftovers_go_with_the_next_run_and_a_live_runs_stay PASSED",
        "test_sparse_files_are_refused_by_their_size_before_anything_is_read[bwrap] PASSED",
        "test_too_many_files_and_unreadable_folders_as_any_user[bwrap] PASSED",
        "test_random_runs_end_to_end_in_each_isolated_sandbox[bwrap] PASSED",
        # issue #59's, as a user
        "test_a_log_that_says_local_replays_in_an_isolated_sandbox_and_writes_no_host_file PASSED",
        "test_replay_in_local_without_trust_log_exits_2_before_any_code_runs PASSED",
        "test_a_secret_in_the_hosts_session_keyring_is_unreadable_and_unchanged_from_inside"
        "[bwrap] PASSED",
        "test_an_import_path_holding_a_benchmark_a_credential_or_a_log_is_refused_naming_it"
        "[netrc] PASSED",
        "test_a_run_killed_with_sigkill_leaves_no_mount_no_folder_no_container[bwrap] PASSED",
        "test_multiprocessing_lock_works_inside[bwrap] PASSED",
        "test_a_step_patching_the_kernels_loop_cannot_make_a_later_failing_step_read_ok[bwrap]"
        " PASSED",
        # issue #70's, as a user
        "test_step_code_cannot_reach_the_kernels_supervisor[bwrap] PASSED",
        "test_an_import_path_folder_is_judged_again_before_every_command[inotify] PASSED",
        "test_an_import_path_folder_is_judged_again_before_every_command[fingerprint] PASSED",
        "test_which_host_uids_hold_keys_is_hidden[bwrap] PASSED",
    ):
        name, outcome = test.rsplit(" ", 1)
        assert outcomes.get(name) == outcome, said
    assert outcomes.get("test_the_hostile_suite_holds_as_an_unprivileged_user") == "SKIPPED"

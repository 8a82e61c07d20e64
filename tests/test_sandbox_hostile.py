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
import uuid
from pathlib import Path

import pytest

pytest.importorskip("inspect_ai", reason="the harness extra (inspect-ai) is not installed")
pytestmark = pytest.mark.filterwarnings(
    "ignore::ResourceWarning",
    "ignore::pytest.PytestUnraisableExceptionWarning",
    "ignore::DeprecationWarning",
)
os.environ["INSPECT_DISABLE_MODEL_API"] = "1"

from inspect_ai import eval as inspect_eval  # noqa: E402

from genotex import __version__  # noqa: E402
from genotex.harness._podman import default_image, podman_problem  # noqa: E402
from genotex.harness._sandbox_spec import bwrap_problem  # noqa: E402
from genotex.harness._tasks import e2e  # noqa: E402
from genotex.workflows import write_raw_benchmark  # noqa: E402
from tests.conftest import local_server, scripted_agent  # noqa: E402

CANARY = f"canary-{uuid.uuid4().hex}"
PROBLEMS = {"bwrap": bwrap_problem(), "podman": podman_problem(default_image())}
for _name, _problem in PROBLEMS.items():
    if _problem is not None and os.environ.get("CI") == "true":  # CI must run it, not skip it
        raise RuntimeError(f"the {_name} sandbox cannot run in CI: {_problem}")
NO_BWRAP = PROBLEMS["bwrap"]
needs_bwrap = pytest.mark.skipif(NO_BWRAP is not None, reason=f"no bwrap sandbox: {NO_BWRAP}")
#: What an isolated sandbox's environment may hold: what genotex sets, the shell's own, and the
#: container's marks (podman's `container`, `HOSTNAME`).
SANDBOX_VARIABLES = {
    *("PATH", "HOME", "USER", "LANG", "TMPDIR", "MPLCONFIGDIR", "PYTHONDONTWRITEBYTECODE"),
    *("PWD", "OLDPWD", "SHLVL", "_", "TERM", "HOSTNAME", "container"),
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
    ]


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
    (read, search, homes, env, processes, network, reach, writes, inputs, python) = _results(log)
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
    finally:
        (Path("/tmp") / marker).unlink(missing_ok=True)
        (bench / "reference" / "output" / marker).unlink(missing_ok=True)


@pytest.mark.parametrize("sandbox", ISOLATED)
@pytest.mark.parametrize(
    ("command", "limits", "reason"),
    [
        ("bash -c ':(){ :|:& };:' 2>/dev/null; sleep 2; echo forked", "processes=64", "process"),
        ('python3 -c "x = bytearray(4 * 1024**3)"', "memory_mb=1024", "memory"),
        ("head -c 80000000 /dev/zero > big; echo wrote", "file_mb=50", "file size"),
        (
            "for i in 1 2 3 4; do head -c 30000000 /dev/zero > big$i; done; echo wrote",
            "disk_mb=100",
            "more than the 100 MB",
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
    from genotex.harness._tasks import baseline

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
    from genotex.harness import _sandbox_spec

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

    from genotex.harness import _choice, _sandbox_spec

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
    from genotex.harness._tasks import gold

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

    from genotex.harness._podman import PodmanSandbox

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

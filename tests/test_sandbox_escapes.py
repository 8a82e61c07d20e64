"""The escapes issue #50 found in 0.8.0, each run for real against bwrap and podman.

Run as root here, and again as an unprivileged user by the hostile suite's user run
(`test_sandbox_hostile.py`, which names this module too). A probe that writes a
sysctl writes back the value it read, so even a write that went through would
change nothing on the host.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
import textwrap
import time
import uuid
from pathlib import Path

import pytest

pytest.importorskip("inspect_ai", reason="the harness extra (inspect-ai) is not installed")

from inspect_ai import eval as inspect_eval  # noqa: E402
from inspect_ai._util.error import PrerequisiteError  # noqa: E402

from genotex.harness.runs._tasks import e2e  # noqa: E402
from genotex.harness.sandboxes._bwrap import BubblewrapSandbox, own_cgroups  # noqa: E402
from genotex.harness.sandboxes._kernel import Kernel  # noqa: E402
from genotex.harness.sandboxes._podman import PodmanSandbox, default_image, podman_problem  # noqa: E402
from genotex.harness.sandboxes._sandbox_spec import (  # noqa: E402
    SampleSandbox,
    SandboxLimits,
    bwrap_problem,
)
from genotex.harness.sandboxes._uids import AGENT_UID, UID_RANGE, uid_base  # noqa: E402
from genotex.workflows import write_raw_benchmark  # noqa: E402
from tests.conftest import INSPECT_WARNINGS, scripted_agent  # noqa: E402

pytestmark = INSPECT_WARNINGS

PROBLEMS = {"bwrap": bwrap_problem(), "podman": podman_problem(default_image())}
AS_ROOT = os.geteuid() == 0
ISOLATED = [
    pytest.param(
        name, marks=pytest.mark.skipif(problem is not None, reason=f"no {name} sandbox: {problem}")
    )
    for name, problem in PROBLEMS.items()
]
CLASSES = {"bwrap": BubblewrapSandbox, "podman": PodmanSandbox}
needs_bwrap = pytest.mark.skipif(PROBLEMS["bwrap"] is not None, reason=f"{PROBLEMS['bwrap']}")


def _in_sandbox(
    name: str, work, limits: str | None = None, binds: dict | None = None, env: dict | None = None
):
    """`await work(environment)` in a fresh sample sandbox of `name`, torn down after."""
    cls = CLASSES[name]
    spec = SampleSandbox(binds=binds or {}, env=env or {}, limits=SandboxLimits.parse(limits))
    metadata = {"genotex_sandbox": spec.to_metadata()}

    async def run():
        environments = await cls.sample_init("escapes", None, metadata)
        try:
            return await work(environments["default"])
        finally:
            await cls.sample_cleanup("escapes", None, environments, False)

    return asyncio.run(run())


def _python(name: str) -> str:
    return sys.executable if name == "bwrap" else "python"


def _parents() -> dict[int, int]:
    """pid -> parent pid of every host process (`/proc/PID/stat` is readable by anyone)."""
    parents = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            with contextlib.suppress(OSError, ValueError, IndexError):
                stat = Path(f"/proc/{entry}/stat").read_text()
                parents[int(entry)] = int(stat.rsplit(")", 1)[1].split()[1])
    return parents


def _marked(pid: int, mark: str, parents: dict[int, int]) -> bool:
    try:
        return mark.encode() in Path(f"/proc/{pid}/environ").read_bytes()
    except PermissionError:  # not dumpable: this test's if it descends from this process
        seen = set()
        while pid not in seen and pid > 1:
            seen.add(pid)
            pid = parents.get(pid, 0)
            if pid == os.getpid():
                return True
        return False


def _host_uids(marker: str, mark: str = "") -> dict[int, int]:
    """The host's pid -> real uid of every process whose command line holds `marker` (and,
    with `mark`, this test's sandbox's processes, not another test's: its environment holds
    `mark`, or, where the environment cannot be read (the kernel's supervisor is not
    dumpable, so a user cannot read it), it descends from this process), bar the sandbox's
    own machinery (bwrap, setpriv, podman, conmon, the shell).
    """
    found, parents = {}, _parents()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ").decode()
            comm = Path(f"/proc/{entry}/comm").read_text().strip()
            status = Path(f"/proc/{entry}/status").read_text()
            if mark and not _marked(int(entry), mark, parents):
                continue
        except OSError:
            continue
        if marker in cmdline and comm not in ("bwrap", "setpriv", "podman", "conmon", "bash"):
            uid = next(line for line in status.splitlines() if line.startswith("Uid:"))
            found[int(entry)] = int(uid.split()[1])
    return found


@pytest.mark.parametrize("sandbox", ISOLATED)
def test_no_agent_process_has_host_uid_0(sandbox):
    """A command, a long-lived process (the launch the kernel and the MCP server use) and
    the kernel itself, each looked at from the host: never uid 0; as root the unused uid.
    Only this sandbox's processes are looked at (a variable of its environment), so the test
    runs beside others (it needed the whole host to itself before 0.15).
    """
    marker = f"4.{time.time_ns() % 10**6}"  # a sleep of about 4 s, unique to this test
    mark = f"GENOTEX_TEST_MARK={uuid.uuid4().hex}"

    async def work(environment):
        seen = {"agent": environment.agent_uid}
        command = asyncio.ensure_future(environment.exec(["sleep", f"{marker}1"]))
        await asyncio.sleep(1.5)
        seen["command"] = _host_uids(f"sleep {marker}1", mark)
        server = await asyncio.create_subprocess_exec(
            *environment.process_argv([_python(sandbox), "-m", "genotex", "mcp", "--root", "."]),
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            cwd=str(environment.folder),
        )  # fmt: skip
        await asyncio.sleep(3)
        seen["mcp"] = _host_uids("genotex mcp --root", mark)
        server.kill()
        await server.wait()
        kernel = Kernel(environment, _python(sandbox))
        await kernel.start()
        run = kernel.run(f"import time; time.sleep({marker}2)", "<sleep>", 30)
        stepping = asyncio.ensure_future(run)
        await asyncio.sleep(1.5)
        seen["kernel"] = (_host_uids("_kernel_server", mark)
                          or _host_uids("the protocol's channel", mark))  # fmt: skip
        await stepping
        await kernel.stop()
        await command
        return seen

    seen = _in_sandbox(sandbox, work, env=dict([mark.split("=")]))
    agent = seen.pop("agent")
    for what, uids in seen.items():
        assert uids, f"no {what} process found on the host"
        assert 0 not in uids.values(), (what, uids)
        if AS_ROOT:  # the sample's own uid of the unused range (#59), in every process
            assert set(uids.values()) == {agent}, (what, uids)
            assert uid_base() + AGENT_UID <= agent < uid_base() + UID_RANGE


@pytest.mark.parametrize("sandbox", ISOLATED)
def test_no_sysctl_can_be_written_and_no_user_namespace_made(sandbox):
    """Each /proc/sys entry the agent's uid could open for writing gets its own value back,
    and is refused; `unshare -U` is refused (no namespace to gain capabilities in).
    """
    probe = textwrap.dedent(
        """
        n=0; ok=0
        for f in $(find /proc/sys -type f -perm -200 2>/dev/null); do
            v=$(cat "$f" 2>/dev/null) || continue
            n=$((n+1))
            if printf '%s\\n' "$v" > "$f" 2>/dev/null; then ok=$((ok+1)); echo "WROTE $f"; fi
        done
        echo "tried=$n written=$ok"
        for f in /proc/sys/kernel/core_pattern /proc/sysrq-trigger; do
            ( : > "$f" ) 2>&1 | sed 's/^.*: //'
        done
        unshare -U true 2>&1; echo "userns=$?"
        unshare -Ur true 2>&1; echo "rootns=$?"
        python3 -c 'import ctypes; c = ctypes.CDLL(None, use_errno=True); \
            print("unshare(CLONE_NEWUSER)", c.unshare(0x10000000), ctypes.get_errno())' 
        """
    )

    async def work(environment):
        return (await environment.exec(["sh", "-c", probe])).stdout

    said = _in_sandbox(sandbox, work)
    assert "written=0" in said and "WROTE" not in said, said
    assert int(said.split("tried=")[1].split()[0]) > 50  # the probe did look at the entries
    for line in said.splitlines():
        if line.startswith(("Permission", "Read-only")):
            assert line in ("Permission denied", "Read-only file system"), line
    assert "userns=1" in said and "rootns=1" in said, said
    assert "unshare(CLONE_NEWUSER) -1 " in said, said  # and from Python, by the system call


@needs_bwrap
def test_an_import_path_that_holds_the_reference_is_refused_before_any_sample(
    tmp_path, monkeypatch
):
    """PYTHONPATH (or a .pth) naming the benchmark root, a folder above it, or the reference
    itself would bind the answers into every sample: the task refuses in one sentence.
    """
    bench = tmp_path / "bench"
    write_raw_benchmark(bench, recipes=False)
    reference = bench / "reference" / "output"
    elsewhere = tmp_path / "site"
    elsewhere.mkdir()
    for entry in (bench, tmp_path, reference, reference / "regress"):
        monkeypatch.setattr(sys, "path", [*sys.path, str(entry)])
        with pytest.raises(PrerequisiteError, match="import path holds") as raised:
            e2e(root=str(bench), traits="Asthma", sandbox="bwrap")
        assert "\n" not in str(raised.value)
        monkeypatch.undo()
    monkeypatch.setattr(sys, "path", [*sys.path, str(elsewhere)])  # a user site: still bound
    task = e2e(root=str(bench), traits="Asthma", sandbox="bwrap")
    assert task.metadata["sandbox"] == "bwrap"


@pytest.mark.parametrize("sandbox", ISOLATED)
def test_the_hosts_proxy_variables_never_reach_the_agent(sandbox, monkeypatch):
    canary = f"canary-{uuid.uuid4().hex}"
    for name in ("HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "http_proxy", "ALL_PROXY"):
        monkeypatch.setenv(name, f"http://user:{canary}@proxy.invalid:3128")

    async def work(environment):
        said = await environment.exec(
            ["sh", "-c", "env; cat /proc/[0-9]*/environ | tr '\\0' '\\n'"]
        )
        kernel = Kernel(environment, _python(sandbox))
        try:
            run = await kernel.run("import os; print(dict(os.environ))", "<env>", 60)
        finally:
            await kernel.stop()
        return said.stdout + run.output

    said = _in_sandbox(sandbox, work)
    assert canary not in said and "proxy.invalid" not in said


@needs_bwrap
@pytest.mark.skipif(not AS_ROOT, reason="a user makes no cgroups (the rlimits bound it)")
def test_a_samples_cgroups_lie_below_the_callers_own():
    own = own_cgroups()

    async def work(environment):
        return list(environment.cgroup.folders)

    folders = _in_sandbox("bwrap", work)
    assert folders, "no cgroup was made"
    parents = {folder.parent for folder in folders}
    assert parents <= set(own.values()), (parents, own)
    assert not any(folder.exists() for folder in folders)  # and removed with the sample


_HOLDER = """
import asyncio, json, sys, time
from genotex.harness.sandboxes._bwrap import BubblewrapSandbox
from genotex.harness.sandboxes._sandbox_spec import SampleSandbox

async def main():
    environments = await BubblewrapSandbox.sample_init("leftover", None, {})
    environment = environments["default"]
    await environment.exec(["sh", "-c", "mkdir -p output/locked && chmod 000 output/locked"])
    print(json.dumps({"folder": str(environment.folder),
                      "cgroups": [str(f) for f in environment.cgroup.folders]}), flush=True)
    time.sleep(600)

asyncio.run(main())
"""


@needs_bwrap
def test_a_killed_runs_leftovers_go_with_the_next_run_and_a_live_runs_stay(tmp_path):
    """Two runs hold a sample each; one is killed with SIGKILL (no cleanup runs). The next
    run's first sample removes the dead run's folder (its tmpfs unmounted), its cgroups and
    the folder its agent made unreadable; the live run's are untouched.
    """
    import json

    from genotex.harness.sandboxes import _bwrap

    def hold():
        process = subprocess.Popen(
            [sys.executable, "-c", _HOLDER], stdout=subprocess.PIPE, text=True,
            cwd=str(tmp_path), start_new_session=True,
        )  # fmt: skip
        assert process.stdout is not None
        return process, json.loads(process.stdout.readline())

    dead, dead_made = hold()
    live, live_made = hold()
    try:
        dead.send_signal(signal.SIGKILL)
        dead.wait()
        assert Path(dead_made["folder"]).exists()  # what SIGKILL left behind
        _bwrap.sweep_leftovers.cache_clear()

        async def work(environment):
            return True

        assert _in_sandbox("bwrap", work)  # a new run's first sample sweeps
        assert not Path(dead_made["folder"]).exists()
        assert not any(Path(c).exists() for c in dead_made["cgroups"])
        assert dead_made["folder"] not in Path("/proc/self/mountinfo").read_text()
        assert Path(live_made["folder"], "home").is_dir()  # the live run's, untouched
        assert all(Path(c).is_dir() for c in live_made["cgroups"])
    finally:
        os.killpg(live.pid, signal.SIGKILL)
        live.wait()
        _bwrap.sweep_leftovers.cache_clear()
        _in_sandbox("bwrap", work)
    assert not Path(live_made["folder"]).exists()  # swept once it had ended


@pytest.mark.parametrize("sandbox", ISOLATED)
def test_orphans_are_reaped_so_no_zombie_holds_a_process_slot(sandbox):
    orphans = (
        "for i in $(seq 60); do sh -c 'sleep 0.2 & exit 0'; done; sleep 1.5; "
        "grep -l '^State:.*Z' /proc/[0-9]*/status 2>/dev/null | wc -l"
    )

    async def work(environment):
        return (await environment.exec(["sh", "-c", orphans], timeout=60)).stdout

    assert _in_sandbox(sandbox, work).strip() == "0"


@pytest.mark.parametrize("sandbox", ISOLATED)
def test_sparse_files_are_refused_by_their_size_before_anything_is_read(tmp_path, sandbox):
    """Nine sparse files of 99 MB cost the agent nothing: the capture refuses them by their
    apparent size (more than the sample's disk_mb) and reads none of them.
    """
    import resource

    bench = tmp_path / "bench"
    write_raw_benchmark(bench, recipes=False)
    sparse = "mkdir -p output && for i in 1 2 3 4 5 6 7 8 9; do truncate -s 99M output/f$i; done"
    task = e2e(root=str(bench), traits="Asthma", sandbox=sandbox, limits="disk_mb=64")
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    log = inspect_eval(
        task, model=scripted_agent([sparse], tokens=(10, 5)), log_dir=str(tmp_path / "logs"),
        display="none",
    )[0]  # fmt: skip
    grown_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    score = next(iter(log.samples[0].scores.values()))
    assert score.metadata["output"]["bytes"] == 0 and score.metadata["output"]["files"] == 0
    failure = score.metadata["failure"] or ""
    assert "nothing was read" in failure or "64 MB" in failure, failure
    assert grown_mb < 300, grown_mb  # 891 MB of zeros were never read into the host


@pytest.mark.parametrize("sandbox", ISOLATED)
def test_a_bound_input_is_read_as_the_agent_sees_it(tmp_path, sandbox):
    """The host's read of a bound input reads its source, not the empty mount point."""
    source = tmp_path / "inputs"
    (source / "deep").mkdir(parents=True)
    (source / "deep" / "table.json").write_text('{"IL13": ["IL-13"]}')
    single = tmp_path / "one.json"
    single.write_text("[1, 2]")

    async def work(environment):
        listed = environment.list_files("input")
        inside = await environment.exec(["cat", "input/deep/table.json"])
        try:
            await environment.write_file("input/deep/table.json", "forged")
            wrote = "wrote"
        except PermissionError as exc:
            wrote = str(exc)
        return (
            await environment.read_file("input/deep/table.json"),
            await environment.read_file("metadata/one.json"),
            listed,
            inside.stdout,
            wrote,
        )

    binds = {"input": str(source), "metadata/one.json": str(single)}
    table, one, listed, inside, wrote = _in_sandbox(sandbox, work, binds=binds)
    assert table == inside == '{"IL13": ["IL-13"]}'
    assert one == "[1, 2]"
    assert ("deep/table.json", 19) in listed
    assert "read-only input" in wrote
    assert (source / "deep" / "table.json").read_text() == '{"IL13": ["IL-13"]}'


@pytest.mark.parametrize("sandbox", ISOLATED)
def test_random_runs_end_to_end_in_each_isolated_sandbox(tmp_path, sandbox):
    """`genotex/random` reads metadata/gene_synonym.json through the sandbox: under 0.8.0 it
    read the empty mount point and every e2e sample failed with a JSONDecodeError.
    """
    from genotex.harness.solvers._rows import random_row

    bench = tmp_path / "bench"
    write_raw_benchmark(bench, recipes=False)
    task = e2e(root=str(bench), traits="Asthma", sandbox=sandbox)
    log = inspect_eval(task, model="none", solver=random_row(genes=20, seed=1),
                       log_dir=str(tmp_path / "logs"), display="none")[0]  # fmt: skip
    assert log.status == "success", log.error
    score = next(iter(log.samples[0].scores.values()))
    assert score.metadata["failure"] is None, score.metadata["failure"]
    assert score.metadata["output"]["files"] > 0


@pytest.mark.parametrize("sandbox", ISOLATED)
def test_too_many_files_and_unreadable_folders_as_any_user(sandbox):
    """`files` holds (during the command as root, after it as a user), and a folder the agent
    made mode 000 does not survive the sample's cleanup.
    """
    from genotex.harness.sandboxes._sandbox_spec import SandboxLimitError

    async def work(environment):
        folder = environment.folder
        await environment.exec(["sh", "-c", "mkdir -p a/b && touch a/b/x && chmod 000 a/b a"])
        try:
            await environment.exec(["sh", "-c", "for i in $(seq 1000); do : > f$i; done"])
            hit = "no limit hit"
        except SandboxLimitError as exc:
            hit = str(exc)
        return folder, hit

    folder, hit = _in_sandbox(sandbox, work, limits="files=100")
    assert "file count limit hit" in hit, hit
    assert not folder.exists()


@pytest.mark.parametrize("sandbox", ISOLATED)
def test_a_control_character_in_an_output_name_is_not_captured(tmp_path, sandbox):
    bench = tmp_path / "bench"
    write_raw_benchmark(bench, recipes=False)
    forged = (
        "mkdir -p output && printf x > \"output/$(printf 'a\\t1\\tb')\" && printf y > output/ok"
    )
    task = e2e(root=str(bench), traits="Asthma", sandbox=sandbox)
    log = inspect_eval(task, model=scripted_agent([forged], tokens=(10, 5)),
                       log_dir=str(tmp_path / "logs"), display="none")[0]  # fmt: skip
    score = next(iter(log.samples[0].scores.values()))
    stored = log.samples[0].store["genotex:output"]
    assert [f["path"] for f in stored["files"]] == ["ok"]
    assert any("control character" in s["reason"] for s in score.metadata["skipped"])


def test_the_agents_uid_range_must_be_unused(monkeypatch):
    """An account or group inside the range, or a bad GENOTEX_SANDBOX_UID, is one sentence."""
    import grp
    import pwd

    from genotex.harness.sandboxes._uids import DEFAULT_UID_BASE, uid_problem

    monkeypatch.setenv("GENOTEX_SANDBOX_UID", "x")
    assert "GENOTEX_SANDBOX_UID must be a whole number" in (uid_problem() or "")
    monkeypatch.delenv("GENOTEX_SANDBOX_UID")
    taken = pwd.struct_passwd(("squatter", "x", DEFAULT_UID_BASE + 1000, 1, "", "/", "/bin/sh"))
    monkeypatch.setattr(pwd, "getpwall", lambda: [taken])
    assert "hold the account 'squatter'" in (uid_problem() or "")
    monkeypatch.setattr(pwd, "getpwall", lambda: [])
    team = grp.struct_group(("crew", "x", DEFAULT_UID_BASE + 5, []))
    monkeypatch.setattr(grp, "getgrall", lambda: [team])
    assert "hold the group 'crew'" in (uid_problem() or "")

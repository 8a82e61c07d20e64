"""What issue #59's probes found in 0.10.1, each run for real against bwrap and podman.

A replayed log runs on the host only when asked in words; no sample reaches the session
keyring of whoever started the run, nor another sample's per-uid kernel state; an import
path is checked by what it holds; a run killed with -9 leaves nothing mounted; POSIX
shared memory works. Run as root here, and again as an unprivileged user by the hostile
suite's user run (`test_sandbox_hostile.py` names this module too). The kernel's own
protocol against step code is in `test_kernel.py`.
"""

from __future__ import annotations

import asyncio
import ctypes
import json
import os
import platform
import shutil
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
from inspect_ai.log import read_eval_log  # noqa: E402

from genotex.core import GenotexError  # noqa: E402
from genotex.harness.runs._tasks import e2e, preprocess  # noqa: E402
from genotex.harness.sandboxes._sandbox_spec import SampleSandbox  # noqa: E402
from genotex.harness.sandboxes._uids import AGENT_UID, UID_RANGE, uid_base  # noqa: E402
from genotex.harness.solvers.genoagent import genoagent  # noqa: E402
from genotex.harness.solvers.genoagent._replay import replay_run  # noqa: E402
from genotex.workflows import write_raw_benchmark  # noqa: E402
from tests.conftest import INSPECT_WARNINGS  # noqa: E402
from tests.test_genoagent import _team, baseline_script  # noqa: E402
from tests.test_sandbox_escapes import (  # noqa: E402 - the sandboxes as that suite probes them
    AS_ROOT,
    CLASSES,
    ISOLATED,
    needs_bwrap,
)

pytestmark = INSPECT_WARNINGS

#: The keyctl, add_key and request_key system calls by architecture.
_CALLS = {"x86_64": (250, 248, 249), "aarch64": (219, 217, 218)}


def _python(name: str) -> str:
    return sys.executable if name == "bwrap" else "python"


def _sandboxes(name: str, count: int, work):
    """`await work(environments)` with `count` fresh sample sandboxes of `name`, torn down."""
    cls = CLASSES[name]
    metadata = {"genotex_sandbox": SampleSandbox().to_metadata()}

    async def run():
        made = [await cls.sample_init("isolation", None, metadata) for _ in range(count)]
        try:
            return await work([m["default"] for m in made])
        finally:
            for environments in made:
                await cls.sample_cleanup("isolation", None, environments, False)

    return asyncio.run(run())


# ---- a replayed log runs where the replaying user says ----------------------------------------
def _escaping(marker: Path):
    """The correct team, whose first data-engineer step also writes `marker` on the host (it
    can where the code runs unconfined, as under `local`) and says whether it could.
    """
    write = f"try:\n    open({str(marker)!r}, 'w').write('escaped')\nexcept OSError:\n    pass\n"

    def script(role: str, message: str) -> str:
        reply = baseline_script(role, message)
        if role == "data_engineer" and "# This step: initial_inspection" in message:
            return reply.replace("```python\n", "```python\n" + write, 1)
        return reply

    return script


@pytest.fixture(scope="module")
def local_log(tmp_path_factory):
    """An honest run made with `-T sandbox=local` whose code writes a host file, the file
    removed after: the log a user may find published.
    """
    folder = tmp_path_factory.mktemp("replay")
    bench = folder / "root"
    write_raw_benchmark(bench, recipes=False)
    marker = folder / f"escaped-{uuid.uuid4().hex}"
    script = _escaping(marker)
    task = preprocess(root=str(bench), traits="Psoriasis", sandbox="local")
    team, logs = _team(script), str(folder / "logs")
    log = inspect_eval(task, model=team["planner"], model_roles=team, solver=genoagent(),
                       log_dir=logs, display="none")[0]  # fmt: skip
    assert log.eval.metadata["sandbox"] == "local"
    assert marker.read_text() == "escaped"  # under local the log's code wrote on the host
    marker.unlink()
    return bench, Path(log.location), marker


@needs_bwrap
def test_a_log_that_says_local_replays_in_an_isolated_sandbox_and_writes_no_host_file(
    local_log, tmp_path
):
    bench, log, marker = local_log
    result = replay_run(log, root=bench, log_dir=tmp_path / "again")
    assert not marker.exists()  # the log's code ran confined: the host file was not written
    again = read_eval_log(str(next((tmp_path / "again").glob("*.eval"))), header_only=True)
    assert again.eval.metadata["sandbox"] in ("bwrap", "podman"), again.eval.metadata
    assert result.calls > 0


def test_replay_in_local_without_trust_log_exits_2_before_any_code_runs(local_log, tmp_path):
    bench, log, marker = local_log
    command = [sys.executable, "-m", "genotex", "harness", "replay", str(log), "-r", str(bench)]
    refused = subprocess.run([*command, "--sandbox", "local"], capture_output=True, text=True,
                             env={**os.environ, "INSPECT_DISABLE_MODEL_API": "1"})  # fmt: skip
    assert refused.returncode == 2, refused.stderr
    assert "--trust-log" in refused.stderr and "Traceback" not in refused.stderr
    assert not marker.exists()
    with pytest.raises(GenotexError, match="trust_log=True"):  # the library, in its own words
        replay_run(log, root=bench, sandbox="local")
    assert not marker.exists()
    trusted = replay_run(log, root=bench, sandbox="local", trust_log=True,
                         log_dir=tmp_path / "trusted")  # fmt: skip
    assert trusted.same, trusted.differences
    assert marker.read_text() == "escaped"  # asked in words: the log's code ran on the host
    marker.unlink()


def test_replay_takes_the_root_from_the_caller_never_from_the_log(local_log, tmp_path):
    _, log, _ = local_log
    done = subprocess.run([sys.executable, "-m", "genotex", "harness", "replay", str(log)],
                          capture_output=True, text=True)  # fmt: skip
    assert done.returncode == 2 and "--root" in done.stderr, done.stderr


# ---- keyrings ----------------------------------------------------------------------------------
#: A host process's program that opens one sample sandbox of `{sandbox}` (`sample()`), as a
#: run would: what it inherits (its keyring) and what becomes of it (its death) are the test's.
_A_RUN = """
import asyncio, ctypes, json, sys
from genotex.harness.sandboxes._bwrap import BubblewrapSandbox
from genotex.harness.sandboxes._podman import PodmanSandbox
from genotex.harness.sandboxes._sandbox_spec import SampleSandbox
cls = {{"bwrap": BubblewrapSandbox, "podman": PodmanSandbox}}[{sandbox!r}]
metadata = {{"genotex_sandbox": SampleSandbox().to_metadata()}}

async def sample():
    return await cls.sample_init("run", None, metadata)
"""

_KEYRING_HOST = (
    _A_RUN
    + """
keyctl, add_key, request_key = {calls}
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
secret = {secret!r}.encode()
if libc.syscall(keyctl, 1, None) < 0:  # KEYCTL_JOIN_SESSION_KEYRING: a fresh one, for the test
    print(json.dumps({{"skip": "keyctl(JOIN_SESSION_KEYRING) failed here"}})); sys.exit()
key = libc.syscall(add_key, b"user", b"genotex-test-secret", secret, len(secret), -3)
if key < 0:
    print(json.dumps({{"skip": "add_key to the session keyring failed here"}})); sys.exit()

def read():
    buffer = ctypes.create_string_buffer(256)
    size = libc.syscall(keyctl, 11, key, buffer, 256)  # KEYCTL_READ
    return buffer.raw[:size]

assert read() == secret  # the host itself reads its key: the probe below means something

async def main():
    made = await sample()
    try:
        return await made["default"].exec([{python!r}, "-c", {probe!r}, str(key)])
    finally:
        await cls.sample_cleanup("keyring", None, made, False)

done = asyncio.run(main())
found = {{"inside": done.stdout, "stderr": done.stderr[-2000:], "after": read().decode()}}
print(json.dumps(found))
"""
)

_KEYRING_PROBE = """
import ctypes, os, sys
keyctl, add_key, request_key = {calls}
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
key = int(sys.argv[1])
def said(name, result):
    print(name, result, os.strerror(ctypes.get_errno()) if result < 0 else "")
buffer = ctypes.create_string_buffer(256)
said("read", libc.syscall(keyctl, 11, key, buffer, 256))
print("payload", buffer.raw[:32])
said("session", libc.syscall(keyctl, 0, -3, 0))
said("search", libc.syscall(request_key, b"user", b"genotex-test-secret", None, 0))
said("update", libc.syscall(keyctl, 2, key, b"overwritten", 11))
said("add", libc.syscall(add_key, b"user", b"genotex-test-secret", b"overwritten", 11, -3))
try:
    print("listed", "genotex-test-secret" in open("/proc/keys").read())
except OSError as exc:
    print("listed unreadable", exc.errno)
"""


@pytest.mark.parametrize("sandbox", ISOLATED)
def test_which_host_uids_hold_keys_is_hidden(sandbox):
    """Issue #70 item 5: under podman `/proc/key-users` showed the host's per-uid key counts
    (`0: 12 11/11 ...`); both sandboxes now show it empty, as `/proc/keys`.
    """
    host = Path("/proc/key-users").read_text()
    assert host.strip(), "the host lists no uid with keys"

    async def work(environments):
        return await environments[0].exec(
            ["sh", "-c", "cat /proc/key-users /proc/keys 2>/dev/null; echo end"], timeout=60
        )

    done = _sandboxes(sandbox, 1, work)
    assert done.stdout.strip() == "end", done.stdout


@pytest.mark.parametrize("sandbox", ISOLATED)
def test_a_secret_in_the_hosts_session_keyring_is_unreadable_and_unchanged_from_inside(
    sandbox, tmp_path
):
    calls = _CALLS.get(platform.machine())
    if calls is None:
        pytest.skip(f"no keyring call numbers written for {platform.machine()}")
    secret = f"genotex-secret-{uuid.uuid4().hex}"
    probe = _KEYRING_PROBE.format(calls=calls)
    script = _KEYRING_HOST.format(calls=calls, secret=secret, sandbox=sandbox,
                                  python=_python(sandbox), probe=probe)  # fmt: skip
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=300, cwd=str(tmp_path))  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    found = json.loads(done.stdout.strip().splitlines()[-1])
    if "skip" in found:
        pytest.skip(found["skip"])
    inside = found["inside"]
    assert secret not in inside, inside
    for call in ("read", "session", "search", "update", "add"):
        line = next(row for row in inside.splitlines() if row.startswith(call + " "))
        assert " -1 " in f"{line} ", (call, inside, found["stderr"])
    assert "listed True" not in inside
    assert found["after"] == secret  # the host's key is unchanged


# ---- one host uid per sample (as root) ---------------------------------------------------------
as_root_only = pytest.mark.skipif(
    not AS_ROOT, reason="as a user every sample is the user's uid (the agents guide says so)"
)
_HOLD_INOTIFY = (
    "import ctypes, os, time\n"
    "libc = ctypes.CDLL(None, use_errno=True)\n"
    "held = []\n"
    "while True:\n"
    "    fd = libc.inotify_init1(0)\n"
    "    if fd < 0:\n"
    "        break\n"
    "    held.append(fd)\n"
    "print('held', len(held), os.strerror(ctypes.get_errno()), flush=True)\n"
    "time.sleep(6)\n"
)
_ONE_INOTIFY = (
    "import ctypes, os\nlibc = ctypes.CDLL(None, use_errno=True)\n"
    "fd = libc.inotify_init1(0)\n"
    "print('one', fd, os.strerror(ctypes.get_errno()) if fd < 0 else '')"
)


@as_root_only
@pytest.mark.parametrize("sandbox", ISOLATED)
def test_two_concurrent_samples_have_their_own_host_uids_and_per_uid_limits(sandbox):
    """0.10.1 gave every sample started as root one host uid: one sample holding all 128
    inotify instances made the other's `inotify_init1` fail.
    """

    async def work(environments):
        first, second = environments
        python = _python(sandbox)
        holding = asyncio.ensure_future(first.exec([python, "-c", _HOLD_INOTIFY], timeout=60))
        await asyncio.sleep(3)  # the first holds every instance its uid may have
        other = await second.exec([python, "-c", _ONE_INOTIFY], timeout=60)
        held = await holding
        uids = [first.agent_uid, second.agent_uid]
        ids = [await e.exec(["id", "-u"]) for e in environments]
        return uids, [i.stdout.strip() for i in ids], held, other

    uids, inside, held, other = _sandboxes(sandbox, 2, work)
    assert uids[0] != uids[1], uids
    for uid in uids:
        assert uid_base() + AGENT_UID <= uid < uid_base() + UID_RANGE
    assert inside == [str(u) for u in uids]  # neither sandbox makes a user namespace as root
    assert held.stdout.startswith("held ") and "Too many open files" in held.stdout, held
    assert other.stdout.startswith("one ") and " -1 " not in other.stdout, other


@as_root_only
@needs_bwrap
def test_a_later_run_gets_another_uid():
    """The lease goes round the range: the next sample (of this run or a later one) is given
    the uid after, not the one an ended sample had.
    """

    async def work(environments):
        return environments[0].agent_uid

    first = _sandboxes("bwrap", 1, work)
    second = _sandboxes("bwrap", 1, work)
    assert second != first


# ---- binds checked by what they hold -----------------------------------------------------------
def _plant(folder: Path, what: str, reference: Path | None = None) -> Path:
    """A folder of the import path holding `what`, deep inside, as found on a real disk."""
    deep = folder / "lib" / "nested"
    deep.mkdir(parents=True)
    if what == "preprocessed":  # a previous run's (or a colleague's) output/preprocess/<trait>
        assert reference is not None
        copy = deep / "old-run" / "Psoriasis"
        shutil.copytree(reference / "preprocess" / "Psoriasis", copy)
        return copy
    if what in ("hard link", "copy"):  # a reference answer under another name
        assert reference is not None
        answer = next(iter(sorted((reference / "regress").rglob("*.json"))))
        notes = deep / "notes.txt"
        if what == "hard link":
            os.link(answer, notes)
        else:
            shutil.copyfile(answer, notes)
        return notes
    if what == "site-packages":  # another environment's packages: walked whole
        packages = folder / "site-packages"
        (packages / "sub").mkdir(parents=True)
        (packages / "sub" / ".netrc").write_text("machine example.org login a password b\n")
        return packages / "sub" / ".netrc"
    if what == "benchmark":
        copy = deep / "GenoTEX-copy" / "metadata"
        copy.mkdir(parents=True)
        (copy / "task_info.json").write_text("{}")
        return copy / "task_info.json"
    if what == "netrc":
        (deep / ".netrc").write_text("machine example.org login a password b\n")
        return deep / ".netrc"
    (deep / "2026-11-27T09-00-00_e2e_x.eval").write_bytes(b"PK")
    return deep / "2026-11-27T09-00-00_e2e_x.eval"


@needs_bwrap
@pytest.mark.parametrize(
    "what", ["benchmark", "netrc", "log", "preprocessed", "hard link", "copy", "site-packages"]
)
def test_an_import_path_holding_a_benchmark_a_credential_or_a_log_is_refused_naming_it(
    tmp_path, monkeypatch, what
):
    """Issue #70 items 3 and 4 added the preprocessed answers' layout, a file that is a
    reference answer by identity or content whatever its name, and a `site-packages` walked
    whole.
    """
    bench = tmp_path / "bench"
    write_raw_benchmark(bench, recipes=False)
    elsewhere = tmp_path / "site"
    planted = _plant(elsewhere, what, bench / "reference" / "output")
    if what == "site-packages":
        elsewhere = elsewhere / "site-packages"
    monkeypatch.setattr(sys, "path", [*sys.path, str(elsewhere)])
    with pytest.raises(PrerequisiteError, match="import path holds") as raised:
        e2e(root=str(bench), traits="Asthma", sandbox="bwrap")
    said = str(raised.value)
    assert str(planted) in said and "\n" not in said, said
    if what in ("hard link", "copy"):
        kind = "a link to" if what == "hard link" else "a copy of"
        assert f"{kind} the reference's" in said, said
    # the same folder, now holding nothing of the kind: bound
    shutil.rmtree(planted) if planted.is_dir() else planted.unlink()
    task = e2e(root=str(bench), traits="Asthma", sandbox="bwrap")
    assert task.metadata["sandbox"] == "bwrap"


@needs_bwrap
@pytest.mark.parametrize("watched", ["inotify", "fingerprint"])
def test_an_import_path_folder_is_judged_again_before_every_command(tmp_path, monkeypatch, watched):
    """Issue #70 item 4: the folders are bound live, and 0.14 checked them once, when the task
    was made: a `.netrc` written there afterwards was read by the next command. Now the next
    command is refused, naming it; taken away, the command runs. Watched by inotify, or by
    each command's fingerprint where inotify cannot watch.
    """
    import os as _os

    from genotex.harness.sandboxes import _python_binds

    def no_inotify(*_args):
        raise OSError("no inotify instance")

    if watched == "fingerprint":
        monkeypatch.setattr(_python_binds.Watch, "__init__", no_inotify)
    monkeypatch.setattr(_python_binds, "_GUARDS", {})

    bench = tmp_path / "bench"
    write_raw_benchmark(bench, recipes=False)
    elsewhere = tmp_path / "site"
    (elsewhere / "lib").mkdir(parents=True)
    monkeypatch.setattr(sys, "path", [*sys.path, str(elsewhere)])
    task = e2e(root=str(bench), traits="Asthma", sandbox="bwrap")  # clean: made
    guarded = task.dataset[0].metadata["genotex_sandbox"]["guarded"]
    assert guarded[0] == str(bench / "reference" / "output")
    metadata = {"genotex_sandbox": {**SampleSandbox().to_metadata(), "guarded": guarded}}

    async def run(write):
        made = await CLASSES["bwrap"].sample_init("isolation", None, metadata)
        try:
            first = await made["default"].exec(["true"], timeout=60)
            write()
            try:
                second = await made["default"].exec(["true"], timeout=60)
            except RuntimeError as refused:
                return first, str(refused)
            return first, second
        finally:
            await CLASSES["bwrap"].sample_cleanup("isolation", None, made, False)

    netrc = elsewhere / "lib" / ".netrc"
    first, said = asyncio.run(run(lambda: netrc.write_text("machine a login b password c\n")))
    assert first.success and isinstance(said, str), said
    assert "the bwrap sandbox refuses to run the command" in said and str(netrc) in said
    netrc.unlink()
    answer = next(iter(sorted((bench / "reference" / "output" / "regress").rglob("*.json"))))
    linked = elsewhere / "lib" / "notes.txt"
    first, said = asyncio.run(run(lambda: _os.link(answer, linked)))
    assert isinstance(said, str) and "a link to the reference's" in said and str(linked) in said
    linked.unlink()
    first, second = asyncio.run(run(lambda: None))
    assert first.success and second.success


# ---- a killed run leaves nothing mounted -------------------------------------------------------
_KILLED_RUN = (
    _A_RUN
    + """
async def main():
    env = (await sample())["default"]
    print(env.folder, getattr(env, "name", ""), flush=True)
    await env.exec(["sleep", "300"])

asyncio.run(main())
"""
)


def _mounted(folder: str) -> bool:
    return any(
        line.split()[4] == folder for line in Path("/proc/self/mountinfo").read_text().splitlines()
    )


@pytest.mark.parametrize("sandbox", ISOLATED)
def test_a_run_killed_with_sigkill_leaves_no_mount_no_folder_no_container(sandbox, tmp_path):
    run = subprocess.Popen([sys.executable, "-c", _KILLED_RUN.format(sandbox=sandbox)],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           cwd=str(tmp_path))  # fmt: skip
    try:
        line = run.stdout.readline().split()
        assert line, run.stderr.read()
        folder, container = line[0], line[1:]
        time.sleep(2)  # the agent's command runs
        assert _mounted(folder) == AS_ROOT  # as root the folder is a tmpfs
    finally:
        run.send_signal(signal.SIGKILL)
        run.wait()
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and (_mounted(folder) or Path(folder).exists()):
        time.sleep(0.2)
    assert not _mounted(folder) and not Path(folder).exists()
    if container:  # podman: the container (and its `podman exec`) went first
        listed = subprocess.run(["podman", "ps", "--all", "--format", "{{.Names}}"],
                                capture_output=True, text=True)  # fmt: skip
        assert container[0] not in listed.stdout.split()


# ---- POSIX shared memory -----------------------------------------------------------------------
@pytest.mark.parametrize("sandbox", ISOLATED)
def test_multiprocessing_lock_works_inside(sandbox):
    code = textwrap.dedent("""
        import multiprocessing, os
        lock = multiprocessing.Lock()
        with lock:
            print("locked")
        print(oct(os.stat("/dev/shm").st_mode & 0o7777))
    """)

    async def work(environments):
        return await environments[0].exec([_python(sandbox), "-c", code], timeout=60)

    done = _sandboxes(sandbox, 1, work)
    assert done.success, done.stderr
    assert done.stdout.split() == ["locked", "0o1777"], done.stdout


def test_the_seccomp_filter_refuses_keyring_calls_on_both_architectures():
    """The BPF program read back by hand: for each keyring call of each architecture, a jump
    to the instruction that returns EPERM.
    """
    import struct

    from genotex.harness.sandboxes._seccomp import filter_program

    for machine, numbers in _CALLS.items():
        program = filter_program(machine)
        ops = [struct.unpack("<HBBI", program[i : i + 8]) for i in range(0, len(program), 8)]
        eperm = next(i for i, op in enumerate(ops) if op[0] == 0x06 and op[3] == 0x50000 | 1)
        for number in numbers:
            at = next(i for i, op in enumerate(ops) if op[0] == 0x15 and op[3] == number)
            assert at + 1 + ops[at][1] == eperm, (machine, number)
    assert ctypes.sizeof(ctypes.c_long) == 8  # the syscall numbers above are 64-bit ABIs'

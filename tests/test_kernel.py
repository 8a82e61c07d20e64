"""The persistent Python kernel GenoAgent's steps run in (issue #44), in each sandbox that can
hold one: its state persists, its output is cut, a step past its time is interrupted and the
state rebuilt by replay, it is confined as the sandbox's commands are, and it is gone when
stopped.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
import uuid
from pathlib import Path

import pytest

pytest.importorskip("inspect_ai", reason="the harness extra (inspect-ai) is not installed")
pytestmark = pytest.mark.filterwarnings("ignore::ResourceWarning")

from inspect_ai.util._sandbox.local import LocalSandboxEnvironment  # noqa: E402

from genotex.harness.sandboxes._bwrap import BubblewrapSandbox  # noqa: E402
from genotex.harness.sandboxes._kernel import (  # noqa: E402
    Kernel,
    KernelError,
    _local_directory,
    _server_source,
)
from genotex.harness.sandboxes._podman import PodmanSandbox, default_image, podman_problem  # noqa: E402
from genotex.harness.sandboxes._sandbox_spec import SampleSandbox, bwrap_problem  # noqa: E402
from genotex.harness.sandboxes._uids import AGENT_UID, UID_RANGE, uid_base  # noqa: E402

PROBLEMS = {"local": None, "bwrap": bwrap_problem(), "podman": podman_problem(default_image())}
#: The hostile suite's run as an unprivileged user (it runs this module too): rootless podman
#: may be impossible on CI's host (cgroups v1; `podman_problem` says why), and is skipped
#: then with the reason, as that suite skips it.
USER_RUN = os.environ.get("GENOTEX_HOSTILE_AS_USER") == "1"


def _skipped(kind: str, problem: str | None) -> bool:
    """Outside CI a sandbox that cannot run here is skipped; under CI only rootless podman."""
    if problem is None:
        return False
    return os.environ.get("CI") != "true" or (kind == "podman" and USER_RUN)


KINDS = [
    pytest.param(kind, marks=pytest.mark.skipif(_skipped(kind, p), reason=f"{kind}: {p}"))
    for kind, p in PROBLEMS.items()
]


async def _environment(kind: str):
    if kind == "local":
        return LocalSandboxEnvironment(), sys.executable
    if kind == "bwrap":
        return BubblewrapSandbox(SampleSandbox()), sys.executable
    env = PodmanSandbox(SampleSandbox(), default_image())
    await env.start()
    return env, "python"


async def _close(env) -> None:
    if isinstance(env, LocalSandboxEnvironment):
        env.directory.cleanup()
    else:
        await env.teardown()


def _run(kind: str, body) -> object:
    async def main():
        env, python = await _environment(kind)
        kernel = Kernel(env, python, preamble="TRAIT = 'Asthma'", output_chars=400)
        try:
            return await body(kernel, env)
        finally:
            await kernel.stop()
            await _close(env)

    return asyncio.run(main())


@pytest.mark.parametrize("kind", KINDS)
def test_state_persists_and_output_and_traces_are_the_steps(kind):
    async def body(kernel, env):
        first = await kernel.run("x = 41\nprint('hello', TRAIT)\nimport os\nos.system('echo sub')",
                                 "<one>", 60)  # fmt: skip
        second = await kernel.run("x += 1\nprint(x)\n\n1 / 0", "<two>", 60)
        return first, second

    first, second = _run(kind, body)
    assert (first.output, first.error) == ("hello Asthma\nsub\n", None)
    assert second.output == "42\n" and not second.ok
    # the trace starts at the step's own code, names it and its line, and shows the line
    assert second.error.splitlines()[1:] == [
        '  File "<two>", line 4, in <module>',
        "    1 / 0",
        *([] if sys.version_info < (3, 11) else ["    ~~^~~"]),
        "ZeroDivisionError: division by zero",
    ] or second.error.endswith("ZeroDivisionError: division by zero\n")
    assert "_kernel_server" not in second.error


@pytest.mark.parametrize("kind", KINDS)
def test_output_is_cut_to_its_bound_with_both_ends_kept(kind):
    async def body(kernel, env):
        return await kernel.run("print('A' * 50000 + 'Z')", "<long>", 60)

    run = _run(kind, body)
    assert run.cut and run.output.startswith("A" * 200) and run.output.rstrip().endswith("Z")
    assert len(run.output) < 400 + 100 and "output cut: 50,002 bytes" in run.output


@pytest.mark.parametrize("kind", KINDS)
def test_a_step_past_its_time_is_interrupted_and_replay_rebuilds_the_state(kind):
    async def body(kernel, env):
        await kernel.run("kept = 7", "<a>", 60)
        slow = await kernel.run("import time\ntime.sleep(60)", "<slow>", 2)
        lost = await kernel.run("print(kept)", "<after>", 60)
        again = await kernel.replay([("<a>", "kept = 7")], 60)
        found = await kernel.run("print(kept, TRAIT)", "<check>", 60)
        return slow, lost, again, found, (kernel.starts, kernel.resets)

    slow, lost, again, found, starts = _run(kind, body)
    assert slow.interrupted and "ran past its 2 s" in slow.error
    assert "NameError" in lost.error  # a fresh process: the old state is gone
    assert [r.ok for r in again] == [True]
    # by hand: started, started again after the interruption; the replay resets that one
    assert found.output == "7 Asthma\n" and starts == (2, 1)


@pytest.mark.parametrize("kind", KINDS)
def test_a_replay_resets_to_the_preambles_state_and_ends_what_the_steps_started(kind):
    """A replay forks the kernel's template again (no new interpreter): the steps' names and
    their changes to modules are gone, the preamble's are there, and every process the steps
    started is ended, a daemon that left its parent and session included.
    """
    token = f"genotex-test-{uuid.uuid4().hex}"
    sleeper = f"[sys.executable, '-c', 'import time; time.sleep(300)', {token!r}]"
    daemon = (
        "import os, subprocess, sys\n"
        f"subprocess.Popen({sleeper})\n"
        "if os.fork() == 0:\n"
        "    os.setsid()\n"
        f"    subprocess.Popen({sleeper})\n"
        "    os._exit(0)\n"
        "os.wait()\n"
    )

    async def body(kernel, env):
        first = await kernel.run(f"gone = 1\nimport json\njson.MARK = 1\n{daemon}", "<a>", 60)
        assert first.ok, first
        before = _sleepers(token)
        again = await kernel.replay([("<b>", "kept = 2")], 60)
        found = await kernel.run(
            "import json\nprint(kept, TRAIT, 'gone' in globals(), hasattr(json, 'MARK'))",
            "<check>", 60,
        )  # fmt: skip
        await asyncio.sleep(0.2)
        return before, again, found, _sleepers(token), (kernel.starts, kernel.resets)

    before, again, found, left, counts = _run(kind, body)
    assert [r.ok for r in again] == [True]
    assert found.output == "2 Asthma False False\n", found
    assert counts == (1, 1)  # one interpreter, reset once
    assert len(before) == 2 and left == []  # both sleepers ran; none is left


@pytest.mark.parametrize("kind", KINDS)
def test_a_reset_ends_processes_still_forking_when_it_comes(kind):
    """The reset kills round after round until a round finds no live process: a process
    forking 400 children as fast as it can is at it when the reset comes (a child born while
    a round reads /proc is found by the next), and none of them is left after, with the same
    interpreter kept.
    """
    token = f"genotex-test-{uuid.uuid4().hex}"
    spawner = (  # says it is forking (a file) after its 20th child
        "import os, sys, time\nfor n in range(400):\n    if os.fork() == 0:\n"
        "        time.sleep(300)\n    if n == 20:\n        open(sys.argv[1], 'w').close()\n"
    )
    step = (
        "import os, subprocess, sys, time\n"
        f"subprocess.Popen([sys.executable, '-c', {spawner!r}, 'forking', {token!r}])\n"
        "while not os.path.exists('forking'):\n    time.sleep(0.001)\n"
    )

    async def body(kernel, env):
        started = await kernel.run(step, "<tree>", 60)
        again = await kernel.replay([("<b>", "kept = 4")], 60)
        await asyncio.sleep(0.2)
        return started, again, _sleepers(token), (kernel.starts, kernel.resets)

    started, again, left, counts = _run(kind, body)
    assert started.ok and [r.ok for r in again] == [True], (started, again)
    assert left == [] and counts == (1, 1)


@pytest.mark.parametrize("kind", KINDS)
def test_a_step_that_kills_the_template_costs_an_interpreter_not_the_state(kind):
    """The worker may signal its parent, the template: the reset then fails and the replay
    starts a new process, which rebuilds the same state.
    """

    async def body(kernel, env):
        await kernel.run("import os, signal\nos.kill(os.getppid(), signal.SIGKILL)", "<a>", 60)
        again = await kernel.replay([("<b>", "kept = 3")], 60)
        found = await kernel.run("print(kept, TRAIT)", "<check>", 60)
        return again, found, (kernel.starts, kernel.resets)

    again, found, counts = _run(kind, body)
    assert [r.ok for r in again] == [True] and found.output == "3 Asthma\n"
    assert counts == (2, 0)  # by hand: the first start, and the one the failed reset asked


def _sleepers(token: str) -> list[str]:
    """The host's processes with `token` on their command line (pids)."""
    found = []
    for proc in Path("/proc").iterdir():
        with contextlib.suppress(OSError):
            if proc.name.isdigit() and token.encode() in (proc / "cmdline").read_bytes():
                found.append(proc.name)
    return found


@pytest.mark.parametrize("kind", KINDS)
def test_a_step_reading_its_input_does_not_break_the_protocol(kind):
    async def body(kernel, env):
        read = await kernel.run("import sys\nprint(repr(sys.stdin.read()))", "<stdin>", 60)
        raw = await kernel.run("import os\nprint(os.read(0, 100))", "<fd0>", 60)
        after = await kernel.run("print('still here')", "<next>", 60)
        return read, raw, after

    read, raw, after = _run(kind, body)
    assert read.output == "''\n" and raw.output == "b''\n" and after.output == "still here\n"


@pytest.mark.parametrize("kind", ["bwrap", "podman"])
def test_the_kernel_is_confined_as_the_sandboxs_commands_are(kind, monkeypatch):
    if _skipped(kind, PROBLEMS[kind]):
        pytest.skip(f"{kind}: {PROBLEMS[kind]}")
    canary = f"canary-{uuid.uuid4().hex}"
    monkeypatch.setenv("GENOTEX_KERNEL_CANARY", canary)

    async def body(kernel, env):
        return env.agent_uid, await kernel.run(
            "import os\nprint(os.getuid())\n"
            "print(open('/proc/self/status').read().split('CapEff:')[1].split()[0])\n"
            "def seen(p):\n"
            "    try:\n"
            "        return 'GENOTEX_KERNEL_CANARY' in open(f'/proc/{p}/environ', errors='replace')"
            ".read()\n"
            "    except OSError:\n"  # a process of another uid (bwrap's, as root): unreadable
            "        return False\n"
            "print(any(seen(p) for p in os.listdir('/proc') if p.isdigit()))",
            "<probe>", 60,
        )  # fmt: skip

    host, run = _run(kind, body)
    uid, capabilities, leaked = run.output.split()
    # never uid 0: as root the sample's own uid of the unused range (issues #50, #59), the
    # host uid itself under both (neither makes a user namespace as root); as a user under
    # bwrap the agent's 1000 (rootless podman: the container's root, the user)
    if os.geteuid() == 0:
        assert uid_base() + AGENT_UID <= host < uid_base() + UID_RANGE
        assert uid == str(host)
    else:
        assert uid == "1000" or kind == "podman"
    assert int(capabilities, 16) == 0 and leaked == "False"


@pytest.mark.parametrize("kind", KINDS)
def test_a_stopped_kernel_leaves_no_process(kind):
    """Only this run's processes are looked at (#62 item 9: another genotex run's live kernel
    failed this test): the kernel's own, by the sample folder they run in, and the step's
    child, by a token of this run on its command line.
    """
    token = f"genotex-test-{uuid.uuid4().hex}"

    async def body(kernel, env):
        folder = Path(getattr(env, "folder", None) or _local_directory(env))
        await kernel.run(f"import subprocess, sys\nsubprocess.Popen([sys.executable, '-c', "
                         f"'import time; time.sleep(300)', {token!r}])", "<start>", 60)  # fmt: skip
        process = kernel.process
        await kernel.stop()
        listed = await env.exec(["sh", "-c", "ps -eo args 2>/dev/null || ls /proc"])
        left = [p for p in Path("/proc").iterdir() if p.name.isdigit() and _ours(p, folder, token)]
        return process, listed, left

    process, listed, left = _run(kind, body)
    assert process.returncode is not None
    assert token not in listed.stdout
    assert left == []


def _ours(proc: Path, folder: Path, token: str) -> bool:
    """Whether a host process is this run's: the step's child (its token), or a kernel process
    (its marker) whose working folder is this run's sample folder.
    """
    try:
        cmdline = (proc / "cmdline").read_bytes()
        if token.encode() in cmdline:
            return True
        if _server_source()[:60].encode() not in cmdline:  # the kernel's own source
            return False
        here, there = os.stat(proc / "cwd"), folder.stat()
        return (here.st_dev, here.st_ino) == (there.st_dev, there.st_ino)
    except OSError:
        return False


def test_a_sandbox_that_cannot_hold_a_kernel_is_one_sentence():
    class Elsewhere:
        pass

    with pytest.raises(KernelError, match="not in Elsewhere"):
        asyncio.run(Kernel(Elsewhere(), "python").start())


# ---- step code against the kernel's own protocol (issues #50, #59) ----------------------------
def _send_own(fields: str) -> str:
    """Step code that writes a result frame of its own on the kernel's result socket, as the
    worker would: the current request's nonce (read from the worker's frame above the step)
    and `fields` (a dict literal's items).
    """
    return (
        "import json, sys\n"
        "_nonce = sys._getframe(1).f_locals['request']['nonce']\n"
        "_loop = sys._getframe(3).f_locals\n"
        f"_body = json.dumps({{'nonce': _nonce, {fields}}}).encode()\n"
        "_loop['send'](_loop['pack'](len(_body)) + _body)\n"
    )


#: A step that reaches for the channel, forges frames for other requests on the result
#: socket, and has a child write one with this request's nonce: none of it answers.
_FORGE = (
    "import __main__, os\n"
    "print('channel' if hasattr(__main__, '_channel') else 'no channel')\n"
    + _send_own("'output': 'forged-stale', 'error': None").replace("_nonce, ", "'stale', ")
    + "_loop['send'](_loop['pack'](len(_body)) + _body.replace(b'stale', b'later'))\n"
    + "child = os.fork()\n"
    "if child == 0:\n"
    "    _body = json.dumps({'nonce': _nonce, 'output': 'from a child', 'error': None}).encode()\n"
    "    _loop['send'](_loop['pack'](len(_body)) + _body)\n"
    "    os._exit(0)\n"
    "os.waitpid(child, 0)\n"
    "print('mine')"
)


@pytest.mark.parametrize("kind", KINDS)
def test_frames_a_step_forges_never_answer_a_later_step(kind):
    """0.8.0 took the next line as the answer: every later step got the previous one's. Since
    0.11.0 the channel is not in the step's process at all, a frame carrying another
    request's nonce is passed over, and so is one a child of the step wrote.
    """

    async def body(kernel, env):
        forged = await kernel.run(_FORGE, "<forge>", 60)
        later = [await kernel.run(f"print({n})", f"<n{n}>", 60) for n in (1, 2, 3)]
        return forged, later, kernel.passed_over

    forged, later, passed_over = _run(kind, body)
    assert forged.output == "no channel\nmine\n" and forged.error is None, forged
    assert [r.output for r in later] == ["1\n", "2\n", "3\n"]
    assert passed_over == 3  # the two frames of other nonces and the child's


#: Step code that patches what a kernel serves its protocol with, as the issue's probe did.
_PATCH_LOOP = """
import __main__, sys, types
def ok(*args, **kwargs):
    return {"output": "", "error": None, "cut": False, "seconds": 0.0}
__main__._run = ok
sys._getframe(1).f_globals["_run"] = ok
sys._getframe(1).f_globals["_answer"] = ok
fake = types.ModuleType("__main__")
fake._run = ok
sys.modules["__main__"] = fake
"""


@pytest.mark.parametrize("kind", KINDS)
def test_a_step_patching_the_kernels_loop_cannot_make_a_later_failing_step_read_ok(kind):
    """Issue #59: a step replaced `__main__._run`; a later step that raised was recorded ok."""

    async def body(kernel, env):
        patched = await kernel.run(_PATCH_LOOP, "<patch>", 60)
        failing = await kernel.run("raise ValueError('the real error')", "<fails>", 60)
        named = await kernel.run("import __main__\nprint(__main__.__name__, 'ok' in dir(__main__))",
                                 "<namespace>", 60)  # fmt: skip
        return patched, failing, named

    patched, failing, named = _run(kind, body)
    assert patched.ok
    assert not failing.ok and "ValueError: the real error" in failing.error
    assert named.output == "__main__ True\n"  # the steps' own namespace, patched or not


@pytest.mark.parametrize("kind", KINDS)
def test_a_step_that_breaks_the_framing_restarts_the_kernel_and_says_so(kind):
    """A line nested 100,000 deep made 0.8.0's host raise RecursionError (the solver died);
    since 0.11.0 a step reaches only the worker's socket: a frame it writes too large (a
    header of 2**60, or junk read as one) restarts the kernel, said.
    """

    async def body(kernel, env):
        await kernel.run("kept = 1", "<a>", 60)
        nested = await kernel.run(
            "import sys\n_loop = sys._getframe(3).f_locals\n_loop['send'](_loop['pack'](2**60))",
            "<nested>", 60,
        )  # fmt: skip
        junk = await kernel.run(
            "import sys\nsys._getframe(3).f_locals['send'](b'\\xff' * 64)", "<junk>", 60
        )
        after = await kernel.run("print('fresh', 'kept' in globals())", "<after>", 60)
        return nested, junk, after, kernel.starts

    nested, junk, after, starts = _run(kind, body)
    for run, name in ((nested, "<nested>"), (junk, "<junk>")):
        assert run.interrupted and f"{name} broke the kernel's protocol" in run.error
        assert "where the kernel's answer goes" in run.error
    assert after.output == "fresh False\n" and starts == 3


@pytest.mark.parametrize("kind", KINDS)
def test_a_kernel_that_reads_no_input_is_cut_off_at_the_steps_time(kind):
    """A step forges its own answer, then holds the kernel; the next request (over the pipe's
    64 KB) is not read: 0.8.0 waited in drain() with no timeout (96 s for a 20 s step).
    """

    async def body(kernel, env):
        hold = _send_own("'output': 'own forged', 'error': None") + "import time\ntime.sleep(120)\n"
        forged = await kernel.run(hold, "<hold>", 60)
        started = asyncio.get_running_loop().time()
        big = await kernel.run("x = '" + "a" * 300_000 + "'", "<big>", 3)
        return forged, big, asyncio.get_running_loop().time() - started

    forged, big, seconds = _run(kind, body)
    assert forged.output == "own forged"  # a step can forge its own answer (documented)
    assert big.interrupted and seconds < 15, (big, seconds)


@pytest.mark.parametrize("kind", KINDS)
def test_a_kernel_that_dies_is_told_from_one_that_ran_out_of_time(kind):
    async def body(kernel, env):
        return await kernel.run("import os\nos._exit(3)", "<die>", 30)

    died = _run(kind, body)
    assert died.interrupted and "the kernel died during <die> (exit 3)" in died.error, died.error
    assert "ran past" not in died.error


@pytest.mark.parametrize("kind", KINDS)
def test_streams_replaced_and_children_forked_by_a_step_do_not_break_the_kernel(kind):
    async def body(kernel, env):
        nulled = await kernel.run("import sys\nsys.stdout = None\nsys.stderr = None", "<n>", 30)
        printed = await kernel.run("print('back')", "<p>", 30)
        forked = await kernel.run("import os\nchild = os.fork()\nif child:\n    print('parent')",
                                  "<fork>", 30)  # fmt: skip
        after = [await kernel.run(f"print({n})", f"<a{n}>", 30) for n in (1, 2)]
        return nulled, printed, forked, after

    nulled, printed, forked, after = _run(kind, body)
    assert nulled.ok and printed.output == "back\n"
    assert "parent" in forked.output
    assert [r.output for r in after] == ["1\n", "2\n"]


@pytest.mark.parametrize("kind", KINDS)
def test_output_is_cut_on_the_host_side_too(kind):
    """A step that forges its own answer with 1 MB of output is still cut to the bound."""

    async def body(kernel, env):
        forge = _send_own("'output': 'B' * 1_000_000, 'error': None")
        return await kernel.run(forge, "<big>", 60)

    run = _run(kind, body)
    assert run.cut and len(run.output) < 400 + 100 and "1,000,000 characters" in run.output


@pytest.mark.parametrize("kind", KINDS)
def test_a_step_that_breaks_its_streams_or_builtins_is_not_the_next_steps_fault(kind):
    """#63 item 6: a step that closed sys.stdout or patched builtins broke the kernel, and
    every later honest step was blamed."""

    async def body(kernel, env):
        closed = await kernel.run("import sys\nsys.stdout.close()\nsys.stderr.close()", "<c>", 30)
        honest = await kernel.run("print('still here')", "<h>", 30)
        patched = await kernel.run(
            "import builtins\nbuiltins.print = None\nbuiltins.len = lambda x: -1\n"
            "del builtins.sorted\nbuiltins.extra = 1",
            "<b>", 30,
        )  # fmt: skip
        after = await kernel.run("print(len([1, 2]), sorted([2, 1]), 'extra' in dir(__builtins__))",
                                 "<a>", 30)  # fmt: skip
        return closed, honest, patched, after

    closed, honest, patched, after = _run(kind, body)
    assert closed.ok and honest.output == "still here\n" and honest.ok
    assert patched.ok and after.ok, after.error
    assert after.output == "2 [1, 2] False\n"


@pytest.mark.parametrize("kind", KINDS)
def test_a_deep_recursion_is_traced_in_a_moment_and_cut(kind):
    """#63 item 6: a recursion bomb's traceback took ~18 s to format: reported as a timeout."""

    async def body(kernel, env):
        code = (
            "import sys\nsys.setrecursionlimit(210_000)\n"
            "def down(n):\n    if n == 0:\n        raise ValueError('bottom')\n"
            "    return down(n - 1)\n"
            "down(200_000)"
        )
        return await kernel.run(code, "<deep>", 60)

    run = _run(kind, body)
    assert not run.interrupted and run.seconds < 20, (run.seconds, run.error[-300:])
    assert "[... trace cut: 200,00" in run.error and run.error.count("in down") <= 100
    assert len(run.error) < 20_000


@pytest.mark.parametrize("kind", KINDS)
def test_a_forked_childs_late_output_stays_out_of_later_steps(kind):
    """#63 item 6: a child a step forked and left running wrote into the next step's record."""

    async def body(kernel, env):
        forked = await kernel.run(
            "import os, time\nif os.fork() == 0:\n    time.sleep(1.0)\n    print('late child')"
            "\n    os._exit(0)\nprint('parent done')",
            "<fork>", 30,
        )  # fmt: skip
        later = await kernel.run("import time\ntime.sleep(2.0)\nprint('mine')", "<later>", 30)
        last = await kernel.run("print('last')", "<last>", 30)
        return forked, later, last

    forked, later, last = _run(kind, body)
    assert forked.output == "parent done\n"
    assert later.output == "mine\n" and last.output == "last\n"


#: Step 1 of the forging daemon (issue #70 item 2): a child left running that tries every
#: way into the supervisor (the worker's parent), writes what each gave, and, had any worked,
#: would have answered the host in the supervisor's place.
_DAEMON = """
import ctypes, errno, json, os, time
template = os.getppid()  # the worker's parent; the template's is the supervisor
with open(f"/proc/{template}/stat") as stat:
    supervisor = int(stat.read().rsplit(")", 1)[1].split()[1])
libc = ctypes.CDLL(None, use_errno=True)
def tried(attempt):
    try:
        attempt()
    except OSError as exc:
        return exc.errno
    return "done"
def attempts(target):
    found = {}
    found["mem"] = tried(lambda: open(f"/proc/{target}/mem", "rb").close())
    found["fd"] = tried(lambda: os.listdir(f"/proc/{target}/fd"))
    pidfd = os.pidfd_open(target)
    taken = libc.syscall(438, pidfd, 0, 0)  # pidfd_getfd of its fd 0, the host's channel
    found["pidfd_getfd"] = "taken" if taken >= 0 else ctypes.get_errno()
    attached = libc.ptrace(16, target, 0, 0)  # PTRACE_ATTACH
    found["ptrace"] = "attached" if attached == 0 else ctypes.get_errno()
    return found
if os.fork() == 0:
    found = {"supervisor": attempts(supervisor), "template": attempts(template),
             "distinct": supervisor != template}
    with open("/tmp/attempts.json", "w") as out:
        json.dump(found, out)
    time.sleep(60)
    os._exit(0)
print("daemon started")
"""


@pytest.mark.parametrize("kind", [k for k in KINDS if k.values[0] != "local"])
def test_step_code_cannot_reach_the_kernels_supervisor(kind):
    """A daemon forked by one step cannot trace the supervisor or the template, open their
    memory or their descriptors, or take them with pidfd_getfd (each refused: EPERM or
    EACCES), so a later step's real failure is recorded as a failure.
    """
    import errno
    import json

    async def body(kernel, env):
        started = await kernel.run(_DAEMON, "<daemon>", 60)
        await asyncio.sleep(1.0)
        failing = await kernel.run("raise RuntimeError('REAL-FAILURE-OF-STEP-TWO')", "<two>", 60)
        found = await kernel.run("print(open('/tmp/attempts.json').read())", "<read>", 60)
        return started, failing, found

    started, failing, found = _run(kind, body)
    assert started.ok, started.error
    assert not failing.ok and "REAL-FAILURE-OF-STEP-TWO" in failing.error
    attempts = json.loads(found.output)
    refused = {errno.EPERM, errno.EACCES}
    assert attempts.pop("distinct") is True, attempts
    for target in ("supervisor", "template"):  # the template forks every later state
        assert set(attempts[target]) == {"mem", "fd", "pidfd_getfd", "ptrace"}
        assert all(value in refused for value in attempts[target].values()), attempts

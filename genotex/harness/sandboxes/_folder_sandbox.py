"""What genotex's isolated sandboxes share: a host folder per sample seen inside as the agent's
`/home/agent` and `/tmp` (as root a tmpfs of `disk_mb` and `files`, so a write stops when
it is full), files listed, read and written from the host by descriptors (no link followed
at any part of a path, no FIFO opened, sizes bounded), and the limits checked after each
command, each hit the sample's failure reason.

`bwrap` and `podman` differ in how a command gets into its namespaces; what the agent may
read, write and use is the same, so the hostile suite holds both to the same findings.
"""

from __future__ import annotations

import contextlib
import os
import signal
import stat
import sys
import tempfile
from pathlib import Path
from typing import Literal, overload

from inspect_ai.util import ExecResult, SandboxEnvironment
from inspect_ai.util._sandbox.environment import SandboxEnvironmentConfigType
from typing_extensions import override

from ._host_files import (
    MAX_READ_BYTES,
    check_read_size,
    folder_beneath,
    folder_bytes,
    mount_tmpfs,
    open_at,
    read_chunks,
)
from ._leftovers import (
    folder_prefix,
    release_watcher,
    remove_tree,
    sandboxes_root,
    watch_folder,
)
from ._sandbox_spec import AGENT_UID, SampleSandbox, SandboxLimitError, SandboxLimits
from ._uids import UidLease

__all__ = [
    "AGENT_UID",
    "HOME",
    "METADATA_KEY",
    "HostFolderSandbox",
    "sandbox_variables",
]

#: The agent's working folder inside the sandbox.
HOME = "/home/agent"
#: The host's variables a sandbox keeps: OpenBLAS's kernel choice, no secret.
BLAS_VARIABLES = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")
#: Where a sample's metadata carries its binds and limits for the sandbox.
METADATA_KEY = "genotex_sandbox"
MiB = 1024 * 1024
#: Whether this run has said which limits a user's sandbox checks only after a command.
_SAID: list[bool] = []
#: What a refused allocation prints (Python, the C library, C++).
_OUT_OF_MEMORY = ("MemoryError", "Cannot allocate memory", "std::bad_alloc")
#: What a refused fork prints (dash, bash, Python), where no pids cgroup counts the refusals.
_NO_FORK = ("Cannot fork", "fork: retry", "fork: Resource temporarily unavailable", "can't fork")


def sandbox_variables(
    spec: SampleSandbox, python_bin: str, env: dict[str, str] | None
) -> dict[str, str]:
    """A command's whole environment: a working folder's basics, the sample's, the call's.

    Nothing of the host's environment (its secrets) reaches the agent but the OpenBLAS
    kernel choice (`BLAS_VARIABLES`), which some processors need to compute right, and
    which makes a sandboxed answer the host's, bit for bit.
    """
    return {
        **{k: os.environ[k] for k in BLAS_VARIABLES if k in os.environ},
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


class HostFolderSandbox(SandboxEnvironment):
    """A sample's sandbox over a host folder: `home` is its `/home/agent`, `tmp` its `/tmp`."""

    def __init__(self, spec: SampleSandbox, kind: str) -> None:
        super().__init__()
        self.spec = spec
        # named after the run (`genotex-<kind>-<pid>-<start>-…`): a later run removes it if
        # this one is killed before its cleanup (`sweep_folders`); in the run's user's own
        # folder, where no other user can make, swap or steer anything (`sandboxes_root`)
        self.folder = Path(tempfile.mkdtemp(prefix=folder_prefix(kind), dir=sandboxes_root()))
        #: whether the folders are a tmpfs of `disk_mb` and `files` (a write stops when full)
        self.bounded = mount_tmpfs(self.folder, spec.limits)
        self.home = self.folder / "home"
        self.home.mkdir()
        self.tmp = self.folder / "tmp"  # the sample's own /tmp, kept between its commands
        self.tmp.mkdir()
        #: who owns what the host writes into the folders (the agent's uid and gid), if not us
        self.owner: tuple[int, int] | None = None
        #: the agent's uid on the host (set by each sandbox: its own leased uid as root)
        self.agent_uid = os.getuid()
        #: as root, the lease of that uid (`lease_uid`), let go when the folder is gone
        self.lease: UidLease | None = None
        self.watcher = watch_folder(self.folder, self.removal_command())

    def removal_command(self) -> list[str]:
        """What must go before the folder when the run dies without its cleanup (a
        container holding the folder's mount); nothing, for a sandbox of bwrap commands.
        """
        return []

    def memory_bound(self) -> int:
        """The bytes a sample's memory cgroup allows: its memory, and its folders' files when
        they are a tmpfs (whose pages count as the memory of the process that wrote them).
        """
        limits = self.spec.limits
        return (limits.memory_mb + (limits.disk_mb if self.bounded else 0)) * MiB

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
        """Remove the sample's folder, whatever modes the agent left in it (a folder of mode
        000 is opened first); a folder that stays is said, never passed over. The watcher is
        then told that the run cleaned up after itself, and the uid's lease let go.
        """
        if not remove_tree(self.folder):
            print(f"genotex: could not remove the sample folder {self.folder}", file=sys.stderr)
        release_watcher(self.watcher)
        if self.lease is not None:  # the uid is free once nothing of the sample is left
            self.lease.release()

    def say_limits_after_commands(self) -> None:
        """As a user (no tmpfs of `disk_mb`): say once that the folders' size and file count
        are checked after each command, not while it runs.
        """
        if not self.bounded and not _SAID:
            _SAID.append(True)
            print(
                "genotex: as a user, disk_mb and files are checked after each command (a "
                "command may pass them while it runs); file_mb, cpu_seconds and memory_mb "
                "(per process) hold during it. Run as root for folders bounded while a "
                "command runs.",
                file=sys.stderr,
            )

    async def quiesce(self) -> None:
        """Stop every process the agent left running, before its output is read (a process
        that goes on could change a file as it is read). Nothing outlives a bwrap command.
        """

    def process_argv(self, cmd: list[str]) -> list[str]:
        """The host's command that runs `cmd` in the sandbox as a long-lived process (a kernel,
        a server) with its standard streams the host's, under the sandbox's confinement and
        limits; the host starts it in `folder`.
        """
        raise NotImplementedError

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
        """Run `cmd` in the sample's sandbox; a limit hit ends the sample (`check_limits`)."""
        before = self.limits_before()
        result = await self.run_command(cmd, input, cwd, env, timeout, concurrency)
        self.check_limits(result, before)
        return result

    async def run_command(  # noqa: PLR0913, PLR0917 - exec's arguments, handed on
        self,
        cmd: list[str],
        input: str | bytes | None,
        cwd: str | None,
        env: dict[str, str] | None,
        timeout: int | None,
        concurrency: bool,
    ) -> ExecResult[str]:
        """How this sandbox runs one command (its launch); `exec` checks the limits after."""
        raise NotImplementedError

    def limit_hits(self) -> int:
        """How often the process limit refused a fork so far (0 where it cannot be told)."""
        return 0

    def oom_kills(self) -> int:
        """How many processes the sample's memory cgroup killed so far (0 where there is none)."""
        return 0

    def counts_forks(self) -> bool:
        """Whether a pids cgroup counts the forks the process limit refused (else RLIMIT_NPROC
        bounds the sample, and a refused fork is known by what the command printed).
        """
        return False

    def check_limits(self, result: ExecResult[str], before: tuple[int, int]) -> None:
        """Raise SandboxLimitError naming the limit a finished command hit, if it hit one.

        `before` is (`limit_hits()`, `oom_kills()`) taken before the command.
        """
        limits, returncode = self.spec.limits, result.returncode
        signals = {signal.SIGXCPU: "CPU time", signal.SIGXFSZ: "file size"}
        for number, what in signals.items():
            if returncode in (-number, 128 + number):
                raise SandboxLimitError(f"sandbox limit: {what} limit hit ({_said(limits, what)})")
        memory = f"{self.memory_bound() // MiB:,} MB"
        if self.oom_kills() > before[1]:
            raise SandboxLimitError(
                f"sandbox limit: memory limit hit (the sample's processes and files used more "
                f"than {memory})"
            )
        if not result.success and any(m in result.stderr for m in _OUT_OF_MEMORY):
            raise SandboxLimitError(
                f"sandbox limit: memory limit hit (an allocation beyond {limits.memory_mb:,} MB "
                "of address space was refused)"
            )
        refused = not self.counts_forks() and any(m in result.stderr for m in _NO_FORK)
        if self.limit_hits() > before[0] or refused:
            raise SandboxLimitError(
                f"sandbox limit: process limit hit (at most {limits.processes} at once)"
            )
        if self.bounded:
            self._check_full()
        used, largest, entries = folder_bytes(self.home, self.tmp)
        if entries > limits.files:
            raise SandboxLimitError(
                f"sandbox limit: file count limit hit (its folders hold {entries:,} files and "
                f"folders, more than the {limits.files:,} allowed)"
            )
        if largest >= limits.file_mb * MiB:  # a write stopped at the limit, signal ignored
            raise SandboxLimitError(f"sandbox limit: file size limit hit ({_said(limits, 'file')})")
        if used > limits.disk_mb * MiB:
            raise SandboxLimitError(
                f"sandbox limit: its folders hold {used / MiB:,.0f} MB, more than the "
                f"{limits.disk_mb:,} MB allowed"
            )

    def limits_before(self) -> tuple[int, int]:
        """What `check_limits` compares with after a command: the limits' hits so far."""
        return self.limit_hits(), self.oom_kills()

    def _check_full(self) -> None:
        """The tmpfs stopped a write: it is full, of bytes or of files."""
        limits = self.spec.limits
        found = os.statvfs(self.folder)
        if found.f_bavail * found.f_frsize < 64 * 1024:
            raise SandboxLimitError(
                f"sandbox limit: disk limit hit (its folders are full: {limits.disk_mb:,} MB, "
                "and the write past it was refused)"
            )
        if found.f_favail < 2:
            raise SandboxLimitError(
                f"sandbox limit: file count limit hit (its folders hold {limits.files:,} files "
                "and folders)"
            )

    # ---- files, from the host side, never outside the sample's folder ----------------------
    def _host_parts(self, file: str, *, bound: bool = False) -> tuple[Path, list[str]]:
        """The host folder a sandbox path lies under, and its parts below it: `home` or `tmp`,
        or with `bound` the host source of a read-only input bound over part of `home`
        (what the agent sees there; the host's `home` holds only an empty mount point).
        """
        inside = os.path.normpath(file if file.startswith("/") else f"{HOME}/{file}")
        places = [(HOME, self.home), ("/tmp", self.tmp)]
        if bound:  # the deepest bind first: it hides what lies under a shallower one
            binds = sorted(self.spec.binds.items(), key=lambda b: -b[0].count("/"))
            places = [(f"{HOME}/{r}", Path(h)) for r, h in binds] + places
        elif any(
            inside == f"{HOME}/{r}" or inside.startswith(f"{HOME}/{r}/") for r in self.spec.binds
        ):
            raise PermissionError(f"{file}: it is a read-only input of the sample")
        for root, host in places:
            relative = os.path.relpath(inside, root)
            if relative != ".." and not relative.startswith("../"):
                parts = [] if relative == "." else relative.split("/")
                if not parts and host not in (self.home, self.tmp) and not host.is_dir():
                    return host.parent, [host.name]  # a file bound by itself
                return host, parts
        raise PermissionError(f"{file}: only files under {HOME} or /tmp can be read or written")

    def list_files(self, folder: str, *, limit: int = 1_000_000) -> list[tuple[str, int]]:
        """The regular files under a sandbox folder, from the host: (path under it, size),
        sorted; no link followed, nothing run in the sandbox. At most `limit` entries are
        looked at (OverflowError past them).
        """
        host, parts = self._host_parts(folder, bound=True)
        found: list[tuple[str, int]] = []
        seen = 0
        try:
            with folder_beneath(host, parts, folder, make=None) as top:
                for current, folders, names, fd in os.fwalk(".", dir_fd=top):
                    seen += len(folders) + len(names)
                    if seen > limit:
                        raise OverflowError(f"{folder} holds more than {limit:,} entries")
                    for name in names:
                        with contextlib.suppress(OSError):
                            info = os.stat(name, dir_fd=fd, follow_symlinks=False)
                            if stat.S_ISREG(info.st_mode):
                                path = os.path.normpath(os.path.join(current, name))
                                found.append((path, info.st_size))
        except (FileNotFoundError, PermissionError):
            return []
        return sorted(found)

    async def write_file(self, file: str, contents: str | bytes) -> None:
        """Write a file of the sample's folder (parents made), following no link anywhere."""
        host, parts = self._host_parts(file)
        if not parts:
            raise IsADirectoryError(file)
        data = contents.encode() if isinstance(contents, str) else contents
        with folder_beneath(host, parts[:-1], file, make=self.owner or True) as folder:
            flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_NONBLOCK
            handle = open_at(parts[-1], flags, folder, file)
            with os.fdopen(handle, "wb") as out:
                if not stat.S_ISREG(os.fstat(out.fileno()).st_mode):
                    raise PermissionError(f"{file}: it is not a regular file")
                if self.owner is not None:  # the agent's, as if it had written it
                    os.fchown(out.fileno(), *self.owner)
                out.write(data)

    @overload
    async def read_file(self, file: str, text: Literal[True] = True) -> str: ...

    @overload
    async def read_file(self, file: str, text: Literal[False]) -> bytes: ...

    async def read_file(self, file: str, text: bool = True) -> str | bytes:
        """Read a regular file of the sample's folder: no link followed at any part of its path,
        never blocking (a FIFO or device is refused), bounded in size.
        """
        host, parts = self._host_parts(file, bound=True)
        if not parts:
            raise IsADirectoryError(file)
        with folder_beneath(host, parts[:-1], file, make=None) as folder:
            handle = open_at(parts[-1], os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, folder, file)
            with os.fdopen(handle, "rb") as source:
                info = os.fstat(source.fileno())
                if stat.S_ISDIR(info.st_mode):
                    raise IsADirectoryError(file)
                if not stat.S_ISREG(info.st_mode):
                    raise PermissionError(f"{file}: it is not a regular file")
                check_read_size(info.st_size, file)
                data = read_chunks(source, min(info.st_size, MAX_READ_BYTES) + 1)
        if len(data) > info.st_size:
            raise PermissionError(f"{file}: it grew while it was read")
        return data.decode("utf-8") if text else data


def _said(limits: SandboxLimits, what: str) -> str:
    if what == "CPU time":
        return f"{limits.cpu_seconds:,} s of CPU a process"
    return f"{limits.file_mb:,} MB a file"

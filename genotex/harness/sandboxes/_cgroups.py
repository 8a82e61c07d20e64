"""A bwrap sample's cgroups: its pids and memory cgroups, below the caller's own, so that a job
scheduler's caps on the caller still hold; made as root only.
"""

from __future__ import annotations

import contextlib
import os
import sys
import uuid
from pathlib import Path

from ._leftovers import remove_cgroup, run_tag
from ._sandbox_spec import SandboxLimits

__all__ = ["SampleCgroup", "oom_kills", "own_cgroups", "pids_limit_hits"]


def own_cgroups() -> dict[str, Path]:
    """The cgroups this process runs in, by controller ("pids", "memory"; "unified" for a
    cgroup v2 host), as folders under /sys/fs/cgroup; a sample's cgroups go below them, so a
    job scheduler's caps on the caller still hold.
    """
    base, found = Path("/sys/fs/cgroup"), {}
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/cgroup").read_text().splitlines():
            number, controllers, path = line.split(":", 2)
            names = controllers.split(",")
            if number == "0" and not controllers and (base / "cgroup.controllers").is_file():
                found["unified"] = base / path.lstrip("/")
            for name in ("pids", "memory"):
                if name in names:
                    found[name] = base / name / path.lstrip("/")
    return found


_WARNED: set[str] = set()


def _say_once(text: str) -> None:
    """One line on stderr, once a run: a limit that does not hold as the user might think."""
    if text not in _WARNED:
        _WARNED.add(text)
        print(f"genotex: {text}", file=sys.stderr)


class SampleCgroup:
    """A sample's pids and memory cgroups, below the caller's own (RLIMIT_NPROC does not bound
    root, and RLIMIT_AS bounds each process, not the sample); where they cannot be made, the
    run says so once and the per-process limits stand alone.

    The memory bound is the sample's processes and the files in its folders together
    (a tmpfs's pages are charged to the cgroup of the process that wrote them). Each
    cgroup is named `genotex-<pid>-<start>-<random>` after the run, so that a later run
    removes those of an ended run (`sweep_cgroups`) and never a live one's.
    """

    def __init__(self, limits: SandboxLimits, memory_bytes: int) -> None:
        self.folders: list[Path] = []
        self.pids: Path | None = None
        self.memory: Path | None = None
        name = f"genotex-{run_tag()}-{uuid.uuid4().hex[:12]}"
        own = own_cgroups()
        if os.geteuid() != 0:
            return  # a user may not make cgroups here: RLIMIT_NPROC and RLIMIT_AS bound it
        if "unified" in own:  # cgroup v2: one folder, both controllers enabled by the parent
            parent = own["unified"]
            if _enable_controllers(parent):
                self.pids = self._make(parent / name, {"pids.max": limits.processes})
                if self.pids is not None and _write(self.pids / "memory.max", memory_bytes):
                    self.memory = self.pids
        else:  # cgroup v1: the pids and memory hierarchies
            if "pids" in own:
                self.pids = self._make(own["pids"] / name, {"pids.max": limits.processes})
            if "memory" in own:
                settings = {"memory.limit_in_bytes": memory_bytes}
                self.memory = self._make(own["memory"] / name, settings)
        if self.pids is None or self.memory is None:
            _say_once(
                "the bwrap sandbox could not make a sample's pids and memory cgroups below "
                "this process's own; each process is bounded by its rlimits alone (address "
                "space per process, RLIMIT_NPROC for the agent's uid)"
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
            remove_cgroup(folder)


def _enable_controllers(parent: Path) -> bool:
    """Whether `parent` (cgroup v2) gives its children the pids and memory controllers; a
    cgroup that holds processes itself cannot (the kernel's no-internal-process rule), and
    is left as it is.
    """
    try:
        enabled = set((parent / "cgroup.subtree_control").read_text().split())
    except OSError:
        return False
    wanted = {"pids", "memory"} - enabled
    return not wanted or _write_text(
        parent / "cgroup.subtree_control", " ".join(f"+{c}" for c in sorted(wanted))
    )


def _write(path: Path, value: int) -> bool:
    return _write_text(path, str(value))


def _write_text(path: Path, value: str) -> bool:
    try:
        path.write_text(value)
    except OSError:
        return False
    return True


def oom_kills(folder: Path | None) -> int:
    """How many processes a memory cgroup killed so far (v2's memory.events, v1's
    memory.oom_control), 0 where there is none.
    """
    if folder is None:
        return 0
    for name in ("memory.events", "memory.oom_control"):
        with contextlib.suppress(OSError, ValueError):
            for line in (folder / name).read_text().splitlines():
                if line.startswith("oom_kill "):
                    return int(line.split()[1])
    return 0


def pids_limit_hits(folders: list[Path]) -> int:
    """How often a pids cgroup's limit refused a fork so far (its `pids.events`)."""
    for folder in folders:
        with contextlib.suppress(OSError, ValueError):
            for line in (folder / "pids.events").read_text().splitlines():
                if line.startswith("max "):
                    return int(line.split()[1])
    return 0

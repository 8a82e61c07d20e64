"""What a run leaves on the host, labelled with the run, and swept once the run has ended.

A sample's sandbox makes host things that outlive a run killed with SIGKILL:
its folder (as root a mounted tmpfs, holding RAM), its cgroups, its container.
Each is named or labelled with the run that made it, `<pid>:<start time>` of
the process (`this_run`), so that a later run can tell an ended run's
leftovers (no process with that pid and start time) from a live run's, and
remove only the former (`sweep_folders`, `sweep_cgroups`). A pid reused by
another process has another start time, so a live stranger is never taken for
the run.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import stat
import subprocess as sp
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

__all__ = [
    "folder_prefix",
    "release_watcher",
    "remove_tree",
    "run_alive",
    "run_tag",
    "sweep_cgroups",
    "sweep_folders",
    "this_run",
    "watch_folder",
]

#: A sample folder's or cgroup's name: `genotex-[<kind>-]<pid>-<start>-<random>`.
_NAMED = re.compile(r"^genotex-(?:(?:bwrap|podman)-)?(\d+)-(\d+)-[0-9a-z_]+$")


def _start_time(pid: int) -> str:
    """A process's start time (field 22 of /proc/PID/stat), or "" where there is none."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return ""
    return text.rsplit(")", 1)[-1].split()[19]


def this_run() -> str:
    """The name of this process as a run: `<pid>:<start time in ticks>`."""
    return f"{os.getpid()}:{_start_time(os.getpid())}"


def run_tag() -> str:
    """The run's name as a part of a file or cgroup name: `<pid>-<start time>`."""
    return this_run().replace(":", "-")


def run_alive(run: str) -> bool:
    """Whether the run `<pid>:<start time>` is still going (a process with that pid and start
    time); a malformed label is taken as ended.
    """
    pid, _, started = run.partition(":")
    if not (pid.isascii() and pid.isdigit()) or not started:
        return False
    return _start_time(int(pid)) == started


def folder_prefix(kind: str) -> str:
    """The prefix of a sample folder of `kind` made by this run."""
    return f"genotex-{kind}-{run_tag()}-"


def _ended(name: str) -> bool:
    found = _NAMED.match(name)
    return found is not None and not run_alive(f"{found[1]}:{found[2]}")


def _mounted(folder: Path) -> bool:
    target = os.path.realpath(folder)
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/mountinfo").read_text().splitlines():
            fields = line.split()
            if len(fields) > 4 and fields[4].replace("\\040", " ") == target:
                return True
    return False


def remove_tree(folder: Path) -> bool:
    """Remove `folder` whatever the agent did to its modes (a folder of mode 000 inside is
    opened first), unmounting it first when it is a mount; True when it is gone.
    """
    if _mounted(folder):
        sp.run(["umount", "--lazy", str(folder)], capture_output=True, check=False)

    def opened(function: Callable[..., object], path: str, _info: object) -> None:
        with contextlib.suppress(OSError):
            parent = os.path.dirname(path)
            os.chmod(parent, stat.S_IRWXU)
            if os.path.isdir(path) and not os.path.islink(path):
                os.chmod(path, stat.S_IRWXU)
            if function in (os.open, os.scandir, os.lstat, os.stat):
                return  # rmtree's look, not a removal: it goes on without it
            function(path)

    if folder.exists() or folder.is_symlink():
        for current, folders, _ in os.walk(folder, topdown=True):  # readable, before removal
            for name in folders:
                path = os.path.join(current, name)
                with contextlib.suppress(OSError):
                    if not os.path.islink(path):
                        os.chmod(path, stat.S_IRWXU)
        shutil.rmtree(folder, onerror=opened)
    return not folder.exists() and not folder.is_symlink()


#: The watcher's program: a line on its input is the run's word that it cleaned up; the end
#: of its input without one is the run's death (its pipe's only writer was the run). Then
#: whatever holds the folder goes first (a container), the folder's tmpfs is unmounted, so
#: the memory it pinned is freed, and the folder removed.
_WATCHER = (
    'if read -r _; then exit 0; fi; f="$1"; shift; '
    '[ "$#" -gt 0 ] && "$@" >/dev/null 2>&1; '
    'umount --lazy "$f" 2>/dev/null; rm -rf "$f" 2>/dev/null; exit 0'
)


def watch_folder(folder: Path, first: list[str]) -> sp.Popen[bytes] | None:
    """A process outside the run, in a session of its own (a signal to the run's process
    group does not reach it), that removes `folder` (after running `first`) when the run
    dies without its cleanup, SIGKILL included; None where no shell can be started (the
    next run's sweep then removes what is left).

    The pipe to its input is held by this process alone (never inherited: every child is
    started with its descriptors closed), so the kernel closes it at the run's death.
    """
    shell = shutil.which("sh", path="/usr/bin:/bin")
    if shell is None:
        return None
    try:
        return sp.Popen(
            [shell, "-c", _WATCHER, "genotex-watcher", str(folder), *first],
            stdin=sp.PIPE, stdout=sp.DEVNULL, stderr=sp.DEVNULL, cwd="/",
            start_new_session=True, close_fds=True,
        )  # fmt: skip
    except OSError:
        return None


def release_watcher(watcher: sp.Popen[bytes] | None) -> None:
    """Tell a folder's watcher that the run cleaned up (it ends at once), and reap it."""
    if watcher is None or watcher.stdin is None:
        return
    with contextlib.suppress(OSError, ValueError):
        watcher.stdin.write(b"done\n")
        watcher.stdin.close()
    with contextlib.suppress(sp.TimeoutExpired):
        watcher.wait(timeout=5)


def sweep_folders(parent: Path | None = None) -> list[Path]:
    """Remove the sample folders of ended runs under `parent` (the temporary folder): their
    tmpfs unmounted, their files gone. A live run's are never touched. Returns those removed.
    """
    parent = Path(parent or tempfile.gettempdir())
    removed = []
    with contextlib.suppress(OSError):
        for entry in sorted(parent.iterdir()):
            if entry.name.startswith(("genotex-bwrap-", "genotex-podman-")) and _ended(entry.name):
                if not entry.is_symlink() and remove_tree(entry):
                    removed.append(entry)
    return removed


def sweep_cgroups(parents: list[Path]) -> list[Path]:
    """Remove the cgroups of ended runs below `parents`: their processes killed first."""
    removed = []
    for parent in parents:
        with contextlib.suppress(OSError):
            for entry in sorted(parent.iterdir()):
                if entry.is_dir() and _ended(entry.name) and remove_cgroup(entry):
                    removed.append(entry)
    return removed


def remove_cgroup(folder: Path, *, seconds: float = 5.0) -> bool:
    """Kill every process of a cgroup, then remove it; True when it is gone."""
    deadline = time.monotonic() + seconds
    while True:
        with contextlib.suppress(OSError):
            folder.rmdir()
        if not folder.exists():
            return True
        if time.monotonic() > deadline:
            return False
        with contextlib.suppress(OSError, ValueError):
            for pid in (folder / "cgroup.procs").read_text().split():
                with contextlib.suppress(OSError):
                    os.kill(int(pid), signal.SIGKILL)
        time.sleep(0.02)

"""What a run leaves on the host, labelled with the run, and swept once the run has ended.

A sample's sandbox makes host things that outlive a run killed with SIGKILL:
its folder (as root a mounted tmpfs, holding RAM), its cgroups, its container.
Each is named or labelled with the run that made it, `<pid>:<start time>` of
the process (`this_run`), so that a later run can tell an ended run's
leftovers (no process with that pid and start time) from a live run's, and
remove only the former (`sweep_folders`, `sweep_cgroups`). A pid reused by
another process has another start time, so a live stranger is never taken for
the run.

No other user can steer the clean-up (issue #70). The sample folders live in a folder of
the run's own user that no one else may enter (`sandboxes_root`: root's under `/run`, a
user's in their cache folder), not in the shared temporary folder; the sweep takes only
folders owned by the run's uid, checked on an opened descriptor; a folder is unmounted
through that descriptor and removed by descriptors (`genotex.core.remove_tree_at`): no
link followed, nothing outside it touched, no mode changed but inside a user's own folder.
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
from pathlib import Path

from ...core import open_folder, remove_tree_at

__all__ = [
    "ROOT_SANDBOXES",
    "folder_prefix",
    "release_watcher",
    "remove_tree",
    "run_alive",
    "run_tag",
    "sandboxes_root",
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


#: umount2's flags: detach lazily (MNT_DETACH), never through a link (UMOUNT_NOFOLLOW).
_MNT_DETACH, _UMOUNT_NOFOLLOW = 2, 8


def _unmount_at(parent: int, name: str) -> None:
    """Detach the file system mounted on the folder `name` of `parent` (as root), through a
    descriptor of that very folder: a name swapped for a link after it was checked is never
    followed to another mount. Nothing when it is not a mount point.
    """
    if os.geteuid() != 0:
        return
    try:
        pinned = os.open(name, os.O_PATH | os.O_NOFOLLOW | os.O_DIRECTORY | os.O_CLOEXEC,
                         dir_fd=parent)  # fmt: skip
    except OSError:
        return
    try:
        if os.fstat(pinned).st_dev == os.fstat(parent).st_dev:
            return  # the same file system as its folder: nothing mounted there
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.umount2(f"/proc/self/fd/{pinned}".encode(), _MNT_DETACH)
    finally:
        os.close(pinned)


def remove_tree(folder: Path) -> bool:
    """Remove a sample folder of this run's, whatever the agent did to its modes (a folder of
    mode 000 inside is opened, in a user's own folder), its tmpfs unmounted first; by
    descriptors from its parent, which is this run's user's (`sandboxes_root`). True when it
    is gone; a folder that is not the run's uid's is never touched (False).
    """
    try:
        parent = open_folder(folder.parent)
    except OSError:
        return not os.path.lexists(folder)
    try:
        _unmount_at(parent, folder.name)
        return remove_tree_at(parent, folder.name, owner=os.geteuid())
    except OSError:
        return False
    finally:
        os.close(parent)


#: The folder of root's sample folders: root's own, mode 700, as the uid leases' (`_uids`).
ROOT_SANDBOXES = Path("/run/genotex-sandboxes")


def _own_folder(folder: Path) -> Path:
    """`folder`, made when missing (mode 700), once checked to be a folder of this process's
    uid that no other user may enter (not a link); OSError in one sentence otherwise.
    """
    with contextlib.suppress(FileExistsError):
        folder.mkdir(mode=0o700, parents=True)
    found = os.lstat(folder)
    if not stat.S_ISDIR(found.st_mode) or found.st_uid != os.geteuid() or found.st_mode & 0o077:
        raise OSError(
            f"{folder} is not this user's own folder (mode 700): the sandboxes keep their "
            "sample folders there, where no other user may reach them; remove it, or set "
            "GENOTEX_SANDBOX_DIR to such a folder"
        )
    return folder


def sandboxes_root() -> Path:
    """Where this run's sample folders are made: a folder of the run's own user that no other
    user may enter. `$GENOTEX_SANDBOX_DIR` when set; as root `/run/genotex-sandboxes`; as a
    user `$XDG_CACHE_HOME/genotex/sandboxes` (`~/.cache/...`), on disk, not in the RAM of
    `/run/user`. OSError in one sentence when it is not such a folder.
    """
    chosen = os.environ.get("GENOTEX_SANDBOX_DIR")
    if chosen:
        return _own_folder(Path(chosen))
    if os.geteuid() == 0:
        return _own_folder(ROOT_SANDBOXES)
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return _own_folder(Path(cache) / "genotex" / "sandboxes")


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
    """Remove the sample folders of ended runs under `parent` (default `sandboxes_root()`, and
    the temporary folder, where genotex before 0.15 made them): their tmpfs unmounted, their
    files gone. Only a folder named as a sample folder, of an ended run, owned by this
    process's uid (checked on the opened folder) is taken; a live run's, another user's, a
    link are never touched. Returns those removed.
    """
    parents = [parent] if parent is not None else [_root_or_none(), Path(tempfile.gettempdir())]
    removed = []
    for folder in parents:
        if folder is None:
            continue
        with contextlib.suppress(OSError):
            handle = open_folder(folder)
            try:
                for name in sorted(os.listdir(handle)):
                    if _sweepable(handle, name) and _unmounted_and_removed(handle, name):
                        removed.append(folder / name)
            finally:
                os.close(handle)
    return removed


def _root_or_none() -> Path | None:
    try:
        return sandboxes_root()
    except OSError:
        return None


def _sweepable(parent: int, name: str) -> bool:
    """Whether `name` of `parent` is an ended run's sample folder of this process's uid."""
    if not name.startswith(("genotex-bwrap-", "genotex-podman-")) or not _ended(name):
        return False
    try:
        found = os.stat(name, dir_fd=parent, follow_symlinks=False)
    except OSError:
        return False
    return stat.S_ISDIR(found.st_mode) and found.st_uid == os.geteuid()


def _unmounted_and_removed(parent: int, name: str) -> bool:
    with contextlib.suppress(OSError):
        _unmount_at(parent, name)
        return remove_tree_at(parent, name, owner=os.geteuid())
    return False


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

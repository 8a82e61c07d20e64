"""No local user steers a root run's clean-up (issue #70 item 1), raced for real.

0.14's sweep took any folder of the shared temporary folder named like an ended run's and
removed it by path, chmodding folders 700 on its way and on every error: a user who kept a
file in each of 40 such folders had `/tmp` chmodded 700 by root in 32 of 40 sweeps, and a
link swapped inside a folder turned a root-owned tree's folders 700. Here a second user the
test creates (a forked process that drops to its uid: nothing to exec) races root's sweep and
removal, many times, in the three ways of the review:

- many folders named as an ended run's, each holding a file, in a sticky folder standing in
  for /tmp;
- a folder swapped for a link inside a tree root removes (the agent's own folders);
- the top-level folder swapped for a link in a folder that is not sticky (there, unlike /tmp,
  another user may rename root's entries; with Debian's protected_symlinks a sticky folder
  would not show it).

Each time, the temporary folder and a planted root-owned tree keep their modes and files.
"""

from __future__ import annotations

import os
import signal
import stat
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from genotex.core import open_folder, remove_tree_at

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="it creates a user, so it runs as root")

#: The review's count of folders, and how many sweeps race them.
FOLDERS, ROUNDS = 40, 30
#: A pid no process has (pid_max is at most 4,194,304): its run has ended.
ENDED = 4_194_399


@pytest.fixture(scope="module")
def user() -> int:
    """The uid of an unprivileged user (made when missing: `genotex-hostile`, as the hostile
    suite's).
    """
    import pwd
    import subprocess

    name = "genotex-hostile"
    try:
        return pwd.getpwnam(name).pw_uid
    except KeyError:
        made = subprocess.run(["useradd", "--uid", "4243", "--no-create-home", "--shell",
                               "/bin/sh", name], capture_output=True, text=True)  # fmt: skip
        assert made.returncode == 0, made.stderr
        return pwd.getpwnam(name).pw_uid


@pytest.fixture
def space():
    """A folder every user may pass through (pytest's own is root's, mode 700), removed after."""
    import shutil
    import tempfile

    folder = Path(tempfile.mkdtemp(prefix="genotex-cleanup-test-"))
    folder.chmod(0o755)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def _as(uid: int, loop: Callable[[], None]) -> int:
    """A child process that becomes `uid` (no groups) and runs `loop` until it is killed."""
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        try:
            os.setgroups([])
            os.setresgid(uid, uid, uid)
            os.setresuid(uid, uid, uid)
            while True:
                loop()
        finally:
            os._exit(0)
    return pid


def _stop(pid: int) -> None:
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)


def _planted(folder: Path) -> dict[str, tuple[int, int, bytes | None]]:
    """A root-owned tree (folders 755, files 644) and what it holds: path -> (mode, uid, bytes)."""
    for sub in ("a", "a/b", "c"):
        (folder / sub).mkdir(parents=True, exist_ok=True)
        (folder / sub).chmod(0o755)
        (folder / sub / "kept.txt").write_text(f"kept {sub}\n")
    return _state(folder)


def _state(folder: Path) -> dict[str, tuple[int, int, bytes | None]]:
    found = {".": (os.lstat(folder).st_mode, os.lstat(folder).st_uid, None)}
    for path in sorted(folder.rglob("*")):
        info = os.lstat(path)
        data = path.read_bytes() if stat.S_ISREG(info.st_mode) else None
        found[str(path.relative_to(folder))] = (info.st_mode, info.st_uid, data)
    return found


def test_many_folders_named_as_an_ended_runs_never_make_root_touch_the_temporary_folder(
    user, space
):
    from genotex.harness.sandboxes._leftovers import sweep_folders

    temporary = space / "tmp"
    temporary.mkdir()
    temporary.chmod(0o1777)  # /tmp's mode: sticky, open to all
    planted = _planted(space / "planted")
    before = _planted(space / "planted")

    def crowd() -> None:
        for i in range(FOLDERS):
            folder = temporary / f"genotex-bwrap-{ENDED}-1-x{i}"
            try:
                folder.mkdir(exist_ok=True)
                (folder / "file").write_text("mine")
            except OSError:
                pass

    attacker = _as(user, crowd)
    try:
        time.sleep(0.2)
        for _ in range(ROUNDS):
            assert sweep_folders(temporary) == []  # another user's folders are never taken
            assert stat.S_IMODE(os.lstat(temporary).st_mode) == 0o1777
    finally:
        _stop(attacker)
    assert _state(space / "planted") == before == planted
    assert len(list(temporary.iterdir())) == FOLDERS  # the user's own folders, untouched


def test_a_link_swapped_inside_a_tree_root_removes_is_never_followed(user, space):
    """The agent's folders (here the user's) inside a root sample folder: a folder of theirs
    swapped for a link to a root-owned tree, again and again, while root removes the folder.
    """
    parent = space / "sandboxes"
    parent.mkdir(mode=0o711)
    planted_folder = space / "planted"
    before = _planted(planted_folder)
    for round_ in range(ROUNDS):
        sample = parent / f"genotex-bwrap-{ENDED}-1-s{round_}"
        home = sample / "home"
        home.mkdir(parents=True)
        sample.chmod(0o711)
        for i in range(20):
            (home / f"d{i}" / "inner").mkdir(parents=True)
            (home / f"d{i}" / "inner" / "f").write_text("agent")
        os.chown(home, user, user)
        for path in home.rglob("*"):
            os.lchown(path, user, user)

        def swap(home: Path = home) -> None:
            for i in range(20):
                try:
                    os.rename(home / f"d{i}", home / f"old{i}")
                    os.symlink(planted_folder, home / f"d{i}")
                    os.unlink(home / f"d{i}")
                    os.rename(home / f"old{i}", home / f"d{i}")
                except OSError:
                    pass

        attacker = _as(user, swap)
        try:
            time.sleep(0.01)
            handle = open_folder(parent)
            try:
                remove_tree_at(handle, sample.name)
            finally:
                os.close(handle)
        finally:
            _stop(attacker)
        assert _state(planted_folder) == before, f"round {round_}"
        assert stat.S_IMODE(os.lstat(parent).st_mode) == 0o711


def test_the_top_folder_swapped_for_a_link_in_a_folder_that_is_not_sticky(user, space):
    """There another user may rename root's entry: it is swapped for a link to a root-owned
    tree, and for a folder of the user's own, while root sweeps.
    """
    from genotex.harness.sandboxes._leftovers import sweep_folders

    shared = space / "shared"
    shared.mkdir()
    shared.chmod(0o777)  # open to all, not sticky
    planted_folder = space / "planted"
    before = _planted(planted_folder)
    name = f"genotex-bwrap-{ENDED}-1-top"

    def swap() -> None:
        target = shared / name
        try:
            os.rename(target, shared / "moved")
        except OSError:
            pass
        for replacement in ("link", "own"):
            try:
                if replacement == "link":
                    os.symlink(planted_folder, target)
                else:
                    target.mkdir()
                    (target / "mine").write_text("mine")
                time.sleep(0.001)
                if replacement == "link":
                    os.unlink(target)
                else:
                    (target / "mine").unlink()
                    target.rmdir()
            except OSError:
                pass
        try:
            os.rename(shared / "moved", target)
        except OSError:
            pass

    for _ in range(ROUNDS):
        (shared / name / "inner").mkdir(parents=True, exist_ok=True)
        (shared / name / "inner" / "f").write_text("root's")
        attacker = _as(user, swap)
        try:
            time.sleep(0.005)
            sweep_folders(shared)
        finally:
            _stop(attacker)
        assert _state(planted_folder) == before
        assert stat.S_IMODE(os.lstat(shared).st_mode) == 0o777
        for leftover in ("moved", name):  # put back for the next round, or removed
            path = shared / leftover
            if path.is_symlink() or (path.exists() and os.lstat(path).st_uid == user):
                os.unlink(path) if path.is_symlink() else __import__("shutil").rmtree(path)


def test_roots_sample_folders_are_in_a_folder_only_root_may_enter():
    from genotex.harness.sandboxes._leftovers import sandboxes_root

    root = sandboxes_root()
    found = os.lstat(root)
    assert stat.S_ISDIR(found.st_mode) and found.st_uid == 0
    assert stat.S_IMODE(found.st_mode) == 0o700
    assert not str(root).startswith("/tmp")


def test_a_sample_folder_an_agent_closed_is_removed_as_a_user(user, space):
    """As a user (here a forked child of `user`), the agent's folders of mode 000 and 500 are
    opened (their modes set on their own inodes) and removed; a link inside is removed, never
    followed, and its target keeps its mode.
    """
    outside = space / "outside"
    outside.mkdir(mode=0o755)
    os.chown(outside, user, user)
    (outside / "kept").write_text("kept")
    os.chown(outside / "kept", user, user)
    parent = space / "own"
    parent.mkdir(mode=0o700)
    os.chown(parent, user, user)
    space.chmod(0o755)
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child, as the user
        code = 1
        try:
            os.setgroups([])
            os.setresgid(user, user, user)
            os.setresuid(user, user, user)
            sample = parent / "sample"
            (sample / "closed" / "inner").mkdir(parents=True)
            (sample / "closed" / "inner" / "f").write_text("x")
            (sample / "read-only").mkdir()
            (sample / "read-only" / "f").write_text("x")
            os.symlink(outside, sample / "link")
            (sample / "closed").chmod(0)
            (sample / "read-only").chmod(0o500)
            handle = open_folder(parent)
            gone = remove_tree_at(handle, "sample", owner=user)
            code = 0 if gone and not (parent / "sample").exists() else 2
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert (outside / "kept").read_text() == "kept"
    assert stat.S_IMODE(os.lstat(outside).st_mode) == 0o755

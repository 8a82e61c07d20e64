"""Files and folders made, written and removed through descriptors, never through a path another
process can swap between a check and the act.

A folder is opened once (`O_DIRECTORY | O_NOFOLLOW`) and everything after is relative to
that descriptor (`dir_fd`): a name that is, or becomes, a link is never followed, and a
folder renamed or replaced after it was opened cannot redirect what is done in it. The
write gate opens the folders it writes in with `folders_at` (`gated_folder`, issue #72);
the sandboxes remove their sample folders with `remove_tree_at` (issue #70).
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Iterable, Iterator
from pathlib import Path

__all__ = [
    "FOLDER_FLAGS",
    "folders_at",
    "open_folder",
    "remove_tree_at",
]

#: How a folder is opened: never through a link, never inherited by a child process.
FOLDER_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
#: Past this depth a removal moves the subtree up to the top of the tree it removes, so that
#: a folder nested a million deep needs neither a million descriptors nor recursion.
_DEEPEST = 128


def open_folder(path: str | Path, *, dir_fd: int | None = None) -> int:
    """A descriptor of the folder `path` (relative to `dir_fd` when given); OSError when it is
    a link (ELOOP), not a folder (ENOTDIR) or absent.
    """
    return os.open(path, FOLDER_FLAGS, dir_fd=dir_fd)


@contextlib.contextmanager
def folders_at(
    top: int, parts: Iterable[str], *, make: bool = True, mode: int = 0o777
) -> Iterator[int]:
    """A descriptor of the folder `top/parts...`, walked part by part without following a link
    (a part that is a link or a file is refused: OSError ELOOP or ENOTDIR); missing folders
    are made when `make` (with `mode`, under the umask). `top` stays open: the caller's.
    """
    current = top
    try:
        for part in parts:
            if part in ("", ".", "..") or "/" in part:
                raise OSError(errno.EINVAL, f"{part!r} is not a folder's name")
            try:
                following = open_folder(part, dir_fd=current)
            except FileNotFoundError:
                if not make:
                    raise
                with contextlib.suppress(FileExistsError):  # made meanwhile: then opened
                    os.mkdir(part, mode, dir_fd=current)
                following = open_folder(part, dir_fd=current)
            if current != top:
                os.close(current)
            current = following
        yield current
    finally:
        if current != top:
            os.close(current)


def _opened_child(parent: int, name: str) -> int | None:
    """The folder `name` of `parent` opened for its removal, or None when it is not a folder
    (any more: a link or a file now, which `unlink` removes without following it).

    A folder whose mode keeps its owner out (an agent's `chmod 000`) is opened when it is this
    process's own: through a path descriptor (`O_PATH`), its mode set to 700 on that very
    inode (`/proc/self/fd/N`), then reopened. Nothing else ever has its mode changed.
    """
    try:
        return _writable(open_folder(name, dir_fd=parent))
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR, errno.ENOENT):
            return None
        if exc.errno != errno.EACCES:
            raise
    pinned = os.open(name, os.O_PATH | os.O_NOFOLLOW | os.O_DIRECTORY | os.O_CLOEXEC,
                     dir_fd=parent)  # fmt: skip
    try:
        found = os.fstat(pinned)
        if not stat.S_ISDIR(found.st_mode) or found.st_uid != os.geteuid():
            raise PermissionError(errno.EACCES, f"{name}: a folder of another owner")
        os.chmod(f"/proc/self/fd/{pinned}", stat.S_IRWXU)  # this inode, whatever its name now
        return os.open(f"/proc/self/fd/{pinned}", FOLDER_FLAGS & ~os.O_NOFOLLOW)
    finally:
        os.close(pinned)


def _writable(folder: int) -> int:
    """`folder`, its mode set to 700 when it is this process's own (not root's: root needs no
    mode) and keeps its owner from removing what it holds (an agent's `chmod 500`).
    """
    if os.geteuid() != 0:
        found = os.fstat(folder)
        if found.st_uid == os.geteuid() and stat.S_IMODE(found.st_mode) & 0o700 != 0o700:
            os.fchmod(folder, stat.S_IRWXU)
    return folder


def _remove_entry(parent: int, name: str) -> bool:
    """Remove a name that is not a folder: a file, a link (the link itself), a FIFO. False when
    it is a folder after all (swapped meanwhile): it is left for the folder's removal.
    """
    try:
        os.unlink(name, dir_fd=parent)
    except FileNotFoundError:
        pass
    except IsADirectoryError:
        return False
    return True


def _remove_folder(parent: int, name: str) -> None:
    """Remove the emptied folder `name` of `parent`; when the name was meanwhile swapped for a
    link or a file, that is removed instead (never followed); a folder someone refilled stays.
    """
    for _ in range(3):  # a name swapped back and forth meanwhile: tried again, a few times
        try:
            os.rmdir(name, dir_fd=parent)
            return
        except FileNotFoundError:
            return
        except NotADirectoryError:
            if _remove_entry(parent, name):
                return
        except OSError as exc:
            if exc.errno in (errno.ENOTEMPTY, errno.EEXIST, errno.EBUSY):
                return  # refilled meanwhile: it stays, and the removal says it is not gone
            raise


def _empty(top: int, device: int) -> None:
    """Remove everything under the folder `top`, depth first, by descriptors (see
    `remove_tree_at`); a subtree deeper than `_DEEPEST` is moved up under `top`, and emptied
    in a later pass.
    """
    while _pass(top, device):
        pass


def _pass(top: int, device: int) -> int:
    """One depth-first pass of `_empty`: how many subtrees it moved up to `top`."""
    moved = 0
    # (the folder's descriptor, its entries left, its name in the folder below it on the stack)
    stack: list[tuple[int, Iterator[os.DirEntry[str]], str]] = []
    try:
        stack.append((top, iter(list(os.scandir(top))), ""))
        while stack:
            folder, entries, _ = stack[-1]
            entry = next(entries, None)
            if entry is None:
                _, _, name = stack.pop()
                if folder != top:
                    os.close(folder)
                    _remove_folder(stack[-1][0], name)
                continue
            name = entry.name
            try:
                found = os.stat(name, dir_fd=folder, follow_symlinks=False)
            except FileNotFoundError:
                continue
            if not stat.S_ISDIR(found.st_mode):
                _remove_entry(folder, name)
                continue
            if found.st_dev != device:  # another file system mounted here: never crossed
                raise OSError(errno.EXDEV, f"{name}: another file system is mounted there")
            if len(stack) > _DEEPEST:  # moved up to the top, removed from there later
                moved += 1
                os.rename(name, f".genotex-deep-{os.urandom(8).hex()}", src_dir_fd=folder,
                          dst_dir_fd=top)  # fmt: skip
                continue
            child = _opened_child(folder, name)
            if child is None:
                _remove_entry(folder, name)
                continue
            if os.fstat(child).st_dev != device:
                os.close(child)
                raise OSError(errno.EXDEV, f"{name}: another file system is mounted there")
            stack.append((child, iter(list(os.scandir(child))), name))
    finally:
        for folder, _, _ in stack:
            if folder != top:
                os.close(folder)
    return moved


def remove_tree_at(parent: int, name: str, *, owner: int | None = None) -> bool:
    """Remove the folder `name` of the folder `parent` and everything under it, by descriptors:
    no link is followed (a link is removed, never its target), no other file system is
    entered, nothing outside the folder is touched, and no mode is changed but, in a folder of
    this process's own, that of a folder inside it that keeps its owner out. With `owner`, a
    folder that is not that uid's is left (False). True when it is gone.
    """
    try:
        top = open_folder(name, dir_fd=parent)
    except FileNotFoundError:
        return True
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR):
            return False  # a link or a file where a folder was expected: not ours to remove
        raise
    try:
        found = os.fstat(top)
        if owner is not None and found.st_uid != owner:
            return False
        _empty(_writable(top), found.st_dev)
    finally:
        os.close(top)
    try:
        os.rmdir(name, dir_fd=parent)
    except FileNotFoundError:
        return True
    except OSError:
        return False
    return True

"""Atomic file output: a reader sees the old file or the new one, never half of one.

Temporary files are named `.<name>.<pid>-<random>.tmp` beside their target, so
that a later run can tell the leftovers of a killed process (whose pid is no
longer running) from those of a live one, and remove only the former.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import threading
from collections.abc import Iterator
from pathlib import Path

from ._errors import GenotexError
from ._write_gate import gated_folder

__all__ = [
    "WriteError",
    "atomic_output",
    "locked_folder",
    "remove_stale_temporaries",
    "write_bytes_atomic",
    "write_text_atomic",
]

#: Room left for `.`, `.<pid>-<8 random>.tmp` within a 255-byte file name.
_LONGEST_STEM = 200
_TEMPORARY = re.compile(r"^\..+\.(\d+)-[^.]+\.tmp$")


@contextlib.contextmanager
def atomic_output(path: str | Path, *, durable: bool = True) -> Iterator[Path]:
    """A temporary path beside `path` to write to, renamed over `path` if the block succeeds.

    The folder is opened once, after the write gate's check (`gated_folder`), and everything
    after happens in that very folder: the temporary file is made there (never an existing
    file, never through a link), the path handed to the block names it through the folder's
    descriptor (`/proc/self/fd/N/...`), and the rename is relative to it. A folder swapped for
    a link after the check cannot redirect the write; a link or a hard link at `path` is
    replaced, never written through. With `durable` (the default) the file is flushed to disk
    before the rename; a cache's file that is only worth recomputing can skip that (~0.4 ms).
    """
    path = Path(path)
    name, encoded = path.name, path.name.encode("utf-8", "surrogateescape")
    if len(encoded) > _LONGEST_STEM:
        # a legal long name (a 215-character condition) must not make the temporary one illegal
        name = name[:48] + "~" + hashlib.sha256(encoded).hexdigest()[:16]
    try:
        with gated_folder(path) as folder:  # never into a benchmark's reference answers
            temporary = f".{name}.{os.getpid()}-{os.urandom(4).hex()}.tmp"
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
            # the written file gets what open(path, "w") would give, under the umask
            os.close(os.open(temporary, flags, 0o666 & ~_umask(), dir_fd=folder))
            try:
                yield Path(f"/proc/self/fd/{folder}/{temporary}")
                if durable:
                    handle = os.open(temporary, os.O_RDONLY | os.O_NOFOLLOW, dir_fd=folder)
                    try:
                        os.fsync(handle)
                    finally:
                        os.close(handle)
                os.rename(temporary, path.name, src_dir_fd=folder, dst_dir_fd=folder)
            except BaseException:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(temporary, dir_fd=folder)
                raise
    except OSError as exc:
        if isinstance(exc, GenotexError):
            raise
        # a full disk names the temporary file, or nothing: name the file the user asked for
        raise WriteError(f"cannot be written ({exc.strerror or exc})", path=path) from exc


def write_bytes_atomic(path: str | Path, data: bytes, *, durable: bool = True) -> None:
    """Write `data` to `path` as `write_text_atomic` writes text: a new file renamed over it,
    in the folder the write gate checked (never through a link, never into a reference).
    """
    with atomic_output(path, durable=durable) as tmp:
        tmp.write_bytes(data)


class WriteError(GenotexError, OSError):
    """A file that could not be written (a full disk, a size limit), naming it.

    An `OSError` too, so that callers that tolerate a failed write (a cache) still do.
    """


_umask_lock = threading.Lock()


def _umask() -> int:
    """The process's umask (read by setting it and back: there is no other portable way)."""
    with _umask_lock:
        mask = os.umask(0o022)
        os.umask(mask)
    return mask


@contextlib.contextmanager
def locked_folder(folder: str | Path) -> Iterator[None]:
    """Hold an exclusive lock on `folder` while the block runs, across processes.

    The lock is taken on the folder itself (`flock` on its descriptor), so no lock
    file is left behind; where `flock` does not exist, a `.lock` file inside it.
    """
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        from filelock import FileLock

        with FileLock(str(folder / ".lock")):
            yield
        return
    fd = os.open(folder, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the lock


def write_text_atomic(
    path: str | Path, text: str, *, encoding: str = "utf-8", durable: bool = True
) -> None:
    """Write `text` to a temporary file beside `path`, flush it to disk, then rename it over.

    `durable=False` skips the flush (`atomic_output`).
    """
    with atomic_output(path, durable=durable) as tmp:
        tmp.write_text(text, encoding=encoding, newline="")


def _running(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's live process
    return True


def remove_stale_temporaries(folder: str | Path) -> list[Path]:
    """Remove the temporary files a killed run left under `folder`; return what was removed.

    Only files named by `atomic_output` whose process is no longer running
    are removed; a live run's files, and every other file, are left alone.
    """
    folder = Path(folder)
    if not folder.is_dir():
        return []
    removed = []
    for path in folder.rglob(".*.tmp"):
        match = _TEMPORARY.match(path.name)
        if match and path.is_file() and not path.is_symlink() and not _running(int(match.group(1))):
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
                removed.append(path)
    return removed

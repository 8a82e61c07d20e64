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
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

from ._errors import GenotexError
from ._write_gate import gate_write

__all__ = [
    "WriteError",
    "atomic_output",
    "locked_folder",
    "remove_stale_temporaries",
    "write_text_atomic",
]

#: Room left for `.`, `.<pid>-<8 random>.tmp` within a 255-byte file name.
_LONGEST_STEM = 200
_TEMPORARY = re.compile(r"^\..+\.(\d+)-[^.]+\.tmp$")


@contextlib.contextmanager
def atomic_output(path: str | Path, *, durable: bool = True) -> Iterator[Path]:
    """A temporary path beside `path` to write to, renamed over `path` if the block succeeds.

    With `durable` (the default) the file is flushed to disk before the rename; a
    cache's file that is only worth recomputing can skip that (~0.4 ms a file).
    """
    path = gate_write(path)  # never into a benchmark's reference answers
    path.parent.mkdir(parents=True, exist_ok=True)
    name, encoded = path.name, path.name.encode("utf-8", "surrogateescape")
    if len(encoded) > _LONGEST_STEM:
        # a legal long name (a 215-character condition) must not make the temporary one illegal
        name = name[:48] + "~" + hashlib.sha256(encoded).hexdigest()[:16]
    prefix = f".{name}.{os.getpid()}-"
    fd, tmp = tempfile.mkstemp(prefix=prefix, suffix=".tmp", dir=path.parent)
    try:
        # mkstemp makes the file 0600; the written file gets what open(path, "w") would give
        os.fchmod(fd, 0o666 & ~_umask())
    finally:
        os.close(fd)
    try:
        yield Path(tmp)
        if durable:
            with open(tmp, "rb+") as handle:
                os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException as exc:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        if isinstance(exc, OSError) and not isinstance(exc, WriteError):
            # a full disk names the temporary file, or nothing: name the file the user asked for
            raise WriteError(f"cannot be written ({exc.strerror or exc})", path=path) from exc
        raise


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

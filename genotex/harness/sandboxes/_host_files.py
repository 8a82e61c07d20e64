"""A sample's files from the host side, by descriptors: no link followed at any part of a
path (a folder swapped for a link between two calls is refused), no FIFO opened, sizes
bounded and read in chunks.
"""

from __future__ import annotations

import contextlib
import errno
import io
import os
import shutil
import stat
import subprocess as sp
from collections.abc import Iterator
from pathlib import Path

from inspect_ai.util import OutputLimitExceededError
from inspect_ai.util._sandbox.limits import SandboxEnvironmentLimits

from ._sandbox_spec import SandboxLimits

__all__ = [
    "MAX_READ_BYTES",
    "check_read_size",
    "folder_beneath",
    "folder_bytes",
    "mount_tmpfs",
    "open_at",
    "read_chunks",
]

#: The largest file the host reads out of a sandbox at once (Inspect's own bound is smaller).
MAX_READ_BYTES = 2 * 1024**3


def read_chunks(source: io.BufferedReader, most: int, chunk: int = 1 << 20) -> bytes:
    """At most `most` bytes of `source`, read a chunk at a time (no buffer of the file's
    declared size made up front).
    """
    parts, got = [], 0
    while got < most:
        data = source.read(min(chunk, most - got))
        if not data:
            break
        parts.append(data)
        got += len(data)
    return b"".join(parts)


def check_read_size(size: int, file: str) -> None:
    """Inspect's bound on a file read out of a sandbox, on the size of the opened file."""
    limit = min(MAX_READ_BYTES, SandboxEnvironmentLimits.MAX_READ_FILE_SIZE)
    if size > limit:
        raise OutputLimitExceededError(limit_str=f"{limit:,} bytes", truncated_output=None)


def open_at(name: str, flags: int, folder: int, file: str) -> int:
    """`name` opened in the folder `folder` (a descriptor); a link there is refused."""
    try:
        return os.open(name, flags, 0o644, dir_fd=folder)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.EMLINK):
            raise PermissionError(f"{file}: it is a link, which is not followed") from None
        if exc.errno == errno.ENOENT:
            raise FileNotFoundError(file) from None
        if exc.errno == errno.EISDIR:
            raise IsADirectoryError(file) from None
        raise


@contextlib.contextmanager
def folder_beneath(
    host: Path, parts: list[str], file: str, *, make: tuple[int, int] | bool | None
) -> Iterator[int]:
    """A descriptor of the folder `host/parts...`, walked part by part without following a
    link (a folder swapped for a link between two calls is refused, not followed); with
    `make`, missing folders are made (and given to `make`'s uid and gid, when it names one).
    """
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW
    current = os.open(host, flags)
    try:
        for part in parts:
            if part in ("", ".", ".."):
                raise PermissionError(f"{file}: it leads out of the sandbox's folders")
            try:
                following = os.open(part, flags, dir_fd=current)
            except FileNotFoundError:
                if make is None:
                    raise FileNotFoundError(file) from None
                os.mkdir(part, 0o755, dir_fd=current)
                following = os.open(part, flags, dir_fd=current)
                if isinstance(make, tuple):
                    os.fchown(following, *make)
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                    raise PermissionError(
                        f"{file}: a folder on its path is a link or a file"
                    ) from None
                raise
            os.close(current)
            current = following
        yield current
    finally:
        os.close(current)


def mount_tmpfs(folder: Path, limits: SandboxLimits) -> bool:
    """Make `folder` a tmpfs of `disk_mb` and `files` (as root only), so that a write past the
    limit is refused while the command runs; False where it cannot be made.
    """
    if os.geteuid() != 0 or shutil.which("mount") is None:
        return False
    options = f"size={limits.disk_mb}m,nr_inodes={limits.files},mode=0700"
    done = sp.run(
        ["mount", "-t", "tmpfs", "-o", options, "genotex-sample", str(folder)],
        capture_output=True,
        check=False,
    )
    return done.returncode == 0


def folder_bytes(*folders: Path) -> tuple[int, int, int]:
    """Bytes of the regular files under folders, of the largest, and how many files and folders
    there are (links not followed).
    """
    total = largest = entries = 0
    for folder in folders:
        for current, subfolders, files in os.walk(folder):
            entries += len(subfolders) + len(files)
            for name in files:
                with contextlib.suppress(OSError):
                    info = os.lstat(os.path.join(current, name))
                    if stat.S_ISREG(info.st_mode):
                        total += info.st_size
                        largest = max(largest, info.st_size)
    return total, largest, entries

"""The sha256 of a file, streamed, and a memo of it keyed by what `stat` says of the file.

Downloads, the synonym cache and report provenance hash files with `file_sha256`;
the table cache finds its entries by the CSV's sha256 through a `DigestMemo`, so
that an unchanged table is hashed once, not on every read (a 67 MB table takes
~45 ms to hash, a third of a warm `regress` problem's reading).
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import os
import re
import stat
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from ._atomic import remove_stale_temporaries, write_text_atomic
from ._cache_key import sign

__all__ = ["RACY_SECONDS", "DigestMemo", "file_sha256", "tree_digest_of"]

#: A file changed less than this long before it was hashed is not remembered (`DigestMemo`).
RACY_SECONDS = 2.0
_MEMO = re.compile(r"^([0-9a-f]{64})\n(.*)\n([0-9a-f]{64})\n$", re.DOTALL)
_MEMO_BYTES = 8192  # a memo is a digest and one stat line: anything longer is not one
_MEMO_NAME = re.compile(r"^[0-9a-f]{64}\.sha256$")


def file_sha256(path: str | Path) -> str:
    """The hex sha256 of a file's bytes, streamed through one buffer (memory stays flat)."""
    with open(path, "rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def tree_digest_of(lines: Iterable[tuple[str, int, str]]) -> str:
    r"""The sha256 of the sorted `<path>\t<size>\t<digest>` lines of a tree's files, joined by
    newlines: what a report's reference digest, a log's output tree and a downloaded
    benchmark's marker each say of their files.
    """
    text = "\n".join(f"{p}\t{n}\t{h}" for p, n, h in sorted(lines))
    return hashlib.sha256(text.encode()).hexdigest()


@dataclass(frozen=True)
class DigestMemo:
    """sha256 of files, remembered by what `stat` says of them: an unchanged file is hashed once.

    A remembered digest is used only while the file's real path, device, inode,
    size, modification time and status-change time (in ns) are those it was
    hashed with. Any write to a file sets its status-change time to the clock's
    time, and no call sets it back (`os.utime` sets it to now too), so a changed
    file is hashed again, even with its old size and modification time. A file
    changed less than `RACY_SECONDS` before it was hashed is not remembered: a
    second write within one tick of the file system's clock could leave every
    field the same ("racily clean", in git's words). Build tools (git's index,
    make, ccache) trust the same fields.

    Each digest is one small file, `folder/<sha256 of the stat line>.sha256`,
    holding the digest and the stat line: written whole (a temporary renamed into
    place, not flushed: a memo is only worth a hash), so concurrent runs need no
    lock, and read as untrusted (anything but a regular file holding a digest for
    this very stat line is ignored), so a damaged memo only costs hashing. A
    folder that cannot be written costs the same. Each memo is signed with the
    user's cache key (`cache_key`, kept outside the cache): a memo someone else
    wrote, mapping a file to another digest, is ignored. On Windows, whose `st_ctime` is
    the creation time, every file is hashed.
    """

    folder: Path

    def sha256(self, path: str | Path) -> str:
        """The file's sha256: remembered, or hashed (and remembered when it is not racy).

        Raises `OSError` when the file cannot be read.
        """
        real = os.path.realpath(path)
        # st_ctime is the creation time on Windows: a rewrite would not change it; a memo
        # folder that is a link is not used (nothing is written under its target)
        if os.name == "nt" or self.folder.is_symlink():
            return file_sha256(real)
        before = os.stat(real)
        line = _stat_line(real, before)
        memo = self.folder / f"{hashlib.sha256(line.encode()).hexdigest()}.sha256"
        known = _read_memo(memo, line)
        if known is not None:
            return known
        started = time.time_ns()
        digest = file_sha256(real)
        settled = started - max(before.st_mtime_ns, before.st_ctime_ns) >= RACY_SECONDS * 1e9
        if settled and _stat_line(real, os.stat(real)) == line:  # unchanged while it was read
            with contextlib.suppress(OSError):  # read-only, full: hashing again next time
                # not flushed to disk: a memo lost or damaged by a crash is ignored, one hash
                signature = sign(f"{digest}\n{line}".encode()).hex()
                write_text_atomic(memo, f"{digest}\n{line}\n{signature}\n", durable=False)
        return digest

    def prune(self, *, everything: bool = False) -> int:
        """Remove the memos of files that changed or are gone (`everything`: all memos), and
        dead writers' temporaries; return how many memos went. Other files are left alone.
        """
        if self.folder.is_symlink():  # nothing under a link's target is removed
            return 0
        remove_stale_temporaries(self.folder)
        removed = 0
        try:
            names = [name for name in os.listdir(self.folder) if _MEMO_NAME.match(name)]
        except OSError:  # no folder (nothing remembered yet), or not a folder
            return 0
        for name in names:
            found = None if everything else _memo(self.folder / name)
            if found is not None and _current(found[1]):
                continue
            with contextlib.suppress(OSError):
                (self.folder / name).unlink()
                removed += 1
        return removed


def _stat_line(real: str, info: os.stat_result) -> str:
    fields = (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)
    return "\t".join(map(str, fields)) + "\t" + real


def _current(line: str) -> bool:
    """Whether a memo's stat line still describes its file."""
    real = line.split("\t", 5)[-1]
    try:
        return _stat_line(real, os.stat(real)) == line
    except OSError:
        return False


def _memo_text(memo: Path) -> str | None:
    """A memo's text, if it is a regular file of at most `_MEMO_BYTES` (a FIFO never blocks)."""
    try:
        handle = os.open(memo, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(handle).st_mode):
            return None
        data = os.read(handle, _MEMO_BYTES + 1)
    except OSError:
        return None
    finally:
        os.close(handle)
    if len(data) > _MEMO_BYTES:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _memo(memo: Path) -> tuple[str, str] | None:
    """A memo's (digest, stat line), if it is one signed with our key."""
    match = _MEMO.match(_memo_text(memo) or "")
    if match is None or match.group(2).count("\t") < 5:
        return None
    digest, line, signature = match.groups()
    if not hmac.compare_digest(sign(f"{digest}\n{line}".encode()).hex(), signature):
        return None
    return digest, line


def _read_memo(memo: Path, line: str) -> str | None:
    """The digest a memo holds for exactly this stat line, else None."""
    found = _memo(memo)
    return found[0] if found is not None and found[1] == line else None

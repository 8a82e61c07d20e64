"""One HTTP body into a `.part` file: unbuffered writes that stop before the disk is full
(a reserve is always left free), a bound on the bytes, and a floor on the rate (a dribbling
server is cut off and resumed).
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import shutil
import stat
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, BinaryIO

from ..core import gated_folder

__all__ = [
    "OPENER",
    "STALL_SECONDS",
    "floored",
    "read_small",
    "MIN_RATE",
    "WINDOW",
    "NoRoom",
    "TooLong",
    "TooSlow",
    "content_length",
    "keep_free",
    "no_room_for",
    "open_part",
    "part_size",
    "read_body",
    "stopped_for_room",
]

_CHUNK = 1 << 20
#: A download bringing less than MIN_RATE bytes a second over WINDOW seconds is cut off
#: (and resumed by the next attempt): a server trickling a byte every few seconds is cut
#: after WINDOW seconds, not kept waiting on.
MIN_RATE = 1024
WINDOW = 10.0
#: No byte for this many seconds: the transfer stalled (each wait for data is bounded by it,
#: so a body that stops after its headers is cut off, three attempts in under 30 s)
STALL_SECONDS = 6.0
#: A download never takes a disk's last `RESERVE_SHARE` (at most `RESERVE_MAX` bytes): an
#: endless body, or one longer than its server said, stops with room still left for the
#: rest of the machine (a full disk breaks far more than the download).
RESERVE_SHARE = 0.05
RESERVE_MAX = 2**30
#: What a write that found no room raises (disk full, quota, the file size limit).
_NO_ROOM = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG)


#: What a redirect to anything but http(s) is said to be (and never followed).
REDIRECT_REFUSED = "a redirect to another scheme than http or https, refused"


class _AuthorizationStaysHome(urllib.request.HTTPRedirectHandler):
    """Follow a redirect as urllib does, but never carry `Authorization` to another origin
    (scheme, host or port): urllib copies every header, so a token for the Hub went with a
    redirect to any server the answer named.
    """

    def http_error_302(  # noqa: PLR0913, PLR0917 - urllib's signature
        self, req: Any, fp: Any, code: int, msg: str, headers: Any
    ) -> Any:
        """Judge the target's scheme before urllib does: urllib refuses `file:` itself, with
        a reason the callers could only say as a loop.
        """
        target = headers.get("location") or headers.get("uri")
        if target is not None:
            _refuse_other_scheme(urllib.parse.urljoin(req.full_url, target), code, headers, fp)
        return super().http_error_302(req, fp, code, msg, headers)

    http_error_301 = http_error_303 = http_error_307 = http_error_308 = http_error_302

    def redirect_request(  # noqa: PLR0913, PLR0917 - urllib's signature
        self, req: Any, fp: Any, code: int, msg: str, headers: Any, newurl: str
    ) -> Any:
        _refuse_other_scheme(newurl, code, headers, fp)
        new = super().redirect_request(req, fp, code, msg, headers, newurl)
        if new is not None and _origin(newurl) != _origin(req.full_url):
            new.remove_header("Authorization")
        return new


def _refuse_other_scheme(url: str, code: int, headers: Any, fp: Any) -> None:
    scheme = urllib.parse.urlsplit(url).scheme.lower()
    if scheme not in ("http", "https"):  # file:, ftp:, data: ... said as what they are
        raise urllib.error.HTTPError(
            url, code, f"{REDIRECT_REFUSED} ({scheme or 'no scheme'}:)", headers, fp
        )


def _origin(url: str) -> tuple[str, str, int | None]:
    parts = urllib.parse.urlsplit(url)
    return parts.scheme.lower(), (parts.hostname or "").lower(), parts.port


#: The opener of every genotex transfer (the inputs, the Hub's files and its task_info).
OPENER = urllib.request.build_opener(_AuthorizationStaysHome)


def content_length(response: Any) -> int | None:
    """The body's announced length, or None when the server did not announce one.

    Raises OSError (a failed transfer, said in a sentence) for a header that is not ASCII
    digits: `str.isdigit` takes `²` and `٣`, which `int` then refuses or misreads.
    """
    value = response.headers.get("Content-Length")
    if value is None:
        return None
    if not re.fullmatch(r"[0-9]{1,19}", value.strip()):
        raise OSError(f"the server sent a malformed Content-Length header ({value[:40]!r})")
    return int(value.strip())


def keep_free(folder: Path | int) -> int:
    """The bytes a download leaves free on the disk of `folder` (a path, or an open file's
    descriptor; see `RESERVE_SHARE`).
    """
    info = os.statvfs(folder)
    return min(RESERVE_MAX, int(info.f_blocks * info.f_frsize * RESERVE_SHARE))


_KEPT = "; its .part is kept, to resume when there is room"


def no_room_for(expected: int | None, folder: Path) -> str | None:
    """Why a body of `expected` bytes cannot fit on the disk of `folder` with its reserve
    (`keep_free`) left free, or None.
    """
    free, reserve = shutil.disk_usage(folder).free, keep_free(folder)
    if expected is None or expected <= free - reserve:
        return None
    return (
        f"the file needs {expected:,} bytes and its disk has {free:,} free, of which genotex "
        f"leaves {reserve:,} free; nothing was written"
    )


def stopped_for_room(part: Path, written: int, known: bool) -> str:
    """Why a transfer stopped before the disk filled: a file of announced length keeps its
    `.part` (to resume); a body of no announced length (an endless one fills any disk) is
    not kept.
    """
    reason = f"the disk would be full after {written:,} bytes of the file"
    if known:
        return reason + _KEPT
    part.unlink(missing_ok=True)
    return reason + "; its server did not say how long it is, so nothing was kept"


def open_part(part: Path, append: bool) -> BinaryIO:
    """The `.part` to write, never through a link: one found in its place is removed (the
    file it points to is left alone) and the download starts over.
    """
    flags = os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | (os.O_APPEND if append else os.O_TRUNC)
    with gated_folder(part, what="download") as folder:  # opened in the folder checked
        found = _lstat_at(folder, part.name)
        if found is not None and not stat.S_ISREG(found.st_mode):
            os.unlink(part.name, dir_fd=folder)  # a link (the file it points to stays), a FIFO
            flags = (flags & ~os.O_APPEND) | os.O_TRUNC
        # unbuffered: a write that finds the disk full fails there, not later in close()
        return os.fdopen(os.open(part.name, flags, 0o644, dir_fd=folder), "wb", buffering=0)


def _lstat_at(folder: int, name: str) -> os.stat_result | None:
    try:
        return os.stat(name, dir_fd=folder, follow_symlinks=False)
    except FileNotFoundError:
        return None


def _write_all(handle: BinaryIO, data: bytes) -> None:
    """Write every byte of `data` (an unbuffered write may take only some of them)."""
    view = memoryview(data)
    while view:
        written = handle.write(view)
        if not written:  # a file takes at least a byte, or says why not
            raise OSError(errno.ENOSPC, "no byte could be written")
        view = view[written:]


def part_size(part: Path) -> int:
    """The bytes of a `.part` to resume from (0 for none, or for one that is not a file)."""
    with contextlib.suppress(OSError):
        info = os.lstat(part)
        if stat.S_ISREG(info.st_mode):
            return info.st_size
    return 0


def floored(chunks: Iterable[bytes]) -> Iterator[bytes]:
    """The chunks of a body, each handed on as it comes; `TooSlow` when a window of
    `WINDOW` seconds has brought less than `MIN_RATE` bytes a second (a server trickling a
    byte at a time). The rate floor of every transfer: the inputs', the Hub's files, its
    task_info and its client's listing.
    """
    window_bytes, window_start = 0, time.monotonic()
    for chunk in chunks:
        yield chunk
        window_bytes += len(chunk)
        now = time.monotonic()
        if now - window_start >= WINDOW:
            if window_bytes < MIN_RATE * (now - window_start):
                raise TooSlow()
            window_bytes, window_start = 0, now


def _chunks(response: Any) -> Iterator[bytes]:
    """What has come of a response's body, a chunk at a time (not 1 MB waited for)."""
    return iter(lambda: response.read1(_CHUNK), b"")


def read_small(response: Any, limit: int) -> bytes:
    """A small body into memory: at most `limit` + 1 bytes (one more tells a body longer
    than announced), under the transfers' rate floor (`floored`).
    """
    chunks: list[bytes] = []
    received = 0
    for chunk in floored(_chunks(response)):
        chunks.append(chunk)
        received += len(chunk)
        if received > limit:
            break
    return b"".join(chunks)[: limit + 1]


def read_body(
    response: Any,
    handle: BinaryIO,
    max_bytes: int,
    on_bytes: Callable[[int], None],
) -> int:
    """Copy a response's body into handle; its byte count.

    Raises `TooLong` past the file's bound (http.client itself stops at an
    announced length), `NoRoom` when the next bytes would leave less than
    the reserve (`keep_free`) free on the handle's disk (or the disk refuses them), and
    `TooSlow` under the rate floor (`floored`).
    """
    received, reserve = 0, keep_free(handle.fileno())
    for chunk in floored(_chunks(response)):
        received += len(chunk)
        if received > max_bytes:
            raise TooLong(f"more than the {max_bytes:,} bytes a file may have")
        info = os.fstatvfs(handle.fileno())
        if info.f_bavail * info.f_frsize - len(chunk) < reserve:
            raise NoRoom(received - len(chunk))
        try:
            _write_all(handle, chunk)
        except OSError as exc:
            if exc.errno in _NO_ROOM:
                raise NoRoom(received - len(chunk)) from None
            raise
        on_bytes(len(chunk))
    return received


class TooLong(Exception):
    """A body longer than a file may be."""


class TooSlow(Exception):
    """A body coming slower than `MIN_RATE`."""


class NoRoom(Exception):
    """The disk (or the quota, or the file size limit) had no room for the next bytes."""

"""An `.eval` log's members measured as a reader that trusts none of the zip's sizes would
inflate them, before Inspect reads any.

Inspect's reader inflates a member to the end of its deflate stream, whatever size the
zip declares (and skips the CRC): a 2.5 MB log whose `header.json` declares 9 kB and
holds 2.6 GB of whitespace after its JSON was read whole, 5 GB of memory. Here each
member is inflated in 1 MiB steps (deflate to the end of its stream, zstd every frame
stored), nothing kept. It is refused when it inflates to another size than it declares,
past what such a member may hold, or far past its stored size (a bomb: no log genotex
writes compresses so, its output trees being gzip-packed already).
"""

from __future__ import annotations

import struct
import zipfile
import zlib
from pathlib import Path
from typing import IO, BinaryIO, cast

from ...core import GenotexError

__all__ = ["HEADER_MAX_BYTES", "MAX_RATIO", "ZIP_ZSTANDARD", "check_members"]

#: What a member outside `samples/` may inflate to (the header, summaries, reductions, the
#: journal: a run's plan, results and counts, never an output tree).
HEADER_MAX_BYTES = 64 * 2**20
#: How many times its stored size a member larger than `HEADER_MAX_BYTES` may inflate to.
MAX_RATIO = 100
_STEP = 2**20
#: Inspect's compression method (zstd, zip method 93), besides deflate.
ZIP_ZSTANDARD = 93
_LOCAL_HEADER = struct.Struct("<IHHHHHIIIHH")


def _refused(path: Path, member: str, said: str) -> GenotexError:
    return GenotexError(f"has a member {member[:200]!r} that {said}", path=path)


def _data_start(handle: BinaryIO, info: zipfile.ZipInfo, path: Path) -> int:
    """Where the member's stored bytes start, after its local header."""
    handle.seek(info.header_offset)
    fields = handle.read(_LOCAL_HEADER.size)
    if len(fields) != _LOCAL_HEADER.size or fields[:4] != b"PK\x03\x04":
        raise _refused(path, info.filename, "has no local header where the zip says")
    name_length, extra_length = _LOCAL_HEADER.unpack(fields)[-2:]
    return info.header_offset + _LOCAL_HEADER.size + name_length + extra_length


def _inflated(handle: BinaryIO, start: int, cap: int) -> tuple[int, int] | None:
    """(bytes inflated, bytes of stream read) of the deflate stream at `start`, inflated to
    its end; None once it passes `cap` (or the file ends first: a cut stream).
    """
    handle.seek(start)
    inflater = zlib.decompressobj(-15)
    inflated = read = 0
    pending = b""
    while not inflater.eof:
        if not pending:
            pending = handle.read(_STEP)
            if not pending:
                return None
            read += len(pending)
        inflated += len(inflater.decompress(pending, _STEP))
        pending = inflater.unconsumed_tail
        if inflated > cap:
            return None
    return inflated, read - len(inflater.unused_data)


class _Range:
    """`length` bytes of a file from `start`, read as a stream (zstandard reads it so)."""

    def __init__(self, handle: BinaryIO, start: int, length: int) -> None:
        self.handle, self.left = handle, length
        handle.seek(start)

    def read(self, size: int = -1) -> bytes:
        wanted = self.left if size < 0 else min(size, self.left)
        data = self.handle.read(wanted)
        self.left -= len(data)
        return data


def _unzstd(handle: BinaryIO, start: int, length: int, cap: int) -> tuple[int, int] | None:
    """(bytes inflated, bytes stored) of the zstd frames stored in `length` bytes at
    `start` (Inspect's method), all of them inflated; None once past `cap`.
    """
    import zstandard

    stored = cast(IO[bytes], _Range(handle, start, length))  # read() is all it reads
    reader = zstandard.ZstdDecompressor().stream_reader(stored, read_across_frames=True)
    inflated = 0
    while chunk := reader.read(_STEP):
        inflated += len(chunk)
        if inflated > cap:
            return None
    return inflated, length


def _check_member(handle: BinaryIO, info: zipfile.ZipInfo, path: Path, cap: int) -> None:
    name = info.filename
    holder = (
        "a sample may hold (the largest output tree allowed, and its messages)"
        if name.startswith("samples/")
        else "a log's header may hold"
    )
    if info.file_size > cap:
        raise _refused(path, name, f"inflates to {info.file_size:,} bytes, more than the "
                       f"{cap:,} {holder}")  # fmt: skip
    if info.compress_type == zipfile.ZIP_STORED:
        if info.compress_size != info.file_size:
            raise _refused(path, name, "is stored with two different sizes")
        return
    start = _data_start(handle, info, path)
    try:
        if info.compress_type == zipfile.ZIP_DEFLATED:
            measured = _inflated(handle, start, cap)
        elif info.compress_type == ZIP_ZSTANDARD:
            measured = _unzstd(handle, start, info.compress_size, cap)
        else:
            raise _refused(path, name, "is compressed by a method Inspect does not write")
    except (zlib.error, ValueError, OSError) as exc:  # zstandard's ZstdError is a ValueError
        raise _refused(path, name, f"cannot be inflated ({str(exc)[:120]})") from None
    if measured is None:
        raise _refused(path, name, f"inflates to more than the {cap:,} bytes {holder} "
                       f"(it declares {info.file_size:,}), or is cut")  # fmt: skip
    size, stored = measured
    if size != info.file_size:
        raise _refused(path, name, f"declares {info.file_size:,} bytes but inflates to "
                       f"{size:,}")  # fmt: skip
    if size > HEADER_MAX_BYTES and size > MAX_RATIO * max(stored, 1):
        raise _refused(path, name, f"inflates to {size // max(stored, 1):,} times its stored "
                       "size: a zip bomb, not a log")  # fmt: skip


def check_members(path: Path, max_bytes: int) -> None:
    """Refuse an `.eval` log (a zip) any of whose members inflates past `max_bytes` (those
    under `samples/`) or `HEADER_MAX_BYTES` (the others), to another size than it declares,
    or to more than `MAX_RATIO` times its stored size when large: each in one sentence,
    nothing kept in memory but a 1 MiB step.
    """
    with zipfile.ZipFile(path) as archive, open(path, "rb") as handle:
        for info in archive.infolist():
            inner = info.filename.startswith("samples/")
            cap = max_bytes if inner else min(max_bytes, HEADER_MAX_BYTES)
            _check_member(handle, info, path, cap)

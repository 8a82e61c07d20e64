"""One entry of the table cache: its layout, written whole, read only when it checks out: by
its CRC-32 where only its user can have written it, by their HMAC-SHA256 anywhere else.
"""

from __future__ import annotations

import contextlib
import hmac
import json
import mmap
import os
import stat
import struct
import tempfile
from pathlib import Path

import numpy as np
from isal.isal_zlib import crc32  # zlib's CRC-32, ~7x faster

from ._cache_key import sign
from ._tables import ParsedRows, label_array
from ._write_gate import gate_write

__all__ = ["FORMAT", "Damaged", "read_entry", "write_entry"]

_MAGIC = b"GTXTABLE"
_PREFIX = struct.Struct("<8sQQ32s")  # magic, header length, CRC-32, HMAC-SHA256
_ALIGN = 64
#: Bumped whenever the entry layout or the parse it stores changes: old entries are then
#: other keys, never misread, and age out of the bound.
FORMAT = 3


class Damaged(Exception):
    """An entry that cannot be read as written (removed and made again)."""


def _data_offset(header_length: int) -> int:
    """Where the values start: after the prefix and the header, aligned to 64 bytes."""
    return _PREFIX.size + header_length + (-(_PREFIX.size + header_length) % _ALIGN)


def _header_text(
    key: str,
    row_labels: np.ndarray,
    values: np.ndarray,
    bad_cells: dict[int, np.ndarray],
    order: str,
) -> bytes:
    header = {
        "sha256": key,
        "shape": list(values.shape),
        "order": order,
        "row_labels": [None if label is None else str(label) for label in row_labels],
        "bad_cells": [[int(c), rows.astype(np.int64).tolist()] for c, rows in bad_cells.items()],
    }
    return json.dumps(header, separators=(",", ":")).encode("utf-8")


def write_entry(entry: Path, key: str, parsed: ParsedRows) -> None:
    """Write an entry under a temporary name and rename it into place (never half-visible)."""
    row_labels, values, bad_cells = parsed
    values = np.asarray(values, dtype="<f8")
    if not (values.flags.c_contiguous or values.flags.f_contiguous):
        values = np.ascontiguousarray(values)
    order = "F" if values.flags.f_contiguous and not values.flags.c_contiguous else "C"
    header = _header_text(key, row_labels, values, bad_cells, order)
    body = values.T if order == "F" else values  # C-contiguous either way
    padding = b"\0" * (_data_offset(len(header)) - _PREFIX.size - len(header))
    checksum, signature = crc32(body.data, crc32(header)), sign(header, body.data)
    gate_write(entry, what="cache entry").parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(
        prefix=f".{entry.name}.{os.getpid()}-", suffix=".tmp", dir=entry.parent
    )
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(_PREFIX.pack(_MAGIC, len(header), checksum, signature))
            handle.write(header)
            handle.write(padding)
            handle.write(body.data)
        os.replace(tmp, entry)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def _private(info: os.stat_result) -> bool:
    """Whether only this user (or root) can have written the file: it is theirs, and no one
    else may write it. Replacing it takes a new file, which is the replacer's.
    """
    return os.name != "nt" and info.st_uid == os.getuid() and not info.st_mode & 0o022


def read_entry(entry: Path, key: str, column_labels: list[str]) -> ParsedRows:
    """Map an entry; raise `Damaged` unless it is whole and of this content and header.

    The user's own private entry is checked for accidents (CRC-32, 7 GB/s); any other
    entry must carry the user's HMAC-SHA256 (1 GB/s), which no one else can make.
    """
    # never through a link, never waiting on a FIFO someone put in its place
    handle = os.open(entry, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    try:
        info = os.fstat(handle)
        if not stat.S_ISREG(info.st_mode):
            raise Damaged("not a regular file")
        size, private = info.st_size, _private(info)
        if size < _PREFIX.size:
            raise Damaged("shorter than its prefix")
        mapped = mmap.mmap(handle, 0, access=mmap.ACCESS_READ)
    finally:
        os.close(handle)
    magic, header_length, checksum, signature = _PREFIX.unpack_from(mapped)
    if magic != _MAGIC or header_length > size - _PREFIX.size:
        raise Damaged("not an entry")
    view = memoryview(mapped)
    header_bytes = view[_PREFIX.size : _PREFIX.size + header_length]
    try:
        header = json.loads(bytes(header_bytes))
        rows, columns = (int(n) for n in header["shape"])
        order = header["order"]
        row_labels = header["row_labels"]
        bad_cells = {int(c): np.asarray(r, dtype=np.intp) for c, r in header["bad_cells"]}
    except (ValueError, KeyError, TypeError) as exc:
        raise Damaged(f"its header cannot be read: {exc.__class__.__name__}") from None
    offset = _data_offset(header_length)
    if (
        header.get("sha256") != key
        or order not in ("C", "F")
        or columns != len(column_labels)
        or len(row_labels) != rows
        or size != offset + rows * columns * 8
    ):
        raise Damaged("its header does not match its file")
    if private:
        if crc32(view[offset:], crc32(header_bytes)) != checksum:
            raise Damaged("its checksum does not match")
    elif not hmac.compare_digest(sign(header_bytes, view[offset:]), signature):
        raise Damaged("someone else may have written it, and it is not signed with this user's key")
    shape = (rows, columns) if order == "C" else (columns, rows)
    values = np.frombuffer(mapped, dtype="<f8", count=rows * columns, offset=offset).reshape(shape)
    return label_array(row_labels), values if order == "C" else values.T, bad_cells

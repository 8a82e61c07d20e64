r"""An agent's output tree as a JSON value kept in its Inspect log, and read back as untrusted.

A run's score must come from its log alone, so the scorer puts each sample's
`output/` (per epoch) into the sample's store, `STORE_KEY`: every regular file
with its size, its sha256 and its bytes (gzip, base64), and the tree's digest
(the sha256 of the sorted lines `<path>\t<size>\t<sha256>`, as a report's
reference digest). `genotex harness export` reads it back with
`unpack_output`, which trusts nothing in it: each path must be a safe relative
name, each file's size is bounded before it is inflated, and each file's bytes
must give its recorded sha256, and the files the recorded tree digest.

The same digest of a reference slice (`core.tree_digest_of`) is what a task records of
its reference and what export checks before it scores.
"""

from __future__ import annotations

import base64
import binascii
import gzip
import hashlib
import zlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from ...core import MAX_PATH_CHARS, UnsafeNameError, check_relative, tree_digest_of

__all__ = [
    "FORMAT",
    "STORE_KEY",
    "CapturedOutput",
    "pack_output",
    "unpack_output",
]

#: Where a sample's output tree is kept in its log (`EvalSample.store`).
STORE_KEY = "genotex:output"
#: The version of the stored value's shape.
FORMAT = "genotex-output/1"


@dataclass(frozen=True)
class CapturedOutput:
    """An output tree's files (path under `output/` -> bytes), with its digest and size."""

    files: Mapping[str, bytes]
    sha256: str
    bytes: int
    skipped: tuple[tuple[str, str], ...] = ()  # (path, why it was not collected)


def pack_output(files: Mapping[str, bytes], skipped: Iterable[tuple[str, str]] = ()) -> dict:
    """The JSON value of an output tree: each file's size, sha256 and gzip+base64 bytes.

    Deterministic: files sorted by path, gzip without a timestamp.
    """
    entries, lines = [], []
    for path in sorted(files):
        check_relative(path)
        data = files[path]
        digest = hashlib.sha256(data).hexdigest()
        packed = gzip.compress(data, compresslevel=6, mtime=0)
        entries.append(
            {
                "path": path,
                "bytes": len(data),
                "sha256": digest,
                "gzip_base64": base64.b64encode(packed).decode("ascii"),
            }
        )
        lines.append((path, len(data), digest))
    return {
        "format": FORMAT,
        "sha256": tree_digest_of(lines),
        "bytes": sum(n for _, n, _ in lines),
        "files": entries,
        "skipped": [{"path": p, "reason": r} for p, r in sorted(skipped)],
    }


def _inflate(text: object, size: int) -> bytes:
    """A file's bytes from gzip+base64, never inflating past its recorded size."""
    if not isinstance(text, str):
        raise ValueError("its bytes are not a base64 string")
    try:
        packed = base64.b64decode(text.encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError):
        raise ValueError("its bytes are not valid base64") from None
    inflater = zlib.decompressobj(wbits=31)  # a gzip member
    try:
        data = inflater.decompress(packed, size + 1)
    except zlib.error:
        raise ValueError("its bytes are not valid gzip") from None
    if len(data) > size or inflater.unconsumed_tail or not inflater.eof:
        raise ValueError(f"its bytes do not inflate to the {size:,} recorded")
    return data


def unpack_output(value: object, *, max_bytes: int, max_files: int = 100_000) -> CapturedOutput:
    """Read a stored output tree back, checking everything (`ValueError` says what is wrong).

    Parameters
    ----------
    value
        What the log holds under `STORE_KEY`.
    max_bytes, max_files
        Bounds on the tree's total size and file count, checked before any file
        is inflated (a forged log cannot make export fill the disk).
    """
    if not isinstance(value, dict) or value.get("format") != FORMAT:
        raise ValueError(f"it is not a {FORMAT} value")
    entries = value.get("files")
    if not isinstance(entries, list):
        raise ValueError("its files are not a list")
    if len(entries) > max_files:
        raise ValueError(f"it has {len(entries):,} files, more than {max_files:,}")
    declared = [e.get("bytes") if isinstance(e, dict) else None for e in entries]
    if not all(isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in declared):
        raise ValueError("a file's size is not a whole number of bytes")
    total = sum(n for n in declared if isinstance(n, int))
    if total > max_bytes:
        raise ValueError(f"its files hold {total:,} bytes, more than the {max_bytes:,} allowed")
    files: dict[str, bytes] = {}
    lines = []
    for entry, size in zip(entries, declared, strict=True):
        path = entry.get("path")
        try:
            check_relative(path, what="file path")
        except UnsafeNameError as exc:
            raise ValueError(str(exc)) from None
        assert isinstance(path, str) and isinstance(size, int)
        if path in files:
            raise ValueError(f"it lists {path!r} twice")
        try:
            data = _inflate(entry.get("gzip_base64"), size)
        except ValueError as exc:
            raise ValueError(f"{path}: {exc}") from None
        digest = hashlib.sha256(data).hexdigest()
        if len(data) != size or digest != entry.get("sha256"):
            raise ValueError(f"{path}: its bytes do not match its recorded size and sha256")
        files[path] = data
        lines.append((path, size, digest))
    if tree_digest_of(lines) != value.get("sha256"):
        raise ValueError("its files do not give its recorded tree digest")
    skipped = value.get("skipped") or []
    kept = tuple(
        (str(s.get("path"))[:MAX_PATH_CHARS], str(s.get("reason"))[:200])
        for s in (skipped if isinstance(skipped, list) else [])
        if isinstance(s, dict)
    )
    return CapturedOutput(files, tree_digest_of(lines), total, kept)

"""The sha256 of a file, streamed (downloads, the synonym cache and report provenance use it)."""

from __future__ import annotations

import hashlib
from pathlib import Path

__all__ = ["file_sha256"]

_CHUNK = 1 << 20


def file_sha256(path: str | Path) -> str:
    """The hex sha256 of a file's bytes, read in 1 MiB chunks (memory stays flat)."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(_CHUNK), b""):
            digest.update(chunk)
    return digest.hexdigest()

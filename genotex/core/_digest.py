"""The sha256 of a file, streamed (downloads, the synonym cache and report provenance use it)."""

from __future__ import annotations

import hashlib
from pathlib import Path

__all__ = ["file_sha256"]


def file_sha256(path: str | Path) -> str:
    """The hex sha256 of a file's bytes, streamed through one buffer (memory stays flat)."""
    with open(path, "rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()

r"""Which data and which genotex produced a report: digests, versions, platform, times.

The reference tree's digest is, per task folder (`preprocess/`, `regress/`),
the sha256 of the sorted lines `<relative path>\t<size>\t<sha256 of the file>`.
Per-file hashes are cached in the user's cache folder, keyed by real path,
size and modification time, so a repeated evaluation does not re-hash
gigabytes. `compare` and `leaderboard` use the digests to refuse mixing
references; everything here but `started` and `wall_seconds` is deterministic.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import platform
import subprocess
import sys
import time
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

from .._version import __version__
from ..core import (
    GenotexError,
    cache_folder,
    file_sha256,
    locked_folder,
    read_json,
    write_text_atomic,
)

__all__ = ["TASK_FOLDERS", "file_sha256", "provenance", "tree_digest"]

#: The reference tree's folders, one digest each.
TASK_FOLDERS = ("preprocess", "regress")
_PACKAGES = ("numpy", "pandas", "polars", "scipy", "scikit-learn", "gseapy", "matplotlib")


def _cache_file() -> Path:
    return cache_folder() / "sha256-cache.json"


class _HashCache:
    """sha256 of files by (real path, size, mtime): read once, written back once, under a lock."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or _cache_file()
        self.entries: dict[str, str] = {}
        self.dirty = False
        self.entries = _cache_entries(self.path)

    def sha256(self, path: Path) -> str:
        real = os.path.realpath(path)
        stat = os.stat(real)
        key = f"{real}\t{stat.st_size}\t{stat.st_mtime_ns}"
        if key not in self.entries:
            self.entries[key] = file_sha256(Path(real))
            self.dirty = True
        return self.entries[key]

    def save(self) -> None:
        if not self.dirty:
            return
        with contextlib.suppress(OSError):  # a read-only cache only costs re-hashing next time
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with locked_folder(self.path.parent):
                merged = {**_cache_entries(self.path), **self.entries}
                # entries of files that are gone (or changed) are dropped: the cache stays small
                kept = {k: v for k, v in merged.items() if _current(k)}
                write_text_atomic(self.path, json.dumps(kept, sort_keys=True))


def _cache_entries(path: Path) -> dict[str, str]:
    """The cache's well-formed entries; a cache of another shape (or none) is empty, not fatal."""
    try:
        data = read_json(path)
    except GenotexError:
        return {}
    if not isinstance(data, dict):
        return {}
    return {
        k: v
        for k, v in data.items()
        if isinstance(v, str) and len(v) == 64 and k.count("\t") == 2 and k.split("\t")[1].isdigit()
    }


def _current(key: str) -> bool:
    """Whether a cache key's file still exists with that size and modification time."""
    path, size, mtime = key.rsplit("\t", 2)
    try:
        stat = os.stat(path)
    except OSError:
        return False
    return f"{stat.st_size}\t{stat.st_mtime_ns}" == f"{size}\t{mtime}"


def tree_digest(root: Path, *, cache: _HashCache | None = None) -> dict[str, Any] | None:
    """Files, bytes and the sha256 digest of a folder (None when it does not exist)."""
    if not root.is_dir():
        return None
    own = cache is None
    cache = cache or _HashCache()
    lines, total = [], 0
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        size = path.stat().st_size
        total += size
        lines.append(f"{path.relative_to(root).as_posix()}\t{size}\t{cache.sha256(path)}")
    if own:
        cache.save()
    digest = hashlib.sha256("\n".join(lines).encode()).hexdigest()
    return {"files": len(lines), "bytes": total, "sha256": digest}


def _git_revision() -> str | None:
    checkout = Path(__file__).resolve().parents[2]
    if not (checkout / ".git").exists():
        return None
    try:
        done = subprocess.run(
            ["git", "-C", str(checkout), "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() or None


def _versions() -> dict[str, str | None]:
    versions: dict[str, str | None] = {"python": platform.python_version()}
    for name in _PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    return versions


def provenance(
    reference: Path, task_info: Path | dict, options: dict[str, Any], started: float
) -> dict[str, Any]:
    """The provenance block of a report: inputs' digests, software, platform, times, options.

    `task_info` is its file (hashed as bytes) or, given in memory, its JSON object
    (hashed as canonical JSON: sorted keys, no spaces).
    """
    cache = _HashCache()
    digests = {task: tree_digest(reference / task, cache=cache) for task in TASK_FOLDERS}
    if isinstance(task_info, dict):
        canonical = json.dumps(task_info, sort_keys=True, separators=(",", ":"))
        task_info_sha = hashlib.sha256(canonical.encode()).hexdigest()
    else:
        task_info_sha = cache.sha256(task_info)
    cache.save()
    return {
        "genotex_version": __version__,
        "git_revision": _git_revision(),
        "versions": _versions(),
        "platform": f"{platform.system()} {platform.release()} {platform.machine()}",
        "executable": sys.implementation.name,
        "task_info_sha256": task_info_sha,
        "reference_digest": digests,
        "options": options,
        "started": datetime.fromtimestamp(started, UTC).isoformat(timespec="seconds"),
        "wall_seconds": round(time.time() - started, 3),
    }

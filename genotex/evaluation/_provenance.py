r"""Which data and which genotex produced a report: digests, versions, platform, times.

The reference tree's digest is, per task folder the report scored
(`preprocess/`, `regress/`), the sha256 of the sorted lines
`<relative path>\t<size>\t<sha256 of the file>`. Per-file hashes are
remembered by the table cache's digest memo when the evaluation has a cache
(keyed by everything `stat` says of a file), so a repeated evaluation does not
re-hash gigabytes; without a cache every file is hashed and nothing is written.
`compare` and `leaderboard` use the digests to refuse mixing references;
everything here but `started` and `wall_seconds` is deterministic.
"""

from __future__ import annotations

import filecmp
import hashlib
import json
import os
import platform
import stat
import subprocess
import sys
import time
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

from .._version import __version__
from ..core import DigestMemo, file_sha256

__all__ = ["TASK_FOLDERS", "file_sha256", "provenance", "tree_digest"]

#: The reference tree's folders, one digest each.
TASK_FOLDERS = ("preprocess", "regress")
_PACKAGES = ("numpy", "pandas", "polars", "scipy", "scikit-learn", "gseapy", "matplotlib")


def tree_digest(root: Path, *, memo: DigestMemo | None = None) -> dict[str, Any] | None:
    """Files, bytes and the sha256 digest of a folder (None when it does not exist).

    Each file is hashed, or its digest taken from `memo` (the table cache's,
    keyed by everything `stat` says of the file, so a file rewritten with its
    old size and modification time is hashed again).
    """
    if not root.is_dir():
        return None
    hashed = memo.sha256 if memo is not None else file_sha256
    lines, total = [], 0
    found = [  # links followed (an export's slice of the reference is links to its folders)
        Path(current) / name
        for current, _, names in os.walk(root, followlinks=True)
        for name in names
    ]
    for path in sorted(p for p in found if p.is_file()):
        size = path.stat().st_size
        total += size
        lines.append(f"{path.relative_to(root).as_posix()}\t{size}\t{hashed(path)}")
    digest = hashlib.sha256("\n".join(lines).encode()).hexdigest()
    return {"files": len(lines), "bytes": total, "sha256": digest}


def same_tree(pred: Path, ref: Path, *, limit: int = 500_000) -> bool:
    """Whether a prediction is the reference over again: the same folder, or every regular
    file of the reference present in the prediction at its place (links followed there:
    a tree of links to the reference is the reference) with the same bytes. Files the
    prediction has beside them are not scored, so they do not make it another tree. The
    sizes are compared first, so that a different tree costs a walk and no read.
    """
    if os.path.realpath(pred) == os.path.realpath(ref):
        return True
    scored: dict[str, int] = {}
    for current, _, names in os.walk(ref):
        for name in names:
            path = os.path.join(current, name)
            info = os.lstat(path)
            if stat.S_ISREG(info.st_mode):
                scored[os.path.relpath(path, ref)] = info.st_size
            if len(scored) > limit:
                return False
    if not scored:
        return False
    for name, size in scored.items():
        there = Path(pred) / name
        try:
            if not there.is_file() or there.stat().st_size != size:
                return False
        except OSError:
            return False
    return all(filecmp.cmp(Path(pred) / name, Path(ref) / name, shallow=False)
               for name in sorted(scored))  # fmt: skip


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
    reference: Path,
    task_info: Path | dict,
    options: dict[str, Any],
    started: float,
    *,
    folders: tuple[str, ...] = TASK_FOLDERS,
    memo: DigestMemo | None = None,
    benchmark: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The provenance block of a report: inputs' digests, software, platform, times, options,
    and the benchmark download the reference came from (`benchmark`: its marker's summary,
    `genotex download benchmark`; None when it came otherwise).

    `task_info` is its file (hashed as bytes) or, given in memory, its JSON object
    (hashed as canonical JSON: sorted keys, no spaces). Only the reference
    `folders` the report scored are digested (the others are None); `memo` is
    where known digests are kept (none: every file is hashed, nothing written).
    """
    digests = {
        task: tree_digest(reference / task, memo=memo) if task in folders else None
        for task in TASK_FOLDERS
    }
    if isinstance(task_info, dict):
        canonical = json.dumps(task_info, sort_keys=True, separators=(",", ":"))
        task_info_sha = hashlib.sha256(canonical.encode()).hexdigest()
    else:
        task_info_sha = file_sha256(task_info)
    return {
        "genotex_version": __version__,
        "git_revision": _git_revision(),
        "versions": _versions(),
        "platform": f"{platform.system()} {platform.release()} {platform.machine()}",
        "executable": sys.implementation.name,
        "task_info_sha256": task_info_sha,
        "reference_digest": digests,
        "benchmark": benchmark,
        "options": options,
        "started": datetime.fromtimestamp(started, UTC).isoformat(timespec="seconds"),
        "wall_seconds": round(time.time() - started, 3),
    }

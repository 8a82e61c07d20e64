"""Checking a benchmark's inputs on disk against its manifests: what is there and verified,
what differs, what is missing, and what cannot be checked because it was unpacked.

A bundle fetched by hand (Google Drive, Baidu, Kaggle, the Hub) is laid out as
`input/GEO/<trait>/<GSE>/<file>` and `input/TCGA/<Xena folder>/<file>`, the manifests'
own paths. Kaggle unpacks every `.gz`: such a file cannot be checked against the
manifest's sha256 (gzip again gives other bytes), and genotex's readers take it either
way, so it is reported apart, not as a failure.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from ..core import TaskInfo, file_digest, file_sha256, find_marker
from ._manifests import UnknownSelection, load_manifest, packaged_manifest

__all__ = ["InputCheck", "verify_inputs", "verify_marker"]

#: Where each manifest's files lie under the benchmark's `input/`.
_FOLDERS = {"geo": "GEO", "tcga": "TCGA"}


@dataclass(frozen=True)
class InputCheck:
    """The inputs checked: each list holds paths relative to `input/`, sorted."""

    verified: list[str] = field(default_factory=list)
    differ: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    unpacked: list[str] = field(default_factory=list)  # present only without their .gz

    @property
    def ok(self) -> bool:
        """Nothing missing and nothing differing (unpacked files cannot be checked)."""
        return not self.differ and not self.missing


def _regular(path: Path) -> bool:
    """A regular file itself (a link is not followed: a bundle is checked as it is)."""
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


def verify_inputs(
    bench: str | Path,
    *,
    only: Iterable[str] = (),
    manifests: dict[str, str | Path] | None = None,
) -> InputCheck:
    """Check `bench/input/` against the benchmark's GEO and TCGA manifests.

    Parameters
    ----------
    bench
        The benchmark root (its `input/GEO/` and `input/TCGA/`).
    only
        Check only these GEO traits and TCGA cohort folders (each must be in a manifest).
    manifests
        "geo" and "tcga" manifests to check against instead of the ones genotex ships.
    """
    root = Path(bench) / "input"
    wanted = set(only)
    check = InputCheck()
    seen: set[str] = set()
    for what, folder in _FOLDERS.items():
        source = (manifests or {}).get(what) or packaged_manifest(what)
        for relative, digest in sorted(load_manifest(source).items()):
            top = relative.split("/", 1)[0]
            if wanted and top not in wanted:
                continue
            seen.add(top)
            name, path = f"{folder}/{relative}", root / folder / relative
            if _regular(path):
                (check.verified if file_sha256(path) == digest else check.differ).append(name)
            elif relative.endswith(".gz") and _regular(path.with_suffix("")):
                check.unpacked.append(name)
            else:
                check.missing.append(name)
    unknown = sorted(wanted - seen)
    if unknown:
        raise UnknownSelection(f"no manifest lists {unknown[0]!r} (a GEO trait or TCGA folder)")
    return check


def verify_marker(bench: str | Path, only: Iterable[str] = ()) -> InputCheck:
    """Check every file the benchmark's marker lists (`genotex download benchmark`: inputs,
    reference, metadata, code) against the digest it was fetched with; paths relative to
    `bench`; a file a stopped download chose but never fetched (the marker's `pending`) is
    missing. With `only`, the files the marker lists for those traits, chosen as the
    download chooses them (their inputs, answers and code, their conditions' data, the
    metadata). An empty check when there is no marker.
    """
    from ._hub import PARTS, HubFile, select_files

    bench = Path(bench)
    marker = find_marker(bench)
    check = InputCheck()
    if marker is None:
        return check
    listed = {**marker.pending, **marker.files}  # a pending file is missing until fetched
    if only:
        files = [HubFile(p, n, d) for p, (n, d) in listed.items()]
        info_path = bench / "metadata" / "task_info.json"
        info = TaskInfo.read(info_path) if info_path.is_file() else None
        chosen = select_files(files, PARTS, only, info)
        listed = {f.path: (f.size, f.digest) for f in chosen}
    for relative, (size, digest) in sorted(listed.items()):
        path = bench / relative
        if not _regular(path):
            check.missing.append(relative)
        elif path.stat().st_size != size or file_digest(path, digest.split(":")[0]) != digest:
            check.differ.append(relative)
        else:
            check.verified.append(relative)
    return check

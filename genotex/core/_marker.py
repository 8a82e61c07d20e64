"""The benchmark marker: `BENCH/genotex-benchmark.json`, what `genotex download benchmark` fetched.

It names the Hub repository, the revision asked for and the commit it resolved to, and every
file fetched with its size and the digest it was checked against (`sha256:` for a large (LFS)
file, `git-sha1:` for the git blob id of any other). Its `digest` (`tree_digest_of` those
lines, as a log's output tree and a task's reference are digested) names what is on disk;
runs record the marker's summary in their provenance, so two runs say whether they used the
same benchmark.

A marker is read as untrusted (a user may hand us any file): every field is checked and a
path may not leave the benchmark folder.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ._atomic import write_text_atomic
from ._digest import file_sha256, tree_digest_of
from ._errors import GenotexError, UnsafeNameError
from ._json import read_json
from ._layout import check_relative
from ._reference_guard import MARKER_NAME

__all__ = ["MARKER_NAME", "BenchmarkMarker", "MarkerError", "benchmark_summary", "find_marker"]

#: The marker's file name, at the top of a benchmark folder.
_DIGEST = re.compile(r"(sha256:[0-9a-f]{64}|git-sha1:[0-9a-f]{40})")
_COMMIT = re.compile(r"[0-9a-f]{40}")


class MarkerError(GenotexError):
    """A benchmark marker that cannot be read or does not hold what a marker holds."""


@dataclass(frozen=True)
class BenchmarkMarker:
    """What was fetched: `files` maps a path under the benchmark folder to (bytes, digest);
    `pending` the files a download chose but has not fetched and checked yet (it stopped):
    `download verify` counts them missing.
    """

    repo: str
    revision: str
    commit: str
    files: dict[str, tuple[int, str]] = field(default_factory=dict)
    pending: dict[str, tuple[int, str]] = field(default_factory=dict)

    @property
    def digest(self) -> str:
        """What is on disk: `tree_digest_of` the files' `path<TAB>bytes<TAB>digest` lines."""
        return tree_digest_of((p, n, d) for p, (n, d) in self.files.items())

    def summary(self) -> dict[str, Any]:
        """What a run's provenance records of the benchmark it used."""
        return {"repo": self.repo, "revision": self.revision, "commit": self.commit,
                "files": len(self.files), "digest": self.digest}  # fmt: skip

    def merged(self, other: BenchmarkMarker) -> BenchmarkMarker:
        """The files of both markers (of one commit: a later partial download adds to one);
        a file pending in either and checked in neither stays pending.
        """
        files = {**self.files, **other.files}
        pending = {p: e for p, e in {**self.pending, **other.pending}.items() if p not in files}
        return BenchmarkMarker(self.repo, other.revision, self.commit, files, pending)

    def to_dict(self) -> dict[str, Any]:
        data = {
            "repo": self.repo,
            "revision": self.revision,
            "commit": self.commit,
            "digest": self.digest,
            "files": _entries(self.files),
        }
        return data | ({"pending": _entries(self.pending)} if self.pending else {})

    def write(self, folder: str | Path) -> Path:
        """Write the marker into `folder`, atomically (sorted keys: the same bytes each time)."""
        import json

        path = Path(folder) / MARKER_NAME
        write_text_atomic(path, json.dumps(self.to_dict(), indent=1, sort_keys=True) + "\n")
        return path

    @classmethod
    def read(cls, path: str | Path) -> BenchmarkMarker:
        """Read and check a marker; MarkerError names the file and what is wrong with it."""
        path = Path(path)
        data = read_json(path, MarkerError)
        if not isinstance(data, dict):
            raise MarkerError("is not a benchmark marker (not a JSON object)", path=path)
        repo, revision, commit = data.get("repo"), data.get("revision"), data.get("commit")
        if not all(isinstance(v, str) and 0 < len(v) <= 200 for v in (repo, revision, commit)):
            raise MarkerError("lacks its repo, revision or commit", path=path)
        if not _COMMIT.fullmatch(str(commit)):
            said = f"{commit!r:.60}"
            raise MarkerError(f"names a commit that is not 40 hex digits: {said}", path=path)
        files, pending = data.get("files"), data.get("pending", {})
        if not isinstance(files, dict) or not isinstance(pending, dict):
            raise MarkerError("has no files object", path=path)
        return cls(str(repo), str(revision), str(commit), _checked_files(files, path),
                   _checked_files(pending, path))  # fmt: skip


def _entries(files: dict[str, tuple[int, str]]) -> dict[str, dict[str, Any]]:
    return {p: {"bytes": n, "digest": d} for p, (n, d) in sorted(files.items())}


def _checked_files(files: dict, path: Path) -> dict[str, tuple[int, str]]:
    checked: dict[str, tuple[int, str]] = {}
    for name, entry in files.items():
        try:
            check_relative(name, what="marker path")
        except UnsafeNameError:
            said = f"lists {name!r:.80}, which lies outside the benchmark"
            raise MarkerError(said, path=path) from None
        size = entry.get("bytes") if isinstance(entry, dict) else None
        digest = entry.get("digest") if isinstance(entry, dict) else None
        if isinstance(size, bool) or not isinstance(size, int) or size < 0:
            raise MarkerError(f"gives {name!r:.80} a size that is not a whole number", path=path)
        if not isinstance(digest, str) or not _DIGEST.fullmatch(digest):
            raise MarkerError(f"gives {name!r:.80} a digest genotex does not know", path=path)
        checked[str(name)] = (size, digest)
    return checked


def find_marker(path: str | Path) -> BenchmarkMarker | None:
    """The marker of the benchmark `path` lies in: at `path` or at one of its two parents
    (`BENCH`, `BENCH/output`, `BENCH/reference/output`); None when there is none. A marker
    that cannot be read is an error (a run must not record a wrong benchmark silently).
    """
    root = _marker_root(path)
    return None if root is None else BenchmarkMarker.read(root / MARKER_NAME)


def _marker_root(path: str | Path) -> Path | None:
    """The folder holding the marker of the benchmark `path` lies in (`find_marker`)."""
    folder = Path(path)
    for candidate in (folder, *list(folder.parents)[:2]):
        if (candidate / MARKER_NAME).is_file():
            return candidate
    return None


def file_digest(path: str | Path, kind: str, sha256: Callable[[Path], str] | None = None) -> str:
    """`sha256:<hex>` of a file, or `git-sha1:<hex>`, its git blob id (sha1 of `blob <size>`,
    a NUL byte and its bytes), as the Hub gives them; `sha256` a (memoised) hasher to use.
    """
    path = Path(path)
    if kind == "sha256":
        return f"sha256:{sha256(path) if sha256 is not None else file_sha256(path)}"
    blob = hashlib.sha1(f"blob {path.stat().st_size}\0".encode(), usedforsecurity=False)
    with open(path, "rb") as source:
        for chunk in iter(lambda: source.read(1 << 20), b""):
            blob.update(chunk)
    return f"git-sha1:{blob.hexdigest()}"


def modified_since_download(
    path: str | Path, sha256: Callable[[Path], str] | None = None
) -> list[str] | None:
    """The files of the folder `path` (a downloaded reference) that differ from its marker:
    changed, gone, or not in it (paths under the benchmark, sorted); None when no marker
    is found. `sha256` is a (memoised) file hasher, so that an unchanged reference costs
    no read the eval's own digest has not already made.
    """
    root = _marker_root(path)
    if root is None:
        return None
    return _differing(BenchmarkMarker.read(root / MARKER_NAME), root, Path(path), sha256)


def _differing(
    marker: BenchmarkMarker, root: Path, folder: Path, sha256: Callable[[Path], str] | None
) -> list[str]:
    """What `modified_since_download` returns, for a marker already read at `root`."""
    prefix = folder.resolve().relative_to(root.resolve()).as_posix()
    prefix = "" if prefix == "." else prefix + "/"
    listed = {p: v for p, v in marker.files.items() if p.startswith(prefix)}
    found = {
        (Path(current) / name).relative_to(root).as_posix()
        for current, _, names in os.walk(folder)
        for name in names
        if name != MARKER_NAME
    }
    differing = sorted(found - set(listed))
    for relative, (size, digest) in listed.items():
        target = root / relative
        if not target.is_file() or target.stat().st_size != size:
            differing.append(relative)
        elif file_digest(target, digest.split(":", 1)[0], sha256) != digest:
            differing.append(relative)
    return sorted(differing)


def benchmark_summary(
    path: str | Path,
    *,
    check: bool = False,
    sha256: Callable[[Path], str] | None = None,
    files: Iterable[str | Path] = (),
) -> dict[str, Any] | None:
    """What a run's provenance records of the benchmark `path` lies in: its marker's
    `summary()` (`find_marker`), None when there is no marker. With `check`, `path` is the
    reference, checked file by file against the marker, and so is each of `files` (the
    run's task_info.json) that the marker lists: `modified` counts the files that differ
    and `modified_files` names up to ten.
    """
    root = _marker_root(path)
    if root is None:
        return None
    marker = BenchmarkMarker.read(root / MARKER_NAME)  # read once, for both
    summary = marker.summary()
    if check:
        differing = _differing(marker, root, Path(path), sha256)
        differing += _differing_files(marker, root, files, sha256)
        summary |= {"modified": len(differing), "modified_files": differing[:10]}
    return summary


def _differing_files(
    marker: BenchmarkMarker,
    root: Path,
    files: Iterable[str | Path],
    sha256: Callable[[Path], str] | None,
) -> list[str]:
    """Those of `files` under `root` that the marker lists and that differ from it."""
    differing = []
    for file in files:
        try:
            relative = Path(file).resolve().relative_to(root.resolve()).as_posix()
        except ValueError:
            continue  # a task_info of the user's own, outside the benchmark
        if relative not in marker.files:
            continue
        size, digest = marker.files[relative]
        target = root / relative
        if not target.is_file() or target.stat().st_size != size:
            differing.append(relative)
        elif file_digest(target, digest.split(":", 1)[0], sha256) != digest:
            differing.append(relative)
    return differing

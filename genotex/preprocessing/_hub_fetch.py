"""Fetching a `BenchmarkPlan` into a benchmark folder, every file checked, and the marker
written (`genotex download benchmark`).

Files are written as real files into the folder, nothing outside it (no client cache:
`huggingface_hub` only lists the tree), each through genotex's own transfer from the Hub's
`resolve` URL (`HF_ENDPOINT` and tokens honoured): stopped past the size the Hub declared,
cut off when it dribbles (under 1 KB/s over 10 s) and resumed from its `.part` beside the
target on the next attempt or the next run, then checked: a large (LFS) file against the
Hub's sha256, any other against its git blob id, and an input against the benchmark's own
GEO or TCGA manifest, which genotex ships, whatever the Hub's storage. A file that does not
match is removed (nothing wrong is left under its final name) and the download stops with
one sentence naming it.
A file already there and matching is not fetched again; the marker
(`genotex-benchmark.json`) lists every file checked so far, also when a download stops.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from ..core import (
    MARKER_NAME,
    BenchmarkMarker,
    file_digest,
    gate_write,
    making_reference,
    output_path,
    prepare_output_folder,
    refuse_reference_target,
)
from ._download import Download, fetch
from ._hub import BenchmarkPlan, HubError, HubFile, auth_headers, hub_errors, resolve_url
from ._manifests import load_manifest, packaged_manifest
from ._transfer import REDIRECT_REFUSED

__all__ = ["BenchmarkDownload", "check_benchmark_folder", "download_benchmark", "file_digest"]

#: What is called after each file: (files done, files in all, the file, bytes done, in all).
Progress = Callable[[int, int, HubFile, int, int], None]


@dataclass(frozen=True)
class BenchmarkDownload:
    """What a download did: files fetched, files already there and matching, the marker."""

    out: Path
    marker: Path
    fetched: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)
    bytes_fetched: int = 0


def _matches(target: Path, file: HubFile, listed: BenchmarkMarker | None) -> bool:
    """A file on disk that is the Hub's: a regular file of its size, listed by the marker
    with its digest (checked before), or whose digest is the Hub's.
    """
    try:
        info = os.lstat(target)
    except OSError:
        return False
    if not stat.S_ISREG(info.st_mode) or info.st_size != file.size:
        return False
    if listed is not None and listed.files.get(file.path) == (file.size, file.digest):
        return True
    return file_digest(target, file.digest.split(":", 1)[0]) == file.digest


def _manifests() -> dict[str, str]:
    """`path under the benchmark -> sha256` of the inputs the benchmark's manifests list."""
    listed = {}
    for kind, folder in (("geo", "GEO"), ("tcga", "TCGA")):
        for relative, sha in load_manifest(packaged_manifest(kind)).items():
            listed[f"input/{folder}/{relative}"] = sha
    return listed


def _check(target: Path, file: HubFile, manifests: dict[str, str]) -> None:
    """Raise (the file removed) unless the fetched file is the Hub's, and the manifest's."""
    kind = file.digest.split(":", 1)[0]
    said, size = None, target.stat().st_size
    actual = file_digest(target, kind) if size == file.size else ""
    if size != file.size:  # an overstated size: 0.9.0 kept it, and `verify` then said DIFFERS
        said = f"it has {size:,} bytes where the Hub lists {file.size:,}"
    elif actual != file.digest:
        what = "sha256" if kind == "sha256" else "git blob id"
        said = f"its bytes do not match the Hub's {what} ({actual.split(':')[1][:12]}...)"
    elif file.path in manifests:  # LFS or plain git alike; an LFS file is hashed once
        sha256 = actual if kind == "sha256" else file_digest(target, "sha256")
        if sha256[7:] != manifests[file.path]:
            said = "its sha256 differs from the benchmark's manifest"
    if said is not None:
        target.unlink(missing_ok=True)
        raise HubError(f"{file.path}: {said}; it was removed, nothing else changed")


def _refusal(plan: BenchmarkPlan, file: HubFile, status: int | None, reason: str) -> HubError:
    """A failed transfer as one sentence that says what it was."""
    about = f"{plan.repo} ({file.path})"
    if status in (401, 403):
        return HubError(
            f"the Hub refused {about} ({status}): it is gated, private or not there; give a "
            "token with access (HF_TOKEN, or `hf auth login`)"
        )
    if status == 404:
        return HubError(f"the Hub's {plan.repo} at {plan.commit[:12]} has no file {file.path}")
    if REDIRECT_REFUSED in reason:
        scheme = reason.split("(")[-1].rstrip(")")
        return HubError(f"the Hub redirected {about} to another scheme than http or https "
                        f"({scheme}), which is refused; nothing was kept")  # fmt: skip
    if status is not None and 300 <= status < 400:
        return HubError(f"the Hub redirected {about} in a loop ({status}); nothing was kept")
    if status is not None:
        return HubError(f"the Hub answered {status} for {about}: a server or network error")
    return HubError(f"the transfer of {file.path} failed: {reason}")


def _fetch_one(plan: BenchmarkPlan, file: HubFile, target: Path, token: str | None) -> None:
    """One file into `target`, bounded by the size the Hub declared for it."""
    headers = tuple(auth_headers(token).items())
    with hub_errors(plan.repo, plan.commit, file.path):  # a folder in the way, a full disk
        if os.path.lexists(target):  # there but not the Hub's (`_matches` said): again
            target.unlink()
        # checked after, against the Hub's digest and the manifest (`_check`)
        url = resolve_url(plan.endpoint, plan.repo, plan.commit, file.path)
        done = fetch(Download(url, target, None, headers),
                     max_bytes=file.size)  # fmt: skip
    if not done.ok:
        raise _refusal(plan, file, done.status, done.outcome.reason or "no answer")


def _existing_marker(out: Path, plan: BenchmarkPlan) -> BenchmarkMarker | None:
    path = out / MARKER_NAME
    if not path.is_file():
        return None
    marker = BenchmarkMarker.read(path)
    if marker.commit != plan.commit or marker.repo != plan.repo:
        raise HubError(
            f"{out} holds {marker.repo} at {marker.commit[:12]}; fetching {plan.commit[:12]} "
            "into it would mix two revisions (choose another folder)"
        )
    return marker


def check_benchmark_folder(out: str | Path) -> None:
    """Refuse a benchmark folder that is or lies inside another benchmark (a download, by
    any name of it), or a demo's reference answers, before anything is asked of the Hub. A
    downloaded benchmark's own root is taken: the download resumes or updates it.
    """
    refuse_reference_target(
        out, what="benchmark folder", holding=False, below=False, remakes_root=True
    )


def download_benchmark(
    out: str | Path,
    plan: BenchmarkPlan,
    *,
    token: str | None = None,
    progress: Progress | None = None,
) -> BenchmarkDownload:
    """Fetch the plan's files into `out` (resuming, skipping what is there and matches),
    check each, and write the marker; HubError in one sentence on any failure.
    """
    check_benchmark_folder(out)
    out = prepare_output_folder(out, what="benchmark folder", makes_reference=True)
    _check_own_places(out)
    with making_reference(out), _locked(out):  # the lock file lies in the benchmark too
        return _download_into(out, plan, token=token, progress=progress)


#: Where the Hub's client keeps its cache and locks under `local_dir`.
_CLIENT_PLACES = (".cache", ".cache/huggingface", ".cache/huggingface/download")


def _check_own_places(out: Path) -> None:
    """Before any transfer: the marker's place and the client's cache under BENCH are what
    they seem (a link at `BENCH/.cache` sent 0.8.0's cache and lock files outside BENCH; a
    folder where the marker goes was found only after the whole transfer).
    """
    marker = out / MARKER_NAME
    if marker.is_symlink() or (marker.exists() and not marker.is_file()):
        raise HubError(
            f"{marker} is not a file, so the marker cannot be written; nothing was fetched"
        )
    for place in _CLIENT_PLACES:
        path = out / place
        if path.is_symlink() or (path.exists() and not path.is_dir()):
            raise HubError(
                f"{path} is a link or a file where the Hub client keeps its cache; remove it, "
                "nothing was fetched"
            )


@contextlib.contextmanager
def _locked(out: Path) -> Iterator[None]:
    """One download into a folder at a time (two at once both exited 0 in 0.8.0, the marker
    listing half of what they verified): a lock on `BENCH/.cache/genotex-download.lock`,
    beside the Hub client's own (its place checked before, `_check_own_places`).
    """
    import fcntl

    gate_write(out / ".cache" / "genotex-download.lock", what="download's lock").parent.mkdir(
        exist_ok=True
    )
    try:
        handle = os.open(
            out / ".cache" / "genotex-download.lock", os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o644
        )
    except OSError as exc:
        raise HubError(f"{out}: the download's lock cannot be taken ({exc.strerror})") from None
    try:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise HubError(
                f"another download into {out} is under way; wait for it, then run this again "
                "(it resumes)"
            ) from None
        yield
    finally:
        os.close(handle)


def _download_into(
    out: Path, plan: BenchmarkPlan, *, token: str | None, progress: Progress | None
) -> BenchmarkDownload:
    """The download proper, under the folder's lock."""
    listed = _existing_marker(out, plan)
    targets = {f.path: output_path(out, *f.path.split("/")) for f in plan.files}
    kept: list[HubFile] = []
    todo: list[HubFile] = []
    for file in plan.files:
        (kept if _matches(targets[file.path], file, listed) else todo).append(file)
    needed, free = sum(f.size for f in todo), shutil.disk_usage(out).free
    if needed > free:
        raise HubError(
            f"the download needs {needed:,} bytes and the disk of {out} has {free:,} free; "
            "nothing was fetched"
        )
    checked = {f.path: (f.size, f.digest) for f in kept}
    manifests, done = _manifests(), sum(f.size for f in kept)
    try:
        for index, file in enumerate(todo, start=1):
            _fetch_one(plan, file, targets[file.path], token)
            _check(targets[file.path], file, manifests)
            checked[file.path] = (file.size, file.digest)
            done += file.size
            if progress is not None:
                progress(len(kept) + index, len(plan.files), file, done, plan.total_bytes)
    finally:
        pending = {f.path: (f.size, f.digest) for f in plan.files if f.path not in checked}
        marker = BenchmarkMarker(plan.repo, plan.revision, plan.commit, checked, pending)
        marker = listed.merged(marker) if listed is not None else marker
        path = marker.write(out)
    # a file that failed raised above: what returns fetched every file of `todo`
    return BenchmarkDownload(out, path, [f.path for f in todo], [f.path for f in kept], needed)

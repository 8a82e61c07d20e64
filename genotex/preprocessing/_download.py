"""Fetching a file: resumable, bounded, verified by sha256 or by its kind.

Each file is fetched into `<name>.part`, resumed with an HTTP Range request when a partial
file exists, checked against its sha256 (or, with none published, its kind: gzip's magic
bytes, no HTML page) and only then renamed into place; a file already present with the
right hash is skipped. What to fetch, from the benchmark's manifests, is `_manifests`'.
"""

from __future__ import annotations

import os
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from ..core import (
    Outcome,
    OutcomeKind,
    file_sha256,
    gated_folder,
)
from ._transfer import (
    MIN_RATE,
    OPENER,
    REDIRECT_REFUSED,
    STALL_SECONDS,
    WINDOW,
    NoRoom,
    TooLong,
    TooSlow,
    content_length,
    no_room_for,
    open_part,
    part_size,
    read_body,
    stopped_for_room,
)

__all__ = ["DEFAULT_MAX_DOWNLOAD_BYTES", "Download", "DownloadResult", "download_all", "fetch"]

DEFAULT_MAX_DOWNLOAD_BYTES = 16 * 2**30


@dataclass(frozen=True)
class Download:
    """One file to fetch: where from, where to, its expected sha256 (None: not checked), and
    the request's extra headers (a token's `Authorization`), and whether its bytes are
    judged by their kind.
    """

    url: str
    path: Path
    sha256: str | None
    headers: tuple[tuple[str, str], ...] = ()
    #: judge the bytes by the kind `path` names (`_wrong_kind`): for files with no digest to
    #: check them by, as GEO publishes none (the Hub's and Xena's are checked by sha256)
    judge_kind: bool = False


@dataclass(frozen=True)
class DownloadResult:
    """One file's outcome (downloaded, resumed, present or failed, with why) and its size."""

    download: Download
    outcome: Outcome
    size: int = 0
    status: int | None = None  # the HTTP status of a failure the server answered

    @property
    def ok(self) -> bool:
        """Whether the file is in place and verified."""
        return not self.outcome.failed


def _wrong_digest(part: Path, sha256: str | None) -> str | None:
    """Why a fetched file is not the one the manifest lists (its sha256 differs), or None."""
    actual = None if sha256 is None else file_sha256(part)
    if actual is None or actual == sha256:
        return None
    return f"sha256 {actual[:12]}... differs from the manifest's {str(sha256)[:12]}..."


def _wrong_kind(part: Path, target: Path) -> str | None:
    """Why the fetched bytes are not the kind of file `target` names, or None: a `.gz` that
    does not start with gzip's magic bytes, or an HTML page (a server's "200 OK" error or
    login page, kept as a series in 0.14).
    """
    try:
        with open(part, "rb") as handle:
            head = handle.read(512)
    except OSError:
        return None
    if head.lstrip()[:15].lower().startswith((b"<!doctype html", b"<html")):
        return "the server sent an HTML page, not the file; nothing was kept"
    if target.name.endswith(".gz") and head and not head.startswith(b"\x1f\x8b"):
        return "the server sent something that is not gzip data; nothing was kept"
    return None


def _request(download: Download, offset: int) -> urllib.request.Request:
    """The GET of a download, asking for what follows `offset` bytes when a `.part` has them."""
    headers = {"User-Agent": "genotex-downloader", **dict(download.headers)}
    request = urllib.request.Request(download.url, headers=headers)
    if offset:
        request.add_header("Range", f"bytes={offset}-")
    return request


def fetch(
    download: Download,
    *,
    retries: int = 3,
    timeout: float = STALL_SECONDS,
    on_bytes: Callable[[int], None] | None = None,
    max_bytes: int = DEFAULT_MAX_DOWNLOAD_BYTES,
) -> DownloadResult:
    """Fetch one file (resuming a `.part`), verify it, move it into place; never raises.

    A body longer than `max_bytes` or than its announced length is cut off and
    not kept; one slower than `MIN_RATE` bytes a second over `WINDOW` seconds is
    cut off and resumed by the next attempt; `timeout` bounds each wait for data.
    """
    target = download.path
    if target.exists() and (download.sha256 is None or file_sha256(target) == download.sha256):
        return DownloadResult(download, Outcome("present"), target.stat().st_size)
    part = target.with_name(target.name + ".part")
    with gated_folder(target, what="download"):  # checked before any folder is made
        pass
    resumed, last_error, status = False, "", None
    counted = on_bytes or (lambda n: None)
    for attempt in range(retries):
        offset = part_size(part)
        if offset >= max_bytes > 0:  # a stale .part as long as the file, or longer: again
            part.unlink(missing_ok=True)
            offset = 0
        request = _request(download, offset)
        try:
            with OPENER.open(request, timeout=timeout) as response:
                append = offset > 0 and response.status == 206
                resumed = resumed or append
                expected = content_length(response)
                no_room = no_room_for(expected, part.parent)
                if no_room is not None:
                    return DownloadResult(download, Outcome("failed", no_room))
                with open_part(part, append) as handle:
                    received = read_body(response, handle, max_bytes - offset * append, counted)
            if expected is not None and received != expected:
                # the connection closed early: keep the .part to resume, never move it into place
                last_error = f"the body ended after {received} of {expected} bytes"
                time.sleep(min(2**attempt, 8) * 0.1)
                continue
            break
        except TooLong as exc:
            part.unlink(missing_ok=True)
            reason = f"the server sent {exc}; nothing was kept"
            return DownloadResult(download, Outcome("failed", reason))
        except NoRoom as exc:
            written, known = offset * append + exc.args[0], expected is not None
            return DownloadResult(
                download, Outcome("failed", stopped_for_room(part, written, known))
            )
        except TooSlow:
            last_error = f"the server sent less than {MIN_RATE:,} bytes a second for {WINDOW} s"
        except urllib.error.HTTPError as exc:
            if exc.code == 416 and offset:  # the .part is complete, or longer than the file
                if _wrong_digest(part, download.sha256) is None:
                    break  # complete: moved into place below
                part.unlink(missing_ok=True)  # stale (longer than the file): start over
                last_error = "the partial file was longer than the file; started over"
                continue
            last_error, status = f"HTTP {exc.code} {exc.reason}", exc.code
            if exc.code in (401, 403, 404, 410) or REDIRECT_REFUSED in str(exc.reason):
                return DownloadResult(download, Outcome("failed", last_error), status=status)
        except (urllib.error.URLError, OSError, TimeoutError) as exc:
            last_error = str(getattr(exc, "reason", exc))
        time.sleep(min(2**attempt, 8) * 0.1)
    else:
        return DownloadResult(download, Outcome("failed", last_error or "no answer"), status=status)
    return _into_place(download, part, resumed=resumed)


def _into_place(download: Download, part: Path, *, resumed: bool) -> DownloadResult:
    """The fetched `.part` checked (its sha256, or its kind) and renamed over the target in the
    folder the gate checked; a wrong one removed, never resumed again.
    """
    target = download.path
    wrong = _wrong_digest(part, download.sha256)
    if wrong is None and download.judge_kind:
        wrong = _wrong_kind(part, target)
    if wrong is not None:
        part.unlink(missing_ok=True)  # a corrupt partial file is not resumed again
        return DownloadResult(download, Outcome("failed", wrong))
    with gated_folder(target, what="download") as folder:  # the .part is beside it
        os.rename(part.name, target.name, src_dir_fd=folder, dst_dir_fd=folder)
    kind: OutcomeKind = "resumed" if resumed else "downloaded"
    return DownloadResult(download, Outcome(kind), target.stat().st_size)


def download_all(
    downloads: Iterable[Download], *, jobs: int = 4, progress: bool = True
) -> list[DownloadResult]:
    """Fetch every download with `jobs` threads and a progress bar; results in input order."""
    downloads = list(downloads)
    from tqdm import tqdm

    with tqdm(
        total=len(downloads), unit="file", disable=not progress or None, desc="downloading"
    ) as bar:

        def one(download: Download) -> DownloadResult:
            result = fetch(download)
            bar.update(1)
            bar.set_postfix_str(download.path.name[-40:])
            return result

        with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
            return list(pool.map(one, downloads))

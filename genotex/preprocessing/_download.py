"""Downloading the benchmark's inputs by its manifests: resumable, verified by sha256.

The benchmark publishes manifests of its input files with their sha256
(`{"files": {"<Trait>/<GSE>/<file>": sha256}}` for GEO, `{"<Xena folder>/<file>":
sha256}` for TCGA). Each file is fetched into `<name>.part`, resumed with an HTTP
Range request when a partial file exists, checked against its sha256 and only
then renamed into place; a file already present with the right hash is skipped.
"""

from __future__ import annotations

import difflib
import os
import re
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from ..core import (
    GenotexError,
    Outcome,
    OutcomeKind,
    UnsafeNameError,
    check_relative,
    file_sha256,
    gate_write,
    gated_folder,
    output_path,
    prepare_output_folder,
    read_json,
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

__all__ = [
    "GEO_BASE",
    "GENE_INFO_URL",
    "XENA_BASE",
    "Download",
    "DownloadResult",
    "ManifestError",
    "UnknownSelection",
    "download_all",
    "download_inputs",
    "fetch",
    "geo_downloads",
    "load_manifest",
    "packaged_manifest",
    "plan_downloads",
    "tcga_downloads",
]

GEO_BASE = "https://ftp.ncbi.nlm.nih.gov/geo/series"
XENA_BASE = "https://tcga.xenahubs.net/download"
GENE_INFO_URL = (
    "https://ftp.ncbi.nlm.nih.gov/gene/DATA/GENE_INFO/Mammalia/Homo_sapiens.gene_info.gz"
)
#: The largest file a download may bring (the benchmark's largest input is ~2 GB).
DEFAULT_MAX_DOWNLOAD_BYTES = 16 * 2**30
_SHA256 = re.compile(r"[0-9a-fA-F]{64}")


class ManifestError(GenotexError):
    """A manifest that cannot be read or is not of the published shape."""


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


def packaged_manifest(what: str) -> Path:
    """The benchmark's own manifest of `what` ("geo" or "tcga"), shipped with genotex
    (`data/manifests/`, CC BY 4.0: see its NOTICE.md).
    """
    if what not in ("geo", "tcga"):
        raise ValueError(f"there is no manifest of {what!r}; choose geo or tcga")
    return (
        Path(str(resources.files("genotex.preprocessing")))
        / "data"
        / "manifests"
        / (f"{what}_manifest.json")
    )


def _stray(relative: str) -> bool:
    """An entry of the authors' folder that is no input (`.DS_Store`, a notebook)."""
    name = relative.rsplit("/", 1)[-1]
    return name.startswith(".") or name.endswith(".ipynb")


def load_manifest(path: str | Path) -> dict[str, str]:
    """`relative path -> sha256` of a benchmark manifest.

    A manifest is untrusted: a path that is absolute, holds `..` or a backslash,
    or a digest that is not 64 hexadecimal digits is refused, naming the entry.
    Entries that are no input (a `.DS_Store`, a notebook) are passed over.
    """
    path = Path(path)
    data = read_json(path, ManifestError)
    files = data.get("files") if isinstance(data, dict) else None
    if not isinstance(files, dict):
        raise ManifestError('is not a manifest: no {"files": {path: sha256}} object', path=path)
    for relative, digest in files.items():
        try:
            check_relative(relative, what="manifest path")
        except UnsafeNameError:
            raise ManifestError(
                f"lists {relative!r}, which would be written outside the output folder",
                path=path,
            ) from None
        if not isinstance(digest, str) or not _SHA256.fullmatch(digest):
            raise ManifestError(
                f"gives {relative!r} a sha256 that is not 64 hexadecimal digits", path=path
            )
    return {relative: digest for relative, digest in files.items() if not _stray(relative)}


def _target(out: Path, relative: str) -> Path:
    """Where a manifest entry goes: through the one guarded output path (links included)."""
    return output_path(out, *relative.split("/"))


class UnknownSelection(GenotexError, ValueError):
    """`only=` names a trait or cohort folder the manifest does not have."""


def _select(files: dict[str, str], only: Iterable[str], what: str) -> dict[str, str]:
    """The entries of the traits (geo) or cohort folders (tcga) in `only`; an unknown one is an
    error naming the closest known ones.
    """
    wanted = set(only)
    if not wanted:
        return files
    known = sorted({key.split("/", 1)[0] for key in files if "/" in key})
    for name in sorted(wanted - set(known)):
        close = difflib.get_close_matches(name, known, n=3, cutoff=0.6)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        kind = "trait" if what == "geo" else "cohort folder"
        raise UnknownSelection(f"the manifest has no {kind} {name!r}{hint}")
    return {k: v for k, v in files.items() if k.split("/", 1)[0] in wanted}


def _geo_folder(accession: str) -> str:
    """GEO's folder of a series: GSE207744 -> GSE207nnn, GSE1234 -> GSE1nnn, GSE123 -> GSEnnn."""
    digits = accession[3:]
    return f"GSE{digits[:-3]}nnn"


def geo_downloads(
    files: dict[str, str], out: str | Path, *, base: str = GEO_BASE
) -> list[Download]:
    """Downloads of a GEO manifest: matrices from .../matrix/, family SOFT files from .../soft/."""
    out = Path(out)
    downloads = []
    for relative, sha in sorted(files.items()):
        name = relative.rsplit("/", 1)[-1]
        match = re.match(r"(GSE\d+)", name)
        if match is None:
            continue
        accession = match.group(1)
        kind = "soft" if name.endswith("_family.soft.gz") else "matrix"
        url = f"{base}/{_geo_folder(accession)}/{accession}/{kind}/{name}"
        downloads.append(Download(url, _target(out, relative), sha, judge_kind=sha is None))
    return downloads


def tcga_downloads(
    files: dict[str, str], out: str | Path, *, base: str = XENA_BASE
) -> list[Download]:
    """Downloads of a TCGA manifest: `TCGA.X.sampleMap_<file>` is `<base>/TCGA.X.sampleMap/<file>`
    on Xena.
    """
    out = Path(out)
    downloads = []
    for relative, sha in sorted(files.items()):
        folder, _, name = relative.rpartition("/")
        match = re.match(r"(TCGA\.[A-Z0-9]+\.sampleMap)_(.+)", name)
        if not folder.startswith("TCGA_") or match is None:
            continue  # not a cohort file (the manifest also lists a notebook and .DS_Store)
        url = f"{base}/{match.group(1)}/{match.group(2)}"
        downloads.append(Download(url, _target(out, relative), sha))
    return downloads


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


def plan_downloads(
    what: str,
    out: str | Path,
    *,
    manifest: str | Path | None = None,
    base_url: str | None = None,
    only: Iterable[str] = (),
    sha256: str | None = None,
) -> list[Download]:
    """The files to fetch for `what`: "geo" or "tcga" (by a manifest), or "gene-info" (one file).

    Parameters
    ----------
    what
        "geo", "tcga" or "gene-info".
    out
        The folder (geo, tcga) or the file (gene-info) to write.
    manifest
        A `geo_manifest.json` / `tcga_manifest.json` (geo and tcga only); by default the
        benchmark's own, which genotex ships (`packaged_manifest`).
    base_url
        Where the files are, instead of the public sources (a mirror, a test server).
    only
        Keep only these traits (geo) or cohort folders (tcga).
    sha256
        gene-info: the expected digest, when known.
    """
    if what == "gene-info":
        return [Download(base_url or GENE_INFO_URL, gate_write(Path(out), what="download"), sha256)]
    if what not in ("geo", "tcga"):
        raise ValueError(f"unknown download {what!r}; choose geo, tcga or gene-info")
    files = _select(load_manifest(manifest or packaged_manifest(what)), only, what)
    prepare_output_folder(out, what="download folder", for_file=True)  # files in no reference
    if what == "geo":
        return geo_downloads(files, out, base=base_url or GEO_BASE)
    return tcga_downloads(files, out, base=base_url or XENA_BASE)


def download_inputs(
    what: str, out: str | Path, *, jobs: int = 4, progress: bool = True, **where: Any
) -> list[DownloadResult]:
    """Plan (`plan_downloads`, which takes `where`: manifest, base_url, only, sha256) and fetch
    (`download_all`) the inputs of `what`. A file that fails is a result, never an exception.
    """
    return download_all(plan_downloads(what, out, **where), jobs=jobs, progress=progress)

"""The benchmark's inputs by its manifests: what to fetch, from where, to where.

The benchmark publishes manifests of its input files with their sha256
(`{"files": {"<Trait>/<GSE>/<file>": sha256}}` for GEO, `{"<Xena folder>/<file>":
sha256}` for TCGA). A manifest is read as untrusted (every path checked), narrowed to the
traits or cohorts asked, and turned into `Download`s that `_download.fetch` carries out.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable
from importlib import resources
from pathlib import Path
from typing import Any

from ..core import (
    GenotexError,
    UnsafeNameError,
    check_relative,
    filling_benchmark,
    output_path,
    prepare_output_folder,
    read_json,
    refuse_download_target,
)
from ._download import Download, DownloadResult, download_all

__all__ = [
    "GEO_BASE",
    "GENE_INFO_URL",
    "XENA_BASE",
    "ManifestError",
    "UnknownSelection",
    "download_inputs",
    "geo_downloads",
    "load_manifest",
    "packaged_manifest",
    "plan_downloads",
    "tcga_downloads",
]

_SHA256 = re.compile(r"[0-9a-fA-F]{64}")
GEO_BASE = "https://ftp.ncbi.nlm.nih.gov/geo/series"
XENA_BASE = "https://tcga.xenahubs.net/download"
GENE_INFO_URL = (
    "https://ftp.ncbi.nlm.nih.gov/gene/DATA/GENE_INFO/Mammalia/Homo_sapiens.gene_info.gz"
)
#: The largest file a download may bring (the benchmark's largest input is ~2 GB).


class ManifestError(GenotexError):
    """A manifest that cannot be read or is not of the published shape."""


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
        refuse_download_target(Path(out).parent, what="download's folder")
        return [Download(base_url or GENE_INFO_URL, Path(out), sha256)]
    if what not in ("geo", "tcga"):
        raise ValueError(f"unknown download {what!r}; choose geo, tcga or gene-info")
    files = _select(load_manifest(manifest or packaged_manifest(what)), only, what)
    refuse_download_target(out)  # before any folder is made: in no reference, or in its input/
    prepare_output_folder(out, what="download folder", makes_reference=True)
    if what == "geo":
        return geo_downloads(files, out, base=base_url or GEO_BASE)
    return tcga_downloads(files, out, base=base_url or XENA_BASE)


def download_inputs(
    what: str, out: str | Path, *, jobs: int = 4, progress: bool = True, **where: Any
) -> list[DownloadResult]:
    """Plan (`plan_downloads`, which takes `where`: manifest, base_url, only, sha256) and fetch
    (`download_all`) the inputs of `what`. A file that fails is a result, never an exception.
    """
    planned = plan_downloads(what, out, **where)
    with filling_benchmark(Path(out).parent if what == "gene-info" else out):
        return download_all(planned, jobs=jobs, progress=progress)

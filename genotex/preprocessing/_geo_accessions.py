"""Any GEO series or platform by its accession, where NCBI keeps it.

The benchmark's own series come by its manifest (`download geo`), each checked
against its sha256. A series outside the benchmark (a cohort of your own, or one
a guide works on) has no published digest: it is fetched from the same place,
NCBI's FTP layout (`geo/series/GSE14nnn/GSE14520/matrix/...`), and checked only
against the length the server announces. A platform comes from GEO's accession
viewer as SOFT text (`acc.cgi?acc=GPL96&targ=self&form=text&view=full`, as
GEOquery asks for it): the platform's description and its full table, which a
recipe's `platform = ...` reads when a series has no family SOFT of its own.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

from ..core import (
    GenotexError,
    filling_benchmark,
    output_path,
    prepare_output_folder,
    refuse_download_target,
)
from ._download import Download, DownloadResult, download_all
from ._manifests import GEO_BASE, _geo_folder

__all__ = ["GEO_QUERY_URL", "AccessionError", "accession_downloads", "download_accessions"]

GEO_QUERY_URL = "https://www.ncbi.nlm.nih.gov/geo/query/acc.cgi"
_SERIES = re.compile(r"(GSE[1-9][0-9]{0,8})(-GPL[1-9][0-9]{0,8})?")
_PLATFORM = re.compile(r"GPL[1-9][0-9]{0,8}")


class AccessionError(GenotexError, ValueError):
    """A series or platform accession that is not one."""


def accession_downloads(
    out: str | Path,
    *,
    series: Iterable[str] = (),
    platforms: Iterable[str] = (),
    base_url: str | None = None,
) -> list[Download]:
    """The files of GEO series and platforms named by accession, to write under `out`.

    Parameters
    ----------
    out
        A trait's GEO folder (`input/GEO/<trait>`): a series goes into `<GSE>/`, a
        platform into `platforms/<GPL>.txt`.
    series
        `GSE14520` (its series matrix and family SOFT) or `GSE14520-GPL571` (the
        matrix of that platform alone: a series on several platforms has one each).
    platforms
        `GPL96`: the platform's description and table, as GEO's accession viewer
        gives them.
    base_url
        A mirror: series under `BASE/<GSEnnn>/<GSE>/...` (as under
        `https://ftp.ncbi.nlm.nih.gov/geo/series`), platforms at
        `BASE/acc.cgi?acc=<GPL>...`.

    Returns
    -------
    list of Download
        Without a sha256 (none is published): a file is checked against its length.
    """
    out = Path(out)
    wanted_series, wanted_platforms = list(series), list(platforms)
    for accession in wanted_series:
        if not _SERIES.fullmatch(accession):
            raise AccessionError(
                f"{accession!r} is not a GEO series accession (GSE14520, or GSE14520-GPL571 "
                "for one platform's matrix)"
            )
    for accession in wanted_platforms:
        if not _PLATFORM.fullmatch(accession):
            raise AccessionError(f"{accession!r} is not a GEO platform accession (GPL96)")
    refuse_download_target(out)  # before any folder is made: in no reference, or in its input/
    prepare_output_folder(out, what="download folder", makes_reference=True)
    downloads = []
    series_base = base_url or GEO_BASE
    for accession in dict.fromkeys(wanted_series):
        match = _SERIES.fullmatch(accession)
        assert match is not None  # checked above
        gse = match.group(1)
        where = f"{series_base}/{_geo_folder(gse)}/{gse}"
        names = [f"{accession}_series_matrix.txt.gz"]
        if match.group(2) is None:
            names.append(f"{gse}_family.soft.gz")
        for name in names:
            kind = "soft" if name.endswith("_family.soft.gz") else "matrix"
            downloads.append(
                Download(
                    f"{where}/{kind}/{name}", output_path(out, gse, name), None, judge_kind=True
                )
            )
    query = f"{base_url}/acc.cgi" if base_url else GEO_QUERY_URL
    for accession in dict.fromkeys(wanted_platforms):
        url = f"{query}?acc={accession}&targ=self&form=text&view=full"
        platform = output_path(out, "platforms", f"{accession}.txt")
        downloads.append(Download(url, platform, None, judge_kind=True))
    return downloads


def download_accessions(
    out: str | Path,
    *,
    series: Iterable[str] = (),
    platforms: Iterable[str] = (),
    base_url: str | None = None,
    jobs: int = 4,
    progress: bool = True,
) -> list[DownloadResult]:
    """Plan (`accession_downloads`) and fetch (`download_all`) GEO series and platforms by
    accession. A file that fails is a result, never an exception.
    """
    planned = accession_downloads(out, series=series, platforms=platforms, base_url=base_url)
    with filling_benchmark(out):
        return download_all(planned, jobs=jobs, progress=progress)

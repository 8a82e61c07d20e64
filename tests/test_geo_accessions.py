"""`genotex download geo --series/--platform`: a GEO series or platform by accession (#62,
item 7: GSE14520, which the guides work on, is not a benchmark cohort, so no manifest lists
it; a reader fetches it by its accession, from where NCBI keeps it)."""

from __future__ import annotations

import gzip
from http.server import BaseHTTPRequestHandler

import pytest
from click.testing import CliRunner

from genotex.cli import main
from genotex.preprocessing import AccessionError, accession_downloads
from tests.conftest import answer_bytes, local_server

_MATRIX = gzip.compress(b'!Series_title\t"x"\n!series_matrix_table_begin\n')
_PLATFORM = b"^PLATFORM = GPL96\n!platform_table_begin\nID\tGene Symbol\n!platform_table_end\n"


class _NCBI(BaseHTTPRequestHandler):
    asked: list[str] = []

    def do_GET(self) -> None:  # noqa: N802 - the HTTP verb
        _NCBI.asked.append(self.path)
        files = {
            "/geo/series/GSE14nnn/GSE14520/matrix/GSE14520-GPL571_series_matrix.txt.gz": _MATRIX,
            "/geo/series/acc.cgi?acc=GPL96&targ=self&form=text&view=full": _PLATFORM,
        }
        answer_bytes(self, files.get(self.path))

    def log_message(self, *args: object) -> None:
        pass


def test_a_series_and_a_platform_are_where_ncbi_keeps_them(tmp_path):
    """The URLs written out by hand from NCBI's FTP layout and GEO's accession viewer."""
    planned = accession_downloads(
        tmp_path / "GEO", series=["GSE14520-GPL571", "GSE100001"], platforms=["GPL96"]
    )
    ftp = "https://ftp.ncbi.nlm.nih.gov/geo/series"
    assert [(d.url, d.path.relative_to(tmp_path).as_posix(), d.sha256) for d in planned] == [
        (f"{ftp}/GSE14nnn/GSE14520/matrix/GSE14520-GPL571_series_matrix.txt.gz",
         "GEO/GSE14520/GSE14520-GPL571_series_matrix.txt.gz", None),
        (f"{ftp}/GSE100nnn/GSE100001/matrix/GSE100001_series_matrix.txt.gz",
         "GEO/GSE100001/GSE100001_series_matrix.txt.gz", None),
        (f"{ftp}/GSE100nnn/GSE100001/soft/GSE100001_family.soft.gz",
         "GEO/GSE100001/GSE100001_family.soft.gz", None),
        ("https://www.ncbi.nlm.nih.gov/geo/query/acc.cgi?acc=GPL96&targ=self&form=text&view=full",
         "GEO/platforms/GPL96.txt", None),
    ]  # fmt: skip


@pytest.mark.parametrize(
    "series, platform",
    [(["GSE14520x"], []), (["../GSE1"], []), (["GSE0"], []), ([], ["GPL96;x"]), ([], ["gpl96"])],
)
def test_a_name_that_is_no_accession_is_refused_and_nothing_is_made(tmp_path, series, platform):
    with pytest.raises(AccessionError, match="is not a GEO (series|platform) accession"):
        accession_downloads(tmp_path / "GEO", series=series, platforms=platform)
    assert not (tmp_path / "GEO").exists()


def test_the_command_fetches_them_into_the_trait_folder(tmp_path):
    _NCBI.asked = []
    with local_server(_NCBI) as url:
        result = CliRunner().invoke(main, [
            "download", "geo", "--out", str(tmp_path / "GEO"), "--series", "GSE14520-GPL571",
            "--platform", "GPL96", "--base-url", f"{url}/geo/series", "--no-progress",
        ])  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "2 files: 2 downloaded" in result.stdout
    matrix = tmp_path / "GEO/GSE14520/GSE14520-GPL571_series_matrix.txt.gz"
    assert matrix.read_bytes() == _MATRIX
    assert (tmp_path / "GEO/platforms/GPL96.txt").read_bytes() == _PLATFORM
    assert sorted(p.name for p in (tmp_path / "GEO").rglob("*")) == sorted(
        ["GSE14520", matrix.name, "platforms", "GPL96.txt"]
    )  # no .part left


def test_by_accession_is_not_by_manifest(tmp_path):
    result = CliRunner().invoke(main, ["download", "geo", "--out", str(tmp_path / "G"),
                                       "--series", "GSE1", "--only", "Asthma"])  # fmt: skip
    assert result.exit_code == 2 and "leave out --manifest and --only" in result.stderr
    bad = CliRunner().invoke(main, ["download", "geo", "--out", str(tmp_path / "G"),
                                    "--series", "GSE1;rm"])  # fmt: skip
    assert bad.exit_code == 1 and "is not a GEO series accession" in bad.stderr
    assert "Traceback" not in bad.output and not (tmp_path / "G").exists()

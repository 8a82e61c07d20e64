"""Execute the notebook page (docs/guides/cohort-notebook.ipynb) and save its outputs in place:
the executed copy checked in with each version, which the documentation shows.

It downloads TCGA CHOL and NCBI's gene table with genotex's own download command, from the
public servers, or with `--mirror SHARED` from a loopback copy of them holding the shared
folder's real files (what the test suite does; no network). Run from the repository's root:

    python scripts/execute_notebook.py [--mirror ../shared]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "guides" / "cohort-notebook.ipynb"
sys.path.insert(0, str(ROOT))


@contextlib.contextmanager
def mirror(shared: Path) -> Iterator[str]:
    """A loopback copy of Xena's and NCBI's servers, as far as the page asks: CHOL's files and
    the gene table, from `shared/data/real`; yields its base URL.
    """
    from tests.conftest import local_server
    from tests.doc_scenes import _Mirror

    real = shared / "data" / "real"
    _Mirror.files = {}  # each file where the server keeps it: Xena's <cohort map>/<file>
    for path in (real / "tcga" / "TCGA_Bile_Duct_Cancer_(CHOL)").iterdir():
        folder, _, name = path.name.partition("_")  # TCGA.CHOL.sampleMap_<file>
        _Mirror.files[f"{folder}/{name}"] = path.read_bytes()
    gene_info = real / "ncbi" / "Homo_sapiens.gene_info.gz"
    _Mirror.files[gene_info.name] = gene_info.read_bytes()
    with local_server(_Mirror) as url:
        yield url


def execute(url: str | None, *, timeout: int = 900):  # noqa: ANN201 - an nbformat notebook
    """The page executed in a fresh kernel (against `url` when given), run from its folder."""
    import nbclient
    import nbformat

    notebook = nbformat.read(PAGE, as_version=4)
    if url is not None:
        os.environ["GENOTEX_MIRROR"] = url
    try:
        where = {"metadata": {"path": str(PAGE.parent)}}
        client = nbclient.NotebookClient(
            notebook, timeout=timeout, kernel_name="python3", resources=where
        )
        client.execute()
    finally:
        os.environ.pop("GENOTEX_MIRROR", None)
    return notebook


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mirror", type=Path, default=None, help="the shared folder")
    shared = parser.parse_args().mirror
    import nbformat

    with contextlib.ExitStack() as stack:
        url = None if shared is None else stack.enter_context(mirror(shared))
        notebook = execute(url)
    nbformat.write(notebook, PAGE)
    print(f"executed and saved: {PAGE.relative_to(ROOT)}")


if __name__ == "__main__":
    main()

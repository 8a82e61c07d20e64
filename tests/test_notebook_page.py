"""#38: the page "Analysing a cohort in a notebook" is a notebook that runs, offline, on the real
GEO and TCGA files of the shared folder: executed here with nbclient, as the docs build does."""

from __future__ import annotations

from pathlib import Path

import pytest

PAGE = Path(__file__).resolve().parents[1] / "docs" / "guides" / "cohort-notebook.ipynb"


def _text(cell: dict) -> str:
    parts = []
    for output in cell.get("outputs", []):
        parts.append(output.get("text", ""))
        parts.append(output.get("data", {}).get("text/plain", ""))
    return "".join(parts)


def test_the_cohort_notebook_runs_offline_and_shows_its_tables_and_figures(
    shared, monkeypatch, tmp_path
):
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    monkeypatch.setenv("GENOTEX_SHARED", str(shared))
    monkeypatch.setenv("TMPDIR", str(tmp_path))  # the notebook's work folder
    notebook = nbformat.read(PAGE, as_version=4)
    client = nbclient.NotebookClient(
        notebook,
        timeout=600,
        kernel_name="python3",
        resources={"metadata": {"path": str(PAGE.parent)}},
    )
    client.execute()  # raises CellExecutionError on the first failing cell
    code = [c for c in notebook.cells if c.cell_type == "code"]
    errors = [o for c in code for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert not errors
    text = "\n".join(_text(c) for c in code)
    assert "AnnData object with n_obs × n_vars = 43 × 12983" in text
    assert "usable: 45 samples" in text
    assert "genes at BH FDR 5%" in text and "MARCO" in text  # the top gene of the table
    figures = [c for c in code if any("image/png" in o.get("data", {}) for o in c["outputs"])]
    assert len(figures) >= 5  # two QC plots, two volcanos, the frequency plot
    # no statistics or plotting code of the analyst's own: genotex's calls (and gseapy's)
    source = "\n".join(c.source for c in code)
    for foreign in ("scipy", "statsmodels", "plt.", "matplotlib.pyplot", "ttest"):
        assert foreign not in source, foreign

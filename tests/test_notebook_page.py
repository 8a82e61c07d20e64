"""The page "Analysing a cohort in a notebook" (#38, #61): a notebook whose data comes from
genotex's own download command, executed here against a loopback copy of the servers (the
shared folder's real TCGA CHOL files and gene table; no network), and checked in executed by
this version, every figure titled.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from genotex import __version__

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "guides" / "cohort-notebook.ipynb"


def _script():
    path = ROOT / "scripts" / "execute_notebook.py"
    spec = importlib.util.spec_from_file_location("execute_notebook", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _text(cell: dict) -> str:
    parts = []
    for output in cell.get("outputs", []):
        parts.append(output.get("text", ""))
        parts.append(output.get("data", {}).get("text/plain", ""))
    return "".join(parts)


def _figures(code: list) -> int:
    return sum("image/png" in o.get("data", {}) for c in code for o in c.get("outputs", []))


def test_the_page_is_checked_in_executed_by_this_version():
    nbformat = pytest.importorskip("nbformat")
    notebook = nbformat.read(PAGE, as_version=4)
    code = [c for c in notebook.cells if c.cell_type == "code"]
    assert all(c.execution_count is not None and c.outputs for c in code)
    assert f"genotex {__version__}\n" in _text(code[0])  # re-run it when the version changes
    assert _figures(code) == 5  # the QC plot, three volcanos, the frequency plot
    errors = [o for c in code for o in c.outputs if o.get("output_type") == "error"]
    assert not errors


#: A cell appended to the page: each figure's title, printed.
_TITLES = (
    "for fig in (cohort_qc_plot(adata), volcano, frequency, subset_volcano, "
    "interaction_volcano):\n"
    "    print('TITLE', (fig._suptitle.get_text() if fig._suptitle else "
    "fig.axes[0].get_title()).replace(chr(10), ' '))"
)


@pytest.fixture(scope="module")
def executed(shared, tmp_path_factory):
    """The page, with `_TITLES` appended, executed once against the loopback servers (its
    work folder under this module's own temporary folder)."""
    nbformat = pytest.importorskip("nbformat")
    pytest.importorskip("nbclient")
    folder = tmp_path_factory.mktemp("notebook-page")
    script = _script()
    page = nbformat.read(PAGE, as_version=4)
    page.cells.append(nbformat.v4.new_code_cell(_TITLES))
    moved = folder / "page.ipynb"
    nbformat.write(page, moved)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TMPDIR", str(folder))  # the notebook's work folder
        patch.setattr(script, "PAGE", moved)
        with script.mirror(shared) as url:
            return script.execute(url)


def test_the_page_runs_on_what_its_own_download_command_fetches(executed):
    code = [c for c in executed.cells if c.cell_type == "code"]
    text = "\n".join(_text(c) for c in code)
    assert "2 files: 2 downloaded" in text  # through genotex download tcga, checked by sha256
    assert "AnnData object with n_obs × n_vars = 45 × 19858" in text
    assert "genes at BH FDR 5%" in text and "selected by the model" in text
    assert "residual degrees of freedom: 8 (few: flagged)" in text  # the paired design
    assert "Bile_Duct_Cancer:Age:" in text and "r_squared" in text  # interaction, continuous
    assert _figures(code) >= 5
    source = "\n".join(c.source for c in code[:-1])
    assert 'genotex", *command' in source and '"download", "tcga"' in source
    for foreign in ("scipy", "statsmodels", "plt.", "matplotlib.pyplot", "ttest", "shared"):
        assert foreign not in source, foreign  # genotex's calls only, no shared folder


def test_every_figure_of_the_page_is_titled_with_trait_and_cohort(executed):
    printed = [line for line in _text(executed.cells[-1]).splitlines() if line.startswith("TITLE")]
    cohort = "Bile_Duct_Cancer · TCGA_Bile_Duct_Cancer_(CHOL)"
    assert len(printed) == 5 and all(cohort in line for line in printed), printed
    assert "(subset: " in printed[3] and " of 45 samples)" in printed[3]
    assert "Bile_Duct_Cancer:Age" in printed[4]  # the interaction's volcano names it

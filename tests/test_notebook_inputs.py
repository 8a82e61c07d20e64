"""What the notebook API takes and refuses (issue #45, items 2-6): only var_names are genes,
a table's trait is binary or refused in one sentence, names never leave their folder, and
genotex's AnnData is written to `.h5ad` and read back with the extras as installed.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("anndata", reason="the anndata extra is not installed")

from genotex.core import UnsafeNameError, linked_to_anndata  # noqa: E402
from genotex.preprocessing import cohort_anndata  # noqa: E402
from genotex.regression import GeneAnalysis  # noqa: E402
from genotex.workflows import write_raw_benchmark  # noqa: E402


@pytest.fixture(scope="module")
def bench(tmp_path_factory):
    return write_raw_benchmark(tmp_path_factory.mktemp("inputs"), recipes=False)


@pytest.fixture()
def adata(bench):
    return cohort_anndata(bench.reference_output / "preprocess", "Asthma", "GSE100001")


def _fit(data, **options):
    return GeneAnalysis("Asthma", resamples=3, **options).fit(data)


def _qc_metrics(adata) -> None:
    """The columns scanpy's `pp.calculate_qc_metrics(adata, inplace=True)` adds, computed here
    by their definitions (scanpy itself is not installed: it asks for pandas < 3).
    """
    x = np.asarray(adata.X)
    counts = x.sum(axis=1)
    genes = (x > 0).sum(axis=1)
    adata.obs["n_genes_by_counts"] = genes
    adata.obs["log1p_n_genes_by_counts"] = np.log1p(genes)
    adata.obs["total_counts"] = counts
    adata.obs["log1p_total_counts"] = np.log1p(counts)
    top = np.sort(x, axis=1)[:, ::-1][:, :50].sum(axis=1)
    adata.obs["pct_counts_in_top_50_genes"] = 100 * top / counts
    adata.var["n_cells_by_counts"] = (x > 0).sum(axis=0)
    adata.var["mean_counts"] = x.mean(axis=0)
    adata.var["total_counts"] = x.sum(axis=0)


def test_only_var_names_are_genes_beside_scanpys_qc_columns_and_a_bool(adata):
    plain = _fit(adata.copy()).to_frame()
    _qc_metrics(adata)
    adata.obs["is_outlier"] = adata.obs["total_counts"] > adata.obs["total_counts"].median()
    annotated = _fit(adata).to_frame()
    assert len(annotated) == adata.n_vars  # no obs column tested as a gene
    assert "total_counts" not in annotated.index and "is_outlier" not in annotated.index
    pd.testing.assert_frame_equal(annotated, plain)  # and nothing else moved


def test_a_frame_takes_genes_or_every_numeric_column_but_the_annotations(adata):
    frame = pd.concat([adata.obs[["Asthma", "Age", "Gender"]], adata.to_df()], axis=1)
    frame["tissue"] = "lung"  # text: an annotation, never a gene
    frame["flagged"] = False  # boolean: likewise
    with pytest.warns(UserWarning, match="1 column\\(s\\) hold text only .*'tissue'"):
        every = _fit(frame).to_frame()  # said, never left out unsaid
    assert len(every) == adata.n_vars
    three = list(adata.var_names[:3])
    assert sorted(_fit(frame, genes=three).to_frame().index) == sorted(three)


def test_two_columns_of_the_trait_name_are_refused(adata):
    frame = pd.concat([adata.obs[["Asthma"]], adata.to_df()], axis=1)
    doubled = pd.concat([frame, 1 - frame[["Asthma"]]], axis=1)
    with pytest.raises(ValueError, match="the table has 2 columns named 'Asthma'"):
        _fit(doubled)


def test_duplicated_var_names_are_named_as_duplicates(adata):
    names = list(adata.var_names)
    names[1] = names[0]
    adata.var_names = names
    with pytest.raises(ValueError, match=f"var_names hold duplicates \\({names[0]!r}"):
        _fit(adata)


def test_missing_group_labels_are_one_sentence(adata):
    adata.obs["patient"] = [f"p{i // 2}" for i in range(adata.n_obs)]
    adata.obs.loc[adata.obs_names[:3], "patient"] = None
    with pytest.raises(ValueError, match="'patient' has 3 samples without a group"):
        _fit(adata, groups="patient")


@pytest.mark.parametrize("kind", ["categorical", "text"])
def test_a_two_level_text_trait_is_coded_with_its_case_level_named(adata, kind):
    numbers = _fit(adata.copy()).to_frame()
    labels = np.where(adata.obs["Asthma"] == 1, "asthma", "control")
    adata.obs["Asthma"] = pd.Categorical(labels) if kind == "categorical" else labels
    with pytest.raises(ValueError, match=r"holds text \('asthma', 'control'\): name the case"):
        _fit(adata)
    with pytest.raises(ValueError, match="case='Asthma' is not one of them"):
        _fit(adata, case="Asthma")
    pd.testing.assert_frame_equal(_fit(adata, case="asthma").to_frame(), numbers)


def test_a_trait_that_is_not_binary_is_refused(adata):
    adata.obs["Asthma"] = np.arange(adata.n_obs) % 3
    with pytest.raises(ValueError, match=r"holds 3 values \(0, 1, 2\); a GenoTEX trait is binary"):
        _fit(adata)


def test_a_transposed_table_is_told_apart_from_a_missing_trait(adata):
    frame = pd.concat([adata.obs[["Asthma"]], adata.to_df()], axis=1)
    with pytest.raises(ValueError, match=r"looks genes x samples \(.*\(data\.T\)"):
        _fit(frame.T)
    with pytest.raises(ValueError, match="^the table has no trait column 'Obesity'$"):
        GeneAnalysis("Obesity").fit(frame)


@pytest.mark.parametrize("cohort", ["../Obesity/GSE100003", "../../reference/GSE1", "GSE1/x"])
def test_cohort_anndata_never_leaves_the_traits_folder(bench, cohort):
    with pytest.raises(UnsafeNameError):
        cohort_anndata(bench.reference_output / "preprocess", "Asthma", cohort)
    with pytest.raises(UnsafeNameError):
        cohort_anndata(bench.reference_output / "preprocess", "../Asthma", "GSE100001")


def test_linked_to_anndata_of_an_anndata_is_one_sentence(adata):
    with pytest.raises(TypeError, match="it is already an AnnData"):
        linked_to_anndata(adata, obs_columns=["Asthma"])
    with pytest.raises(TypeError, match="a linked table is a pandas DataFrame, not list"):
        linked_to_anndata([1, 2], obs_columns=["Asthma"])


def test_genotex_anndata_is_written_to_h5ad_and_read_back(adata, tmp_path):
    import anndata

    path = tmp_path / "cohort.h5ad"
    adata.write_h5ad(path)
    back = anndata.read_h5ad(path)
    np.testing.assert_array_equal(back.X, adata.X)
    assert list(back.obs_names) == list(adata.obs_names)
    assert list(back.var_names) == list(adata.var_names)
    # the index's missing-value marker may differ (pd.NA or NaN): its labels may not
    pd.testing.assert_frame_equal(back.obs, adata.obs, check_index_type=False)
    assert back.uns["genotex"]["linked_sha256"] == adata.uns["genotex"]["linked_sha256"]
    refit = _fit(back).to_frame()
    pd.testing.assert_frame_equal(refit, _fit(adata).to_frame(), check_index_type=False)


# ---- the figures (issue #45, 13) ----------------------------------------------------------
def _renderer(fig):
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    FigureCanvasAgg(fig)
    fig.canvas.draw()
    return fig.canvas.get_renderer()


def test_the_volcano_names_the_top_marginal_gene_and_no_label_overlaps(adata):
    analysis = _fit(adata)
    table = analysis.to_frame()
    fig = analysis.plot("volcano")
    renderer = _renderer(fig)
    ax = fig.axes[0]
    labels = [t for t in ax.texts if t.get_text()]
    assert len(labels) >= 4
    boxes = [t.get_window_extent(renderer) for t in labels]
    inside = ax.get_window_extent(renderer)
    for number, box in enumerate(boxes):
        assert inside.x0 <= box.x0 and box.x1 <= inside.x1, labels[number].get_text()
        assert inside.y0 <= box.y0 and box.y1 <= inside.y1, labels[number].get_text()
        for other in boxes[number + 1 :]:
            assert not box.overlaps(other)
    strongest = table.sort_values("p_value").index[0]  # the top marker, selected or not
    assert strongest in {t.get_text() for t in labels}
    # the demo's genes are log2-like values: the effect is named a log2 fold change (#61)
    assert "adjusted" not in ax.get_xlabel() and "log2 fold change" in ax.get_xlabel()
    with_age = GeneAnalysis("Asthma", covariates=["Age"], resamples=3).fit(adata)
    assert "adjusted for Age" in with_age.plot("volcano").axes[0].get_xlabel()


def test_the_qc_plot_keeps_each_panels_text_in_its_panel(bench):
    from genotex.preprocessing import cohort_qc_plot

    xena = cohort_anndata(bench.reference_output / "preprocess", "Psoriasis", "Xena")
    fig = cohort_qc_plot(xena)
    renderer = _renderer(fig)
    panels = [ax.get_tightbbox(renderer) for ax in fig.axes]
    for left, right in zip(panels, panels[1:], strict=False):
        assert left.x1 <= right.x0, (left, right)  # no text crosses into the next panel
    balance = fig.axes[2]
    ticks = [t.get_window_extent(renderer) for t in balance.get_xticklabels() if t.get_text()]
    assert len(ticks) == 2 and not ticks[0].overlaps(ticks[1])
    with pytest.raises(TypeError, match="cohort_qc_plot takes cohort_anndata's AnnData"):
        cohort_qc_plot(xena.to_df())

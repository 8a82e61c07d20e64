"""What GeneAnalysis did to the data, said (issue #54, items 1-5; #52, item 12): samples
dropped and why, text covariates and empty ones named, degrees of freedom checked at
every size, `covariates` as one string, a refused gene named. Expected counts by hand.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from genotex.regression import DroppedSamplesWarning, GeneAnalysis, SmallSampleWarning


def _frame(n: int, seed: int = 0, genes: int = 12) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    trait = np.arange(n) % 2
    frame = pd.DataFrame(rng.normal(size=(n, genes)), columns=[f"G{i}" for i in range(genes)])
    frame["G0"] += 2.0 * trait
    frame["Trait"] = trait.astype(float)
    frame["Age"] = rng.integers(20, 80, n).astype(float)
    frame["Gender"] = (np.arange(n) // 2 % 2).astype(float)
    return frame


def _fit(frame: pd.DataFrame, **options) -> GeneAnalysis:
    return GeneAnalysis("Trait", **{"resamples": 4, **options}).fit(frame)


@pytest.mark.parametrize(
    ("change", "said"),
    [
        (lambda f: f.assign(Gender=np.where(f["Gender"] == 1, "male", "female")),
         "the covariate column 'Gender' holds text ('female', 'male')"),
        (lambda f: f.assign(Age=np.nan), "the covariate column 'Age' holds no value"),
    ],
)  # fmt: skip
def test_a_text_or_empty_covariate_is_named_not_called_a_constant_trait(change, said):
    """0.8.0: "the trait 'Trait' is constant" (every sample had been dropped)."""
    with pytest.raises(ValueError) as raised:
        _fit(change(_frame(30)), covariates=["Age", "Gender"])
    assert said in str(raised.value) and "constant" not in str(raised.value)


def test_dropped_samples_are_said_with_their_counts_and_kept_on_the_result():
    frame = _frame(40)
    frame.loc[[0, 1], "Trait"] = np.nan  # 2 without the trait
    frame.loc[[1, 2, 3, 4], "Age"] = np.nan  # 3 more without Age (1 is counted as trait)
    frame.loc[[4, 5], "Gender"] = np.nan  # 1 more without Gender (4 is Age's)
    with pytest.warns(DroppedSamplesWarning) as caught:
        analysis = _fit(frame, covariates=["Age", "Gender"])
    message = str(caught[0].message)
    assert message == (
        "6 of 40 samples were left out (2 for a missing trait, 3 for a missing Age, "
        "1 for a missing Gender)"
    )
    assert analysis.samples_dropped_ == 6
    assert analysis.samples_dropped_by_ == {"trait": 2, "Age": 3, "Gender": 1}
    assert analysis.residual_df_ == 34 - 2 - 2  # 34 samples, intercept, trait, 2 covariates


@pytest.mark.parametrize("n", range(0, 13))
def test_degrees_of_freedom_are_checked_at_every_size(n):
    """With Age and Gender: n - 4 residual degrees of freedom. Under 3 refused in one
    sentence, under 10 warned and flagged; never an internal error (0.8.0: 4 samples gave
    "cannot reshape array of size 0", 5 reported 30 genes at FDR 5%).
    """
    frame = _frame(max(n, 0))
    residual = n - 4
    if n < 2 or residual < 3:
        with pytest.raises(ValueError) as raised:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                _fit(frame, covariates=["Age", "Gender"])
        text = str(raised.value)
        assert "\n" not in text
        reasons = ("residual degrees of freedom", "constant", "no sample", "holds no value")
        assert any(reason in text for reason in reasons), text
        return
    with pytest.warns(SmallSampleWarning, match=f"leave {residual} residual degrees of freedom"):
        analysis = _fit(frame, covariates=["Age", "Gender"])
    assert analysis.few_samples_ and analysis.residual_df_ == residual


def test_enough_samples_are_not_flagged():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        analysis = _fit(_frame(30), covariates=["Age", "Gender"])
    assert not analysis.few_samples_ and analysis.residual_df_ == 26


def test_covariates_as_a_string_is_one_column():
    """0.8.0: covariates="Age" gave "no covariate column 'A'"."""
    one = _fit(_frame(30), covariates="Age").to_frame()
    listed = _fit(_frame(30), covariates=["Age"]).to_frame()
    pd.testing.assert_frame_equal(one, listed)


def test_a_gene_with_a_missing_value_is_named():
    frame = _frame(30)
    frame.loc[3, "G7"] = np.nan
    with pytest.raises(
        ValueError, match=r"1 gene columns hold missing or non-numeric values \('G7'\)"
    ):
        _fit(frame)


def test_a_column_of_text_among_numbers_is_said_and_left_out():
    frame = _frame(30)
    frame["G11"] = ["n/a"] * 20 + [str(v) for v in range(10)]  # mostly text: not a gene
    with pytest.warns(UserWarning, match="1 columns hold text among numbers.*'G11'"):
        analysis = _fit(frame)
    assert "G11" not in analysis.to_frame().index and analysis.text_columns_ == ["G11"]


def test_a_volcano_saved_with_a_plain_savefig_keeps_its_label_and_title(tmp_path):
    """0.8.0 cut the x-axis label ("...adjusted for Age, Ger") under fig.savefig(path), and
    its plots had no title (issue #54, item 6): every text's box lies inside the saved page.
    """
    import matplotlib

    matplotlib.use("Agg")
    frame = _frame(40)
    frame["Body_Mass_Index"] = np.random.default_rng(1).normal(25, 3, 40)
    analysis = _fit(frame, condition="Gender", covariates=["Age", "Body_Mass_Index"])
    for kind in ("volcano", "frequency"):
        fig = analysis.plot(kind)
        path = tmp_path / f"{kind}.png"
        fig.savefig(path)  # plain: no bbox_inches
        ax = fig.axes[0]
        from matplotlib.backends.backend_agg import FigureCanvasAgg

        canvas = fig.canvas if hasattr(fig.canvas, "get_renderer") else FigureCanvasAgg(fig)
        renderer = canvas.get_renderer()
        page = fig.bbox
        for text in (ax.xaxis.label, ax.title):
            box = text.get_window_extent(renderer)
            assert text.get_text() and page.x0 <= box.x0 and box.x1 <= page.x1, kind
            assert page.y0 <= box.y0 and box.y1 <= page.y1, kind
        assert ax.title.get_text().startswith("Trait given Gender · in-memory")
        label = ax.xaxis.label.get_text().replace("\n", " ")
        if kind == "volcano":
            assert label.endswith("adjusted for Gender, Age, Body_Mass_Index")


def test_one_fdr_convention_for_both_tests_and_nothing_on_stdout(capfd):
    """limma's FDR was over every gene, the ordinary one over the tested genes, and InMoose
    printed to standard output (issue #54, item 7): both leave a constant gene out.
    """
    pytest.importorskip("inmoose.limma")
    multitest = pytest.importorskip("statsmodels.stats.multitest")  # independent of scipy's

    frame = _frame(30)
    frame["G5"] = 3.0  # constant: no test in either
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        table = _fit(frame, moderated=True, resamples=0).to_frame()
    assert np.isnan(table.loc["G5", ["p_value", "fdr", "p_moderated", "fdr_moderated"]]).all()
    tested = table.drop(index="G5")
    for p, fdr in (("p_value", "fdr"), ("p_moderated", "fdr_moderated")):
        expected = multitest.multipletests(tested[p].to_numpy(), method="fdr_bh")[1]
        np.testing.assert_allclose(tested[fdr].to_numpy(), expected, rtol=1e-12)
    assert capfd.readouterr().out == ""


def test_labelled_groups_for_scanpys_group_tools(tmp_path):
    """The trait and Gender came into obs as float 0/1 only (issue #54, item 8): a labelled
    categorical twin beside each, the numbers untouched.
    """
    pytest.importorskip("anndata")
    from genotex.preprocessing import cohort_anndata, label_groups
    from genotex.workflows import write_raw_benchmark

    bench = write_raw_benchmark(tmp_path / "bench", recipes=False)
    adata = cohort_anndata(bench.reference_output / "preprocess", "Asthma", "GSE100001")
    labelled = label_groups(adata)
    trait, gender = labelled.obs["Asthma_group"], labelled.obs["Gender_group"]
    assert list(trait.cat.categories) == ["control", "case"]
    assert list(gender.cat.categories) == ["female", "male"]
    coded = adata.obs["Asthma"].map({0.0: "control", 1.0: "case"})
    assert (trait.astype(str) == coded.astype(str)).all()
    assert (labelled.obs["Asthma"] == adata.obs["Asthma"]).all()  # the numbers stay
    assert "Asthma_group" not in adata.obs  # a copy
    odd = adata.copy()
    odd.obs["Asthma"] = odd.obs["Asthma"] * 2
    with pytest.raises(ValueError, match="holds 2, not only 0 and 1"):
        label_groups(odd)

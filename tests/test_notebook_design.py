"""No silent wrong number in a notebook design (issue #61): covariates checked for rank, limma's
prior over the genes it tests, duplicated samples refused, non-genes never tested, small
groups flagged. Every expected number comes from statsmodels' OLS or InMoose's limma run
here on the same data, never from genotex.
"""

from __future__ import annotations

import io
import warnings

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm

from genotex.regression import DesignWarning, GeneAnalysis, SmallSampleWarning


def _frame(n: int = 40, genes: int = 15, seed: int = 1) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    trait = (np.arange(n) % 2).astype(float)
    age = rng.integers(20, 80, n).astype(float)
    x = rng.normal(size=(n, genes))
    x[:, 0] += 1.5 * trait
    x[:, 1] += 0.04 * age
    frame = pd.DataFrame(x, columns=[f"G{i}" for i in range(genes)],
                         index=[f"S{i:02d}" for i in range(n)])  # fmt: skip
    frame.insert(0, "Trait", trait)
    frame.insert(1, "Age", age)
    frame.insert(2, "Gender", (np.arange(n) // 2 % 2).astype(float))
    return frame


def _fit(frame: pd.DataFrame, **options) -> GeneAnalysis:
    return GeneAnalysis("Trait", **{"resamples": 0, **options}).fit(frame)


def _ols_t(frame: pd.DataFrame, covariates: list[str]) -> pd.Series:
    """statsmodels' t of the trait, gene by gene, on `1 + Trait + covariates`."""
    design = sm.add_constant(frame[["Trait", *covariates]].to_numpy(float))
    genes = [c for c in frame.columns if c[:1] == "G" and c[1:].isdigit()]
    return pd.Series({g: sm.OLS(frame[g].to_numpy(float), design).fit().tvalues[1] for g in genes})


@pytest.mark.parametrize(
    ("change", "covariates", "left"),
    [
        # a males-only subset that keeps Gender: constant
        (lambda f: f.assign(Gender=1.0), ["Age", "Gender"], "Gender"),
        # a constant batch column
        (lambda f: f.assign(batch=3.0), ["Age", "batch"], "batch"),
        # Age under another name, restated: a combination of Age and the intercept
        (lambda f: f.assign(Age2=2 * f["Age"] + 1), ["Age", "Age2"], "Age2"),
    ],
    ids=["constant-gender", "constant-batch", "aliased-age"],
)
def test_a_constant_or_aliased_covariate_is_left_out_named_and_t_is_statsmodels(
    change, covariates, left
):
    frame = change(_frame())
    with pytest.warns(DesignWarning, match=repr(left)):
        analysis = _fit(frame, covariates=covariates)
    assert list(analysis.covariates_dropped_) == [left]
    kept = [c for c in covariates if c != left]
    expected = _ols_t(frame, kept)
    got = analysis.to_frame()["t"]
    assert np.allclose(got[expected.index], expected, rtol=0, atol=1e-8)
    # one covariate left: n - 2 - 1 residual degrees of freedom (40 - 3)
    assert analysis.residual_df_ == 40 - 2 - len(kept)
    with pytest.raises(ValueError, match="not of full rank") as raised:
        _fit(frame, covariates=covariates, strict=True)
    assert "\n" not in str(raised.value) and repr(left) in str(raised.value)


@pytest.mark.parametrize("restated", ["equal", "collinear"])
def test_a_covariate_that_restates_the_trait_is_refused(restated):
    frame = _frame()
    frame["copy"] = frame["Trait"] if restated == "equal" else 1 - 2 * frame["Trait"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(ValueError, match="the trait 'Trait' is collinear with the covariates"):
            _fit(frame, covariates=["Age", "copy"])
        with pytest.raises(ValueError, match="collinear"):  # moderated: no bare LinAlgError
            _fit(frame, covariates=["copy"], moderated=True)


def test_duplicated_samples_are_refused_naming_them():
    frame = _frame()
    repeated = pd.concat([frame, frame.iloc[[3, 5, 7]]])
    with pytest.raises(ValueError, match="3 sample id\\(s\\) more than once \\('S03', 'S05', "):
        _fit(repeated)


def test_a_csv_read_without_index_col_never_tests_its_row_numbers():
    frame = _frame()
    text = io.StringIO()
    frame.to_csv(text)
    read = pd.read_csv(io.StringIO(text.getvalue()))  # no index_col: "Unnamed: 0" holds ids
    read.insert(1, "row", np.arange(len(read)))  # and row numbers under another name
    with pytest.warns(UserWarning, match="being no gene: 'Unnamed: 0' .*; 'row' \\(row numbers"):
        table = _fit(read).to_frame()
    assert "Unnamed: 0" not in table.index and "row" not in table.index
    assert len(table) == 15


def test_one_control_beside_cases_warns_with_the_counts():
    frame = _frame(n=37)
    frame["Trait"] = 1.0
    frame.loc["S00", "Trait"] = 0.0  # 1 control beside 36 cases
    with pytest.warns(SmallSampleWarning, match="has 1 control and 36 case sample"):
        analysis = _fit(frame)
    assert analysis.few_samples_


def test_limmas_moderated_t_with_constant_genes_is_limmas_on_the_genes_tested():
    inmoose = pytest.importorskip("inmoose.limma", reason="the limma extra (InMoose)")
    frame = _frame(genes=60)
    for index in range(40):  # 40 constant genes, as a cohort's unexpressed ones
        frame[f"C{index}"] = float(index)
    analysis = _fit(frame, covariates=["Age"], moderated=True)
    moderated = analysis.to_frame()["t_moderated"]
    assert moderated[[f"C{i}" for i in range(40)]].isna().all()
    genes = [f"G{i}" for i in range(60)]
    design = pd.DataFrame(sm.add_constant(frame[["Trait", "Age"]].to_numpy(float)))
    expression = pd.DataFrame(frame[genes].to_numpy(float).T, index=genes)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = inmoose.eBayes(inmoose.lmFit(expression, design))
    expected = pd.Series(np.asarray(fit.t)[:, 1], index=genes)
    assert np.allclose(moderated[genes], expected, rtol=0, atol=1e-8)


# ---- designs as formulas (formulaic; the `formula` extra) ------------------------------------
def _paired_frame() -> pd.DataFrame:
    """20 patients, a case and a control sample each; a three-level stage that varies by
    sample, and Age."""
    frame = _frame(n=40, genes=12, seed=4)
    rng = np.random.default_rng(9)
    frame["patient"] = [f"P{i // 2:02d}" for i in range(40)]
    frame["stage"] = rng.choice(["I", "II", "III"], 40)
    frame["G3"] += frame["stage"].map({"I": 0.0, "II": 0.8, "III": 1.6})
    frame["G4"] += frame["patient"].str[1:].astype(int) * 0.1  # a patient effect
    return frame


def test_a_formula_with_a_three_level_factor_and_a_paired_term_is_statsmodels_formula_api():
    import statsmodels.formula.api as smf

    frame = _paired_frame()
    design = "~ Trait + Age + C(stage) + C(patient)"
    analysis = GeneAnalysis("Trait", design=design, resamples=0).fit(frame)
    genes = [c for c in frame.columns if c[:1] == "G" and c[1:].isdigit()]
    expected = pd.Series({g: smf.ols(f"{g} {design}", data=frame).fit().tvalues["Trait"]
                          for g in genes})  # fmt: skip
    got = analysis.to_frame()["t"]
    assert set(got.index) == set(genes)  # stage and patient are annotations, never genes
    assert np.allclose(got[genes], expected[genes], rtol=0, atol=1e-8)
    # intercept, trait, Age, 2 stage contrasts, 19 patient contrasts: 40 - 24
    assert analysis.residual_df_ == 40 - 24


@pytest.mark.filterwarnings("ignore:1 column\\(s\\) hold text only:UserWarning")  # patient's ids
def test_a_text_covariate_is_coded_by_the_formula_not_refused():
    import statsmodels.formula.api as smf

    frame = _paired_frame()
    with pytest.raises(ValueError, match="stage"):  # as a plain covariate: text is refused
        _fit(frame, covariates=["Age", "stage"])
    analysis = GeneAnalysis("Trait", design="~ Trait + stage", resamples=0).fit(frame)
    expected = smf.ols("G3 ~ Trait + stage", data=frame).fit().tvalues["Trait"]
    assert analysis.to_frame().loc["G3", "t"] == pytest.approx(expected, abs=1e-8)


@pytest.mark.parametrize(
    ("design", "said"),
    [
        ("Trait ~ Age", "must start with '~'"),
        ("~ Age", "does not hold the trait 'Trait'"),
        ("~ C(Trait) + Age", "enters the design as"),
        ("~ Trait + nowhere", "'nowhere', which the data does not hold"),
    ],
)
def test_a_design_formula_that_cannot_be_used_is_one_sentence(design, said):
    with pytest.raises(ValueError, match=said) as raised:
        GeneAnalysis("Trait", design=design, resamples=0).fit(_paired_frame())
    assert "\n" not in str(raised.value)


def test_a_formula_is_not_given_beside_the_covariates_it_replaces():
    with pytest.raises(ValueError, match="in the design formula"):
        GeneAnalysis("Trait", design="~ Trait", covariates=["Age"], resamples=0).fit(_frame())


def test_a_paired_formula_with_limma_is_limmas_on_the_formulas_design():
    """limma on a paired design was out of reach before the formula (groups refuse limma)."""
    inmoose = pytest.importorskip("inmoose.limma", reason="the limma extra (InMoose)")
    import statsmodels.formula.api as smf

    frame = _paired_frame()
    design = "~ Trait + Age + C(stage) + C(patient)"
    analysis = GeneAnalysis("Trait", design=design, resamples=0, moderated=True).fit(frame)
    genes = [c for c in frame.columns if c[:1] == "G" and c[1:].isdigit()]
    model = smf.ols(f"G0 {design}", data=frame)  # statsmodels' own coding of the design
    matrix, trait = model.exog, model.exog_names.index("Trait")
    expression = pd.DataFrame(frame[genes].to_numpy(float).T, index=genes)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = inmoose.eBayes(inmoose.lmFit(expression, pd.DataFrame(matrix)))
    expected = pd.Series(np.asarray(fit.t)[:, trait], index=genes)
    assert np.allclose(analysis.to_frame()["t_moderated"][genes], expected, rtol=0, atol=1e-8)


# ---- what is a gene, and which way round (issue #61, items 4 and 6) --------------------------
def _anndata(frame: pd.DataFrame):
    anndata = pytest.importorskip("anndata")
    genes = [c for c in frame.columns if c[:1] == "G" and c[1:].isdigit()]
    obs = frame[["Trait", "Age", "Gender"]].copy()
    return anndata.AnnData(X=frame[genes].to_numpy(float), obs=obs,
                           var=pd.DataFrame(index=genes))  # fmt: skip


def test_scanpys_qc_metrics_in_obs_never_become_genes_of_a_linked_table():
    from genotex.core import anndata_to_linked
    from genotex.preprocessing import handle_missing_values

    adata = _anndata(_frame())
    adata.obs["total_counts"] = adata.X.sum(axis=1)  # what calculate_qc_metrics adds
    adata.obs["n_genes_by_counts"] = 15
    linked = anndata_to_linked(adata, ["Trait", "Age", "Gender"])
    assert list(linked.columns[:3]) == ["Trait", "Age", "Gender"]
    assert "total_counts" not in linked and list(linked.columns[3:]) == list(adata.var_names)
    assert "total_counts" not in handle_missing_values(adata, "Trait").columns


def test_an_obs_column_with_a_genes_name_is_refused_naming_it():
    from genotex.core import anndata_to_linked

    adata = _anndata(_frame())
    adata.obs["G3"] = 1.0
    with pytest.raises(ValueError, match="obs column 'G3' has a gene's name"):
        anndata_to_linked(adata, ["Trait", "G3"])
    with pytest.raises(ValueError, match="obs column 'G3' has a gene's name"):
        _fit(adata, covariates=["G3"])


def test_a_genes_by_samples_table_is_refused_with_its_transpose_named():
    frame = _frame()
    frame.index = [f"GSM{1000 + i}" for i in range(len(frame))]
    with pytest.raises(ValueError, match=r"genes x samples .*\(data\.T\)"):
        _fit(frame.T)  # the trait is now a row
    adata = _anndata(frame).T  # samples in var_names, the genes in obs
    adata.obs["Trait"] = 0.0
    with pytest.raises(ValueError, match=r"40 of its 40 columns are sample IDs.*\(adata\.T\)"):
        _fit(adata)


def test_fit_refuses_a_y_rather_than_ignoring_it():
    frame = _frame()
    with pytest.raises(ValueError, match="takes the trait from the data's column 'Trait'"):
        GeneAnalysis("Trait", resamples=0).fit(frame, frame["Trait"])


@pytest.mark.filterwarnings("ignore:1 column\\(s\\) hold text only:UserWarning")  # patient's ids
def test_a_contrast_of_a_three_level_trait_is_statsmodels_treatment_coefficient():
    """The case - control difference of a three-level trait, on every sample: statsmodels'
    coefficient of the case level with the control level as the reference.
    """
    import statsmodels.formula.api as smf

    frame = _paired_frame().drop(columns=["Trait"])
    frame["G5"] += frame["stage"].map({"I": 0.0, "II": 0.5, "III": 2.0})
    analysis = GeneAnalysis("stage", contrast=("III", "I"), design="~ stage + Age",
                            resamples=0).fit(frame)  # fmt: skip
    genes = [c for c in frame.columns if c[:1] == "G" and c[1:].isdigit()]
    term = "C(stage, Treatment('I'))[T.III]"
    expected = pd.Series({g: smf.ols(f"{g} ~ C(stage, Treatment('I')) + Age", data=frame)
                          .fit().tvalues[term] for g in genes})  # fmt: skip
    assert np.allclose(analysis.to_frame()["t"][genes], expected, rtol=0, atol=1e-8)
    assert analysis.residual_df_ == 40 - 4  # intercept, III, II, Age
    with pytest.raises(ValueError, match="names levels the trait 'stage' does not hold"):
        GeneAnalysis("stage", contrast=("IV", "I"), resamples=0).fit(frame)


@pytest.mark.parametrize(
    "options",
    [{"covariates": ["Age", "Age"]}, {"condition": "Age", "covariates": ["Age"]}],
)
def test_a_covariate_named_twice_is_refused_in_a_sentence(options):
    """#63 item 5: a covariate named twice ended in a pandas error."""
    with pytest.raises(ValueError, match="the covariate 'Age' is named twice"):
        GeneAnalysis("Trait", resamples=0, **options).fit(_frame())


def test_an_infinite_covariate_is_said_infinite_not_missing():
    """#63 item 5: an infinite Age was said to be "missing"."""
    frame = _frame()
    frame.loc["S03", "Age"] = np.inf
    with pytest.raises(
        ValueError, match=r"'Age' is infinite in 1 sample\(s\) \(the first: 'S03'\)"
    ):
        GeneAnalysis("Trait", covariates=["Age"], resamples=0).fit(frame)
    frame.loc["S03", "Age"] = np.nan  # missing is still left out, and said so
    with pytest.warns(UserWarning, match="1 for a missing Age"):
        GeneAnalysis("Trait", covariates=["Age"], resamples=0).fit(frame)

"""Notebook v4 (issue #73): no silent wrong number from the data a notebook hands over,
formulas that mean what they say, and the coefficients an analyst asks for.

Every number is checked against statsmodels' OLS on the design written out, and the
moderated t against InMoose's limma called directly on the same design.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from genotex.regression import DesignWarning, DroppedSamplesWarning, GeneAnalysis

smf = pytest.importorskip("statsmodels.formula.api", reason="statsmodels checks the numbers")
pytest.importorskip("formulaic", reason="the formula extra")


def _frame(n: int = 60, genes: int = 25, seed: int = 1) -> pd.DataFrame:
    """Decimal genes, a 0/1 trait, Age, a three-level stage and a score, one row a sample."""
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame(
        rng.normal(size=(n, genes)),
        columns=[f"G{j}" for j in range(genes)],
        index=pd.Index([f"S{i:02d}" for i in range(n)], name="sample"),
    )
    frame.insert(0, "Trait", np.tile([0.0, 1.0], n // 2))
    frame.insert(1, "Age", rng.uniform(30, 80, n).round(1))
    frame.insert(2, "score", rng.normal(size=n))
    frame["G3"] += 0.05 * frame["Trait"] * frame["Age"] + 0.6 * frame["score"]
    return frame


def _genes(frame: pd.DataFrame) -> list[str]:
    return [c for c in frame.columns if c[:1] == "G" and c[1:].isdigit()]


def _t(formula: str, frame: pd.DataFrame, term: str) -> pd.Series:
    """statsmodels' t of `term` for every gene, on `gene ~ formula`."""
    return pd.Series({g: smf.ols(f"{g} {formula}", data=frame).fit().tvalues[term]
                      for g in _genes(frame)})  # fmt: skip


# ---- repeated samples ----------------------------------------------------------------------
def test_samples_repeated_by_pd_concat_and_reset_index_are_refused_by_name():
    frame = _frame()
    again = pd.concat([frame, frame.iloc[:3]]).reset_index(drop=True)  # ids 0..62: all unique
    with pytest.raises(ValueError, match=r"3 sample\(s\) whose expression repeats another's in "
                       r"every gene \('60' repeats '0', '61' repeats '1'"):  # fmt: skip
        GeneAnalysis("Trait", resamples=0).fit(again)


def test_samples_repeated_by_anndata_concat_are_refused_by_name():
    anndata = pytest.importorskip("anndata")
    frame = _frame()
    adata = anndata.AnnData(frame[_genes(frame)].to_numpy(), obs=frame[["Trait", "Age"]])
    adata.var_names = _genes(frame)
    doubled = anndata.concat([adata, adata[:2]], index_unique="-")
    with pytest.raises(ValueError, match=r"'S00-1' repeats 'S00-0'"):
        GeneAnalysis("Trait", resamples=0).fit(doubled)


def test_few_small_counts_that_coincide_are_no_repeat():
    """The rule: equal in every gene, and at least 20 distinct values in the row; two samples
    of 30 genes of counts 0-3 can coincide by chance and are fitted."""
    rng = np.random.default_rng(0)
    counts = pd.DataFrame(rng.poisson(0.3, size=(40, 30)), columns=[f"G{j}" for j in range(30)])
    counts.iloc[1] = counts.iloc[0]
    counts.insert(0, "Trait", np.tile([0, 1], 20))
    GeneAnalysis("Trait", resamples=0).fit(counts)  # refused would raise


# ---- columns that are no genes -------------------------------------------------------------
def test_whole_number_columns_among_decimal_genes_are_left_out_and_named():
    frame = _frame().drop(columns="score")
    filtered = frame[frame["Age"] > 35].reset_index(drop=True).reset_index()  # "index" 0..k
    filtered = filtered.rename(columns={"index": "row"})
    filtered["index"] = np.arange(3, 3 + len(filtered)) * 2  # reset_index after a filter
    filtered["batch"] = np.repeat([1, 2], [len(filtered) // 2, len(filtered) - len(filtered) // 2])
    with pytest.warns(UserWarning, match="'index' \\(whole numbers among decimal genes") as said:
        table = GeneAnalysis("Trait", resamples=0).fit(filtered).to_frame()
    assert "'batch' (whole numbers among decimal genes" in str(said[0].message)
    assert {"index", "batch", "row"}.isdisjoint(table.index) and len(table) == 25


def test_counts_all_whole_numbers_stay_genes():
    rng = np.random.default_rng(2)
    counts = pd.DataFrame(rng.poisson(50, size=(30, 12)), columns=[f"G{j}" for j in range(12)])
    counts.insert(0, "Trait", np.tile([0, 1], 15))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        table = GeneAnalysis("Trait", resamples=0).fit(counts).to_frame()
    assert len(table) == 12


def test_a_column_named_as_no_gene_symbol_is_left_out_given_symbols():
    frame = _frame()
    frame["purity"] = np.linspace(0.2, 0.9, len(frame))
    with pytest.warns(UserWarning, match="'purity' \\(not a gene symbol"):
        table = GeneAnalysis("Trait", resamples=0, symbols=_genes(frame)).fit(frame).to_frame()
    assert "purity" not in table.index and len(table) == 25


def test_a_gene_with_an_empty_name_is_refused_and_a_text_gene_named():
    anndata = pytest.importorskip("anndata")
    frame = _frame()
    adata = anndata.AnnData(frame[_genes(frame)].to_numpy(), obs=frame[["Trait"]])
    adata.var_names = ["", *_genes(frame)[1:]]
    with pytest.raises(ValueError, match="1 gene\\(s\\) with an empty name \\(the first at gene 1"):
        GeneAnalysis("Trait", resamples=0).fit(adata)
    frame["G24"] = frame["G24"].map(lambda v: f"{v:,.3f}x")  # a gene read as text
    with pytest.warns(UserWarning, match="hold text only .*'G24'"):
        GeneAnalysis("Trait", resamples=0).fit(frame)


# ---- formulas --------------------------------------------------------------------------------
def test_an_infinite_age_through_a_formula_is_refused_as_through_covariates():
    frame = _frame()
    frame.loc["S05", "Age"] = np.inf
    for options in ({"design": "~ Trait + Age"}, {"covariates": ["Age"]}):
        with pytest.raises(ValueError, match="'Age' is infinite in 1 sample\\(s\\) \\(the first: "
                           "'S05'\\)"):  # fmt: skip
            GeneAnalysis("Trait", resamples=0, **options).fit(frame)


def test_a_nan_a_transform_makes_leaves_those_samples_out_named():
    frame = _frame()
    young = frame.index[frame["Age"] < 40.05]  # Age has one decimal: log of 0 never made
    with pytest.warns(DroppedSamplesWarning, match=f"{len(young)} for no value of "
                      f"np.log\\(Age - 40.05\\) the formula made \\('{young[0]}'"):  # fmt: skip
        analysis = GeneAnalysis("Trait", design="~ Trait + np.log(Age - 40.05)",
                                resamples=0).fit(frame)  # fmt: skip
    kept = frame.drop(index=young)
    expected = _t("~ Trait + np.log(Age - 40.05)", kept, "Trait")
    assert np.allclose(analysis.to_frame()["t"][expected.index], expected, rtol=0, atol=1e-8)
    assert analysis.samples_dropped_by_ == {"np.log(Age - 40.05)": len(young)}
    at_40 = int((frame["Age"] == 40.0).sum()) + (frame.loc[young[0], "Age"] != 40.0)
    frame.loc[young[0], "Age"] = 40.0  # log(0): -inf, refused as an infinite covariate is
    with pytest.raises(ValueError, match=f"'np.log\\(Age - 40\\)' is infinite in {at_40} "):
        GeneAnalysis("Trait", design="~ Trait + np.log(Age - 40)", resamples=0).fit(frame)


def test_a_braced_term_is_python_as_formulaic_documents():
    frame = _frame()
    analysis = GeneAnalysis("Trait", design="~ Trait + {Age/10}", resamples=0).fit(frame)
    expected = _t("~ Trait + I(Age/10)", frame, "Trait")
    assert np.allclose(analysis.to_frame()["t"][expected.index], expected, rtol=0, atol=1e-8)
    assert analysis.design_columns_ == ["Intercept", "Trait", "Age / 10"]


@pytest.mark.parametrize("design", ["~ 0 + Trait + Age", "~ Trait + Age - 1", "~ -1 + Trait"])
def test_a_design_without_the_intercept_is_refused_not_fitted_with_one(design):
    with pytest.raises(ValueError, match="drops the intercept"):
        GeneAnalysis("Trait", design=design, resamples=0).fit(_frame())


def test_formulaics_errors_come_without_colour_codes():
    with pytest.raises(ValueError, match="cannot be read") as raised:
        GeneAnalysis("Trait", design="~ Trait + (", resamples=0).fit(_frame())
    assert "\x1b" not in str(raised.value) and "\n" not in str(raised.value)


# ---- aliasing at R's tolerance ---------------------------------------------------------------
def test_a_nearly_aliased_covariate_is_dropped_as_r_drops_it_or_refused_under_strict():
    frame = _frame()
    rng = np.random.default_rng(5)
    frame["months"] = 12 * frame["Age"] + 1e-9 * rng.normal(size=len(frame))
    with pytest.warns(DesignWarning, match="'months': nearly a combination of 'Age' and the "
                      "intercept"):  # fmt: skip
        analysis = GeneAnalysis("Trait", covariates=["Age", "months"], resamples=0).fit(frame)
    expected = _t("~ Trait + Age", frame, "Trait")  # R's lm: months aliased, NA
    assert np.allclose(analysis.to_frame()["t"][expected.index], expected, rtol=0, atol=1e-8)
    with pytest.raises(ValueError, match="not of full rank .*'months'"):
        GeneAnalysis("Trait", covariates=["Age", "months"], strict=True, resamples=0).fit(frame)
    frame["copy"] = frame["Trait"] + 1e-10 * rng.normal(size=len(frame))
    with pytest.raises(ValueError, match="'Trait' is nearly collinear with the covariates"):
        GeneAnalysis("Trait", covariates=["copy"], resamples=0).fit(frame)


def test_the_condition_number_is_the_scaled_designs_and_in_the_summary():
    frame = _frame()
    analysis = GeneAnalysis("Trait", covariates=["Age"], resamples=0).fit(frame)
    design = np.column_stack([np.ones(len(frame)), frame["Age"], frame["Trait"]])
    expected = np.linalg.cond(design / np.linalg.norm(design, axis=0))
    assert analysis.condition_number_ == pytest.approx(expected, rel=1e-9)
    assert f"condition number {expected:.3g}" in analysis.summary()


# ---- reasons, counts, figures ----------------------------------------------------------------
def test_to_frame_says_why_a_gene_is_untested():
    frame = _frame()
    frame["stage"] = np.repeat(["I", "II", "IV"], [20, 20, 20])
    frame["G1"] = 5.0
    frame["G2"] = np.where(frame["stage"] == "IV", 3.0, 0.0)  # expressed in one stage only
    analysis = GeneAnalysis("Trait", design="~ Trait + C(stage)", resamples=0).fit(frame)
    table = analysis.to_frame()
    assert table.loc["G1", "untested"] == "constant in the samples fitted"
    assert table.loc["G2", "untested"] == "explained by 'C(stage)[T.IV]' and the intercept"
    assert pd.isna(table.loc["G4", "untested"]) and np.isfinite(table.loc["G4", "t"])


def test_a_contrasts_small_group_warning_counts_its_own_levels():
    frame = _frame(n=40)
    frame["stage"] = ["III"] * 2 + ["I"] * 19 + ["II"] * 19
    with pytest.warns(UserWarning, match="has 2 'III' and 19 'I' sample"):
        GeneAnalysis("stage", contrast=("III", "I"), resamples=0).fit(frame.drop(columns="Trait"))


def test_the_volcano_names_the_design_and_the_coefficient():
    pytest.importorskip("matplotlib")
    frame = _frame()
    analysis = GeneAnalysis("Trait", design="~ Trait + Age + Trait:Age", coef="Trait:Age",
                            resamples=0).fit(frame)  # fmt: skip
    ax = analysis.plot("volcano").axes[0]
    assert "~ Trait + Age + Trait:Age" in ax.get_title().replace("\n", " ")
    assert "coefficient of Trait:Age" in ax.get_xlabel() and "Age" in ax.get_xlabel()


# ---- anndata_to_linked -----------------------------------------------------------------------
def test_anndata_to_linked_refuses_text_and_warns_without_columns():
    anndata = pytest.importorskip("anndata")
    from genotex.core import anndata_to_linked

    frame = _frame()
    obs = frame[["Trait", "Age"]].assign(stage=np.repeat(["I", "II"], 30))
    adata = anndata.AnnData(frame[_genes(frame)].to_numpy(), obs=obs)
    with pytest.raises(ValueError, match="obs column 'stage' holds text \\('I', 'II'\\)"):
        anndata_to_linked(adata, ["Trait", "stage"])
    with pytest.warns(FutureWarning, match="pass columns="):
        linked = anndata_to_linked(adata)  # 0.10's call: every numeric obs column
    assert list(linked.columns[:2]) == ["Trait", "Age"]


# ---- the coefficients an analyst asks for ----------------------------------------------------
def test_an_interaction_is_statsmodels_coefficient_and_the_model_stays_the_traits():
    frame = _frame().drop(columns="score")
    analysis = GeneAnalysis("Trait", design="~ Trait + Age + Trait:Age",
                            coef=["Trait:Age", "Trait"], resamples=0).fit(frame)  # fmt: skip
    assert analysis.coefficients_ == ("Trait:Age", "Trait")
    for term in ("Trait:Age", "Trait"):
        expected = _t("~ Trait + Age + Trait:Age", frame, term)
        got = analysis.to_frame(coef=term)["t"][expected.index]
        assert np.allclose(got, expected, rtol=0, atol=1e-8), term
    assert analysis.to_frame()["p_value"].dropna().is_monotonic_increasing  # by p, not rank
    plain = GeneAnalysis("Trait", design="~ Trait + Age", resamples=0).fit(frame)
    assert analysis.result_.genes == plain.result_.genes  # the Lasso is the trait's
    with pytest.raises(ValueError, match="coef 'Trait:Gender' is not a column of the design"):
        GeneAnalysis("Trait", design="~ Trait + Age", coef="Trait:Gender").fit(frame)


def test_several_contrasts_at_once_are_statsmodels_and_limmas():
    frame = _frame().drop(columns=["Trait", "score"])
    frame["stage"] = np.repeat(["I", "II", "III"], 20)
    frame["G5"] += frame["stage"].map({"I": 0.0, "II": 0.5, "III": 2.0})
    pairs = [("III", "I"), ("II", "I"), ("III", "II")]
    analysis = GeneAnalysis("stage", contrast=pairs, design="~ stage + Age", resamples=0,
                            moderated=True).fit(frame)  # fmt: skip
    assert analysis.coefficients_ == ("III - I", "II - I", "III - II")
    level = "C(stage, Treatment('I'))[T.{}]"
    for gene in ("G5", "G7"):
        fit = smf.ols(f"{gene} ~ C(stage, Treatment('I')) + Age", data=frame).fit()
        expected = {
            "III - I": fit.tvalues[level.format("III")],
            "II - I": fit.tvalues[level.format("II")],
            "III - II": float(fit.t_test(f"{level.format('III')} - {level.format('II')} = 0")
                              .tvalue[0, 0]),
        }  # fmt: skip
        for name, t in expected.items():
            assert analysis.to_frame(coef=name).loc[gene, "t"] == pytest.approx(t, abs=1e-8)
    inmoose = pytest.importorskip("inmoose.limma", reason="the limma extra (InMoose)")
    genes = _genes(frame)
    indicators = {name: (frame["stage"] == name).astype(float) for name in ("III", "II")}
    design = pd.DataFrame({"Intercept": 1.0, **indicators, "Age": frame["Age"]})
    fit = inmoose.lmFit(frame[genes].T, design)
    columns = list(fit.coefficients.columns)
    weights = pd.DataFrame({"a": [0, 1, 0, 0], "b": [0, 0, 1, 0], "c": [0, 1, -1, 0]},
                           index=columns, dtype=float)  # fmt: skip
    moderated = inmoose.eBayes(inmoose.contrasts_fit(fit, contrasts=weights))
    t = pd.DataFrame(np.asarray(moderated.t), index=genes, columns=["a", "b", "c"])
    for name, column in zip(analysis.coefficients_, "abc", strict=True):
        got = analysis.to_frame(coef=name)["t_moderated"][genes]
        assert np.allclose(got, t[column], rtol=0, atol=1e-8), name


def test_a_continuous_trait_gives_slopes_as_statsmodels_and_limma_and_a_regression_cv():
    frame = _frame().drop(columns="Trait")
    analysis = GeneAnalysis("score", covariates=["Age"], continuous=True, resamples=0,
                            moderated=True).fit(frame)  # fmt: skip
    expected = _t("~ score + Age", frame, "score")
    table = analysis.to_frame()
    assert np.allclose(table["t"][expected.index], expected, rtol=0, atol=1e-8)
    inmoose = pytest.importorskip("inmoose.limma", reason="the limma extra (InMoose)")
    genes = _genes(frame)
    design = pd.DataFrame({"Intercept": 1.0, "score": frame["score"], "Age": frame["Age"]})
    limma = inmoose.eBayes(inmoose.lmFit(frame[genes].T, design))
    assert np.allclose(table["t_moderated"][genes], np.asarray(limma.t)[:, 1], rtol=0, atol=1e-8)
    assert set(analysis.result_.cv_performance["prediction"]) >= {"nmse", "r_squared"}
    assert "accuracy" not in analysis.result_.cv_performance["prediction"]
    with pytest.raises(ValueError, match="holds 2 values .*or give continuous=True"):
        GeneAnalysis("Trait", resamples=0).fit(_frame().assign(Trait=lambda f: f["Trait"] + 1))

"""#38 (in part): answers on in-memory data, AnnData in and out, a statistics table of every gene.

Every statistic is checked against statsmodels on the same data, never against
genotex's own output; the in-memory answer against the folder-based one.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from genotex.core import TaskInfo, anndata_to_linked, read_table
from genotex.preprocessing import cohort_anndata, decide
from genotex.regression import (
    GeneAnalysis,
    answer_problem,
    marginal_statistics,
    selection_frequency,
)
from genotex.workflows import write_raw_benchmark

sm = pytest.importorskip("statsmodels.api")
multitest = pytest.importorskip("statsmodels.stats.multitest")


@pytest.fixture(scope="module")
def bench(tmp_path_factory):
    return write_raw_benchmark(tmp_path_factory.mktemp("bench"), recipes=False)


def _data(n=48, m=40, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n).astype(float)
    z = np.column_stack([rng.normal(50, 10, n), rng.integers(0, 2, n)])
    x = rng.normal(8, 1, size=(n, m))
    x[:, 0] += 1.5 * y
    x[:, 1] += 0.05 * z[:, 0]
    x[:, 2] = 3.0  # constant: no test
    return x, y, z


@pytest.mark.parametrize("covariates", [0, 1, 2])
def test_marginal_statistics_are_statsmodels_ols_gene_by_gene(covariates):
    x, y, z = _data()
    z = None if covariates == 0 else z[:, :covariates]
    genes = [f"G{j}" for j in range(x.shape[1])]
    table = marginal_statistics(x, y, genes, z)
    for j in range(x.shape[1]):
        if j == 2:
            assert table.loc["G2"].isna().all()
            continue
        design = sm.add_constant(y.reshape(-1, 1) if z is None else np.column_stack([y, z]))
        fit = sm.OLS(x[:, j], design).fit()
        row = table.loc[genes[j]]
        assert row["effect"] == pytest.approx(fit.params[1], rel=1e-9, abs=1e-12)
        assert row["se"] == pytest.approx(fit.bse[1], rel=1e-9)
        assert row["t"] == pytest.approx(fit.tvalues[1], rel=1e-9)
        assert row["p_value"] == pytest.approx(fit.pvalues[1], rel=1e-7, abs=1e-300)
    tested = table["p_value"].notna()
    expected = multitest.multipletests(table.loc[tested, "p_value"], method="fdr_bh")[1]
    np.testing.assert_allclose(table.loc[tested, "fdr"], expected, rtol=1e-12)


def test_selection_frequency_is_a_seeded_share_that_finds_the_planted_gene():
    x, y, z = _data(n=80, m=60, seed=1)
    first = selection_frequency(x, y, z[:, :1], alpha=0.05, resamples=30, seed=4)
    again = selection_frequency(x, y, z[:, :1], alpha=0.05, resamples=30, seed=4)
    assert np.array_equal(first, again)
    assert ((first >= 0) & (first <= 1)).all() and np.all(first * 30 == np.round(first * 30))
    assert first[0] >= 0.9 and np.median(first) <= 0.2


def test_the_in_memory_answer_is_the_folder_answer(bench):
    task_info = TaskInfo.read(bench.task_info)
    data_dir = bench.reference_output / "preprocess"
    from_folder = answer_problem(data_dir, "Asthma|Gender", task_info, mode="standard")
    cohort = from_folder.cohorts[0]
    linked = _linked(data_dir / "Asthma" / f"{cohort}.csv")
    analysis = GeneAnalysis(
        "Asthma", "Gender", known_genes=task_info.genes_of("Asthma"), resamples=0
    ).fit(linked)
    assert analysis.result_.genes == from_folder.genes
    assert analysis.result_.alpha == from_folder.alpha
    # and from the AnnData of the same cohort: the same answer and the same table
    adata = cohort_anndata(data_dir, "Asthma", cohort)
    again = GeneAnalysis(
        "Asthma", "Gender", known_genes=task_info.genes_of("Asthma"), resamples=0
    ).fit(adata)
    assert again.result_.genes == from_folder.genes
    pd.testing.assert_frame_equal(again.to_frame(), analysis.to_frame())


def _linked(path):
    """A linked CSV as the pipeline reads it (pandas' default float parser may differ by an ulp)."""
    table = read_table(path, features_are_rows=False)
    return pd.DataFrame(table.values, index=table.row_labels, columns=table.column_labels)


def test_the_gene_table_has_every_gene_and_the_selected_ones_ranked(bench):
    data_dir = bench.reference_output / "preprocess"
    linked = _linked(data_dir / "Psoriasis" / "Xena.csv")
    analysis = GeneAnalysis("Psoriasis", covariates=["Age"], resamples=10).fit(linked)
    table = analysis.to_frame()
    genes = [c for c in linked.columns if c not in ("Psoriasis", "Age", "Gender")]
    assert sorted(table.index) == sorted(genes)
    selected = table[table["selected"]]
    assert list(selected.index) == [g for g, _ in analysis.result_.genes]
    assert list(selected["rank"]) == list(range(1, len(selected) + 1))
    assert (table.loc[~table["selected"], "coefficient"] == 0).all()
    assert set(table.columns) >= {"frequency", "effect", "se", "t", "p_value", "fdr"}
    # the marginal numbers are statsmodels' with the same covariate
    gene = selected.index[0]
    design = sm.add_constant(linked[["Psoriasis", "Age"]].to_numpy())
    fit = sm.OLS(linked[gene].to_numpy(), design).fit()
    assert table.loc[gene, "t"] == pytest.approx(fit.tvalues[1], rel=1e-9)


def test_the_anndata_of_a_cohort_holds_its_table_and_where_it_came_from(bench):
    data_dir = bench.reference_output / "preprocess"
    adata = cohort_anndata(data_dir, "Asthma", "GSE100001", input_dir=bench.root / "input")
    linked = _linked(data_dir / "Asthma" / "GSE100001.csv")
    assert adata.shape == (len(linked), linked.shape[1] - 3)
    np.testing.assert_array_equal(adata.X, linked.drop(columns=["Asthma", "Age", "Gender"]))
    np.testing.assert_array_equal(adata.obs["Asthma"], linked["Asthma"])
    assert adata.uns["genotex"]["cohort_info"]["sample_size"] == len(linked)
    assert adata.obs["characteristics_2"].iloc[0] in ("gender: male", "gender: female")
    back = anndata_to_linked(adata, linked.columns[:3])
    pd.testing.assert_frame_equal(back, linked, check_names=False, check_index_type=False)


def test_decide_takes_an_anndata_as_it_takes_the_two_tables(bench):
    data_dir = bench.reference_output / "preprocess"
    adata = cohort_anndata(data_dir, "Asthma", "GSE100001")
    linked = anndata_to_linked(adata, ["Asthma", "Age", "Gender"])
    genes = linked.drop(columns=["Asthma", "Age", "Gender"]).T
    clinical = linked[["Asthma", "Age", "Gender"]].T
    assert (
        decide("Asthma", "GSE100001", adata).record
        == decide("Asthma", "GSE100001", genes, clinical).record
    )


def test_bad_tables_are_one_sentence():
    x, y, _ = _data()
    frame = pd.DataFrame(x, columns=[f"G{j}" for j in range(x.shape[1])]).assign(T=y)
    with pytest.raises(ValueError, match="no trait column 'Asthma'"):
        GeneAnalysis("Asthma").fit(frame)
    with pytest.raises(TypeError, match="DataFrame .* or an AnnData"):
        GeneAnalysis("T").fit(x)
    frame.loc[3, "G5"] = np.nan
    with pytest.raises(ValueError, match="1 gene columns hold missing"):
        GeneAnalysis("T").fit(frame)


def test_the_notebook_guides_gene_table_example_runs_verbatim(tmp_path, monkeypatch):
    import re
    from pathlib import Path

    text = (Path(__file__).resolve().parents[1] / "docs/guides/notebook.md").read_text()
    block = re.search(r"<!-- notebook-genes -->\s*```python\n(.*?)```", text, re.S)
    assert block, "the notebook guide lost its gene-table example"
    monkeypatch.chdir(tmp_path)
    namespace: dict = {}
    exec(compile(block.group(1), "notebook guide genes", "exec"), namespace)  # noqa: S102 - our own documentation
    table, adata = namespace["table"], namespace["adata"]
    assert len(table) == adata.n_vars and table["selected"].any()
    assert {"characteristics_0", "Asthma", "Age", "Gender"} <= set(adata.obs.columns)


def test_the_volcano_and_frequency_plots_draw_the_table(bench):
    adata = cohort_anndata(bench.reference_output / "preprocess", "Asthma", "GSE100001")
    analysis = GeneAnalysis("Asthma", covariates=["Age"], resamples=20).fit(adata)
    table = analysis.to_frame()
    fig = analysis.plot("volcano")
    (ax,) = fig.axes
    others, chosen = ax.collections[:2]
    assert len(chosen.get_offsets()) == int(table["selected"].sum())
    assert len(others.get_offsets()) + len(chosen.get_offsets()) == int(
        table["p_value"].notna().sum()
    )
    named = [t.get_text() for t in ax.texts]
    # the model's genes first, by rank, then the most significant others (issue #61, 7: the
    # model's top gene was left unnamed when the two were interleaved); a label that finds
    # no free place is left out, and the model's genes are placed first
    by_rank = list(table[table["selected"]].sort_values("rank").index)
    by_p = list(table.dropna(subset=["p_value"]).sort_values(["p_value", "rank"]).index)
    assert named[0] == by_rank[0]
    model_named = [g for g in named if g in by_rank]
    assert named[: len(model_named)] == model_named  # no marginal gene before a model gene
    assert model_named == [g for g in by_rank[:12] if g in model_named]
    assert set(named) <= set(by_rank[:12]) | set(by_p[:12]) and len(named) >= 6
    # the dashed line: the largest p-value that statsmodels' BH keeps at 5%
    p = table["p_value"].dropna()
    keep = multitest.multipletests(p, alpha=0.05, method="fdr_bh")[0]
    (line,) = ax.get_lines()
    assert line.get_ydata()[0] == pytest.approx(-np.log10(p[keep].max()))
    bars = analysis.plot("frequency", top=12).axes[0].patches
    top = table.sort_values(["frequency", "rank"], ascending=[False, True]).head(12)
    assert [b.get_width() for b in bars] == list(top["frequency"][::-1])


def test_the_cohort_qc_plot_counts_the_cohorts_samples(bench, tmp_path):
    from genotex.preprocessing import Recipe, cohort_qc_plot, load_synonyms

    root = tmp_path / "with-recipes"
    write_raw_benchmark(root)  # the same seed: the same cohorts, with their recipes
    data_dir = bench.reference_output / "preprocess"
    adata = cohort_anndata(
        data_dir, "Asthma", "GSE100001", input_dir=root / "input",
        recipe=Recipe.read(root / "recipes/Asthma/GSE100001.json"),
        synonyms=load_synonyms(root / "metadata/gene_synonym.json"),
    )  # fmt: skip
    linked = _linked(data_dir / "Asthma" / "GSE100001.csv")
    kept, mapping, balance, _, gender = cohort_qc_plot(adata).axes
    assert [b.get_height() for b in kept.patches] == [len(linked), len(linked)]
    # the series matrix's probe rows, counted from the raw file: every probe maps here
    import gzip

    matrix = gzip.decompress(
        next((root / "input/GEO/Asthma/GSE100001").glob("*matrix*")).read_bytes()
    )
    lines = matrix.decode().splitlines()
    start, end = lines.index("!series_matrix_table_begin"), lines.index("!series_matrix_table_end")
    probes = end - start - 2  # less the header row
    genes = linked.shape[1] - 3
    assert [b.get_height() for b in mapping.patches] == [probes, probes, genes]
    counts = linked["Asthma"].value_counts().sort_index()
    assert [b.get_height() for b in balance.patches] == list(counts)
    sexes = linked["Gender"].value_counts().sort_index()
    assert [b.get_height() for b in gender.patches] == list(sexes)


def test_probes_become_genes_by_sum_or_by_mean_as_worked_by_hand():
    from genotex.preprocessing import map_probes

    expression = pd.DataFrame(
        {"S1": [2.0, 4.0, 6.0, np.nan], "S2": [1.0, 3.0, np.nan, 5.0]},
        index=["p1", "p2", "p3", "p4"],
    )
    gene = {"A": "TP53", "B": "EGFR"}
    pairs = pd.DataFrame(
        {"ID": ["p1", "p2", "p3", "p4"], "Gene": ["TP53", "TP53 /// EGFR", "EGFR", "TP53"]}
    )
    summed = map_probes(expression, pairs)
    # sum: p2 counts half for A and half for B; a missing value counts 0
    assert summed.loc[gene["A"]].tolist() == [2.0 + 4.0 / 2 + 0.0, 1.0 + 3.0 / 2 + 5.0]
    assert summed.loc[gene["B"]].tolist() == [4.0 / 2 + 6.0, 3.0 / 2 + 0.0]
    averaged = map_probes(expression, pairs, aggregation="mean")
    # mean: p2 counts fully for each of its genes; missing values are left out
    assert averaged.loc[gene["A"]].tolist() == [(2.0 + 4.0) / 2, (1.0 + 3.0 + 5.0) / 3]
    assert averaged.loc[gene["B"]].tolist() == [(4.0 + 6.0) / 2, 3.0]
    with pytest.raises(ValueError, match="choose sum or mean"):
        map_probes(expression, pairs, aggregation="median")


def test_gapdh_on_a_log2_array_keeps_its_scale_with_the_mean(shared):
    """#38: GAPDH came out at 72.6 from 6 probes of GSE14520 on GPL96 (a sum of logs)."""
    from genotex.preprocessing import map_probes, probe_gene_pairs, read_series_matrix, read_soft

    real = shared / "data" / "real" / "geo"
    matrix = read_series_matrix(real / "GSE14520" / "GSE14520-GPL571_series_matrix.txt.gz")
    platform = read_soft(real / "platforms" / "GPL96.txt.gz").platform()
    pairs = probe_gene_pairs(platform, gene_column="Gene Symbol")
    probes = platform.loc[platform["Gene Symbol"] == "GAPDH", "ID"]
    values = matrix.expression.loc[[p for p in probes if p in matrix.expression.index]]
    assert len(values) == 6
    averaged = map_probes(matrix.expression, pairs, aggregation="mean").loc["GAPDH"]
    np.testing.assert_allclose(averaged, values.mean(axis=0), rtol=1e-12)
    summed = map_probes(matrix.expression, pairs).loc["GAPDH"]
    np.testing.assert_allclose(summed, values.sum(axis=0), rtol=1e-12)  # one symbol a probe
    assert summed.iloc[0] == pytest.approx(72.629) and averaged.iloc[0] < 16


def test_preprocess_takes_the_aggregation_rule_from_the_library_and_the_cli(bench, tmp_path):
    from click.testing import CliRunner

    from genotex.cli import main

    root = bench.root
    write_raw_benchmark(root, recipes=True)  # the recipes too
    cohort = root / "input/GEO/Asthma/GSE100001"
    outs = {}
    for rule in ("sum", "mean"):
        out = tmp_path / rule
        args = ["preprocess", str(cohort), "--trait", "Asthma", "--recipe",
                str(root / "recipes/Asthma/GSE100001.json"), "--synonyms",
                str(root / "metadata/gene_synonym.json"), "--out", str(out)]  # fmt: skip
        if rule == "mean":
            args += ["--aggregation", "mean"]
        result = CliRunner().invoke(main, args)
        assert result.exit_code == 0, result.output
        outs[rule] = _linked(out / "Asthma" / "gene_data" / "GSE100001.csv")
    differ = (outs["sum"] - outs["mean"]).abs().max(axis=1) > 1e-9
    # the demo's shared probes (` /// `, genes 0-9) and nothing else: those genes have 2 probes
    assert 0 < int(differ.sum()) <= 10
    args = ["preprocess", str(cohort), "--trait", "Asthma", "--aggregation", "median"]
    result = CliRunner().invoke(main, [*args, "--out", str(tmp_path / "x")])
    assert result.exit_code == 2 and "'median' is not one of 'sum', 'mean'" in result.output


def test_regress_csv_writes_every_genes_statistics_beside_the_answers(bench, tmp_path):
    from click.testing import CliRunner

    from genotex.cli import main
    from genotex.regression import load_problem

    data_dir = bench.reference_output / "preprocess"
    out, csv = tmp_path / "regress", tmp_path / "tables"
    result = CliRunner().invoke(
        main,
        ["regress", "--trait", "Asthma", "--condition", "Age", "--data", str(data_dir),
         "--task-info", str(bench.task_info), "--out", str(out), "--mode", "standard",
         "--csv", str(csv), "--frequency-resamples", "10"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    table = pd.read_csv(csv / "Asthma" / "gene_table_condition_Age.csv", index_col=0)
    answer = pd.read_json(out / "Asthma" / "significant_genes_condition_Age.json", typ="series")
    selected = answer["significant_genes"]["Variable"]
    assert list(table.index[: len(selected)]) == selected
    assert list(table.columns[:4]) == ["coefficient", "selected", "rank", "frequency"]
    # the marginal numbers are statsmodels' OLS with Age, on the cohort the answer used
    problem = load_problem(data_dir, genotex_problem("Asthma|Age"), TaskInfo.read(bench.task_info))
    cohort = _linked(data_dir / "Asthma" / f"{problem.cohorts[0]}.csv")
    gene = table.index[len(selected) + 3]  # a gene the model left out
    fit = sm.OLS(
        cohort[gene].to_numpy(), sm.add_constant(cohort[["Asthma", "Age"]].to_numpy())
    ).fit()
    assert table.loc[gene, "t"] == pytest.approx(fit.tvalues[1], rel=1e-9)
    assert table.loc[gene, "coefficient"] == 0 and not table.loc[gene, "selected"]


def genotex_problem(key):
    from genotex.core import ProblemId

    return ProblemId.from_key(key)


def test_a_results_frame_lists_its_genes_and_with_its_data_every_gene(bench):
    from genotex.regression import load_problem

    info = TaskInfo.read(bench.task_info)
    data_dir = bench.reference_output / "preprocess"
    result = answer_problem(data_dir, "Psoriasis|None", info, mode="standard")
    short = result.to_frame()
    assert list(short.index) == [g for g, _ in result.genes]
    assert list(short["rank"]) == list(range(1, len(result.genes) + 1))
    data = load_problem(data_dir, genotex_problem("Psoriasis|None"), info)
    whole = result.to_frame(data, resamples=5)
    assert len(whole) == len(data.genes) and int(whole["selected"].sum()) == len(result.genes)


def test_a_paired_design_takes_each_patients_means_out_as_ols_with_a_dummy_a_patient():
    rng = np.random.default_rng(3)
    patients, genes = 24, 30
    patient = np.repeat([f"P{i:02d}" for i in range(patients)], 2)
    trait = np.tile([0.0, 1.0], patients)
    level = rng.normal(0, 3, size=(patients, genes))  # each patient's own level, large
    x = np.repeat(level, 2, axis=0) + rng.normal(0, 0.5, size=(2 * patients, genes))
    x[:, 0] += 0.8 * trait  # within each pair, the case is 0.8 higher
    frame = pd.DataFrame(x, columns=[f"G{j}" for j in range(genes)])
    frame.insert(0, "Disease", trait)
    frame.insert(1, "patient", patient)
    paired = GeneAnalysis("Disease", groups="patient", resamples=0).fit(frame)
    table = paired.to_frame()
    dummies = pd.get_dummies(pd.Series(patient), drop_first=True, dtype=float).to_numpy()
    design = sm.add_constant(np.column_stack([trait, dummies]))
    for gene in ("G0", "G1", "G7"):
        fit = sm.OLS(frame[gene].to_numpy(), design).fit()
        assert table.loc[gene, "effect"] == pytest.approx(fit.params[1], rel=1e-9)
        assert table.loc[gene, "t"] == pytest.approx(fit.tvalues[1], rel=1e-9)
        assert table.loc[gene, "p_value"] == pytest.approx(fit.pvalues[1], rel=1e-7)
    assert table.loc["G0", "fdr"] < 1e-6 and table.loc["G0", "selected"]
    unpaired = GeneAnalysis("Disease", resamples=0).fit(frame.drop(columns="patient")).to_frame()
    assert unpaired.loc["G0", "p_value"] > table.loc["G0", "p_value"] * 1e3  # the pairing matters
    with pytest.raises(ValueError, match="no groups column 'donor'"):
        GeneAnalysis("Disease", groups="donor").fit(frame)


def test_missing_values_are_handled_in_an_anndata_as_in_its_table(bench):
    from genotex.preprocessing import handle_missing_values

    adata = cohort_anndata(bench.reference_output / "preprocess", "Asthma", "GSE100001")
    adata.X[:5, 0] = np.nan  # five samples lose a gene's value: the gene's mean fills them
    table = anndata_to_linked(adata, ["Asthma", "Age", "Gender"])
    from_anndata = handle_missing_values(adata, "Asthma")
    pd.testing.assert_frame_equal(from_anndata, handle_missing_values(table, "Asthma"))
    gene = adata.var_names[0]
    assert from_anndata[gene].iloc[0] == pytest.approx(np.nanmean(table[gene]))


def test_the_moderated_t_is_limmas_from_inmoose_on_the_same_design():
    limma = pytest.importorskip("inmoose.limma")
    x, y, z = _data(n=30, m=25, seed=5)
    z = z[:, :1]
    frame = pd.DataFrame(x, columns=[f"G{j}" for j in range(x.shape[1])])
    frame = frame.drop(columns="G2").assign(Disease=y, Age=z[:, 0])  # no constant gene here
    table = GeneAnalysis("Disease", covariates=["Age"], moderated=True, resamples=0).fit(frame)
    table = table.to_frame()
    genes = [c for c in frame.columns if c.startswith("G")]
    # limma called directly, with the design as a user writes it (Age first, then the trait)
    design = pd.DataFrame({"Intercept": 1.0, "Age": z[:, 0], "Disease": y})
    fit = limma.eBayes(limma.lmFit(frame[genes].T, design))
    expected = pd.DataFrame(np.asarray(fit.t), index=genes)[2]
    np.testing.assert_allclose(table.loc[genes, "t_moderated"], expected, rtol=1e-9)
    p = pd.DataFrame(np.asarray(fit.p_value), index=genes)[2]
    np.testing.assert_allclose(table.loc[genes, "p_moderated"], p, rtol=1e-9)
    bh = multitest.multipletests(p, method="fdr_bh")[1]
    np.testing.assert_allclose(table.loc[genes, "fdr_moderated"], bh, rtol=1e-9)
    assert (np.sign(table["t_moderated"]) == np.sign(table["t"])).all()


def test_selection_frequency_is_scikit_learns_lasso_on_the_same_halves():
    from sklearn.linear_model import Lasso

    x, y, _ = _data(n=60, m=40, seed=7)
    x = np.delete(x, 2, axis=1)  # no constant gene
    alpha, resamples, seed = 0.08, 12, 3
    frequency = selection_frequency(x, y, None, alpha=alpha, resamples=resamples, seed=seed)
    rng = np.random.default_rng(seed)  # the same halves, drawn the documented way
    counts = np.zeros(x.shape[1])
    for _ in range(resamples):
        rows = np.sort(rng.choice(len(y), size=len(y) // 2, replace=False))
        half = x[rows]
        scaled = (half - half.mean(axis=0)) / half.std(axis=0)
        model = Lasso(alpha=alpha, tol=1e-12, max_iter=100_000).fit(scaled, y[rows])
        counts += np.abs(model.coef_) > 1e-9
    np.testing.assert_array_equal(frequency, counts / resamples)
    assert frequency.max() > 0  # the α selects something


def test_every_figure_says_which_cohort_and_trait_and_a_subset_says_so(bench):
    """#61 item 7: the QC plot had no title, a TCGA cohort was titled "Xena", a subset's
    volcano had the whole cohort's title, and log2 data's effect was "expression units".
    """
    from genotex.preprocessing import cohort_qc_plot

    data_dir = bench.reference_output / "preprocess"
    adata = cohort_anndata(data_dir, "Asthma", "GSE100001")
    assert cohort_qc_plot(adata).get_suptitle() == "Asthma · GSE100001: cohort QC"
    # a Xena cohort as genotex preprocesses it: its folder (the record's note), never "Xena"
    from genotex.preprocessing import preprocess_cohort

    folder = next((bench.root / "input/TCGA").iterdir())
    out = bench.root.parent / "xena-out"
    preprocess_cohort(folder, "Psoriasis", bench.root / "metadata/gene_synonym.json", out)
    xena = cohort_anndata(out, "Psoriasis", "Xena")
    assert cohort_qc_plot(xena).get_suptitle() == f"Psoriasis · {folder.name}: cohort QC"
    whole = GeneAnalysis("Asthma", resamples=0).fit(adata)
    whole_title = whole.plot("volcano").axes[0].get_title().replace("\n", " ")
    assert whole_title.startswith("Asthma · GSE100001 · ~ Asthma") and "subset" not in whole_title
    males = adata[adata.obs["Gender"] == 1.0].copy()
    subset = GeneAnalysis("Asthma", resamples=0).fit(males)
    title = subset.plot("volcano").axes[0].get_title().replace("\n", " ")
    assert f"(subset: {males.n_obs} of {adata.n_obs} samples)" in title
    # the demo's genes are log2-like values (about 4 to 11): the effect is a log2 fold change
    assert float(np.max(adata.X)) <= 30 and float(np.min(adata.X)) >= -30
    assert "log2 fold change" in whole.plot("volcano").axes[0].get_xlabel()
    scaled = adata.copy()
    scaled.X = 2.0**scaled.X  # back to linear intensities, up to about 2,000
    linear = GeneAnalysis("Asthma", resamples=0).fit(scaled)
    assert "expression units" in linear.plot("volcano").axes[0].get_xlabel()

"""The metric definitions of evaluation.md, checked by hand and against independent tools."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import roc_auc_score

from genotex.core import (
    GSEA_UNIVERSE,
    approximate_auroc,
    confusion_scores,
    feature_correlation,
    gene_selection_scores,
    get_metric,
    gsea_enrichment_score,
    jaccard,
    nanmean,
)

genes = st.lists(st.sampled_from([f"G{i}" for i in range(40)]), max_size=30)


def test_confusion_scores_by_hand():
    scores = confusion_scores(tp=3, fp=1, tn=4, fn=2)
    assert scores["precision"] == pytest.approx(75.0)
    assert scores["recall"] == pytest.approx(60.0)
    assert scores["f1"] == pytest.approx(2 * 0.75 * 0.6 / 1.35 * 100)
    assert scores["accuracy"] == pytest.approx(70.0)


def test_confusion_scores_are_zero_where_undefined():
    assert confusion_scores(0, 0, 5, 0) == {
        "precision": 0.0,
        "recall": 0.0,
        "f1": 0.0,
        "accuracy": 100.0,
    }
    assert confusion_scores(0, 0, 0, 0)["accuracy"] == 0.0


def test_jaccard():
    assert jaccard({"a", "b"}, {"b", "c"}) == pytest.approx(1 / 3)
    assert jaccard([], []) == 0.0


def test_gene_selection_counts_duplicates_on_each_side():
    # pred has "A" twice: both entries are hits; ref's "C" is missed
    scores = gene_selection_scores(["A", "A", "B", "X"], ["A", "B", "C"])
    assert scores["precision"] == pytest.approx(75.0)
    assert scores["recall"] == pytest.approx(200 / 3)


@pytest.mark.parametrize(
    ("pred", "ref", "precision", "recall"),
    [([], [], 100.0, 100.0), ([], ["A"], 0.0, 0.0), (["A"], [], 0.0, 0.0)],
)
def test_gene_selection_empty_lists(pred, ref, precision, recall):
    scores = gene_selection_scores(pred, ref)
    assert (scores["precision"], scores["recall"]) == (precision, recall)


def _reference_auroc(pred, ref):
    """The spec's construction, literally, scored by scikit-learn."""
    ref_set = set(ref)
    entries = list(pred) + [g for g in ref_set if g not in set(pred)]
    scores = [len(pred) - i for i in range(len(pred))] + [0] * (len(entries) - len(pred))
    labels = [1 if g in ref_set else 0 for g in entries]
    if len(entries) < GSEA_UNIVERSE:
        scores += [0] * (GSEA_UNIVERSE - len(entries))
        labels += [0] * (GSEA_UNIVERSE - len(entries))
    if len(set(labels)) < 2:
        return math.nan
    return roc_auc_score(labels, scores)


@settings(max_examples=60, deadline=None)
@given(genes, genes)
def test_approximate_auroc_matches_scikit_learn(pred, ref):
    expected = _reference_auroc(pred, ref)
    actual = approximate_auroc(pred, ref)
    if math.isnan(expected):
        assert math.isnan(actual)
    else:
        assert actual == pytest.approx(expected, abs=1e-12)


def test_approximate_auroc_longer_than_the_universe_is_not_padded():
    pred = [f"G{i}" for i in range(GSEA_UNIVERSE + 10)]
    ref = ["G0", "G5", "MISSING"]
    assert approximate_auroc(pred, ref) == pytest.approx(_reference_auroc(pred, ref), abs=1e-12)


def _reference_es(pred, ref):
    if len(pred) > GSEA_UNIVERSE:
        return math.nan
    ranked = list(pred) + [None] * (GSEA_UNIVERSE - len(pred))
    ref_set = set(ref)
    n_hit = sum(1 for g in ranked if g in ref_set)
    n_miss = len(ranked) - n_hit
    if n_hit == 0 or n_miss == 0:
        return math.nan
    running, best = 0.0, -math.inf
    for g in ranked:
        running += 1 / n_hit if g in ref_set else -1 / n_miss
        best = max(best, running)
    return best


@settings(max_examples=40, deadline=None)
@given(genes, genes)
def test_gsea_es_matches_a_literal_running_sum(pred, ref):
    expected, actual = _reference_es(pred, ref), gsea_enrichment_score(pred, ref)
    assert (math.isnan(expected) and math.isnan(actual)) or actual == pytest.approx(
        expected, abs=1e-12
    )


def test_gsea_es_is_one_when_all_hits_come_first():
    assert gsea_enrichment_score(["A", "B"], ["A", "B"]) == pytest.approx(1.0)
    assert math.isnan(gsea_enrichment_score([], ["A"]))


def test_feature_correlation_equals_numpy_pearson_on_complete_data():
    rng = np.random.default_rng(1)
    x = rng.normal(size=(5, 30))
    y = x + rng.normal(scale=0.5, size=x.shape)
    expected = np.mean([np.corrcoef(x[i], y[i])[0, 1] for i in range(5)])
    assert feature_correlation(x, y) == pytest.approx(expected, abs=1e-12)


def test_feature_correlation_fills_nan_with_the_feature_mean_and_skips_constants():
    x = np.array([[1.0, np.nan, 3.0], [5.0, 5.0, 5.0], [np.nan, np.nan, np.nan]])
    y = np.array([[1.0, 2.0, 4.0], [1.0, 2.0, 3.0], [1.0, 2.0, 3.0]])
    # row 0 of x becomes [1, 2, 3]; rows 1 and 2 (constant / all NaN -> 0) do not count
    expected = np.corrcoef([1.0, 2.0, 3.0], [1.0, 2.0, 4.0])[0, 1]
    assert feature_correlation(x, y) == pytest.approx(expected, abs=1e-12)
    assert feature_correlation(x[1:], y[1:]) == 0.0


def test_nanmean_ignores_nan_and_is_nan_when_nothing_is_left():
    assert nanmean([1.0, math.nan, 3.0]) == 2.0
    assert math.isnan(nanmean([math.nan]))


def test_unknown_metric_fails_with_the_known_names():
    assert get_metric("composite_similarity_correlation").label == "CSC"  # the label tables print
    with pytest.raises(KeyError, match="known metrics: .*gsea_es"):
        get_metric("jaccard_index")


@settings(max_examples=40, deadline=None)
@given(genes, genes)
def test_selection_scores_stay_in_range(pred, ref):
    scores = gene_selection_scores(pred, ref)
    assert all(0.0 <= v <= 100.0 for v in scores.values())
    assert scores["f1"] <= max(scores["precision"], scores["recall"]) + 1e-9


@given(st.sets(st.integers(0, 20)), st.sets(st.integers(0, 20)))
def test_jaccard_is_symmetric_and_bounded(a, b):
    assert jaccard(a, b) == jaccard(b, a)
    assert 0.0 <= jaccard(a, b) <= 1.0


def test_the_regression_convention_for_empty_lists_differs_only_on_empty_sides():
    # evaluation.md § 3: an empty side scores 100 against an empty other side
    assert gene_selection_scores([], [])["precision"] == 100.0
    assert gene_selection_scores([], [])["recall"] == 100.0
    # regression.md § 5: nothing selected is precision 0, nothing known is recall 0, always
    strict = gene_selection_scores([], [], empty_matches_empty=False)
    assert strict == {"precision": 0.0, "recall": 0.0, "f1": 0.0}
    assert gene_selection_scores(["A"], [], empty_matches_empty=False)["recall"] == 0.0
    both = [
        gene_selection_scores(["A", "B", "A"], ["A", "C"], empty_matches_empty=flag)
        for flag in (True, False)
    ]
    assert both[0] == both[1]
    assert both[0] == pytest.approx(
        {"precision": 200 / 3, "recall": 50.0, "f1": 400 / 7}
    )  # 2PR/(P+R) by hand


def test_df_f1_is_computed_from_precision_and_recall_as_the_published_evaluator():
    # tp=1, fp=0, fn=4: the evaluator's 2PR/(P+R) and scikit-learn's 2TP/(2TP+FP+FN)
    # differ in the last bit
    precision, recall = 1 / 1, 1 / 5
    assert confusion_scores(1, 0, 0, 4)["f1"] == 2 * precision * recall / (precision + recall) * 100
    assert confusion_scores(1, 0, 0, 4, f1_from_counts=True)["f1"] == 2 / 6 * 100


def test_score_gene_list_refuses_a_bare_string_and_says_why_a_number_is_nan():
    from sklearn.metrics import average_precision_score, roc_auc_score

    from genotex.evaluation import score_gene_list

    with pytest.raises(TypeError, match="not the string 'TP53'"):
        score_gene_list("TP53", ["TP53"])
    none_found = score_gene_list(["A", "B"], ["TP53"])
    assert none_found.f1 == 0 and math.isnan(none_found.gsea_es)
    assert none_found.notes == ("GSEA-ES is NaN: no gene of the list is in the reference",)
    # with a universe, exact AUROC and AP over it, as scikit-learn computes them
    universe = ["A", "B", "C", "D", "TP53", "EGFR"]
    pred, ref = ["TP53", "A", "EGFR"], ["TP53", "EGFR", "D"]
    scored = score_gene_list(pred, ref, universe=universe)
    labels = [gene in ref for gene in universe]
    scores = [len(pred) - pred.index(g) if g in pred else 0 for g in universe]
    assert scored.auroc_exact == pytest.approx(roc_auc_score(labels, scores))
    assert scored.average_precision == pytest.approx(average_precision_score(labels, scores))
    assert 0 <= scored.auroc <= 1 and 0 <= scored.f1 <= 100


def test_feature_correlation_centres_and_scales_exactly_as_numpy():
    """The one-pass centring gives np.std's and np.mean's bits (parity is to 1e-9; this is 0)."""
    from genotex.core._metrics import _centred_and_std

    rng = np.random.default_rng(0)
    for shape in [(50, 7), (3000, 90), (10, 1000)]:
        x = rng.normal(5, 3, size=shape)
        centred, std = _centred_and_std(x)
        assert np.array_equal(std, np.std(x, axis=1))
        assert np.array_equal(centred, x - np.mean(x, axis=1, keepdims=True))

"""The regression pipeline's parts (regression.md), each against an independent formula."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg
import scipy.optimize
from sklearn.linear_model import Lasso
from sklearn.metrics import accuracy_score, f1_score, precision_score, r2_score, recall_score

from genotex.regression import (
    FALLBACK_ALPHA,
    LassoModel,
    LMMModel,
    Residualizer,
    cross_validate,
    detect_batch_effect,
    estimate_log_delta,
    fit_null_model,
    legacy_fold_indices,
    normalize,
    prediction_scores,
    selection_scores,
    significant_genes,
)


def test_folds_reproduce_the_legacy_global_shuffle():
    n = 47
    np.random.seed(42)  # the reference's way
    expected = np.arange(n)
    np.random.shuffle(expected)
    folds = legacy_fold_indices(n)
    size = n // 5
    for i, (train, test) in enumerate(folds):
        np.testing.assert_array_equal(test, expected[i * size : (i + 1) * size])
        np.testing.assert_array_equal(train, np.sort(np.setdiff1d(expected, test)))
    leftover = expected[5 * size :]
    assert all(np.isin(leftover, train).all() for train, _ in folds)


def test_normalize_uses_training_statistics_and_population_std():
    train = np.array([[1.0, 5.0], [3.0, 5.0]])
    test = np.array([[2.0, 7.0]])
    norm_train, norm_test = normalize(train, test)
    np.testing.assert_allclose(
        norm_train, [[-1.0, 0.0], [1.0, 0.0]]
    )  # std 1 (ddof 0); constant column centred
    np.testing.assert_allclose(norm_test, [[0.0, 2.0]])


@pytest.mark.parametrize("order", ["C", "F"])
def test_normalize_gives_the_bits_of_numpy_std(order):
    """The reference z-scores with `(x - x.mean(0)) / np.std(x, 0)`: parity needs the same bits."""
    rng = np.random.default_rng(11)
    x = np.asarray(rng.normal(size=(30, 12)) * 3 + 7, order=order)
    x[:, 4] = 2.5
    for train, test in ((x[:24], x[24:]), (x[:, 0], x[:5, 0])):
        std = np.std(train, axis=0)
        std = np.where(std == 0, 1, std)
        mean = np.mean(train, axis=0)
        got_train, got_test = normalize(train, test)
        assert np.array_equal(got_train, (train - mean) / std)
        assert np.array_equal(got_test, (test - mean) / std)


@pytest.mark.parametrize("order", ["C", "F"])
def test_normalize_of_a_wide_table_gives_the_bits_of_numpy_std_in_place_or_not(order):
    """From 1,024 columns the squares are summed row by row (no copy of the table): NumPy's
    own reduction order, so the bits stay those of `np.std`; `copy=False` centres in place."""
    rng = np.random.default_rng(12)
    x = np.asarray(rng.normal(size=(37, 1500)) * rng.uniform(0.1, 50, 1500) + 3, order=order)
    x[:, 7] = -1.25
    train, test = x[:30], x[30:]
    mean, std = np.mean(train, axis=0), np.std(train, axis=0)
    std = np.where(std == 0, 1, std)
    expected_train, expected_test = (train - mean) / std, (test - mean) / std
    for copy in (True, False):
        owned = train.copy(order="K")
        got_train, got_test = normalize(owned, test, fortran=True, copy=copy)
        assert np.array_equal(got_train, expected_train)
        assert np.array_equal(got_test, expected_test)
        assert got_train.flags.f_contiguous
        assert np.array_equal(owned, train) == copy  # centred in place only without a copy


def test_batch_effect_needs_a_gap_over_200_over_n():
    rng = np.random.default_rng(0)
    n = 300
    homogeneous = rng.normal(size=(n, 50))
    assert not detect_batch_effect(homogeneous)
    batched = homogeneous.copy()
    batched[: n // 2] += 25.0  # two batches: one dominant eigenvalue
    assert detect_batch_effect(batched)
    small = batched[:150]  # n <= 200: the threshold is >= 1, a normalized gap never exceeds it
    assert not detect_batch_effect(small)


def test_residualizer_regresses_out_the_condition_by_least_squares():
    rng = np.random.default_rng(1)
    x = rng.normal(size=(40, 6))
    z = rng.normal(size=40)
    y = 2.0 + 1.5 * z + x[:, 0] + rng.normal(scale=0.1, size=40)
    model = Residualizer(LassoModel(alpha=0.01)).fit(x, y, z)
    beta, *_ = np.linalg.lstsq(np.column_stack([np.ones(40), z]), y, rcond=None)
    np.testing.assert_allclose(model.beta_z_.ravel(), beta, rtol=1e-10)
    lasso = Lasso(alpha=0.01).fit(x, y - np.column_stack([np.ones(40), z]) @ beta)
    np.testing.assert_allclose(model.coef_, lasso.coef_, rtol=1e-8, atol=1e-12)
    assert model.condition_coef_ == pytest.approx(beta[1], rel=1e-10)
    np.testing.assert_allclose(
        model.predict(x, z), lasso.predict(x) + beta[0] + beta[1] * z, rtol=1e-8
    )


def _literal_null_model(x, y):
    """The spec's LMM null model, transcribed step by step (regression.md § 4)."""
    k = x @ x.T
    s, u = scipy.linalg.eigh(k)
    uy = u.T @ y.reshape(-1, 1)
    n = len(y)

    def nll(log_delta, uy, s):
        d = s + np.exp(log_delta)
        variance = np.sum(uy.ravel() ** 2 / d) / n
        return 0.5 * (n * np.log(2 * np.pi) + np.sum(np.log(d)) + n + n * np.log(variance))

    grid = np.linspace(-5, 5, 501)
    values = [nll(g, uy, s) for g in grid]
    best, best_value = grid[int(np.argmin(values))], min(values)
    for i in range(1, 500):
        if values[i] < values[i - 1] and values[i] < values[i + 1]:
            xmin, fval, *_ = scipy.optimize.brent(
                nll, (uy, s), (grid[i - 1], grid[i], grid[i + 1]), full_output=True
            )
            if fval < best_value:
                best, best_value = xmin, fval
    rotated = np.diag((s + np.exp(best)) ** -0.5) @ u.T @ x
    return best, rotated


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_lmm_null_model_matches_a_literal_transcription_of_the_spec(seed):
    rng = np.random.default_rng(seed)
    x, _ = normalize(rng.normal(size=(30, 80)) + np.repeat([[0.0], [2.0]], 15, axis=0))
    y = rng.normal(size=30)
    expected_delta, expected_rotated = _literal_null_model(x, y)
    null = fit_null_model(x, y)
    assert null.log_delta == pytest.approx(expected_delta, abs=1e-6)
    np.testing.assert_allclose(null.rotated_x, expected_rotated, atol=1e-8)
    lmm = LMMModel(alpha=0.05).fit(x, y.reshape(-1, 1))
    lasso = Lasso(alpha=0.05).fit(expected_rotated, y)  # y is NOT rotated
    np.testing.assert_allclose(lmm.coef_, lasso.coef_, atol=1e-7)
    np.testing.assert_allclose(lmm.predict(x), x @ lasso.coef_ + lasso.intercept_, atol=1e-7)


def test_lmm_delta_does_not_depend_on_eigenvector_signs():
    rng = np.random.default_rng(3)
    x = rng.normal(size=(25, 40))
    y = rng.normal(size=25)
    s, u = scipy.linalg.eigh(x @ x.T)
    signs = np.where(rng.random(25) < 0.5, -1.0, 1.0)
    assert (signs < 0).any()
    flipped = u * signs
    expected = estimate_log_delta(s, u.T @ y.reshape(-1, 1))
    assert estimate_log_delta(s, flipped.T @ y.reshape(-1, 1)) == pytest.approx(expected, abs=1e-12)
    assert fit_null_model(x, y).log_delta == pytest.approx(expected, abs=1e-12)


def test_significant_genes_rank_by_absolute_coefficient_ties_in_column_order():
    ranked = significant_genes(np.array([0.0, -2.0, 1.0, 2.0, 0.0]), ["A", "B", "C", "D", "E"])
    assert ranked == [("B", -2.0), ("D", 2.0), ("C", 1.0)]


def test_selection_scores_by_hand():
    scores = selection_scores(["A", "B", "X"], ["A", "B", "C", "D"])
    assert scores["precision"] == pytest.approx(200 / 3)
    assert scores["recall"] == pytest.approx(50.0)
    assert scores["jaccard"] == pytest.approx(40.0)
    assert (
        selection_scores([], ["A"])["precision"] == 0.0
        and selection_scores(["A"], [])["recall"] == 0.0
    )


def test_prediction_scores_agree_with_scikit_learn():
    rng = np.random.default_rng(4)
    truth = rng.integers(0, 2, 40).astype(float)
    predicted = rng.random(40)
    scores = prediction_scores(truth, predicted, binary=True)
    guess, actual = (predicted > 0.5).astype(int), (truth > 0.5).astype(int)
    assert scores["accuracy"] == pytest.approx(accuracy_score(actual, guess) * 100)
    assert scores["precision"] == pytest.approx(
        precision_score(actual, guess, zero_division=0) * 100
    )
    assert scores["recall"] == pytest.approx(recall_score(actual, guess, zero_division=0) * 100)
    assert scores["f1"] == pytest.approx(f1_score(actual, guess, zero_division=0) * 100)
    continuous = prediction_scores(truth + predicted, predicted, binary=False)
    assert continuous["r_squared"] == pytest.approx(r2_score(truth + predicted, predicted))
    assert continuous["nmse"] == pytest.approx(1 - continuous["r_squared"])


def test_cross_validation_falls_back_when_no_alpha_finds_a_known_gene():
    rng = np.random.default_rng(5)
    x = rng.normal(size=(40, 20))
    y = (x[:, 0] > 0).astype(float)
    genes = [f"G{i}" for i in range(20)]
    choice = cross_validate(
        x, y, None, genes, ["NOT_MEASURED"], lmm=False, binary=True, grid=(1e-3, 1e-2)
    )
    assert choice.fallback and choice.alpha == FALLBACK_ALPHA
    found = cross_validate(x, y, None, genes, ["G0"], lmm=False, binary=True, grid=(1e-3, 1e-2))
    assert not found.fallback and found.performance["selection"]["precision"] > 0


def test_models_are_scikit_learn_estimators():
    from sklearn.base import clone

    for model in (LassoModel(alpha=0.3), LMMModel(alpha=0.3)):
        assert model.get_params() == {"alpha": 0.3}
        copy = clone(model)
        assert copy is not model and copy.get_params() == model.get_params()
        assert model.set_params(alpha=0.05).alpha == 0.05
        with pytest.raises(ValueError, match="alpha must be a non-negative number"):
            clone(model).set_params(alpha=-1.0).fit(np.eye(5), np.arange(5.0))
    residualizer = Residualizer(LassoModel(alpha=0.1))
    assert residualizer.get_params()["model__alpha"] == 0.1
    assert clone(residualizer).get_params()["model__alpha"] == 0.1


def test_the_residualizer_fits_a_clone_and_reports_convergence():
    rng = np.random.default_rng(6)
    x = rng.normal(size=(30, 8))
    y = x[:, 1] + rng.normal(scale=0.1, size=30)
    given = LassoModel(alpha=0.01)
    fitted = Residualizer(given).fit(x, y)
    assert not hasattr(given, "coef_")  # never fitted in place
    assert fitted.estimator_ is not given and fitted.condition_coef_ is None
    assert fitted.converged_ and 0 < fitted.n_iter_ < 1000
    reference = Lasso(alpha=0.01).fit(x, y)
    assert fitted.n_iter_ == reference.n_iter_
    np.testing.assert_allclose(fitted.coef_, reference.coef_, rtol=1e-10, atol=1e-14)
    factors = rng.normal(size=(40, 10))  # 300 nearly collinear columns: coordinate descent crawls
    collinear = factors @ rng.normal(size=(10, 300)) + 0.01 * rng.normal(size=(40, 300))
    capped = LassoModel(alpha=1e-5).fit(collinear, rng.normal(size=40))
    assert capped.n_iter_ == 1000 and not capped.converged_  # the cap is recorded, not hidden


def test_cv_f1_is_scikit_learns_to_the_last_bit():
    # 1 true positive, 4 false negatives: 2PR/(P+R) = 0.33333333333333337, 2TP/(2TP+FP+FN) = 1/3
    truth = np.array([1.0, 1.0, 1.0, 1.0, 1.0, 0.0])
    predicted = np.array([0.9, 0.1, 0.1, 0.1, 0.1, 0.1])
    scores = prediction_scores(truth, predicted, binary=True)
    assert scores["f1"] == f1_score(truth > 0.5, predicted > 0.5) * 100  # exactly, as the reference


def test_a_forced_model_says_it_was_forced_in_its_reason(tmp_path):
    """0.8.0 logged "batch effect (eigenvalue gap)" for `--model lmm` when the test found none
    (issue #52, item 11): a model asked for says so; one chosen by the test says why.
    """
    from genotex.core import TaskInfo
    from genotex.regression import answer_problem
    from genotex.workflows import SynthSpec, write_example

    spec = SynthSpec(n_traits=1, n_cohorts=2, samples=(30, 40), n_genes=300, n_related=5)
    example = write_example(tmp_path, spec, seed=3)
    data, info = example.ref_output / "preprocess", example.task_info
    problem = next(iter(TaskInfo.read(info).problems()))
    for model, word in (("lmm", "LMM"), ("lasso", "Lasso")):
        line = answer_problem(data, problem, info, model=model).describe()
        assert f"{word} (forced: model={word.lower()} was asked for" in line, line
    chosen = answer_problem(data, problem, info, model="auto").describe()
    assert "forced" not in chosen and ("no batch effect" in chosen or "eigenvalue gap" in chosen)

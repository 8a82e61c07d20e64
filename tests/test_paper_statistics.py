"""The paper library's statistics pieces (`genotex.agentlib`), each against an independent
computation: scikit-learn's own estimators and scaler, NumPy's least squares, a ranking worked
by hand. The whole assembled fit is checked against the published pipeline's answers in
tests/test_paper_library.py (the correct team writes the baseline's files byte for byte).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.linear_model import Lasso as SkLasso
from sklearn.preprocessing import StandardScaler

import genotex.agentlib as lib


@pytest.fixture
def data():
    rng = np.random.default_rng(3)
    x = rng.normal(2.0, 3.0, size=(40, 12))
    x[:, 5] = 7.0  # a gene with no spread
    z = rng.normal(size=40)
    y = x[:, 0] - 0.5 * x[:, 1] + 2.0 * z + rng.normal(0, 0.1, 40)
    return pd.DataFrame(x, columns=[f"G{i}" for i in range(12)]), y, z


def test_normalize_data_is_a_population_z_score_and_centres_a_flat_column(data):
    x, _, _ = data
    train, test = lib.normalize_data(x.iloc[:30], x.iloc[30:])
    scaler = StandardScaler().fit(x.iloc[:30].to_numpy())  # population std; 0 → scale 1
    np.testing.assert_allclose(train, scaler.transform(x.iloc[:30].to_numpy()), atol=1e-12)
    np.testing.assert_allclose(test, scaler.transform(x.iloc[30:].to_numpy()), atol=1e-12)
    assert lib.normalize_data(x)[1] is None


def test_the_same_matrix_in_either_memory_order_normalizes_to_the_same_bits(data):
    values = data[0].to_numpy()
    c_order = lib.normalize_data(np.ascontiguousarray(values))[0]
    f_order = lib.normalize_data(np.asfortranarray(values))[0]
    assert c_order.tobytes(order="F") == f_order.tobytes(order="F")


def test_the_lasso_is_scikit_learns_and_takes_only_alpha(data):
    x, y, _ = data
    ours = lib.Lasso(alpha=0.05).fit(x.to_numpy(), y)
    theirs = SkLasso(alpha=0.05).fit(x.to_numpy(), y)
    np.testing.assert_allclose(ours.coef_, theirs.coef_, atol=1e-10)
    with pytest.raises(TypeError, match="fit_intercept"):  # the paper's Listing 14 mistake
        lib.Lasso(fit_intercept=False)


def test_residualization_fits_the_model_to_y_less_its_least_squares_on_1_and_z(data):
    x, y, z = data
    normalized = lib.normalize_data(x)[0]
    fitted = lib.ResidualizationRegressor(lib.Lasso, {"alpha": 0.01}).fit(normalized, y, z)
    design = np.column_stack([np.ones(40), z])
    beta = np.linalg.lstsq(design, y, rcond=None)[0]
    theirs = SkLasso(alpha=0.01).fit(normalized, y - design @ beta)
    np.testing.assert_allclose(fitted.get_coefficients(), theirs.coef_, atol=1e-8)
    assert fitted.condition_coef_ == pytest.approx(beta[1], abs=1e-10)
    expected = theirs.predict(normalized) + design @ beta
    np.testing.assert_allclose(fitted.predict(normalized, z), expected, atol=1e-8)


def test_only_the_models_of_the_library_are_constructors():
    with pytest.raises(TypeError, match="Lasso or LMM"):
        lib.ResidualizationRegressor(SkLasso, {"alpha": 0.1})
    with pytest.raises(TypeError, match="unexpected keyword"):
        lib.ResidualizationRegressor(lib.Lasso, {"alpha": 0.1, "fit_intercept": False})


@pytest.mark.parametrize("grid", [[], [-1.0], "0.1", [True]])
def test_a_grid_that_is_no_list_of_penalties_is_refused(data, grid):
    x, y, _ = data
    with pytest.raises(ValueError, match="param_values"):
        lib.tune_hyperparameters(lib.Lasso, grid, x, y, list(x.columns), ["G0"])


def test_the_tuner_returns_the_params_of_the_regressor_and_the_cv_numbers(data):
    x, y, _ = data
    config, performance = lib.tune_hyperparameters(
        lib.Lasso, [1e-3, 1.0, 50.0], x, y, list(x.columns), ["G0", "G1"])  # fmt: skip
    # α = 50 selects nothing; 1e-3 selects nearly every gene; 1 keeps G0 and G1 (the signal,
    # both known): the largest precision
    assert config == {"alpha": 1.0}
    assert set(performance) == {"prediction", "selection"}
    assert performance["selection"]["precision"] == pytest.approx(100.0)  # in percent


def test_a_names_list_that_does_not_match_x_is_refused(data):
    x, y, _ = data
    with pytest.raises(ValueError, match="var_names"):
        lib.tune_hyperparameters(lib.Lasso, [0.1], x, y, ["G0"], ["G0"])


def test_the_ranking_is_by_absolute_coefficient_and_skips_zero_and_non_finite():
    class Fitted:
        coef_ = np.array([0.5, 0.0, -2.0, np.nan, 0.5, np.inf])

    ranked = lib.interpret_result(Fitted(), ["A", "B", "C", "D", "E", "F"])
    assert ranked == [("C", -2.0), ("A", 0.5), ("E", 0.5)]  # ties keep X's order
    with pytest.raises(ValueError, match="var_names"):
        lib.interpret_result(Fitted(), ["A"])


def test_missing_values_are_refused_before_any_fit(data):
    x, y, _ = data
    x = x.copy()
    x.iloc[0, 0] = np.nan
    with pytest.raises(ValueError, match="missing or infinite"):
        lib.normalize_data(x)

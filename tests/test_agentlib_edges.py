"""The agent library on odd values (issue #63, item 4): each returns or refuses in a
sentence, never an OverflowError, a LinAlgError, a megabyte message or a bare NaN token."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from genotex.agentlib import (
    Lasso,
    ResidualizationRegressor,
    geo_select_clinical_features,
    get_unique_values_by_row,
    interpret_result,
    save_result,
)

CHARACTERISTICS = pd.DataFrame(
    [["disease: case", "disease: control", "disease: case"], ["age: 40", "age: 51", "age: x"]],
    columns=["GSM1", "GSM2", "GSM3"],
)


def _trait(cell: str) -> float:
    return 1.0 if cell.endswith("case") else 0.0


def test_a_number_beyond_a_float_is_missing_with_a_note(capsys):
    def age(cell: str) -> object:
        return 10**400 if cell.endswith("x") else int(cell.split(": ")[1])

    table = geo_select_clinical_features(CHARACTERISTICS, "Asthma", 0, _trait, age_row=1,
                                         convert_age=age)  # fmt: skip
    assert table.loc["Age", "GSM1"] == 40.0 and table.loc["Age", "GSM2"] == 51.0
    assert math.isnan(table.loc["Age", "GSM3"])
    said = capsys.readouterr().out
    assert "beyond a float's range for 1 cell(s)" in said and "'age: x'" in said


def test_a_huge_answer_is_clipped_in_the_message():
    with pytest.raises(ValueError) as caught:
        geo_select_clinical_features(CHARACTERISTICS, "Asthma", 0, lambda cell: "y" * 10**7)
    message = str(caught.value)
    assert len(message) < 500 and "(10,000,002 characters)" in message


def test_a_converter_s_own_huge_error_is_clipped():
    def broken(cell: str) -> float:
        raise KeyError("k" * 10**7)

    with pytest.raises(ValueError) as caught:
        geo_select_clinical_features(CHARACTERISTICS, "Asthma", 0, broken)
    message = str(caught.value)
    assert message.startswith("convert for Asthma failed on the cell 'disease: case': KeyError")
    assert len(message) < 500


def test_a_numpy_integer_is_a_row_number_and_a_bool_is_not():
    table = geo_select_clinical_features(CHARACTERISTICS, "Asthma", np.int64(0), _trait)
    assert table.loc["Asthma"].tolist() == [1.0, 0.0, 1.0]
    with pytest.raises(ValueError, match="row True is not a characteristics row"):
        geo_select_clinical_features(CHARACTERISTICS, "Asthma", True, _trait)


@pytest.mark.parametrize(
    "value, error, words",
    [(-1, ValueError, "1 or more, not -1"), (0, ValueError, "1 or more, not 0"),
     (2.5, TypeError, "a whole number, not 2.5"), (True, TypeError, "not True")],
)  # fmt: skip
def test_max_values_is_checked_not_cut_silently(value, error, words):
    with pytest.raises(error, match=words):
        get_unique_values_by_row(CHARACTERISTICS, max_values=value)
    assert get_unique_values_by_row(CHARACTERISTICS, max_values=np.int64(1)) == {
        0: ["disease: case"], 1: ["age: 40"],
    }  # fmt: skip


def test_save_result_refuses_a_nan_coefficient_and_writes_an_undefined_cv_number_null(
    tmp_path,
):
    with pytest.raises(ValueError, match="coefficient of B is not a finite number"):
        save_result(str(tmp_path), "Asthma", None, [("A", 1.0), ("B", math.nan)], {})
    assert not any(tmp_path.rglob("*.json"))
    cv = {"prediction": {"accuracy": 0.5, "f1": math.nan}}
    path = save_result(str(tmp_path), "Asthma", "Age", [("A", 1.0)], cv)
    text = Path(path).read_text()
    assert "NaN" not in text and "Infinity" not in text
    assert json.loads(text)["cv_performance"] == {"prediction": {"accuracy": 0.5, "f1": None}}


def test_a_nan_coefficient_is_never_ranked():
    class Fitted:
        coef_ = np.array([0.5, math.nan, -2.0])

    assert interpret_result(Fitted(), ["A", "B", "C"]) == [("C", -2.0), ("A", 0.5)]


def test_a_missing_condition_value_is_said_not_a_linalg_error():
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=(20, 5)), rng.normal(size=20)
    z = rng.normal(size=(20, 1))
    z[3, 0] = math.nan
    model = ResidualizationRegressor(Lasso, {"alpha": 0.1})
    with pytest.raises(ValueError, match="Z has missing or infinite values: handle them first"):
        model.fit(x, y, z)

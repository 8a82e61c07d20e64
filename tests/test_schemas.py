"""One schema per file format (layout.md): round trips, and the rules that make a file valid."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from genotex.core import (
    CohortInfo,
    CohortRecord,
    MalformedResult,
    ProblemId,
    ResultFile,
    RunStatus,
    StatusError,
    TaskInfo,
    TaskInfoError,
)
from genotex.preprocessing import Recipe, RecipeError

RECIPES = Path(__file__).parent / "recipes"

# layout.md's own examples
COHORT_RECORD = {
    "GSE207847": {
        "is_usable": True,
        "is_gene_available": True,
        "is_trait_available": True,
        "is_available": True,
        "is_biased": False,
        "has_age": False,
        "has_gender": False,
        "sample_size": 60,
        "note": "",
    }
}
RESULT = {
    "significant_genes": {
        "Variable": ["TRIB1", "MTMR14"],
        "Coefficient": [-3.6007, 2.7751],
        "Absolute Coefficient": [3.6007, 2.7751],
    },
    "cv_performance": {
        "prediction": {"accuracy": 85.0, "precision": 80.0, "recall": 90.0, "f1": 84.7},
        "selection": {"precision": 12.0, "recall": 3.0, "f1": 4.8, "jaccard": 2.5},
    },
}


def test_cohort_info_round_trips_layout_md_example(tmp_path):
    info, problems = CohortInfo.from_dict(COHORT_RECORD)
    assert problems == [] and info.to_dict() == COHORT_RECORD
    record = info.records["GSE207847"]
    assert record.is_usable and record.size == 60


def test_cohort_records_written_by_preprocessing_follow_layout_md():
    # is_available = gene and trait; is_usable = available and not biased;
    # the details are null when the cohort is unavailable
    unavailable = CohortRecord.decide("GSE1", gene=True, trait=False, biased=True, size=9)
    assert unavailable.to_dict() == {
        "is_usable": False,
        "is_gene_available": True,
        "is_trait_available": False,
        "is_available": False,
        "is_biased": None,
        "has_age": None,
        "has_gender": None,
        "sample_size": None,
        "note": "",
    }
    biased = CohortRecord.decide("GSE2", gene=True, trait=True, biased=True, age=True, size=9)
    assert biased.is_available and not biased.is_usable and biased.sample_size == 9


def test_cohort_info_reads_leniently_and_says_why():
    data = {"A": {"is_usable": "true", "sample_size": -1}, "B": [1], "C": {"is_usable": True}}
    info, problems = CohortInfo.from_dict(data)
    assert list(info.records) == ["A", "C"]
    assert not info.records["A"].is_usable and info.records["A"].size == 0
    assert len(problems) == 3  # the string flag, the negative size, the record that is a list
    assert CohortInfo.from_dict([])[1] == ["it is not a JSON object of cohort records; read as {}"]


def test_a_result_file_round_trips_and_keeps_what_it_does_not_read(tmp_path):
    with_extras = json.loads(json.dumps(RESULT))
    with_extras["significant_genes"]["p_value"] = [0.01, 0.02]
    with_extras["method"] = {"mode": "reference"}
    result = ResultFile.from_dict(with_extras)
    assert result.genes == ("TRIB1", "MTMR14") and result.complete
    assert result.to_dict() == with_extras
    result.write(tmp_path / "r.json")
    assert ResultFile.read(tmp_path / "r.json") == result
    assert result.cv_number("accuracy") == (85.0, None)


@pytest.mark.parametrize(
    "data",
    [
        [],
        {},
        {"significant_genes": {}},
        {"significant_genes": {"Variable": "TRIB1, MTMR14"}},
        {"significant_genes": {"Variable": [1, 2]}},
        {"significant_genes": {"Variable": ["A", None]}},
    ],
)
def test_what_evaluation_cannot_score_is_malformed(data):
    with pytest.raises(MalformedResult):
        ResultFile.from_dict(data)


def test_a_result_without_coefficients_scores_but_is_not_complete():
    bare = ResultFile.from_dict({"significant_genes": {"Variable": ["A"]}})
    assert bare.genes == ("A",) and not bare.complete  # eval scores it; regress redoes it
    odd = ResultFile.from_dict({"significant_genes": {"Variable": ["A"]}, "cv_performance": [1]})
    assert odd.cv_number("f1") == (0.0, "cv_performance is not an object; f1 read as 0")


def test_run_status_round_trips_the_fixture_schema(tmp_path, shared):
    path = shared / "fixtures" / "regress" / "real" / "expected" / "status.json"
    raw = json.loads(path.read_text())
    status = RunStatus.read(path)
    assert [p.key for p in status.problems] == list(raw)
    counts = status.counts()
    assert counts["ok"] == sum(v["status"] == "ok" for v in raw.values())
    status.write(tmp_path / "status.json")
    again = RunStatus.read(tmp_path / "status.json")
    assert [(p.key, p.outcome.text, p.model) for p in again.problems] == [
        (k, v["status"], v["model"]) for k, v in raw.items()
    ]
    with pytest.raises(StatusError):
        RunStatus.from_dict({"A|None": {"s": 1}})


def test_task_info_round_trips_and_selects_problems(tmp_path):
    data = {
        "B": {"related_genes": ["TP53"], "conditions": ["Age", "A"]},
        "A": {"related_genes": []},
    }
    info = TaskInfo.from_dict(data)
    info.write(tmp_path / "task_info.json")
    again = TaskInfo.read(tmp_path / "task_info.json")
    assert again == info and again.source == tmp_path / "task_info.json"
    assert [p.key for p in info.problems()] == [
        "A|None",
        "B|None",
        "B|Age",
        "B|A",
    ]  # layout.md order
    assert info.select(["B"], "Age") == [ProblemId("B", "Age")]
    assert info.select(["B"], "None") == [ProblemId("B", None)]
    with pytest.raises(TaskInfoError, match="no trait 'C'"):
        info.select(["C"])
    with pytest.raises(TaskInfoError, match="escape"):
        TaskInfo.from_dict({"../x": {"related_genes": []}})


def test_a_recipe_round_trips_through_its_schema(tmp_path):
    recipe = Recipe.read(RECIPES / "Liver_Cancer" / "GSE14520.toml")
    again = Recipe.from_dict(recipe.to_dict())
    assert again == recipe
    recipe.write(tmp_path / "r.json")
    assert Recipe.read(tmp_path / "r.json") == recipe


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"variable": {}}, "unknown fields \\['variable'\\]"),
        ({"trait": "../../etc"}, "escape"),
        ({"cohort": "GSE1/../../x"}, "escape"),
        ({"variables": {"trait": {"row": "6", "numeric": True}}}, "trait.row must be a whole row"),
        (
            {"variables": {"trait": {"row": 0, "rules": [{"match": "a", "value": "1"}]}}},
            "finite number",
        ),
        ({"gene": {"usable": "yes"}}, "gene.usable must be true or false"),
        ({"input": {"matrix": 3}}, "input.matrix must be text"),
    ],
)
def test_a_recipe_with_a_wrong_field_is_refused_naming_it(change, message):
    base = {"trait": "T", "cohort": "GSE1", "variables": {"trait": {"row": 0, "numeric": True}}}
    with pytest.raises(RecipeError, match=message):
        Recipe.from_dict({**base, **change}, source="recipes/T/GSE1.json")


def test_an_outcome_is_read_back_from_its_status_text():
    from genotex.core import Outcome

    for text, kind, reason in [
        ("ok", "ok", ""),
        ("skipped: no usable cohort", "skipped", "no usable cohort"),
        (
            "failed: a.csv: the table has no column 'Asthma'",
            "failed",
            "a.csv: the table has no column 'Asthma'",
        ),
        ("not usable: trait biased", "not usable", "trait biased"),
        ("usable: 80 samples", "usable", "80 samples"),
    ]:
        outcome = Outcome.parse(text)
        assert (outcome.kind, outcome.reason, outcome.text) == (kind, reason, text)
    assert Outcome.parse("failed: unexpected KeyError: 'x'").unexpected
    assert Outcome("failed", "x").failed and not Outcome("ok").failed
    with pytest.raises(ValueError):
        Outcome.parse("done: maybe")
    with pytest.raises(StatusError, match="not a known outcome"):
        RunStatus.from_dict({"A|None": {"s": 1, "status": "weird"}})


def test_a_result_method_is_typed_and_written_back_key_for_key(tmp_path):
    from genotex.core import ReferenceMethod, StandardMethod

    reference = {
        "mode": "reference",
        "model": "Lasso",
        "solver": "scikit-learn Lasso",
        "tolerance": {"scikit_learn_tol": 0.0001, "max_iter": 1000},
        "alpha_grid": {"rule": "absolute", "values": [1e-06, 0.1, 1.0]},
        "select_by": "precision",
        "selection_rule": "highest precision",
        "alpha": 1e-06,
        "diagnostics": {
            "final_iterations": 12,
            "converged": False,
            "final_relative_gap": 0.002,
            "flags": ["alpha_at_grid_edge", "column_order_dependent"],
            "reversed_columns": {"selected": 17, "in_common": 1},
        },
    }
    standard = {
        "mode": "standard",
        "model": "LMM (X, y, 1 and Z rotated)",
        "solver": "homotopy",
        "fallback": {"solver": "cd", "paths": "1 of 6", "reasons": ["singular"]},
        "tolerance": {"duality_gap_over_mean_square_y": 0.0001},
        "alpha_grid": {"rule": "relative", "values": [0.5, 0.05]},
        "select_by": "prediction",
        "selection_rule": "least error",
        "alpha": 0.05,
        "log_delta": -1.5,
        "diagnostics": {
            "final_iterations": 7,
            "final_relative_gap": 1e-15,
            "largest_cv_relative_gap": 2e-15,
            "converged": True,
        },
    }
    for data, cls in ((reference, ReferenceMethod), (standard, StandardMethod)):
        result = ResultFile.from_dict({**json.loads(json.dumps(RESULT)), "method": data})
        method = result.method
        assert isinstance(method, cls) and method.to_dict() == data
        assert json.dumps(method.to_dict()) == json.dumps(data)  # the same keys, in order
        assert method.model_family in ("Lasso", "LMM")
    older = {**reference, "diagnostics": {"final_iterations": 12, "converged": True}}  # 0.4
    read = ResultFile.from_dict({**json.loads(json.dumps(RESULT)), "method": older}).method
    assert isinstance(read, ReferenceMethod) and read.flags == ()
    assert read.final_relative_gap is None and read.warnings() == []
    said = ResultFile.from_dict({**json.loads(json.dumps(RESULT)), "method": reference}).method
    assert isinstance(said, ReferenceMethod) and said.warnings() == [
        "alpha 1e-06 is at the edge of the grid",
        "the selection depends on the genes' column order (reversed, the fit selects 17 "
        "genes, 1 in common)",
    ]
    unknown = {**reference, "diagnostics": {**reference["diagnostics"], "flags": ["made_up"]}}
    unknown_read = ResultFile.from_dict({**json.loads(json.dumps(RESULT)), "method": unknown})
    assert unknown_read.method is None
    broken = {**standard, "diagnostics": {"converged": "yes"}}
    assert ResultFile.from_dict({**json.loads(json.dumps(RESULT)), "method": broken}).method is None


def test_score_rows_are_built_from_the_registry_names():
    from genotex.core import ProblemId
    from genotex.evaluation import ProblemScore

    problem = ProblemId("Asthma", None)
    failed = ProblemScore.failed(problem, "missing")
    assert failed.status == "missing" and failed.f1 == 0.0 and failed.auroc == 0.0
    with pytest.raises(ValueError, match="missing"):
        ProblemScore.from_values(problem, {"success": 100.0, "f1": 50.0})
    with pytest.raises(ValueError, match="unexpected"):
        values = dict.fromkeys(
            ("success", "precision", "recall", "f1", "auroc", "gsea_es", "trait_pred_accuracy"), 1.0
        )
        ProblemScore.from_values(problem, {**values, "trait_pred_f1": 1.0, "f1_typo": 2.0})

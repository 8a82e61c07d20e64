import json

import pytest

from genotex.core import (
    ProblemId,
    TaskInfo,
    TaskInfoError,
    UnsafeNameError,
    category_of,
    check_safe_name,
    condition_from_regress_file,
    load_task_info,
    normalize_trait_name,
    regress_file_name,
)


@pytest.mark.parametrize(
    ("raw", "folder"),
    [
        ("Crohn's Disease", "Crohns_Disease"),
        ("Large B-cell Lymphoma", "Large_B-cell_Lymphoma"),
        ("Sjögrens Syndrome", "Sjögrens_Syndrome"),
        ("Autism spectrum disorder (ASD)", "Autism_spectrum_disorder_(ASD)"),
    ],
)
def test_trait_names_normalize_as_the_layout_says(raw, folder):
    assert normalize_trait_name(raw) == folder


@pytest.mark.parametrize("bad", ["..", "../etc", "a/b", "a\\b", "nul\x00", "", "  ", "a..b"])
def test_names_that_escape_their_folder_are_refused(bad):
    with pytest.raises(UnsafeNameError):
        check_safe_name(bad)


def test_problems_follow_sorted_traits_then_listed_conditions():
    info = TaskInfo.from_dict(
        {
            "Obesity": {"related_genes": ["LEP"], "conditions": ["Gender", "Asthma"]},
            "Asthma": {"related_genes": [], "conditions": ["Age"]},
        }
    )
    assert [p.key for p in info.problems()] == [
        "Asthma|None",
        "Asthma|Age",
        "Obesity|None",
        "Obesity|Gender",
        "Obesity|Asthma",
    ]


@pytest.mark.parametrize(
    ("condition", "category"),
    [
        (None, "Unconditional one-step"),
        ("None", "Unconditional one-step"),
        ("Age", "Conditional one-step"),
        ("gender", "Conditional one-step"),
        ("Obesity", "Two-step"),
    ],
)
def test_category_of_a_condition(condition, category):
    assert category_of(condition) == category


def test_problem_keys_round_trip():
    for problem in (
        ProblemId("A_B", None),
        ProblemId("A", "Age"),
        ProblemId("A", "Type_2_Diabetes"),
    ):
        assert ProblemId.from_key(problem.key) == problem


def test_regress_file_names_round_trip_with_underscored_conditions():
    name = regress_file_name("Type_2_Diabetes")
    assert name == "significant_genes_condition_Type_2_Diabetes.json"
    assert condition_from_regress_file(name) == "Type_2_Diabetes"
    assert condition_from_regress_file("notes.json") is None


@pytest.mark.parametrize(
    "content",
    [
        "not json",
        "[]",
        '{"A": []}',
        '{"A": {"related_genes": "TP53"}}',
        '{"../x": {}}',
        '{"A": {"conditions": ["../B"]}}',
    ],
)
def test_bad_task_info_is_a_clear_error_naming_the_file(tmp_path, content):
    path = tmp_path / "task_info.json"
    path.write_text(content)
    with pytest.raises(TaskInfoError) as info:
        load_task_info(path)
    assert str(path) in str(info.value)


def test_missing_task_info_is_a_clear_error(tmp_path):
    with pytest.raises(TaskInfoError, match="does not exist"):
        load_task_info(tmp_path / "nope.json")


def test_task_info_reads_genes_and_conditions(tmp_path):
    path = tmp_path / "t.json"
    path.write_text(json.dumps({"A": {"related_genes": ["X", "Y"], "conditions": ["Age"]}}))
    info = load_task_info(path)
    assert info.genes_of("A") == ("X", "Y") and info.genes_of("missing") == ()
    assert info.conditions["A"] == ("Age",)

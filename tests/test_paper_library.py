"""The paper library (`genotex.agentlib`, issue #51): what the kernel holds, each function on
hand-derived cases, and scripted teams written against it: the correct team reproduces the
baseline exactly, and each classic mistake costs it on the metric the mistake touches.

The teams' code (tests/paper_team.py) is run here step by step in one namespace per
workflow holding exactly what GenoAgent's kernel holds; test_genoagent.py sends the same code
through the whole harness.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import genotex.agentlib as lib
from genotex.evaluation import evaluate
from genotex.workflows import run_baseline, write_raw_benchmark
from tests.paper_team import CORRECT, kernel_namespace, run_team, run_workflow, with_mistake

#: What a GenoAgent kernel must not be handed: genotex's one-call pipelines and decisions.
DENIED = ("propose_cohort", "preprocess_cohort", "answer_problem", "decide", "geo_gene_table",
          "clinical_features", "inspect_cohort", "analyse", "Recipe", "clinical_table",
          "write_cohort", "choose_gene_column", "choose_age_column", "propose_recipe")  # fmt: skip


# ---- the kernel's namespace ----------------------------------------------------------------
def test_the_kernel_holds_exactly_the_allow_list_and_nothing_of_the_deny_list():
    namespace = kernel_namespace({})
    names = {n for n in namespace if n != "__builtins__"}
    assert names == set(lib.__all__) | set(lib.KERNEL_MODULES)
    assert not names & set(DENIED)
    assert not {"genotex", "preprocessing", "regression"} & names


def test_no_bec_makes_the_library_refuse_the_lmm_and_only_in_that_kernel():
    namespace: dict = {}
    exec(lib.kernel_preamble(allow_lmm=False), namespace)  # noqa: S102
    x = pd.DataFrame(np.eye(6), columns=list("ABCDEF"))
    y = pd.Series([0.0, 1.0] * 3)
    try:
        with pytest.raises(ValueError, match="No BEC"):
            namespace["LMM"](alpha=0.1)
        with pytest.raises(ValueError, match="No BEC"):
            namespace["ResidualizationRegressor"](namespace["LMM"], {"alpha": 0.1})
        with pytest.raises(ValueError, match="No BEC"):
            namespace["tune_hyperparameters"](namespace["LMM"], [0.1], x, y, list(x), ["A"])
        namespace["ResidualizationRegressor"](namespace["Lasso"], {"alpha": 0.1}).fit(x, y)
    finally:
        exec(lib.kernel_preamble(), {})  # noqa: S102 - each kernel says it: a later one allows it
    assert "lmm" not in str(namespace)  # nothing of the switch is left in the namespace


# ---- each function on a case worked by hand -------------------------------------------------
def _characteristics() -> pd.DataFrame:
    return pd.DataFrame(
        [["disease: case", "disease: control", "disease: ?"],
         ["age: 61", "age: 40", np.nan],
         ["sex: F", "sex: M", "sex: M"]],
        columns=["GSM1", "GSM2", "GSM3"],
    )  # fmt: skip


def test_clinical_features_come_from_the_agents_rows_and_converters():
    table = lib.geo_select_clinical_features(
        _characteristics(), "Flu", 0, lambda v: {"case": 1, "control": 0}.get(v.split(": ")[1]),
        age_row=1, convert_age=lambda v: v.split(": ")[1],
        gender_row=2, convert_gender=lambda v: 1 if v.endswith("M") else 0,
    )  # fmt: skip
    assert list(table.index) == ["Flu", "Age", "Gender"]
    assert table.loc["Flu"].tolist()[:2] == [1.0, 0.0] and math.isnan(table.loc["Flu", "GSM3"])
    assert table.loc["Age", "GSM1"] == 61.0 and math.isnan(table.loc["Age", "GSM3"])  # "61" text
    assert table.loc["Gender"].tolist() == [0.0, 1.0, 1.0]


@pytest.mark.parametrize(
    ("convert", "said"),
    [(lambda v: "yes", "returned 'yes' for the cell 'disease: case'"),
     (lambda v: float("inf"), "an infinite value"),
     ("not a function", "must be a function")],
)  # fmt: skip
def test_a_converter_that_answers_no_number_is_one_sentence_naming_the_cell(convert, said):
    with pytest.raises((ValueError, TypeError), match=said):
        lib.geo_select_clinical_features(_characteristics(), "Flu", 0, convert)


def test_a_row_that_is_not_there_is_refused():
    with pytest.raises(ValueError, match=r"row 3 is not a characteristics row \(0 to 2\)"):
        lib.geo_select_clinical_features(_characteristics(), "Flu", 3, float)


def test_tcga_converters_follow_the_barcode_and_the_clinical_words():
    assert [lib.tcga_convert_trait(s) for s in ("TCGA-A-01", "TCGA-A-09", "TCGA-A-11")] == [1, 1, 0]
    assert math.isnan(lib.tcga_convert_trait("TCGA-A-20"))
    assert math.isnan(lib.tcga_convert_trait("TCGA-A-xx"))
    assert lib.tcga_convert_age("65 years") == 65.0 and math.isnan(lib.tcga_convert_age(None))
    assert lib.tcga_convert_gender("FEMALE") == 0.0 and lib.tcga_convert_gender("male") == 1.0
    assert math.isnan(lib.tcga_convert_gender("unknown"))
    clinical = pd.DataFrame({"age_at_x": ["70"], "gender": ["MALE"], "x": ["y"]}, index=["S-01"])
    assert lib.tcga_find_candidate_columns(clinical, ["AGE", "gend"]) == ["age_at_x", "gender"]
    table = lib.tcga_select_clinical_features(clinical, "Cancer", "age_at_x", "gender")
    assert table["S-01"].tolist() == [1.0, 70.0, 1.0]


def test_probe_values_are_split_over_their_symbols_then_summed():
    expression = pd.DataFrame({"S1": [2.0, 4.0, np.nan]}, index=["p1", "p2", "p3"])
    annotation = pd.DataFrame(
        {"ID": ["p1", "p2", "p3"], "Sym": ["TP53 /// BRCA1", "TP53", "BRCA1"]}
    )
    mapping = lib.get_gene_mapping(annotation, "ID", "Sym")
    genes = lib.apply_gene_mapping(expression, mapping)
    # TP53: 2/2 + 4 = 5; BRCA1: 2/2 + missing (0) = 1
    assert genes["S1"].to_dict() == {"BRCA1": 1.0, "TP53": 5.0}
    with pytest.raises(Exception, match="no column 'Symbol'"):
        lib.get_gene_mapping(annotation, "ID", "Symbol")


@pytest.mark.parametrize(("rare", "biased"), [(4, True), (5, False)])
def test_a_trait_is_biased_when_its_rarer_class_is_under_ten_percent_and_five(rare, biased):
    # 4 of 45 is under 10% and under 5 samples: biased; 5 of 45 is not under 5
    linked = pd.DataFrame({"T": [1.0] * rare + [0.0] * (45 - rare), "Gender": [1.0] * 45,
                           "Age": np.arange(45.0), "G1": np.arange(45.0)})  # fmt: skip
    said, kept = lib.judge_and_remove_biased_features(linked, "T")
    assert said is biased
    assert list(kept.columns) == ["T", "Age", "G1"]  # one gender only: Gender removed


def test_the_save_writes_what_the_agent_decided_and_refuses_an_incomplete_decision(tmp_path):
    linked = pd.DataFrame({"T": [0.0, 1.0], "Age": [30.0, 40.0], "G1": [1.0, 2.0]},
                          index=["s1", "s2"])  # fmt: skip
    with pytest.raises(ValueError, match="is_biased must be True or False"):
        lib.validate_and_save_cohort_info(str(tmp_path), "T", "GSE1", is_gene_available=True,
                                          is_trait_available=True, linked_data=linked)  # fmt: skip
    with pytest.raises(ValueError, match="needs its linked_data"):
        lib.validate_and_save_cohort_info(str(tmp_path), "T", "GSE1", is_gene_available=True,
                                          is_trait_available=True, is_biased=False)  # fmt: skip
    assert lib.validate_and_save_cohort_info(
        str(tmp_path), "T", "GSE1", is_gene_available=True, is_trait_available=True,
        is_biased=False, linked_data=linked)  # fmt: skip
    record = json.loads((tmp_path / "T/cohort_info.json").read_text())["GSE1"]
    assert record["is_usable"] and record["sample_size"] == 2
    assert record["has_age"] is True and record["has_gender"] is False
    assert (tmp_path / "T/GSE1.csv").read_text().splitlines()[0] == ",T,Age,G1"
    assert not lib.validate_and_save_cohort_info(
        str(tmp_path), "T", "GSE2", is_gene_available=True, is_trait_available=False,
        note="the trait is constant")  # fmt: skip
    record = json.loads((tmp_path / "T/cohort_info.json").read_text())["GSE2"]
    assert record["is_usable"] is False and record["note"] == "the trait is constant"
    assert not (tmp_path / "T/GSE2.csv").exists()


# ---- scripted teams against the baseline -----------------------------------------------------
@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    """The generated benchmark, the baseline's output on it, and the correct team's."""
    folder = tmp_path_factory.mktemp("paper")
    write_raw_benchmark(folder / "root", recipes=False)
    run_baseline(folder / "root", out=folder / "baseline")
    run_team(CORRECT, folder / "root", folder / "team" / "output")
    return folder


def _report(folder: Path, root: Path):
    return evaluate(folder, root / "reference/output", root / "metadata/task_info.json")


def _files(tree: Path) -> dict[str, object]:
    """Each CSV's bytes and each answer's genes and coefficients (the baseline's answers also
    say by which method they were reached; the team's say nothing of it).
    """
    found: dict[str, object] = {}
    for path in sorted(tree.rglob("*")):
        if path.suffix == ".csv":
            found[str(path.relative_to(tree))] = path.read_bytes()
        elif path.name.startswith("significant_genes"):
            found[str(path.relative_to(tree))] = json.loads(path.read_text())["significant_genes"]
    return found


def test_the_correct_team_writes_the_baselines_files_byte_for_byte(demo):
    ours, theirs = _files(demo / "team/output"), _files(demo / "baseline/output")
    assert ours.keys() == theirs.keys() and len(ours) == 24  # 16 CSVs, 8 answers
    assert [k for k in ours if ours[k] != theirs[k]] == []
    records = {p.parent.name: {c: {k: v for k, v in r.items() if k != "note"} for c, r in
                               json.loads(p.read_text()).items()}
               for p in (demo / "team/output/preprocess").glob("*/cohort_info.json")}  # fmt: skip
    base = {p.parent.name: {c: {k: v for k, v in r.items() if k != "note"} for c, r in
                            json.loads(p.read_text()).items()}
            for p in (demo / "baseline/output/preprocess").glob("*/cohort_info.json")}  # fmt: skip
    assert records == base


def _f1(report) -> dict[str, float]:
    frame = report.to_frame("problem")
    return {
        f"{t}|{c}": f
        for t, c, f in zip(*(frame[k] for k in ("trait", "condition", "f1")), strict=True)
    }


def _preprocessing(report, group: str, metric: str) -> float:
    frame = report.to_frame("average")
    row = frame[(frame["section"] == "preprocessing") & (frame["group"] == group)
                & (frame["metric"] == metric)]  # fmt: skip
    return float(row["average"].iloc[0])


#: What each mistake must cost, worked out by hand from the generated benchmark:
#: (the problems whose F1 drops, the preprocessing (group, metric) that drops or None).
#: - the trait from the gender row converts to nothing: no GEO cohort is usable, so every
#:   Asthma and Obesity problem (GEO only) has no answer and Psoriasis falls back on TCGA;
#: - gender inverted flips a covariate's sign: the residual of Y on [1, Z] is the same, so
#:   no F1 moves, but the clinical Gender rows correlate -1 with the truth's;
#: - age from the gender row leaves Age all missing: Age is dropped, the GEO cohorts lose
#:   has_age, so Asthma|Age has no cohort and Psoriasis|Age falls back on TCGA;
#: - probe IDs are no symbols: the GEO gene tables are empty and nothing of them is usable.
EXPECTED_LOSS = {
    "trait from the wrong row": ({"Asthma|None", "Asthma|Age", "Asthma|Gender", "Asthma|Obesity",
                                  "Obesity|None", "Obesity|Gender", "Psoriasis|None",
                                  "Psoriasis|Age"}, ("clinical", "feature_correlation")),
    "gender inverted": (set(), ("clinical", "feature_correlation")),
    "age from the wrong row": ({"Asthma|Age", "Psoriasis|Age"}, ("linked", "attributes_jaccard")),
    "probes left unmapped": ({"Asthma|None", "Asthma|Age", "Asthma|Gender", "Asthma|Obesity",
                              "Obesity|None", "Obesity|Gender", "Psoriasis|None",
                              "Psoriasis|Age"}, ("gene", "feature_correlation")),
}  # fmt: skip


@pytest.mark.parametrize("mistake", sorted(EXPECTED_LOSS))
def test_each_classic_mistake_costs_exactly_the_metrics_it_touches(demo, tmp_path, mistake):
    root = demo / "root"
    run_team(with_mistake(mistake), root, tmp_path / "output")
    correct, wrong = _report(demo / "team/output", root), _report(tmp_path / "output", root)
    dropped, (group, metric) = EXPECTED_LOSS[mistake]
    right_f1, wrong_f1 = _f1(correct), _f1(wrong)
    assert {p for p in right_f1 if wrong_f1[p] < right_f1[p]} == dropped
    assert all(wrong_f1[p] == right_f1[p] for p in right_f1 if p not in dropped)
    assert _preprocessing(wrong, group, metric) < _preprocessing(correct, group, metric) == 1.0


@pytest.fixture(scope="module")
def batched(tmp_path_factory):
    """A problem whose cohort holds two batches (240 samples: the eigen-gap test fires), and
    its reference: the published pipeline's answer, which fits the LMM there.
    """
    from genotex.regression import answer_problem, write_result

    folder = tmp_path_factory.mktemp("batched")
    rng = np.random.default_rng(0)
    x = rng.normal(size=(240, 150))
    x[:120] += rng.normal(0, 3, 150)  # two batches
    y = (x[:, :5] @ np.array([1.0, -1.0, 0.8, 0.6, -0.7]) + rng.normal(size=240) > 0) * 1.0
    linked = pd.DataFrame(x, columns=[f"GENE{i}" for i in range(150)],
                          index=[f"GSM{i}" for i in range(240)])  # fmt: skip
    linked.insert(0, "Flu", y)
    for tree in ("ref", "team", "lasso"):
        lib.validate_and_save_cohort_info(
            str(folder / tree / "output/preprocess"), "Flu", "GSE1", is_gene_available=True,
            is_trait_available=True, is_biased=False, linked_data=linked)  # fmt: skip
    info = folder / "task_info.json"
    info.write_text(json.dumps({"Flu": {"related_genes": [f"GENE{i}" for i in range(5)],
                                        "conditions": []}}))  # fmt: skip
    result = answer_problem(folder / "ref/output/preprocess", "Flu|None", info)
    assert result.model == "LMM"  # the reference's batch-effect test chose the LMM
    write_result(folder / "ref/output/regress", result)
    return folder


def test_an_lmm_problem_fitted_as_a_lasso_scores_below_the_team_that_tested_for_batches(batched):
    def run(tree: str, code: dict[str, str]) -> float:
        names = {"TRAIT": "Flu", "CONDITION": None, "MODEL": "auto",
                 "DATA_DIR": str(batched / tree / "output/preprocess"),
                 "TASK_INFO_FILE": str(batched / "task_info.json"),
                 "OUT_DIR": str(batched / tree / "output/regress")}  # fmt: skip
        assert run_workflow(code, {"unconditional": ""}, names) == []
        report = evaluate(batched / tree / "output", batched / "ref/output",
                          batched / "task_info.json")  # fmt: skip
        return _f1(report)["Flu|None"]

    assert run("team", CORRECT) == 100.0  # the batch test, then the LMM: the reference's answer
    assert run("lasso", with_mistake("an LMM problem fitted as a Lasso")) < 100.0


#: Where `genotex diagnose` must put each mistake (by hand: what each one leaves in the files):
#: (error class, a phrase of its message).
EXPECTED_DIAGNOSIS = {
    "trait from the wrong row": ("cohort_usability", "trait no vs yes"),  # unusable cohorts
    "gender inverted": ("gender_inverted", "Gender"),  # the one stage it touches
    "age from the wrong row": ("selection", "Asthma|Age answered from no cohort"),
    "probes left unmapped": ("cohort_usability", "absent, the reference's is usable"),
}


@pytest.mark.parametrize("mistake", sorted(EXPECTED_DIAGNOSIS))
def test_diagnose_names_each_mistake_where_it_was_made(demo, tmp_path, mistake):
    from genotex.workflows import diagnose

    root = demo / "root"
    run_team(with_mistake(mistake), root, tmp_path / "output")
    found = diagnose(tmp_path / "output", root / "reference/output",
                     root / "metadata/task_info.json")  # fmt: skip
    error_class, phrase = EXPECTED_DIAGNOSIS[mistake]
    assert [f for f in found.findings if f.error_class == error_class and phrase in f.message]
    correct = diagnose(demo / "team/output", root / "reference/output",
                       root / "metadata/task_info.json")  # fmt: skip
    assert not [f for f in correct.findings if f.error_class == error_class]

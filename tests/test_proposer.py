"""The recipe proposer: its rules on hand-made rows, its files, its CLI and the baseline.

Expected values are derived by hand from the rows (what an analyst would
decide), from the shared labelled records with the shared scorer, or from
the generated benchmark's known truth.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pandas as pd
import pytest
from click.testing import CliRunner

from genotex.cli import main
from genotex.preprocessing import (
    PROPOSED_MARK,
    Recipe,
    apply_variable,
    gene_availability,
    is_proposed,
    propose_recipe,
    propose_records,
    trait_terms,
)
from genotex.preprocessing._proposer._rules import trait_map

BACKGROUND = '!Series_title\t"Expression profiling of lung tissue"'


def _choice(characteristics, trait="Asthma", background=BACKGROUND, name="trait"):
    return propose_recipe(characteristics, background, trait).choices[name]


def test_gender_tests_female_before_male_and_reads_coded_keys():
    words = _choice({0: ["sex: Female", "sex: male", "sex: unknown"]}, name="Gender")
    assert words.row == 0
    assert words.values == {"sex: Female": 0.0, "sex: male": 1.0, "sex: unknown": None}
    letters = _choice({0: ["tissue: lung"], 1: ["gender: F", "gender: M"]}, name="Gender")
    assert letters.row == 1 and letters.values == {"gender: F": 0.0, "gender: M": 1.0}
    coded = _choice({0: ["sex (female=1, male=0): 1", "sex (female=1, male=0): 0"]}, name="Gender")
    assert coded.values == {"sex (female=1, male=0): 1": 0.0, "sex (female=1, male=0): 0": 1.0}
    # one sex for everyone is no variable (preprocessing could not use it)
    assert _choice({0: ["gender: female"]}, name="Gender").row is None


def test_age_converts_units_and_ignores_other_variables_in_a_mixed_row():
    age = _choice({0: ["age: 6 months", "age: 25y", "age: --", "Sex: Male"]}, name="Age")
    assert age.row == 0
    assert age.values == {
        "age: 6 months": 0.5,
        "age: 25y": 25.0,
        "age: --": None,
        "Sex: Male": None,
    }
    assert _choice({0: ["age: 12 weeks"]}, name="Age").row is None  # one age: no variable
    onset = {0: ["age at onset: 20", "age at onset: 31"], 1: ["age: 40", "age: 52"]}
    assert _choice(onset, name="Age").row == 1  # the age at sampling, not at onset
    agents = {0: ["agent: DMSO", "agent: SY-1365", "agent: NVP2"], 1: ["time: 2 hours"]}
    assert _choice(agents, name="Age").row is None  # "agent" is not an age key
    assert _choice({0: ["agebaseline: 41", "agebaseline: 63"]}, name="Age").row == 0
    mixed = {  # keys spill over rows when samples carry different characteristics
        3: ["age: 56", "Sex: Male", "age: 20", "age: 51", "age: 37", "age: 61"],
        4: [None, "age: 63", "age: 74"],
    }
    assert _choice(mixed, name="Age").row == 3  # the row with more ages covers more samples
    odd = _choice({0: ["age: 41", "age: -3", "age: 1365", "age: 1365 days"]}, name="Age")
    assert odd.values == {"age: 41": 41.0, "age: -3": None, "age: 1365": None,
                          "age: 1365 days": pytest.approx(1365 / 365.25)}  # fmt: skip


def test_age_groups_ranges_and_bounds_follow_the_stated_rule():
    groups = _choice({0: ["age group: Frail", "age group: Older", "age group: Young"]}, name="Age")
    assert groups.row == 0 and not groups.numeric
    assert groups.values == {
        "age group: Frail": 1.0,
        "age group: Older": 1.0,
        "age group: Young": 0.0,
    }
    cells = ["age: <10", "age: 40-49", "age: 80+", "age: 6-12 months", "age: 6 TO 18 MONTHS"]
    bins = _choice({0: cells}, name="Age")
    # a range is its middle, "<x" half its bound, "x+" its bound; the unit applies to both ends
    assert bins.values == {
        "age: <10": 5.0,
        "age: 40-49": 44.5,
        "age: 80+": 80.0,
        "age: 6-12 months": 0.75,
        "age: 6 TO 18 MONTHS": 1.0,  # (0.5 + 1.5) / 2, in any case
    }
    assert not bins.numeric  # preprocess must use these per-value numbers, not parse the text
    assert _choice({0: ["age group: adult"]}, name="Age").row is None  # one group: no variable


def test_abbreviations_are_those_the_background_defines_as_the_trait():
    sjogren = trait_terms("Sjögrens_Syndrome", "Primary Sjögren’s syndrome (pSS) is autoimmune")
    assert "pss" in sjogren.abbreviations and sjogren.strength("pSS")[0] == 3
    cf = trait_terms(
        "Cystic_Fibrosis",
        "cystic fibrosis (CF) is caused by the cystic fibrosis transmembrane conductance "
        "regulator (CFTR)",
    )
    assert "cf" in cf.abbreviations and "cftr" not in cf.abbreviations  # a gene, not the disease
    either = trait_terms(
        "Pheochromocytoma_and_Paraganglioma", "pheochromocytoma (PHEO) and paraganglioma (PGL)"
    )
    assert {"pheo", "pgl"} <= set(either.abbreviations)  # either side of "X and Y" is the trait
    assert (
        "dlbcl"
        in trait_terms(
            "Large_B-cell_Lymphoma", "diffuse large B-cell lymphoma (DLBCL)"
        ).abbreviations
    )
    assert "cld" not in trait_terms("Liver_cirrhosis", "chronic liver disease (CLD)").abbreviations


def test_common_disease_abbreviations_name_the_trait_they_stand_for():
    assert trait_terms("Liver_Cancer").strength("disease: HCC")[0] == 3  # hepatocellular carcinoma
    assert trait_terms("Kidney_Clear_Cell_Carcinoma").strength("ccRCC")[0] == 3
    assert trait_terms("Schizophrenia").strength("disease state: SCZ")[0] == 3
    # every word of the name must be named, generic words and numbers too
    assert trait_terms("Acute_Myeloid_Leukemia").strength("CML")[0] == 0  # chronic
    assert trait_terms("Type_2_Diabetes").strength("T1D")[0] == 0
    assert trait_terms("Liver_Cancer").strength("NASH")[0] == 0  # a liver disease, not cancer
    assert trait_terms("Hepatitis").strength("NASH")[0] == 3  # steatohepatitis
    assert trait_terms("Stroke").strength("the sample is from a man")[0] == 0  # no "IS"


def test_the_glossary_holds_abbreviation_rows_only():
    from importlib import resources

    from genotex.preprocessing._proposer._vocabulary import _glossary

    tsv = resources.files("genotex.preprocessing._proposer").joinpath("data", "abbreviations.tsv")
    text = tsv.read_text("utf-8")
    data = [line for line in text.splitlines() if not line.startswith("#")][1:]  # the header
    rows = _glossary()
    assert len(rows) == len(data) and ("abbreviation", ["long", "form"]) not in rows
    assert all(short and long for short, long in rows)
    assert len({(short, tuple(long)) for short, long in rows}) == len(rows)  # no repeated row


def test_an_abbreviation_is_a_whole_word_not_the_start_of_a_marker():
    celiac = trait_terms("Celiac_Disease")
    assert "cd" in celiac.abbreviations  # the initials of the name
    assert celiac.strength("diagnosis: CD")[0] == 3
    assert celiac.strength("cell type: KIR+ CD8 T")[0] == 0  # a T-cell marker, not the disease
    assert trait_terms("Acute_Myeloid_Leukemia").strength("fusion: AML1-ETO")[0] == 0  # RUNX1


def test_trait_terms_come_from_the_name_and_the_background():
    terms = trait_terms(
        "Chronic_obstructive_pulmonary_disease",
        "patients with chronic obstructive pulmonary disease (COPD) and smokers",
    )
    assert "copd" in terms.abbreviations
    assert terms.strength("disease state: COPD stage II")[0] == 3
    assert trait_terms("Irritable_bowel_syndrome_(IBS)").strength("IBS-D")[0] == 3
    assert trait_terms("Acute_Myeloid_Leukemia").strength("acute myeloid leukaemia")[0] == 3
    assert trait_terms("HIV_Resistance").strength("partially resistant")[0] == 2  # -ance: -ant
    adrenal = trait_terms("Adrenocortical_Cancer")  # a compound written as two words
    assert adrenal.strength("disease state: Adrenal Cortical Adenoma")[0] == 2
    assert adrenal.strength("adrenal medulla")[0] == 0 and adrenal.strength("cortical")[0] == 0


def test_the_trait_row_maps_controls_to_0_and_the_trait_to_1():
    rows = {
        0: ["tissue: lung"],
        1: ["disease state: healthy control", "disease state: asthma", "disease state: n/a"],
        2: ["individual: p1", "individual: p2", "individual: p3"],
    }
    trait = _choice(rows)
    assert trait.row == 1
    assert trait.values == {
        "disease state: healthy control": 0.0,
        "disease state: asthma": 1.0,
        "disease state: n/a": None,
    }
    negated = _choice(
        {0: ["group: Endometriosis", "group: Non-Endometriosis"]}, trait="Endometriosis"
    )
    assert negated.values == {"group: Endometriosis": 1.0, "group: Non-Endometriosis": 0.0}
    yes_no = _choice({0: ["hypothyroidism: Y", "hypothyroidism: N"]}, trait="Hypothyroidism")
    assert yes_no.values == {"hypothyroidism: Y": 1.0, "hypothyroidism: N": 0.0}
    cells = ["group: IRF4WT 6hrs", "group: IRF4C99R 6hrs", "group: Control 6hrs"]
    mutant = trait_map(cells, trait_terms("X-Linked_Lymphoproliferative_Syndrome"))[0]
    assert mutant == {cells[0]: 0.0, cells[1]: 1.0, cells[2]: 0.0}  # the gene's wild type: 0
    from genotex.preprocessing._proposer._vocabulary import CONTROL

    # a normal karyotype is the control of a trisomy, as a wild type is of a mutation
    assert CONTROL.search("Euploid") and CONTROL.search("disomic clone")
    assert not CONTROL.search("aneuploid") and not CONTROL.search("T21")


def test_a_value_naming_fewer_of_the_traits_words_is_another_subtype():
    """Papillary kidney cancer: 'papillary renal cell carcinoma' names papillary and renal
    (kidney); 'clear cell renal cell carcinoma' names only renal: another kidney cancer -> 0."""
    cells = [
        "diagnosis: papillary renal cell carcinoma",
        "diagnosis: clear cell renal cell carcinoma",
        "diagnosis: normal kidney",
    ]
    choice = _choice({0: cells}, trait="Kidney_Papillary_Cell_Carcinoma", background="")
    assert choice.row == 0
    assert choice.values == dict(zip(cells, [1.0, 0.0, 0.0], strict=True))
    lung = ["histology: lung adenocarcinoma", "histology: squamous cell lung carcinoma"]
    both = _choice({0: lung}, trait="Lung_Cancer", background="")  # equally named: both 1
    assert both.values == dict.fromkeys(lung, 1.0)


def test_a_value_naming_more_of_the_traits_words_wins_generic_words_included():
    """Adrenocortical cancer: 'adrenocortical carcinoma' names the organ and the cancer,
    'adrenocortical adenoma' only the organ: a benign tumour of the same organ -> 0."""
    cells = ["histology: adrenocortical carcinoma", "histology: adrenocortical adenoma"]
    choice = _choice({0: cells}, trait="Adrenocortical_Cancer", background="")
    assert choice.values == dict(zip(cells, [1.0, 0.0], strict=True))


def test_cells_of_other_keys_in_the_trait_row_are_missing():
    cells = [
        "anxiety case/control: case",
        "gad7 score: 7",
        "anxiety case/control: control",
        "hybridization batch: Z",
    ]
    choice = _choice({0: cells}, trait="Generalized_Anxiety_Disorder", background="")
    assert choice.row == 0
    assert choice.values == dict(zip(cells, [1.0, None, 0.0, None], strict=True))


def test_a_pair_naming_no_trait_maps_its_negative_side_to_0():
    def pair(cells):
        return trait_map(cells, trait_terms("Large_B-cell_Lymphoma"))[0]

    # "early" is a mild negative word, "remission" a strong one: the strong one decides
    assert pair(["response: remission", "response: Early failure"]) == {
        "response: remission": 0.0,
        "response: Early failure": 1.0,
    }
    assert pair(["cluster: 2", "cluster: 1"]) == {"cluster: 2": 1.0, "cluster: 1": 0.0}
    assert pair(["lesion: LS", "lesion: NL"]) == {"lesion: LS": 1.0, "lesion: NL": 0.0}
    assert pair(["type: healthy_control", "type: patchy"]) == {
        "type: healthy_control": 0.0,
        "type: patchy": 1.0,
    }


def test_a_series_without_gene_expression_has_no_rows():
    rows = {0: ["disease state: control", "disease state: asthma"], 1: ["gender: F", "gender: M"]}
    methylation = '!Series_title\t"DNA methylation profiling of asthma"'
    proposal = propose_recipe(rows, methylation, "Asthma")
    assert proposal.gene_available is False
    assert all(choice.row is None for choice in proposal.choices.values())
    assert propose_recipe(rows, BACKGROUND, "Asthma").choices["trait"].row == 0


def test_a_row_setting_the_trait_against_controls_beats_a_row_of_one_value():
    """GSE14520's rows: the disease row names the trait (its abbreviation, defined in the
    title) for every sample; the tissue row sets tumours against non-tumour and healthy
    tissue, which is what an analysis can use."""
    rows = {
        0: [
            "tissue: Liver Tumor Tissue",
            "tissue: Liver Non-Tumor Tissue",
            "tissue: Liver tissue of six healthy donors",
        ],
        1: ["disease state: Hepatocellular carcinoma (HCC)"],
        2: [f"individual: 0{i}-407A" for i in range(9)],
    }
    title = '!Series_title\t"Gene expression data of human hepatocellular carcinoma (HCC)"'
    choice = _choice(rows, trait="Liver_Cancer", background=title)
    assert choice.row == 0
    assert list(choice.values.values()) == [1.0, 0.0, 0.0]


def test_a_pair_of_outcomes_beats_a_row_of_one_value():
    """GSE156309's rows: every sample is DLBCL; the outcome row, one side of which says it is
    free of the event, is the contrast an analysis can use."""
    rows = {
        0: ["tissue: lymph node"],
        1: ["disease: Diffuse large B-cell lymphoma (DLBCL)"],
        2: ["disease status: relapse-free", "disease status: relapse"],
        3: ["time: 2 hours", "time: 6 hours"],  # a pair without a negative side
    }
    choice = _choice(rows, trait="Large_B-cell_Lymphoma")
    assert choice.row == 2
    assert choice.values == {"disease status: relapse-free": 0.0, "disease status: relapse": 1.0}
    rows.pop(2)
    assert _choice(rows, trait="Large_B-cell_Lymphoma").row == 1


def test_no_trait_row_when_nothing_names_or_groups_the_trait():
    rows = {0: ["cell line: HeLa"], 1: ["time: 2h", "time: 6h"], 2: ["batch: 1", "batch: 2"]}
    assert _choice(rows, trait="Asthma").row is None


def test_a_measurement_is_never_the_trait_row_even_under_a_disease_word():
    from genotex.preprocessing._proposer._rules import rule_score

    terms = trait_terms("Breast_Cancer")
    size = ["tumor size(cm): 1.6", "tumor size(cm): 2.8/2.6", "tumor size(cm): 6.5"]
    assert rule_score(2, size, terms) is None
    assert rule_score(1, ["tumor type: IDC", "tumor type: IDC/ILC"], terms) is not None
    assert rule_score(0, ["breast cancer size: 1", "breast cancer size: 2"], terms) is not None


def test_gene_availability_reads_the_title_and_the_organism():
    assert gene_availability(BACKGROUND, {})[0] is True
    mirna = '!Series_title\t"MicroRNA profiling of serum"'
    assert gene_availability(mirna, {})[0] is False
    both = '!Series_title\t"mRNA and microRNA expression in blood"'
    assert gene_availability(both, {})[0] is True
    assert gene_availability(BACKGROUND, {0: ["strain: C57BL/6"]})[0] is False


def test_a_series_of_one_cell_line_where_nothing_varies_is_not_usable():
    assert gene_availability(BACKGROUND, {0: ["cell line: SW-13"]})[0] is False
    assert gene_availability(BACKGROUND, {0: ["Cell Line: HeLa"], 1: ["time: 0h"]})[0] is False
    treated = {0: ["cell line: SW-13"], 1: ["agent: DMSO", "agent: EZH2 inhibitor"]}
    assert gene_availability(BACKGROUND, treated)[0] is True
    assert gene_availability(BACKGROUND, {0: ["tissue: peripheral blood"]})[0] is True
    assert gene_availability(BACKGROUND, {0: ["cell type: 41 ovarian cell lines"]})[0] is True


def test_the_recipe_reproduces_the_record_maps():
    rows = {
        0: ["disease state: control", "disease state: asthma"],
        1: ["age: 40", "age: 6 months"],
        2: ["gender: female", "gender: male"],
    }
    proposal = propose_recipe(rows, BACKGROUND, "Asthma")
    recipe = proposal.recipe()
    record = proposal.record()
    table = pd.DataFrame([[rows[r][0], rows[r][1]] for r in range(3)], columns=["GSM1", "GSM2"])
    for name in ("trait", "Age", "Gender"):
        values = apply_variable(table, recipe.variables[name])
        expected = record[f"{name.lower()}_map"]
        assert [expected[c] for c in table.iloc[record[f"{name.lower()}_row"]]] == list(values)


def test_records_never_fail_and_keep_the_order(tmp_path):
    good = {"trait": "Asthma", "cohort": "GSE1", "background": BACKGROUND,
            "characteristics": {"0": ["disease: asthma", "disease: control"]}}  # fmt: skip
    lines = [json.dumps(good), "not json", json.dumps([1, 2]), "", json.dumps({"trait": "X"})]
    src = tmp_path / "in.jsonl"
    src.write_text("\n".join(lines) + "\n")
    summary = propose_records(src, tmp_path / "out.jsonl")
    out = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert summary.written == 4 and sorted(summary.errors) == [2, 3, 5]
    assert out[0]["trait_row"] == 0 and "error" not in out[0]
    assert out[0]["trait_map"] == {"disease: asthma": 1.0, "disease: control": 0.0}
    assert out[1]["error"].startswith("the line is not usable JSON") and out[1]["trait_row"] is None
    assert out[3]["trait"] == "X" and "characteristics" in out[3]["error"]


def test_dev_records_score_above_the_keyword_rule(shared, tmp_path):
    """The shared scorer on dev: the proposer beats the shared keyword baseline (0.78)."""
    dev = shared / "data/clinical/dev.jsonl"
    result = CliRunner().invoke(
        main, ["recipe", "propose", "--records", str(dev), "--out", str(tmp_path / "p.jsonl")]
    )
    assert result.exit_code == 0, result.output
    keyword = tmp_path / "k.jsonl"
    tools = shared / "tools"
    subprocess.run([sys.executable, str(tools / "keyword_recipes.py"), str(dev), str(keyword)],
                   check=True)  # fmt: skip

    def overall(path):
        out = subprocess.run(
            [sys.executable, str(tools / "score_recipes.py"), str(dev), str(path)],
            check=True, capture_output=True, text=True,
        ).stdout  # fmt: skip
        last = out.strip().splitlines()[-1]
        return float(last.split("score ")[1].split()[0]), last

    ours, line = overall(tmp_path / "p.jsonl")
    theirs, _ = overall(keyword)
    assert ours >= 0.80 and ours > theirs + 0.03, line


def test_recipe_propose_writes_a_marked_toml_that_preprocess_reads(shared, tmp_path):
    cohort = shared / "data/real/geo/GSE14520"
    out = tmp_path / "GSE14520.toml"
    result = CliRunner().invoke(
        main, ["recipe", "propose", str(cohort), "--trait", "Liver_Cancer", "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    assert out.read_text().startswith(PROPOSED_MARK) and is_proposed(out)
    recipe = Recipe.read(out)
    trait = recipe.variables["trait"]
    rules = {rule.match: rule.value for rule in trait.rules}
    assert rules["Tissue: Liver Tumor Tissue"] == 1.0
    assert rules["Tissue: Liver Non-Tumor Tissue"] == 0.0
    hand = tmp_path / "hand.toml"
    hand.write_text('trait = "Liver_Cancer"\ncohort = "GSE14520"\n')
    refused = CliRunner().invoke(
        main, ["recipe", "propose", str(cohort), "--trait", "Liver_Cancer", "--out", str(hand)]
    )
    assert refused.exit_code == 2 and "hand-written" in refused.output
    assert hand.read_text().startswith("trait")
    shown = CliRunner().invoke(main, ["inspect", str(cohort), "--trait", "Liver_Cancer"])
    assert shown.exit_code == 0 and "<- proposed trait" in shown.output


def test_recipe_propose_refuses_unclear_usage(tmp_path):
    neither = CliRunner().invoke(main, ["recipe", "propose"])
    assert neither.exit_code == 2 and "COHORT_DIR" in neither.output
    missing = CliRunner().invoke(
        main, ["recipe", "propose", str(tmp_path / "nope"), "--trait", "X"]
    )
    assert missing.exit_code == 1 and "nope" in missing.output and "Traceback" not in missing.output


@pytest.mark.slow
def test_baseline_runs_the_generated_benchmark_end_to_end(tmp_path):
    from genotex.evaluation import evaluate
    from genotex.workflows import write_raw_benchmark

    bench = write_raw_benchmark(tmp_path / "bench", recipes=False)
    hand = bench.root / "recipes/Asthma/GSE100002.json"
    hand.parent.mkdir(parents=True)
    hand.write_text(json.dumps({"trait": "Asthma", "cohort": "GSE100002",
                                "variables": {"trait": {"row": 0, "rules": [
                                    {"match": "control", "value": 0},
                                    {"match": "case", "value": 1}]}}}))  # fmt: skip
    before = hand.read_text()
    result = CliRunner().invoke(main, ["baseline", str(bench.root)])
    assert result.exit_code == 0, result.output
    assert hand.read_text() == before  # hand-written: kept
    proposed = sorted(p.name for p in (bench.root / "recipes").rglob("*.toml"))
    assert proposed == ["GSE100001.toml", "GSE100003.toml", "GSE100004.toml", "GSE100005.toml"]
    report = evaluate(bench.root / "output", bench.reference_output, bench.task_info)
    # the generated cohorts are case/control with age and gender rows: the proposals
    # must decide exactly as the generator's truth (GSE100004 is all cases: no trait)
    assert all(score.accuracy == 100.0 for score in report.selection)
    clinical = {
        f.file: f.composite_similarity_correlation for f in report.preprocessing["clinical"]
    }
    del clinical["Asthma/GSE100002.csv"]  # the hand-written recipe above reads no Age or Gender
    assert clinical == pytest.approx(dict.fromkeys(clinical, 1.0)) and len(clinical) == 4


def test_the_ranker_learns_the_feature_that_marks_the_labelled_row():
    """Built so that the labelled row is always the one with feature k set: the fit must find k."""
    import numpy as np

    from genotex.preprocessing import RECORD_FEATURES, ROW_FEATURES, feature_index
    from genotex.preprocessing._proposer._training import fit_ranker

    rng = np.random.default_rng(0)
    k = feature_index("control_value")
    examples = []
    for i in range(60):
        features = rng.integers(0, 2, size=(4, len(ROW_FEATURES))).astype(float)
        features[:, k] = 0.0
        label = i % 4
        features[label, k] = 1.0
        examples.append((features, np.zeros(len(RECORD_FEATURES)), label))
    ranker = fit_ranker(examples, penalty=0.1)
    assert int(np.argmax(ranker.row_weights)) == k
    p = ranker.probabilities(*examples[5][:2])
    assert p.sum() == pytest.approx(1.0) and int(np.argmax(p)) == examples[5][2]


def test_the_ranker_sees_what_the_value_map_makes_of_a_row():
    from genotex.preprocessing._proposer._features import feature_index, row_features

    terms = trait_terms("Asthma")
    shape = [feature_index(f"map_{s}") for s in ("holds_0_and_1", "all_1", "all_0")]
    contrast = row_features(["disease: asthma", "disease: healthy"], terms, taken=False)
    everyone = row_features(["disease: severe asthma", "disease: mild asthma"], terms, False)
    # three values that name neither the trait nor a control: every value 0 (`_map_cells`)
    cells = ["disease: COPD", "disease: asthma", "disease: psoriasis"]
    others = row_features(cells, trait_terms("Eczema"), False)
    assert list(contrast[shape]) == [1, 0, 0]
    assert list(everyone[shape]) == [0, 1, 0]
    assert list(others[shape]) == [0, 0, 1]


def test_the_ranker_sees_a_contrast_that_does_not_name_the_trait():
    from genotex.preprocessing._proposer._features import feature_index, row_features

    k = feature_index("control_not_trait")
    other = ["group: preeclampsia", "group: healthy"]
    assert row_features(other, trait_terms("Stroke"), False)[k] == 1
    assert row_features(["group: stroke", "group: healthy"], trait_terms("Stroke"), False)[k] == 0
    keyed = ["stroke status: yes", "stroke status: control"]
    assert row_features(keyed, trait_terms("Stroke"), False)[k] == 0
    assert row_features(["group: A", "group: B"], trait_terms("Stroke"), False)[k] == 0
    assert row_features(["group: healthy"], trait_terms("Stroke"), False)[k] == 0


def test_the_shipped_ranker_says_where_it_came_from_and_bad_weights_are_refused(tmp_path):
    from genotex.core import GenotexError
    from genotex.preprocessing import TraitRanker

    shipped = TraitRanker.shipped()
    assert (
        shipped.provenance["n_records"] == 180 and len(shipped.provenance["records_sha256"]) == 64
    )
    bad = tmp_path / "ranker.json"
    bad.write_text('{"row_weights": {"key names the trait": "x"}, "none_weights": {}}')
    with pytest.raises(GenotexError, match="ranker.json"):
        TraitRanker.read(bad)


def test_a_cohort_folder_of_mouse_samples_is_not_usable(shared, tmp_path):
    """The same real series matrix, its organism line changed: the files' metadata decides."""
    import gzip

    from genotex.preprocessing import propose_cohort, read_series_matrix

    source = shared / "data/real/geo/GSE19161/GSE19161_series_matrix.txt.gz"
    assert propose_cohort(source.parent, "Ovarian_Cancer").proposal.gene_available
    lines = gzip.decompress(source.read_bytes()).decode().splitlines(keepends=True)
    organism = next(i for i, line in enumerate(lines) if line.startswith("!Sample_organism_ch1"))
    lines[organism] = lines[organism].replace("Homo sapiens", "Mus musculus")
    folder = tmp_path / "GSE19161"
    folder.mkdir()
    (folder / source.name).write_bytes(gzip.compress("".join(lines).encode()))
    proposal = propose_cohort(folder, "Ovarian_Cancer").proposal
    assert not proposal.gene_available and "Mus musculus" in proposal.gene_evidence[0]
    full = read_series_matrix(source)
    header = read_series_matrix(source, expression=False)
    assert header.expression.shape == (0, len(full.samples))
    assert header.characteristics.equals(full.characteristics)
    assert header.attributes["!Series_type"] == ["Expression profiling by array"]

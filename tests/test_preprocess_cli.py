"""preprocess / inspect / synonyms: recipes, bad input, concurrent writers, a whole layout."""

from __future__ import annotations

import json
import math
import multiprocessing
import re
import shutil
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from genotex.cli import main
from genotex.core import CohortInfo, CohortRecord
from genotex.preprocessing import (
    RecipeError,
    Rule,
    Variable,
    apply_variable,
    find_xena_folder,
    is_biased,
    load_recipe,
    parse_number,
    trait_from_barcode,
)

RECIPES = Path(__file__).parent / "recipes"


@pytest.fixture(scope="module")
def synonyms(shared):
    return shared / "fixtures" / "preprocess" / "metadata" / "gene_synonym.json"


def _preprocess(*args: str):
    return CliRunner().invoke(main, ["preprocess", *args])


@pytest.mark.parametrize(
    ("text", "age", "value"),
    [
        ("58", True, 58.0),
        ("58y", True, 58.0),
        ("6 months", True, 0.5),
        ("26 weeks", True, 0.5),
        ("NA", True, None),
        ("n.a", False, None),
        ("unknown", False, None),
        ("-2.5", False, -2.5),
    ],
)
def test_numbers_with_units(text, age, value):
    parsed = parse_number(text, age=age)
    assert (parsed != parsed) if value is None else parsed == pytest.approx(value)


def test_rules_are_ordered_case_insensitive_and_female_is_not_male():
    table = pd.DataFrame([["Sex: Female", "sex: MALE", "sex: unknown", None]], columns=list("abcd"))
    variable = Variable("Gender", row=0, rules=(Rule("female", 0.0), Rule("male", 1.0)))
    values = apply_variable(table, variable)
    assert values.tolist()[:2] == [0.0, 1.0] and values.isna().tolist()[2:] == [True, True]


def test_a_recipe_naming_a_missing_row_or_matching_nothing_is_an_error(tmp_path, shared, synonyms):
    bad_row = tmp_path / "r.toml"
    bad_row.write_text(
        'trait = "Breast_Cancer"\ncohort = "GSE51280"\n[input]\ngene_column = "GENE_SYMBOL"\n'
        "[variables.trait]\nrow = 12\nrules = [{match = 'Basal', value = 1}]\n"
    )
    result = _preprocess(
        "--trait",
        "Breast_Cancer",
        "--cohort-dir",
        str(shared / "data/real/geo/GSE51280"),
        "--recipe",
        str(bad_row),
        "--synonyms",
        str(synonyms),
        "--out",
        str(tmp_path / "out"),
    )
    assert (
        result.exit_code == 1
        and "row 12 does not exist" in result.output
        and "Traceback" not in result.output
    )
    nothing = tmp_path / "n.toml"
    nothing.write_text(
        bad_row.read_text().replace("row = 12", "row = 0").replace("Basal", "Luminal")
    )
    result = _preprocess(
        "--trait",
        "Breast_Cancer",
        "--cohort-dir",
        str(shared / "data/real/geo/GSE51280"),
        "--recipe",
        str(nothing),
        "--synonyms",
        str(synonyms),
        "--out",
        str(tmp_path / "out"),
    )
    assert result.exit_code == 1 and "match no value" in result.output
    assert not (
        tmp_path / "out" / "Breast_Cancer" / "cohort_info.json"
    ).exists()  # nothing half-written


@pytest.mark.parametrize(
    "content",
    ["not toml [", 'cohort = "GSE1"', 'trait = "T"\ncohort = "C"\n[variables.mood]\nrow = 1'],
)
def test_malformed_recipes(tmp_path, content):
    path = tmp_path / "r.toml"
    path.write_text(content)
    with pytest.raises(RecipeError) as info:
        load_recipe(path)
    assert str(path) in str(info.value)


def test_a_probe_column_absent_from_the_annotation(tmp_path, shared, synonyms):
    recipe = tmp_path / "r.json"
    recipe.write_text(
        json.dumps(
            {
                "trait": "Breast_Cancer",
                "cohort": "GSE51280",
                "input": {"gene_column": "GENE_SYMBOL", "probe_column": "PROBE"},
                "variables": {"trait": {"constant": 1}},
            }
        )
    )
    result = _preprocess(
        "--trait",
        "Breast_Cancer",
        "--cohort-dir",
        str(shared / "data/real/geo/GSE51280"),
        "--recipe",
        str(recipe),
        "--synonyms",
        str(synonyms),
        "--out",
        str(tmp_path / "out"),
    )
    assert result.exit_code == 1 and "no column 'PROBE'" in result.output


def test_without_a_recipe_age_and_gender_rows_are_proposed(tmp_path, shared, synonyms):
    result = _preprocess(
        "--trait",
        "Breast_Cancer",
        "--cohort-dir",
        str(shared / "data/real/geo/GSE51280"),
        "--synonyms",
        str(synonyms),
        "--out",
        str(tmp_path / "out"),
    )
    assert result.exit_code == 1 and "needs a recipe" in result.output
    assert re.search(r"\[variables\.age\][^\[]*\nrow = 3\n", result.output), result.output


def test_concurrent_writers_never_lose_a_record(tmp_path):
    path = tmp_path / "cohort_info.json"
    records = [CohortRecord(f"GSE{i}", is_usable=True, sample_size=i) for i in range(24)]
    with multiprocessing.get_context("spawn").Pool(4) as pool:
        pool.starmap(CohortInfo.update, [(path, record) for record in records])
    data = json.loads(path.read_text())
    assert {k: (v["is_usable"], v["sample_size"]) for k, v in data.items()} == {
        f"GSE{i}": (True, i) for i in range(24)
    }
    CohortInfo.update(path, CohortRecord("GSE3"))  # a re-run replaces only its own record
    data = json.loads(path.read_text())
    assert (
        data["GSE3"]["is_usable"] is False
        and data["GSE3"]["sample_size"] is None
        and len(data) == 24
    )


def test_bias_rules():
    assert is_biased(pd.Series([1.0] * 10))
    assert is_biased(pd.Series([1.0] * 46 + [0.0] * 4))  # rarer class 8% and 4 samples
    assert not is_biased(pd.Series([1.0] * 40 + [0.0] * 5))  # 5 samples is enough
    assert not is_biased(pd.Series([1.0, 2.0, 3.0]))


def test_tcga_traits_and_folders(shared):
    tumour, normal, control = (
        trait_from_barcode(s) for s in ("TCGA-AB-01", "TCGA-AB-11", "TCGA-AB-20")
    )
    assert (tumour, normal) == (1.0, 0.0)
    assert math.isnan(control)  # 20-29 are control samples: neither tumour nor normal tissue
    tcga = shared / "data" / "real" / "tcga"
    assert (
        find_xena_folder(tcga, "Large_B-cell_Lymphoma").name == "TCGA_Large_Bcell_Lymphoma_(DLBC)"
    )
    assert find_xena_folder(tcga, "Bile Duct Cancer").name == "TCGA_Bile_Duct_Cancer_(CHOL)"
    assert find_xena_folder(tcga, "Not_A_Cancer") is None


def test_inspect_every_real_geo_folder(shared):
    for folder in sorted((shared / "data" / "real" / "geo").iterdir()):
        result = CliRunner().invoke(main, ["inspect", str(folder)])
        assert result.exit_code == 0, f"{folder.name}: {result.output}"
        assert "Platform" in result.output or "Characteristics" in result.output


def test_synonym_commands(tmp_path, shared):
    out = tmp_path / "gene_synonym.json"
    result = CliRunner(env={"XDG_CACHE_HOME": str(tmp_path / "cache")}).invoke(
        main,
        [
            "synonyms",
            "build",
            "--gene-info",
            str(shared / "data/real/ncbi/Homo_sapiens.gene_info.gz"),
            "--out",
            str(out),
        ],
    )
    assert result.exit_code == 0, result.output
    assert list((tmp_path / "cache" / "genotex").glob("gene_synonym-*.json"))
    lookup = CliRunner().invoke(
        main, ["synonyms", "lookup", "p53", "NOTAGENE", "--synonyms", str(out)]
    )
    assert "p53\tTP53" in lookup.output and "not a known" in lookup.output


def test_a_whole_layout_from_its_root(tmp_path, shared, synonyms, monkeypatch):
    root = tmp_path / "bench"
    real = shared / "data" / "real"
    shutil.copytree(
        real / "geo" / "GSE51280", root / "input" / "GEO" / "Breast_Cancer" / "GSE51280"
    )
    shutil.copytree(
        real / "geo" / "GSE19161", root / "input" / "GEO" / "Ovarian_Cancer" / "GSE19161"
    )
    shutil.copytree(
        real / "tcga" / "TCGA_Bile_Duct_Cancer_(CHOL)",
        root / "input" / "TCGA" / "TCGA_Bile_Duct_Cancer_(CHOL)",
    )
    (root / "metadata").mkdir()
    shutil.copy(synonyms, root / "metadata" / "gene_synonym.json")
    task_info = {
        t: {"related_genes": [], "conditions": []}
        for t in ("Breast_Cancer", "Ovarian_Cancer", "Bile_Duct_Cancer")
    }
    (root / "metadata" / "task_info.json").write_text(json.dumps(task_info))
    for trait, name in (("Breast_Cancer", "GSE51280.json"), ("Ovarian_Cancer", "GSE19161.toml")):
        (root / "recipes" / trait).mkdir(parents=True)
        shutil.copy(RECIPES / trait / name, root / "recipes" / trait / name)
    monkeypatch.chdir(root)
    result = CliRunner().invoke(
        main,
        ["preprocess", "--all", "--input", "input", "--out", "output/preprocess", "--jobs", "2"],
    )
    assert result.exit_code == 0, result.output
    assert "Bile_Duct_Cancer/Xena" in result.output and "usable: 45 samples" in result.output
    assert "Ovarian_Cancer/GSE19161  not usable: trait not available" in result.output
    assert (root / "output/preprocess/Bile_Duct_Cancer/Xena.csv").exists()
    assert json.loads((root / "output/preprocess/Breast_Cancer/cohort_info.json").read_text())[
        "GSE51280"
    ]["is_biased"]


def test_a_rerun_replaces_only_its_own_files_and_record(tmp_path):
    from genotex.preprocessing import CohortOutcome, write_cohort

    genes = pd.DataFrame({"S1": [1.0], "S2": [2.0]}, index=pd.Index(["TP53"], name="Gene"))
    usable = CohortOutcome(
        "T",
        "GSE1",
        CohortRecord.decide(
            "GSE1", gene=True, trait=True, biased=False, age=False, gender=False, size=2
        ),
        genes,
        genes,
        genes.T,
    )
    other = CohortOutcome("T", "GSE2", CohortRecord.decide("GSE2", gene=True, trait=False), genes)
    write_cohort(tmp_path, usable)
    write_cohort(tmp_path, other)
    assert (tmp_path / "T" / "GSE1.csv").exists()
    biased = CohortOutcome(
        "T",
        "GSE1",
        CohortRecord.decide(
            "GSE1", gene=True, trait=True, biased=True, age=False, gender=False, size=2
        ),
        genes,
        genes,
    )
    write_cohort(tmp_path, biased)
    assert not (tmp_path / "T" / "GSE1.csv").exists()  # the stale linked table is gone
    assert (tmp_path / "T" / "gene_data" / "GSE2.csv").exists()
    records = json.loads((tmp_path / "T" / "cohort_info.json").read_text())
    assert records["GSE1"]["is_biased"] is True and records["GSE2"]["is_trait_available"] is False


def test_a_recipe_for_another_trait_is_a_usage_error_naming_both(tmp_path, shared, synonyms):
    result = _preprocess(
        "--trait",
        "Breast_Cancer",
        "--cohort-dir",
        str(shared / "data/real/geo/GSE19161"),
        "--recipe",
        str(RECIPES / "Ovarian_Cancer" / "GSE19161.toml"),
        "--synonyms",
        str(synonyms),
        "--out",
        str(tmp_path / "out"),
    )
    assert result.exit_code == 2, result.output
    assert "'Breast_Cancer'" in result.output and "'Ovarian_Cancer'" in result.output
    assert not (tmp_path / "out").exists()


def test_the_library_decides_geo_or_tcga_from_the_folder(tmp_path, shared, synonyms):
    from genotex.preprocessing import (
        RecipeNeeded,
        is_tcga_folder,
        load_synonyms,
        preprocess_cohort,
        propose_cohort,
    )

    table = load_synonyms(synonyms)
    xena = find_xena_folder(shared / "data/real/tcga", "Bile_Duct_Cancer")
    assert is_tcga_folder(xena) and not is_tcga_folder(shared / "data/real/geo/GSE19161")
    outcome = preprocess_cohort(xena, "Bile_Duct_Cancer", table, tmp_path)
    assert outcome.cohort == "Xena" and "Age from" in outcome.details
    geo = shared / "data/real/geo/GSE19161"
    with pytest.raises(RecipeNeeded):
        preprocess_cohort(geo, "Ovarian_Cancer", table, tmp_path)
    assert "[variables." in propose_cohort(geo, "Ovarian_Cancer").toml()


def test_a_trait_the_benchmark_does_not_have_is_refused_with_the_closest(tmp_path, monkeypatch):
    """Issue #52, 17: a misspelled --trait wrote output/preprocess/<misspelling>/, a folder
    nothing reads; with the benchmark's task_info.json there, it is refused in one sentence
    before anything is written.
    """
    from genotex.workflows import write_raw_benchmark

    write_raw_benchmark(tmp_path)
    monkeypatch.chdir(tmp_path)
    cohort = next(Path("input/TCGA").iterdir())
    done = CliRunner().invoke(main, ["preprocess", str(cohort), "--trait", "Psoriasiss"])
    assert done.exit_code == 1, done.output
    assert "task_info has no trait 'Psoriasiss'; did you mean Psoriasis?" in done.output
    assert not Path("output/preprocess/Psoriasiss").exists()
    done = CliRunner().invoke(main, ["preprocess", str(cohort), "--trait", "Psoriasis"])
    assert done.exit_code == 0, done.output
    assert Path("output/preprocess/Psoriasis/Xena.csv").is_file()

"""`genotex diagnose` proven on planted faults: each error class at the right file, nothing on gold.

The reference is the generated benchmark's truth (`write_raw_benchmark`); the
faults are planted in copies of it by `make_faulty_prediction`. Expected
numbers are read from the reference CSVs with pandas, never from the diagnosis.
"""

from __future__ import annotations

import json

import pandas as pd
import pytest
from click.testing import CliRunner

from genotex.cli import main
from genotex.core import TaskInfo, gene_selection_scores
from genotex.evaluation import (
    ERROR_CLASSES,
    DiagnosisError,
    compare_diagnoses,
    load_diagnosis,
    stage_shares,
)
from genotex.workflows import (
    FAULTS,
    PlantedFault,
    diagnose,
    make_faulty_prediction,
    write_raw_benchmark,
)

#: A GEO cohort (two per trait) and the TCGA one, both used by their traits' problems.
PLACES = [("Asthma", "GSE100001"), ("Psoriasis", "Xena")]
#: The file each cohort fault must be named at (relative to the prediction's output/).
FILE_OF = {
    "samples_misaligned": "preprocess/{t}/{c}.csv",
    "gene_ids_not_symbols": "preprocess/{t}/gene_data/{c}.csv",
    "symbols_not_normalized": "preprocess/{t}/gene_data/{c}.csv",
    "values_transformed": "preprocess/{t}/gene_data/{c}.csv",
    "samples_dropped": "preprocess/{t}/clinical_data/{c}.csv",
    "cohort_usability": "preprocess/{t}/cohort_info.json",
}
#: Classes that follow from a planted fault elsewhere (a problem answered from other data).
CONSEQUENCES = {"selection", "floor", "analysis"}


@pytest.fixture(scope="module")
def bench(tmp_path_factory):
    return write_raw_benchmark(tmp_path_factory.mktemp("bench"), recipes=False)


def _diagnosis(bench, out, **kwargs):
    return diagnose(out, bench.reference_output, bench.task_info, **kwargs)


def _data_findings(diagnosis):
    return [f for f in diagnosis.findings if f.error_class not in CONSEQUENCES]


def test_a_copy_of_the_reference_has_an_empty_diagnosis(bench, tmp_path):
    out = make_faulty_prediction(bench.reference_output, tmp_path / "gold", [])
    diagnosis = _diagnosis(bench, out)
    assert diagnosis.findings == ()
    assert diagnosis.problems and all(p.lost == 0 for p in diagnosis.problems)
    assert all(a.mean == 0 for a in diagnosis.averages)


@pytest.mark.parametrize("trait,cohort", PLACES, ids=[c for _, c in PLACES])
@pytest.mark.parametrize("fault", [f for f in FAULTS if f != "analysis"])
def test_each_planted_fault_is_found_at_its_file_with_its_class(bench, tmp_path, fault, trait,
                                                                cohort):  # fmt: skip
    out = make_faulty_prediction(
        bench.reference_output, tmp_path / "pred", [PlantedFault(fault, trait, cohort)]
    )
    found = _data_findings(_diagnosis(bench, out))
    expected = FILE_OF.get(fault, "preprocess/{t}/clinical_data/{c}.csv").format(t=trait, c=cohort)
    assert (fault, expected) in {(f.error_class, f.file) for f in found}, found
    # nothing else: every data finding is of the planted class and cohort
    assert {(f.error_class, f.cohort) for f in found} == {(fault, cohort)}, found


def test_the_evidence_gives_the_numbers_of_the_files(bench, tmp_path):
    out = make_faulty_prediction(
        bench.reference_output,
        tmp_path / "pred",
        [PlantedFault("trait_inverted", "Asthma", "GSE100001"),
         PlantedFault("samples_dropped", "Psoriasis", "Xena")],
    )  # fmt: skip
    found = {f.error_class: f for f in _diagnosis(bench, out).findings}
    clinical = pd.read_csv(bench.reference_output / "preprocess/Asthma/clinical_data/GSE100001.csv")
    n = clinical.shape[1] - 1
    assert found["trait_inverted"].message == f"trait inverted, r = -1.00 over {n} shared samples"
    xena = pd.read_csv(bench.reference_output / "preprocess/Psoriasis/clinical_data/Xena.csv")
    total = xena.shape[1] - 1
    kept = int(0.75 * total)
    assert found["samples_dropped"].numbers == {"missing": total - kept, "samples": total}


def test_combined_faults_are_all_found_with_no_false_finding(bench, tmp_path):
    planted = [
        PlantedFault("trait_inverted", "Asthma", "GSE100001"),
        PlantedFault("values_transformed", "Asthma", "GSE100002"),
        PlantedFault("age_unit", "Psoriasis", "Xena"),
        PlantedFault("symbols_not_normalized", "Psoriasis", "Xena"),
        PlantedFault("gender_inverted", "Obesity", "GSE100003"),
    ]
    out = make_faulty_prediction(bench.reference_output, tmp_path / "pred", planted, seed=3)
    found = {(f.error_class, f.cohort) for f in _data_findings(_diagnosis(bench, out))}
    assert found == {(p.error_class, p.cohort) for p in planted}


def test_an_analysis_fault_is_the_analysis_stage_with_its_finding(bench, tmp_path):
    planted = [PlantedFault("analysis", "Obesity", problem="Obesity|None")]
    out = make_faulty_prediction(bench.reference_output, tmp_path / "pred", planted)
    diagnosis = _diagnosis(bench, out, mode="reference")
    lost = [p for p in diagnosis.problems if p.lost > 0]
    assert [p.problem.key for p in lost] == ["Obesity|None"]
    (problem,) = lost
    assert problem.main_stage == "analysis"
    top = diagnosis.findings[problem.top]
    assert (top.error_class, top.file) == (
        "analysis",
        "regress/Obesity/significant_genes_condition_None.json",
    )
    assert _data_findings(diagnosis) == []


def test_a_preprocessing_fault_is_the_preprocessing_stage_and_the_shares_add_up(bench, tmp_path):
    task_info = TaskInfo.read(bench.task_info)
    planted = [PlantedFault("trait_constant", "Asthma", "GSE100001")]
    out = make_faulty_prediction(
        bench.reference_output, tmp_path / "pred", planted, reanalyse=(task_info, "reference")
    )
    diagnosis = _diagnosis(bench, out, mode="reference")
    asthma = [p for p in diagnosis.problems if p.problem.trait == "Asthma"]
    assert asthma and all(p.main_stage == "preprocessing" for p in asthma)
    for p in asthma:
        assert diagnosis.findings[p.top].error_class == "trait_constant"
        assert sum(p.shares.values()) == pytest.approx(100 - p.f1["agent"], abs=1e-9)
        # the agent's F1 is the evaluator's: its genes against the reference's, by hand
        name = f"significant_genes_condition_{p.problem.condition or 'None'}.json"
        answer = out / "regress/Asthma" / name  # a constant trait leaves some problems unanswered
        genes = (
            json.loads(answer.read_text())["significant_genes"]["Variable"]
            if answer.exists()
            else []
        )
        theirs = json.loads((bench.reference_output / "regress/Asthma" / name).read_text())
        truth = theirs["significant_genes"]["Variable"]
        hits = len(set(genes) & set(truth))
        f1 = 0.0 if not hits else 200 * hits / (len(genes) + len(truth))
        assert p.f1["agent"] == pytest.approx(f1)
        assert gene_selection_scores(genes, truth)["f1"] == pytest.approx(f1)


def test_stage_shares_are_the_differences_of_the_substitutes():
    shares = stage_shares({"agent": 20.0, "own_data": 50.0, "ref_data": 40.0, "ref_cohorts": 90.0})
    assert shares == {"floor": 10.0, "selection": 50.0, "preprocessing": -10.0, "analysis": 30.0}


def test_the_diagnosis_round_trips_and_a_bad_file_is_one_sentence(bench, tmp_path):
    out = make_faulty_prediction(
        bench.reference_output, tmp_path / "pred", [PlantedFault("age_unit", "Asthma", "GSE100001")]
    )
    diagnosis = _diagnosis(bench, out)
    saved = tmp_path / "d.json"
    saved.write_text(json.dumps(diagnosis.to_dict()))
    assert load_diagnosis(saved).to_dict() == diagnosis.to_dict()
    for text in ("[1, 2]", '{"findings": [{"class": "no_such_class"}]}', "{", '{"problems": 3}'):
        saved.write_text(text)
        with pytest.raises(DiagnosisError, match=str(saved)):
            load_diagnosis(saved)


def test_the_cli_writes_its_tables_and_compares_two_runs(bench, tmp_path):
    a = make_faulty_prediction(
        bench.reference_output, tmp_path / "a", [PlantedFault("age_unit", "Asthma", "GSE100001")]
    )
    b = make_faulty_prediction(
        bench.reference_output,
        tmp_path / "b",
        [PlantedFault("trait_inverted", "Psoriasis", "Xena")],
    )
    runner = CliRunner()
    ref = str(bench.reference_output)
    for name, pred in (("a", a), ("b", b)):
        args = ["diagnose", "-p", str(pred), "-r", ref, "--task-info", str(bench.task_info)]
        args += ["--json", str(tmp_path / f"{name}.json")]
        if name == "a":
            args += ["--csv", str(tmp_path / "csv"), "--figure", str(tmp_path / "classes.svg")]
        result = runner.invoke(main, args)
        assert result.exit_code == 0, result.output
    assert "age_unit 1" in result.output or "trait_inverted 1" in result.output
    findings = pd.read_csv(tmp_path / "csv" / "findings.csv")
    assert list(findings["class"]) == ["age_unit"]
    assert "<svg" in (tmp_path / "classes.svg").read_text()
    compared = runner.invoke(
        main, ["diagnose", "--compare", str(tmp_path / "a.json"), str(tmp_path / "b.json")]
    )
    assert compared.exit_code == 0
    assert "Only a: age_unit" in compared.output and "Only b: trait_inverted" in compared.output
    both = compare_diagnoses(
        load_diagnosis(tmp_path / "a.json"), load_diagnosis(tmp_path / "b.json")
    )
    assert both["classes"] == {"trait_inverted": [0, 1], "age_unit": [1, 0]}


def test_the_cli_says_one_sentence_for_a_missing_prediction(bench, tmp_path):
    result = CliRunner().invoke(
        main, ["diagnose", "-p", str(tmp_path / "nowhere"), "-r", str(bench.reference_output)]
    )
    assert result.exit_code != 0
    assert "Traceback" not in result.output
    assert "nowhere" in result.output and "does not exist" in result.output


def test_every_class_has_a_stage():
    stages = {stage for stage, _ in ERROR_CLASSES.values()}
    assert stages == {"floor", "selection", "preprocessing", "analysis"}


def test_row_correlations_are_numpys_row_by_row():
    import numpy as np

    from genotex.evaluation._diagnosis._gene_checks import row_correlations

    rng = np.random.default_rng(0)
    p, r = rng.normal(size=(50, 20)), rng.normal(size=(50, 20))
    p[3, :5] = np.nan
    r[7, 2] = np.inf
    p[9] = 1.0  # no variance
    expected = []
    for a, b in zip(p, r, strict=True):
        keep = np.isfinite(a) & np.isfinite(b)
        a, b = a[keep], b[keep]
        expected.append(np.nan if np.std(a) == 0 else np.corrcoef(a, b)[0, 1])
    np.testing.assert_allclose(row_correlations(p, r), expected, rtol=1e-12, equal_nan=True)


def _diagnosed_json(out, bench, tmp_path):
    """`genotex diagnose` of `out` against the bench's reference, which must succeed: its
    result and the JSON it saved.
    """
    result = CliRunner().invoke(
        main,
        ["diagnose", "-p", str(out), "-r", str(bench.reference_output),
         "--task-info", str(bench.task_info), "--json", str(tmp_path / "d.json")],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    return result, json.loads((tmp_path / "d.json").read_text())


def test_hostile_files_are_findings_never_read_through_or_a_traceback(bench, tmp_path):
    out = make_faulty_prediction(bench.reference_output, tmp_path / "pred", [])
    base = out / "preprocess" / "Asthma"
    secret = tmp_path / "secret.csv"
    secret.write_text(",Asthma\nGSM1,1\n")
    (base / "GSE100001.csv").unlink()
    (base / "GSE100001.csv").symlink_to(secret)  # a linked table leading outside the tree
    clinical = base / "clinical_data" / "GSE100002.csv"
    lines = clinical.read_text().splitlines()
    lines[1] = lines[1].split(",")[0] + ",abc" + "," + ",".join(lines[1].split(",")[2:])
    clinical.write_text("\n".join(lines) + "\n")  # a non-numeric trait cell
    (out / "preprocess" / "Obesity" / "cohort_info.json").write_text("{not json")
    result, saved = _diagnosed_json(out, bench, tmp_path)
    assert "Traceback" not in result.output
    by_file = {(f["class"], f["file"]) for f in saved["findings"]}
    assert ("table_unreadable", "preprocess/Asthma/GSE100001.csv") in by_file
    assert ("table_unreadable", "preprocess/Asthma/clinical_data/GSE100002.csv") in by_file
    reasons = " ".join(f["message"] for f in saved["findings"])
    assert "outside the submission" in reasons
    assert str(secret) not in result.output + reasons  # never named, never read
    notes = " ".join(n for p in saved["problems"] for n in p["notes"])
    assert "Asthma|" not in notes or "outside the submission" in notes


def test_a_wrong_figure_suffix_is_refused_before_any_work(bench, tmp_path):
    result = CliRunner().invoke(
        main,
        ["diagnose", "-p", str(bench.reference_output), "-r", str(bench.reference_output),
         "--task-info", str(bench.task_info), "--figure", str(tmp_path / "classes.jpg")],
    )  # fmt: skip
    assert result.exit_code != 0 and "Traceback" not in result.output
    assert ".png" in result.output and "Where the points were lost" not in result.output


def test_a_trait_from_another_characteristics_row_is_named_by_that_row(tmp_path):
    import gzip

    import numpy as np

    bench = write_raw_benchmark(tmp_path / "bench", recipes=False)
    matrix = next((bench.root / "input/GEO/Asthma/GSE100001").glob("*_series_matrix.txt.gz"))
    lines = gzip.decompress(matrix.read_bytes()).decode().splitlines()
    samples = next(x for x in lines if x.startswith("!Sample_geo_accession")).split("\t")[1:]
    samples = [s.strip('"') for s in samples]
    tissue = np.random.default_rng(5).integers(0, 2, len(samples))
    row = "\t".join(f'"tissue: {"skin" if t else "blood"}"' for t in tissue)
    last = max(i for i, x in enumerate(lines) if x.startswith("!Sample_characteristics_ch1"))
    lines.insert(last + 1, f"!Sample_characteristics_ch1\t{row}")
    matrix.write_bytes(gzip.compress(("\n".join(lines) + "\n").encode()))
    out = make_faulty_prediction(bench.reference_output, tmp_path / "pred", [])
    clinical = out / "preprocess/Asthma/clinical_data/GSE100001.csv"
    table = pd.read_csv(clinical, index_col=0)
    table.loc["Asthma"] = pd.Series(tissue.astype(float), index=samples)[table.columns].to_numpy()
    table.to_csv(clinical)
    linked = out / "preprocess/Asthma/GSE100001.csv"
    rows = pd.read_csv(linked, index_col=0)
    rows["Asthma"] = pd.Series(tissue.astype(float), index=samples)[rows.index].to_numpy()
    rows.to_csv(linked)
    plain = diagnose(out, bench.reference_output, bench.task_info)
    named = diagnose(out, bench.reference_output, bench.task_info, input_dir=bench.root / "input")
    assert [f.error_class for f in plain.findings if f.cohort == "GSE100001"] == ["trait_mismatch"]
    (finding,) = [f for f in named.findings if f.cohort == "GSE100001"]
    assert finding.error_class == "trait_row_wrong"
    assert finding.file == "preprocess/Asthma/clinical_data/GSE100001.csv"
    assert "characteristics '3 (tissue)'" in finding.message and "r = 1.00" in finding.message


def _maker(found):
    from genotex.evaluation import DiagnosisFinding

    def make(error_class, message, **numbers):
        found.append(DiagnosisFinding(error_class, "f.csv", message, "T", "C", numbers=numbers))
        return found[-1]

    return make


def test_gene_labels_name_ids_synonyms_cases_and_dates():
    from genotex.evaluation._diagnosis._gene_checks import check_gene_labels

    reference = ["MARCH1", "SEPT7", "TP53", "EGFR", "MYC", "KRAS", "BRCA1", "PTEN", "AKT1", "CDK4"]
    found = []
    pred = ["1-Mar", "Sep-07", "tp53", "ERBB1", "MYC", "KRAS", "BRCA1", "PTEN", "AKT1", "CDK4"]
    check_gene_labels(pred, reference, _maker(found), synonyms={"ERBB1": "EGFR"})
    (finding,) = found
    assert finding.error_class == "symbols_not_normalized" and finding.numbers == {"labels": 4}
    assert "(1-Mar (a date), Sep-07 (a date), tp53 -> TP53, ...)" in finding.message
    found = []
    probes = ["1007_s_at", "1053_at", "ENSG00000141510", "7157", "ILMN_1343291", "MYC"]
    check_gene_labels(probes, reference, _maker(found))
    assert [f.error_class for f in found] == ["gene_ids_not_symbols"]
    assert found[0].numbers == {"ids": 5, "labels": 6, "shared": 1}


def test_gene_values_name_their_transformation():
    import numpy as np

    from genotex.core import LabelledTable
    from genotex.evaluation._diagnosis._gene_checks import check_gene_values

    rng = np.random.default_rng(1)
    ref_values = rng.normal(8, 1.5, size=(30, 12))
    genes = np.array([f"G{i}" for i in range(30)], dtype=object)
    samples = np.array([f"S{j}" for j in range(12)], dtype=object)

    def table(values):
        return LabelledTable(genes, samples, values, True)

    zscored = (ref_values - ref_values.mean(1, keepdims=True)) / ref_values.std(
        1, ddof=1, keepdims=True
    )
    cases = {
        "z-scored per gene": zscored,
        "linear (2^x) where the reference is log2": 2.0**ref_values,
        "rescaled": 3 * ref_values + 2,
    }
    for words, values in cases.items():
        found = []
        check_gene_values(table(values), table(ref_values), _maker(found))
        assert [f.error_class for f in found] == ["values_transformed"], words
        assert words in found[0].message
    found = []
    check_gene_values(table(ref_values + 1e-5), table(ref_values), _maker(found))
    assert found == []  # equal to within the tables' written precision
    noise = rng.normal(size=ref_values.shape) * 5
    check_gene_values(table(ref_values + noise), table(ref_values), _maker(found))
    assert [f.error_class for f in found] == ["data_differ"]


def test_a_diagnosis_prints_in_a_line_and_a_small_table(bench, tmp_path):
    out = make_faulty_prediction(
        bench.reference_output, tmp_path / "pred", [PlantedFault("age_unit", "Asthma", "GSE100001")]
    )
    diagnosis = _diagnosis(bench, out)
    assert repr(diagnosis).startswith("Diagnosis(") and len(repr(diagnosis)) < 200
    page = diagnosis._repr_html_()
    assert len(page.encode()) <= 1024 and "age_unit 1" in page


@pytest.mark.parametrize("damage", ["all-nan-genes", "header-only"])
def test_linked_tables_the_pipeline_cannot_use_are_findings_not_a_crash(bench, tmp_path, damage):
    """Issue #45, 1: all-NaN gene columns, or a header with no sample, in every Asthma and
    Obesity linked table (the two traits of a two-step problem): the diagnosis is written,
    naming them.
    """
    out = make_faulty_prediction(bench.reference_output, tmp_path / "pred", [])
    damaged = [*(out / "preprocess" / "Obesity").glob("*.csv")]
    damaged += [*(out / "preprocess" / "Asthma").glob("*.csv")]
    for linked in damaged:
        table = pd.read_csv(linked, index_col=0)
        if damage == "all-nan-genes":
            genes = [c for c in table.columns if c not in ("Asthma", "Obesity", "Age", "Gender")]
            table[genes] = float("nan")
        else:
            table = table.iloc[:0]
        table.to_csv(linked)
    answer = out / "regress" / "Asthma" / "significant_genes_condition_Obesity.json"
    answer.write_text(json.dumps({"significant_genes": {"Variable": ["NOTAGENE"]}}))
    _, saved = _diagnosed_json(out, bench, tmp_path)
    named = [f["file"] for f in saved["findings"]]
    assert any(f.startswith("preprocess/Asthma/") for f in named), named


@pytest.mark.parametrize("wrong_answer", [True, False], ids=["replaced", "faithful"])
def test_an_analysis_fault_behind_a_preprocessing_fault_is_named(bench, tmp_path, wrong_answer):
    """Issue #45, 12: Obesity's cohort keeps probe IDs (a preprocessing fault) and the agent
    answered again on it; its Obesity|Gender list then replaced by other labels of its data.
    The loss is preprocessing's (the pipeline on the agent's data scores no better), but an
    `analysis` finding says the list is not what its own data give; a faithful agent gets none.
    """
    info = TaskInfo.read(bench.task_info)
    cohort = next(
        p.stem for p in (bench.reference_output / "preprocess" / "Obesity").glob("G*.csv")
    )
    out = make_faulty_prediction(
        bench.reference_output,
        tmp_path / "pred",
        [PlantedFault("gene_ids_not_symbols", "Obesity", cohort)],
        reanalyse=(info, "standard"),
    )
    answer = out / "regress" / "Obesity" / "significant_genes_condition_Gender.json"
    if wrong_answer:
        labels = pd.read_csv(out / "preprocess" / "Obesity" / f"{cohort}.csv", nrows=0).columns
        decoys = [c for c in labels[-12:] if c not in ("Obesity", "Age", "Gender")]
        answer.write_text(json.dumps({"significant_genes": {"Variable": decoys}}))
    diagnosis = _diagnosis(bench, out)
    problem = next(p for p in diagnosis.problems if p.problem.key == "Obesity|Gender")
    assert problem.shares["preprocessing"] > problem.shares["analysis"]
    named = [
        f
        for f in diagnosis.findings
        if f.error_class == "analysis" and f.problem == "Obesity|Gender"
    ]
    if not wrong_answer:
        assert named == []
        return
    assert (
        len(named) == 1
        and named[0].file == "regress/Obesity/significant_genes_condition_Gender.json"
    )
    assert "not what its own data give" in named[0].message
    assert named[0].numbers["agreement_f1"] < named[0].numbers["expected_f1"] - 10
    assert named[0] in [diagnosis.findings[i] for i in problem.findings]


def test_the_default_mode_files_no_analysis_finding_against_the_reference_pipelines_answer(
    bench, tmp_path
):
    """The demo's baseline answers with the reference pipeline: 0.9.0's default (standard)
    mode filed `analysis` findings against those answers and its guide said every point was
    the floor (issue #52, item 9). Its analysis did better than the standard substitute (a
    negative share): nothing to find. With `--mode reference` all of the loss is the floor.
    """
    from genotex.evaluation import render_diagnosis
    from genotex.workflows import run_baseline

    run_baseline(bench.root, out=tmp_path / "run")
    standard = _diagnosis(bench, tmp_path / "run" / "output")
    assert not [f for f in standard.findings if f.error_class == "analysis"]
    assert any(p.shares["analysis"] < -0.5 for p in standard.problems)  # it beat the substitute
    text = render_diagnosis(standard)
    assert "floor: how far the standard pipeline is from the reference answers" in text
    reference = _diagnosis(bench, tmp_path / "run" / "output", mode="reference")
    lost = [p for p in reference.problems if p.lost > 0]
    assert lost and all(p.main_stage == "floor" and p.shares["analysis"] == 0 for p in lost)


def test_a_one_trait_run_is_diagnosed_on_its_trait_with_trait(bench, tmp_path):
    """0.9.0 had no trait filter: a run of Asthma alone was diagnosed as failing every problem
    of the other traits (issue #52, item 9)."""
    import shutil

    out = make_faulty_prediction(bench.reference_output, tmp_path / "gold", [])
    # Asthma alone, with the data of Obesity (the condition of its two-step problem)
    for path in (out / "regress/Obesity", out / "regress/Psoriasis", out / "preprocess/Psoriasis"):
        shutil.rmtree(path)
    everything = _diagnosis(bench, out)
    assert {p.problem.trait for p in everything.problems if p.lost > 0} == {"Obesity", "Psoriasis"}
    asthma = _diagnosis(bench, out, traits=["Asthma"])
    assert {p.problem.trait for p in asthma.problems} == {"Asthma"}
    assert all(p.lost == 0 for p in asthma.problems) and asthma.findings == ()
    with pytest.raises(Exception, match="no trait 'Astma'; did you mean Asthma"):
        _diagnosis(bench, out, traits=["Astma"])
    import subprocess
    import sys

    said = subprocess.run([sys.executable, "-m", "genotex", "diagnose", "-p", str(out), "-r",
                           str(bench.reference_output), "--task-info", str(bench.task_info),
                           "--trait", "Asthma", "--no-progress"],
                          capture_output=True, text=True)  # fmt: skip
    assert said.returncode == 0, said.stderr
    assert "Problems that lost points" not in said.stdout and "Obesity|" not in said.stdout


def test_an_end_to_end_run_without_preprocessing_loses_its_selection_as_eval_says(bench, tmp_path):
    """Answers (each cut to its first gene, so that points are lost) but no preprocess/: as an
    analysis run (given the reference's data, the default inference) nothing is lost to
    selection; as the end-to-end run it was, no cohort was selected, so by hand each
    problem's selection share is the whole of D (its F1 on the reference's data and cohorts)
    minus C = 0, and `eval` gives selection accuracy 0.
    """
    import json
    import shutil

    from genotex.evaluation import evaluate

    out = make_faulty_prediction(bench.reference_output, tmp_path / "gold", [])
    shutil.rmtree(out / "preprocess")
    (out / "preprocess").mkdir()
    for answer in (out / "regress").rglob("significant_genes_*.json"):
        data = json.loads(answer.read_text())
        genes = data["significant_genes"]
        for key in [k for k, v in genes.items() if isinstance(v, list)]:
            genes[key] = genes[key][:1]
        answer.write_text(json.dumps(data))
    given = _diagnosis(bench, out)
    assert all(p.shares["selection"] == 0 for p in given.problems)
    e2e = _diagnosis(bench, out, given_data=False)
    assert all(p.lost > 0 for p in e2e.problems) and all(
        p.shares["selection"] == pytest.approx(p.f1["ref_cohorts"]) and p.f1["ref_data"] == 0
        for p in e2e.problems
    )
    report = evaluate(out, bench.reference_output, bench.task_info)
    averages = report.to_frame("average")
    selection = averages[(averages["section"] == "selection") & (averages["metric"] == "accuracy")]
    assert float(selection["average"].iloc[0]) == 0


def test_an_all_missing_age_scores_csc_1_as_published_and_diagnose_names_it(bench, tmp_path):
    """Issue #60, 9: the published CSC compares the values both tables hold, so an Age with no
    value scores 1.0; the diagnosis names it as a preprocessing finding, the metric unchanged.
    """
    from genotex.evaluation import EvalOptions, evaluate

    planted = [PlantedFault("feature_all_missing", "Asthma", "GSE100001")]
    out = make_faulty_prediction(bench.reference_output, tmp_path / "pred", planted)
    clinical = pd.read_csv(out / "preprocess/Asthma/clinical_data/GSE100001.csv", index_col=0)
    assert clinical.loc["Age"].isna().all()  # the fault as planted, read with pandas
    report = evaluate(out, bench.reference_output, bench.task_info, options=EvalOptions())
    scored = {s.file: s for s in report.preprocessing["clinical"]}
    assert scored["Asthma/GSE100001.csv"].composite_similarity_correlation == pytest.approx(1.0)
    found = _data_findings(_diagnosis(bench, out))
    assert [(f.error_class, f.file) for f in found] == [
        ("feature_all_missing", "preprocess/Asthma/clinical_data/GSE100001.csv")
    ]
    assert found[0].message.startswith("Age has no value on the ")


def test_an_exported_run_that_called_genotex_s_pipeline_is_said_first(bench, tmp_path):
    """An export's `eval.json` beside its `output/` says which steps reached for genotex's
    pipeline (#60 item 7); diagnose says it before the stage table, and only then.
    """
    import shutil

    run = tmp_path / "run"
    shutil.copytree(bench.reference_output, run / "output")
    ref, info = str(bench.reference_output), str(bench.task_info)
    args = ["diagnose", "-p", str(run / "output"), "-r", ref, "--task-info", info]
    plain = CliRunner().invoke(main, [*args, "--json", str(tmp_path / "plain.json")])
    assert plain.exit_code == 0 and "genotex's pipeline" not in plain.output
    scored = ["eval", "-p", str(run / "output"), "-r", ref, "--task-info", info]
    saved = CliRunner().invoke(main, [*scored, "--json", str(run / "eval.json")])
    assert saved.exit_code == 0, saved.output
    report = json.loads((run / "eval.json").read_text())
    steps = ["Asthma · GSE100001 · linking_and_qc", "Asthma|None · statistics · unconditional"]
    report["run"]["harness"] = {"reached_pipeline": steps}
    (run / "eval.json").write_text(json.dumps(report))
    result = CliRunner().invoke(main, [*args, "--json", str(tmp_path / "d.json")])
    assert result.exit_code == 0, result.output
    first = result.output.splitlines()[0]
    assert first.startswith("The agent called genotex's pipeline: 2 step(s)")
    assert steps[0] in first and steps[1] in first
    assert load_diagnosis(tmp_path / "d.json").run["reached_pipeline"] == steps

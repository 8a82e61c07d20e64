"""`genotex preprocess` treats every recipe and input file as untrusted (issue: no write outside
--out, no crash, no silent corruption). Each defect found has a test here; the property test at
the end feeds generated recipes and damaged matrices to the library."""

from __future__ import annotations

import gzip
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from genotex.cli import main
from genotex.core import GenotexError, UnsafeNameError, output_path, remove_stale_temporaries
from genotex.preprocessing import (
    GEOFormatError,
    Recipe,
    RecipeError,
    explain_gene_column,
    load_synonyms,
    preprocess_cohort,
    preprocess_tree,
    read_series_matrix,
    read_soft,
    unique_names,
)
from genotex.workflows import write_raw_benchmark


@pytest.fixture(scope="module")
def pristine(tmp_path_factory):
    return write_raw_benchmark(tmp_path_factory.mktemp("bench") / "root").root


@pytest.fixture
def bench(pristine, tmp_path):
    root = tmp_path / "root"
    shutil.copytree(pristine, root)
    return root


def _gz_lines(path: Path) -> list[str]:
    return gzip.decompress(path.read_bytes()).decode().split("\n")


def _write_gz_lines(path: Path, lines: list[str]) -> None:
    path.write_bytes(gzip.compress("\n".join(lines).encode()))


def _matrix(root: Path, trait="Asthma", cohort="GSE100001") -> Path:
    return root / "input/GEO" / trait / cohort / f"{cohort}_series_matrix.txt.gz"


def _recipe_path(root: Path, trait="Asthma", cohort="GSE100001") -> Path:
    return root / "recipes" / trait / f"{cohort}.json"


def _edit_recipe(root: Path, change: dict, trait="Asthma", cohort="GSE100001") -> Path:
    path = _recipe_path(root, trait, cohort)
    data = json.loads(path.read_text())
    data.update(change)
    path.write_text(json.dumps(data))
    return path


def _tree(root: Path, *extra: str):
    return CliRunner().invoke(
        main,
        [
            "preprocess",
            "--all",
            "--input",
            str(root / "input"),
            "--recipes",
            str(root / "recipes"),
            "--task-info",
            str(root / "metadata/task_info.json"),
            "--synonyms",
            str(root / "metadata/gene_synonym.json"),
            "--out",
            str(root / "out"),
            *extra,
        ],
    )


def _status(output: str, cohort: str) -> str:
    """The status a `preprocess --all` run printed for `<trait>/<cohort>` (`[k/N] item  status`)."""
    lines = (ln.split("] ", 1)[-1] for ln in output.splitlines() if ln.startswith("["))
    return next(ln.split(None, 1)[1] for ln in lines if ln.startswith(cohort + " "))


def _files(folder: Path) -> set[Path]:
    return {p for p in folder.rglob("*") if p.is_file()}


# ---- writes outside --out --------------------------------------------------------------------


@pytest.mark.parametrize("field", ["trait", "cohort"])
def test_a_recipe_name_with_dot_dot_writes_nothing_outside_out(bench, field):
    before = _files(bench.parent)
    _edit_recipe(bench, {field: "../../escaped"})
    result = _tree(bench)
    assert result.exit_code == 1, result.output
    line = _status(result.output, "Asthma/GSE100001")
    assert "failed" in line and "escape" in line
    written = _files(bench.parent) - before
    assert all(bench / "out" in p.parents for p in written), sorted(written)
    assert _status(result.output, "Asthma/GSE100002").startswith(
        "usable"
    )  # the other cohorts finish


def test_every_name_source_is_checked_before_a_write(bench, tmp_path):
    synonyms = load_synonyms(bench / "metadata/gene_synonym.json")
    cohort = bench / "input/GEO/Asthma/GSE100001"
    with pytest.raises(UnsafeNameError):  # the CLI's or the notebook's --trait
        preprocess_cohort(cohort, "../x", synonyms, tmp_path / "out", recipe=_recipe_path(bench))
    # a recipe file whose name is unsafe (the cohort name comes from it in --all)
    shutil.copy(_recipe_path(bench), bench / "recipes/Asthma/...json")
    assert "escape" in _tree(bench).output
    # a trait folder inside --out that is a link to elsewhere
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (tmp_path / "out").mkdir(exist_ok=True)
    os.symlink(outside, tmp_path / "out" / "Asthma")
    with pytest.raises(UnsafeNameError, match="outside the output folder"):
        preprocess_cohort(cohort, "Asthma", synonyms, tmp_path / "out", recipe=_recipe_path(bench))
    assert not list(outside.iterdir())
    # Xena folder names reach only the record's note; its cohort ID is always "Xena"
    xena = bench / "input/TCGA/TCGA_Psoriasis_(DEMO)"
    outcome = preprocess_cohort(xena, "Psoriasis", synonyms, tmp_path / "xena")
    assert outcome.cohort == "Xena" and (tmp_path / "xena/Psoriasis/Xena.csv").exists()


def test_output_path_resolves_links_and_refuses_escapes(tmp_path):
    assert output_path(tmp_path, "T", "gene_data", "G.csv") == tmp_path / "T/gene_data/G.csv"
    for parts in (("..", "x"), ("T", "../x"), ("T/..",), ("a\x00b",)):
        with pytest.raises(UnsafeNameError):
            output_path(tmp_path, *parts)


def test_recipe_input_paths_stay_inside_the_input_tree(bench):
    _edit_recipe(
        bench, {"input": {"gene_column": "Gene Symbol", "platform": "../../../../../etc/passwd"}}
    )
    result = _tree(bench)
    assert "lies outside the input tree" in result.output and result.exit_code == 1
    platforms = bench / "input/GEO/platforms"
    platforms.mkdir()
    shutil.copy(
        bench / "input/GEO/Asthma/GSE100001/GSE100001_family.soft.gz", platforms / "GPL.soft.gz"
    )
    _edit_recipe(
        bench, {"input": {"gene_column": "Gene Symbol", "platform": "../../platforms/GPL.soft.gz"}}
    )
    assert _status(_tree(bench).output, "Asthma/GSE100001").startswith(
        "usable"
    )  # inside the tree: allowed


# ---- one bad cohort fails alone ---------------------------------------------------------------


def test_duplicated_probe_ids_fail_that_cohort_with_the_ids(bench):
    path = _matrix(bench)
    lines = _gz_lines(path)
    begin = lines.index("!series_matrix_table_begin")
    lines.insert(begin + 3, lines[begin + 2])  # the first probe again
    _write_gz_lines(path, lines)
    result = _tree(bench)
    assert result.exit_code == 1
    line = _status(result.output, "Asthma/GSE100001")
    assert "repeats probe IDs ('1000_at')" in line and "GSE100001_series_matrix" in line
    assert not (bench / "out/Asthma/gene_data/GSE100001.csv").exists()
    assert "GSE100001" not in json.loads((bench / "out/Asthma/cohort_info.json").read_text())
    assert (bench / "out/Asthma/GSE100002.csv").exists()


def test_duplicated_sample_ids_are_refused_not_linked_twice(bench):
    path = _matrix(bench)
    lines = _gz_lines(path)
    at = next(i for i, ln in enumerate(lines) if ln.startswith("!Sample_geo_accession"))
    cells = lines[at].split("\t")
    cells[2] = cells[1]
    lines[at] = "\t".join(cells)
    _write_gz_lines(path, lines)
    with pytest.raises(GEOFormatError, match="repeats sample IDs .*'GSM7000100'"):
        read_series_matrix(path)


def test_a_field_of_the_wrong_type_fails_that_cohort_only(bench):
    _edit_recipe(
        bench, {"variables": {"trait": {"row": "0", "rules": [{"match": "case", "value": 1}]}}}
    )
    result = _tree(bench)
    assert result.exit_code == 1
    assert "trait.row must be a whole row number" in result.output
    assert _status(result.output, "Asthma/GSE100002").startswith("usable")


def test_an_unexpected_error_in_one_cohort_is_that_cohorts_failure(bench, monkeypatch):
    import genotex.preprocessing._tree as tree

    def broken(*args, **kwargs):
        raise KeyError("a bug")

    monkeypatch.setattr(tree, "preprocess_tcga", broken)
    statuses = dict(
        (f"{job.trait}/{job.cohort}", status)
        for job, status in preprocess_tree(
            bench / "input",
            bench / "out",
            load_synonyms(bench / "metadata/gene_synonym.json"),
            bench / "metadata/task_info.json",
            recipes=bench / "recipes",
        )
    )
    outcome = statuses["Psoriasis/Xena"]
    assert outcome.failed and outcome.unexpected
    assert outcome.text.startswith("failed: unexpected KeyError")
    assert statuses["Psoriasis/GSE100005"].kind == "usable"


def test_a_recipe_stored_under_another_cohort_overwrites_nothing(bench):
    first = _tree(bench)
    assert first.exit_code == 0, first.output
    b_csv = bench / "out/Asthma/GSE100002.csv"
    stamp = b_csv.stat().st_mtime_ns
    _edit_recipe(bench, {"cohort": "GSE100002"})  # stored as GSE100001.json
    result = _tree(bench)
    line = _status(result.output, "Asthma/GSE100001")
    assert "failed" in line and "must match its path" in line
    assert b_csv.stat().st_mtime_ns != stamp  # rewritten by its own recipe, identically
    records = json.loads((bench / "out/Asthma/cohort_info.json").read_text())
    assert "GSE100001" not in records and records["GSE100002"]["is_usable"]


def test_one_cohort_mode_checks_the_recipes_cohort_against_the_folder(bench, tmp_path):
    recipe = _edit_recipe(bench, {"cohort": "GSE100002"})
    synonyms = load_synonyms(bench / "metadata/gene_synonym.json")
    with pytest.raises(
        RecipeError, match="is for the cohort 'GSE100002', not the folder 'GSE100001'"
    ):
        preprocess_cohort(
            bench / "input/GEO/Asthma/GSE100001", "Asthma", synonyms, tmp_path, recipe=recipe
        )


# ---- silent corruption ------------------------------------------------------------------------


def test_infinite_cells_are_missing_values_never_huge_numbers(bench):
    path = _matrix(bench)
    lines = _gz_lines(path)
    begin = lines.index("!series_matrix_table_begin")
    cells = lines[begin + 2].split("\t")
    cells[1], cells[2] = "Inf", "-inf"
    lines[begin + 2] = "\t".join(cells)
    _write_gz_lines(path, lines)
    assert _tree(bench).exit_code == 0
    for csv in (bench / "out/Asthma/gene_data/GSE100001.csv", bench / "out/Asthma/GSE100001.csv"):
        text = csv.read_text()
        assert "e+308" not in text and "inf" not in text.lower()
    genes = pd.read_csv(bench / "out/Asthma/gene_data/GSE100001.csv", index_col=0)
    assert np.isfinite(genes.to_numpy()).all()  # a missing probe counts as 0 in its gene's sum


def test_the_linked_tables_rows_equal_the_records_sample_size(bench):
    assert _tree(bench).exit_code == 0
    for info in (bench / "out").rglob("cohort_info.json"):
        for cohort, record in json.loads(info.read_text()).items():
            linked = info.parent / f"{cohort}.csv"
            if linked.exists():
                frame = pd.read_csv(linked, index_col=0)
                assert len(frame) == record["sample_size"] and frame.index.is_unique


# ---- silently ignored mistakes, hangs -----------------------------------------------------------


def test_a_misspelled_section_is_refused_naming_the_recipe(bench):
    path = _recipe_path(bench)
    data = json.loads(path.read_text())
    data["variable"] = data.pop("variables")
    path.write_text(json.dumps(data))
    with pytest.raises(RecipeError, match=r"unknown fields \['variable'\]") as refused:
        Recipe.read(path)
    assert str(path) in str(refused.value)


def test_a_catastrophic_regex_is_stopped_not_hung(bench):
    rule = {"match": "(a|aa)+$", "how": "regex", "value": 1}
    path = _recipe_path(bench)
    data = json.loads(path.read_text())
    data["variables"]["trait"] = {"row": 0, "part": "whole", "rules": [rule]}
    path.write_text(json.dumps(data))
    lines = _gz_lines(_matrix(bench))
    at = next(i for i, ln in enumerate(lines) if ln.startswith("!Sample_characteristics_ch1"))
    cells = lines[at].split("\t")
    cells[1] = '"' + "a" * 40 + '!"'
    lines[at] = "\t".join(cells)
    _write_gz_lines(_matrix(bench), lines)
    started = time.monotonic()
    result = _tree(bench)
    assert time.monotonic() - started < 60
    assert "catastrophic backtracking" in result.output and result.exit_code == 1


# ---- messages and leftovers -------------------------------------------------------------------


def test_a_platform_error_names_the_soft_file(bench):
    _edit_recipe(bench, {"input": {"gene_column": "No Such Column"}})
    result = _tree(bench)
    assert "GSE100001_family.soft.gz" in result.output and "No Such Column" in result.output


def test_leftovers_of_a_killed_run_are_cleaned_but_not_a_live_runs(tmp_path):
    folder = tmp_path / "out" / "T"
    folder.mkdir(parents=True)
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    stale = folder / f".G.csv.{dead.stdout.strip()}-abc123.tmp"
    live = folder / f".G.csv.{os.getpid()}-def456.tmp"
    other = folder / ".notes.tmp"
    for path in (stale, live, other):
        path.write_text("x")
    assert remove_stale_temporaries(tmp_path / "out") == [stale]
    assert live.exists() and other.exists() and not stale.exists()


# ---- GEO readers --------------------------------------------------------------------------------


def test_auto_gene_column_is_not_fooled_on_gpl96(shared):
    gpl96 = read_soft(shared / "data/real/geo/platforms/GPL96.txt.gz").platform("GPL96")
    synonyms = load_synonyms(shared / "fixtures/preprocess/metadata/gene_synonym.json")
    choice = explain_gene_column(gpl96, synonyms.values())
    assert choice.column == "Gene Symbol"
    assert "Target Description" in choice.reason  # passed over: every row yields FEA
    hits, dominant = choice.scores["Target Description"]
    assert dominant > 0.5 and hits >= choice.scores["Gene Symbol"][0]  # it had more hits


def _soft(tmp_path: Path, text: str, name: str = "GSE9_family.soft") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_soft_values_as_geo_writes_them(tmp_path):
    path = _soft(
        tmp_path,
        (
            "^SERIES = GSE9\n!Series_title = A title  \t\n!Series_summary =\n"
            "^PLATFORM = GPL9\n!Platform_data_row_count = 2\n!platform_table_begin\nID\tSYM\n"
            "p1\tTP53\np2\tEGFR\n!platform_table_end\n"
            "^SAMPLE = GSM1\n!Sample_characteristics_ch1 = tissue: liver\n"
            "!Sample_characteristics_ch1 =\n!Sample_characteristics_ch1 = age: 5\n"
            "^SAMPLE = GSM2\n!Sample_characteristics_ch1 = tissue: lung\n"
            "!Sample_characteristics_ch1 = sex: F\n!Sample_characteristics_ch1 = age: 7\n"
        ),
    )
    soft = read_soft(path)
    assert soft.series["!Series_title"] == ["A title"] and soft.series["!Series_summary"] == [""]
    rows = soft.characteristics()
    assert list(rows["GSM1"]) == ["tissue: liver", None, "age: 5"]  # the empty value keeps its row
    assert list(rows["GSM2"]) == ["tissue: lung", "sex: F", "age: 7"]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "is empty"),
        ("^DATABASE = Geo\n^DATASET = GDS507\n!dataset_table_begin\n", "GEO DataSet \\(GDS\\)"),
        ("^SAMPLE = GSM1\n!Sample_title = x\n", "single-sample \\(GSM\\)"),
        ("ID\tVALUE\nx\t1\n", "not a SOFT file"),
        (
            "^PLATFORM = GPL9\n!Platform_data_row_count = 3\n!platform_table_begin\n"
            "ID\tS\na\tb\n!platform_table_end\n",
            "declares 3",
        ),
    ],
)
def test_what_is_not_a_family_soft_is_one_clear_error(tmp_path, text, message):
    with pytest.raises(GEOFormatError, match=message) as refused:
        read_soft(_soft(tmp_path, text))
    assert "GSE9_family.soft" in str(refused.value)


def test_a_platform_without_a_table_is_listed_and_a_clear_error(tmp_path):
    path = _soft(
        tmp_path,
        "^SERIES = GSE9\n^PLATFORM = GPL20301\n!Platform_technology = high-throughput sequencing\n",
    )
    soft = read_soft(path)
    assert soft.tableless == ["GPL20301"]
    with pytest.raises(GEOFormatError, match="without a table"):
        soft.platform("GPL20301")
    with pytest.raises(GEOFormatError, match="declares GPL20301 without one"):
        soft.platform()


def test_annot_files_are_named_from_their_header(tmp_path):
    path = _soft(
        tmp_path,
        (
            "^Annotation\n!Annotation_platform = GPL96\n!platform_table_begin\nID\tGene symbol\n"
            "1007_s_at\tDDR1\n!platform_table_end\n"
        ),
        name="GPL96.annot",
    )
    assert list(read_soft(path).platforms) == ["GPL96"]


def test_repeated_column_names_follow_pandas(tmp_path):
    header = ["ID", "A", "A", "A.1", "B", "B"]
    csv = tmp_path / "t.tsv"
    csv.write_text("\t".join(header) + "\n" + "\t".join("x" * len(header)) + "\n")
    assert unique_names(header) == list(pd.read_csv(csv, sep="\t").columns)


# ---- property test: generated recipes and damaged matrices --------------------------------------

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_names = st.sampled_from(["Asthma", "GSE100001", "../x", "a/b", "", "..", "ok_name", 3, None])
_values = st.one_of(
    st.integers(-2, 3), st.floats(allow_nan=True), st.text(max_size=4), st.none(), st.booleans()
)
_rules = st.lists(
    st.fixed_dictionaries(
        {"match": st.sampled_from(["case", "control", "(a|b", ".+", 5]), "value": _values},
        optional={"how": st.sampled_from(["regex", "exact", "x"])},
    ),
    max_size=3,
)
_variable = st.fixed_dictionaries(
    {},
    optional={
        "row": st.one_of(st.integers(-2, 6), st.text(max_size=2)),
        "rules": _rules,
        "numeric": _values,
        "available": _values,
        "constant": _values,
        "part": st.sampled_from(["whole", "x"]),
    },
)
_recipes = st.fixed_dictionaries(
    {"trait": _names, "cohort": _names},
    optional={
        "variables": st.dictionaries(
            st.sampled_from(["trait", "age", "gender", "bmi"]), _variable, max_size=3
        ),
        "input": st.fixed_dictionaries(
            {},
            optional={
                "gene_column": st.sampled_from(["auto", "Gene Symbol", "X"]),
                "matrix": st.sampled_from(["../../x", "nope.txt", 3]),
            },
        ),
        "gene": st.fixed_dictionaries({}, optional={"usable": _values}),
        "extra": st.just(1),
    },
)
_damage = st.lists(
    st.tuples(
        st.sampled_from(["drop", "dup", "blank", "inf", "text", "short", "cut"]), st.integers(0, 12)
    ),
    max_size=3,
)


def _damaged(lines: list[str], damage) -> list[str]:
    lines = list(lines)
    begin = lines.index("!series_matrix_table_begin")
    for kind, at in damage:
        i = min(begin + 2 + at, len(lines) - 2)
        cells = lines[i].split("\t")
        if kind == "drop":
            del lines[i]
        elif kind == "dup":
            lines.insert(i, lines[i])
        elif kind == "blank":
            lines[i] = ""
        elif kind in ("inf", "text") and len(cells) > 2:
            cells[2] = "inf" if kind == "inf" else "n/a?"
            lines[i] = "\t".join(cells)
        elif kind == "short":
            lines[i] = "\t".join(cells[:3])
        elif kind == "cut":
            lines = lines[:i]
    return lines


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(recipe=_recipes, damage=_damage)
def test_generated_recipes_and_damaged_matrices_never_escape_crash_or_corrupt(
    pristine, tmp_path_factory, recipe, damage
):
    work = tmp_path_factory.mktemp("prop")
    cohort = work / "input/GEO/Asthma/GSE100001"
    cohort.mkdir(parents=True)
    source = pristine / "input/GEO/Asthma/GSE100001"
    shutil.copy(source / "GSE100001_family.soft.gz", cohort)
    _write_gz_lines(
        cohort / "GSE100001_series_matrix.txt.gz",
        _damaged(_gz_lines(source / "GSE100001_series_matrix.txt.gz"), damage),
    )
    recipe_path = work / "recipe.json"
    recipe_path.write_text(json.dumps(recipe))
    out = work / "out"
    synonyms = load_synonyms(pristine / "metadata/gene_synonym.json")
    try:
        preprocess_cohort(cohort, "Asthma", synonyms, out, recipe=recipe_path)
    except GenotexError:
        pass  # the library's own errors are the expected answer to bad input
    written = _files(work) - {recipe_path} - _files(cohort)
    assert all(out in p.parents for p in written), sorted(written)
    for csv in (p for p in written if p.suffix == ".csv"):
        frame = pd.read_csv(csv, index_col=0)
        assert frame.index.is_unique and frame.columns.is_unique, csv
        assert not frame.empty and not np.isinf(frame.to_numpy(dtype=float)).any(), csv
    assert not [p for p in written if p.name.endswith(".tmp")]
    if (out / "Asthma/GSE100001.csv").exists():
        record = json.loads((out / "Asthma/cohort_info.json").read_text())["GSE100001"]
        assert len(pd.read_csv(out / "Asthma/GSE100001.csv")) == record["sample_size"]


def test_a_xena_expression_table_without_samples_is_one_sentence(bench, tmp_path):
    import gzip

    from click.testing import CliRunner

    from genotex.cli import main

    xena = bench / "input/TCGA/TCGA_Psoriasis_(DEMO)"
    table = next(xena.glob("*PANCAN*"))
    with gzip.open(table, "rt") as source:
        genes = [line.split("\t", 1)[0].rstrip("\n") for line in source]
    with gzip.open(table, "wt") as out:  # the gene ID column alone: a cohort of no sample
        out.write("\n".join(genes) + "\n")
    result = CliRunner().invoke(
        main,
        ["preprocess", str(xena), "--trait", "Psoriasis", "--out", str(tmp_path / "out")]
        + ["--synonyms", str(bench / "metadata" / "gene_synonym.json")],
    )
    assert result.exit_code == 1
    assert "holds no sample" in result.output and table.name in result.output
    assert "unexpected" not in result.output and "Traceback" not in result.output


def test_preprocess_cohort_takes_the_synonyms_file_as_a_path(bench, tmp_path):
    """#36 item 11: a synonyms path given as a string ended in AttributeError."""
    xena = bench / "input/TCGA/TCGA_Psoriasis_(DEMO)"
    path = bench / "metadata" / "gene_synonym.json"
    from_path = preprocess_cohort(xena, "Psoriasis", str(path), tmp_path / "a")
    from_table = preprocess_cohort(xena, "Psoriasis", load_synonyms(path), tmp_path / "b")
    assert from_path.record == from_table.record
    written = (tmp_path / "a/Psoriasis/Xena.csv").read_bytes()
    assert written == (tmp_path / "b/Psoriasis/Xena.csv").read_bytes()


def test_a_transposed_gene_table_is_refused_not_emptied():
    """#36 item 11: normalize_gene_table(probes.T, ...) returned an empty table silently."""
    import pandas as pd

    from genotex.core import GenotexError
    from genotex.preprocessing import normalize_gene_table

    synonyms = {"TP53": "TP53", "P53": "TP53", "BRCA1": "BRCA1"}
    genes = pd.DataFrame(
        [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], index=["TP53", "p53", "BRCA1"], columns=["S1", "S2"]
    )
    table = normalize_gene_table(genes, synonyms)
    assert list(table.index) == ["BRCA1", "TP53"] and table.loc["TP53", "S1"] == 2.0  # (1+3)/2
    with pytest.raises(GenotexError, match="looks transposed"):
        normalize_gene_table(genes.T, synonyms)
    unknown = pd.DataFrame([[1.0]], index=["NOTAGENE"], columns=["S1"])
    assert normalize_gene_table(unknown, synonyms).empty  # nothing maps either way: empty

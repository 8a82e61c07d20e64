"""The statistics beside the parity numbers, each against an independent computation."""

from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pytest
from sklearn.metrics import average_precision_score, roc_auc_score

from genotex.evaluation import (
    BootstrapSettings,
    EvalOptions,
    EvalReport,
    ReportError,
    bootstrap_interval,
    compare_reports,
    evaluate,
    exact_ranking_scores,
    gsea_prerank,
    leaderboard,
    load_report,
    paired_comparison,
    published_rows,
    render_leaderboard,
)


def test_the_bootstrap_matches_a_direct_percentile_implementation():
    values = np.random.default_rng(2).uniform(0, 1, 30)
    settings = BootstrapSettings(resamples=10_000, seed=0)
    ours = bootstrap_interval(values.tolist(), settings)
    # resample the mean 10,000 times by hand (another random stream) and take the percentiles
    means = values[np.random.default_rng(9).integers(0, 30, (10_000, 30))].mean(axis=1)
    low, high = np.percentile(means, [2.5, 97.5])
    assert abs(ours.low - low) < 0.01 and abs(ours.high - high) < 0.01
    assert bootstrap_interval(values.tolist(), settings) == ours  # one seed, one answer


def test_too_few_items_give_no_interval_with_the_reason_and_no_warning():
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        short = bootstrap_interval([1.0, math.nan, 2.0], BootstrapSettings())
        equal = bootstrap_interval([3.0, 3.0, 3.0, 3.0], BootstrapSettings())
    assert not short.defined and "2 item(s)" in short.note
    assert (equal.low, equal.high) == (3.0, 3.0)


def _exact_wilcoxon_p(diffs):
    """Two-sided exact p by enumerating every sign assignment (no zeros, no ties)."""
    ranks = np.argsort(np.argsort(np.abs(diffs))) + 1
    observed = ranks[np.asarray(diffs) > 0].sum()
    sums = [
        sum(r for r, s in zip(ranks, signs, strict=True) if s)
        for signs in itertools.product([0, 1], repeat=len(diffs))
    ]
    sums = np.array(sums)
    low, high = np.mean(sums <= observed), np.mean(sums >= observed)
    return min(1.0, 2 * min(low, high))


def test_wilcoxon_against_the_exact_distribution_by_enumeration():
    # a textbook-style paired sample: ten differences, no zeros, no tied magnitudes
    a = {f"p{i}": v for i, v in enumerate([7.1, 6.2, 8.4, 5.0, 9.9, 6.6, 7.7, 8.1, 5.5, 6.9])}
    diffs = [0.3, -1.1, 2.2, 0.8, 1.9, -0.4, 1.4, 2.6, 0.5, 1.7]
    b = {k: v + d for (k, v), d in zip(a.items(), diffs, strict=True)}
    row = paired_comparison("f1", a, b, BootstrapSettings(resamples=1000))
    assert row.p_value == pytest.approx(_exact_wilcoxon_p(np.array(diffs)), rel=1e-9)
    assert (row.wins, row.ties, row.losses) == (8, 0, 2)
    assert row.mean_difference == pytest.approx(np.mean(diffs))


def test_zero_differences_are_split_not_dropped():
    from scipy.stats import wilcoxon

    a = {f"p{i}": 0.0 for i in range(8)}
    b = {"p0": 1.0, "p1": 2.0, "p2": 3.0, "p3": -0.5, "p4": 0.0, "p5": 0.0, "p6": 4.0, "p7": 0.0}
    row = paired_comparison("auroc", a, b, BootstrapSettings(resamples=1000))
    diffs = [b[k] for k in sorted(b)]
    assert row.p_value == pytest.approx(wilcoxon(diffs, zero_method="zsplit").pvalue)
    # by hand: |d| ranks with the three zeros at ranks 1-3 (2 each), then 0.5, 1, 2, 3, 4 at 4-8;
    # zsplit gives each sign half of the zeros' ranks: R- = 4 + 3 = 7 (wilcox would drop them: 1)
    assert wilcoxon(diffs, zero_method="zsplit").statistic == 7.0
    assert row.ties == 3


@pytest.mark.parametrize("seed", range(6))
def test_exact_auroc_and_ap_agree_with_scikit_learn(seed):
    rng = np.random.default_rng(seed)
    universe = [f"G{i}" for i in range(300)]
    ref = list(rng.choice(universe, 25, replace=False))
    pred = list(rng.choice(universe, 40, replace=False)) + ["NEW1", "NEW2"]  # outside: added
    genes = universe + ["NEW1", "NEW2"]
    scores = {g: len(pred) - i for i, g in enumerate(pred)}
    y_true = [g in ref for g in genes]
    y_score = [scores.get(g, 0) for g in genes]
    ours = exact_ranking_scores(pred, ref, universe)
    assert ours["auroc_exact"] == pytest.approx(roc_auc_score(y_true, y_score), abs=1e-12)
    assert ours["average_precision"] == pytest.approx(
        average_precision_score(y_true, y_score), abs=1e-12
    )


def test_exact_scores_are_undefined_with_the_reason():
    assert exact_ranking_scores([], ["A"], ["A", "B"])["note"] == "empty prediction"
    none = exact_ranking_scores(["A"], ["Z"], ["A", "B"])
    assert none["auroc_exact"] is None and none["reference_outside"] == 1


def test_gsea_es_against_a_hand_worked_running_sum():
    # ranking G1 > G2 > ... > G6 with scores 6..1 and 4 unranked genes at 0; set {G2, G5, G9}
    ranking = {f"G{i}": float(7 - i) for i in range(1, 7)} | {f"G{i}": 0.0 for i in range(7, 11)}
    members = ["G2", "G5", "G9"]
    # weighted running sum (weight 1): a hit adds |r|/sum|r of hits| = 5/7, 2/7, 0/7;
    # a miss subtracts 1/7 (7 misses)
    # in rank order G1..G6, then the tied zeros G10, G7, G8, G9
    steps = [-1 / 7, 5 / 7, -1 / 7, -1 / 7, 2 / 7, -1 / 7, -1 / 7, -1 / 7, -1 / 7, 0.0]
    expected = np.cumsum(steps).max()
    assert expected == pytest.approx(4 / 7)  # reached after G2, and again after G5
    result = gsea_prerank(ranking, members, permutations=200, seed=1)
    assert result["es"] == pytest.approx(expected, abs=1e-9)
    again = gsea_prerank(ranking, members, permutations=200, seed=1)
    assert again == result  # one seed, one answer


@pytest.fixture(scope="module")
def saved(eval_fixtures, tmp_path_factory):
    """case1 evaluated with intervals and exact statistics, the reference as a perfect run."""
    folder = tmp_path_factory.mktemp("saved")
    case = eval_fixtures / "case1"
    info = case / "ref" / "metadata" / "task_info.json"
    options = EvalOptions(ci=True, exact=True, bootstrap=BootstrapSettings(resamples=2000))
    runs = {}
    for name, pred in (("agent", case / "pred" / "output"), ("perfect", case / "ref" / "output")):
        report = evaluate(pred, case / "ref" / "output", info, options=options)
        (folder / f"{name}.json").write_text(report.to_json())
        runs[name] = folder / f"{name}.json"
    return runs


def test_ci_json_has_a_sibling_interval_for_every_average(saved):
    data = json.loads(saved["agent"].read_text())
    overall = data["analysis"]["categorized"]["Overall"]
    for metric in ("f1", "auroc", "auroc_exact", "average_precision", "gsea_prerank_nes"):
        low, high = overall[f"{metric}_ci"]
        assert low <= overall[metric] <= high
    assert data["selection"]["filtering"]["average"]["f1_ci"] is not None
    assert "composite_similarity_correlation_ci" in data["preprocessing"]["linked"]["average"]
    assert data["run"]["bootstrap"] == {"resamples": 2000, "seed": 0, "confidence": 0.95}
    problem = data["analysis"]["per_problem"]["Obesity|None"]
    assert set(problem["gsea_prerank"]) == {"es", "nes", "pval"}


@pytest.mark.parametrize(
    ("bounds", "says"),
    [(["0.2", 0.9], "not null or two finite numbers"), ([0.9, 0.2], "lower bound above")],
    ids=["string-bound", "inverted"],
)
def test_a_saved_interval_that_is_not_one_is_one_sentence(saved, tmp_path, bounds, says):
    from click.testing import CliRunner

    from genotex.cli import main

    data = json.loads(saved["agent"].read_text())
    data["analysis"]["categorized"]["Overall"]["auroc_ci"] = bounds
    edited = tmp_path / "edited.json"
    edited.write_text(json.dumps(data))
    with pytest.raises(ReportError, match=says):
        load_report(edited)
    for command in (["leaderboard", str(edited)], ["report", str(edited), "-o", str(tmp_path)]):
        result = CliRunner().invoke(main, command)
        assert result.exit_code != 0 and says in result.output, (command, result.output)
        assert "Traceback" not in result.output and "unexpected" not in result.output


def test_compare_says_the_perfect_run_is_better_and_refuses_mixed_references(
    saved, eval_fixtures, tmp_path
):
    a, b = load_report(saved["agent"]), load_report(saved["perfect"])
    comparison = compare_reports(a, b, settings=BootstrapSettings(resamples=1000))
    auroc = next(r for r in comparison.sections["analysis (per problem)"] if r.metric == "auroc")
    assert auroc.mean_difference > 0 and auroc.interval.low > 0 and auroc.p_value < 0.001
    other = json.loads(saved["agent"].read_text())
    other["run"]["provenance"]["reference_digest"]["regress"]["sha256"] = "0" * 64
    with pytest.raises(ReportError, match="another reference"):
        compare_reports(a, EvalReport.from_dict(other), names=("a", "b"))
    legacy = json.loads((eval_fixtures / "case1" / "expected.json").read_text())
    with pytest.raises(ReportError, match="without reference digests"):
        compare_reports(a, EvalReport.from_dict(legacy))
    other["run"]["provenance"]["task_info_sha256"] = "1" * 64
    with pytest.raises(ReportError, match="another task_info"):
        compare_reports(a, EvalReport.from_dict(other))


def test_the_leaderboard_prints_the_papers_rows_exactly(saved, shared):
    import csv

    text = render_leaderboard(
        leaderboard([saved["agent"], saved["perfect"]], paper="end-to-end"), "csv"
    )
    rows = {r["run"]: r for r in csv.DictReader(text.splitlines())}
    with open(shared / "data" / "paper" / "genotex_paper_table2.csv", encoding="utf-8") as handle:
        for paper in csv.DictReader(handle):
            row = rows[f"{paper['method']} (published)"]
            assert row["precision"] == paper["precision"] and row["auroc"] == paper["auroc"]
            assert row["success"] == paper["success"] and row["published"] == "true"
    # beside the paper, coverage is counted against the paper's 1,384 problems
    assert (rows["agent"]["problems_scored"], rows["agent"]["problems_total"]) == ("24", "1384")
    # numeric and unrounded, the interval's bounds in their own columns
    agent = load_report(saved["agent"])
    overall = agent.analysis_by_category()["Overall"]
    assert float(rows["agent"]["auroc"]) == overall["auroc"]
    low, high = (float(rows["agent"][k]) for k in ("auroc_low", "auroc_high"))
    assert low <= overall["auroc"] <= high
    assert rows["Human expert (published)"]["trait_pred_accuracy"] == ""  # missing: empty
    text_board = render_leaderboard(leaderboard([saved["agent"]], paper="end-to-end"))
    assert "24/1384 (partial)" in text_board and "0.82 [" in text_board
    alone = render_leaderboard(leaderboard([saved["agent"]]), "csv")
    assert next(csv.DictReader(alone.splitlines()))["problems_total"] == "24"
    runs = [r["run"] for r in csv.DictReader(text.splitlines())]
    assert runs.index("perfect") == 0  # runs first, sorted by AUROC
    assert len(published_rows("analysis")) == 9
    latex = render_leaderboard(leaderboard([saved["agent"]], paper="analysis"), "latex")
    assert "\\toprule" in latex and "\\textbf{" in latex
    assert "GenoAgent (published) & agent" in latex and "(Ours)" not in latex  # named as it is


def test_reference_digests_are_cached_and_follow_changes(eval_fixtures, tmp_path, monkeypatch):
    import hashlib
    import shutil

    from genotex.core import DigestMemo, _digest
    from genotex.evaluation import _provenance

    monkeypatch.setattr(_digest, "RACY_SECONDS", 0.0)  # the copies are fresh: remember them
    case = tmp_path / "case"
    shutil.copytree(eval_fixtures / "case4", case)
    calls = []
    real = _digest.file_sha256
    monkeypatch.setattr(_digest, "file_sha256", lambda path: calls.append(path) or real(path))
    memo = DigestMemo(tmp_path / "digests")
    ref = case / "ref" / "output"
    files = sum(1 for p in (ref / "preprocess").rglob("*") if p.is_file())
    first = _provenance.tree_digest(ref / "preprocess", memo=memo)
    assert first["files"] == files and len(calls) == files
    again = _provenance.tree_digest(ref / "preprocess", memo=memo)
    assert again == first and len(calls) == files  # nothing re-hashed
    changed = next(p for p in (ref / "preprocess").rglob("*.csv"))
    changed.write_text(changed.read_text() + "\n")
    third = _provenance.tree_digest(ref / "preprocess", memo=memo)
    assert third["sha256"] != first["sha256"] and len(calls) == files + 1  # only that file
    assert real(changed) == hashlib.sha256(changed.read_bytes()).hexdigest()
    without = _provenance.tree_digest(ref / "preprocess")  # no memo: every file hashed
    assert without == third and not (tmp_path / "cache").exists()


def test_a_lower_p_value_is_the_better_one_in_compare():
    """B's GSEA p = 0.5 against A's p = 0.01 on 8 problems: 8 losses of B, not 8 wins."""
    a = {f"T{i}|None": 0.01 for i in range(8)}
    b = {f"T{i}|None": 0.5 for i in range(8)}
    settings = BootstrapSettings(resamples=200, seed=0)
    row = paired_comparison("gsea_prerank_pval", a, b, settings)
    assert (row.wins, row.ties, row.losses) == (0, 0, 8)
    row = paired_comparison("auroc", a, b, settings)  # higher is better: B wins
    assert (row.wins, row.ties, row.losses) == (8, 0, 0)


def test_the_registry_knows_which_way_each_metric_is_better():
    from genotex.core import METRICS

    assert [name for name, spec in METRICS.items() if not spec.higher_is_better] == [
        "gsea_prerank_pval"
    ]
    assert METRICS["gsea_prerank_pval"].best([0.2, 0.01, 0.5]) == 0.01
    assert METRICS["auroc"].best([0.2, 0.91, 0.5]) == 0.91


def test_a_partial_run_beside_the_paper_is_warned_on_stderr_and_in_the_report(saved, tmp_path):
    from click.testing import CliRunner

    from genotex.cli import main
    from genotex.evaluation import write_report

    result = CliRunner().invoke(main, ["leaderboard", str(saved["agent"]), "--paper", "end-to-end"])
    assert result.exit_code == 0
    assert "genotex: warning: agent scored 24 of the 1,384 problems" in result.stderr
    assert "genotex: warning" not in result.stdout  # the table alone goes to stdout
    page = write_report(load_report(saved["agent"]), tmp_path / "report").read_text()
    assert "this run scored 24 of the 1,384 problems the published rows" in page
    assert "24/1384 (partial)" in page


def test_run_names_with_special_characters_are_escaped_in_latex_and_markdown(saved, tmp_path):
    import re

    odd = tmp_path / "a#b~c^d\\e_f%g&h$i{j}|k*l.json"
    odd.write_bytes(saved["agent"].read_bytes())
    board = leaderboard([odd])
    latex = render_leaderboard(board, "latex")
    # escaped by hand, character by character
    expected = r"a\#b\textasciitilde{}c\textasciicircum{}d\textbackslash{}e\_f\%g\&h\$i\{j\}|k*l"
    row = next(line for line in latex.splitlines() if line.startswith("a"))
    assert row.split(" & ")[0] == expected
    markdown = render_leaderboard(board, "markdown")
    header, _, row = markdown.splitlines()[:3]
    unescaped = re.compile(r"(?<!\\)\|")
    assert len(unescaped.findall(row)) == len(unescaped.findall(header))  # no extra column
    assert row.startswith(r"| a#b~c^d\\e_f%g&h$i{j}\|k\*l |")


def test_each_leaderboard_format_is_complete_and_valid_on_its_own(saved, tmp_path):
    import csv
    import re

    from click.testing import CliRunner
    from markdown_it import MarkdownIt

    from genotex.cli import main

    runs = [str(saved["agent"]), str(saved["perfect"])]
    argv = ["leaderboard", *runs, "--paper", "--label", "my agent", "--label", "oracle"]
    outputs = {}
    for fmt in ("markdown", "latex", "csv"):
        result = CliRunner().invoke(main, [*argv, "--format", fmt])
        assert result.exit_code == 0, result.output
        outputs[fmt] = (result.stdout, result.stderr)
    # Markdown, as GitHub renders it: one table of every row, the note after it, numbers right
    page = MarkdownIt("commonmark").enable("table").render(outputs["markdown"][0])
    assert page.count("<table>") == 1 and page.count("<tr>") == 2 + 18 + 1  # runs, rows, header
    assert "<p>Published rows:" in page and 'style="text-align:right"' in page
    assert ">my agent</td>" in page
    # LaTeX: the table alone on stdout (notes on stderr), every row as wide as the header
    latex, notes = outputs["latex"]
    lines = latex.strip().splitlines()
    assert lines[0].startswith(r"\begin{tabular}") and lines[-1] == r"\end{tabular}"
    widths = {len(re.split(r"(?<!\\)&", line)) for line in lines if line.endswith(r"\\")}
    assert widths == {len(lines[0].split("{")[2].rstrip("}"))}  # the column spec's width
    assert " - " not in latex and "--" in latex and "Published rows" in notes
    # CSV: read by pandas as numbers, missing values empty (NaN), no note on stdout
    import io

    import pandas as pd

    table = pd.read_csv(io.StringIO(outputs["csv"][0]))
    assert table["f1"].dtype == float and table["auroc_low"].dtype == float
    assert table.loc[table["run"] == "oracle", "f1"].item() == 100.0
    assert table.loc[table["run"] == "Random (published)", "trait_pred_accuracy"].isna().item()
    assert list(csv.reader(io.StringIO(outputs["csv"][0])))[0][0] == "run"


def test_a_tie_as_printed_is_marked_best_on_both_sides(saved, tmp_path):
    data = json.loads(saved["agent"].read_text())
    twin = json.loads(saved["agent"].read_text())
    for problem in twin["analysis"]["per_problem"].values():  # a hair better, same as printed
        problem["gsea_es"] = problem["gsea_es"] + 0.0004
    (tmp_path / "a.json").write_text(json.dumps(data))
    (tmp_path / "b.json").write_text(json.dumps(twin))
    a, b = (
        load_report(tmp_path / n).analysis_by_category()["Overall"] for n in ("a.json", "b.json")
    )
    assert a["gsea_es"] < b["gsea_es"] and f"{a['gsea_es']:.2f}" == f"{b['gsea_es']:.2f}"
    board = leaderboard([tmp_path / "a.json", tmp_path / "b.json"])
    marked = render_leaderboard(board, "markdown")
    assert marked.count(f"**{b['gsea_es']:.2f}**") == 2


def test_eval_label_names_the_run_in_the_leaderboard_and_the_report(eval_fixtures, tmp_path):
    from click.testing import CliRunner

    from genotex.cli import main
    from genotex.evaluation import write_report
    from tests.conftest import eval_args

    out = tmp_path / "run1.json"
    argv = eval_args(eval_fixtures / "case1", "--json", str(out), "--label", "GPT-4o agent")
    assert CliRunner().invoke(main, argv).exit_code == 0
    assert json.loads(out.read_text())["run"]["label"] == "GPT-4o agent"
    board = render_leaderboard(leaderboard([out]))
    assert board.splitlines()[2].startswith("GPT-4o agent")
    page = write_report(load_report(out), tmp_path / "report").read_text()
    assert "<h1>GPT-4o agent: genotex evaluation report</h1>" in page


def test_to_frame_gives_each_table_as_numbers_a_notebook_can_use(saved):
    """Every value is checked against the saved JSON, read independently of the dataclasses."""
    import math

    raw = json.loads(saved["agent"].read_text())
    report = load_report(saved["agent"])
    problems = report.to_frame("problem")
    assert len(problems) == len(raw["analysis"]["per_problem"])
    for row in problems.itertuples():
        expected = raw["analysis"]["per_problem"][f"{row.trait}|{row.condition}"]
        assert row.f1 == expected["f1"] and row.auroc == expected["auroc"]
    assert problems["f1"].dtype == float and problems["auroc_exact"].dtype == float
    without = problems[problems["status"] == "missing"]
    assert len(without) == 1 and math.isnan(without["auroc_exact"].item())  # NaN, not 0 or None

    traits = report.to_frame("trait").set_index("trait")
    for trait in traits.index:
        values = [
            v["f1"] for k, v in raw["analysis"]["per_problem"].items() if k.split("|")[0] == trait
        ]
        assert traits.loc[trait, "f1"] == pytest.approx(sum(values) / len(values), abs=1e-12)
        assert traits.loc[trait, "df_f1"] == raw["selection"]["filtering"]["per_trait"][trait]["f1"]

    files = report.to_frame("file")
    assert set(files["subtask"]) == {"gene", "clinical", "linked"}
    linked = files[files["subtask"] == "linked"]["composite_similarity_correlation"]
    csc = raw["preprocessing"]["linked"]["average"]["composite_similarity_correlation"]
    assert linked.mean() == pytest.approx(csc, abs=1e-12)
    averages = report.to_frame("average")
    row = averages[(averages["group"] == "Overall") & (averages["metric"] == "auroc")]
    overall = raw["analysis"]["categorized"]["Overall"]
    assert row["average"].item() == overall["auroc"]
    assert [row["ci_low"].item(), row["ci_high"].item()] == overall["auroc_ci"]
    assert report.to_frame("finding")["file"].tolist() == [f["file"] for f in raw["problems_found"]]
    with pytest.raises(ValueError, match="levels: problem, file, trait"):
        report.to_frame("cohort")


def test_compare_names_the_runs_by_label(saved):
    from click.testing import CliRunner

    from genotex.cli import main

    argv = ["compare", str(saved["agent"]), str(saved["perfect"]), "--resamples", "200"]
    result = CliRunner().invoke(main, [*argv, "--label", "GPT-4o", "--label", "o1"])
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("B = o1 against A = GPT-4o:")
    assert "AUROC" in result.stdout and "\nauroc " not in result.stdout  # the tables' labels
    result = CliRunner().invoke(main, [*argv, "--label", "only one"])
    assert result.exit_code == 2 and "give A's, then B's" in result.stderr


def test_the_latex_table_builds_in_a_document_as_a_paper_includes_it(saved, tmp_path):
    """`leaderboard --format latex > table.tex`, `\\input{table.tex}`, pdflatex: the numbers
    are in the PDF. Debian's TeX (installed by .ci/run) builds it; elsewhere it may be absent."""
    import subprocess

    from click.testing import CliRunner
    from pypdf import PdfReader

    from genotex.cli import main
    from tests.conftest import require_program

    pdflatex = require_program("pdflatex", "texlive-latex-base texlive-latex-recommended")
    argv = ["leaderboard", str(saved["agent"]), "--paper", "--format", "latex"]
    result = CliRunner().invoke(main, [*argv, "--label", "my agent & co"])
    assert result.exit_code == 0, result.output
    (tmp_path / "table.tex").write_text(result.stdout)  # what `> table.tex` keeps
    (tmp_path / "paper.tex").write_text(
        "\\documentclass{article}\n\\usepackage{booktabs}\n\\begin{document}\n"
        "\\tiny\n\\input{table.tex}\n\\end{document}\n"
    )
    build = subprocess.run(
        [pdflatex, "-interaction=nonstopmode", "-halt-on-error", "paper.tex"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert build.returncode == 0, build.stdout[-2000:]
    text = PdfReader(tmp_path / "paper.pdf").pages[0].extract_text()
    overall = load_report(saved["agent"]).analysis_by_category()["Overall"]
    assert "my agent & co" in text and f"{overall['f1']:.2f}" in text
    assert "GPT-4o (published)" in text and "Random (published)" in text


def test_genotex_compare_counts_a_lower_p_value_as_the_better_one(saved, tmp_path):
    """Two saved runs that differ only in their GSEA prerank p-values: A's 0.01, B's 0.5 on
    every problem. `genotex compare A B` must count every problem as a loss of B on p."""
    from click.testing import CliRunner

    from genotex.cli import main

    data = json.loads(saved["agent"].read_text())
    runs = {}
    for name, p in (("A", 0.01), ("B", 0.5)):
        copy = json.loads(json.dumps(data))
        for entry in copy["analysis"]["per_problem"].values():
            entry["gsea_prerank"] = {**(entry.get("gsea_prerank") or {}), "pval": p}
        runs[name] = tmp_path / f"{name}.json"
        runs[name].write_text(json.dumps(copy))
    out = tmp_path / "difference.json"
    args = ["compare", str(runs["A"]), str(runs["B"]), "--json", str(out), "--resamples", "200"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    sections = json.loads(out.read_text())["sections"]
    row = sections["analysis (per problem)"]["gsea_prerank_pval"]
    n = len(data["analysis"]["per_problem"])
    assert (row["wins"], row["ties"], row["losses"]) == (0, 0, n)  # B loses every problem
    auroc = sections["analysis (per problem)"]["auroc"]
    assert (auroc["wins"], auroc["losses"]) == (0, 0)  # unchanged elsewhere: ties only


def test_gsea_is_not_run_on_a_ranking_longer_than_any_genome():
    """#36 item 9: a prediction listing millions of names aborted eval --exact-stats (exit 134,
    "memory allocation failed" in gseapy's permutations); now GSEA is left out with the reason,
    and the exact AUROC is still computed (checked against scikit-learn)."""
    from genotex.evaluation._uncertainty import MAX_GSEA_GENES, extra_statistics

    universe = [f"G{i}" for i in range(200)]
    reference = universe[:10]
    predicted = ["G3", "G150", "G1", *(f"NOT{i}" for i in range(MAX_GSEA_GENES))]
    out = extra_statistics(predicted, None, reference, universe, permutations=10, seed=1)
    assert out["gsea_prerank_es"] is None and "more than the 100,000" in out["gsea_note"]
    everything = list(dict.fromkeys([*universe, *predicted]))
    rank = {g: len(predicted) - i for i, g in enumerate(predicted)}
    scores = [rank.get(g, 0) for g in everything]
    truth = [g in reference for g in everything]
    assert out["auroc_exact"] == pytest.approx(roc_auc_score(truth, scores))

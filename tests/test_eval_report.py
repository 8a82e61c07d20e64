"""The HTML report in a real headless browser; `genotex report`, `compare` and `leaderboard`."""

from __future__ import annotations

import html
import json
import shutil

import pytest
from click.testing import CliRunner

from genotex.cli import main
from genotex.evaluation import EvalReport, evaluate, load_report, write_report
from tests.conftest import require_program


@pytest.fixture(scope="module")
def run(eval_fixtures, tmp_path_factory):
    """`genotex eval --json --report` on case1, as a user runs it."""
    folder = tmp_path_factory.mktemp("report")
    case = eval_fixtures / "case1"
    result = CliRunner().invoke(
        main,
        [
            "eval",
            "-p",
            str(case / "pred/output"),
            "-r",
            str(case / "ref/output"),
            "--task-info",
            str(case / "ref/metadata/task_info.json"),
            "--no-progress",
            "--json",
            str(folder / "run.json"),
            "--report",
            str(folder / "html"),
            "--resamples",
            "2000",
            "--gsea-permutations",
            "200",
        ],
    )
    assert result.exit_code == 0, result.output
    return folder


def test_the_report_loads_in_a_browser_with_its_numbers_and_figures(run):
    executable = require_program("chromium", "chromium")
    from playwright.sync_api import sync_playwright

    data = json.loads((run / "run.json").read_text())
    errors: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=executable,
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
        )
        page = browser.new_page()
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto((run / "html" / "index.html").resolve().as_uri())
        auroc = float(page.get_attribute("[data-testid=headline-auroc] .value", "data-value"))
        csc = float(page.get_attribute("[data-testid=headline-csc] .value", "data-value"))
        figures = page.eval_on_selector_all(
            "img[data-testid^=figure-]",
            "els => els.map(e => [e.dataset.testid, e.naturalWidth, e.alt])",
        )
        headers = page.eval_on_selector_all("table th[scope=col]", "els => els.length")
        # an interval cell stays on one line: its height is one line's, however wide the table
        heights = page.eval_on_selector_all(
            "td",
            "els => els.filter(e => /\\[.*,.*\\]/.test(e.textContent)).map(e => "
            "[e.getBoundingClientRect().height, parseFloat(getComputedStyle(e).lineHeight) || "
            "1.2 * parseFloat(getComputedStyle(e).fontSize)])",
        )
        page.screenshot(path=str(run / "screenshot.png"), full_page=True)
        browser.close()
    assert errors == []
    assert auroc == data["analysis"]["categorized"]["Overall"]["auroc"]
    assert csc == data["preprocessing"]["linked"]["average"]["composite_similarity_correlation"]
    names = {name.removeprefix("figure-") for name, width, alt in figures if width > 0 and alt}
    assert names == {
        "scores_per_task",
        "trait_category_f1",
        "problem_distributions",
        "csc_per_trait",
    }
    assert headers > 10  # every table has column headers
    assert len(heights) > 20
    assert all(height < 1.9 * line for height, line in heights)  # padding, not a second line


def test_figures_and_page_are_written_byte_for_byte_the_same(run, tmp_path):
    report = load_report(run / "run.json")
    write_report(report, tmp_path / "again")
    for path in (run / "html").rglob("*"):
        if path.is_file():
            assert (
                path.read_bytes()
                == (tmp_path / "again" / path.relative_to(run / "html")).read_bytes()
            ), path


def test_genotex_report_renders_a_saved_report_and_says_what_it_lacks(run, tmp_path):
    def without_intervals(node):
        if isinstance(node, dict):
            return {
                k: without_intervals(v)
                for k, v in node.items()
                if not k.endswith(("_ci", "_ci_note"))
            }
        return node

    data = without_intervals(json.loads((run / "run.json").read_text()))  # a run without --ci
    data["run"].pop("bootstrap")
    plain = tmp_path / "plain.json"
    plain.write_text(json.dumps(data))
    result = CliRunner().invoke(main, ["report", str(plain), "--out", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    page = (tmp_path / "out" / "index.html").read_text()
    assert "Intervals are missing" in page and "without <code>--ci</code>" in page
    assert "0.82" in page and (tmp_path / "out" / "figures" / "scores_per_task.svg").exists()


def test_compare_and_leaderboard_from_the_command_line(run, eval_fixtures, tmp_path):
    case = eval_fixtures / "case1"
    perfect = tmp_path / "perfect.json"
    done = CliRunner().invoke(
        main,
        [
            "eval",
            "-p",
            str(case / "ref/output"),
            "-r",
            str(case / "ref/output"),
            "--task-info",
            str(case / "ref/metadata/task_info.json"),
            "--json",
            str(perfect),
            "--no-progress",
        ],
    )
    assert done.exit_code == 0
    compared = CliRunner().invoke(
        main, ["compare", str(run / "run.json"), str(perfect), "--resamples", "500"]
    )
    assert compared.exit_code == 0, compared.output
    assert "== analysis (per problem) ==" in compared.output and "W/T/L" in compared.output
    refused = CliRunner().invoke(
        main, ["compare", str(run / "run.json"), str(case / "expected.json")]
    )
    assert refused.exit_code == 1 and "without reference digests" in refused.output
    board = CliRunner().invoke(
        main,
        ["leaderboard", str(perfect), str(run / "run.json"), "--paper", "--format", "markdown"],
    )
    assert board.exit_code == 0 and "| OpenAI o1 (published) | model | 43.26 |" in board.output
    assert "| No planning (published) | ablation |" in board.output  # Table 2's sections kept
    # a plain eval records no setting (issue #60, 1): its group says so
    assert board.output.index("| perfect | setting unknown |") < board.output.index(
        "| run | setting unknown |"
    )
    assert "perfect is not in the paper's setting (setting unknown)" in board.output


def _with_setting(report, into, **setting):
    """`report` as a harness export of `setting` would record it (bwrap: isolated)."""
    data = json.loads(report.read_text())
    paper = {"task": "e2e", "tcga": "all", "conditions": "raw", "time_limit": 3600,
             "message_limit": 200, "tools": None, "library": "paper", "cohort_seconds": 420,
             "time_scale": "auto"}  # fmt: skip
    data["run"]["harness"] = {"sandbox": "bwrap", "setting": {**paper, **setting}}
    into.write_text(json.dumps(data))
    return str(into)


def test_runs_of_different_settings_are_not_ranked_together(run, tmp_path):
    """Issue #60, 1: 0.10.1 put a tcga=matched conditions=given run beside default runs and the
    paper's rows without a word.
    """
    paper = _with_setting(run / "run.json", tmp_path / "paper.json")
    matched = _with_setting(run / "run.json", tmp_path / "matched.json", tcga="matched",
                            conditions="given")  # fmt: skip
    plain = str(run / "run.json")
    refused = CliRunner().invoke(main, ["leaderboard", paper, matched])
    assert refused.exit_code == 1 and "Traceback" not in refused.output
    said = refused.output.strip().splitlines()
    assert len(said) == 1, refused.output
    assert (
        "matched and paper ran in different settings (tcga=matched conditions=given; paper "
        "setting: tcga=matched against tcga=all; conditions=given against conditions=raw)"
        in said[0]
    ), said
    unknown = CliRunner().invoke(main, ["leaderboard", paper, plain])
    assert unknown.exit_code == 1 and "setting unknown" in unknown.output
    grouped = CliRunner().invoke(
        main, ["leaderboard", paper, matched, plain, "--by-setting", "--format", "markdown"]
    )
    assert grouped.exit_code == 0, grouped.output
    rows = [line for line in grouped.output.splitlines() if line.startswith("| ")]
    assert rows[0].startswith("| Run | Group |")
    groups = [row.split(" | ")[1] for row in rows[1:]]
    assert groups == ["paper setting", "tcga=matched conditions=given", "setting unknown"]
    # each group ranked apart: the same numbers, so each row is the best of its own group
    assert all("**" in row for row in rows[1:])
    beside = CliRunner().invoke(main, ["leaderboard", paper, "--paper"])
    assert beside.exit_code == 0 and "not in the paper's setting" not in beside.output
    compared = CliRunner().invoke(main, ["compare", paper, matched, "--resamples", "200"])
    assert compared.exit_code == 1 and "--across-settings" in compared.output
    across = CliRunner().invoke(
        main, ["compare", paper, matched, "--resamples", "200", "--across-settings"]
    )
    assert across.exit_code == 0, across.output
    assert "across settings (paper setting against tcga=matched conditions=given)" in across.output


@pytest.mark.parametrize(
    "text",
    [
        "{not json",
        "[1, 2]",
        '{"analysis": 5}',
        '{"analysis": {"per_problem": {"A|None": 3}}}',
        '{"preprocessing": {"gene": {"per_file": 7}}}',
        '{"selection": []}',
        '{"problems_found": [1]}',
    ],
)
def test_a_file_that_is_not_a_report_is_one_sentence(tmp_path, text):
    bad = tmp_path / "bad.json"
    bad.write_text(text)
    for command in (["report", str(bad), "--out", str(tmp_path / "o")], ["leaderboard", str(bad)]):
        result = CliRunner().invoke(main, command)
        assert result.exit_code == 1 and "is not a genotex eval --json report" in result.output
        assert "Traceback" not in result.output
    assert not (tmp_path / "o").exists()


def test_odd_run_blocks_are_refused_or_shown_never_a_traceback(run, tmp_path):
    data = json.loads((run / "run.json").read_text())
    data["run"]["provenance"] = 5
    data["run"]["problems_in_task_info"] = "many"
    odd = tmp_path / "odd.json"
    odd.write_text(json.dumps(data))
    compared = CliRunner().invoke(main, ["compare", str(odd), str(run / "run.json")])
    assert compared.exit_code == 1 and "without reference digests" in compared.output
    board = CliRunner().invoke(main, ["leaderboard", str(odd)])
    assert board.exit_code == 0 and "odd" in board.output and "Traceback" not in board.output


@pytest.mark.parametrize("provenance", ["made by hand <b>", 5, ["a", 1], True])
def test_a_provenance_that_is_not_an_object_is_shown_not_a_traceback(run, tmp_path, provenance):
    """Issue #45, 8: `genotex report` on a saved report whose run.provenance is a string."""
    data = json.loads((run / "run.json").read_text())
    data["run"]["provenance"] = provenance
    odd = tmp_path / "odd.json"
    odd.write_text(json.dumps(data))
    result = CliRunner().invoke(main, ["report", str(odd), "--out", str(tmp_path / "page")])
    assert result.exit_code == 0, result.output
    assert "Traceback" not in result.output and "unexpected" not in result.output
    page = (tmp_path / "page" / "index.html").read_text()
    assert "not an object" in page and "<b>" not in page.split("<body", 1)[1].split("Provenance")[1]


_PAYLOADS = ("<script>alert(1)</script>", '"><img src=x onerror=alert(2)>')


def _inject(node, payload):
    """Every problem key's trait, file name, status, reason and path of a saved report, poisoned."""
    if isinstance(node, dict):
        out = {}
        for key, value in node.items():
            if "|" in key:
                key = payload + key
            elif key.endswith(".csv") and "/" in key:
                key = key.replace("/", "/" + payload, 1)
            if key in ("status", "reason", "file", "prediction", "reference") and isinstance(
                value, str
            ):
                value = value + payload
            out[key] = _inject(value, payload)
        return out
    if isinstance(node, list):
        return [_inject(value, payload) for value in node]
    return node


@pytest.mark.parametrize("payload", _PAYLOADS)
def test_every_string_of_a_saved_report_is_escaped_in_the_page(eval_fixtures, tmp_path, payload):
    case = eval_fixtures / "case1"
    info = case / "ref" / "metadata" / "task_info.json"
    report = evaluate(case / "pred" / "output", case / "ref" / "output", info)
    poisoned = _inject(json.loads(report.to_json()), payload)
    saved = tmp_path / "poisoned.json"
    saved.write_text(json.dumps(poisoned))
    page = write_report(EvalReport.from_dict(json.loads(saved.read_text())), tmp_path / "r")
    text = page.read_text()
    assert payload not in text
    # shown, escaped (Jinja writes a quote as &#34;)
    assert html.escape(payload, quote=False).replace('"', "&#34;") in text


def test_a_submissions_cv_performance_text_is_escaped_in_the_page(eval_fixtures, tmp_path):
    case = eval_fixtures / "case1"
    pred = tmp_path / "pred"
    shutil.copytree(case / "pred" / "output", pred)
    result = next(pred.glob("regress/*/significant_genes_condition_*.json"))
    data = json.loads(result.read_text())
    data["cv_performance"] = {"prediction": {"accuracy": _PAYLOADS[0], "f1": _PAYLOADS[1]}}
    result.write_text(json.dumps(data))
    report = evaluate(pred, case / "ref" / "output", case / "ref" / "metadata" / "task_info.json")
    text = write_report(report, tmp_path / "r").read_text()
    assert "cv_performance" in text  # the finding is shown ...
    assert "<script>alert" not in text and "<img src=x" not in text  # ... escaped


def _tables(page: str) -> dict[str, list[list[str]]]:
    """caption -> rows of cells (header row first) of every table of an HTML page."""
    from html.parser import HTMLParser

    class Tables(HTMLParser):
        def __init__(self) -> None:
            super().__init__()
            self.tables: dict[str, list[list[str]]] = {}
            self.caption = self.cell = None
            self.rows: list[list[str]] = []

        def handle_starttag(self, tag, attrs):
            if tag == "table":
                self.rows = []
            elif tag == "caption":
                self.caption = ""
            elif tag == "tr":
                self.rows.append([])
            elif tag in ("td", "th"):
                self.cell = ""

        def handle_endtag(self, tag):
            if tag == "caption":
                self.tables[self.caption] = self.rows
                self.caption = None
            elif tag in ("td", "th") and self.cell is not None:
                self.rows[-1].append(self.cell.strip())
                self.cell = None

        def handle_data(self, data):
            if self.caption is not None:
                self.caption += data
            elif self.cell is not None:
                self.cell += data

    parser = Tables()
    parser.feed(page)
    return parser.tables


def test_the_report_explains_itself(run, tmp_path):
    """Glossary, the approximate AUROC named, p in scientific notation, the n really averaged,
    the paper's vocabulary, each missing file listed once."""
    import re

    from genotex.core import METRICS

    data = json.loads((run / "run.json").read_text())
    # a problem whose file is missing: Cystic_Fibrosis|Obesity in case1's prediction
    missing = [k for k, v in data["analysis"]["per_problem"].items() if v.get("success") == 0]
    assert missing == ["Cystic_Fibrosis|Obesity"]
    page = (run / "html" / "index.html").read_text()
    tables = _tables(page)
    glossary = next(rows for caption, rows in tables.items() if caption.startswith("Glossary"))
    assert glossary[0] == ["column", "what it is", "scale", "better", "defined by"]
    explained = {row[0]: row for row in glossary[1:]}
    for spec in METRICS.values():
        assert spec.label in explained, spec.label
    assert explained["p"][3] == "lower" and explained["AUROC"][3] == "higher"
    assert "approximate" in explained["AUROC"][1] and explained["AUROC"][4] == "paper"
    assert explained["AUROCx"][4] == "genotex" and explained["F1"][2] == "0 to 100"
    assert {"n", "Succ., Tk.(K), Cost($), Time(s)"} <= set(explained)
    assert "the paper&#39;s approximate AUROC" in page.split("Headline")[2][:2000]

    assert "p" not in tables["Analysis per category (per problem)"][0]  # parity table fits a page
    per_category = tables[
        "Beside the parity numbers: exact AUROC, AP and GSEA prerank (per problem)"
    ]
    header, overall = per_category[0], per_category[-1]
    p_cells = [row[header.index("p")] for row in per_category[1:]]
    assert all(re.fullmatch(r"(<\de-\d\d|\d\.\de[-+]\d\d)( \[.*\])?", c) for c in p_cells), p_cells
    assert "<5e-03" in p_cells[1]  # a permutation p of 0 is "below 1/200", not 0.00
    pvals = [
        v["gsea_prerank"]["pval"]
        for v in data["analysis"]["per_problem"].values()
        if v.get("gsea_prerank")
    ]
    assert overall[header.index("p")].startswith(f"{sum(pvals) / len(pvals):.1e}")
    # 24 problems; the exact statistics are averaged over those that have them (not the one
    # without a file, nor those whose reference selects no cohort, so has no gene universe)
    problems = data["analysis"]["per_problem"].values()
    exact = sum(v.get("auroc_exact") is not None for v in problems)
    assert 0 < exact < 23
    n = overall[header.index("n")]
    assert n == f"{exact} of 24"

    table5 = next(rows for caption, rows in tables.items() if "Table 5" in caption)
    ours = [row for row in table5[1:] if "published" not in row[0]]
    published = {row[1] for row in table5[1:] if "published" in row[0]}
    assert [row[1] for row in ours] == ["Gene", "Trait", "Linked"]
    assert published == {"Gene", "Trait", "Linked"}

    findings = next(rows for caption, rows in tables.items() if "failed problems" in caption)
    listed = [row[0] for row in findings[1:]]
    assert "Cystic_Fibrosis|Obesity" not in listed
    assert listed.count("regress/Cystic_Fibrosis/significant_genes_condition_Obesity.json") == 1
    assert next(c for c in tables if "failed problems" in c).startswith("1 failed problems")


def test_a_baseline_and_genoagent_in_the_papers_setting_rank_together_other_lengths_do_not():
    """By hand: the baseline has no library or budget (`NOT_AN_OPTION`), so it stands beside
    GenoAgent in the paper's setting; a longer time limit is a setting of its own, said as such.
    """
    from genotex.evaluation._setting import NOT_AN_OPTION, RunSetting

    def setting(**given):
        values = {"task": "e2e", "tcga": "all", "conditions": "raw", "time_limit": "3600",
                  "message_limit": "200", "tools": "null", "library": "paper",
                  "cohort_seconds": "420", "time_scale": "auto", **given}  # fmt: skip
        return RunSetting(tuple(values.items()))

    genoagent = setting()
    baseline = setting(library=NOT_AN_OPTION, cohort_seconds=NOT_AN_OPTION,
                       time_scale=NOT_AN_OPTION)  # fmt: skip
    longer = setting(time_limit="7200")
    assert genoagent.paper and baseline.paper and longer.paper
    assert genoagent.compatible(baseline) and baseline.compatible(genoagent)
    assert (genoagent.label, baseline.label) == ("paper setting", "paper setting")
    assert not longer.compatible(genoagent) and longer.label == "paper setting time_limit=7200"
    assert longer.difference(genoagent) == "time_limit=7200 against time_limit=3600"
    smaller = setting(cohort_seconds="60")
    assert not smaller.paper and smaller.label == "cohort_seconds=60"
    assert not RunSetting(None).compatible(genoagent) and RunSetting(None).compatible(
        RunSetting(None)
    )


def test_a_run_that_reached_for_genotexs_pipeline_says_so_on_its_page_escaped(run, tmp_path):
    data = json.loads((run / "run.json").read_text())
    data["run"]["harness"] = {"sandbox": "bwrap", "reached_pipeline": [
        "Psoriasis · Psoriasis/GSE1 · <script>alert(1)</script>"]}  # fmt: skip
    saved = tmp_path / "reached.json"
    saved.write_text(json.dumps(data))
    write_report(load_report(saved), tmp_path / "page")
    page = (tmp_path / "page" / "index.html").read_text()
    assert 'data-testid="reached-pipeline"' in page and "1 step(s) reached" in page
    assert "<script>alert(1)</script>" not in page and "&lt;script&gt;alert(1)" in page


@pytest.mark.parametrize(
    ("mine", "theirs", "said"),
    [
        # a field the report does not record is unknown, never the paper's value
        ({"cohort_seconds": None}, {}, "cohort_seconds=null against cohort_seconds=420"),
        ({"drop": "library"}, {}, "library=unknown against library=paper"),
        # whole values: two tool lists alike for 40 characters, then not
        ({"tools": "genotex:" + "x" * 40 + "a"}, {"tools": "genotex:" + "x" * 40 + "b"},
         "tools=genotex:" + "x" * 40 + "a against tools=genotex:" + "x" * 40 + "b"),
        # two objects are compared by their content, not found equal for being objects
        ({"tools": {"mcp": ["a"]}}, {"tools": {"mcp": ["b"]}},
         'tools={"mcp":["a"]} against tools={"mcp":["b"]}'),
        # null equals only null
        ({"time_scale": None}, {}, "time_scale=null against time_scale=auto"),
        ({"tools": "genotex"}, {}, "tools=genotex against tools=null"),
    ],
)  # fmt: skip
def test_settings_are_compared_whole(run, tmp_path, mine, theirs, said):
    """Issue #72 item 8: each case ranked 0.14 runs together, or named no difference."""
    from genotex.evaluation import load_report, setting_of

    drop = mine.pop("drop", None)
    a = _with_setting(run / "run.json", tmp_path / "a.json", **mine)
    if drop:
        data = json.loads((tmp_path / "a.json").read_text())
        del data["run"]["harness"]["setting"][drop]
        (tmp_path / "a.json").write_text(json.dumps(data))
    b = _with_setting(run / "run.json", tmp_path / "b.json", **theirs)
    first, second = setting_of(load_report(a)), setting_of(load_report(b))
    assert not first.compatible(second)
    assert first.difference(second) == said
    assert second.difference(first) == " against ".join(reversed(said.split(" against ")))
    refused = CliRunner().invoke(main, ["leaderboard", a, b])
    field = said.split("=")[0]
    assert refused.exit_code == 1 and f"{field}=" in refused.output and " against " in (
        refused.output)  # fmt: skip


def test_a_solver_without_an_option_is_ranked_with_any_value_of_it(run, tmp_path):
    from genotex.evaluation import NOT_AN_OPTION, load_report, setting_of

    baseline = _with_setting(run / "run.json", tmp_path / "a.json", library=NOT_AN_OPTION,
                             cohort_seconds=NOT_AN_OPTION, time_scale=NOT_AN_OPTION)  # fmt: skip
    team = _with_setting(run / "run.json", tmp_path / "b.json", cohort_seconds=420.0)
    first, second = setting_of(load_report(baseline)), setting_of(load_report(team))
    assert first.compatible(second) and first.paper and second.paper  # 420.0 is 420

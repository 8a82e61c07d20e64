"""The paper's rows that need no agent, run under genotex's tasks (issue #44): the plain Lasso
and LMM (Table 3), the random genes, and a model's zero-shot answer (Table 2).
"""

from __future__ import annotations

import json
import math
import subprocess
import sys

import pytest

pytest.importorskip("inspect_ai", reason="the harness extra (inspect-ai) is not installed")
from tests.conftest import INSPECT_WARNINGS  # noqa: E402

pytestmark = INSPECT_WARNINGS

from inspect_ai import eval as inspect_eval  # noqa: E402
from inspect_ai.model import ModelOutput, ModelUsage, get_model  # noqa: E402

from genotex.core import ResultFile, TaskInfo  # noqa: E402
from genotex.harness.runs._capture import STORE_KEY, unpack_output  # noqa: E402
from genotex.harness.runs._tasks import analysis, e2e  # noqa: E402
from genotex.harness.sandboxes._sandbox_spec import bwrap_problem  # noqa: E402
from genotex.harness.solvers._rows import (  # noqa: E402
    expected_random_f1,
    lasso,
    lmm,
    parse_gene_list,
    random_row,
    zero_shot,
)
from genotex.workflows import write_raw_benchmark  # noqa: E402

SANDBOXES = ["local"] + (["bwrap"] if bwrap_problem() is None else [])


@pytest.fixture(scope="module")
def bench(tmp_path_factory):
    folder = tmp_path_factory.mktemp("rows")
    write_raw_benchmark(folder / "root", recipes=False)
    return folder / "root"


def _outputs(log) -> dict[str, bytes]:
    files = {}
    for sample in log.samples:
        files.update(unpack_output(sample.store[STORE_KEY], max_bytes=10**9).files)
    return files


@pytest.mark.parametrize("sandbox", SANDBOXES)
@pytest.mark.parametrize("row", ["lasso", "lmm"])
def test_the_plain_lasso_and_lmm_rows_equal_regress_with_that_model(bench, tmp_path, row, sandbox):
    solver = {"lasso": lasso, "lmm": lmm}[row]()
    task = analysis(root=str(bench), traits="Asthma", sandbox=sandbox)
    log = inspect_eval(task, model="none", solver=solver, log_dir=str(tmp_path), display="none")[0]
    assert log.status == "success", log.error
    files = _outputs(log)
    reference = bench / "reference" / "output"
    done = subprocess.run(
        [sys.executable, "-m", "genotex", "regress", "--trait", "Asthma", "--data",
         str(reference / "preprocess"), "--task-info", str(bench / "metadata" / "task_info.json"),
         "--out", str(tmp_path / "cli"), "--model", row],
        capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    asked = [k for k in files if k.startswith("regress/Asthma/")]
    assert asked, files.keys()
    for name in asked:
        cli = ResultFile.read(tmp_path / "cli" / name.removeprefix("regress/"))
        made = json.loads(files[name])
        assert made["significant_genes"]["Variable"] == list(cli.genes), name
        model = made["method"]["model"]
        assert model.startswith("LMM") if row == "lmm" else model == "Lasso"


def test_the_plain_models_refuse_the_end_to_end_task_with_a_reason(bench, tmp_path):
    task = e2e(root=str(bench), traits="Asthma", sandbox="local")
    log = inspect_eval(task, model="none", solver=lasso(), log_dir=str(tmp_path), display="none")[0]
    score = next(iter(log.samples[0].scores.values()))
    assert "answers the analysis task" in (score.metadata["failure"] or "")


def test_random_genes_score_what_the_closed_form_expects(bench, tmp_path):
    """The mean F1 over the demo's analysis problems, for 3 seeds, lies within 3 standard
    errors of the hypergeometric expectation computed from each problem's universe.
    """
    import pandas as pd

    reference = bench / "reference" / "output"
    info = TaskInfo.read(bench / "metadata" / "task_info.json")
    k, observed, expected, variance = 40, [], [], []
    for seed in (1, 2, 3):
        task = analysis(root=str(bench), sandbox="local")
        log = inspect_eval(task, model="none", solver=random_row(genes=k, seed=seed),
                           log_dir=str(tmp_path / str(seed)), display="none")[0]  # fmt: skip
        assert log.status == "success", log.error
        for sample in log.samples:
            score = next(iter(sample.scores.values()))
            for key, value in score.value.items():
                if not key.startswith("f1@"):
                    continue
                trait, _, condition = key.removeprefix("f1@").partition("|")
                answer = ResultFile.read(
                    reference / "regress" / trait / f"significant_genes_condition_{condition}.json"
                ).genes
                columns: set[str] = set()
                for linked in (reference / "preprocess" / trait).glob("*.csv"):
                    columns |= set(pd.read_csv(linked, nrows=0, index_col=0).columns)
                universe = columns - {"Age", "Gender", trait, condition}
                mean, var = expected_random_f1(
                    len(universe), len(set(answer) & universe), len(answer), k
                )
                observed.append(value)
                expected.append(mean)
                variance.append(var)
    assert len(observed) >= 9 and len(list(info.problems())) > 0
    n = len(observed)
    gap = abs(sum(observed) / n - sum(expected) / n)
    assert gap <= 3 * math.sqrt(sum(variance)) / n, (gap, sum(expected) / n)
    assert sum(observed) / n < 50  # random is not a good answer


def test_expected_random_f1_by_hand():
    # 100 genes, 10 of the answer's 20 among them, 10 drawn: E[TP] = 1, F1 = 2/30
    mean, variance = expected_random_f1(100, 10, 20, 10)
    assert mean == pytest.approx(100 * 2 / 30)
    # Var[TP] = 10 * 0.1 * 0.9 * 90/99
    assert variance == pytest.approx((200 / 30) ** 2 * 10 * 0.1 * 0.9 * 90 / 99)


def _scripted(answers: list[str]):
    outputs = [ModelOutput.from_content("mockllm/model", a) for a in answers]
    for output in outputs:
        output.usage = ModelUsage(input_tokens=120, output_tokens=30, total_tokens=150)
    return get_model("mockllm/model", custom_outputs=outputs)


def test_zero_shot_writes_the_models_genes_and_logs_its_tokens(bench, tmp_path):
    task = analysis(root=str(bench), traits="Asthma", sandbox="local")
    problems = len(task.dataset)
    answers = ['Here: ["IL13", "il4", "IL13", "ORMDL3"]'] * problems
    log = inspect_eval(task, model=_scripted(answers), solver=zero_shot(),
                       log_dir=str(tmp_path), display="none")[0]  # fmt: skip
    assert log.status == "success", log.error
    files = _outputs(log)
    written = [json.loads(v) for k, v in files.items() if k.startswith("regress/Asthma/")]
    assert written and all(
        w["significant_genes"]["Variable"] == ["IL13", "IL4", "ORMDL3"] for w in written
    )
    usage = [u for s in log.samples for u in s.model_usage.values()]
    assert sum(u.input_tokens for u in usage) == 120 * problems


@pytest.mark.parametrize(
    ("text", "genes"),
    [
        ('["TP53", "brca1"]', ["TP53", "BRCA1"]),
        ("The genes are IL13, IL4 and ORMDL3.", ["IL13", "IL4", "ORMDL3"]),
        ("no idea", []),
        ('[1, 2] then ["GPC3"]', ["GPC3"]),
    ],
)
def test_a_models_answer_is_read_robustly(text, genes):
    assert parse_gene_list(text, 50) == genes


# ---- what a run cost, per model and per role -------------------------------------------------
def test_export_prices_each_model_by_its_row_and_counts_tokens_per_model(bench, tmp_path):
    from genotex.harness import export_run

    task = analysis(root=str(bench), traits="Asthma", sandbox="local")
    problems = len(task.dataset)
    log = inspect_eval(task, model=_scripted(['["IL13"]'] * problems), solver=zero_shot(),
                       log_dir=str(tmp_path / "logs"), display="none")[0]  # fmt: skip
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({"mockllm/model": {"input": 2.0, "output": 10.0}}))
    path = export_run(log.location, tmp_path / "run", reference=bench / "reference" / "output",
                      prices=prices)  # fmt: skip
    runtime = json.loads(path.read_text())["run"]["runtime"]
    asked = sum(len(s.metadata["problems"]) for s in log.samples)
    # by hand: 120 input and 30 output tokens a call, one call a problem
    assert runtime["cost_usd"] == pytest.approx((120 * 2.0 + 30 * 10.0) / 1e6 * problems / asked)
    assert runtime["tokens_by_model"]["mockllm/model"] == {
        "tokens_in_k": pytest.approx(0.12 * problems / asked),
        "tokens_out_k": pytest.approx(0.03 * problems / asked),
    }


@pytest.mark.parametrize(
    ("table", "says"),
    [
        ("[1]", "is not a price table"),
        ('{"m": {"input": 1}}', "gives 'm' no"),
        ('{"m": {"input": "cheap", "output": 1}}', "a price that is not a number"),
        ('{"m": {"input": -1, "output": 1}}', "outside 0 to 100,000"),
    ],
)
def test_a_bad_price_table_is_one_sentence(tmp_path, table, says):
    from click.testing import CliRunner

    from genotex.cli import main

    prices = tmp_path / "prices.json"
    prices.write_text(table)
    result = CliRunner().invoke(
        main,
        ["harness", "export", str(tmp_path / "no.eval"), "--reference", str(tmp_path),
         "--out", str(tmp_path / "run"), "--prices", str(prices)],
    )  # fmt: skip
    assert result.exit_code != 0 and "Traceback" not in result.output
    assert says in result.output and "prices.json" in result.output


def test_a_price_table_is_read_before_anything_else(tmp_path):
    from genotex.core import GenotexError
    from genotex.harness.runs._runtime import Prices

    prices = tmp_path / "p.json"
    prices.write_text('{"m": {"input": -1, "output": 1}}')
    with pytest.raises(GenotexError, match="outside 0 to 100,000 dollars a million tokens"):
        Prices.read(prices)
    prices.write_text('{"a/b": {"input": 1.5, "output": 6}}')
    table = Prices.of(prices, 1.0, 2.0)
    assert table.per_model == {"a/b": (1.5, 6.0)} and table.default == (1.0, 2.0)


def test_tokens_per_role_are_thousands_per_problem():
    from genotex.harness.runs._runtime import SampleRuntime, runtime_summary

    runs = [
        SampleRuntime("A", 1, True, 3000, 600, None, 1.0, {}, {"planner": (1000, 200),
                      "statistician": (2000, 400)}),
        SampleRuntime("B", 1, True, 1000, 100, None, 1.0, {}, {"planner": (1000, 100)}),
    ]  # fmt: skip
    summary = runtime_summary(runs, {"A": 2, "B": 2})  # four problems
    assert summary.tokens_by_role == {
        "planner": {"tokens_in_k": 0.5, "tokens_out_k": 0.075},
        "statistician": {"tokens_in_k": 0.5, "tokens_out_k": 0.1},
    }
    assert summary.to_dict()["tokens_by_role"]["planner"]["tokens_in_k"] == 0.5


# ---- tokens and prices from an untrusted log (issue #52, item 10) ------------------------------
def _usage(**counts):
    from inspect_ai.model import ModelUsage

    return ModelUsage(**counts)


def test_cached_input_tokens_are_counted_and_priced():
    """3,000 uncached and 27,000 cached input tokens are 30,000 input tokens (0.8.0 said 3,000)."""
    from types import SimpleNamespace

    from genotex.harness.runs._runtime import Prices, sample_runtime

    usage = _usage(input_tokens=3000, input_tokens_cache_read=25000,
                   input_tokens_cache_write=2000, output_tokens=500)  # fmt: skip
    sample = SimpleNamespace(id="A", epoch=1, model_usage={"m/x": usage}, role_usage={},
                             working_time=2.0, total_time=3.0)  # fmt: skip
    run = sample_runtime(sample, True, Prices({"m/x": (2.0, 10.0)}))
    assert (run.input_tokens, run.output_tokens) == (30000, 500)
    assert run.cost_usd == pytest.approx((30000 * 2.0 + 500 * 10.0) / 1e6)  # 0.065 dollars


def test_the_cost_is_given_without_and_with_prompt_caching(tmp_path):
    """By hand: 3,000 uncached input tokens, 25,000 read from the cache and 2,000 written to it,
    500 output; $2 input, $0.20 a cache read, $2.50 a cache write, $10 output (a million).
    Without caching (the paper's Cost): (30,000 x 2 + 500 x 10) / 1e6 = 0.065; as billed:
    (3,000 x 2 + 25,000 x 0.2 + 2,000 x 2.5 + 500 x 10) / 1e6 = 0.021. Two problems: 12.5
    thousand cached and 2.5 thousand uncached input tokens a problem.
    """
    from types import SimpleNamespace

    from genotex.harness.runs._runtime import Prices, runtime_summary, sample_runtime

    table = tmp_path / "prices.json"
    table.write_text(json.dumps({"m/x": {"input": 2.0, "output": 10.0, "cached_input": 0.2,
                                         "cache_write": 2.5}}))  # fmt: skip
    usage = _usage(input_tokens=3000, input_tokens_cache_read=25000,
                   input_tokens_cache_write=2000, output_tokens=500)  # fmt: skip
    sample = SimpleNamespace(id="A", epoch=1, model_usage={"m/x": usage}, role_usage={},
                             working_time=2.0, total_time=3.0)  # fmt: skip
    run = sample_runtime(sample, True, Prices.read(table))
    assert run.cost_usd == pytest.approx(0.065) and run.cost_cached_usd == pytest.approx(0.021)
    summary = runtime_summary([run], {"A": 2}).to_dict()
    assert summary["cached_in_k"] == 12.5 and summary["uncached_in_k"] == 2.5
    assert summary["cost_usd"] == pytest.approx(0.0325)
    assert summary["cost_cached_usd"] == pytest.approx(0.0105)
    # without the cache's prices the cost as billed is unknown, never guessed
    plain = sample_runtime(sample, True, Prices({"m/x": (2.0, 10.0)}))
    assert plain.cost_cached_usd is None and plain.cache_read_tokens == 25000
    table.write_text(json.dumps({"m/x": {"input": 2.0, "output": 10.0, "cache_write": 2.5}}))
    from genotex.core import GenotexError

    with pytest.raises(GenotexError, match="a cache_write price without its cached_input"):
        Prices.read(table)


@pytest.mark.parametrize(
    "counts",
    [
        {"input_tokens": -3_000_000_000, "output_tokens": 1},
        {"input_tokens": 1, "output_tokens": -5},
    ],
)
def test_a_negative_token_count_is_refused_in_one_sentence(counts):
    from types import SimpleNamespace

    from genotex.core import GenotexError
    from genotex.harness.runs._runtime import Prices, sample_runtime

    usage = _usage(**counts)
    sample = SimpleNamespace(id="A", epoch=1, model_usage={"m/x": usage}, role_usage={},
                             working_time=1.0, total_time=1.0)  # fmt: skip
    with pytest.raises(GenotexError, match="not a count of tokens"):
        sample_runtime(sample, True, Prices({}, (1.0, 1.0)))


@pytest.mark.parametrize("price", [float("nan"), float("inf"), -1.0])
def test_a_price_option_that_is_not_a_price_is_refused(price):
    from genotex.core import GenotexError
    from genotex.harness.runs._runtime import Prices

    with pytest.raises(GenotexError, match="--price-in is the price|--price-in is"):
        Prices.of(None, price, 1.0)


def test_a_price_table_that_prices_none_of_the_logs_models_is_said(bench, tmp_path, caplog):
    import logging

    from genotex.harness import export_run

    task = analysis(root=str(bench), traits="Asthma", sandbox="local")
    model = _scripted(['["IL13"]'] * len(task.dataset))
    log = inspect_eval(task, model=model, solver=zero_shot(), log_dir=str(tmp_path / "logs"),
                       display="none")[0]  # fmt: skip
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({"openai/gpt-4o": {"input": 2.5, "output": 10.0}}))
    with caplog.at_level(logging.WARNING, logger="genotex"):
        path = export_run(log.location, tmp_path / "run", reference=bench / "reference" / "output",
                          prices=prices)  # fmt: skip
    runtime = json.loads(path.read_text())["run"]["runtime"]
    assert runtime["cost_usd"] is None and runtime["unpriced_models"] == ["mockllm/model"]
    assert "no price is given for mockllm/model" in caplog.text


def test_an_export_says_what_ran_and_digests_the_reference_files(bench, tmp_path):
    """0.8.0's eval.json named no solver, no arguments, no model per role, and its reference
    digest was empty (the slice is links, which the digest did not follow) (issue #51)."""
    from genotex.evaluation import leaderboard, load_report
    from genotex.harness import export_run

    task = analysis(root=str(bench), traits="Asthma", sandbox="local")
    model = _scripted(['["IL13"]'] * len(task.dataset))
    log = inspect_eval(task, model=model, solver=zero_shot(top=7), log_dir=str(tmp_path / "logs"),
                       display="none")[0]  # fmt: skip
    path = export_run(log.location, tmp_path / "run", reference=bench / "reference" / "output")
    harness = load_report(path).run["harness"]
    assert harness["solver"].endswith("zero_shot") and harness["model"] == "mockllm/model"
    assert harness["solver_args"] == {"top": 7} and harness["solver_args_passed"] == {"top": 7}
    digest = load_report(path).run["provenance"]["reference_digest"]["regress"]
    answers = bench / "reference" / "output" / "regress" / "Asthma"
    assert digest["files"] == len(list(answers.iterdir())) > 0  # Asthma's answers, by hand
    assert digest["bytes"] == sum(f.stat().st_size for f in answers.iterdir())
    board = leaderboard([path])
    expected = f"run · {harness['solver']} · mockllm/model · top=7 (not isolated)"  # local
    assert board.rows[0].name == expected

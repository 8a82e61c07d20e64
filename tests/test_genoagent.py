"""GenoAgent (issue #44) run by scripted models, one a role, no network: the team solves the
demo as genotex/baseline does, the reviewer and the planner change what happens as the
paper describes, each ablation changes the calls per role, and nonsense ends in bounded time.

Each role's model is Inspect's mockllm with a function for its outputs: it reads the message
it is sent (which step, which workflow) and answers as its role's script says; the calls per
role are counted from the log's model events, which Inspect names with their role.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable

import pytest

pytest.importorskip("inspect_ai", reason="the harness extra (inspect-ai) is not installed")
from tests.conftest import INSPECT_WARNINGS  # noqa: E402

pytestmark = INSPECT_WARNINGS

from inspect_ai import eval as inspect_eval  # noqa: E402
from inspect_ai.event import ModelEvent  # noqa: E402
from inspect_ai.model import Model, ModelOutput, ModelUsage, get_model  # noqa: E402

from genotex.harness.runs._tasks import analysis, e2e, preprocess  # noqa: E402
from genotex.harness.sandboxes._podman import default_image, podman_problem  # noqa: E402
from genotex.harness.sandboxes._sandbox_spec import bwrap_problem  # noqa: E402
from genotex.harness.solvers._reference import baseline  # noqa: E402
from genotex.harness.solvers.genoagent import ROLES, STORE_KEY, genoagent, units  # noqa: E402
from genotex.workflows import write_raw_benchmark  # noqa: E402
from tests.paper_team import CORRECT  # noqa: E402

SANDBOXES = ["local"] + (["bwrap"] if bwrap_problem() is None else [])
#: The team against the baseline in every sandbox that runs here (CI builds podman's image).
TEAM_SANDBOXES = SANDBOXES + (["podman"] if podman_problem(default_image()) is None else [])
Script = Callable[[str, str], str]


def _role_model(role: str, script: Script) -> Model:
    """Inspect's mockllm answering by `script(role, message)`, with each call's usage."""

    def answer(messages, tools, tool_choice, config) -> ModelOutput:
        output = ModelOutput.from_content("mockllm/model", script(role, str(messages[-1].content)))
        output.usage = ModelUsage(input_tokens=100, output_tokens=20, total_tokens=120)
        return output

    return get_model("mockllm/model", custom_outputs=answer, memoize=False)


def _team(script: Script) -> dict[str, Model]:
    return {role: _role_model(role, script) for role in ROLES}


def _step_of(message: str) -> str | None:
    found = re.search(r"^# (?:This step|The step): (\w+)", message, re.MULTILINE)
    return found.group(1) if found else None


def _next_of(message: str) -> str:
    return re.search(r'The next step in order is "(\w+)"', message).group(1)


def _is_review(message: str) -> bool:
    """A review request (its step under "# The step:"); a step's own request says "# This step:"."""
    return "\n# The step: " in message


def _reviewed(message: str) -> str:
    """The part of a review request about the step reviewed (not the steps before it)."""
    return message.split("\n# The step: ", 1)[-1]


def _fenced(code: str) -> str:
    return f"Here is the step.\n\n```python\n{code}\n```\n"


#: `library=genotex`: the baseline's own work in its one-call functions (propose the recipe,
#: preprocess, link, analyse), step by step.
GENOTEX_CODE = {
    "dataset_analysis": (
        "proposal = propose_cohort(COHORT_DIR, TRAIT)\n"
        "os.makedirs(os.path.dirname(RECIPE_FILE), exist_ok=True)\n"
        "open(RECIPE_FILE, 'w').write(proposal.toml())\nprint('STEP DONE')"
    ),
    "linking_and_qc": (
        "outcome = preprocess_cohort(COHORT_DIR, TRAIT, SYNONYMS_FILE, OUT_DIR, "
        "recipe=RECIPE_FILE)\nprint(outcome.record)\nprint('STEP DONE')"
    ),
    "cohort_selection": CORRECT["cohort_selection"],  # the trait's folder among all, or none
    "linking": (
        "if COHORT_DIR is not None:\n"
        "    print(preprocess_cohort(COHORT_DIR, TRAIT, SYNONYMS_FILE, OUT_DIR).record)\n"
        "print('STEP DONE')"
    ),
    **{
        name: "result = answer_problem(DATA_DIR, PROBLEM, TASK_INFO_FILE, model=MODEL)\n"
        "write_result(OUT_DIR, result)\nprint('STEP DONE')"
        for name in ("unconditional", "conditional_one_step", "two_step")
    },
}


#: The default, `library=paper`: the correct team's code over the paper library.
CODE = CORRECT


def team_script(code: dict[str, str]) -> Script:
    """Every step written as `code` says; every review approves; the planner goes on."""

    def script(role: str, message: str) -> str:
        if role == "planner":
            return f'{{"step": "{_next_of(message)}"}}'
        if _is_review(message):
            return '{"verdict": "approve"}'
        return _fenced(code.get(_step_of(message) or "", "print('STEP DONE')"))

    return script


baseline_script = team_script(CODE)


@pytest.fixture(scope="module")
def bench(tmp_path_factory):
    folder = tmp_path_factory.mktemp("genoagent")
    write_raw_benchmark(folder / "root", recipes=False)
    return folder / "root"


@pytest.fixture(scope="module")
def team_log(bench, tmp_path_factory):
    """The correct team's log (`genoagent()`, `baseline_script`) of a task on Psoriasis in
    `local`: run once a module for each task, read afresh for each test (a test that edits
    the log edits its own copy, and writes it in its own folder).
    """
    from inspect_ai.log import read_eval_log

    made: dict[str, str] = {}

    def log(task):
        name = task.__name__
        if name not in made:
            folder = tmp_path_factory.mktemp(f"team-{name}")
            made[name] = _eval(task(root=str(bench), traits="Psoriasis", sandbox="local"),
                               genoagent(), folder, baseline_script).location  # fmt: skip
        return read_eval_log(made[name])

    return log


def _eval(task, solver, tmp_path, script: Script):
    """The run's log; every sample is run and scored, a failed one with its reason."""
    log = inspect_eval(task, model=_team(script)["planner"], model_roles=_team(script),
                       solver=solver, log_dir=str(tmp_path), display="none")[0]  # fmt: skip
    assert log.status in ("success", "error") and log.error is None, log.error
    assert len(log.samples) == len(task.dataset)
    return log


def _scores(log) -> dict[str, dict]:
    return {
        str(s.id): next(iter(s.scores.values())).value
        for s in sorted(log.samples, key=lambda s: str(s.id))
    }


def _calls(log) -> Counter:
    return Counter(e.role for s in log.samples for e in s.events if isinstance(e, ModelEvent))


@pytest.fixture(scope="module")
def baseline_scores(bench, tmp_path_factory):
    """genotex/baseline's scores of each (task, traits), run once in `local` (it scores the
    same in every sandbox: test_sandbox_hostile's `..._picks_bwrap_and_scores_what_local_scores`
    and the podman run of the hostile suite).
    """
    found: dict[tuple[str, str], dict] = {}

    def scores(task, traits: str) -> dict:
        key = (task.__name__, traits)
        if key not in found:
            logs = str(tmp_path_factory.mktemp("base"))
            log = inspect_eval(task(root=str(bench), traits=traits, sandbox="local"),
                               model="none", solver=baseline(), log_dir=logs,
                               display="none")[0]  # fmt: skip
            found[key] = _scores(log)
        return found[key]

    return scores


#: The team in every sandbox on Psoriasis (a GEO cohort, the TCGA folder, two problems); in
#: `local` on Asthma too, whose two-step problem takes Obesity's cohorts.
TEAM_RUNS = [
    ("local", "paper", "Asthma"),
    *((s, "paper", "Psoriasis") for s in TEAM_SANDBOXES if s != "local"),
    ("local", "genotex", "Asthma"),
]


@pytest.mark.slow
@pytest.mark.parametrize(("sandbox", "library", "traits"), TEAM_RUNS)
@pytest.mark.parametrize("task", [e2e, analysis])
def test_a_team_writing_the_baselines_steps_scores_what_the_baseline_scores(
    bench, tmp_path, baseline_scores, sandbox, library, traits, task
):
    """The correct team over the paper library (its decisions its own: rows, converters,
    columns, the model) scores what genotex/baseline scores; so does the team that calls
    genotex's one-call pipelines (`library=genotex`).
    """
    made = task(root=str(bench), traits=traits, sandbox=sandbox)
    script = team_script(CODE if library == "paper" else GENOTEX_CODE)
    ours = _eval(made, genoagent(library=library), tmp_path / "team", script)
    assert _scores(ours) == baseline_scores(task, traits)
    assert all(next(iter(s.scores.values())).metadata.get("failure") is None for s in ours.samples)
    f1 = [v for s in _scores(ours).values() for k, v in s.items() if k.startswith("f1@")]
    assert f1 and max(f1) > 0  # the answers are real ones, not empty files


# ---- the reviewer: a broken first draft, rejected with its trace, passes on revision ---------
BROKEN = {  # a name that is not there: a NameError
    "linking_and_qc": "gene_data = normalize_gene_symbols_in_index(gene_data, SYNONYMS_FILES)",
    "linking": "gene_data = normalize_gene_symbols_in_index(genetic, SYNONYMS_FILES)",
}


def reviewing_script(seen: list[str]) -> Script:
    """The baseline's steps, but the two linking steps' first drafts raise; the reviewer
    rejects a step whose trace it is shown, and a revision (asked with the review) is right.
    """

    def script(role: str, message: str) -> str:
        step = _step_of(message) or ""
        if role == "planner":
            return f'{{"step": "{_next_of(message)}"}}'
        if _is_review(message):
            if "Traceback" in _reviewed(message):
                seen.append(step)
                return '{"verdict": "reject", "feedback": "The name in the trace is wrong."}'
            return '{"verdict": "approve"}'
        if step in BROKEN and "# The review" not in message:
            return _fenced(BROKEN[step])
        return _fenced(CODE.get(step, "print('STEP DONE')"))

    return script


@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_a_broken_draft_is_rejected_with_its_trace_and_passes_on_revision(bench, tmp_path, sandbox):
    seen: list[str] = []
    task = preprocess(root=str(bench), traits="Psoriasis", sandbox=sandbox)
    log = _eval(task, genoagent(), tmp_path, reviewing_script(seen))
    sample = log.samples[0]
    assert next(iter(sample.scores.values())).metadata.get("failure") is None
    assert sorted(seen) == ["linking", "linking_and_qc"]  # each reviewer saw the NameError
    record = sample.store[STORE_KEY]
    linking = [s for w in record["workflows"] for s in w["steps"] if s["step"] in BROKEN]
    assert [(s["ok"], s["reviews"], s["approved"]) for s in linking] == [(True, 2, True)] * 2
    assert "Psoriasis/cohort_info.json" in str(
        [k for k in sample.store if k.startswith("genotex")]
    ) or _cohort_info_captured(sample)


def _cohort_info_captured(sample) -> bool:
    from genotex.harness.runs._capture import STORE_KEY as OUTPUT
    from genotex.harness.runs._capture import unpack_output

    files = unpack_output(sample.store[OUTPUT], max_bytes=10**9).files
    return "preprocess/Psoriasis/cohort_info.json" in files


def test_without_a_reviewer_the_broken_step_stays_and_the_sample_fails_with_its_reason(
    bench, tmp_path
):
    seen: list[str] = []
    task = preprocess(root=str(bench), traits="Psoriasis", sandbox="local")
    log = _eval(task, genoagent(review_rounds=0), tmp_path, reviewing_script(seen))
    sample = log.samples[0]
    metadata = next(iter(sample.scores.values())).metadata
    # a missing output is a scored failure with its reason, never a sample error (#51)
    assert metadata.get("failure") is None and sample.error is None and log.status == "success"
    said = " ".join(p["said"] for p in metadata["partial_failures"])
    assert "GenoAgent left no output/preprocess/Psoriasis/cohort_info.json" in said
    assert "linking_and_qc failed" in said and seen == []
    assert not _cohort_info_captured(sample)
    assert _calls(log)["code_reviewer"] == 0


# ---- the planner: back to an earlier step (the state rebuilt), and an unreadable answer ------
def planning_script(answer_at: dict[str, str]) -> Script:
    """The planner answers `answer_at[next step]` the first time it is asked about that step
    (then goes on); the steps mark the kernel's state and check it when they run again.
    """
    asked: set[str] = set()

    def script(role: str, message: str) -> str:
        step = _step_of(message) or ""
        if role == "planner":
            upcoming = _next_of(message)
            if upcoming in answer_at and upcoming not in asked:
                asked.add(upcoming)
                return answer_at[upcoming]
            return f'{{"step": "{upcoming}"}}'
        if _is_review(message):
            return '{"verdict": "approve"}'
        code = {
            "initial_inspection": "MARK_1 = 1\n" + CODE["initial_inspection"],
            "dataset_analysis": "assert 'MARK_1' in globals() and 'MARK_3' not in globals()\n"
            + CODE["dataset_analysis"],
            "gene_extraction": "MARK_3 = 1\n" + CODE["gene_extraction"],
            # a skipped extraction and review are made up for here (steps the planner skipped)
            "gene_mapping": "if 'genetic_data' not in globals():\n"
            "    genetic_data = get_genetic_data(matrix_file)\n"
            "if 'annotation' not in globals():\n"
            "    annotation = get_gene_annotation(soft_file)\n" + CODE["gene_mapping"],
        }.get(step, CODE.get(step, "print('STEP DONE')"))
        return _fenced(code)

    return script


def _geo_steps(log) -> list[list[tuple[str, bool]]]:
    workflows = log.samples[0].store[STORE_KEY]["workflows"]
    return [[(s["step"], s["ok"]) for s in w["steps"]] for w in workflows if "GSE" in w["workflow"]]


def test_going_back_to_step_two_rebuilds_the_state_and_goes_on(bench, tmp_path):
    script = planning_script({"identifier_review": '{"step": "dataset_analysis"}'})
    log = _eval(preprocess(root=str(bench), traits="Psoriasis", sandbox="local"), genoagent(),
                tmp_path, script)  # fmt: skip
    names = [u.name for u in units("geo")]
    expected = [names[0], names[1], names[2], names[1], names[2], *names[3:]]
    assert _geo_steps(log) == [[(n, True) for n in expected]]
    workflow = log.samples[0].store[STORE_KEY]["workflows"][0]
    assert workflow["went_back"] == "dataset_analysis"
    assert next(iter(log.samples[0].scores.values())).metadata.get("failure") is None


def test_an_unreadable_or_impossible_plan_takes_the_next_step_and_a_skip_skips(bench, tmp_path):
    script = planning_script({
        "initial_inspection": "Let me think about the cohort first.",
        "dataset_analysis": '{"step": "gene_annotation"}',  # no such step
        "gene_extraction": '{"step": "gene_mapping"}',  # two skipped at once
    })  # fmt: skip
    log = _eval(preprocess(root=str(bench), traits="Psoriasis", sandbox="local"), genoagent(),
                tmp_path, script)  # fmt: skip
    skipped = ("gene_extraction", "identifier_review")
    names = [u.name for u in units("geo") if u.name not in skipped]
    assert _geo_steps(log) == [[(n, True) for n in names]]
    assert next(iter(log.samples[0].scores.values())).metadata.get("failure") is None


def test_the_planner_may_finish_a_workflow_early_and_says_so(bench, tmp_path):
    script = planning_script({"identifier_review": '{"step": "finish"}'})
    log = _eval(preprocess(root=str(bench), traits="Psoriasis", sandbox="local"), genoagent(),
                tmp_path, script)  # fmt: skip
    names = [u.name for u in units("geo")]
    assert _geo_steps(log) == [[(n, True) for n in names[:3]]]
    workflow = log.samples[0].store[STORE_KEY]["workflows"][0]
    assert workflow["finished_early"] == "identifier_review" and workflow["abandoned"] is None


@pytest.mark.parametrize(
    ("max_retract", "taken", "planner_calls"), [(0, 6, 6 + 4 + 2), (2, 11, 11 + 4)]
)
def test_max_retract_bounds_going_back_and_the_planner_calls_follow(
    bench, tmp_path, max_retract, taken, planner_calls
):
    """By hand: the planner asks to go back twice (before identifier_review, then before
    linking_and_qc). With 2 allowed the GEO cohort takes 11 steps (6, and 2 + 3 again); with
    0 both answers are impossible and it takes its 6. One planner call before each step
    taken, plus the TCGA folder's 4; with 0 allowed, each impossible answer is answered once
    more, saying so (2 calls); nothing else calls the planner.
    """
    script = planning_script({"identifier_review": '{"step": "dataset_analysis"}',
                              "linking_and_qc": '{"step": "gene_extraction"}'})  # fmt: skip
    task = preprocess(root=str(bench), traits="Psoriasis", sandbox="local")
    log = _eval(task, genoagent(max_retract=max_retract), tmp_path, script)
    (steps,) = _geo_steps(log)
    assert len(steps) == taken and all(ok for _, ok in steps)
    assert _calls(log)["planner"] == planner_calls
    assert next(iter(log.samples[0].scores.values())).metadata.get("failure") is None


def test_a_workflow_of_one_step_makes_no_planner_call(team_log):
    log = team_log(analysis)
    assert _calls(log)["planner"] == 0 and _calls(log)["statistician"] > 0


# ---- the ablations, counted from the log's model events -------------------------------------
def _always(verdict: str) -> Script:
    def script(role: str, message: str) -> str:
        if role == "planner":
            return f'{{"step": "{_next_of(message)}"}}'
        if _is_review(message):
            return f'{{"verdict": "{verdict}", "feedback": "Again."}}'
        return _fenced(CODE.get(_step_of(message) or "", "print('STEP DONE')"))

    return script


def _expected_calls(bench, options: dict, reviews: int, revisions: int) -> Counter:
    """By hand: Psoriasis has G GEO cohorts of 6 steps (2 expert) and one TCGA folder of 4
    (2 expert). Each step: a planner call (with planning), one draft, `reviews` reviews and
    `revisions` revisions; an expert step is the Domain Expert's, draft and reviews, when
    there is one.
    """
    geo = len(list((bench / "input" / "GEO" / "Psoriasis").iterdir()))
    tcga = len(list((bench / "input" / "TCGA").iterdir()))
    plain, expert = 4 * geo + 2 * tcga, 2 * geo + 2 * tcga
    calls: Counter = Counter()
    calls["planner"] = (plain + expert) * options.get("planning", True)
    writes = 1 + revisions
    if options.get("domain_expert", True):
        calls["data_engineer"] = plain * writes
        calls["code_reviewer"] = plain * reviews
        calls["domain_expert"] = expert * (writes + reviews)
    else:
        calls["data_engineer"] = (plain + expert) * writes
        calls["code_reviewer"] = (plain + expert) * reviews
    return +calls


@pytest.mark.slow
@pytest.mark.parametrize(
    ("options", "verdict", "reviews"),
    [
        ({}, "approve", 1),
        ({"planning": False}, "approve", 1),
        ({"domain_expert": False}, "approve", 1),
        ({"review_rounds": 0}, "approve", 0),
        ({"review_rounds": 1}, "reject", 1),
        ({"review_rounds": 2}, "reject", 2),
    ],
)
def test_each_ablation_changes_the_calls_per_role_as_described(
    bench, tmp_path, options, verdict, reviews
):
    task = preprocess(root=str(bench), traits="Psoriasis", sandbox="local")
    log = _eval(task, genoagent(**options), tmp_path, _always(verdict))
    revisions = reviews if verdict == "reject" else 0
    assert +_calls(log) == _expected_calls(bench, options, reviews, revisions)
    assert log.samples[0].store[STORE_KEY]["calls"] == dict(sorted(_calls(log).items()))


def test_no_batch_effect_correction_answers_with_the_plain_lasso(bench, tmp_path):
    import json

    from genotex.harness.runs._capture import STORE_KEY as OUTPUT
    from genotex.harness.runs._capture import unpack_output
    from genotex.harness.solvers._rows import lasso

    task = analysis(root=str(bench), traits="Asthma", sandbox="local")
    log = _eval(task, genoagent(batch_effect_correction=False, library="genotex"), tmp_path / "a",
                team_script(GENOTEX_CODE))  # fmt: skip
    plain = inspect_eval(analysis(root=str(bench), traits="Asthma", sandbox="local"),
                         model="none", solver=lasso(), log_dir=str(tmp_path / "b"),
                         display="none")[0]  # fmt: skip
    assert _scores(log) == _scores(plain)
    for sample in log.samples:
        for name, data in unpack_output(sample.store[OUTPUT], max_bytes=10**9).files.items():
            if name.startswith("regress/"):
                assert json.loads(data)["method"]["model"] == "Lasso", name


# ---- nonsense, a spent budget ---------------------------------------------------------------
def test_a_model_that_answers_nonsense_ends_every_sample_in_bounded_calls(bench, tmp_path):
    task = e2e(root=str(bench), traits="Psoriasis", sandbox="local")
    log = _eval(task, genoagent(), tmp_path, lambda role, message: "I like turtles.")
    assert log.status == "success"  # the agent's failures are scored, never sample errors
    preprocessing = len(units("geo")) * len(list((bench / "input/GEO/Psoriasis").iterdir()))
    preprocessing += len(units("tcga"))
    for sample in log.samples:
        steps = preprocessing + len(sample.metadata["problems"])  # one statistics step each
        metadata = next(iter(sample.scores.values())).metadata
        assert metadata.get("failure") is None and sample.error is None
        assert any("GenoAgent left no" in p["said"] for p in metadata["partial_failures"])
        calls = sum(1 for e in sample.events if isinstance(e, ModelEvent))
        assert 0 < calls <= steps * (2 + 2 * 2)  # planner, draft, and 2 x (review, revision)


def test_a_cohort_out_of_its_budget_is_abandoned_with_its_reason(bench, tmp_path):
    def script(role: str, message: str) -> str:
        if role == "planner":
            return f'{{"step": "{_next_of(message)}"}}'
        if _is_review(message):
            return '{"verdict": "approve"}'
        return _fenced("import time\ntime.sleep(120)")

    task = preprocess(root=str(bench), traits="Asthma", sandbox="local")
    log = _eval(task, genoagent(cohort_seconds=3), tmp_path, script)
    sample = log.samples[0]
    workflows = sample.store[STORE_KEY]["workflows"]
    assert [w["abandoned"] for w in workflows] == [
        f"Asthma/{c} ran out of its 3 s budget at step initial_inspection"
        for c in sorted(p.name for p in (bench / "input/GEO/Asthma").iterdir())
    ] + ["Asthma/TCGA ran out of its 3 s budget at step cohort_selection"]  # among all folders
    metadata = next(iter(sample.scores.values())).metadata
    said = " ".join(p["said"] for p in metadata["partial_failures"])  # scored, not an error
    assert metadata["failure"] is None and "ran out of its 3 s budget" in said
    assert sample.total_time < 60  # three workflows of 3 s, not three of 120


def test_a_genoagent_run_is_exported_with_tokens_per_role_and_printed_beside_the_paper(
    bench, tmp_path
):
    import json
    import subprocess
    import sys

    from genotex.harness import export_run

    task = e2e(root=str(bench), traits="Psoriasis", sandbox="local")
    log = _eval(task, genoagent(), tmp_path / "logs", baseline_script)
    path = export_run(log.location, tmp_path / "run", reference=bench / "reference" / "output")
    runtime = json.loads(path.read_text())["run"]["runtime"]
    calls = _calls(log)
    asked = sum(len(s.metadata["problems"]) for s in log.samples)
    # by hand: 100 input and 20 output tokens a call, in thousands a problem
    assert runtime["tokens_by_role"] == {
        role: {"tokens_in_k": pytest.approx(0.1 * n / asked),
               "tokens_out_k": pytest.approx(0.02 * n / asked)}
        for role, n in calls.items()
    }  # fmt: skip
    assert set(calls) == {"planner", "data_engineer", "domain_expert", "code_reviewer",
                          "statistician"}  # fmt: skip
    board = subprocess.run(
        [sys.executable, "-m", "genotex", "leaderboard", str(path), "--paper", "end-to-end"],
        capture_output=True, text=True,
    )  # fmt: skip
    assert board.returncode == 0, board.stderr
    lines = board.stdout.splitlines()
    assert any(line.startswith("run ") for line in lines), board.stdout
    # GenoAgent's published rows: per model, and its ablations
    assert any(line.startswith("OpenAI o1 (published)") for line in lines), board.stdout
    assert any(line.startswith("No reviewer (published)") for line in lines), board.stdout
    # issue #60, 1: the setting and the budget are in the export; by hand: the task's
    # defaults (every TCGA folder, the raw conditions, 3600 s, 200 messages), GenoAgent's
    # (the paper library, 420 s a cohort, "auto"), and mockllm's factor 1 for every role
    harness = json.loads(path.read_text())["run"]["harness"]
    assert harness["setting"] == {
        "task": "e2e", "tcga": "all", "conditions": "raw", "time_limit": 3600,
        "message_limit": 200, "tools": None, "library": "paper", "cohort_seconds": 420,
        "time_scale": "auto",
    }  # fmt: skip
    assert harness["budget"] == {
        "time_scale_factor": 1.0, "workflow_seconds": 420.0,
        "role_time_scale": dict.fromkeys(sorted(calls), 1.0),
    }  # fmt: skip
    assert any(line.startswith("run ") and "paper setting" in line for line in lines)


def test_every_model_call_is_logged_with_its_role_cohort_and_step(team_log):
    from inspect_ai.event import SpanBeginEvent

    log = team_log(preprocess)
    events = log.samples[0].events
    spans = {e.id: e.name for e in events if isinstance(e, SpanBeginEvent)}
    steps = {u.name for kind in ("geo", "tcga") for u in units(kind)} | {"planning"}
    calls = [e for e in events if isinstance(e, ModelEvent)]
    assert calls
    for call in calls:
        workflow, step, role = spans[call.span_id].split(" · ")
        assert role == call.role and step in steps
        assert workflow == "Psoriasis/TCGA" or workflow.startswith("Psoriasis/GSE")


# ---- per-problem scores, checked arguments and roles (issue #51) -----------------------------
def test_a_team_that_misses_one_problem_is_scored_on_the_others(bench, tmp_path):
    """Every problem but `Psoriasis|Age` answered: status success, no sample error, and each
    other problem scores what `genotex eval` gives the same files (0.8.0 scored all 0).
    """
    from genotex.evaluation import evaluate
    from genotex.harness.runs._capture import STORE_KEY as OUTPUT
    from genotex.harness.runs._capture import unpack_output

    def script(role: str, message: str) -> str:
        if "PROBLEM = 'Psoriasis|Age'" in message and role == "statistician":
            return _fenced("print('I will not answer this one')")
        return baseline_script(role, message)

    task = analysis(root=str(bench), traits="Psoriasis", sandbox="local")
    log = _eval(task, genoagent(), tmp_path, script)
    assert log.status == "success" and len(log.samples) > 1  # a sample a problem here
    out = tmp_path / "answers" / "output"
    values = {}
    for sample in log.samples:
        assert sample.error is None
        score = next(iter(sample.scores.values()))
        assert score.metadata["failure"] is None
        said = " ".join(p["said"] for p in score.metadata["partial_failures"])
        assert ("significant_genes_condition_Age.json" in said) == (sample.id == "Psoriasis__Age")
        values.update({k: v for k, v in score.value.items() if k.startswith("f1@")})
        for name, data in unpack_output(sample.store[OUTPUT], max_bytes=10**9).files.items():
            (out / name).parent.mkdir(parents=True, exist_ok=True)
            (out / name).write_bytes(data)
    assert values["f1@Psoriasis|Age"] == 0
    report = evaluate(out, bench / "reference" / "output", bench / "metadata" / "task_info.json")
    expected = {
        f"f1@{s.problem.key}": s.f1 for s in report.analysis if s.problem.trait == "Psoriasis"
    }
    answered = {k: v for k, v in expected.items() if not k.endswith("|Age")}
    assert set(answered) == set(values) - {"f1@Psoriasis|Age"}
    assert all(values[k] == pytest.approx(v) for k, v in answered.items())
    assert all(v > 0 for v in answered.values())


@pytest.mark.parametrize(
    ("arguments", "said"),
    [
        ({"review_rounds": -1}, "review_rounds must be a whole number from 0 to 10, not -1"),
        ({"review_rounds": 99}, "review_rounds must be a whole number from 0 to 10, not 99"),
        ({"review_rounds": "x"}, "review_rounds must be a whole number from 0 to 10, not 'x'"),
        ({"cohort_seconds": 0}, "cohort_seconds must be above 0"),
        ({"planning": "maybe"}, "planning must be true or false, not 'maybe'"),
        ({"output_chars": "x"}, "output_chars must be a whole number from 200"),
        ({"review_round": 1}, "there is no argument 'review_round'"),
        ({"max_retract": -1}, "max_retract must be a whole number from 0 to 10, not -1"),
        ({"library": "mine"}, "library must be one of paper, genotex, not 'mine'"),
        ({"time_scale": "x"}, "time_scale must be a number, not 'x'"),
        ({"time_scale": 0}, "time_scale must be above 0"),
    ],
)
def test_each_bad_argument_is_one_sentence_before_any_sample(arguments, said):
    from inspect_ai._util.error import PrerequisiteError

    with pytest.raises(PrerequisiteError) as raised:
        genoagent(**arguments)
    assert said in str(raised.value) and str(raised.value).startswith("genotex/genoagent: ")
    if "review_round'" in said:
        assert "did you mean review_rounds?" in str(raised.value)


def test_a_role_genoagent_does_not_play_is_refused_naming_its_roles(bench, tmp_path):
    """`--model-role data_enginer=...` sent 0.8.0's calls to the default model, unsaid."""
    task = analysis(root=str(bench), traits="Psoriasis", sandbox="local")
    roles = {"data_enginer": _role_model("data_engineer", baseline_script)}
    log = inspect_eval(task, model=_team(baseline_script)["planner"], model_roles=roles,
                       solver=genoagent(), log_dir=str(tmp_path), display="none")[0]  # fmt: skip
    # Inspect resolves the roles before the solver is made when given by name (the CLI); from
    # Python the solver is made first, so each sample checks them before any model call
    assert log.status == "error" and log.samples
    for sample in log.samples:
        assert "it plays no model role 'data_enginer'" in sample.error.message
        assert "did you mean data_engineer?" in sample.error.message
        assert not [e for e in sample.events if isinstance(e, ModelEvent)]


def test_zero_shot_top_is_checked_before_any_paid_call():
    from inspect_ai._util.error import PrerequisiteError

    from genotex.harness.solvers._rows import zero_shot

    for top in (-5, 0, "x"):
        with pytest.raises(PrerequisiteError, match="top must be a whole number from 1"):
            zero_shot(top=top)


def test_no_bec_refuses_the_lmm_whatever_a_step_asks_for(bench, tmp_path):
    """0.8.0's No BEC was only a prompt variable: a step asking for the LMM got it (#51)."""

    forced = "LMM if MODEL != 'lasso' and detect_batch_effect(X) else Lasso"
    assert all(forced in CODE[kind] for kind in ("unconditional", "two_step"))

    def script(role: str, message: str) -> str:
        if role == "statistician":  # the step asks for the LMM whatever MODEL says
            return _fenced(CODE[_step_of(message) or ""].replace(forced, "LMM"))
        return baseline_script(role, message)

    task = analysis(root=str(bench), traits="Psoriasis", sandbox="local")
    log = _eval(task, genoagent(batch_effect_correction=False, review_rounds=0), tmp_path, script)
    for sample in log.samples:
        steps = sample.store[STORE_KEY]["workflows"][0]["steps"]
        assert "No BEC" in (steps[0]["error"] or ""), steps
        assert next(iter(sample.scores.values())).value["f1"] == 0


# ---- the paper library in the kernel and in the prompts (issue #51) --------------------------
def _model_events(log) -> list[ModelEvent]:
    """Each model call of the log, its messages read back from the log's attachments."""
    from inspect_ai.log import resolve_sample_attachments

    return [e for s in log.samples for e in resolve_sample_attachments(s).events
            if isinstance(e, ModelEvent)]  # fmt: skip


def _prompts(log) -> list[str]:
    """Every message each model call was sent, system prompt included, from the log."""
    return [str(m.content) for e in _model_events(log) for m in e.input]


def test_a_default_kernel_holds_the_paper_library_and_the_prompts_document_it(bench, tmp_path):
    import genotex.agentlib as agentlib
    from genotex.harness.solvers.genoagent._library import paper_documentation
    from tests.test_paper_library import DENIED

    listing = "print('NAMES', sorted(n for n in globals() if not n.startswith('__')))"

    def script(role: str, message: str) -> str:
        if role == "data_engineer" and _step_of(message) == "initial_inspection":
            return _fenced(f"{listing}\n{CODE['initial_inspection']}")
        return baseline_script(role, message)

    task = preprocess(root=str(bench), traits="Psoriasis", sandbox="local")
    log = _eval(task, genoagent(), tmp_path, script)
    prompts = _prompts(log)
    shown = re.search(r"NAMES (\[.*?\])", "\n".join(prompts)).group(1)
    names = set(eval(shown))  # noqa: S307 - a list of names the kernel printed
    # TRAIT, COHORT_DIR, ... of the workflow (the library's LMM is upper case too)
    workflow = {n for n in names if n.isupper() and n not in agentlib.__all__}
    assert names - workflow == set(agentlib.__all__) | set(agentlib.KERNEL_MODULES)
    assert workflow == {"TRAIT", "OUT_DIR", "SYNONYMS_FILE", "COHORT", "COHORT_DIR"}
    systems = {e.role: str(e.input[0].content) for e in _model_events(log)}
    assert set(systems) == {"planner", "data_engineer", "domain_expert", "code_reviewer"}
    assert all("# The benchmark's guidelines" in text for text in systems.values())
    assert all(paper_documentation() in systems[r] for r in systems if r != "planner")
    for name in DENIED:  # nothing of genotex's pipelines is offered, in any prompt
        offered = re.compile(rf"(?<![\w.]){name}\(|`{name}`")
        assert not [p for p in prompts if offered.search(p)], name


# ---- time as published: the budget scaled per model (issue #51) ------------------------------
@pytest.mark.parametrize(
    ("models", "given", "factor"),
    [
        # the successor's rule, by hand (issue #60, 6): o1, o3 or r1 as a word and no "mini"
        # is x3, DeepSeek's 671B R1 x6, DeepSeek-V3 x3, the rest x1
        (["openai/o1-2024-12-17"], "auto", 3.0),
        (["openai/o3"], "auto", 3.0),
        (["openai/gpt-4o", "openai/o1"], "auto", 3.0),  # the slowest of the team's models
        (["openai/o1-mini"], "auto", 1.0),
        (["openai/o3-mini"], "auto", 1.0),
        (["openai/o4-mini"], "auto", 1.0),
        (["together/deepseek-ai/DeepSeek-R1"], "auto", 3.0),  # case ignored
        (["together/deepseek-ai/DeepSeek-R1-671B"], "auto", 6.0),
        (["together/deepseek-ai/DeepSeek-V3"], "auto", 3.0),
        (["google/gemini-2.5-pro"], "auto", 1.0),
        (["together/Qwen/Qwen3-235B-A22B"], "auto", 1.0),
        (["openai/gpt-4o1x"], "auto", 1.0),  # "o1" inside a word is not the word o1
        # genotex's own rows, where the successor has none
        (["deepseek/deepseek-reasoner"], "auto", 3.0),
        (["google/gemini-2.0-flash-thinking-exp"], "auto", 2.0),
        (["openai/gpt-4o", "mockllm/model"], "auto", 1.0),
        (["openai/o1"], 1.5, 1.5),  # an override wins
    ],
)
def test_the_time_scale_follows_the_table_by_model_or_the_override(models, given, factor):
    from genotex.harness.solvers.genoagent._time import scale_of

    assert scale_of(models, given) == factor


def test_reasoning_switched_on_through_inspect_counts_as_reasoning():
    from inspect_ai.model import GenerateConfig

    from genotex.harness.solvers.genoagent._time import reasoning_on, scale_of

    assert reasoning_on(GenerateConfig(reasoning_effort="high"))
    assert reasoning_on(GenerateConfig(reasoning_tokens=4096))
    assert not reasoning_on(GenerateConfig(reasoning_effort="none"))
    assert not reasoning_on(GenerateConfig())
    # a plain model's x1 becomes the reasoning factor (3); a larger table factor stays
    assert scale_of(["anthropic/claude-sonnet-4"], reasoning=["anthropic/claude-sonnet-4"]) == 3
    assert scale_of(["together/deepseek-ai/DeepSeek-R1-671B"],
                    reasoning=["together/deepseek-ai/DeepSeek-R1-671B"]) == 6  # fmt: skip


def test_a_runs_budget_is_cohort_seconds_times_its_scale_and_is_recorded(bench, tmp_path):
    task = analysis(root=str(bench), traits="Psoriasis", sandbox="local")
    log = _eval(task, genoagent(cohort_seconds=100, time_scale=2.5), tmp_path, baseline_script)
    record = log.samples[0].store[STORE_KEY]
    assert (record["budget_seconds"], record["time_scale"]) == (250.0, 2.5)


@pytest.mark.parametrize("reuse", [False, True])
def test_reuse_code_shows_the_code_approved_in_the_earlier_cohort(bench, tmp_path, reuse):
    """Asthma has two GEO cohorts: with reuse on, each step of the second is asked with the
    code approved for it in the first (marked here by a comment naming the cohort).
    """

    def script(role: str, message: str) -> str:
        step = _step_of(message) or ""
        if role in ("data_engineer", "domain_expert") and not _is_review(message):
            cohort = re.search(r"^COHORT = '(\w+)'", message, re.MULTILINE).group(1)
            return _fenced(f"# written for {cohort}\n{CODE.get(step, '')}")
        return baseline_script(role, message)

    task = preprocess(root=str(bench), traits="Asthma", sandbox="local")
    log = _eval(task, genoagent(reuse_code=reuse), tmp_path, script)
    asks = [p for p in _prompts(log) if "# This step:" in p and "COHORT = 'GSE100002'" in p]
    assert len(asks) == len(units("geo"))
    shown = [p for p in asks if "# Code approved for this step in an earlier cohort" in p]
    assert len(shown) == (len(asks) if reuse else 0)
    assert all("# written for GSE100001" in p for p in shown)
    assert next(iter(log.samples[0].scores.values())).metadata.get("failure") is None


# ---- a run replays from its log (issue #51) ---------------------------------------------------
def _edited(log, into):
    """The log with one code block of a data engineer's reply changed (a number printed)."""
    from inspect_ai.log import resolve_sample_attachments, write_eval_log

    samples = [resolve_sample_attachments(s) for s in log.samples]
    for event in samples[0].events:
        if isinstance(event, ModelEvent) and event.role == "data_engineer":
            message = event.output.choices[0].message
            message.content = str(message.content).replace(
                "```python\n", "```python\nprint(7)\n", 1
            )
            break
    log.samples = samples
    write_eval_log(log, str(into))
    return into


@pytest.mark.parametrize("sandbox", TEAM_SANDBOXES)
def test_a_scripted_run_replays_from_its_log_and_an_edited_log_shows_where(
    bench, tmp_path, sandbox, team_log
):
    from genotex.harness.solvers.genoagent._replay import replay_run

    task = preprocess(root=str(bench), traits="Psoriasis", sandbox=sandbox)
    log = (team_log(preprocess) if sandbox == "local"  # the module's run in local
           else _eval(task, genoagent(), tmp_path / "run", baseline_script))  # fmt: skip
    again = replay_run(log.location, root=bench, log_dir=tmp_path / "again")
    assert again.same, again.differences
    assert again.calls == sum(_calls(log).values()) > 0
    edited = replay_run(
        _edited(log, tmp_path / "edited.eval"), root=bench, log_dir=tmp_path / "edited"
    )
    assert not edited.same
    # by hand: call 1 the planner, 2 the edited draft; its review (3) is sent the edited code
    assert (
        "call 3 (Psoriasis/GSE100005 · initial_inspection · code_reviewer)"
        in (edited.differences[0])
    ), edited.differences


#: bwrap where it runs (a replay is isolated whatever its log says, so a local run's replay
#: is one in bwrap too); local's and podman's replays: the scripted run's test
@pytest.mark.parametrize("sandbox", SANDBOXES[-1:])
def test_a_run_with_an_abandoned_workflow_replays_the_same(bench, tmp_path, sandbox):
    from genotex.harness.solvers.genoagent._replay import replay_run

    def script(role: str, message: str) -> str:
        if role == "data_engineer" and _step_of(message) == "gene_mapping":
            return _fenced("import time\ntime.sleep(120)")
        return baseline_script(role, message)

    task = preprocess(root=str(bench), traits="Psoriasis", sandbox=sandbox)
    log = _eval(task, genoagent(cohort_seconds=10), tmp_path / "run", script)
    workflows = log.samples[0].store[STORE_KEY]["workflows"]
    assert any(w["abandoned"] for w in workflows)
    again = replay_run(log.location, root=bench, log_dir=tmp_path / "again")
    assert again.same, again.differences


def test_a_log_of_one_sample_replays_that_sample_only(bench, tmp_path):
    """Issue #60, 8: 0.10.1 replayed every sample of the task, so a `--limit 1` log failed
    ("planner made a call the log does not hold").
    """
    from genotex.harness.solvers.genoagent._replay import replay_run

    task = preprocess(root=str(bench), traits="Psoriasis,Asthma", sandbox="local")
    team = _team(baseline_script)
    log = inspect_eval(task, model=team["planner"], model_roles=team, solver=genoagent(),
                       log_dir=str(tmp_path / "run"), display="none", limit=1)[0]  # fmt: skip
    assert len(log.samples) == 1
    again = replay_run(log.location, root=bench, sandbox="local", trust_log=True,
                       log_dir=tmp_path / "again")  # fmt: skip
    assert again.same and again.samples == 1, again.differences


def test_a_call_the_log_lacks_is_named_by_its_workflow_step_and_role(bench, tmp_path, team_log):
    from inspect_ai.log import resolve_sample_attachments, write_eval_log

    from genotex.harness.solvers.genoagent._replay import replay_run

    log = team_log(preprocess)
    sample = resolve_sample_attachments(log.samples[0])
    last = max(i for i, e in enumerate(sample.events)
               if isinstance(e, ModelEvent) and e.role == "planner")  # fmt: skip
    sample.events = sample.events[:last] + sample.events[last + 1 :]
    log.samples = [sample]
    write_eval_log(log, str(tmp_path / "short.eval"))
    again = replay_run(tmp_path / "short.eval", root=bench, sandbox="local", trust_log=True,
                       log_dir=tmp_path / "again")  # fmt: skip
    lacking = [d for d in again.differences if "a call the log does not hold" in d]
    # by hand: the planner's last call (the TCGA workflow's, or the last GEO cohort's) has no
    # reply left; its span names the workflow and the step before the role
    assert lacking and lacking[0].startswith("sample Psoriasis: a call the log does not hold ("), (
        again.differences
    )
    assert lacking[0].endswith(" · planner)") and lacking[0].count(" · ") == 2, lacking


def test_harness_replay_exits_0_when_the_same_1_naming_the_difference_and_refuses_a_baseline(
    bench, tmp_path, team_log
):
    import subprocess
    import sys

    def replay(path):
        return subprocess.run([sys.executable, "-m", "genotex", "harness", "replay", str(path),
                               "--root", str(bench)], capture_output=True, text=True)  # fmt: skip

    log = team_log(analysis)
    same = replay(log.location)
    assert same.returncode == 0, same.stderr
    assert "every message, output file and score as logged" in same.stderr
    edited = replay(_edited_statistics(log, tmp_path / "edited.eval"))
    # by hand: the edited answer's review is sent the edited code (the first difference),
    # then the answer file differs (its scores with it): 2 differences
    assert edited.returncode == 1 and "2 differences; the first: sample Psoriasis__" in (
        edited.stderr
    ), edited.stderr
    assert "statistics · conditional_one_step · code_reviewer)" in edited.stderr or (
        "statistics · unconditional · code_reviewer)" in edited.stderr
    )
    plain = inspect_eval(analysis(root=str(bench), traits="Psoriasis", sandbox="local"),
                         model="none", solver=baseline(), log_dir=str(tmp_path / "b"),
                         display="none")[0]  # fmt: skip
    refused = replay(plain.location)
    assert refused.returncode == 1 and "Traceback" not in refused.stderr
    assert "is not the log of a GenoAgent run" in refused.stderr


def test_a_log_asking_more_than_a_replays_caps_is_refused_before_any_code_runs(
    bench, tmp_path, team_log
):
    """Issue #70 item 6: a hostile log could ask for all the memory, 4,096 processes and no
    time limit. Each value past its cap is named; nothing runs; the replayer's word lifts
    the caps (the run then replays as logged).
    """
    from inspect_ai.log import write_eval_log

    from genotex.core import GenotexError
    from genotex.harness import replay_run

    log = team_log(analysis)
    arguments = dict(log.eval.metadata["arguments"])
    arguments.update(time_limit=None, limits="memory_mb=16384,processes=4096")
    log.eval.metadata = {**log.eval.metadata, "arguments": arguments}
    for sample in log.samples:  # the team's options, as its store records them
        sample.store["genoagent"]["options"]["cohort_seconds"] = 86400
    forged = tmp_path / "forged.eval"
    write_eval_log(log, str(forged))
    marker = tmp_path / "again"
    with pytest.raises(GenotexError) as refused:
        replay_run(forged, root=bench, sandbox="local", trust_log=True, log_dir=marker)
    said = str(refused.value)
    assert "time_limit none (cap 14,400)" in said and "cohort_seconds 86400 (cap 3,600)" in said
    assert "limits memory_mb=16,384 (cap 8,192)" in said
    assert "limits processes=4,096 (cap 512)" in said and "allow_log_limits=True" in said
    assert not any(marker.glob("*.eval"))  # nothing ran
    again = replay_run(forged, root=bench, sandbox="local", trust_log=True, log_dir=marker,
                       allow_log_limits=True)  # fmt: skip
    assert again.samples == len(log.samples) and again.calls > 0


def _edited_statistics(log, into):
    """The log with the first statistician reply's answer cut to its first gene."""
    from inspect_ai.log import resolve_sample_attachments, write_eval_log

    samples = [resolve_sample_attachments(s) for s in log.samples]
    for event in samples[0].events:
        if isinstance(event, ModelEvent) and event.role == "statistician":
            message = event.output.choices[0].message
            right = "interpret_result(fitted, genes)"
            assert right in str(message.content)  # the edit applies
            message.content = str(message.content).replace(right, f"{right}[:1]")
            break
    log.samples = samples
    write_eval_log(log, str(into))
    return into


def test_a_code_reviewer_that_always_says_verdict_reject_has_every_step_it_reviews_rewritten(
    bench, tmp_path
):
    """Its own model (`--model-role code_reviewer=...`) answering in prose, "Verdict: REJECT"
    (0.8.0 read it as an approval). By hand, Psoriasis: 1 GEO cohort (4 plain steps, 2
    expert) and 1 TCGA workflow (2 plain, 2 expert); each plain step drafted, rejected and
    rewritten twice (3 drafts, 2 reviews); each expert step drafted and approved by the
    Domain Expert (1 draft, 1 review); one planner call per step.
    """

    def script(role: str, message: str) -> str:
        if role == "code_reviewer":
            return "I looked at it.\n\nVerdict: REJECT\nPrint the shape too."
        return baseline_script(role, message)

    task = preprocess(root=str(bench), traits="Psoriasis", sandbox="local")
    log = _eval(task, genoagent(), tmp_path, script)
    assert +_calls(log) == Counter(
        {"data_engineer": 6 * 3, "code_reviewer": 6 * 2, "domain_expert": 4 * 2, "planner": 10}
    )
    steps = [s for w in log.samples[0].store[STORE_KEY]["workflows"] for s in w["steps"]]
    plain = [s for s in steps if s["reviews"] == 2]
    assert len(plain) == 6 and all(s["approved"] is False for s in plain)


# ---- prompts a literal model reads as meant (issue #60, 4) -----------------------------------
def test_the_rendered_prompts_say_one_thing_each(bench, tmp_path):
    """Each prompt fix, read off the messages a run sent (the correct team, e2e Psoriasis:
    two GEO cohorts, the TCGA folder, the problems), one writer's reply once without code.
    """
    said_prose = []

    def script(role: str, message: str) -> str:
        if role == "data_engineer" and _step_of(message) == "gene_extraction" and not said_prose:
            said_prose.append(message)
            return "I will read the expression table and print its identifiers."
        return baseline_script(role, message)

    log = _eval(e2e(root=str(bench), traits="Psoriasis", sandbox="local"), genoagent(),
                tmp_path, script)  # fmt: skip
    events = _model_events(log)
    sent = [(e.role, str(e.input[0].content), str(e.input[-1].content)) for e in events]
    guidelines = next(system for _, system, _ in sent)
    # one rule for a cohort without the trait: its gene table is saved, as the reference's is
    assert "preprocess no further" not in guidelines
    assert "Without the trait, still make its gene table" in guidelines
    assert "never a guess" not in guidelines and "about 90% sure" in guidelines
    planner = [(system, message) for role, system, message in sent if role == "planner"]
    assert all("everything the guidelines\n  ask to save is saved" in s for s, _ in planner)
    # going back is offered only once a step was taken
    first = [m for _, m in planner if "# The steps taken so far\n\n(none yet)" in m]
    assert first and not any("Going back" in m for m in first), first[:1]
    assert any("Going back is possible 1 more time(s)." in m for _, m in planner)
    # the TCGA prompts never show COHORT_DIR = None beside "set COHORT_DIR = None: then..."
    tcga = [m for _, _, m in sent if "XENA_DIRS" in m]
    assert tcga and not any(re.search(r"^COHORT_DIR = None$", m, re.MULTILINE) for m in tcga)
    assert all("COHORT_DIR  # the Xena folder the cohort_selection step chose" in m for m in tcga)
    # one role text a prompt (issue #69): the Domain Expert has one system prompt whether it
    # writes or reviews (one stable prefix, which a prompt cache reads); the message says
    # what it asks, code or a verdict, and how to answer
    assert all(system.count("You are the ") <= 1 for _, system, _ in sent)
    expert = [(system, message) for role, system, message in sent if role == "domain_expert"]
    writing = [m for _, m in expert if "# This step:" in m]
    reviewing = [m for _, m in expert if "\n# The step: " in m]
    assert writing and reviewing and len({system for system, _ in expert}) == 1
    assert all("Write this step: one fenced Python block" in m for m in writing)
    assert all('{"verdict": "approve"}' in m and "fenced Python" not in m for m in reviewing)
    # every role's system prompt is the same at each of its calls
    for role in ROLES:
        assert len({system for r, system, _ in sent if r == role}) <= 1, role
    # the planner is offered "finish" from its first call, as its prompt says it may
    assert all("finish" in m.split("You may choose any of: ")[1].split(".")[0]
               for _, m in planner)  # fmt: skip
    # the statistician is told its DATA_DIR holds the engineers' tables
    stats = [m for role, _, m in sent if role == "statistician"]
    assert stats and all("DATA_DIR = '.genoagent/preprocess'  # a copy of the team's "
                         "preprocessed tables (what the engineers wrote under "
                         "output/preprocess)" in m for m in stats)  # fmt: skip
    # the annotation is previewed (identifier_review) before its columns are chosen
    mapping = [m for role, _, m in sent if "# This step: gene_mapping" in m]
    assert mapping and all("from the annotation previewed before" in m for m in mapping)
    assert all("get_gene_annotation" not in m.split("# This step: gene_mapping")[1]
               for m in mapping)  # fmt: skip
    assert all("# identifier_review" in m and "Gene Symbol" in m for m in mapping)
    # a reply with no code is asked again, no reviewer called about it
    reviews = [m for role, _, m in sent if role == "code_reviewer"]
    assert not any("# The step: gene_extraction\n" in m and "```python\n\n```" in m
                   for m in reviews)  # fmt: skip
    again = [m for role, _, m in sent if role == "data_engineer" and "answer with one" in m]
    assert again and "the reply held no fenced Python block to run" in again[0]


# ---- genotex's own pipelines, out of a step's reach (issue #60, 7) ---------------------------
def test_a_step_reaching_for_genotexs_pipeline_is_refused_and_flagged_in_the_export(
    bench, tmp_path
):
    """The first draft of two steps reaches for genotex: an import of its preprocessing (in
    code) and `python -m genotex` (a process); the kernel refuses both at run time, the
    reviewer rejects, the revision is the library's code. The export names both steps.
    """
    import json

    from genotex.agentlib._guard import REFUSED
    from genotex.harness import export_run

    reach = {
        "initial_inspection": "import genotex.preprocessing as gp\ngp.preprocess_cohort\n",
        "gene_extraction": "import subprocess, sys\n"
        "subprocess.run([sys.executable, '-m', 'genotex', '--version'], check=True)\n",
    }
    tried: set[str] = set()
    refused: list[str] = []

    def script(role: str, message: str) -> str:
        step = _step_of(message) or ""
        if _is_review(message) and REFUSED in _reviewed(message):
            refused.append(_reviewed(message).split("\n", 1)[0])
            return '{"verdict": "reject", "feedback": "use the library"}'
        if role == "data_engineer" and step in reach and step not in tried:
            tried.add(step)
            return _fenced(reach[step] + CODE[step])
        return baseline_script(role, message)

    task = preprocess(root=str(bench), traits="Psoriasis", sandbox="local")
    log = _eval(task, genoagent(), tmp_path / "logs", script)
    assert refused == ["initial_inspection", "gene_extraction"], refused
    path = export_run(log.location, tmp_path / "run", reference=bench / "reference" / "output")
    reached = json.loads(path.read_text())["run"]["harness"]["reached_pipeline"]
    assert [r.rsplit(" · ", 1)[1] for r in reached] == ["initial_inspection", "gene_extraction"]
    assert all(r.startswith("Psoriasis · Psoriasis/GSE") for r in reached), reached
    # the revisions (the library's own code) ran: the cohort is preprocessed as the baseline's
    assert next(iter(log.samples[0].scores.values())).metadata.get("failure") is None

"""GenoAgent (issue #44) run by scripted models, one a role, no network: the team solves the
demo as genotex/baseline does, the reviewer and the planner change what happens as the
paper describes, each ablation changes the calls per role, and nonsense ends in bounded time.

Each role's model is Inspect's mockllm with a function for its outputs: it reads the message it
is sent (which step, which workflow) and answers as its role's script says; the calls per role are counted from the log's model
events, which Inspect names with their role.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from collections.abc import Callable

import pytest

pytest.importorskip("inspect_ai", reason="the harness extra (inspect-ai) is not installed")
pytestmark = pytest.mark.filterwarnings(
    "ignore::ResourceWarning",
    "ignore::pytest.PytestUnraisableExceptionWarning",
    "ignore::DeprecationWarning",
)
os.environ["INSPECT_DISABLE_MODEL_API"] = "1"

from inspect_ai import eval as inspect_eval  # noqa: E402
from inspect_ai.event import ModelEvent  # noqa: E402
from inspect_ai.model import Model, ModelOutput, ModelUsage, get_model  # noqa: E402

from genotex.harness._sandbox_spec import bwrap_problem  # noqa: E402
from genotex.harness._tasks import analysis, baseline, e2e, preprocess  # noqa: E402
from genotex.harness.genoagent import ROLES, STORE_KEY, genoagent, units  # noqa: E402
from genotex.workflows import write_raw_benchmark  # noqa: E402

SANDBOXES = ["local"] + (["bwrap"] if bwrap_problem() is None else [])
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


def _fenced(code: str) -> str:
    return f"Here is the step.\n\n```python\n{code}\n```\n"


#: The baseline's own work, step by step: propose the recipe, preprocess, link, analyse.
BASELINE_CODE = {
    "dataset_analysis": (
        "proposal = propose_cohort(COHORT_DIR, TRAIT)\n"
        "os.makedirs(os.path.dirname(RECIPE_FILE), exist_ok=True)\n"
        "open(RECIPE_FILE, 'w').write(proposal.toml())\nprint('STEP DONE')"
    ),
    "linking_and_qc": (
        "outcome = preprocess_cohort(COHORT_DIR, TRAIT, SYNONYMS_FILE, OUT_DIR, "
        "recipe=RECIPE_FILE)\nprint(outcome.record)\nprint('STEP DONE')"
    ),
    "cohort_selection": "COHORT_DIR = XENA_DIRS[0]\nprint(COHORT_DIR)\nprint('STEP DONE')",
    "linking": (
        "outcome = preprocess_cohort(COHORT_DIR, TRAIT, SYNONYMS_FILE, OUT_DIR)\n"
        "print(outcome.record)\nprint('STEP DONE')"
    ),
    **{
        name: "result = answer_problem(DATA_DIR, PROBLEM, TASK_INFO_FILE, model=MODEL)\n"
        "write_result(OUT_DIR, result)\nprint('STEP DONE')"
        for name in ("unconditional", "conditional_one_step", "two_step")
    },
}


def baseline_script(role: str, message: str) -> str:
    """Every step as the baseline would do it; every review approves; the planner goes on."""
    if role == "planner":
        return f'{{"step": "{_next_of(message)}"}}'
    if message.startswith("# The step:"):
        return '{"verdict": "approve"}'
    return _fenced(BASELINE_CODE.get(_step_of(message) or "", "print('STEP DONE')"))


@pytest.fixture(scope="module")
def bench(tmp_path_factory):
    folder = tmp_path_factory.mktemp("genoagent")
    write_raw_benchmark(folder / "root", recipes=False)
    return folder / "root"


def _eval(task, solver, tmp_path, script: Script):
    log = inspect_eval(task, model=_team(script)["planner"], model_roles=_team(script),
                       solver=solver, log_dir=str(tmp_path), display="none")[0]  # fmt: skip
    assert log.status == "success", log.error
    return log


def _scores(log) -> dict[str, dict]:
    return {
        str(s.id): next(iter(s.scores.values())).value
        for s in sorted(log.samples, key=lambda s: str(s.id))
    }


def _calls(log) -> Counter:
    return Counter(e.role for s in log.samples for e in s.events if isinstance(e, ModelEvent))


@pytest.mark.parametrize("sandbox", SANDBOXES)
@pytest.mark.parametrize("task", [e2e, analysis])
def test_a_team_writing_the_baselines_steps_scores_what_the_baseline_scores(
    bench, tmp_path, sandbox, task
):
    made = task(root=str(bench), traits="Asthma", sandbox=sandbox)
    ours = _eval(made, genoagent(), tmp_path / "team", baseline_script)
    theirs = inspect_eval(task(root=str(bench), traits="Asthma", sandbox=sandbox),
                          model="none", solver=baseline(), log_dir=str(tmp_path / "base"),
                          display="none")[0]  # fmt: skip
    assert _scores(ours) == _scores(theirs)
    assert all(
        next(iter(s.scores.values())).metadata.get("failure") is None for s in ours.samples
    )
    f1 = [v for s in _scores(ours).values() for k, v in s.items() if k.startswith("f1@")]
    assert f1 and max(f1) > 0  # the answers are real ones, not empty files

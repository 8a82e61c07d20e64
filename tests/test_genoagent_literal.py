"""GenoAgent's prompts taken literally (issue #69): scripted models that do what each message
says, on the realistic demo, and nothing else.

- the planner chooses only among the choices a message lists, and finishes a TCGA workflow
  before its first step when no folder holds the trait's cohort, as its prompt allows;
- an answer that names no choice is answered, saying so, and the workflow's record keeps it;
- the Data Engineer picks a TCGA folder by the instruction's rule (a cancer's type, or a
  folder named for the trait), so Psoriasis, not a cancer, gets none and the melanoma
  folder is never taken for it;
- the statistician keeps an LMM's answer at chance, as the guidelines say the paper does, and
  prints a line saying so; its answers are then the key's.
"""

from __future__ import annotations

import ast
import contextlib
import io
import json
import re

import pytest

pytest.importorskip("inspect_ai", reason="the harness extra (inspect-ai) is not installed")
from tests.conftest import INSPECT_WARNINGS  # noqa: E402

pytestmark = INSPECT_WARNINGS

from inspect_ai import eval as inspect_eval  # noqa: E402
from inspect_ai.event import ModelEvent  # noqa: E402
from inspect_ai.model import ModelOutput, ModelUsage, get_model  # noqa: E402

from genotex.evaluation import EvalOptions, evaluate  # noqa: E402
from genotex.harness.runs._capture import STORE_KEY as OUTPUT  # noqa: E402
from genotex.harness.runs._capture import unpack_output  # noqa: E402
from genotex.harness.runs._tasks import e2e  # noqa: E402
from genotex.harness.solvers.genoagent import ROLES, STORE_KEY, genoagent  # noqa: E402
from genotex.workflows import write_realistic_benchmark  # noqa: E402
from tests.realistic_team import CORRECT  # noqa: E402

#: What the statistician adds to its fit when the guidelines say to report an LMM at chance.
AT_CHANCE = """
if performance['prediction']['accuracy'] < 60:
    print(f"the LMM fits at chance: CV accuracy {performance['prediction']['accuracy']:.1f}%")
"""
#: The guideline the statistician reads it from, word for word.
RULE = "when its cross-validated accuracy is at chance (under 60%), print a line"


def _variable(message: str, name: str) -> object:
    found = re.search(rf"^{name} = (.+?)(?:  #.*)?$", message, re.MULTILINE)
    return ast.literal_eval(found.group(1)) if found else None


def _choices(message: str) -> list[str]:
    listed = message.split("You may choose any of: ", 1)[1].split(". ", 1)[0]
    return [c.strip() for c in listed.split(",")]


def _tcga_folder(message: str) -> str | None:
    """The instruction's rule, literally: the folder of the trait's cancer type, or one named
    for the trait; else none (a related tissue or another disease is not the trait's).
    """
    assert "a folder named for TRAIT itself is its cohort" in message
    trait = str(_variable(message, "TRAIT")).lower()
    folders = _variable(message, "XENA_DIRS") or []
    return next((f for f in folders if trait in f.lower()), None)


def literal_script(role: str, system: str, message: str, asked: list[str]) -> str:
    """Each role doing what its messages say (see the module's docstring)."""
    step = re.search(r"^# (?:This step|The step): (\w+)", message, re.MULTILINE)
    if role == "planner":
        if "names none of the choices" in message:  # the correction: answer from its list
            asked.append(message)
            return json.dumps({"step": re.search(r'in order is "(\w+)"', message).group(1)})
        choices, upcoming = _choices(message), re.search(r'in order is "(\w+)"', message)
        if upcoming.group(1) == "cohort_selection" and "finish" in choices:
            if _tcga_folder(message) is None:  # nothing can apply: nothing to save
                return '{"step": "finish"}'
        if upcoming.group(1) == "dataset_analysis" and not asked:
            return '{"step": "dataset analysis"}'  # a name with a space: not a choice
        return json.dumps({"step": upcoming.group(1)})
    if "\n# The step: " in message:
        return '{"verdict": "approve"}'
    name = step.group(1) if step else ""
    if name == "cohort_selection":
        chosen = _tcga_folder(message)
        code = f"COHORT_DIR = {chosen!r}\nprint(COHORT_DIR)\nprint('STEP DONE')"
    else:
        code = CORRECT.get(name, "print('STEP DONE')")
        if role == "statistician" and RULE in system:
            code = code.replace("    print(save_result(", AT_CHANCE.replace("\n", "\n    ")
                                + "\n    print(save_result(")  # fmt: skip
    return f"```python\n{code}\n```"


def _team(script_state: list[str]) -> dict:
    def model(role: str):
        def answer(messages, tools, tool_choice, config) -> ModelOutput:
            reply = literal_script(role, str(messages[0].content), str(messages[-1].content),
                                   script_state)  # fmt: skip
            output = ModelOutput.from_content("mockllm/model", reply)
            output.usage = ModelUsage(input_tokens=100, output_tokens=20, total_tokens=120)
            return output

        return get_model("mockllm/model", custom_outputs=answer, memoize=False)

    return {role: model(role) for role in ROLES}


@pytest.fixture(scope="module")
def literal_run(tmp_path_factory):
    """One e2e run of Obesity and Psoriasis on the realistic demo (seed 7) by the literal team."""
    folder = tmp_path_factory.mktemp("literal")
    with contextlib.redirect_stdout(io.StringIO()):
        bench = write_realistic_benchmark(folder / "root")
    asked: list[str] = []
    team = _team(asked)
    task = e2e(root=str(bench.root), traits="Obesity,Psoriasis", sandbox="local")
    log = inspect_eval(task, model=team["planner"], model_roles=team, solver=genoagent(),
                       log_dir=str(folder / "logs"), display="none")[0]  # fmt: skip
    assert log.status == "success", log.error
    return bench, log, asked


def _calls(log) -> list[ModelEvent]:
    """Each model call of the log, its messages read back from the log's attachments."""
    from inspect_ai.log import resolve_sample_attachments

    return [e for s in log.samples for e in resolve_sample_attachments(s).events
            if isinstance(e, ModelEvent)]  # fmt: skip


def _workflows(log, sample: str) -> dict[str, dict]:
    found = next(s for s in log.samples if s.id == sample)
    return {w["workflow"]: w for w in found.store[STORE_KEY]["workflows"]}


def test_a_literal_planner_finishes_a_tcga_workflow_that_holds_no_cohort_of_the_trait(
    literal_run,
):
    _, log, _ = literal_run
    for trait in ("Psoriasis", "Obesity"):  # neither is a cancer: no TCGA folder is theirs
        tcga = _workflows(log, trait)[f"{trait}/TCGA"]
        assert tcga["steps"] == [] and tcga["finished_early"] == "cohort_selection", tcga
    for sample in log.samples:
        files = unpack_output(sample.store[OUTPUT], max_bytes=10**9).files
        assert files and not any("Xena" in name for name in files), sorted(files)


def test_an_answer_naming_no_choice_is_answered_and_kept_in_the_record(literal_run):
    _, log, asked = literal_run
    assert len(asked) == 1 and '{"step": "dataset analysis"}' in asked[0]
    workflows = [w for sample in ("Obesity", "Psoriasis") for w in _workflows(log, sample).values()]
    corrected = [c for w in workflows for c in w["plan_corrections"]]
    assert len(corrected) == 1 and "named no choice" in corrected[0], corrected
    assert "took that choice" in corrected[0]
    # the correction is a planner call of its own, logged with the conversation before it
    calls = _calls(log)
    again = [e for e in calls if e.role == "planner" and len(e.input) == 4]
    assert len(again) == 1 and "names none of the choices" in str(again[0].input[-1].content)


def test_the_statistician_keeps_an_lmm_at_chance_says_so_and_answers_as_the_key(literal_run):
    bench, log, _ = literal_run
    calls = _calls(log)
    reviews = [str(e.input[-1].content) for e in calls if e.role == "code_reviewer"]
    printed = {re.search(r"# Context: (\S+) · statistics", m).group(1): m.split(
        "# What it printed")[1] for m in reviews if " · statistics" in m}  # fmt: skip
    said = [problem for problem, text in printed.items()
            if "the LMM fits at chance: CV accuracy" in text]  # fmt: skip
    # the batched cohort's problems only, each said once
    assert sorted(said) == ["Obesity|Gender", "Obesity|None"]
    output = bench.root.parent / "team" / "output"
    for sample in log.samples:
        for name, data in unpack_output(sample.store[OUTPUT], max_bytes=10**9).files.items():
            path = output / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
    report = evaluate(
        output, bench.reference_output, bench.task_info, options=EvalOptions(traits=("Obesity",))
    )
    frame = report.to_frame("problem")
    assert dict(zip(frame["condition"], frame["f1"], strict=True)) == {
        "None": 100.0,
        "Gender": 100.0,
    }

"""The Inspect harness on the demo's generated benchmark, offline: gold, baseline, a scripted agent.

No network: `--model none` for the model-free agents, Inspect's `mockllm/model`
with scripted tool calls (each output carries its token usage, so mockllm never
loads a tokenizer) for the agent, and INSPECT_DISABLE_MODEL_API=1.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("inspect_ai", reason="the harness extra (inspect-ai) is not installed")

from inspect_ai import eval as inspect_eval  # noqa: E402
from inspect_ai.model import ModelOutput, ModelUsage, get_model  # noqa: E402

from genotex.evaluation import EvalOptions, evaluate, load_report, write_report  # noqa: E402
from genotex.harness import Benchmark, export_run  # noqa: E402
from genotex.harness.runs._tasks import analysis, e2e  # noqa: E402
from genotex.harness.sandboxes._podman import default_image, podman_problem  # noqa: E402
from genotex.harness.sandboxes._sandbox_spec import bwrap_problem  # noqa: E402
from genotex.harness.solvers._reference import baseline, gold  # noqa: E402
from genotex.workflows import run_baseline, write_raw_benchmark  # noqa: E402
from tests.conftest import INSPECT_WARNINGS, scripted_agent  # noqa: E402

pytestmark = INSPECT_WARNINGS  # Inspect's async streams are closed late, not genotex's

#: `local`, and the isolated sandboxes that run here (CI runs both; the MCP server runs in each)
ISOLATING = ["local"] + [
    kind
    for kind, problem in (("bwrap", bwrap_problem()), ("podman", podman_problem(default_image())))
    if problem is None or os.environ.get("CI") == "true"
]


@pytest.fixture(scope="module")
def bench(tmp_path_factory):
    folder = tmp_path_factory.mktemp("bench")
    write_raw_benchmark(folder / "root", recipes=False)
    return folder / "root"


def _run(task, solver=None, model="none", tmp=None):
    logs = inspect_eval(task, model=model, solver=solver, log_dir=str(tmp / "logs"), display="none")
    assert logs[0].status == "success", logs[0].error
    return logs[0]


def _values(log):
    return {name: m.value for s in log.results.scores for name, m in s.metrics.items()}


def _ref(bench):
    return bench / "reference" / "output"


@pytest.mark.parametrize("setting", [{}, {"tcga": "matched", "conditions": "given"}])
def test_gold_scores_what_the_reference_scores_against_itself(bench, tmp_path, setting):
    """Gold is the reference itself: 100 everywhere, a two-step's selection too (0.10.1 copied
    only the trait's own preprocessed folder: the raw conditions' were missing, 87.5).
    """
    log = _run(e2e(root=str(bench), **setting), gold(), tmp=tmp_path)
    values = _values(log)
    assert values["selection_accuracy"] == pytest.approx(100.0)
    assert values["csc_gene"] == pytest.approx(1.0) and values["csc_clinical"] == pytest.approx(1)
    ref = bench / "reference" / "output"
    info = Benchmark(bench).task_info
    itself = evaluate(ref, ref, info, options=EvalOptions())
    overall = itself.analysis_by_category()["Overall"]
    for metric in ("success", "precision", "recall", "f1"):
        assert values[metric] == pytest.approx(100.0)
    assert values["auroc"] == pytest.approx(1.0) and values["gsea_es"] == pytest.approx(1.0)
    assert values["csc_linked"] == pytest.approx(1.0) and values["filtering_f1"] == 100.0
    # the trait-prediction columns are the answer's own CV numbers, not a comparison
    assert values["trait_pred_f1"] == pytest.approx(overall["trait_pred_f1"])


def test_baseline_scores_what_genotex_baseline_then_eval_scores(bench, tmp_path):
    log = _run(e2e(root=str(bench)), baseline(), tmp=tmp_path)
    exported = load_report(export_run(log.location, tmp_path / "run", reference=_ref(bench)))
    copy = tmp_path / "copy"
    shutil.copytree(bench, copy)
    run_baseline(copy)
    direct = evaluate(
        copy / "output", copy / "reference" / "output", copy / "metadata" / "task_info.json"
    )
    assert exported.analysis_by_category()["Overall"] == pytest.approx(
        direct.analysis_by_category()["Overall"]
    )
    ours = {s.problem.key: s.f1 for s in exported.analysis}
    assert ours == {s.problem.key: s.f1 for s in direct.analysis}
    assert exported.preprocessing_average("linked") == direct.preprocessing_average("linked")
    assert _values(log)["f1"] == pytest.approx(direct.analysis_by_category()["Overall"]["f1"])


def test_a_diagnosed_export_explains_every_lost_point_from_the_log_alone(bench, tmp_path):
    """#37: the baseline on Asthma alone, diagnosed: every lost point is the reference mode's
    floor (its data and choices are the reference's), its two-step problem included, whose
    condition trait's data (Obesity's) it was given rather than made."""
    task = e2e(root=str(bench), traits="Asthma", conditions="given")
    log = _run(task, baseline(), tmp=tmp_path)
    exported = export_run(
        log.location, tmp_path / "run", reference=_ref(bench), diagnose="reference"
    )
    assert not (tmp_path / "run" / "output" / "preprocess" / "Obesity").exists()
    diagnosed = load_report(exported).diagnosis
    lost = [p for p in diagnosed.problems if p.lost > 0]
    assert {p.problem.trait for p in diagnosed.problems} == {"Asthma"}
    assert any(p.problem.category == "Two-step" for p in lost)
    for problem in lost:
        assert problem.main_stage == "floor" and problem.top is not None, problem
        assert problem.shares["selection"] == 0 and problem.shares["analysis"] == 0, problem
    assert diagnosed.run["reference"] == str(_ref(bench))


def test_a_scripted_wrong_answer_scores_what_genotex_eval_gives_and_its_tokens_are_exported(
    bench, tmp_path
):
    wrong = {
        "significant_genes": {"Variable": ["NOTAGENE", "KRT16"], "Coefficient": [2.0, 1.0]},
        "cv_performance": {"prediction": {"accuracy": 0.5, "f1": 0.25}},
    }
    folder = "output/regress/Asthma"
    target = f"{folder}/significant_genes_condition_None.json"
    commands = [
        f"mkdir -p {folder} && echo '{json.dumps(wrong)}' > {target}",
        "mkdir -p ../escaped && echo x > ../escaped/file",  # outside its folder: never collected
    ]
    task = analysis(root=str(bench), traits="Asthma", limit=1)
    log = _run(task, model=scripted_agent(commands), tmp=tmp_path)
    sample = log.samples[0]
    assert sample.id == "Asthma__None"
    score = next(iter(sample.scores.values()))
    report = load_report(export_run(log.location, tmp_path / "run", reference=_ref(bench)))
    produced = tmp_path / "run" / "output"
    assert sorted(
        p.relative_to(produced).as_posix() for p in produced.rglob("*") if p.is_file()
    ) == ["regress/Asthma/significant_genes_condition_None.json"]
    # genotex eval on the same file gives the same numbers
    pred = tmp_path / "pred"
    (pred / "regress" / "Asthma").mkdir(parents=True)
    shutil.copy(
        produced / "regress/Asthma/significant_genes_condition_None.json", pred / "regress/Asthma/"
    )
    ref = bench / "reference" / "output"
    direct = evaluate(
        pred, ref, Benchmark(bench).task_info, options=EvalOptions(tasks=("analysis",))
    )
    expected = next(s for s in direct.analysis if s.problem.key == "Asthma|None")
    assert score.value["f1"] == pytest.approx(expected.f1)
    # diagnosed: an analysis-only run used the reference's data, so its loss is its analysis
    diagnosed = load_report(
        export_run(log.location, tmp_path / "run2", reference=_ref(bench), diagnose="reference")
    )
    (problem,) = diagnosed.diagnosis.problems
    assert problem.f1["agent"] == pytest.approx(expected.f1)
    assert problem.main_stage == "analysis", (problem, diagnosed.diagnosis.findings)
    assert problem.shares["selection"] == 0
    top = diagnosed.diagnosis.findings[problem.top]
    assert top.error_class == "analysis"
    assert top.file == "regress/Asthma/significant_genes_condition_None.json"
    assert score.value["auroc"] == pytest.approx(expected.auroc)
    assert score.value["trait_pred_f1"] == pytest.approx(expected.trait_pred_f1)
    runtime = report.run["runtime"]
    assert runtime["tokens_in_k"] == pytest.approx(3.0) and runtime[
        "tokens_out_k"
    ] == pytest.approx(0.6)
    board = subprocess.run(
        [
            sys.executable,
            "-m",
            "genotex",
            "leaderboard",
            str(tmp_path / "run" / "eval.json"),
            "--paper",
            "end-to-end",
        ],
        capture_output=True,
        text=True,
    )
    assert board.returncode == 0, board.stderr
    header = board.stdout.splitlines()[0]
    assert "Tk.(K)" in header and "Cost($)" in header and "Time(s)" in header
    row = next(line for line in board.stdout.splitlines() if line.startswith("run "))
    assert "3.0/0.6" in row
    page = write_report(report, tmp_path / "report").read_text()  # the report shows them too
    assert '<th scope="col">Tk.(K)</th>' in page and "<td>3.0/0.6</td>" in page


def test_the_working_folder_never_holds_the_reference(bench):
    reference = str((bench / "reference").resolve())
    for name in ("preprocess", "analysis", "e2e"):
        for spec in Benchmark(bench).samples(name):
            assert not any(
                str(host.resolve()).startswith(reference) and not path.startswith("given/")
                for path, host in spec.files.items()
            )
            assert all(path.startswith(("input/", "metadata/", "given/")) for path in spec.files)


def test_import_genotex_and_eval_import_neither_inspect_nor_mcp(tmp_path):
    probe = (
        "import sys, genotex, genotex.evaluation\n"
        "from genotex.cli import main\n"
        "print(sorted(m for m in ('inspect_ai', 'mcp') if m in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert done.stdout.strip() == "[]", done.stderr


def test_inspects_entry_point_registers_genotex_without_scikit_learn_or_mcp():
    """`inspect eval` loads genotex's registry first: GenoAgent's library (scikit-learn) and
    the MCP client waited there for a run that may never use them (1.4 s of a 6.6 s gold run).
    They load when a team runs or a task asks for the tools; every solver is registered.
    """
    probe = (
        "import sys, genotex.harness._registry\n"
        "from inspect_ai._util.registry import registry_lookup\n"
        "found = [registry_lookup('solver', n) is not None\n"
        "         for n in ('genoagent', 'baseline', 'lasso', 'gold')]\n"
        "print(all(found), sorted(m for m in ('sklearn', 'mcp', 'genotex.agentlib')\n"
        "                        if m in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert done.stdout.strip() == "True []", done.stderr


def test_the_docker_sandbox_runs_the_image_without_network_and_with_the_limits():
    import json

    from genotex.harness.sandboxes._choice import docker_compose
    from genotex.harness.sandboxes._sandbox_spec import SandboxLimits

    path = docker_compose("localhost/genotex-sandbox:x", SandboxLimits(memory_mb=700, processes=9))
    service = json.loads(path.read_text())["services"]["default"]  # JSON: YAML Inspect reads
    assert service["image"] == "localhost/genotex-sandbox:x" and service["x-local"] is True
    assert service["network_mode"] == "none" and service["cap_drop"] == ["ALL"]
    assert service["mem_limit"] == "700m" and service["pids_limit"] == 9
    assert service["memswap_limit"] == "700m"  # no swap past the memory bound
    assert service["tmpfs"] == ["/tmp:size=4096m,nr_inodes=200000,mode=1777"]
    assert set(service["environment"]) == {"HOME", "TMPDIR"}  # nothing of the host's
    assert "build" not in service and "volumes" not in service  # nothing of the host mounted


@pytest.mark.parametrize(
    ("version", "older"), [("20.10.24+dfsg1", True), ("24.0.5", True), ("24.0.6", False)]
)
def test_a_docker_engine_older_than_inspect_accepts_is_named_not_run(
    monkeypatch, tmp_path, version, older
):
    from genotex.harness.sandboxes import _choice

    fake = tmp_path / "docker"  # a docker CLI whose daemon says `version`, with every image
    fake.write_text(f'#!/bin/sh\n[ "$1" = version ] && echo "{version}"; exit 0\n')
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}:{os.environ['PATH']}")
    _choice.docker_problem.cache_clear()
    try:
        problem = _choice.docker_problem("some-image")
    finally:
        _choice.docker_problem.cache_clear()
    assert (problem is not None and "older than the 24.0.6" in problem) is older
    assert problem is None or older


def _docker_problem() -> str | None:
    from genotex.harness.sandboxes._choice import docker_problem
    from genotex.harness.sandboxes._podman import default_image

    return docker_problem(default_image())


@pytest.mark.skipif(_docker_problem() is not None, reason=f"no Docker sandbox: {_docker_problem()}")
def test_gold_in_the_docker_sandbox_scores_one(bench, tmp_path):
    task = e2e(root=str(bench), sandbox="docker", limit=1)
    values = _values(_run(task, gold(), tmp=tmp_path))
    assert values["f1"] == pytest.approx(100.0) and values["auroc"] == pytest.approx(1.0)


@pytest.mark.parametrize("sandbox", ISOLATING)
def test_with_tools_genotex_the_agent_calls_genotex_over_mcp(bench, tmp_path, sandbox):
    outputs = [
        ModelOutput.for_tool_call("mockllm/model", "list_problems", {}),
        ModelOutput.for_tool_call(
            "mockllm/model", "score_genes", {"genes": ["KRT16", "SOX17"], "trait": "Asthma"}
        ),
        ModelOutput.for_tool_call("mockllm/model", "submit", {"answer": "done"}),
    ]
    for output in outputs:
        output.usage = ModelUsage(input_tokens=10, output_tokens=5, total_tokens=15)
    model = get_model("mockllm/model", custom_outputs=outputs)
    task = analysis(root=str(bench), traits="Asthma", limit=1, tools="genotex", sandbox=sandbox)
    log = _run(task, model=model, tmp=tmp_path)
    results = [m for m in log.samples[0].messages if m.role == "tool"]
    assert len(results) == 2 and all(m.error is None for m in results)
    assert "Asthma|None" in str(results[0].content)  # the sample's own task_info, via MCP
    assert '"f1"' in str(results[1].content)


def test_every_samples_task_info_is_one_genotex_reads(bench):
    from genotex.core import TaskInfo

    for name in ("preprocess", "analysis", "e2e"):
        for spec in Benchmark(bench).samples(name):
            info = TaskInfo.from_dict(spec.task_info)  # raises if genotex would refuse it
            assert set(spec.problems) <= set(info.problems())  # what the sample asks is in it


def test_the_analysis_baseline_answers_its_problem(bench, tmp_path):
    task = analysis(root=str(bench), traits="Psoriasis")
    log = _run(task, baseline(), tmp=tmp_path)
    values = _values(log)
    assert values["success"] == pytest.approx(100.0) and values["f1"] > 0


def test_several_epochs_are_scored_apart_and_give_a_range(bench, tmp_path):
    task = e2e(root=str(bench), traits="Psoriasis")
    log = inspect_eval(
        task, model="none", solver=gold(), epochs=2, log_dir=str(tmp_path / "logs"), display="none"
    )[0]
    assert log.status == "success"
    report = load_report(export_run(log.location, tmp_path / "run", reference=_ref(bench)))
    assert (tmp_path / "run" / "epochs" / "epoch-2" / "output" / "regress" / "Psoriasis").is_dir()
    assert sorted(report.run["epochs"]) == ["1", "2"]
    assert report.run["epochs"]["2"]["f1"] == pytest.approx(100.0)
    assert report.run["runtime"]["epochs"] == 2 and len(report.run["runtime"]["per_epoch"]) == 2
    board = subprocess.run(
        [sys.executable, "-m", "genotex", "leaderboard", str(tmp_path / "run" / "eval.json")],
        capture_output=True,
        text=True,
    )
    assert "1.00 [1.00, 1.00]" in board.stdout  # AUROC with its range over the epochs


def test_the_readmes_inspect_command_runs_as_written(bench, tmp_path):
    inspect_cli = shutil.which("inspect", path=str(Path(sys.executable).parent))
    assert inspect_cli is not None
    done = subprocess.run(
        [inspect_cli, "eval", "genotex/e2e", "--model", "none", "--solver", "genotex/gold"]
        + ["-T", f"root={bench}", "-T", "traits=Asthma,Obesity", "--log-dir", str(tmp_path)]
        + ["--display", "plain"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**os.environ, "INSPECT_DISABLE_MODEL_API": "1"},
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "e2e (2 samples)" in done.stdout and "f1" in done.stdout


def test_the_image_command_refuses_in_one_sentence_without_an_engine_or_a_wheel(tmp_path):
    env = {**os.environ, "PATH": str(Path(sys.executable).parent), "GENOTEX_PODMAN": ""}
    done = subprocess.run(
        [sys.executable, "-m", "genotex", "harness", "image"],
        capture_output=True,
        text=True,
        env=env,
    )
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert "no podman found on this machine" in done.stderr
    fake = tmp_path / "podman"
    fake.write_text("#!/bin/sh\nexit 0\n")
    fake.chmod(0o755)
    missing = tmp_path / "genotex-9.9.9-py3-none-any.whl"
    done = subprocess.run(
        [sys.executable, "-m", "genotex", "harness", "image", "--wheel", str(missing)],
        capture_output=True,
        text=True,
        env={**env, "GENOTEX_PODMAN": str(fake)},
    )
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert f"{missing} does not exist" in done.stderr


# ---- the paper's task as the default setting (issue #51) --------------------------------------
def _inputs(spec) -> set[str]:
    """The folders a sample's files come from: input/GEO/<trait>, input/TCGA/<folder>, given/..."""
    return {
        "/".join(path.split("/")[:3]) for path in spec.files if path.split("/")[0] != "metadata"
    }


def test_the_paper_setting_gives_every_xena_folder_and_the_conditions_raw_inputs(bench):
    """By hand, the demo: Asthma's two-step problem needs Obesity; the only Xena folder is
    Psoriasis's. The paper's agent gets every Xena folder and Obesity's raw GEO cohorts;
    `tcga=matched, conditions=given` gives Asthma no Xena folder and Obesity's reference data.
    """
    bench_ = Benchmark(bench)
    (paper,) = bench_.samples("e2e", ["Asthma"])
    assert (paper.given, paper.raw) == ((), ("Obesity",))
    assert _inputs(paper) == {"input/GEO/Asthma", "input/GEO/Obesity",
                              "input/TCGA/TCGA_Psoriasis_(DEMO)"}  # fmt: skip
    (old,) = bench_.samples("e2e", ["Asthma"], tcga="matched", conditions="given")
    assert (old.given, old.raw) == (("Obesity",), ())
    assert _inputs(old) == {"input/GEO/Asthma", "given/preprocess/Obesity"}
    (psoriasis,) = bench_.samples("preprocess", ["Psoriasis"], tcga="matched")
    assert "input/TCGA/TCGA_Psoriasis_(DEMO)" in _inputs(psoriasis)
    # analysis is unchanged: the problem's data, the condition's included, is given
    two_step = [s for s in bench_.samples("analysis", ["Asthma"]) if s.id == "Asthma__Obesity"]
    assert _inputs(two_step[0]) == {"given/preprocess/Asthma", "given/preprocess/Obesity"}


def test_a_log_made_before_the_setting_existed_exports_as_the_conditions_given(bench, tmp_path):
    """A 0.9.0 e2e log records no `conditions` (its samples were given the conditions' data):
    export plans it so, and scores it as the same log that says so.
    """
    from inspect_ai.log import read_eval_log, write_eval_log

    task = e2e(root=str(bench), traits="Asthma", conditions="given", tcga="matched")
    log = _run(task, baseline(), tmp=tmp_path)
    said = load_report(export_run(log.location, tmp_path / "said", reference=_ref(bench)))
    old = read_eval_log(log.location)
    for name in ("conditions", "tcga"):
        old.eval.metadata["arguments"].pop(name)
    write_eval_log(old, str(tmp_path / "old.eval"))
    unsaid = load_report(
        export_run(tmp_path / "old.eval", tmp_path / "unsaid", reference=_ref(bench))
    )
    assert {s.problem.key: s.f1 for s in unsaid.analysis} == {
        s.problem.key: s.f1 for s in said.analysis
    }
    assert unsaid.to_frame("average").equals(said.to_frame("average"))
    assert not (tmp_path / "unsaid" / "output" / "preprocess" / "Obesity").exists()


def test_an_agents_own_answer_then_genotexs_regress_both_land_and_are_scored(bench, tmp_path):
    """A sample's folder has the reference's shape (task_info.json beside an output/ of
    answers): the harness marks it as the agent's own, so genotex's writers in it (here
    `genotex regress` after an answer the agent wrote itself) are not refused, and the
    sign is not collected as an answer."""
    folder, name = "output/regress/Obesity", "significant_genes_condition_None.json"
    answer = {"significant_genes": {"Variable": ["LEP"], "Coefficient": [1.0]}}
    regress = (
        f"{sys.executable} -m genotex regress --preprocessed given/preprocess --task-info "
        "metadata/task_info.json --out output/regress --trait Obesity --condition Gender"
    )
    commands = [
        f"mkdir -p {folder} && echo '{json.dumps(answer)}' > {folder}/{name}",
        f"{regress} > regress.txt 2>&1; echo $? > regress.rc",
    ]
    task = analysis(root=str(bench), traits="Obesity")
    log = inspect_eval(
        task, model=scripted_agent(commands), sample_id="Obesity__Gender",
        log_dir=str(tmp_path / "logs"), display="none",
    )[0]  # fmt: skip
    assert log.status == "success", log.error
    export_run(log.location, tmp_path / "run", reference=_ref(bench))
    produced = tmp_path / "run" / "output"
    assert sorted(
        p.relative_to(produced).as_posix() for p in produced.rglob("*") if p.is_file()
    ) == [
        "regress/Obesity/significant_genes_condition_Gender.json",
        "regress/Obesity/significant_genes_condition_None.json",
        "regress/status.json",
    ]


# ---- per-trait logs of one model and setting: one row (issue #69) ----------------------------
def test_per_trait_logs_export_as_one_row_equal_to_eval_on_the_merged_tree(bench, tmp_path):
    """Two runs of the baseline, one trait each, exported together: the row is genotex eval on
    the tree they make together; the same trait twice, or another setting, is refused with
    every differing field named, and nothing is written.
    """
    from genotex.core import GenotexError

    logs = [
        _run(e2e(root=str(bench), traits=trait, sandbox="local"), baseline(),
             tmp=tmp_path / trait).location
        for trait in ("Asthma", "Psoriasis")
    ]  # fmt: skip
    reference = bench / "reference" / "output"
    path = export_run(logs, tmp_path / "run", reference=reference)
    saved = load_report(path)
    direct = evaluate(tmp_path / "run" / "output", reference, bench / "metadata/task_info.json",
                      options=EvalOptions(traits=("Asthma", "Psoriasis")))  # fmt: skip
    exported, expected = saved.to_frame("average"), direct.to_frame("average")
    assert len(exported) == len(expected) > 0
    assert exported["average"].tolist() == pytest.approx(expected["average"].tolist(), nan_ok=True)
    assert saved.run["harness"]["logs"] == [str(log) for log in logs]
    # by hand: Asthma's 4 problems (None, Age, Gender, Obesity) and Psoriasis's 2 (None, Age)
    assert saved.run["problems_in_task_info"] == len(saved.analysis or ()) == 6
    with pytest.raises(GenotexError, match="both ran trait 'Asthma'"):
        export_run([logs[0], logs[0]], tmp_path / "twice", reference=reference)
    other = _run(e2e(root=str(bench), traits="Psoriasis", sandbox="local", tcga="matched",
                     time_limit=20000), gold(), tmp=tmp_path / "other").location  # fmt: skip
    with pytest.raises(GenotexError) as refused:
        export_run([logs[0], other], tmp_path / "mixed", reference=reference)
    said = str(refused.value)
    assert "tcga=all against tcga=matched" in said
    assert "time_limit=3600 against time_limit=20000" in said
    assert "solver baseline against gold" in said
    assert not (tmp_path / "twice").exists() and not (tmp_path / "mixed").exists()

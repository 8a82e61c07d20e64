"""A run's score comes from its log alone (issue #34): each reproduction of the issue, as a test.

Offline, on the demo's generated benchmark: `--model none` with model-free
solvers written here (nothing, the gold answers, a crash, a sleep past the
time limit, gold on one epoch only), INSPECT_DISABLE_MODEL_API=1.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import anyio
import pytest

pytest.importorskip("inspect_ai", reason="the harness extra (inspect-ai) is not installed")
from tests.conftest import INSPECT_WARNINGS  # noqa: E402

pytestmark = INSPECT_WARNINGS

from inspect_ai import eval as inspect_eval  # noqa: E402
from inspect_ai._util.error import PrerequisiteError  # noqa: E402
from inspect_ai.log import read_eval_log, write_eval_log  # noqa: E402
from inspect_ai.solver import Generate, TaskState, solver  # noqa: E402
from inspect_ai.util import sandbox  # noqa: E402

from genotex.core import GenotexError, TaskInfo  # noqa: E402
from genotex.evaluation import EvalOptions, evaluate, load_report  # noqa: E402
from genotex.harness import export_run  # noqa: E402
from genotex.harness.runs._capture import STORE_KEY, pack_output, unpack_output  # noqa: E402
from genotex.harness.runs._tasks import analysis, e2e  # noqa: E402
from genotex.harness.solvers._reference import gold  # noqa: E402
from genotex.workflows import write_raw_benchmark  # noqa: E402


@pytest.fixture(scope="module")
def bench(tmp_path_factory):
    folder = tmp_path_factory.mktemp("bench")
    write_raw_benchmark(folder / "root", recipes=False)
    return folder / "root"


def bench_problems(bench: Path, trait: str) -> list[str]:
    info = TaskInfo.read(bench / "metadata" / "task_info.json")
    return [p.key for p in info.problems() if p.trait == trait]


def _ref(bench: Path) -> Path:
    return bench / "reference" / "output"


@solver
def nothing():
    async def solve(state: TaskState, generate: Generate) -> TaskState:
        return state

    return solve


@solver
def crash_on(sample_id: str):
    """Gold, except that one sample's agent raises."""
    copy = gold()

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        if state.sample_id == sample_id:
            raise RuntimeError("the agent crashed")
        return await copy(state, generate)

    return solve


@solver
def gold_then_sleep(sample_id: str, seconds: float):
    """Gold answers, then one sample's agent sleeps past the time limit."""
    copy = gold()

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        state = await copy(state, generate)
        if state.sample_id == sample_id:
            await anyio.sleep(seconds)
        return state

    return solve


@solver
def gold_on_epoch(epoch: int):
    """Nothing on every epoch but `epoch`, where it writes the gold answers."""
    copy = gold()

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        return await copy(state, generate) if state.epoch == epoch else state

    return solve


def _run(task, solver_, tmp, **options):
    logs = inspect_eval(
        task, model="none", solver=solver_, log_dir=str(tmp / "logs"), display="none", **options
    )
    return logs[0]


def _metrics(log) -> dict[str, float]:
    return {name: m.value for s in log.results.scores for name, m in s.metrics.items()}


def test_a_do_nothing_run_after_gold_in_the_same_folder_scores_zero(bench, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the old harness shared ./genotex-outputs between runs
    first = _run(analysis(root=str(bench), traits="Asthma"), gold(), tmp_path)
    assert _metrics(first)["f1"] == pytest.approx(100.0)
    second = _run(analysis(root=str(bench), traits="Asthma"), nothing(), tmp_path)
    assert second.status == "success"
    assert _metrics(second)["f1"] == 0.0 and _metrics(second)["success"] == 0.0
    report = load_report(export_run(second.location, tmp_path / "run", reference=_ref(bench)))
    assert report.analysis_by_category()["Overall"]["f1"] == 0.0


def test_the_reference_is_never_guessed_between_two_folders_of_answers(tmp_path):
    root = tmp_path / "root"
    write_raw_benchmark(root, recipes=False)
    shutil.copytree(_ref(root), root / "output")  # a pipeline's (or agent's) own answers
    with pytest.raises(PrerequisiteError) as refused:
        e2e(root=str(root))
    message = str(refused.value)
    assert str(root / "output") in message and str(_ref(root)) in message
    assert "-T reference=DIR" in message
    task = e2e(root=str(root), reference=str(_ref(root)), traits="Asthma")
    assert task.metadata["reference"]["path"] == str(_ref(root))


def test_a_task_without_root_is_one_sentence():
    with pytest.raises(PrerequisiteError, match=r"the benchmark root is not given: -T root=BENCH"):
        e2e()


def test_the_log_records_version_arguments_sandbox_and_the_references_digest(bench, tmp_path):
    log = _run(analysis(root=str(bench), traits="Asthma", limit=1), gold(), tmp_path)
    metadata = log.eval.metadata
    assert metadata["genotex_version"] and metadata["sandbox"] == "bwrap"  # the default here
    assert metadata["arguments"]["traits"] == "Asthma" and metadata["arguments"]["limit"] == 1
    files = metadata["reference"]["files"]
    # every file that scores the sample, with its size and sha256 as computed independently
    import hashlib

    answer = "regress/Asthma/significant_genes_condition_None.json"
    data = (_ref(bench) / answer).read_bytes()
    assert files[answer] == [len(data), hashlib.sha256(data).hexdigest()]
    sample = log.samples[0]
    stored = sample.store[STORE_KEY]
    score = next(iter(sample.scores.values()))
    assert stored["sha256"] == score.metadata["output"]["sha256"]
    assert unpack_output(stored, max_bytes=10**9).files[answer.replace("regress/", "regress/")]


def test_export_scores_from_the_log_alone_on_another_machine(bench, tmp_path):
    log = _run(e2e(root=str(bench), traits="Asthma,Psoriasis"), gold(), tmp_path)
    inspect_f1 = _metrics(log)["f1"]
    # another machine: only the log and a copy of the reference; the benchmark root is gone
    elsewhere = tmp_path / "elsewhere"
    shutil.copytree(_ref(bench), elsewhere / "reference")
    shutil.copy(log.location, elsewhere / "run.eval")
    report = load_report(
        export_run(elsewhere / "run.eval", elsewhere / "run", reference=elsewhere / "reference")
    )
    assert report.analysis_by_category()["Overall"]["f1"] == pytest.approx(inspect_f1)
    here = load_report(export_run(log.location, tmp_path / "run", reference=_ref(bench)))
    assert here.analysis_by_category() == report.analysis_by_category()
    assert here.to_frame("average").equals(report.to_frame("average"))


def test_export_refuses_a_reference_that_differs_from_the_logs(bench, tmp_path):
    log = _run(analysis(root=str(bench), traits="Asthma", limit=1), gold(), tmp_path)
    changed = tmp_path / "changed"
    shutil.copytree(_ref(bench), changed)
    answer = changed / "regress" / "Asthma" / "significant_genes_condition_None.json"
    data = json.loads(answer.read_text())
    data["significant_genes"]["Variable"].reverse()
    answer.write_text(json.dumps(data))
    with pytest.raises(GenotexError) as refused:
        export_run(log.location, tmp_path / "run", reference=changed)
    assert "is not the reference the run" in str(refused.value)
    assert "regress/Asthma/significant_genes_condition_None.json" in str(refused.value)
    assert not (tmp_path / "run").exists()  # nothing written


def test_export_scores_exactly_the_samples_that_ran(bench, tmp_path):
    task = analysis(root=str(bench), traits="Asthma")
    log = _run(task, gold(), tmp_path, sample_id="Asthma__Obesity")
    assert _metrics(log)["f1"] == pytest.approx(100.0)
    report = load_report(export_run(log.location, tmp_path / "run", reference=_ref(bench)))
    assert [s.problem.key for s in report.analysis] == ["Asthma|Obesity"]
    assert report.analysis_by_category()["Overall"]["f1"] == pytest.approx(100.0)
    assert report.run["problems_in_task_info"] == 1


def test_epochs_are_reduced_by_the_mean_and_the_export_keeps_them_apart(bench, tmp_path):
    task = analysis(root=str(bench), traits="Asthma")
    log = _run(task, gold_on_epoch(2), tmp_path, epochs=2)
    # epoch 1 writes nothing (F1 0 on every problem), epoch 2 the answers (F1 100)
    assert _metrics(log)["f1"] == pytest.approx(50.0)
    assert _metrics(log)["success"] == pytest.approx(50.0)
    report = load_report(export_run(log.location, tmp_path / "run", reference=_ref(bench)))
    assert report.analysis_by_category()["Overall"]["f1"] == pytest.approx(50.0)
    assert report.run["epochs"]["1"]["f1"] == 0.0 and report.run["epochs"]["2"]["f1"] == 100.0
    assert report.run["epoch_range"]["f1"] == {"mean": 50.0, "min": 0.0, "max": 100.0}
    for epoch, f1 in (("1", 0.0), ("2", 100.0)):
        alone = load_report(tmp_path / "run" / "epochs" / f"epoch-{epoch}" / "eval.json")
        assert alone.analysis_by_category()["Overall"]["f1"] == f1


def test_each_metric_has_a_standard_error_over_the_items(bench, tmp_path):
    task = analysis(root=str(bench), traits="Asthma")
    log = _run(task, gold_on_epoch(1), tmp_path)
    metrics = _metrics(log)
    assert metrics["f1_stderr"] == 0.0  # every problem 100
    log = _run(task, gold_on_epoch(2), tmp_path, epochs=2)
    metrics = _metrics(log)
    # each problem's epoch mean is 50: no spread between problems
    assert metrics["f1"] == pytest.approx(50.0) and metrics["f1_stderr"] == pytest.approx(0.0)


def test_a_sample_that_hits_the_time_limit_scores_zero_and_counts(bench, tmp_path):
    task = analysis(root=str(bench), traits="Asthma", time_limit=3)
    log = _run(task, gold_then_sleep("Asthma__Obesity", 30), tmp_path)
    assert log.status == "success" and log.results is not None
    scored = {str(s.id): next(iter(s.scores.values())) for s in log.samples}
    problems = len(bench_problems(bench, "Asthma"))
    assert len(scored) == problems >= 3  # no sample left out
    failed = scored["Asthma__Obesity"]
    assert "time limit" in failed.metadata["failure"] and failed.value["f1"] == 0.0
    # the paper's average over the problems: 100 for all but the one that ran out of time
    expected = 100 * (problems - 1) / problems
    assert _metrics(log)["f1"] == pytest.approx(expected)
    assert _metrics(log)["success"] == pytest.approx(expected)
    report = load_report(export_run(log.location, tmp_path / "run", reference=_ref(bench)))
    assert report.analysis_by_category()["Overall"]["f1"] == pytest.approx(expected)
    assert report.run["runtime"]["success"] == pytest.approx(expected)
    assert [f["sample"] for f in report.run["harness"]["failures"]] == ["Asthma__Obesity"]


def test_a_sample_that_errors_scores_zero_and_counts(bench, tmp_path):
    task = analysis(root=str(bench), traits="Asthma")
    log = _run(task, crash_on("Asthma__None"), tmp_path)
    assert log.results is not None
    scored = {str(s.id): next(iter(s.scores.values())) for s in log.samples}
    assert "the agent crashed" in scored["Asthma__None"].metadata["failure"]
    problems = len(bench_problems(bench, "Asthma"))
    expected = 100 * (problems - 1) / problems
    assert len(scored) == problems and _metrics(log)["f1"] == pytest.approx(expected)
    report = load_report(export_run(log.location, tmp_path / "run", reference=_ref(bench)))
    assert report.analysis_by_category()["Overall"]["f1"] == pytest.approx(expected)


def test_the_scorer_is_not_bound_by_the_agents_time_limit(bench, tmp_path, monkeypatch):
    # Inspect gives scoring half the sample's time limit; the capture and scoring are shielded
    from genotex.harness.runs import _scorer

    real = _scorer._collect

    async def slow_collect(max_bytes):
        await anyio.sleep(2.5)
        return await real(max_bytes)

    monkeypatch.setattr(_scorer, "_collect", slow_collect)
    log = _run(analysis(root=str(bench), traits="Asthma", limit=1, time_limit=4), gold(), tmp_path)
    assert log.status == "success" and log.samples[0].error is None
    assert _metrics(log)["f1"] == pytest.approx(100.0)


# ---- forged or edited logs --------------------------------------------------------------------
def _edited(log_path: str, tmp: Path, edit) -> Path:
    log = read_eval_log(log_path)
    edit(log)
    target = tmp / "edited.eval"
    write_eval_log(log, str(target))
    return target


@pytest.fixture(scope="module")
def gold_log(bench, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("gold")
    return _run(analysis(root=str(bench), traits="Asthma", limit=1), gold(), tmp).location


def _files_under(folder: Path) -> set[str]:
    return {p.relative_to(folder).as_posix() for p in folder.rglob("*")}


@pytest.mark.parametrize(
    ("edit", "says"),
    [
        (lambda log: setattr(log.samples[0], "id", "../../../../ESC"), "does not plan"),
        (lambda log: log.samples[0].metadata.update(trait="../../../../ESC"), "another trait"),
        (lambda log: setattr(log.samples[0], "epoch", 10**9), "epoch"),
        (
            lambda log: log.eval.metadata["task_info"].update({"../x": {"related_genes": []}}),
            "task_info genotex refuses",
        ),
        (lambda log: log.eval.metadata.update(traits=["../../../ESC"]), "would escape"),
        (
            lambda log: log.samples[0].store.update(
                {STORE_KEY: pack_output({"regress/Asthma/x.json": b"{}"}) | {"sha256": "0" * 64}}
            ),
            "damaged",
        ),
        (lambda log: log.eval.metadata.pop("reference"), "records no reference digest"),
    ],
    ids=["sample-id", "trait", "epoch", "task-info", "traits", "digest", "no-reference"],
)
def test_a_forged_log_is_refused_and_nothing_is_written_outside_out(
    bench, gold_log, tmp_path, edit, says
):
    forged = _edited(gold_log, tmp_path, edit)
    before = _files_under(tmp_path)
    with pytest.raises(GenotexError, match=says):
        export_run(forged, tmp_path / "sub" / "run", reference=_ref(bench))
    assert _files_under(tmp_path) == before  # neither the run folder nor anything else


def test_a_forged_output_path_never_leaves_out(bench, gold_log, tmp_path):
    def escape(log):
        packed = pack_output({"regress/Asthma/x.json": b"{}"})
        packed["files"][0]["path"] = "../../../../ESC/x.json"
        log.samples[0].store[STORE_KEY] = packed

    forged = _edited(gold_log, tmp_path, escape)
    with pytest.raises(GenotexError, match="would escape"):
        export_run(forged, tmp_path / "run", reference=_ref(bench))
    assert not (tmp_path / "run").exists() and not list(tmp_path.parent.glob("ESC"))


def test_a_host_path_in_a_log_is_never_read(bench, gold_log, tmp_path):
    secret = tmp_path / "host" / "regress" / "Asthma"
    secret.mkdir(parents=True)
    (secret / "significant_genes_condition_None.json").write_text('{"secret": 1}')

    def point_at_host(log):
        score = next(iter(log.samples[0].scores.values()))
        score.metadata["output_dir"] = str(tmp_path / "host")  # what the old export copied from
        log.eval.metadata["root"] = str(tmp_path / "host")

    forged = _edited(gold_log, tmp_path, point_at_host)
    export_run(forged, tmp_path / "run", reference=_ref(bench))
    copied = tmp_path / "run" / "output" / "regress" / "Asthma"
    assert '"secret"' not in (copied / "significant_genes_condition_None.json").read_text()


def test_a_stored_tree_is_inflated_within_its_bound():
    packed = pack_output({"regress/a.json": b"0" * 10_000_000})
    with pytest.raises(ValueError, match="more than"):
        unpack_output(packed, max_bytes=1_000_000)
    packed["files"][0]["bytes"] = 10  # a small size declared for a large stream
    with pytest.raises(ValueError, match="do not inflate"):
        unpack_output(packed, max_bytes=1_000_000)


def test_the_agents_tree_in_the_log_is_what_genotex_eval_scores(bench, tmp_path):
    @solver
    def one_wrong_answer():
        async def solve(state: TaskState, generate: Generate) -> TaskState:
            answer = {"significant_genes": {"Variable": ["KRT16", "NOTAGENE"]}}
            await sandbox().write_file(
                "output/regress/Asthma/significant_genes_condition_None.json", json.dumps(answer)
            )
            return state

        return solve

    log = _run(analysis(root=str(bench), traits="Asthma", limit=1), one_wrong_answer(), tmp_path)
    files = unpack_output(log.samples[0].store[STORE_KEY], max_bytes=10**9).files
    pred = tmp_path / "pred" / "regress" / "Asthma"
    pred.mkdir(parents=True)
    name = "significant_genes_condition_None.json"
    (pred / name).write_bytes(files[f"regress/Asthma/{name}"])
    direct = evaluate(
        tmp_path / "pred",
        _ref(bench),
        bench / "metadata" / "task_info.json",
        options=EvalOptions(tasks=("analysis",)),
    )
    expected = next(s for s in direct.analysis if s.problem.key == "Asthma|None")
    assert _metrics(log)["f1"] == pytest.approx(expected.f1) and expected.f1 > 0

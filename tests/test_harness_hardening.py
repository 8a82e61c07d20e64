"""Issue #43's host-side checks that need no sandbox: the limits a task accepts, the plan
export checks against the log, the folders export refuses, and what a solver does with a
command that could not run. The sandboxed probes are in `test_sandbox_hostile.py`.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

pytest.importorskip("inspect_ai", reason="the harness extra (inspect-ai) is not installed")
from tests.conftest import INSPECT_WARNINGS  # noqa: E402

pytestmark = INSPECT_WARNINGS

from inspect_ai import eval as inspect_eval  # noqa: E402
from inspect_ai._util.config import parse_cli_args  # noqa: E402
from inspect_ai._util.error import PrerequisiteError  # noqa: E402
from inspect_ai.log import read_eval_log, write_eval_log  # noqa: E402

from genotex.core import GenotexError  # noqa: E402
from genotex.harness import export_run  # noqa: E402
from genotex.harness.runs._tasks import e2e  # noqa: E402
from genotex.harness.sandboxes._sandbox_spec import SandboxLimits  # noqa: E402
from genotex.harness.solvers._reference import gold  # noqa: E402
from genotex.workflows import write_raw_benchmark  # noqa: E402


@pytest.fixture(scope="module")
def bench(tmp_path_factory):
    folder = tmp_path_factory.mktemp("hardening")
    write_raw_benchmark(folder / "root", recipes=False)
    return folder / "root"


@pytest.fixture(scope="module")
def gold_log(bench, tmp_path_factory):
    """A gold run of two traits over two epochs, under local (no sandbox is needed here)."""
    logs = tmp_path_factory.mktemp("gold-logs")
    task = e2e(root=str(bench), traits="Asthma,Psoriasis", sandbox="local")
    log = inspect_eval(task, model="none", solver=gold(), epochs=2, log_dir=str(logs))[0]
    assert log.status == "success"
    return Path(log.location)


# ---- limits -------------------------------------------------------------------------------
def _cli(text: str):
    """A `-T` value as Inspect's command line hands it to the task."""
    return parse_cli_args([f"limits={text}"])["limits"]


def test_the_documented_limits_syntax_works_from_the_command_line():
    assert _cli("processes=64,memory_mb=1024") == ["processes=64", "memory_mb=1024"]  # a list
    limits = SandboxLimits.parse(_cli("processes=64,memory_mb=1024"))
    assert (limits.processes, limits.memory_mb) == (64, 1024)
    assert SandboxLimits.parse(_cli("disk_mb=100")).disk_mb == 100
    assert SandboxLimits.parse(_cli('{"files": 5000, "cpu_seconds": 9}')).files == 5000
    assert SandboxLimits.parse('{"files": 5000}').files == 5000  # a JSON object, from Python
    with pytest.raises(ValueError, match="are not a JSON object"):
        SandboxLimits.parse("{not json")


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("processes=1.5", "processes must be a whole number, not '1.5'"),
        ("processes=abc", "processes must be a whole number, not 'abc'"),
        (f"processes={10**20}", "processes must be a whole number"),
        ("processes=5000", "processes must lie between 8 and 4,096, not 5,000"),
        ("memory_mb=1", "memory_mb must lie between 64 and"),
        (f"memory_mb={10**9}", "MB (this machine's), not 1,000,000,000"),
        (f"disk_mb={10**11}", "disk_mb must lie between 1 and"),
        (f"disk_mb={10**10}", "MB (this machine's)"),
        ("cpu_seconds=0", "cpu_seconds must lie between 1 and"),
        ("processes=-3", "processes must be a whole number, not '-3'"),
        ("processes=²", "processes must be a whole number, not '²'"),  # isdigit() took it
        ("processes=٣٢", "processes must be a whole number, not '٣٢'"),
        ("colour=3", "unknown sandbox limit 'colour'"),
        ("processes", "name=value pairs"),
    ],
)
def test_every_bad_limit_is_one_sentence_before_any_sample_runs(bench, text, says):
    with pytest.raises(ValueError, match=None) as raised:
        SandboxLimits.parse(_cli(text))
    assert says in str(raised.value) and "\n" not in str(raised.value)
    with pytest.raises(PrerequisiteError) as task:  # the task refuses it, before any sample
        e2e(root=str(bench), traits="Asthma", sandbox="local", limits=_cli(text))
    assert says in str(task.value)


# ---- export: the plan, and the folders it writes ----------------------------------------------
def test_export_refuses_a_log_missing_a_sample_inspect_ran(gold_log, bench, tmp_path):
    """A sample removed with Inspect's own log API: the run planned 4 samples x epochs."""
    log = read_eval_log(str(gold_log))
    assert len(log.samples) == 4
    dropped = log.samples.pop(2)
    cut = tmp_path / "cut.eval"
    write_eval_log(log, str(cut))
    with pytest.raises(GenotexError) as raised:
        export_run(cut, tmp_path / "run", reference=bench / "reference" / "output")
    said = str(raised.value)
    assert "holds 3 of the 4 samples x epochs Inspect ran" in said
    assert f"sample {dropped.id!r} of epoch {dropped.epoch} is missing" in said
    assert not (tmp_path / "run").exists()  # nothing written


def test_export_of_a_limited_run_checks_the_samples_it_ran(bench, tmp_path):
    task = e2e(root=str(bench), traits="Asthma,Psoriasis", sandbox="local")
    log = inspect_eval(task, model="none", solver=gold(), limit=1, log_dir=str(tmp_path))[0]
    assert log.eval.dataset.sample_ids == ["Asthma"]
    path = export_run(log.location, tmp_path / "run", reference=bench / "reference" / "output")
    assert path.is_file()


@pytest.mark.parametrize("where", ["at", "above", "inside", "holding-the-log"])
def test_export_never_writes_into_or_over_the_reference(gold_log, bench, tmp_path, where):
    copy = tmp_path / "bench"
    shutil.copytree(bench, copy)
    reference = copy / "reference" / "output"
    log = copy / "logs" / "run.eval"
    log.parent.mkdir()
    shutil.copy(gold_log, log)
    out = {
        "at": reference,
        "above": reference.parent,
        "inside": reference / "mine",
        "holding-the-log": copy / "logs",
    }[where]
    before = sorted(str(p.relative_to(copy)) for p in copy.rglob("*"))
    with pytest.raises(GenotexError) as raised:
        export_run(log, out, reference=reference)
    assert "export to a folder of its own" in str(raised.value)
    assert sorted(str(p.relative_to(copy)) for p in copy.rglob("*")) == before  # untouched


# ---- a solver's commands --------------------------------------------------------------------
class _State:
    """What `note_command` uses of a TaskState: its store."""

    def __init__(self) -> None:
        from inspect_ai.util import Store

        self.store = Store()


@pytest.mark.parametrize(
    ("code", "says"),
    [(127, "was not found"), (126, "could not be executed"), (137, "was killed")],
)
def test_a_command_that_could_not_run_is_the_samples_failure(code, says):
    from inspect_ai.util import ExecResult

    from genotex.harness.solvers._reference import note_command

    result = ExecResult(False, code, "", "sh: 1: python3: not found\n")
    with pytest.raises(RuntimeError) as raised:
        note_command(_State(), "python3 -m genotex baseline .", result)  # type: ignore[arg-type]
    assert says in str(raised.value) and "python3: not found" in str(raised.value)


def test_a_command_that_failed_in_part_is_noted_and_the_sample_goes_on():
    from inspect_ai.util import ExecResult

    from genotex.harness.runs._scorer import PARTIAL_KEY
    from genotex.harness.solvers._reference import note_command

    state = _State()
    said = "genotex: 1 of 4 problems failed: Asthma|Age (no cohort has Age)\n"
    note_command(state, "genotex regress ...", ExecResult(False, 1, "", said))  # type: ignore[arg-type]
    note_command(state, "genotex regress again", ExecResult(True, 0, "ok", ""))  # type: ignore[arg-type]
    assert state.store.get(PARTIAL_KEY) == [
        {"command": "genotex regress ...", "exit": 1, "said": said.strip()}
    ]


def test_a_log_member_that_inflates_past_the_bound_is_refused_before_it_is_read(
    gold_log, bench, tmp_path
):
    """Issue #45, 9: a sample's member padded to inflate to 300 MiB (a few hundred KB packed):
    with --max-output-mb 1 its declared size is refused before anything is inflated.
    """
    import zipfile

    bloated = tmp_path / "bloated.eval"
    with zipfile.ZipFile(gold_log) as source, zipfile.ZipFile(bloated, "w") as target:
        names = source.namelist()
        member = next(n for n in names if n.startswith("samples/"))
        for name in names:
            data = source.read(name)
            if name != member:
                target.writestr(name, data, compress_type=zipfile.ZIP_DEFLATED)
                continue
            info = zipfile.ZipInfo(name)
            info.compress_type = zipfile.ZIP_DEFLATED
            with target.open(info, "w", force_zip64=True) as out:
                out.write(data)
                for _ in range(300):  # JSON may end in white space: the log stays valid
                    out.write(b" " * 1024 * 1024)
    assert bloated.stat().st_size < 20 * 1024 * 1024
    with pytest.raises(GenotexError) as raised:
        export_run(bloated, tmp_path / "run", reference=bench / "reference" / "output",
                   max_output_mb=1)  # fmt: skip
    assert f"has a member {member!r} that inflates to" in str(raised.value)
    assert "more than the 270,532,608 a sample may hold" in str(raised.value)
    assert not (tmp_path / "run").exists()

"""One write gate that no writer can miss (issue #63, item 1).

"Nothing writes into a reference" held only where a command checked its output folder,
and the check compared path strings: a second name of `BENCH/output` (a link, `..`, a bind
mount) got past it, and writers that make no output folder (`write_result`, the agent
library's writers, `--cache-dir`, `--summary`, `--csv`, `download gene-info`, `demo` over a
download) never asked. Now every file goes through `genotex.core.gate_write`, which
compares folders by identity. The first test lists every writing call of genotex's code,
so a new writer without the gate fails it; the others prove each writer refuses a
downloaded reference by several names, the reference byte-identical after each.
"""

from __future__ import annotations

import ast
import hashlib
import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from genotex.cli import main
from genotex.core import ReferenceTargetError

PACKAGE = Path(__file__).resolve().parents[1] / "genotex"
#: the calls that pass the gate (gate_write itself, or a writer that calls it first)
GATES = {"gate_write", "gated_folder", "atomic_output", "write_text_atomic",
         "write_bytes_atomic", "write_table"}  # fmt: skip
#: writing calls genotex makes that need no gate, and why
EXEMPT = {
    "harness/sandboxes": "a sandbox's own files: cgroup and /proc control files, seccomp "
    "filters, the kernel's files inside the sandbox, and the temporary folders genotex "
    "makes for it, never a folder a user names",
    "evaluation/_figure_files.py:figure_bytes": "a figure saved into memory (BytesIO)",
    "core/_cache_entry.py:_write_entry": "the temporary file beside an entry the function "
    "has gated (mkstemp in the entry's folder)",
    "core/_write_gate.py:_claim_workspace": "the workspace sign the gate itself leaves once "
    "its check has passed, in the output/ the gated write goes to",
    "core/_descriptors.py": "the descriptor primitives: removal by descriptors (the "
    "sandboxes' own folders) and the folders the gate opens after its check",
}
_OPEN_WRITE_MODES = ("w", "a", "x", "+")


def _is_write(call: ast.Call) -> bool:
    """Whether a call writes a file: open/fdopen for writing, os.open with O_CREAT or
    O_WRONLY, write_text/write_bytes, Path.replace/rename (one argument), os.replace and
    os.rename, shutil's copies and moves, to_csv and savefig."""
    func = call.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    owner = (
        func.value.id
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)
        else ""
    )
    mode = (
        call.args[1]
        if len(call.args) > 1
        else next((k.value for k in call.keywords if k.arg == "mode"), None)
    )
    if name in ("open", "fdopen") and owner != "os" or (owner == "os" and name == "fdopen"):
        text = mode.value if isinstance(mode, ast.Constant) and isinstance(mode.value, str) else ""
        return any(m in text for m in _OPEN_WRITE_MODES)
    if owner == "os" and name == "open":
        flags = ast.unparse(call.args[1]) if len(call.args) > 1 else ""
        return "O_CREAT" in flags or "O_WRONLY" in flags or "O_RDWR" in flags
    if name in ("write_text", "write_bytes", "to_csv", "savefig"):
        return True
    if owner in ("os", "shutil") and name in (
        "replace", "rename", "copy", "copy2", "copyfile", "copytree", "move"
    ):  # fmt: skip
        return True
    return name in ("replace", "rename") and len(call.args) == 1 and not call.keywords


def _writers() -> list[tuple[str, str, int, bool]]:
    """(file, function, line, gated) of every writing call in genotex."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE).as_posix()
        tree = ast.parse(path.read_text())
        for function in ast.walk(tree):
            if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            calls = [n for n in ast.walk(function) if isinstance(n, ast.Call)]
            names = {
                c.func.attr if isinstance(c.func, ast.Attribute) else getattr(c.func, "id", "")
                for c in calls
            }
            gated = bool(names & GATES)
            for call in calls:
                if _is_write(call):
                    found.append((relative, function.name, call.lineno, gated))
    return found


def _exempt(relative: str, function: str) -> bool:
    return any(relative.startswith(key) or f"{relative}:{function}" == key for key in EXEMPT)


def test_every_writing_call_passes_the_gate():
    writers = _writers()
    assert len(writers) > 25  # the scan still finds genotex's writers
    ungated = [
        f"{file}:{line} in {function}()"
        for file, function, line, gated in writers
        if not gated and not _exempt(file, function)
    ]
    assert ungated == [], "writers that do not pass genotex.core.gate_write"


def test_the_scan_sees_a_writer_without_the_gate(tmp_path):
    """The scan can fail: an ungated write_text in a function is found as such."""
    source = "def f(p):\n    p.write_text('x')\n\ndef g(p):\n    gate_write(p).write_text('x')\n"
    tree = ast.parse(source)
    calls = {
        fn.name: any(_is_write(c) for c in ast.walk(fn) if isinstance(c, ast.Call))
        for fn in tree.body
    }
    assert calls == {"f": True, "g": True}
    assert not _is_write(ast.parse("'a'.replace('b', 'c')").body[0].value)
    assert not _is_write(ast.parse("frame.rename(columns={})").body[0].value)


# ----- every writer refuses a downloaded reference, by any name of it ------------------------


def _digest(folder: Path) -> str:
    sha = hashlib.sha256()
    for path in sorted(folder.rglob("*")):
        sha.update(path.relative_to(folder).as_posix().encode())
        if path.is_file():
            sha.update(path.read_bytes())
    return sha.hexdigest()


@pytest.fixture(scope="module", params=["downloaded", "published", "unmarked"])
def bench(request, tmp_path_factory):
    """The published layout (output/ holds the reference), made from a generated benchmark:
    downloaded (with genotex's marker), the Hub copy cloned whole (its `code/`, no marker),
    or a copy of its parts with neither (`task_info.json` beside an `output/` of answers)."""
    from genotex.workflows import write_raw_benchmark

    made = write_raw_benchmark(tmp_path_factory.mktemp("demo") / "demo")
    root = tmp_path_factory.mktemp(request.param) / "BENCH"
    shutil.copytree(made.root / "input", root / "input")
    shutil.copytree(made.root / "metadata", root / "metadata")
    shutil.copytree(made.reference_output, root / "output")
    if request.param == "downloaded":
        (root / "genotex-benchmark.json").write_text('{"repo": "Liu-Hy/GenoTEX"}\n')
    elif request.param == "published":
        (root / "code" / "Asthma").mkdir(parents=True)
        (root / "code" / "Asthma" / "GSE100001.ipynb").write_text("{}\n")
    (root.parent / "alias").symlink_to(root)  # another name: a link to the benchmark
    return root


def _names(bench: Path) -> dict[str, Path]:
    """The reference answers by three names: as they are, through a link, through `..`."""
    return {
        "direct": bench / "output",
        "link": bench.parent / "alias" / "output",
        "dotdot": bench / "input" / ".." / "output",
    }


def _cli(bench: Path, target: Path, tmp: Path) -> dict[str, list[str]]:
    task_info = str(bench / "metadata/task_info.json")
    regress = ["regress", "--trait", "Asthma", "--condition", "None", "--task-info", task_info,
               "--preprocessed", str(bench / "output/preprocess")]  # fmt: skip
    return {
        "regress --out": [*regress, "--out", str(target / "regress")],
        "regress --summary": [
            *regress,
            "--out",
            str(tmp / "a"),
            "--summary",
            str(target / "status.json"),
        ],  # fmt: skip
        "regress --csv": [*regress, "--out", str(tmp / "b"), "--csv", str(target / "tables")],
        "regress --cache-dir": [
            *regress,
            "--out",
            str(tmp / "c"),
            "--cache-dir",
            str(target / "cache"),
        ],  # fmt: skip
        "eval --json": [
            "eval",
            "-p",
            str(bench / "output"),
            "-r",
            str(bench / "output"),
            "--json",
            str(target / "run.json"),
        ],  # fmt: skip
        "download gene-info": [
            "download",
            "gene-info",
            "--out",
            str(target / "g.gz"),
            "--base-url",
            "http://127.0.0.1:9/none",
        ],  # fmt: skip
        "download benchmark": ["download", "benchmark", "--out", str(target / "x")],
        "demo": ["demo", "--out", str(target.parent)],
        "demo --inputs-only": ["demo", "--inputs-only", "--out", str(target.parent)],
        "harness replay --log-dir": [
            "harness",
            "replay",
            str(tmp / "no.eval"),
            "-r",
            str(bench),
            "--log-dir",
            str(target / "logs"),
        ],  # fmt: skip
    }


@pytest.mark.parametrize("name", ["direct", "link", "dotdot"])
@pytest.mark.parametrize(
    "writer",
    ["regress --out", "regress --summary", "regress --csv", "regress --cache-dir",
     "eval --json", "download gene-info", "download benchmark", "demo",
     "demo --inputs-only", "harness replay --log-dir"],
)  # fmt: skip
def test_each_command_refuses_the_reference_by_any_name(bench, tmp_path, writer, name):
    target = _names(bench)[name]
    before = _digest(bench)
    argv = _cli(bench, target, tmp_path)[writer]
    result = CliRunner().invoke(main, argv, env={"HF_ENDPOINT": "http://127.0.0.1:9"})
    assert result.exit_code != 0, result.output
    assert "reference answers" in result.stderr or "did not generate" in result.stderr, (
        result.stderr
    )
    assert "Traceback" not in result.output
    assert _digest(bench) == before


def test_the_cache_named_by_the_environment_refuses_too(bench, tmp_path, monkeypatch):
    monkeypatch.setenv("GENOTEX_CACHE", str(bench / "output" / "cache"))
    before = _digest(bench)
    argv = ["regress", "--trait", "Asthma", "--condition", "None",
            "--task-info", str(bench / "metadata/task_info.json"),
            "--preprocessed", str(bench / "output/preprocess"),
            "--out", str(tmp_path / "o")]  # fmt: skip
    result = CliRunner().invoke(main, argv)
    assert result.exit_code != 0 and "reference answers" in result.stderr, result.output
    assert _digest(bench) == before


def _result():
    from genotex.core import ProblemId
    from genotex.regression import RegressionResult

    return RegressionResult(ProblemId("Asthma", None), (("IL13", 0.5),), {}, "Lasso", False,
                            0.1, False, None, ("GSE1",))  # fmt: skip


@pytest.mark.parametrize("name", ["direct", "link", "dotdot"])
def test_the_library_writers_refuse_it(bench, name):
    from genotex.agentlib import save_result, validate_and_save_cohort_info
    from genotex.regression import write_result

    target = _names(bench)[name]
    before = _digest(bench)
    result = _result()
    with pytest.raises(ReferenceTargetError, match="reference answers"):
        write_result(target / "regress", result)
    with pytest.raises(ReferenceTargetError, match="reference answers"):
        save_result(str(target / "regress"), "Asthma", None, [("IL13", 0.5)], {})
    with pytest.raises(ReferenceTargetError, match="reference answers"):
        validate_and_save_cohort_info(
            str(target / "preprocess"), "Asthma", "GSE1",
            is_gene_available=False, is_trait_available=False,
        )  # fmt: skip
    assert _digest(bench) == before


def test_a_published_copy_without_a_marker_is_known_by_its_code_folder(bench, tmp_path):
    from genotex.regression import write_result

    copy = tmp_path / "copy"
    shutil.copytree(bench, copy)
    (copy / "genotex-benchmark.json").unlink(missing_ok=True)
    (copy / "code").mkdir(exist_ok=True)
    before = _digest(copy)
    result = _result()
    with pytest.raises(ReferenceTargetError):
        write_result(copy / "output" / "regress", result)
    assert _digest(copy) == before


@pytest.mark.skipif(os.geteuid() != 0, reason="a bind mount needs root (CI runs as root)")
@pytest.mark.parametrize("when", ["before the process", "after its first write"])
def test_a_bind_mount_of_the_reference_is_the_reference(bench, tmp_path, when):
    """Another name the path alone cannot tell: `mount --bind BENCH/output /mnt`, made before
    the process starts, or while it runs after a first write (the gate keeps the mount
    table it parsed until the kernel says it changed). In a private mount namespace
    (unshare), so the host's mounts never change."""
    if shutil.which("unshare") is None:
        pytest.fail("unshare (util-linux) is needed for this test")
    point = tmp_path / "mnt"
    point.mkdir()
    before = _digest(bench)
    mount = ["mount", "--bind", str(bench / "output"), str(point)]
    first = (
        f"write_result({str(tmp_path / 'first')!r}, r)  # the table is read here\n"
        f"subprocess.run({mount!r}, check=True)\n"
    )
    script = (
        "import subprocess, sys\n"
        "from genotex.core import ProblemId, ReferenceTargetError\n"
        "from genotex.regression import RegressionResult, write_result\n"
        "r = RegressionResult(ProblemId('Asthma', None), (('IL13', 0.5),), {}, 'Lasso',"
        " False, 0.1, False, None, ('GSE1',))\n"
        f"{first if when == 'after its first write' else ''}"
        "try:\n"
        f"    write_result({str(point / 'regress')!r}, r)\n"
        "except ReferenceTargetError as exc:\n"
        "    print('refused:', exc); sys.exit(0)\n"
        "print('written'); sys.exit(1)\n"
    )
    inside = [sys.executable, "-c", script]
    if when == "before the process":
        inside = ["sh", "-c", f'{shlex.join(mount)} && "$0" -c "$1"', sys.executable, script]
    done = subprocess.run(
        ["unshare", "--mount", "--propagation", "private", *inside],
        capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "refused:" in done.stdout and "reference answers" in done.stdout
    assert _digest(bench) == before


# ----- a working folder has the reference's shape: genotex's sign tells them apart ----------


def _working_folder(tmp_path: Path, *, signed: bool = True) -> Path:
    """An analysis's folder in GenoTEX's layout: the task list, its own preprocessed data in
    `output/preprocess` as genotex's preprocess leaves it (the sign, left by the gate at its
    first write into the empty `output/`), no answers yet. Without the sign, preprocessed
    data beside `metadata/task_info.json` is a reference's (#72)."""
    from genotex.core import gate_write
    from genotex.workflows import write_raw_benchmark

    made = write_raw_benchmark(tmp_path / "demo")
    work = tmp_path / "work"
    shutil.copytree(made.root / "metadata", work / "metadata")
    if signed:
        gate_write(work / "output" / "preprocess" / "first.csv")  # the first write's check
    shutil.copytree(made.reference_output / "preprocess", work / "output" / "preprocess")
    return work


def test_regress_writes_a_working_folder_again_and_again(tmp_path, monkeypatch):
    """`genotex regress` with its defaults, run in a working folder for one problem after
    another: the first leaves the sign, so the answers it wrote are not taken for a
    reference's by the second."""
    work = _working_folder(tmp_path)
    monkeypatch.chdir(work)
    for condition in ("None", "Gender"):
        argv = ["regress", "--trait", "Asthma", "--condition", condition]
        result = CliRunner().invoke(main, argv)
        assert result.exit_code == 0, result.output
    sign = work / "output" / "genotex-workspace.json"
    assert json.loads(sign.read_text())["genotex"] == "workspace"
    answers = sorted(p.name for p in (work / "output" / "regress" / "Asthma").iterdir())
    assert answers == [
        "significant_genes_condition_Gender.json",
        "significant_genes_condition_None.json",
    ]


def test_the_agent_librarys_writers_write_a_working_folder_again(tmp_path):
    from genotex.agentlib import save_result

    work = _working_folder(tmp_path)
    out = str(work / "output" / "regress")
    save_result(out, "Asthma", None, [("IL13", 0.5)], {})
    save_result(out, "Asthma", "Gender", [("IL4", 0.25)], {})
    assert (
        work / "output" / "regress" / "Asthma" / "significant_genes_condition_Gender.json"
    ).is_file()


def test_answers_without_the_sign_are_a_reference_until_it_is_given(tmp_path):
    """A working folder genotex wrote before it left signs (or an agent's own answers)
    is refused like a reference, and the sentence says how to mark it; once marked, it is
    written."""
    from genotex.regression import write_result

    work = _working_folder(tmp_path, signed=False)
    answer = work / "output" / "regress" / "Asthma" / "significant_genes_condition_None.json"
    answer.parent.mkdir(parents=True)
    hand = '{"significant_genes": {"Variable": ["IL5"]}}\n'
    answer.write_text(hand)
    before = _digest(work)
    with pytest.raises(ReferenceTargetError) as refused:
        write_result(work / "output" / "regress", _result())
    sign = work / "output" / "genotex-workspace.json"
    assert f"create {sign} to say so" in str(refused.value)
    assert _digest(work) == before and not sign.exists()
    sign.write_text("{}\n")
    write_result(work / "output" / "regress", _result())
    assert json.loads(answer.read_text())["significant_genes"]["Variable"] == ["IL13"]


def test_a_download_a_demo_and_a_clone_are_never_marked(bench, tmp_path):
    """The sign is left only where the gate let a write through: never in a reference."""
    from genotex.workflows import write_raw_benchmark

    demo = write_raw_benchmark(tmp_path / "demo")
    assert not (bench / "output" / "genotex-workspace.json").exists()
    (demo.root / "output").mkdir()
    from genotex.core import gate_write

    gate_write(demo.root / "output" / "regress" / "x.json")
    assert not (demo.root / "output" / "genotex-workspace.json").exists()


def test_the_kept_mount_table_leaves_no_unclosed_file(tmp_path):
    """The gate keeps /proc/self/mountinfo open to poll it: a forked child's copy and the
    file at exit are closed (CI's pandas-2 leg printed an unclosed-file warning at exit)."""
    script = (
        "import os\n"
        "from genotex.core import gate_write\n"
        f"gate_write({str(tmp_path / 'a.json')!r})\n"
        "child = os.fork()\n"
        "if child == 0:\n"
        f"    gate_write({str(tmp_path / 'b.json')!r}); os._exit(0)\n"
        "os.waitpid(child, 0)\n"
    )
    done = subprocess.run([sys.executable, "-X", "dev", "-c", script], capture_output=True,
                          text=True)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "ResourceWarning" not in done.stderr, done.stderr


# ---- the whole download guarded, by descriptor (issue #72) ---------------------------------
@pytest.mark.parametrize(
    ("writer", "place"),
    [("regress --summary", "metadata/task_info.json"), ("eval --json", "genotex-benchmark.json"),
     ("regress --out", "input/GEO/regress"), ("regress --csv", "metadata/tables"),
     ("regress --summary", "code/status.json")],
)  # fmt: skip
def test_nothing_of_a_downloaded_benchmark_is_written(bench, tmp_path, writer, place):
    """0.14 guarded only `output/`: `--summary BENCH/metadata/task_info.json` replaced the
    task file eval scores by, `--json BENCH/genotex-benchmark.json` the marker."""
    target = bench / place
    before = _digest(bench)
    argv = {
        "regress --summary": [*_cli(bench, tmp_path, tmp_path)["regress --out"][:-2],
                              "--out", str(tmp_path / "o"), "--summary", str(target)],
        "eval --json": ["eval", "-p", str(bench / "output"), "-r", str(bench / "output"),
                        "--json", str(target), "--no-progress"],
        "regress --out": [*_cli(bench, tmp_path, tmp_path)["regress --out"][:-2], "--out",
                          str(target)],
        "regress --csv": [*_cli(bench, tmp_path, tmp_path)["regress --out"][:-2], "--out",
                          str(tmp_path / "o2"), "--csv", str(target)],
    }[writer]  # fmt: skip
    result = CliRunner().invoke(main, argv)
    assert result.exit_code != 0 and "Traceback" not in result.output, result.output
    assert "the benchmark (its inputs, metadata and reference answers are never written)" in (
        result.stderr
    ), result.stderr
    assert _digest(bench) == before


def test_a_copy_holding_only_preprocessed_answers_is_a_reference(tmp_path):
    """0.14 knew a reference only by `regress/`: `preprocess --all` overwrote the Xena.csv of
    a copy that held only `output/preprocess`, then left a sign that kept it open for good."""
    from genotex.workflows import write_raw_benchmark

    made = write_raw_benchmark(tmp_path / "demo")
    copy = tmp_path / "copy"
    shutil.copytree(made.root / "input", copy / "input")
    shutil.copytree(made.root / "metadata", copy / "metadata")
    shutil.copytree(made.reference_output / "preprocess", copy / "output" / "preprocess")
    before = _digest(copy)
    result = CliRunner().invoke(main, ["preprocess", "--all", "--input", str(copy / "input"),
                                       "--out", str(copy / "output" / "preprocess"),
                                       "--synonyms", str(copy / "metadata/gene_synonym.json"),
                                       "--recipes", str(made.root / "recipes"),
                                       "--task-info", str(copy / "metadata/task_info.json"),
                                       "--no-progress"])  # fmt: skip
    assert result.exit_code != 0 and "the benchmark" in result.stderr, result.output
    assert _digest(copy) == before
    assert not (copy / "output" / "genotex-workspace.json").exists()


def test_a_reference_is_known_however_many_empty_folders_are_listed_first(tmp_path):
    """0.14 looked at the first 10,000 entries of `output/regress`: 10,050 empty trait
    folders listed first let `regress --force` overwrite an answer."""
    import time

    from genotex.workflows import write_raw_benchmark

    made = write_raw_benchmark(tmp_path / "demo")
    copy = tmp_path / "copy"
    shutil.copytree(made.root / "metadata", copy / "metadata")
    shutil.copytree(made.reference_output / "regress", copy / "output" / "regress")
    for i in range(10_050):
        (copy / "output" / "regress" / f"A{i:05d}").mkdir()
    answer = next((copy / "output" / "regress" / "Asthma").glob("*.json"))
    before = answer.read_bytes()
    from genotex.core import write_text_atomic

    started = time.perf_counter()
    with pytest.raises(ReferenceTargetError):
        write_text_atomic(answer, "{}")
    assert time.perf_counter() - started < 10  # bounded by what it reads
    assert answer.read_bytes() == before


def test_a_folder_swapped_for_a_link_between_the_check_and_the_write_is_never_followed(
    tmp_path,
):
    """0.14 checked by path, then `mkstemp` and `os.replace` used the path again: a working
    folder swapped for a link to `BENCH/output/regress/Asthma` left a `.tmp` file inside the
    reference within 40 s. Raced here many times: the reference stays byte-identical."""
    import threading

    from genotex.core import write_text_atomic
    from genotex.workflows import write_raw_benchmark

    made = write_raw_benchmark(tmp_path / "demo")
    bench = tmp_path / "BENCH"
    shutil.copytree(made.root / "metadata", bench / "metadata")
    shutil.copytree(made.reference_output, bench / "output")
    (bench / "genotex-benchmark.json").write_text("{}\n")
    before = _digest(bench)
    work = tmp_path / "work"
    real = work / "Asthma"
    real.mkdir(parents=True)
    stop = threading.Event()

    def swap() -> None:
        while not stop.is_set():
            try:
                os.rename(real, work / "held")
                os.symlink(bench / "output" / "regress" / "Asthma", real)
                os.unlink(real)
                os.rename(work / "held", real)
            except OSError:
                pass

    swapper = threading.Thread(target=swap)
    swapper.start()
    written = refused = 0
    try:
        for i in range(400):
            try:
                write_text_atomic(real / f"answer{i % 7}.json", "{}\n", durable=False)
                written += 1
            except (ReferenceTargetError, OSError):
                refused += 1
    finally:
        stop.set()
        swapper.join()
    assert written + refused == 400 and written > 0
    assert _digest(bench) == before


@pytest.mark.parametrize(
    ("place", "allowed"),
    [("input/GEO/Asthma", True), ("metadata", True), ("output/regress", False), ("code", False),
     (".", False)],
)  # fmt: skip
def test_a_download_fills_a_benchmarks_inputs_and_metadata_only(bench, place, allowed):
    """`download geo --out BENCH/input/GEO` completes a downloaded benchmark (the README's
    flow); its answers, its code and its root are refused before any folder is made."""
    from genotex.core import filling_benchmark, write_bytes_atomic

    folder = (bench / place / "fresh").resolve()
    before = _digest(bench)
    if not allowed:
        with pytest.raises(ReferenceTargetError, match="nothing was written"):
            with filling_benchmark(folder):
                pass
        assert _digest(bench) == before and not folder.exists()
        return
    with filling_benchmark(folder):
        write_bytes_atomic(folder / "GSE1_series_matrix.txt.gz", b"\x1f\x8b")
    assert (folder / "GSE1_series_matrix.txt.gz").read_bytes() == b"\x1f\x8b"
    with pytest.raises(ReferenceTargetError):  # outside the block: a reference's again
        write_bytes_atomic(folder / "again.gz", b"\x1f\x8b")

"""`genotex mcp`: genotex's library as MCP tools, in process and over one stdio round trip."""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
import time

import pytest

pytest.importorskip("mcp", reason="the mcp extra is not installed")
pytestmark = pytest.mark.filterwarnings(
    "ignore::ResourceWarning",
    "ignore::pytest.PytestUnraisableExceptionWarning",
    "ignore::DeprecationWarning",  # raised inside the MCP SDK and its dependencies
)

from mcp import Client, StdioServerParameters  # noqa: E402

from genotex.core import TaskInfo  # noqa: E402
from genotex.evaluation import score_gene_list  # noqa: E402
from genotex.harness._mcp import build_server  # noqa: E402
from genotex.workflows import write_raw_benchmark  # noqa: E402


@pytest.fixture(scope="module")
def full_bench(tmp_path_factory):
    root = tmp_path_factory.mktemp("mcp") / "bench"
    write_raw_benchmark(root, recipes=False)
    return root


@pytest.fixture(scope="module")
def bench(full_bench, tmp_path_factory):
    """What an agent is given: the benchmark without its reference answers."""
    root = tmp_path_factory.mktemp("agent") / "bench"
    shutil.copytree(full_bench, root, ignore=shutil.ignore_patterns("reference"))
    (root / "output").mkdir()
    return root


def _server(bench):
    return build_server([bench], writable=[bench / "output"])


def _call(server, tool, arguments):
    async def run():
        async with Client(server) as client:
            return await client.call_tool(tool, arguments)

    return asyncio.run(run())


def _text(result) -> str:
    return "".join(getattr(part, "text", "") for part in result.content)


def test_the_problems_and_cohorts_of_a_root(bench):
    server = _server(bench)
    result = _call(server, "list_problems", {})
    assert not result.is_error
    keys = [p["key"] for p in result.structured_content["result"]]
    assert keys == [p.key for p in TaskInfo.read(bench / "metadata" / "task_info.json").problems()]
    cohorts = _call(server, "list_cohorts", {"trait": "Psoriasis"}).structured_content["result"]
    assert {c["source"] for c in cohorts} == {"GEO", "TCGA"}


def test_propose_preprocess_answer_validate_and_score(bench):
    server = _server(bench)
    geo = next(
        c
        for c in _call(server, "list_cohorts", {"trait": "Asthma"}).structured_content["result"]
        if c["source"] == "GEO"
    )
    toml = _text(_call(server, "propose_recipe", {"cohort_path": geo["path"], "trait": "Asthma"}))
    assert 'trait = "Asthma"' in toml
    (bench / "recipes").mkdir(exist_ok=True)
    (bench / "recipes" / f"{geo['cohort']}.toml").write_text(toml)
    done = _call(
        server,
        "preprocess",
        {
            "cohort_path": geo["path"],
            "trait": "Asthma",
            "recipe_path": f"recipes/{geo['cohort']}.toml",
        },
    )
    assert not done.is_error, _text(done)
    answer = _call(server, "answer", {"trait": "Asthma", "top": 5}).structured_content
    assert answer["problem"] == "Asthma|None" and 0 < len(answer["genes"]) <= 5
    valid = _call(server, "validate_output", {}).structured_content
    assert valid["files_checked"] >= 4 and valid["problems"] == []
    genes = ["KRT16", "NOTAGENE", "SOX17"]
    scored = _call(server, "score_genes", {"genes": genes, "trait": "Asthma"}).structured_content
    info = TaskInfo.read(bench / "metadata" / "task_info.json")
    expected = score_gene_list(genes, list(info.genes_of("Asthma")))
    assert scored["f1"] == pytest.approx(expected.f1) and "percent" in scored["scales"]


def test_paths_outside_the_roots_and_errors_are_one_sentence_tool_errors(bench, tmp_path):
    server = _server(bench)
    outside = _call(server, "inspect_geo_cohort", {"cohort_path": "../../etc"})
    assert outside.is_error and "outside the root" in _text(outside)
    missing = _call(
        server, "propose_recipe", {"cohort_path": "input/GEO/Asthma/GSE0", "trait": "Asthma"}
    )
    assert missing.is_error and "Traceback" not in _text(missing)
    unknown = _call(server, "score_genes", {"genes": ["TP53"], "trait": "Nope"})
    assert unknown.is_error and "no trait 'Nope'" in _text(unknown)


def test_one_stdio_round_trip(bench):
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "genotex", "mcp", "--root", str(bench), "--write", str(bench / "output")],
    )

    async def run():
        async with Client(params) as client:
            tools = await client.list_tools()
            result = await client.call_tool("list_problems", {})
            return [t.name for t in tools.tools], result

    names, result = asyncio.run(run())
    assert {"list_problems", "answer", "validate_output", "score_genes"} <= set(names)
    keys = [p["key"] for p in result.structured_content["result"]]
    assert keys == [p.key for p in TaskInfo.read(bench / "metadata" / "task_info.json").problems()]


# ---- confinement (issue #34): links, the reference, writes, schemas, bounds ---------------------
def test_a_link_inside_the_root_does_not_let_a_tool_read_a_host_file(bench, tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("!Series_title\t'the host secret'\n")
    cohort = bench / "input" / "GEO" / "Asthma" / "GSE999"
    cohort.mkdir()
    os.symlink(secret, cohort / "GSE999_series_matrix.txt")
    os.symlink(tmp_path, bench / "hostlink")
    try:
        server = _server(bench)
        for tool, arguments in [
            ("inspect_geo_cohort", {"cohort_path": "input/GEO/Asthma/GSE999"}),
            ("propose_recipe", {"cohort_path": "input/GEO/Asthma/GSE999", "trait": "Asthma"}),
            ("validate_output", {"output": "hostlink"}),
            ("validate_output", {"output": "input/GEO/Asthma"}),
        ]:
            result = _call(server, tool, arguments)
            assert result.is_error, (tool, _text(result))
            assert "host secret" not in _text(result)
            assert "outside the root" in _text(result) or "links out of the root" in _text(result)
    finally:
        shutil.rmtree(cohort)
        (bench / "hostlink").unlink()


def test_the_server_refuses_a_root_that_holds_the_reference(full_bench):
    from genotex.core import GenotexError

    for root in (full_bench, full_bench / "reference", full_bench / "reference" / "output"):
        with pytest.raises(GenotexError, match="holds reference answers"):
            build_server([root])
    build_server([full_bench], allow_reference=True)  # when told explicitly


def test_the_cli_refuses_the_reference_in_one_sentence(full_bench):
    import subprocess

    done = subprocess.run(
        [sys.executable, "-m", "genotex", "mcp", "--root", str(full_bench)],
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode != 0 and "holds reference answers" in done.stderr
    assert "Traceback" not in done.stderr


def test_tools_write_only_under_a_writable_folder(bench):
    server = build_server([bench])  # no writable folder
    cohort = next(
        c
        for c in _call(server, "list_cohorts", {"trait": "Psoriasis"}).structured_content["result"]
        if c["source"] == "TCGA"
    )
    before = sorted(p.relative_to(bench).as_posix() for p in bench.rglob("*"))
    for out in ("output/preprocess", "metadata", "."):
        arguments = {"cohort_path": cohort["path"], "trait": "Psoriasis", "out": out}
        result = _call(server, "preprocess", arguments)
        assert result.is_error and "not under a writable folder" in _text(result)
    assert sorted(p.relative_to(bench).as_posix() for p in bench.rglob("*")) == before


@pytest.mark.parametrize("genes", [[], ["NOTAGENE"], [f"G{i}" for i in range(25_000)]])
def test_score_genes_replies_in_its_own_schema(bench, genes):
    result = _call(_server(bench), "score_genes", {"genes": genes, "trait": "Asthma"})
    assert not result.is_error, _text(result)
    scored = result.structured_content
    info = TaskInfo.read(bench / "metadata" / "task_info.json")
    expected = score_gene_list(genes, list(info.genes_of("Asthma")))
    for name in ("precision", "recall", "f1", "auroc", "gsea_es"):
        value = getattr(expected, name)
        assert scored[name] == (None if value != value else pytest.approx(value))


@pytest.mark.parametrize(
    ("tool", "arguments", "says"),
    [
        ("list_cohorts", {"trait": "Asthma", "root": 7}, "there is no root 7"),
        ("list_cohorts", {"trait": "A" * 5000}, "file names hold at most"),
        ("list_cohorts", {"trait": "../.."}, "would escape"),
        ("inspect_geo_cohort", {"cohort_path": "x/" * 200_000}, "longer than a path can be"),
        ("score_genes", {"genes": ["A"] * 60_000, "trait": "Asthma"}, "at most 50,000"),
        (
            "answer",
            {"trait": "Asthma", "mode": "fast"},
            "Input should be 'reference' or 'standard'",
        ),
    ],
)
def test_bad_arguments_are_one_sentence_tool_errors_in_bounded_time(bench, tool, arguments, says):
    started = time.monotonic()
    result = _call(_server(bench), tool, arguments)
    assert result.is_error and says in _text(result)
    assert "Traceback" not in _text(result) and time.monotonic() - started < 20


@pytest.mark.parametrize(
    ("tool", "arguments", "names"),
    [
        ("answer", {"trait": "Asthma", "top": "many"}, "top"),
        ("score_genes", {"genes": [1, 2], "trait": "Asthma"}, "genes.0"),
        ("list_cohorts", {"trait": ["Asthma"]}, "trait"),
    ],
)
def test_a_wrong_argument_type_is_one_line_naming_the_argument(bench, tool, arguments, names):
    """The SDK's own message is pydantic's: several lines and a URL (issue #43, 9)."""
    result = _call(_server(bench), tool, arguments)
    assert result.is_error
    said = _text(result)
    assert "\n" not in said and "http" not in said and "pydantic" not in said, said
    assert f"the argument {names}:" in said


@pytest.mark.parametrize("top", [-5, 0, 10**9])
def test_answer_refuses_a_top_that_is_not_a_count_of_genes(bench, top):
    result = _call(_server(bench), "answer", {"trait": "Asthma", "top": top})
    assert result.is_error and "top must be a whole number from 1 to" in _text(result)


def test_validate_output_of_a_missing_folder_is_an_error_not_zero_files(bench):
    result = _call(_server(bench), "validate_output", {"output": "no-such-output"})
    assert result.is_error and "'no-such-output' is not a folder under the root" in _text(result)


def test_tool_errors_name_paths_relative_to_the_root_never_the_host_path(bench):
    real = os.path.realpath(bench)
    for tool, arguments in [
        ("list_problems", {}),  # reads metadata/task_info.json: made unreadable below
        ("inspect_geo_cohort", {"cohort_path": "input/GEO/Asthma/GSE-none"}),
        ("answer", {"trait": "Asthma", "data": "input"}),
    ]:
        info = bench / "metadata" / "task_info.json"
        saved = info.read_bytes()
        info.write_text("{not json")
        try:
            said = _text(_call(_server(bench), tool, arguments))
        finally:
            info.write_bytes(saved)
        assert said and real not in said and str(bench) not in said, (tool, said)


def test_mcp_write_makes_its_folder_and_refuses_a_reference(tmp_path):
    """`genotex mcp --root WORK --write WORK/output` failed in 0.8.0 until the folder existed
    (issue #52, item 15); a writable folder in a downloaded reference is refused.
    """
    from genotex.core import ReferenceTargetError
    from genotex.harness._mcp import build_server

    work = tmp_path / "work"
    work.mkdir()
    build_server([work], writable=[work / "output"])
    assert (work / "output").is_dir()
    bench = tmp_path / "bench"
    (bench / "output" / "regress" / "Asthma").mkdir(parents=True)
    (bench / "genotex-benchmark.json").write_text("{}")
    with pytest.raises(ReferenceTargetError):
        build_server([work], writable=[bench / "output" / "mine"])
    assert not (bench / "output" / "mine").exists()

"""`genotex mcp`: genotex's library as MCP tools, in process and over one stdio round trip."""

from __future__ import annotations

import asyncio
import sys

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
def bench(tmp_path_factory):
    root = tmp_path_factory.mktemp("mcp") / "bench"
    write_raw_benchmark(root, recipes=False)
    return root


def _call(server, tool, arguments):
    async def run():
        async with Client(server) as client:
            return await client.call_tool(tool, arguments)

    return asyncio.run(run())


def _text(result) -> str:
    return "".join(getattr(part, "text", "") for part in result.content)


def test_the_problems_and_cohorts_of_a_root(bench):
    server = build_server([bench])
    result = _call(server, "list_problems", {})
    assert not result.is_error
    keys = [p["key"] for p in result.structured_content["result"]]
    assert keys == [p.key for p in TaskInfo.read(bench / "metadata" / "task_info.json").problems()]
    cohorts = _call(server, "list_cohorts", {"trait": "Psoriasis"}).structured_content["result"]
    assert {c["source"] for c in cohorts} == {"GEO", "TCGA"}


def test_propose_preprocess_answer_validate_and_score(bench):
    server = build_server([bench])
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
    server = build_server([bench])
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
        command=sys.executable, args=["-m", "genotex", "mcp", "--root", str(bench)]
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

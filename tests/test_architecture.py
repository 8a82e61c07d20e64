"""The package's shape, as the README's package map and CONTRIBUTING rules state it.

Arrows point from the CLI to workflows to stages to core; no stage imports
another; modules stay under 400 lines and functions under 60 (docstrings
excluded); each package lists its public names; evaluation never loads
scikit-learn or SciPy.
"""

from __future__ import annotations

import ast
import importlib
import re
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "genotex"
README = PACKAGE.parent / "README.md"
STAGES = ("preprocessing", "regression", "evaluation")
#: What each layer may import besides itself.
ALLOWED = {
    "core": set(),
    "preprocessing": {"core"},
    "regression": {"core"},
    "evaluation": {"core"},
    "workflows": {"core", *STAGES},
    # the function library GenoAgent's agents call: one transformation a call, over the stages
    "agentlib": {"core", "preprocessing", "regression"},
    # the Inspect harness is a workflow that only the CLI (and Inspect's entry point) imports
    "harness": {"core", "workflows", "agentlib", *STAGES},
    "cli": {"core", "workflows", "harness", "agentlib", *STAGES},
}


def _modules() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if ".venv" not in p.parts)


def _layer(path: Path) -> str | None:
    relative = path.relative_to(PACKAGE).parts
    return relative[0] if len(relative) > 1 else None


def _imported_layers(path: Path) -> set[str]:
    """The genotex layers a module imports (relative or absolute), wherever the import stands."""
    layers = set()
    depth_of_package = len(path.relative_to(PACKAGE).parts) - 1
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = list(path.relative_to(PACKAGE).parts[:-1])
                up = node.level - 1
                if up > depth_of_package:
                    continue
                parts = base[: len(base) - up] + (node.module.split(".") if node.module else [])
            elif node.module and node.module.startswith("genotex."):
                parts = node.module.split(".")[1:]
            else:
                continue
            if parts and parts[0] in ALLOWED:
                layers.add(parts[0])
        elif isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                if parts[0] == "genotex" and len(parts) > 1 and parts[1] in ALLOWED:
                    layers.add(parts[1])
    return layers


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_imports_point_from_the_cli_to_workflows_to_stages_to_core(path):
    layer = _layer(path)
    if layer is None:
        return  # genotex/__init__.py, __main__.py, _version.py: the front door
    foreign = _imported_layers(path) - {layer} - ALLOWED[layer]
    assert not foreign, f"{layer} must not import {sorted(foreign)}"


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_modules_and_functions_stay_small(path):
    text = path.read_text()
    assert text.count("\n") <= 400, f"{path.name} has {text.count(chr(10))} lines (at most 400)"
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                body = body[1:]  # the docstring does not count
            if not body:
                continue
            length = body[-1].end_lineno - body[0].lineno + 1
            assert length <= 60, f"{node.name} has a {length}-line body (at most 60)"


@pytest.mark.parametrize("package", ["core", "workflows", *STAGES])
def test_each_package_lists_its_public_names_over_private_modules(package):
    module = importlib.import_module(f"genotex.{package}")
    assert module.__all__, f"genotex.{package} has no __all__"
    for name in module.__all__:
        assert hasattr(module, name), f"genotex.{package}.__all__ names {name!r}, which is absent"
    files = [p.name for p in (PACKAGE / package).glob("*.py") if p.name != "__init__.py"]
    assert all(name.startswith("_") for name in files), f"public modules in {package}: {files}"


def test_the_top_level_api_is_one_call_per_stage():
    import genotex

    for name in (
        "preprocess_cohort",
        "preprocess_tree",
        "answer_problem",
        "run_problems",
        "evaluate",
    ):
        assert name in genotex.__all__ and callable(getattr(genotex, name))
        assert getattr(genotex, name).__doc__, f"genotex.{name} has no docstring"


def test_evaluation_loads_neither_scikit_learn_nor_scipy(tmp_path):
    """`import genotex`, the evaluation API and a whole `genotex eval` run: no sklearn, no scipy."""
    from genotex.workflows import SynthSpec, write_example

    example = write_example(tmp_path, SynthSpec(n_traits=2, n_cohorts=3, n_genes=50), seed=1)
    code = (
        "import sys\n"
        "from genotex import evaluate, EvalReport\n"
        "from genotex.cli import main\n"
        f"sys.argv = ['genotex', 'eval', '-p', {str(example.pred_output)!r},"
        f" '-r', {str(example.ref_output)!r}, '--no-progress']\n"
        "try:\n    main()\nexcept SystemExit as exc:\n    assert not exc.code, exc.code\n"
        "loaded = sorted(m for m in ('sklearn', 'scipy') if m in sys.modules)\n"
        "print('LOADED', loaded)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "LOADED []" in done.stdout


def test_the_readme_package_map_matches_the_tree():
    text = README.read_text()
    table = text[text.index("## Package map") :]
    listed = set(re.findall(r"`(genotex(?:\.\w+)?)`", table[: table.index("\n## ", 5)]))
    packages = {f"genotex.{p.name}" for p in PACKAGE.iterdir() if (p / "__init__.py").exists()}
    assert packages <= listed, f"not in the README's package map: {sorted(packages - listed)}"
    assert listed <= packages | {"genotex"}, (
        f"in the map but not a package: {sorted(listed - packages)}"
    )


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _module_imports(path: Path, modules: set[str]) -> set[str]:
    """Every genotex module a module imports: at its top, in a function or for type checkers."""
    name = _module_name(path)
    base = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                parts = base[: len(base) - (node.level - 1)]
                target = ".".join(parts + (node.module.split(".") if node.module else []))
            else:
                target = node.module or ""
            candidates = [target, *(f"{target}.{alias.name}" for alias in node.names)]
            found |= {c for c in candidates if c in modules and c != name}
    return found


def test_no_two_modules_import_each_other_even_lazily_or_for_type_checkers():
    paths = {_module_name(p): p for p in _modules()}
    graph = {name: _module_imports(path, set(paths)) for name, path in paths.items()}

    def reaches(start: str, goal: str) -> bool:
        seen, todo = set(), [start]
        while todo:
            for nxt in graph[todo.pop()] - seen:
                if nxt == goal:
                    return True
                seen.add(nxt)
                todo.append(nxt)
        return False

    circles = sorted((a, b) for a in graph for b in graph[a] if reaches(b, a))
    assert not circles, f"modules in an import circle: {circles}"


#: The harness's rooms, lowest first: a room imports only rooms below it, never the
#: harness's front modules (`__init__`, the entry point, the MCP server) (issue #53).
HARNESS_ROOMS = ("sandboxes", "runs", "solvers")


def _harness_room(name: str) -> str | None:
    parts = name.split(".")
    if parts[:2] != ["genotex", "harness"]:
        return None
    return parts[2] if len(parts) > 3 and parts[2] in HARNESS_ROOMS else "front"


def test_the_harness_rooms_import_only_the_rooms_below_them():
    paths = {_module_name(p): p for p in _modules()}
    rank = {room: i for i, room in enumerate(HARNESS_ROOMS)} | {"front": len(HARNESS_ROOMS)}
    wrong = []
    for name, path in sorted(paths.items()):
        room = _harness_room(name)
        if room in (None, "front"):
            continue
        for target in _module_imports(path, set(paths)):
            other = _harness_room(target)
            if other is not None and other != room and rank[other] > rank[room]:
                wrong.append(f"{name} imports {target}")
    assert not wrong, wrong
    rooms = {r for r in map(_harness_room, paths) if r not in (None, "front")}
    assert rooms == set(HARNESS_ROOMS)  # every room holds modules: the test sees them


@pytest.mark.parametrize(
    ("place", "names"),
    [
        ("genotex.harness", ["TASKS", "Benchmark", "Check", "Checkup", "ReplayResult",
                             "RuntimeSummary", "SampleSpec", "checkup", "export_run",
                             "pooled_average", "replay_run", "score_output"]),
        ("genotex.harness.sandboxes", ["BubblewrapSandbox", "Kernel", "PodmanSandbox",
                                       "SANDBOXES", "SampleSandbox", "SandboxLimits",
                                       "build_image", "choose_sandbox", "default_image",
                                       "sandbox_problem"]),
        ("genotex.harness.runs", ["Benchmark", "analysis", "e2e", "export_run", "plan_samples",
                                  "preprocess"]),
        ("genotex.harness.solvers", ["baseline", "genoagent", "gold", "lasso", "lmm",
                                     "random_row", "replay_run", "zero_shot"]),
        ("genotex.harness.solvers.genoagent", ["ROLES", "STORE_KEY", "genoagent", "units"]),
    ],
)  # fmt: skip
def test_every_public_name_of_the_harness_imports_from_its_documented_place(place, names):
    pytest.importorskip("inspect_ai", reason="the harness extra (inspect-ai) is not installed")
    module = importlib.import_module(place)
    assert set(names) <= set(module.__all__)
    for name in module.__all__:
        assert getattr(module, name) is not None, f"{place}.{name}"


def test_the_mcp_server_needs_no_inspect():
    """`genotex mcp` runs in the sandbox image, which holds genotex[mcp] and no Inspect: the
    harness's front and its rooms' packages import nothing of Inspect until a name that needs
    it is used (the rooms' `__init__` were eager in a first cut, and the image's server died).
    """
    code = (
        "import sys\n"
        "class Block:\n"
        "    def find_spec(self, name, path, target=None):\n"
        "        if name.split('.')[0] == 'inspect_ai':\n"
        "            raise ImportError('no inspect_ai here')\n"
        "sys.meta_path.insert(0, Block())\n"
        "import genotex.harness, genotex.harness._mcp, genotex.harness.runs\n"
        "import genotex.harness.sandboxes, genotex.harness.solvers\n"
        "from genotex.cli import main\n"
        "print('OK')\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0 and "OK" in done.stdout, done.stderr

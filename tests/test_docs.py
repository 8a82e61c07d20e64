"""The documentation cannot drift from the code: its examples run, its commands parse, its
schemas read back through genotex's schema classes, and its navigation is the docs tree."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from genotex.cli import main
from tests.doc_commands import PYTHON_IN_PAGE

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
PAGES = [ROOT / "README.md", *sorted(DOCS.rglob("*.md"))]
NOTEBOOK = DOCS / "guides" / "notebook.md"  # its first block: tests/test_demo.py


def _blocks(page: Path, language: str) -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```", page.read_text(), re.S | re.M)


def _commands() -> list[tuple[str, str]]:
    """Every `genotex …` command of a bash block (continuations joined, comments cut)."""
    found = []
    for page in PAGES:
        for block in _blocks(page, "bash"):
            text = block.replace("\\\n", " ")
            for line in text.splitlines():
                for part in re.split(r"&&|\||\s>>?\s", line.split("#", 1)[0]):
                    words = shlex.split(
                        part.strip().removeprefix("$ ").replace("[", "").replace("]", "")
                    )
                    if words and words[0].endswith("genotex"):
                        found.append((page.name, " ".join(words)))
    return found


@pytest.mark.parametrize(("page", "command"), _commands())
def test_every_documented_command_parses(page, command):
    """Each command names real subcommands and options, with values of the right type."""
    args = shlex.split(command)[1:]
    command_obj: click.Command = main
    context = click.Context(main, info_name="genotex")
    while isinstance(command_obj, click.Group) and args and not args[0].startswith("-"):
        sub = command_obj.get_command(context, args[0])
        assert sub is not None, f"{page}: no command {args[0]!r} in {command!r}"
        context = click.Context(sub, info_name=args[0], parent=context)
        command_obj, args = sub, args[1:]
    with command_obj.make_context(context.info_name, args, parent=context.parent):
        pass  # an unknown option, a missing value or a value of the wrong type raises


def test_the_documented_commands_were_found():
    names = {command.split()[1] for _, command in _commands()}
    assert {"demo", "eval", "compare", "leaderboard", "download", "regress", "preprocess"} <= names


@pytest.fixture(scope="module")
def demo_root(tmp_path_factory):
    root = tmp_path_factory.mktemp("docs") / "DEMO"  # the guides' `genotex demo --out DEMO`
    result = CliRunner().invoke(main, ["demo", "--out", str(root), "-q"])
    assert result.exit_code == 0, result.output
    return root


def _examples() -> list[tuple[str, int, str]]:
    found = []
    for page in PAGES:
        for k, block in enumerate(_blocks(page, "python")):
            if page == NOTEBOOK and k == 0:
                continue  # run on its own generated benchmark by test_demo
            if str(page.relative_to(ROOT)) in PYTHON_IN_PAGE:
                continue  # on its page's own data, by test_doc_commands
            found.append((str(page.relative_to(ROOT)), k, block))
    return found


@pytest.mark.parametrize(("page", "k", "code"), _examples(), ids=lambda v: str(v)[:40])
def test_every_python_example_runs(page, k, code, demo_root, monkeypatch):
    where = demo_root.parent if "DEMO/" in code else demo_root  # as the page says to run it
    monkeypatch.chdir(where)
    exec(compile(code, f"{page} example {k}", "exec"), {})  # noqa: S102 - our own documentation


def test_the_contract_examples_are_read_by_the_schema_classes():
    from genotex.core import CohortInfo, ResultFile, RunStatus, TaskInfo

    text = (DOCS / "contract.md").read_text()
    examples = dict(re.findall(r"<!-- contract:(\w+) -->\n```json\n(.*?)```", text, re.S))
    assert set(examples) == {"TaskInfo", "CohortInfo", "ResultFile", "RunStatus"}
    data = {name: json.loads(body) for name, body in examples.items()}
    info = TaskInfo.from_dict(data["TaskInfo"])
    assert info.traits == ["Asthma", "Obesity"]
    cohorts, problems = CohortInfo.from_dict(data["CohortInfo"])
    assert problems == [] and len(cohorts.records) == 2
    result = ResultFile.from_dict(data["ResultFile"])
    assert result.complete and result.genes == ("IL13", "ORMDL3", "CDH26")
    assert result.coefficients == (0.61, -0.4, 0.12)
    status = RunStatus.from_dict(data["RunStatus"])
    assert [p.kind for p in status.problems] == ["ok", "skipped"]
    assert status.to_dict() == data["RunStatus"]


def test_the_navigation_is_the_docs_tree():
    import yaml

    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text().replace("!!python", "#"))

    def pages(node: object) -> list[str]:
        if isinstance(node, str):
            return [node]
        if isinstance(node, dict):
            return [p for value in node.values() for p in pages(value)]
        return [p for item in node for p in pages(item)] if isinstance(node, list) else []

    listed = set(pages(config["nav"]))
    present = {str(p.relative_to(DOCS)) for p in [*DOCS.rglob("*.md"), *DOCS.rglob("*.ipynb")]}
    assert listed == present


def test_the_docs_build_from_a_clone_without_the_shared_folder(tmp_path):
    """0.8.0's site did not build without `../shared` (the notebook page ran on its real
    files). Since 0.12 the page shows its executed copy, checked in: the build needs neither
    the shared folder nor the network, and the page holds its outputs (issue #61).
    """
    import os
    import shutil
    import subprocess
    import sys
    from pathlib import Path

    mkdocs = Path(sys.executable).parent / "mkdocs"
    if not mkdocs.exists() and shutil.which("mkdocs") is None:
        pytest.skip("mkdocs is not installed (the docs extra)")
    root = Path(__file__).resolve().parents[1]
    done = subprocess.run(
        [str(mkdocs) if mkdocs.exists() else "mkdocs", "build", "--strict", "--site-dir",
         str(tmp_path / "site")],
        cwd=root, capture_output=True, text=True, timeout=600,
        env={**os.environ, "GENOTEX_SHARED": str(tmp_path / "absent"), "NO_MKDOCS_2_WARNING": "1"},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    cli = (tmp_path / "site" / "reference" / "cli" / "index.html").read_text()
    # issue #62 item 5: no Sentinel.UNSET default, placeholders shown, examples as code
    assert "Sentinel" not in cli
    assert "GEO/&lt;trait&gt;/&lt;GSE&gt;/" in cli  # baseline's ROOT layout, as written
    assert "<code>genotex demo --inputs-only --out bench &amp;&amp; genotex baseline" in cli
    assert "[reference&#124;standard]" in cli or "[reference|standard]" in cli
    page = (tmp_path / "site" / "guides" / "cohort-notebook" / "index.html").read_text()
    assert "AnnData object with n_obs × n_vars = 45 × 19858" in page  # the checked-in outputs
    assert page.count("data:image/png;base64") >= 4  # its figures

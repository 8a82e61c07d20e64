"""`genotex mcp --root BENCH`: genotex's library as tools an agent calls over MCP (stdio).

Every path a tool takes is relative to one of the roots the server was started
with and must stay inside it (links followed); every tool error is one sentence
(an MCP tool error), never a traceback. Results are typed (dataclasses), so a
client gets structured content.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

from ..core import (
    CohortInfo,
    GenotexError,
    Mode,
    ProblemId,
    ResultFile,
    TaskInfo,
    read_json,
    read_table,
)
from ..evaluation import score_gene_list
from ..preprocessing import inspect_cohort, preprocess_cohort, propose_cohort
from ..preprocessing import load_synonyms as _load_synonyms
from ..regression import answer_problem as _answer_problem

__all__ = ["build_server"]


@dataclass
class Problem:
    trait: str
    condition: str | None
    key: str


@dataclass
class Cohort:
    trait: str
    cohort: str
    source: str  # "GEO" or "TCGA"
    path: str


@dataclass
class Answer:
    problem: str
    model: str
    alpha: float
    genes: list[str]
    coefficients: list[float]
    cohorts: list[str]


@dataclass
class Validation:
    files_checked: int
    problems: list[str]


@dataclass
class GeneListScore:
    precision: float
    recall: float
    f1: float
    auroc: float
    gsea_es: float
    scales: str = "precision, recall and F1 in percent (0-100); AUROC and GSEA-ES on 0-1"


class _Roots:
    """The folders the server may read and write; a path outside all of them is refused."""

    def __init__(self, roots: list[Path]) -> None:
        self.roots = [Path(os.path.realpath(r)) for r in roots]

    def path(self, relative: str, root: int = 0) -> Path:
        if not 0 <= root < len(self.roots):
            raise ToolError(f"there is no root {root}; the server has {len(self.roots)}")
        base = self.roots[root]
        real = Path(os.path.realpath(base / relative))
        if real != base and base not in real.parents:
            raise ToolError(f"{relative!r} is outside the root the server was started with")
        return real


T = TypeVar("T")


def _guard(call: Callable[[], T]) -> T:
    """Run a library call; a genotex error (or a file error) is one sentence, as a tool error."""
    try:
        return call()
    except ToolError:
        raise
    except GenotexError as exc:
        raise ToolError(str(exc)) from None
    except OSError as exc:
        raise ToolError(f"{exc.filename or ''}: {exc.strerror or exc}".lstrip(": ")) from None


class GenotexTools:
    """The tools, each a method: typed arguments and results, errors as one-sentence tool errors."""

    def __init__(self, roots: list[Path]) -> None:
        self.guard = _Roots(roots)

    def _task_info(self, root: int) -> TaskInfo:
        return TaskInfo.read(self.guard.path("metadata/task_info.json", root))

    def list_problems(self, root: int = 0) -> list[Problem]:
        """The problems of a root's metadata/task_info.json, in benchmark order."""
        info = _guard(lambda: self._task_info(root))
        return [Problem(p.trait, p.condition, p.key) for p in info.problems()]

    def list_cohorts(self, trait: str, root: int = 0) -> list[Cohort]:
        """The GEO series folders (input/GEO/<trait>/) and the TCGA cohort of a trait."""
        from ..preprocessing import find_xena_folder

        base, cohorts = self.guard.roots[root], []
        geo = self.guard.path(f"input/GEO/{trait}", root)
        for folder in sorted(p for p in geo.iterdir() if p.is_dir()) if geo.is_dir() else []:
            cohorts.append(Cohort(trait, folder.name, "GEO", folder.relative_to(base).as_posix()))
        tcga = self.guard.path("input/TCGA", root)
        xena = find_xena_folder(tcga, trait) if tcga.is_dir() else None
        if xena is not None:
            cohorts.append(Cohort(trait, "Xena", "TCGA", Path(xena).relative_to(base).as_posix()))
        return cohorts

    def inspect_geo_cohort(self, cohort_path: str, trait: str | None = None, root: int = 0) -> str:
        """Background, characteristics rows and platforms of a GEO cohort folder (text)."""
        return _guard(lambda: inspect_cohort(self.guard.path(cohort_path, root), trait=trait))

    def propose_recipe(self, cohort_path: str, trait: str, root: int = 0) -> str:
        """genotex's proposed recipe (TOML, with its evidence as comments) for a GEO cohort."""
        return _guard(lambda: propose_cohort(self.guard.path(cohort_path, root), trait).toml())

    def preprocess(
        self,
        cohort_path: str,
        trait: str,
        recipe_path: str | None = None,
        out: str = "output/preprocess",
        root: int = 0,
    ) -> str:
        """Preprocess a cohort (GEO with a recipe file, TCGA without) into OUT/<trait>/."""
        path = self.guard.path

        def run() -> str:
            synonyms = _load_synonyms(path("metadata/gene_synonym.json", root))
            recipe = path(recipe_path, root) if recipe_path else None
            cohort, target = path(cohort_path, root), path(out, root)
            return preprocess_cohort(cohort, trait, synonyms, target, recipe=recipe).outcome.text

        return _guard(run)

    def answer(
        self,
        trait: str,
        *,
        condition: str | None = None,
        data: str = "output/preprocess",
        mode: Mode = "standard",
        top: int = 50,
        root: int = 0,
    ) -> Answer:
        """Answer one problem with genotex's regression (`mode` standard or reference)."""
        unconditional = (condition or "None").lower() == "none"
        problem = ProblemId(trait, None if unconditional else condition)

        def run() -> Answer:
            info, folder = self._task_info(root), self.guard.path(data, root)
            result = _answer_problem(folder, problem, info, mode=mode)
            genes = result.genes[: max(0, top)]
            names, coefficients = [g for g, _ in genes], [c for _, c in genes]
            return Answer(
                problem.key, result.model, result.alpha, names, coefficients, list(result.cohorts)
            )

        try:
            return _guard(run)
        except ToolError:
            raise
        except Exception as exc:  # noqa: BLE001 - a problem without data is a tool error too
            raise ToolError(str(exc) or exc.__class__.__name__) from None

    def validate_output(self, output: str = "output", root: int = 0) -> Validation:
        """Check an output tree against the contract: result JSONs, cohort_info.json, CSVs."""
        folder = self.guard.path(output, root)
        problems: list[str] = []
        checked = 0
        for path in sorted(folder.rglob("*")) if folder.is_dir() else []:
            relative = path.relative_to(folder).as_posix()
            try:
                if path.name.startswith("significant_genes_condition_"):
                    ResultFile.read(path)
                elif path.name == "cohort_info.json":
                    _, found = CohortInfo.from_dict(read_json(path))
                    problems += [f"{relative}: {reason}" for reason in found]
                elif path.suffix == ".csv" and path.is_file():
                    read_table(path, features_are_rows="_data" in relative)
                else:
                    continue
            except GenotexError as exc:
                problems.append(f"{relative}: {exc.reason}")
            checked += 1
        return Validation(checked, problems)

    def score_genes(self, genes: list[str], trait: str, root: int = 0) -> GeneListScore:
        """Score a ranked gene list against a trait's known related genes (task_info)."""
        if isinstance(genes, str):
            raise ToolError("genes must be a list of gene symbols, not one string")
        info = _guard(lambda: self._task_info(root))
        if trait not in info.related_genes:
            raise ToolError(f"task_info has no trait {trait!r}")
        scores = score_gene_list(list(genes), list(info.genes_of(trait)))
        return GeneListScore(
            float(scores.precision),
            float(scores.recall),
            float(scores.f1),
            float(scores.auroc),
            float(scores.gsea_es),
        )


#: The tools the server exposes, in the order a client lists them.
TOOLS = (
    "list_problems",
    "list_cohorts",
    "inspect_geo_cohort",
    "propose_recipe",
    "preprocess",
    "answer",
    "validate_output",
    "score_genes",
)


def build_server(roots: list[str | Path]) -> MCPServer:
    """An MCP server exposing genotex's library on `roots` (each a benchmark root or a folder)."""
    if not roots:
        raise GenotexError("the MCP server needs at least one root folder")
    for root in roots:
        if not Path(root).is_dir():
            raise GenotexError("the root is not a folder", path=root)
    tools = GenotexTools([Path(r) for r in roots])
    server = MCPServer("genotex")
    for name in TOOLS:
        server.tool(name=name)(getattr(tools, name))
    return server

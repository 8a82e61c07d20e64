"""`genotex mcp --root DIR [--write DIR]`: genotex's library as tools an agent calls over MCP.

Confinement, for an agent that may be hostile:

- every path a tool takes is relative to one of the roots the server was
  started with; its real path (links followed) must lie under that root, and so
  must every file a tool reads inside a folder it was given;
- a tool writes only under a writable folder the user named (`--write`);
- the server refuses to start on a root that holds reference answers (a
  `regress/` folder of `significant_genes_condition_*.json` files), unless told
  (`allow_reference`), so an agent cannot read them through it;
- arguments are bounded (lengths, counts) before any work, and every error is
  one sentence as an MCP tool error, never a traceback.

Results are typed (dataclasses), so a client gets structured content; a
number that can be undefined (AUROC, GSEA-ES of an empty list) is declared
optional and is `null` then.
"""

from __future__ import annotations

import functools
import math
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import ValidationError

from ..core import (
    CohortInfo,
    GenotexError,
    Mode,
    ProblemId,
    ResultFile,
    TaskInfo,
    prepare_output_folder,
    read_json,
    read_table,
)
from ..evaluation import score_gene_list
from ..preprocessing import inspect_cohort, preprocess_cohort, propose_cohort
from ..preprocessing import load_synonyms as _load_synonyms
from ..regression import answer_problem as _answer_problem
from ._confine import MAX_GENE_CHARS, MAX_GENES, Roots, check_name, is_under, reference_inside

__all__ = ["TOOLS", "GenotexTools", "ReferenceRootError", "build_server"]


class ReferenceRootError(GenotexError):
    """A root the server was asked to serve holds reference answers."""


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
    precision: float | None
    recall: float | None
    f1: float | None
    auroc: float | None
    gsea_es: float | None
    scales: str = (
        "precision, recall and F1 in percent (0-100); AUROC and GSEA-ES on 0-1; "
        "null where undefined (no known gene in the list)"
    )


T = TypeVar("T")


def _guard(call: Callable[[], T]) -> T:
    """Run a library call; any failure is one sentence, as a tool error (never a traceback)."""
    try:
        return call()
    except ToolError:
        raise
    except GenotexError as exc:
        raise ToolError(str(exc)[:1000]) from None
    except OSError as exc:
        raise ToolError(
            f"{exc.filename or ''}: {exc.strerror or exc}".lstrip(": ")[:1000]
        ) from None
    except Exception as exc:  # noqa: BLE001 - a tool error names it; the server stays up
        raise ToolError(f"{exc.__class__.__name__}: {str(exc)[:500]}") from None


def _tool(method: Callable[..., Any]) -> Callable[..., Any]:
    """A tool method whose every failure, argument checks included, is one sentence, with
    paths relative to the server's roots.
    """

    @functools.wraps(method)
    def run(self: GenotexTools, *args: Any, **kwargs: Any) -> Any:
        try:
            return _guard(lambda: method(self, *args, **kwargs))
        except ToolError as exc:
            raise ToolError(self.relative_paths(str(exc))) from None

    return run


def _one_sentence(exc: ValidationError) -> str:
    """A pydantic validation error as one sentence naming the argument (no URL, one line)."""
    errors = exc.errors(include_url=False)
    if not errors:
        return "the arguments do not match the tool's schema"
    first = errors[0]
    where = ".".join(str(part) for part in first.get("loc", ())) or "the arguments"
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    return f"the argument {where}: {str(first.get('msg', 'is not valid'))[:200]}{more}"


def _checked_arguments(tool: Any) -> None:
    """Make a registered tool's argument validation say what is wrong in one sentence (the
    MCP SDK sends pydantic's own message: several lines, with a URL).
    """
    run = tool.run

    async def checked(*args: Any, **kwargs: Any) -> Any:
        try:
            return await run(*args, **kwargs)
        except ToolError as exc:
            if isinstance(exc.__cause__, ValidationError):
                raise ToolError(_one_sentence(exc.__cause__)) from None
            raise

    object.__setattr__(tool, "run", checked)


def _optional(value: float) -> float | None:
    return None if math.isnan(value) else float(value)


class GenotexTools:
    """The tools, each a method: typed arguments and results, errors as one-sentence tool errors
    that name paths relative to the roots (never the host's absolute paths).
    """

    def __init__(self, roots: list[Path], writable: Iterable[Path] = ()) -> None:
        self.guard = Roots(roots, writable)

    def relative_paths(self, message: str) -> str:
        """A message with every root's absolute path (real or as given) taken out of it."""
        for number, root in sorted(enumerate(self.guard.roots), key=lambda r: -len(str(r[1]))):
            named = f"root {number}" if len(self.guard.roots) > 1 else "the root"
            message = message.replace(f"{root}{os.sep}", "").replace(str(root), named)
        return message

    def _task_info(self, root: int) -> TaskInfo:
        return TaskInfo.read(self.guard.path("metadata/task_info.json", root))

    @_tool
    def list_problems(self, root: int = 0) -> list[Problem]:
        """The problems of a root's metadata/task_info.json, in benchmark order."""
        info = self._task_info(root)
        return [Problem(p.trait, p.condition, p.key) for p in info.problems()]

    @_tool
    def list_cohorts(self, trait: str, root: int = 0) -> list[Cohort]:
        """The GEO series folders (input/GEO/<trait>/) and the TCGA cohort of a trait."""
        from ..preprocessing import find_xena_folder

        trait = check_name(trait, "trait name")
        base, cohorts = self.guard.base(root), []
        geo = self.guard.path(f"input/GEO/{trait}", root)
        for folder in sorted(p for p in geo.iterdir() if p.is_dir()) if geo.is_dir() else []:
            if is_under(Path(os.path.realpath(folder)), base):
                relative = folder.relative_to(base).as_posix()
                cohorts.append(Cohort(trait, folder.name, "GEO", relative))
        tcga = self.guard.path("input/TCGA", root)
        xena = find_xena_folder(tcga, trait) if tcga.is_dir() else None
        if xena is not None and is_under(Path(os.path.realpath(xena)), base):
            cohorts.append(Cohort(trait, "Xena", "TCGA", Path(xena).relative_to(base).as_posix()))
        return cohorts

    @_tool
    def inspect_geo_cohort(self, cohort_path: str, trait: str | None = None, root: int = 0) -> str:
        """Background, characteristics rows and platforms of a GEO cohort folder (text)."""
        if trait is not None:
            trait = check_name(trait, "trait name")
        return inspect_cohort(self.guard.folder(cohort_path, root), trait=trait)

    @_tool
    def propose_recipe(self, cohort_path: str, trait: str, root: int = 0) -> str:
        """genotex's proposed recipe (TOML, with its evidence as comments) for a GEO cohort."""
        trait = check_name(trait, "trait name")
        return propose_cohort(self.guard.folder(cohort_path, root), trait).toml()

    @_tool
    def preprocess(
        self,
        cohort_path: str,
        trait: str,
        recipe_path: str | None = None,
        out: str = "output/preprocess",
        root: int = 0,
    ) -> str:
        """Preprocess a cohort (GEO with a recipe file, TCGA without) into OUT/<trait>/."""
        trait = check_name(trait, "trait name")
        target = self.guard.writable_path(out, root)
        synonyms = _load_synonyms(self.guard.path("metadata/gene_synonym.json", root))
        recipe = self.guard.path(recipe_path, root) if recipe_path is not None else None
        cohort = self.guard.folder(cohort_path, root)
        return preprocess_cohort(cohort, trait, synonyms, target, recipe=recipe).outcome.text

    @_tool
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
        trait = check_name(trait, "trait name")
        unconditional = condition is None or condition.lower() == "none"
        problem = ProblemId(trait, None if unconditional else check_name(condition, "condition"))
        if isinstance(top, bool) or not isinstance(top, int) or not 1 <= top <= MAX_GENES:
            raise ToolError(f"top must be a whole number from 1 to {MAX_GENES:,}, not {top!r:.40}")
        if mode not in ("standard", "reference"):
            raise ToolError(f"mode must be standard or reference, not {str(mode)[:40]!r}")
        info, folder = self._task_info(root), self.guard.folder(data, root)
        result = _answer_problem(folder, problem, info, mode=mode)
        genes = result.genes[:top]
        names, coefficients = [g for g, _ in genes], [c for _, c in genes]
        return Answer(
            problem.key, result.model, result.alpha, names, coefficients, list(result.cohorts)
        )

    @_tool
    def validate_output(self, output: str = "output", root: int = 0) -> Validation:
        """Check an output tree against the contract: result JSONs, cohort_info.json, CSVs."""
        folder = self.guard.folder(output, root)
        if not folder.is_dir():
            raise ToolError(f"{str(output)[:200]!r} is not a folder under the root")
        problems: list[str] = []
        checked = 0
        for path in sorted(folder.rglob("*")):
            relative = path.relative_to(folder).as_posix()
            try:
                if path.is_symlink():  # followed nowhere: folder() checked it stays inside
                    continue
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

    @_tool
    def score_genes(self, genes: list[str], trait: str, root: int = 0) -> GeneListScore:
        """Score a ranked gene list against a trait's known related genes (task_info)."""
        if not isinstance(genes, list):
            raise ToolError("genes must be a list of gene symbols, not one string")
        if len(genes) > MAX_GENES:
            raise ToolError(f"genes holds {len(genes):,} symbols; at most {MAX_GENES:,}")
        if not all(isinstance(g, str) and len(g) <= MAX_GENE_CHARS for g in genes):
            raise ToolError(f"each gene must be a symbol of at most {MAX_GENE_CHARS} characters")
        trait = check_name(trait, "trait name")
        info = self._task_info(root)
        if trait not in info.related_genes:
            raise ToolError(f"task_info has no trait {trait!r}")
        scores = score_gene_list(list(genes), list(info.genes_of(trait)))
        return GeneListScore(
            _optional(scores.precision),
            _optional(scores.recall),
            _optional(scores.f1),
            _optional(scores.auroc),
            _optional(scores.gsea_es),
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


def build_server(
    roots: list[str | Path], *, writable: Iterable[str | Path] = (), allow_reference: bool = False
) -> MCPServer:
    """An MCP server exposing genotex's library on `roots` (each a benchmark root or a folder).

    Parameters
    ----------
    roots
        The folders the tools may read; a tool's `root` argument is an index.
    writable
        The folders the tools may write (`preprocess`'s `out`); none by default.
    allow_reference
        Serve a root that holds reference answers (refused by default: an agent
        given the server could read them).
    """
    if not roots:
        raise GenotexError("the MCP server needs at least one root folder")
    for root in roots:
        if not Path(root).is_dir():
            raise GenotexError("the root is not a folder", path=root)
        found = None if allow_reference else reference_inside(Path(root))
        if found is not None:
            raise ReferenceRootError(
                f"holds reference answers ({found}), which an agent could read through the "
                "server; serve a folder without them, or allow it explicitly",
                path=root,
            )
    for folder in writable:  # made when missing, and never a reference (core's rule)
        prepare_output_folder(folder, what="writable folder")
    tools = GenotexTools([Path(r) for r in roots], [Path(w) for w in writable])
    server = MCPServer("genotex")
    for name in TOOLS:
        server.tool(name=name)(getattr(tools, name))
        _checked_arguments(server._tool_manager.get_tool(name))
    return server

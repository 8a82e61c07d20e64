"""The paper's rows that need no agent (Tables 2 and 3) as Inspect solvers over genotex's tasks.

- `genotex/lasso`, `genotex/lmm`: the analysis task answered by the plain Lasso or LMM
  (`genotex regress --model lasso|lmm`, the published pipeline otherwise), in the
  sample's sandbox, as Table 3's "Lasso" and "LMM" rows.
- `genotex/random`: each problem answered by `genes` genes drawn with a seed from the
  gene universe of the problem's data (the given linked tables' gene columns; for the
  end-to-end task, which gives no preprocessed data, the official symbols of
  `metadata/gene_synonym.json`), as the paper's "Random" row. Its expected F1 is known in
  closed form (`expected_random_f1`).
- `genotex/zero_shot`: the model names each problem's genes from its own knowledge, with
  no data (the prompt is `prompts/zero_shot.md`), as "o1 zero-shot"; its tokens are
  Inspect's usage of the calls.

Every answer is written where the task's scorer reads it, and a command that could not
run is the sample's failure (`note_command`).
"""

from __future__ import annotations

import csv
import io
import json
import random
import re
import shlex
from collections.abc import Sequence
from importlib import resources

from inspect_ai.model import get_model
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.util import sandbox

from ...core import ProblemId
from ..runs._tasks import answer_path, regress_command, sample_problems
from ._arguments import check_whole
from ._reference import run_commands

__all__ = ["expected_random_f1", "lasso", "lmm", "random_genes", "zero_shot"]

#: The random row's genes per problem, by default (the reference answers' typical size).
DEFAULT_RANDOM_GENES = 50
#: The zero-shot row's genes per problem, at most.
DEFAULT_ZERO_SHOT_GENES = 50
_NOT_GENES = {"Age", "Gender"}


async def _write_answer(problem: ProblemId, genes: Sequence[str]) -> None:
    answer = {"significant_genes": {"Variable": list(genes)}}
    await sandbox().write_file(answer_path(problem), json.dumps(answer, indent=1))


def _plain_model(model: str) -> Solver:
    async def solve(state: TaskState, generate: Generate) -> TaskState:
        metadata = state.metadata or {}
        if metadata.get("task") != "analysis":
            raise RuntimeError(
                f"genotex/{model} answers the analysis task (genotex/analysis), not "
                f"genotex/{metadata.get('task')}"
            )
        python = str(metadata.get("python") or "python3")
        await run_commands(
            state,
            [regress_command(python, "given/preprocess", p, model) for p in sample_problems(state)],
        )
        return state

    return solve


@solver(name="lasso")
def lasso() -> Solver:
    """Table 3's "Lasso": the analysis task by the plain Lasso (no batch-effect model)."""
    return _plain_model("lasso")


@solver(name="lmm")
def lmm() -> Solver:
    """Table 3's "LMM": the analysis task by the LMM whatever the batch-effect test says."""
    return _plain_model("lmm")


def random_genes(universe: Sequence[str], k: int, seed: int, problem: str) -> list[str]:
    """`k` genes drawn without replacement from the sorted `universe`, seeded by `seed` and
    the problem's key (the same answer for the same problem, whatever the order of samples).
    """
    pool = sorted(set(universe))
    rng = random.Random(f"genotex-random:{seed}:{problem}")
    return rng.sample(pool, min(k, len(pool)))


def expected_random_f1(universe: int, known: int, reference: int, k: int) -> tuple[float, float]:
    """The mean and the variance of the F1 (in percent) of `k` genes drawn at random from
    `universe` genes, `known` of which are in the reference answer of `reference` genes.

    The true positives are hypergeometric (mean k·known/universe); F1 = 2·TP / (k + reference).
    """
    k = min(k, universe)
    if universe == 0 or k + reference == 0:
        return 0.0, 0.0
    mean_tp = k * known / universe
    var_tp = mean_tp * (1 - known / universe) * (universe - k) / max(universe - 1, 1)
    scale = 200.0 / (k + reference)
    return scale * mean_tp, scale**2 * var_tp


async def _universe(problem: ProblemId, task: str) -> list[str]:
    """The gene columns of the problem's given linked tables (the analysis task), else the
    official symbols of the synonym table (the end-to-end task gives no preprocessed data).
    """
    if task == "analysis":
        folder = shlex.quote(f"given/preprocess/{problem.trait}")
        listing = await sandbox().exec(
            ["sh", "-c", f'for f in {folder}/*.csv; do head -n 1 "$f"; echo; done'], timeout=300
        )
        genes: set[str] = set()
        for line in listing.stdout.splitlines():
            for row in csv.reader(io.StringIO(line)):
                genes.update(row[1:])
        return sorted(genes - _NOT_GENES - {problem.trait, str(problem.condition)} - {""})
    synonyms = json.loads(await sandbox().read_file("metadata/gene_synonym.json"))
    return sorted({str(v) for v in synonyms.values()} if isinstance(synonyms, dict) else set())


@solver(name="random")
def random_row(genes: int = DEFAULT_RANDOM_GENES, seed: int = 0) -> Solver:
    """The paper's "Random": `genes` genes a problem, drawn with `seed` from its universe."""
    if isinstance(genes, bool) or not isinstance(genes, int) or genes < 1:
        raise ValueError(f"genes must be a whole number of at least 1, not {genes!r:.40}")

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        task = str((state.metadata or {}).get("task"))
        for problem in sample_problems(state):
            universe = await _universe(problem, task)
            await _write_answer(problem, random_genes(universe, genes, seed, problem.key))
        return state

    return solve


def zero_shot_prompt(problem: ProblemId, top: int) -> str:
    """The zero-shot question for one problem, from `prompts/zero_shot.md`."""
    template = (
        resources.files("genotex.harness.solvers").joinpath("prompts/zero_shot.md").read_text()
    )
    clause = f", given {problem.condition}" if problem.condition else ""
    return template.format(trait=problem.trait, condition_clause=clause, top=top)


def parse_gene_list(text: str, top: int) -> list[str]:
    """The gene symbols of a model's answer: its first JSON list of strings, else the symbol-
    like words of its text; upper-cased, deduplicated, at most `top`.
    """
    found: list[str] = []
    for match in re.finditer(r"\[[^\[\]]*\]", text):
        try:
            value = json.loads(match.group(0))
        except json.JSONDecodeError:
            continue
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            found = value
            break
    if not found:
        found = re.findall(r"\b[A-Z][A-Z0-9-]{1,14}\b", text)
    genes: list[str] = []
    for gene in (g.strip().upper() for g in found):
        if re.fullmatch(r"[A-Z0-9][A-Z0-9.-]{0,29}", gene) and gene not in genes:
            genes.append(gene)
    return genes[:top]


@solver(name="zero_shot")
def zero_shot(top: int = DEFAULT_ZERO_SHOT_GENES) -> Solver:
    """The model names each problem's genes from its own knowledge, no data (one call each)."""
    check_whole("zero_shot", "top", top, 1, 10_000)  # before any paid call

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        model = get_model()
        for problem in sample_problems(state):
            output = await model.generate(zero_shot_prompt(problem, top))
            await _write_answer(problem, parse_gene_list(output.completion, top))
        return state

    return solve

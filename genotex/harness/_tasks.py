"""GenoTEX as Inspect tasks: `genotex/preprocess`, `genotex/analysis`, `genotex/e2e`.

Each sample's working folder holds its inputs (copies), `metadata/` cut to its
problems and an `output/` to write; the reference is never in it. The scorer
copies the agent's `output/` out of the sandbox into `OUTPUTS/<sample>/output/`
on the host and scores it with genotex's own evaluation; each metric is the
paper's average over all items of all samples. `genotex/gold` writes the
reference answers (every score 1.0: the wiring works); `genotex/baseline` runs
genotex's non-LLM pipeline in the sandbox. Both read what they need from the
sample's metadata, so they take no arguments.
"""

from __future__ import annotations

import json
import math
import shlex
import sys
from collections.abc import Callable
from pathlib import Path

from inspect_ai import Task, task
from inspect_ai.agent import react
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.scorer import Metric, SampleScore, Score, Scorer, Target, metric, scorer
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.tool import bash, mcp_server_sandbox, python
from inspect_ai.util import sandbox

from ..core import GenotexError, output_path
from ._bench import VALUE_METRICS, Benchmark, SampleSpec, TaskName, pooled_average, score_output

__all__ = ["analysis", "baseline", "e2e", "genotex_scorer", "gold", "preprocess"]


def _instructions(spec: SampleSpec) -> str:
    """What the agent is asked, in our own words (after the paper's Appendix C guidelines)."""
    lines = [
        "You are analysing gene expression data for the GenoTEX benchmark.",
        f"Trait: {spec.trait}. Your working folder holds the inputs; write only under output/.",
        "metadata/task_info.json lists the trait's known related genes and its conditions;",
        "metadata/gene_synonym.json maps gene aliases to official symbols.",
    ]
    if spec.task in ("preprocess", "e2e"):
        lines += [
            "Inputs: input/GEO/<trait>/<GSE>/ (series matrix and family SOFT) and "
            "input/TCGA/<Xena cohort>/ (clinical matrix and expression).",
            "Preprocess every cohort: write output/preprocess/<trait>/cohort_info.json, a JSON "
            'object of cohort id -> {"is_usable", "is_gene_available", "is_trait_available", '
            '"is_available", "is_biased", "has_age", "has_gender", "sample_size", "note"}; for a '
            "usable cohort also gene_data/<id>.csv (genes x samples, official symbols), "
            "clinical_data/<id>.csv (trait, Age, Gender x samples) and <id>.csv (the linked "
            "table: samples x [trait, Age, Gender, genes]) under output/preprocess/<trait>/.",
        ]
    if spec.given:
        lines.append(
            "given/preprocess/<trait>/ holds expert-preprocessed data of "
            f"{', '.join(spec.given)} (cohort_info.json and linked tables): use it as it is."
        )
    if spec.problems:
        asked = "; ".join(
            f"{p.trait} given {p.condition}" if p.condition else f"{p.trait} (unconditional)"
            for p in spec.problems
        )
        lines += [
            f"Find the genes associated with: {asked}.",
            "Write each answer to output/regress/<trait>/significant_genes_condition_<C>.json "
            "(C: the condition, or None) as "
            '{"significant_genes": {"Variable": [gene, ...], "Coefficient": [number, ...]}, '
            '"cv_performance": {"prediction": {"accuracy": x, "f1": y}}}, most important first.',
        ]
    lines.append("When you are done, say so.")
    return "\n".join(lines)


#: The Docker sandbox shipped with genotex (no network, CPU and memory limits).
COMPOSE_FILE = Path(__file__).parent / "docker" / "compose.yaml"
#: Run before the agent: an output folder, and the given files read-only.
_SETUP = (
    "mkdir -p output && find input given metadata -type f -exec chmod a-w {} + 2>/dev/null; true"
)


def _sandbox(kind: str) -> tuple[str, str] | str:
    """`local` (no isolation), or `docker` with genotex's compose file."""
    if kind == "docker":
        return ("docker", str(COMPOSE_FILE))
    if kind != "local":
        raise GenotexError(f"sandbox must be local or docker, not {kind!r}")
    return "local"


def _baseline_commands(spec: SampleSpec, python_exe: str) -> list[str]:
    """The shell commands of genotex's non-LLM pipeline for a sample (run in its folder)."""
    genotex = f"{shlex.quote(python_exe)} -m genotex"
    commands = []
    if spec.task in ("preprocess", "e2e"):
        commands.append(f"{genotex} baseline .")
    data = "output/preprocess" if spec.task == "e2e" else "given/preprocess"
    if spec.task == "e2e":  # the given traits' data beside the agent's own, then taken out
        commands += [
            f"cp -rn {shlex.quote(f'given/preprocess/{t}')} output/preprocess/" for t in spec.given
        ]
    for problem in spec.problems:
        commands.append(
            f"{genotex} regress --data {data} --task-info metadata/task_info.json "
            f"--out output/regress --force --trait {shlex.quote(problem.trait)} "
            f"--condition {shlex.quote(problem.condition or 'None')}"
        )
    if spec.task == "e2e":
        commands += [
            f"rm -rf {shlex.quote(f'output/preprocess/{t}')}" for t in spec.given if t != spec.trait
        ]
    return commands


def _agent_tools(tools: str | None, python_exe: str) -> list:
    """bash and python, and with `tools=genotex` genotex's MCP tools on the working folder."""
    chosen: list = [bash(timeout=600), python(timeout=600)]
    if tools in (None, "", "none"):
        return chosen
    if tools != "genotex":
        raise GenotexError(f"tools must be genotex or none, not {tools!r}")
    chosen.append(
        mcp_server_sandbox(
            name="genotex", command=python_exe, args=["-m", "genotex", "mcp", "--root", "."]
        )
    )
    return chosen


def _sample(bench: Benchmark, spec: SampleSpec, python_exe: str) -> Sample:
    files = {path: str(host) for path, host in spec.files.items()}
    files["metadata/task_info.json"] = json.dumps(spec.task_info, indent=1)
    return Sample(
        id=spec.id,
        input=_instructions(spec),
        target="",
        files=files,
        setup=_SETUP,
        metadata={
            "trait": spec.trait,
            "problems": [p.key for p in spec.problems],
            "gold": {path: str(host) for path, host in bench.gold_files(spec).items()},
            "baseline": _baseline_commands(spec, python_exe),
        },
    )


def _paper_metric(name: str, section: str, what: str) -> Metric:
    """A metric averaging every item of every sample, as the paper averages (not per sample)."""

    def factory() -> Metric:
        def compute(scores: list[SampleScore]) -> float:
            items = [s.score.metadata.get("items", {}) for s in scores if s.score.metadata]
            value = pooled_average(items, section, what)
            return 0.0 if math.isnan(value) else value

        return compute

    factory.__name__ = name
    return metric(name=name)(factory)()


def _make(task_name: TaskName) -> Callable[..., Task]:
    def build(
        root: str,
        *,
        reference: str | None = None,
        traits: str | list[str] | None = None,
        limit: int | None = None,
        outputs: str | None = None,
        sandbox: str = "local",
        time_limit: int | None = 3600,
        message_limit: int | None = 200,
        tools: str | None = None,
    ) -> Task:
        bench = Benchmark(root, reference)
        # `-T traits=A,B` reaches a task as a list; the Python API may pass "A,B"
        listed = traits.split(",") if isinstance(traits, str) else list(traits or [])
        wanted = [t.strip() for t in listed if t.strip()]
        specs = bench.samples(task_name, wanted)[: limit if limit else None]
        where = Path(outputs) if outputs else Path("genotex-outputs") / task_name
        python_exe = "python" if sandbox == "docker" else sys.executable  # the image's, or ours
        samples = [_sample(bench, s, python_exe) for s in specs]
        return Task(
            dataset=MemoryDataset(samples, name=f"genotex-{task_name}"),
            solver=react(tools=_agent_tools(tools, python_exe)),
            scorer=genotex_scorer(str(bench.root), str(bench.reference), task_name, str(where)),
            metrics=[_paper_metric(n, s, w) for n, s, w in VALUE_METRICS[task_name]],
            sandbox=_sandbox(sandbox),
            time_limit=time_limit,
            message_limit=message_limit,
            metadata={"genotex_task": task_name, "root": str(bench.root)},
        )

    build.__name__ = task_name
    build.__doc__ = f"GenoTEX's {task_name} task on a benchmark root (README: Running an agent)."
    return build


preprocess = task(name="preprocess")(_make("preprocess"))
analysis = task(name="analysis")(_make("analysis"))
e2e = task(name="e2e")(_make("e2e"))


async def _copy_out(where: Path) -> Path:
    """Copy the sandbox's `output/` to `where` on the host: regular files, never outside it."""
    listing = await sandbox().exec(["find", "output", "-type", "f"])
    where.mkdir(parents=True, exist_ok=True)
    for line in sorted(listing.stdout.splitlines()):
        relative = Path(line.strip()).relative_to("output")
        try:
            target = output_path(where, *relative.parts)
        except GenotexError:
            continue  # a name that would leave the folder is not copied
        data = await sandbox().read_file(f"output/{relative.as_posix()}", text=False)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    return where


@scorer(metrics=[])
def genotex_scorer(root: str, reference: str, task_name: str, outputs: str) -> Scorer:
    """genotex's evaluation of the sample's `output/`, copied out of the sandbox first."""
    bench = Benchmark(root, reference)

    async def score(state: TaskState, target: Target) -> Score:
        # the sample's own trait only: listing every trait's inputs would walk the benchmark
        trait = (state.metadata or {})["trait"]
        spec = next(
            s
            for s in bench.samples(task_name, [trait])  # type: ignore[arg-type]
            if s.id == str(state.sample_id)
        )
        # each epoch's output apart: OUTPUTS/<sample>/output, then .../epoch-<k>/output
        folder = Path(outputs) / spec.id
        epoch = getattr(state, "epoch", 1) or 1
        where = await _copy_out((folder if epoch == 1 else folder / f"epoch-{epoch}") / "output")
        result = score_output(bench, spec, where)
        return Score(
            value={k: (0.0 if math.isnan(v) else v) for k, v in result["values"].items()},
            answer=str(where),
            metadata={
                "items": result["items"],
                "findings": result["findings"],
                "output_dir": str(where.resolve()),
                "genotex_task": spec.task,
                "trait": spec.trait,
                "epoch": epoch,
            },
        )

    return score


@solver(name="gold")
def gold() -> Solver:
    """Copy the reference answers into `output/` (every score 1.0: checks the wiring)."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        for path, host in (state.metadata or {}).get("gold", {}).items():
            await sandbox().write_file(path, Path(host).read_bytes())
        return state

    return solve


@solver(name="baseline")
def baseline() -> Solver:
    """genotex's non-LLM pipeline in the sandbox: proposed recipes, preprocessing, regression."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        for command in (state.metadata or {}).get("baseline", []):
            await sandbox().exec(["sh", "-c", command], timeout=3600)
        return state

    return solve

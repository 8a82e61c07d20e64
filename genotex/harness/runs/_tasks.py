"""GenoTEX as Inspect tasks: `genotex/preprocess`, `genotex/analysis`, `genotex/e2e`.

Each sample's working folder holds its inputs (bound read-only in the `bwrap`
sandbox, copied in the others), `metadata/` cut to its problems and an
`output/` to write; the reference is never in it. A run is
self-contained: the task records in its log genotex's version, its arguments,
its sandbox, the sample slice of task_info and the reference's files with
their sha256 (`reference_manifest`); the scorer puts each sample's `output/`,
per epoch, into the sample's store (`_capture.STORE_KEY`) and scores it with
genotex's own evaluation. `genotex harness export` needs the log and the
reference, nothing else.

Every sample counts: one that errors or hits a limit scores what an empty
output scores (0 on every metric, the problem a failure for Succ.), with the
reason in its score's metadata. Each metric is the paper's average over all
items of all samples (problems, files, traits), taken on the epoch-reduced
item values, with its standard error. Each sample's metadata holds what the
agents that need no model do (`solvers/_reference.py`): the reference files that
answer it (`gold`) and genotex's pipeline as shell commands (`baseline`).
"""

from __future__ import annotations

import json
import os
import shlex
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from inspect_ai import Task, task
from inspect_ai._util.error import PrerequisiteError
from inspect_ai.agent import react
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.solver import TaskState
from inspect_ai.tool import bash, mcp_server_sandbox, python

from ..._version import __version__
from ...core import (
    WORKSPACE_NAME,
    WORKSPACE_NOTE,
    GenotexError,
    ProblemId,
    TaskInfo,
    benchmark_summary,
    regress_file_name,
)
from ..sandboxes._choice import choose_sandbox, inspect_sandbox
from ..sandboxes._folder_sandbox import METADATA_KEY
from ..sandboxes._mcp_process import local_mcp_server, sandboxed_mcp_server
from ..sandboxes._podman import default_image
from ..sandboxes._sandbox_spec import SampleSandbox, SandboxLimits, import_path_problem
from ._bench import (
    Benchmark,
    ConditionSetting,
    SampleSpec,
    TaskName,
    TcgaSetting,
    reference_manifest,
)
from ._scorer import DEFAULT_MAX_OUTPUT_MB, genotex_scorer, pooled, stderr
from ._scoring import VALUE_METRICS
from ._task_arguments import checked_arguments

__all__ = [
    "analysis",
    "answer_path",
    "e2e",
    "genotex_scorer",
    "preprocess",
    "regress_command",
    "sample_problems",
]


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
    if spec.raw:
        lines.append(
            f"The two-step problems also need {', '.join(spec.raw)}: their raw inputs are in "
            "input/ too; preprocess them likewise into output/preprocess/<trait>/."
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


#: Run before the agent: an output folder, and the given files read-only.
_SETUP = (
    "mkdir -p output && find input given metadata -type f -exec chmod a-w {} + 2>/dev/null; true"
)


def _bind_folders(files: dict[str, Path]) -> dict[str, str]:
    """The folders (and lone files) to bind read-only for a sample's files: a trait's GEO
    folder, its Xena folder, a given trait's data, the synonyms file; never file by file.
    """
    binds: dict[str, str] = {}
    for path, host in files.items():
        parts = path.split("/")
        depth = 3 if parts[0] in ("input", "given") and len(parts) > 3 else len(parts)
        below = len(parts) - depth
        bound = host.parents[below - 1] if below else host
        binds["/".join(parts[:depth])] = os.path.abspath(bound)  # a container needs it whole
    return binds


def sample_problems(state: TaskState) -> list[ProblemId]:
    """The problems a sample asks (its metadata's keys), in their order."""
    return [ProblemId.from_key(k) for k in (state.metadata or {}).get("problems", [])]


def answer_path(problem: ProblemId) -> str:
    """Where in a sample's folder the answer to a problem is written (and scored from)."""
    return f"output/regress/{problem.trait}/{regress_file_name(problem.condition)}"


def regress_command(python_exe: str, data: str, problem: ProblemId, model: str = "auto") -> str:
    """The shell command that answers one problem in a sample's folder with `genotex regress`
    on the preprocessed data in `data` (`--model`: the plain Lasso or LMM, else the test's).
    """
    command = (
        f"{shlex.quote(python_exe)} -m genotex regress --preprocessed {data} --task-info "
        "metadata/task_info.json --out output/regress --force "
        f"--trait {shlex.quote(problem.trait)} "
        f"--condition {shlex.quote(problem.condition or 'None')}"
    )
    return command if model == "auto" else f"{command} --model {shlex.quote(model)}"


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
    commands += [regress_command(python_exe, data, problem) for problem in spec.problems]
    if spec.task == "e2e":
        commands += [
            f"rm -rf {shlex.quote(f'output/preprocess/{t}')}" for t in spec.given if t != spec.trait
        ]
    return commands


def _agent_tools(tools: str | None, python_exe: str, kind: str) -> list:
    """bash and python, and with `tools=genotex` genotex's MCP tools on the working folder
    (in `bwrap` and `podman`, a server process inside the sample's sandbox).
    """
    chosen: list = [bash(timeout=600), python(timeout=600)]
    if tools in (None, "", "none"):
        return chosen
    if tools != "genotex":
        raise GenotexError(f"tools must be genotex or none, not {tools!r}")
    if kind in ("bwrap", "podman"):
        return [*chosen, sandboxed_mcp_server(python_exe)]
    if kind == "local":
        return [*chosen, local_mcp_server(python_exe)]
    chosen.append(
        mcp_server_sandbox(
            name="genotex",
            command=python_exe,
            args=["-m", "genotex", "mcp", "--root", ".", "--write", "output"],
        )
    )
    return chosen


def _sample(
    bench: Benchmark, spec: SampleSpec, python_exe: str, kind: str, bound: SampleSandbox
) -> Sample:
    if kind in ("bwrap", "podman"):  # the inputs bound read-only, never copied
        files: dict[str, str] = {}
        binds = _bind_folders(dict(spec.files))
        guarded = _guarded(bench) if kind == "bwrap" else ()
        sandboxed = SampleSandbox(binds, limits=bound.limits, image=bound.image,
                                  guarded=guarded).to_metadata()  # fmt: skip
    else:
        files, sandboxed = {path: str(host) for path, host in spec.files.items()}, {}
    files["metadata/task_info.json"] = json.dumps(spec.task_info, indent=1)
    files[f"output/{WORKSPACE_NAME}"] = WORKSPACE_NOTE  # the answers here are the agent's own
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
            "task": spec.task,
            "raw": list(spec.raw),  # the condition traits to preprocess too (e2e, raw)
            "python": python_exe,
            METADATA_KEY: sandboxed,
        },
    )


def _task_info_slice(info: TaskInfo, specs: Sequence[SampleSpec]) -> dict[str, Any]:
    """task_info of the run's traits (whole) and of the traits they name as conditions (their
    genes only): a valid file that asks what the run asked.
    """
    asked = {s.trait for s in specs}
    named = {c for t in asked for c in info.conditions.get(t, ()) if c in info.related_genes}
    data: dict[str, Any] = {}
    for trait in sorted(asked | named):
        conditions = list(info.conditions.get(trait, ())) if trait in asked else []
        data[trait] = {"related_genes": list(info.genes_of(trait)), "conditions": conditions}
    return data


def _run_record(bench: Benchmark, specs: Sequence[SampleSpec], task: TaskName) -> dict[str, Any]:
    """What the log records of a run for its export: the task, version, plan and reference."""
    return {
        "genotex_task": task,
        "genotex_version": __version__,
        "root": str(bench.root),
        "reference": reference_manifest(bench.reference, bench.slice_files(specs)),
        "task_info": _task_info_slice(bench.task_info, specs),
        "traits": sorted({s.trait for s in specs}),
        "samples": [s.id for s in specs],
        "benchmark": benchmark_summary(bench.root),
    }


def _guarded(bench: Benchmark) -> tuple[str, ...]:
    """The reference, then the folders bwrap's import path must not show: the benchmark root
    and the log folder.
    """
    logs = Path(os.environ.get("INSPECT_LOG_DIR") or "logs").absolute()
    return (str(bench.reference), str(bench.root), str(logs))


def _check_import_path(bench: Benchmark, kind: str) -> None:
    """Under bwrap, refuse a Python import path that holds the reference, the benchmark root,
    the log folder, or a copy or link of the reference's files (an agent would read them
    through it); the samples' commands check it again (`SampleSandbox.guarded`).
    """
    if kind == "bwrap":
        reference, *held = _guarded(bench)
        problem = import_path_problem(Path(reference), [Path(h) for h in held])
        if problem is not None:
            raise GenotexError(problem)


def _make(task_name: TaskName) -> Callable[..., Task]:
    def build(
        root: str | None = None,
        *,
        reference: str | None = None,
        traits: str | list[str] | None = None,
        limit: int | None = None,
        sandbox: str | None = None,
        time_limit: int | None = 3600,
        message_limit: int | None = 200,
        tools: str | None = None,
        max_output_mb: int = DEFAULT_MAX_OUTPUT_MB,
        limits: str | None = None,
        image: str | None = None,
        tcga: TcgaSetting = "all",
        conditions: ConditionSetting = "raw",
    ) -> Task:
        arguments = dict(locals())  # the task's arguments, as given, for the log
        try:
            root, reference, wanted = checked_arguments(
                root, reference, traits, limit, sandbox, time_limit, message_limit,
                tools, max_output_mb, image, tcga, conditions,
            )  # fmt: skip
            bench = Benchmark(root, reference)
            specs = bench.samples(task_name, wanted, tcga=tcga, conditions=conditions)[
                : limit or None
            ]
            kind = choose_sandbox(sandbox, image)
            _check_import_path(bench, kind)
            try:
                bound = SampleSandbox(limits=SandboxLimits.parse(limits), image=image or "")
            except ValueError as exc:
                raise GenotexError(str(exc)) from None
            record = _run_record(bench, specs, task_name)
        except (GenotexError, OSError) as exc:  # one sentence, not Inspect's traceback
            raise PrerequisiteError(f"genotex/{task_name}: {exc}") from None
        in_image = kind in ("podman", "docker")
        python_exe = "python" if in_image else sys.executable  # the image's, or ours
        samples = [_sample(bench, s, python_exe, kind, bound) for s in specs]
        try:
            agent_tools = _agent_tools(tools, python_exe, kind)
        except (GenotexError, ImportError) as exc:
            raise PrerequisiteError(f"genotex/{task_name}: {exc}") from None
        return Task(
            dataset=MemoryDataset(samples, name=f"genotex-{task_name}"),
            solver=react(tools=agent_tools),
            scorer=genotex_scorer(
                str(bench.root), str(bench.reference), task_name, max_output_mb=max_output_mb
            ),
            metrics=[m for n, _, _ in VALUE_METRICS[task_name] for m in (pooled(n), stderr(n))],
            sandbox=inspect_sandbox(kind, image or default_image(), bound.limits),
            time_limit=time_limit,
            message_limit=message_limit,
            # a sample that errors is scored (as what it left: nothing), not left out
            score_on_error=True,
            metadata={**record, "arguments": arguments, "sandbox": kind},
        )

    build.__name__ = task_name
    build.__doc__ = f"GenoTEX's {task_name} task on a benchmark root (README: Running an agent)."
    return build


preprocess = task(name="preprocess")(_make("preprocess"))
analysis = task(name="analysis")(_make("analysis"))
e2e = task(name="e2e")(_make("e2e"))

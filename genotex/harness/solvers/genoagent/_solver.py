"""`genotex/genoagent`: the paper's GenoAgent as an Inspect solver over genotex's tasks.

The Project Manager is this code (as published, it makes no model call): for a sample it
hands each of the trait's GEO cohorts, then its TCGA folders, to the Data Engineer (with
the Domain Expert, the Code Reviewer and the planner), each in a fresh state of the
sample's kernel; then each problem to the Statistician. What the team did is in the
sample's store under `genoagent` (per workflow: its steps, their reviews, why one
stopped), its calls per role in the log.
"""

from __future__ import annotations

import contextlib
import inspect
import shlex
from collections.abc import Mapping, Sequence

import anyio
from inspect_ai.model import get_model, model_roles
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.util import sandbox

from ...runs._scorer import PARTIAL_KEY
from ...runs._tasks import answer_path, sample_problems
from ...sandboxes._kernel import Kernel
from .._arguments import (
    check_boolean,
    check_choice,
    check_number,
    check_roles,
    check_unknown,
    check_whole,
)
from ._library import LIBRARIES, library
from ._team import Team, TeamOptions, WorkflowRecord
from ._time import reasoning_on, scale_of
from ._units import Unit, units

__all__ = ["STORE_KEY", "genoagent"]

#: Where the team's record of a sample goes in its store.
STORE_KEY = "genoagent"
#: The team's scratch folder in the sample's working folder (recipes, the staged data).
SCRATCH = ".genoagent"


#: The names a step sets, shown as what they will be rather than their value at the start
#: (a literal model reads `COHORT_DIR = None` as "no folder", after one was chosen).
SET_BY_A_STEP = {
    "COHORT_DIR": "the Xena folder the cohort_selection step chose (None until it runs, "
    "and after it when no folder is TRAIT's)",
}


#: What the statistician's DATA_DIR holds, said beside it: the engineers wrote under
#: output/preprocess, and a literal model must not take another folder for other data.
DATA_DIR_SAYS = {
    "e2e": "a copy of the team's preprocessed tables (what the engineers wrote under "
    "output/preprocess), with the tables given for the other traits beside them",
    "analysis": "the preprocessed tables this run is given (the benchmark's)",
}


def _preamble(
    names: Mapping[str, object], says: Mapping[str, str] | None = None
) -> tuple[str, str]:
    """The kernel's preamble of a workflow (its names, and the scratch folder made) and the
    names as shown, each with what `says` (or `SET_BY_A_STEP`, for a name a step sets) says
    of it.
    """
    code = "\n".join(f"{key} = {value!r}" for key, value in names.items())
    shown = "\n".join(
        f"{key}  # {SET_BY_A_STEP[key]}"
        if value is None and key in SET_BY_A_STEP
        else f"{key} = {value!r}" + (f"  # {says[key]}" if says and key in says else "")
        for key, value in names.items()
    )
    return f"{code}\nimport os\nos.makedirs({SCRATCH!r}, exist_ok=True)\n", shown


async def _folders(pattern: str) -> list[str]:
    """The sample's folders matching a shell pattern under its working folder, sorted."""
    listed = await sandbox().exec(
        ["sh", "-c", f'for d in {pattern}; do [ -d "$d" ] && printf \'%s\\n\' "$d"; done; true'],
        timeout=120,
    )
    return sorted(line for line in listed.stdout.splitlines() if line.strip())


class ProjectManager:
    """Hands a sample's work to the team: cohorts, then problems; checks what was written."""

    def __init__(self, state: TaskState, options: TeamOptions) -> None:
        metadata = state.metadata or {}
        self.state, self.options = state, options
        self.task = str(metadata.get("task"))
        self.trait = str(metadata.get("trait"))
        self.python = str(metadata.get("python") or "python3")
        self.problems = sample_problems(state)
        self.raw = [str(t) for t in metadata.get("raw") or []]  # conditions to preprocess too
        models = {r: get_model(role=r, default=get_model()) for r in ROLES}
        played = {r: str(m) for r, m in models.items()}
        thinking = {str(m) for m in models.values() if reasoning_on(m.config)}
        self.time_scale = scale_of(sorted(set(played.values())), options.time_scale,
                                   reasoning=thinking)  # fmt: skip
        #: each role's own factor (the budget is the largest: the team waits for its slowest)
        self.role_scales = {
            r: scale_of([m], options.time_scale, reasoning=thinking) for r, m in played.items()
        }
        self.team = Team(options, options.cohort_seconds * self.time_scale)
        self.records: list[WorkflowRecord] = []
        #: the sample's kernel: its template holds the library; each workflow a fresh fork
        self.kernel: Kernel | None = None

    async def workflow(
        self,
        steps: Sequence[Unit],
        title: str,
        names: Mapping[str, object],
        says: Mapping[str, str] | None = None,
    ) -> None:
        """One workflow in a fresh state of the sample's kernel (`Kernel.fresh`: a new fork of
        its template, every process an earlier workflow's steps started ended).
        """
        preamble, shown = _preamble(names, says)
        if self.kernel is None:
            code = library(self.options.library).preamble(
                batch_effect_correction=self.options.batch_effect_correction
            )
            self.kernel = Kernel(sandbox(), self.python, library=code, preamble=preamble,
                                 output_chars=self.options.output_chars)  # fmt: skip
        self.kernel.preamble = preamble
        record = await self.team.run_workflow(self.kernel, steps, title, shown)
        self.records.append(record)
        self._note()

    async def stop(self) -> None:
        """The sample's kernel stopped (before its output is read), whatever happened."""
        if self.kernel is not None:
            with anyio.CancelScope(shield=True):
                await self.kernel.stop()

    async def preprocess(self) -> None:
        """Each GEO cohort of the trait (then of each condition trait given raw), then the
        TCGA workflow of each (choosing among the Xena folders given), each in a fresh state.
        """
        xena = await _folders("input/TCGA/*")
        for trait in (self.trait, *self.raw):
            common: dict[str, object] = {"TRAIT": trait, "OUT_DIR": "output/preprocess",
                      "SYNONYMS_FILE": "metadata/gene_synonym.json"}  # fmt: skip
            for folder in await _folders(f"input/GEO/{shlex.quote(trait)}/*"):
                cohort = folder.rsplit("/", 1)[-1]
                names = {**common, "COHORT": cohort, "COHORT_DIR": folder}
                if self.options.library == "genotex":  # its proposer writes a recipe file
                    names["RECIPE_FILE"] = f"{SCRATCH}/recipes/{trait}/{cohort}.toml"
                await self.workflow(units("geo", self.options.library), f"{trait}/{cohort}", names)
            if xena:
                names = {**common, "COHORT": "Xena", "XENA_DIRS": xena, "COHORT_DIR": None}
                await self.workflow(units("tcga", self.options.library), f"{trait}/TCGA", names)

    async def analyse(self) -> None:
        """Each problem by the Statistician, each in a fresh state."""
        data = "given/preprocess" if self.task == "analysis" else f"{SCRATCH}/preprocess"
        if self.task == "e2e":  # the team's own data, and the given traits' beside it
            await sandbox().exec(["sh", "-c", (
                f"mkdir -p {data} && (cp -r output/preprocess/. {data}/ 2>/dev/null; "
                f"cp -rn given/preprocess/. {data}/ 2>/dev/null; true)"
            )], timeout=600)  # fmt: skip
        for problem in self.problems:
            condition = problem.condition
            kind = "two_step"
            if condition is None or condition in ("Age", "Gender"):
                kind = "unconditional" if condition is None else "conditional_one_step"
            names: dict[str, object] = {
                "TRAIT": problem.trait, "CONDITION": condition, "PROBLEM": problem.key,
                "DATA_DIR": data, "TASK_INFO_FILE": "metadata/task_info.json",
                "OUT_DIR": "output/regress", "OUT_FILE": answer_path(problem),
                "MODEL": "auto" if self.options.batch_effect_correction else "lasso",
            }  # fmt: skip
            only = tuple(u for u in units("statistics", self.options.library) if u.name == kind)
            says = {"DATA_DIR": DATA_DIR_SAYS.get(self.task, DATA_DIR_SAYS["analysis"])}
            await self.workflow(only, f"{problem.key} · statistics", names, says)

    def required(self) -> list[str]:
        """The files a sample must hold at the end (else it fails, with the reasons)."""
        needed = []
        if self.task in ("preprocess", "e2e"):
            needed.append(f"output/preprocess/{self.trait}/cohort_info.json")
        if self.task in ("analysis", "e2e"):
            needed += [answer_path(p) for p in self.problems]
        return needed

    async def check_outputs(self) -> None:
        """Each required output the team left missing is noted with why (the workflows
        abandoned, the steps that failed) in the score's `partial_failures`: the sample is
        scored file by file, a missing answer scoring 0 on its own, never a sample error.
        """
        missing = []
        for path in self.required():
            try:
                await sandbox().read_file(path, text=False)
            except (FileNotFoundError, IsADirectoryError, PermissionError):
                missing.append(path)
        if missing:
            why = [r.abandoned for r in self.records if r.abandoned]
            why += [f"{r.name}: {s['step']} failed" for r in self.records for s in r.steps
                    if not s["ok"]]  # fmt: skip
            noted = list(self.state.store.get(PARTIAL_KEY, []))
            for path in missing:
                said = f"GenoAgent left no {path}" + (f" ({'; '.join(why[:5])})" if why else "")
                noted.append({"missing": path, "said": said[:2000]})
            self.state.store.set(PARTIAL_KEY, noted)

    def _note(self) -> None:
        self.state.store.set(STORE_KEY, {
            "workflows": [r.to_dict() for r in self.records],
            "calls": dict(sorted(self.team.calls.items())),
            "options": vars(self.options),
            "budget_seconds": self.team.budget, "time_scale": self.time_scale,
            "role_time_scale": self.role_scales,
        })  # fmt: skip


#: The model roles GenoAgent plays (each may be given its own model with `--model-role`).
ROLES = ("code_reviewer", "data_engineer", "domain_expert", "planner", "statistician")


def _options(**given: object) -> TeamOptions:
    """The team's options, each checked (one sentence each, before any sample runs)."""
    name = "genoagent"
    check_whole(name, "review_rounds", given["review_rounds"], 0, 10)
    check_whole(name, "max_retract", given["max_retract"], 0, 10)
    check_number(name, "cohort_seconds", given["cohort_seconds"], 0, 7 * 24 * 3600)
    if given["time_scale"] != "auto":
        check_number(name, "time_scale", given["time_scale"], 0, 100)
    check_whole(name, "output_chars", given["output_chars"], 200, 1_000_000)
    for flag in ("planning", "domain_expert", "batch_effect_correction", "reuse_code"):
        check_boolean(name, flag, given[flag])
    check_choice(name, "library", given["library"], LIBRARIES)
    return TeamOptions(**given)  # type: ignore[arg-type]


@solver(name="genoagent")
def genoagent(
    *,
    planning: bool = True,
    max_retract: int = 1,
    domain_expert: bool = True,
    review_rounds: int = 2,
    batch_effect_correction: bool = True,
    cohort_seconds: float = 420,
    time_scale: float | str = "auto",
    output_chars: int = 8000,
    reuse_code: bool = False,
    library: str = "paper",
    **unknown: object,
) -> Solver:
    """GenoAgent (the paper's section 4): a Project Manager in code and five model roles.

    The published ablations are arguments: `planning=false` ("No planning"),
    `domain_expert=false` ("No Domain Expert"), `review_rounds=1` or `0` ("Review Round=1",
    "No reviewer"), `batch_effect_correction=false` (Table 3's "No BEC"). `max_retract` is how
    often the planner may go back in a workflow (the paper's 1). A workflow's budget is
    `cohort_seconds` (the paper's 420) times `time_scale` ("auto": by the models, from
    `time_scale.toml`, e.g. 3 for a reasoning model; or a number). `reuse_code=true` shows a
    step's writer the code approved for it in the sample's earlier cohort. `library` is what
    the kernel holds: `paper` (the paper's function library, `genotex.agentlib`: the agents
    decide) or `genotex` (genotex's one-call pipelines: a row of its own, not the paper's).
    """
    check_unknown("genoagent", unknown, [*inspect.signature(genoagent).parameters][:-1])
    check_roles("genoagent", model_roles(), ROLES)
    options = _options(planning=planning, max_retract=max_retract, domain_expert=domain_expert,
                       review_rounds=review_rounds,
                       batch_effect_correction=batch_effect_correction,
                       cohort_seconds=cohort_seconds, time_scale=time_scale,
                       output_chars=output_chars, reuse_code=reuse_code,
                       library=library)  # fmt: skip

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        check_roles("genoagent", model_roles(), ROLES)  # roles given after the solver was made
        manager = ProjectManager(state, options)
        manager._note()
        try:
            if manager.task in ("preprocess", "e2e"):
                await manager.preprocess()
            if manager.task in ("analysis", "e2e"):
                await manager.analyse()
        finally:
            await manager.stop()
        with contextlib.suppress(Exception):
            await sandbox().exec(["rm", "-rf", SCRATCH], timeout=120)
        await manager.check_outputs()
        return state

    return solve

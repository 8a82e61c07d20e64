"""The parts of a diagnosis that need no re-analysis: scores, choices and the findings in the files.

`collect` walks the trees once: each problem's F1 and cohort choices (the
evaluator's own rules), each cohort's record and tables. The substitution runs
that split a problem's loss into stages are made by the caller (they need the
regression stage) and handed to `finish`.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...core import (
    CohortInfoReader,
    GuardedTree,
    ProblemId,
    TableCache,
    TaskInfo,
    gene_selection_scores,
    ordered_map,
    selected_cohorts,
)
from .._analysis_task import evaluate_analysis, reference_results
from .._common import Findings, Progress, no_progress
from .._selection_task import evaluate_selection
from .._statistics import DEFAULT_BOOTSTRAP, BootstrapSettings
from ._attribution import MATERIAL, problem_diagnosis, stage_averages, stage_shares
from ._cohort import CohortTask, check_record, cohort_runner
from ._model import Diagnosis, DiagnosisFinding, ProblemDiagnosis

__all__ = ["Collected", "collect", "finish"]


@dataclass(frozen=True)
class Collected:
    """Each scored problem's agent F1 and choices, and every finding in the files."""

    f1: Mapping[str, float]  # problem key -> F1 of the agent's answer
    agent_choice: Mapping[str, tuple[str, ...]]
    reference_choice: Mapping[str, tuple[str, ...]]
    problems: tuple[ProblemId, ...]
    findings: tuple[DiagnosisFinding, ...]
    #: the prediction has no preprocessed data: it was given the reference's (analysis only)
    given_data: bool = False

    def lost(self) -> list[ProblemId]:
        return [p for p in self.problems if self.f1[p.key] < 100.0]


def _has_files(folder: Path) -> bool:
    """Whether a folder holds any file (an exported analysis-only run has an empty one)."""
    return os.path.isdir(folder) and any(p.is_file() for p in folder.rglob("*"))


def _scores(pred: GuardedTree, ref: GuardedTree, task_info: TaskInfo) -> dict[str, float]:
    """F1 of every reference result file the task_info asks for (0 when the agent has none)."""
    known = {p.key for p in task_info.problems()}
    out = {}
    for trait, _, condition in reference_results(ref):
        key = ProblemId(trait, condition).key
        if key in known:
            out[key] = 0.0
    for score in evaluate_analysis(pred, ref, findings=Findings()):
        if score.problem.key in out:
            out[score.problem.key] = score.f1 if score.f1 == score.f1 else 0.0
    return out


def _record_findings(
    pred: GuardedTree, ref: GuardedTree, traits: Iterable[str]
) -> tuple[list[DiagnosisFinding], list[tuple[str, str]]]:
    """cohort_usability of every cohort either tree records; the (trait, cohort)s to check."""
    pred_reader = CohortInfoReader(pred, lambda *_: None)
    ref_reader = CohortInfoReader(ref, lambda *_: None, unreadable_as_missing=True)
    found, cohorts = [], []
    for trait in traits:
        theirs = ref_reader.read(trait)
        if theirs is None:
            continue
        mine = pred_reader.read(trait) or {}
        file = pred.relative(pred_reader.path(trait))
        for cohort in dict.fromkeys([*theirs, *mine]):
            found += check_record(trait, cohort, mine.get(cohort), theirs.get(cohort), file)
            cohorts.append((trait, cohort))
    return found, cohorts


def collect(
    pred: GuardedTree,
    ref: GuardedTree,
    task_info: TaskInfo,
    *,
    synonyms: Mapping[str, str] | None = None,
    other_rows: Callable[[str, str], Mapping[str, Mapping[object, float]]] | None = None,
    jobs: int = 1,
    scheduler: str | None = None,
    progress: Progress | None = None,
    cache: TableCache | None = None,
    given_data: bool | None = None,
) -> Collected:
    """Scores, choices and findings of the prediction against the reference.

    `given_data`: whether the run was given the reference's preprocessed data (the analysis
    task: it used the reference's cohorts, and only its answers are diagnosed); None takes a
    prediction with nothing in `preprocess/` to be such a run. False (an end-to-end run):
    a missing `preprocess/` is the agent's, its cohorts none, as `eval` scores it.
    """
    progress = progress or no_progress
    f1 = _scores(pred, ref, task_info)
    _, selection = evaluate_selection(pred, ref, task_info, findings=Findings())
    theirs = {s.problem.key: selected_cohorts(s.reference_choice) for s in selection}
    if given_data is None:
        given_data = not _has_files(pred.path("preprocess"))
    if given_data:
        problems = tuple(p for p in task_info.problems() if p.key in f1)
        return Collected(f1, dict(theirs), theirs, problems, (), given_data=True)
    agent = {s.problem.key: selected_cohorts(s.predicted_choice) for s in selection}
    found, cohorts = _record_findings(pred, ref, task_info.traits)
    tasks = [
        CohortTask(
            pred,
            ref,
            trait,
            cohort,
            other_rows=other_rows(trait, cohort) if other_rows else None,
            cache=cache,
        )
        for trait, cohort in cohorts
    ]
    results = ordered_map(cohort_runner(synonyms), tasks, jobs, scheduler=scheduler)
    for cohort_findings in progress(results, "diagnosis: cohorts", len(tasks)):
        found += cohort_findings
    for s in selection:
        if s.accuracy < 100 and s.problem.key in f1:
            found.append(_selection_finding(pred, s.problem, agent, theirs))
    problems = tuple(p for p in task_info.problems() if p.key in f1)
    return Collected(f1, agent, theirs, problems, tuple(found))


def _selection_finding(
    pred: GuardedTree,
    problem: ProblemId,
    agent: Mapping[str, tuple[str, ...]],
    theirs: Mapping[str, tuple[str, ...]],
) -> DiagnosisFinding:
    mine, ref = agent[problem.key], theirs[problem.key]
    said = " + ".join(mine) or "no cohort"
    file = pred.relative(pred.path("preprocess", problem.trait, "cohort_info.json"))
    message = f"{problem.key} answered from {said}; the reference's choice is " + (
        " + ".join(ref) or "no cohort"
    )
    return DiagnosisFinding("selection", file, message, problem.trait, problem=problem.key)


def _stage_finding(
    problem: ProblemId, stage: str, f1: Mapping[str, float], mode: str, file: str
) -> DiagnosisFinding:
    """The finding that names a problem-level stage's loss (analysis or floor) with its F1s."""
    if stage == "analysis":
        message = (
            f"the agent's genes score F1 {f1['agent']:.1f}; the {mode} pipeline on its own "
            f"data scores {f1['own_data']:.1f}"
        )
    else:
        message = (
            f"the {mode} pipeline on the reference's data and cohorts scores F1 "
            f"{f1['ref_cohorts']:.1f}: the floor of the substitutes"
        )
    numbers = {k: float(v) for k, v in f1.items()}
    return DiagnosisFinding(stage, file, message, problem.trait, problem=problem.key,
                            numbers=numbers)  # fmt: skip


#: How far below the substitutes' own agreement (the pipeline on the reference's data against
#: the reference's genes) the agent's genes may agree with its own data's answer, in F1 points.
AGREEMENT_MARGIN = 10.0


def _own_analysis_finding(
    problem: ProblemId,
    answers: tuple[tuple[str, ...], tuple[str, ...]],
    f1: Mapping[str, float],
    mode: str,
    file: str,
) -> DiagnosisFinding | None:
    """An `analysis` finding when the agent's genes are not what its own data give, though
    no analysis share shows it (its data were damaged too, so the pipeline on them scores no
    better): their agreement is well below the substitutes' agreement on the reference's data.
    """
    agent, own = answers
    agreement = float(gene_selection_scores(list(agent), list(own))["f1"])
    expected = float(f1["ref_cohorts"])
    if agreement != agreement or agreement >= expected - AGREEMENT_MARGIN:
        return None
    message = (
        f"the agent's genes are not what its own data give: F1 {agreement:.1f} against the "
        f"{mode} pipeline's answer on them (on the reference's data that pipeline agrees with "
        f"the reference to F1 {expected:.1f})"
    )
    numbers = {"agreement_f1": agreement, "expected_f1": expected}
    return DiagnosisFinding("analysis", file, message, problem.trait, problem=problem.key,
                            numbers=numbers)  # fmt: skip


def finish(
    collected: Collected,
    substitutes: Mapping[str, Mapping[str, float]],
    notes: Mapping[str, Sequence[str]],
    *,
    run: Mapping[str, Any],
    regress_file: Callable[[ProblemId], str],
    data_findings: Callable[[ProblemId, tuple[str, ...]], list[DiagnosisFinding]],
    bootstrap: BootstrapSettings = DEFAULT_BOOTSTRAP,
    own_answers: Mapping[str, tuple[tuple[str, ...], tuple[str, ...]]] | None = None,
    reference_causes: Mapping[str, Sequence[DiagnosisFinding]] | None = None,
) -> Diagnosis:
    """Attribute each lost problem's points; problems that lost nothing get zero shares.

    `substitutes[key]` holds the F1 of "own_data", "ref_data" and "ref_cohorts";
    `data_findings(problem, cohorts)` explains a preprocessing loss no class named;
    `own_answers[key]` is (the agent's genes, the pipeline's genes on the agent's own
    data), for an `analysis` finding that needs no share (`_own_analysis_finding`);
    `reference_causes[key]` are findings on the reference's own answer (`REFERENCE_CAUSES`):
    they name a lost problem's cause in place of the bare floor.
    """
    findings = list(collected.findings)
    problems: list[ProblemDiagnosis] = []
    for problem in collected.problems:
        agent = collected.f1[problem.key]
        f1 = {"agent": agent, **substitutes.get(problem.key, {})}
        for key in ("own_data", "ref_data", "ref_cohorts"):
            f1.setdefault(key, agent)
        shares = stage_shares(f1)
        causes = list((reference_causes or {}).get(problem.key, ()))
        findings += causes
        for stage in ("analysis", "floor"):
            if shares[stage] >= MATERIAL and not (stage == "floor" and causes):
                findings.append(_stage_finding(problem, stage, f1, run.get("mode", "?"),
                                               regress_file(problem)))  # fmt: skip
        # only when the analysis share is about nil: a share well below 0 means the agent's
        # analysis beat the substitute's (the reference pipeline's answer, say, against the
        # standard mode's), which is nothing to find against it
        if abs(shares["analysis"]) < MATERIAL and problem.key in (own_answers or {}):
            extra = _own_analysis_finding(
                problem, (own_answers or {})[problem.key], f1, str(run.get("mode", "?")),
                regress_file(problem),
            )  # fmt: skip
            findings += [extra] if extra is not None else []
        agent_cohorts = collected.agent_choice.get(problem.key, ())
        if shares["preprocessing"] >= MATERIAL and not any(
            f.stage == "preprocessing" and f.cohort in agent_cohorts and f.problem is None
            for f in findings
        ):
            findings += data_findings(problem, agent_cohorts)
        problems.append(
            problem_diagnosis(
                problem,
                f1,
                agent_cohorts,
                collected.reference_choice.get(problem.key, ()),
                findings,
                notes=notes.get(problem.key, ()),
            )
        )
    return Diagnosis(tuple(problems), tuple(findings), stage_averages(problems, bootstrap), run)

"""`genotex diagnose`: where a submission lost its points, by stage, with the evidence.

The findings in the files come from `genotex.evaluation`'s diagnosis; this
workflow adds what needs the regression stage: for each problem that lost
points, the standardized analysis is run again on the agent's own data, on the
reference's data of the agent's cohorts and on the reference's data and
cohorts (see `genotex.evaluation.stage_shares`).
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from .._version import __version__
from ..core import (
    DEFAULT_MAX_FILE_MB,
    PREPROCESSING_METRICS,
    GenotexError,
    GuardedTree,
    Mode,
    ProblemId,
    RejectedFile,
    ResultFile,
    TableCache,
    TaskInfo,
    check_mode,
    gene_selection_scores,
    ordered_map,
    regress_file_name,
    require_dask,
)
from ..evaluation import (
    DEFAULT_BOOTSTRAP,
    BootstrapSettings,
    Collected,
    Diagnosis,
    DiagnosisFinding,
    Progress,
    check_output_trees,
    collect_findings,
    finish_diagnosis,
    no_progress,
    score_csv_pair,
)
from ._characteristics import characteristics_rows
from ._diagnose_causes import Cause, cause_findings, reference_causes

__all__ = ["diagnose"]


@dataclass(frozen=True)
class _Substitute:
    """One re-analysis: a problem on a preprocess folder's data of the given cohorts."""

    key: str
    data_dir: str
    cohorts: tuple[str, ...]
    trusted: bool = True  # the reference's data: read through the table cache


#: A re-analysis's answer: the ranked genes, or why the pipeline gave none (a sentence).
_Answer = tuple[str, ...] | str


def _genes(
    task: _Substitute, *, task_info: TaskInfo, mode: Mode, cache: TableCache | None
) -> tuple[_Answer, tuple[Cause, ...]]:
    """The pipeline's ranked genes (or why it gave none), and on the reference's own data and
    cohorts, what makes the reference's answer a poor key (`_reference_causes`).
    """
    from ..regression import ProblemFailed, ProblemSkipped, analyse, load_problem, one_blas_thread

    problem = ProblemId.from_key(task.key.split("#")[0])
    try:
        with one_blas_thread(reference=mode == "reference"):
            data = load_problem(task.data_dir, problem, task_info, cohorts=task.cohorts,
                                cache=cache if task.trusted else None)  # fmt: skip
            result = analyse(data, task_info, mode=mode)
        causes: tuple[Cause, ...] = ()
        if task.key.endswith("#ref_cohorts"):
            causes = reference_causes(result, data, task_info, mode)
        return tuple(g for g, _ in result.genes), causes
    except (ProblemFailed, ProblemSkipped, GenotexError) as exc:
        return str(exc), ()


def _checked(pred: GuardedTree, problem: ProblemId, cohorts: tuple[str, ...]) -> str | None:
    """Why the agent's linked tables cannot be handed to the pipeline (None: they can)."""
    for trait, cohort in _pairs(problem, cohorts):
        path = pred.path("preprocess", trait, f"{cohort}.csv")
        if not pred.exists(path):
            return f"{pred.relative(path)}: the agent has no such linked table"
        try:
            pred.resolve(path)
        except RejectedFile as exc:
            return f"{exc.relative}: {exc.reason}"
    return None


def _plan(
    pred: GuardedTree, ref: GuardedTree, collected: Collected, problems: list[ProblemId]
) -> tuple[list[_Substitute], dict[str, list[str]], dict[str, dict[str, float | str]]]:
    """The re-analyses to run, the notes, and the F1s known without one.

    A known F1 is a number (no data: 0) or the name of the substitute it equals.
    """
    tasks: list[_Substitute] = []
    notes: dict[str, list[str]] = {}
    known: dict[str, dict[str, float | str]] = {}
    ref_data_dir = str(ref.given_root / "preprocess")
    for problem in problems:
        key = problem.key
        mine, theirs = collected.agent_choice.get(key, ()), collected.reference_choice.get(key, ())
        notes[key], known[key] = [], {}
        if theirs:
            tasks.append(_Substitute(f"{key}#ref_cohorts", ref_data_dir, theirs))
        else:
            known[key]["ref_cohorts"] = 0.0
            notes[key].append("the reference selects no cohort")
        if collected.given_data:  # an analysis-only run: its data were the reference's
            known[key].update(own_data="ref_cohorts", ref_data="ref_cohorts")
            notes[key].append("the prediction has no preprocessed data: it used the reference's")
            continue
        if not mine:
            known[key].update(own_data=0.0, ref_data=0.0)
            notes[key].append("the agent selects no cohort: nothing to re-analyse")
            continue
        refused = _checked(pred, problem, mine)
        if refused:
            known[key]["own_data"] = 0.0
            notes[key].append(refused)
        else:
            own = str(pred.given_root / "preprocess")
            tasks.append(_Substitute(f"{key}#own_data", own, mine, trusted=False))
        if mine == theirs:
            known[key]["ref_data"] = "ref_cohorts"
        elif all(ref.path("preprocess", t, f"{c}.csv").is_file() for t, c in _pairs(problem, mine)):
            tasks.append(_Substitute(f"{key}#ref_data", ref_data_dir, mine))
        else:
            known[key]["ref_data"] = "own_data"
            notes[key].append(
                "the reference has no linked table of the agent's cohorts: "
                "their data's share is counted under selection"
            )
    return tasks, notes, known


def _reanalysed(
    tasks: list[_Substitute], done: Iterable[tuple[_Answer, tuple[Cause, ...]]]
) -> tuple[list[_Answer], dict[str, tuple[Cause, ...]]]:
    """The re-analyses' answers in order, and each problem's reference causes (if any)."""
    answers, causes = [], {}
    for task, (answer, found) in zip(tasks, done, strict=True):
        answers.append(answer)
        if found:
            causes[task.key.split("#")[0]] = found
    return answers, causes


def _pairs(problem: ProblemId, cohorts: tuple[str, ...]) -> list[tuple[str, str]]:
    traits = [problem.trait, *([str(problem.condition)] if len(cohorts) > 1 else [])]
    return list(zip(traits, cohorts, strict=True))


def _substitute_scores(
    tasks: list[_Substitute],
    answers: list[tuple[str, ...] | str],
    reference_genes: Mapping[str, tuple[str, ...]],
    notes: dict[str, list[str]],
    known: dict[str, dict[str, float | str]],
) -> dict[str, dict[str, float]]:
    """Each problem's F1 of own_data, ref_data and ref_cohorts."""
    f1: dict[str, dict[str, float]] = {key: {} for key in known}
    for task, answer in zip(tasks, answers, strict=True):
        key, which = task.key.split("#")
        if isinstance(answer, str):
            notes[key].append(f"{which}: the pipeline gave no answer ({answer})")
            f1[key][which] = 0.0
        else:
            f1[key][which] = gene_selection_scores(answer, reference_genes[key])["f1"]
    for key, values in known.items():
        for which, value in values.items():
            if isinstance(value, float):
                f1[key][which] = value
        for which, value in values.items():
            if isinstance(value, str):
                f1[key][which] = f1[key][value]
    return f1


def _own_answers(
    pred: GuardedTree, tasks: list[_Substitute], answers: list[tuple[str, ...] | str]
) -> dict[str, tuple[tuple[str, ...], tuple[str, ...]]]:
    """Each re-analysed problem's (agent's genes, the pipeline's genes on the agent's own
    data), where both are known (an unreadable result file of the agent's is left out).
    """
    out = {}
    for task, answer in zip(tasks, answers, strict=True):
        key, which = task.key.split("#")
        if which != "own_data" or isinstance(answer, str):
            continue
        problem = ProblemId.from_key(key)
        path = pred.path("regress", problem.trait, regress_file_name(problem.condition))
        try:
            agent = ResultFile.read(pred.resolve(path)).genes
        except (GenotexError, RejectedFile, OSError):
            continue
        out[key] = (tuple(agent), answer)
    return out


def _reference_genes(ref: GuardedTree, problems: list[ProblemId]) -> dict[str, tuple[str, ...]]:
    out = {}
    for problem in problems:
        path = ref.path("regress", problem.trait, regress_file_name(problem.condition))
        out[problem.key] = ResultFile.read(path).genes
    return out


def _data_findings(
    pred: GuardedTree, ref: GuardedTree
) -> Callable[[ProblemId, tuple[str, ...]], list[DiagnosisFinding]]:
    """A `data_differ` finding per linked table of the agent's cohorts, with the evaluator's
    similarity numbers: what explains a preprocessing loss that no error class named.
    """

    def explain(problem: ProblemId, cohorts: tuple[str, ...]) -> list[DiagnosisFinding]:
        found = []
        for trait, cohort in _pairs(problem, cohorts):
            # the evaluator's own scoring of the pair, which reads both under its guards
            score, _ = score_csv_pair(pred, ref, "linked", trait, f"{cohort}.csv")
            if score is None or score.status != "ok":
                continue  # missing or unreadable: a finding of its own already says so
            numbers = {m: getattr(score, m) for m in PREPROCESSING_METRICS}
            path = pred.path("preprocess", trait, f"{cohort}.csv")
            message = (
                "the linked data differ from the reference's: attribute Jaccard "
                f"{numbers['attributes_jaccard']:.2f}, sample Jaccard "
                f"{numbers['samples_jaccard']:.2f}, feature r {numbers['feature_correlation']:.2f}"
            )
            found.append(DiagnosisFinding("data_differ", pred.relative(path), message, trait,
                                          cohort, numbers=numbers))  # fmt: skip
        return found

    return explain


def diagnose(
    pred_dir: str | Path,
    ref_dir: str | Path,
    task_info: TaskInfo | str | Path,
    *,
    mode: Mode = "standard",
    jobs: int = 1,
    scheduler: str | None = None,
    synonyms: Mapping[str, str] | None = None,
    max_file_mb: float = DEFAULT_MAX_FILE_MB,
    bootstrap: BootstrapSettings = DEFAULT_BOOTSTRAP,
    progress: Progress | None = None,
    problems: Iterable[str] | None = None,
    cache: TableCache | None = None,
    input_dir: str | Path | None = None,
    traits: Iterable[str] = (),
    given_data: bool | None = None,
    reached_pipeline: Sequence[str] = (),
) -> Diagnosis:
    """Where a prediction `output/` tree lost its points against a reference one.

    Parameters
    ----------
    pred_dir, ref_dir, task_info
        As `genotex.evaluate` takes them.
    mode
        The pipeline that makes the substitutes: "standard" (fast, the default) or
        "reference" (the published pipeline; its floor is 0 on one BLAS thread).
    jobs, scheduler
        Worker processes, or a Dask scheduler's address, for the cohorts' checks
        and the re-analyses. The diagnosis is the same either way.
    synonyms
        `gene_synonym.json`'s mapping: labels that are synonyms of reference
        symbols are then named as such.
    cache
        Where the reference's parsed tables are kept (`TableCache`), as in
        `genotex eval`; None parses them. The diagnosis is the same either way.
    input_dir
        The benchmark's `input/` folder: a trait taken from another of a GEO
        cohort's characteristics rows is then named by that row.
    problems
        The keys of the problems to diagnose (default: every problem of task_info
        the reference answers), e.g. the problems an agent run was asked.
    traits
        Only these traits (their problems and cohorts), as `genotex eval --trait`: a
        one-trait run is not diagnosed as failing every other trait.
    given_data
        Whether the run was given the reference's preprocessed data (the analysis task);
        None infers it from an empty `preprocess/`. False for an end-to-end run: its
        missing preprocessing costs selection and preprocessing, as `eval` scores it.
    reached_pipeline
        The agent run's steps that called genotex's own pipeline (its export's
        `run.harness.reached_pipeline`): kept in the diagnosis's run and said first, as
        the run then measured genotex there, not the model.

    Returns
    -------
    Diagnosis
        The findings (error classes with evidence), each problem's F1 under each
        substitution and its shares by stage, and the stages' averages.
    """
    progress = progress or no_progress
    started = time.time()
    mode = check_mode(mode)
    require_dask(scheduler)  # before any work
    ref_path, pred_path = check_output_trees(Path(ref_dir), Path(pred_dir))
    if not isinstance(task_info, TaskInfo):
        task_info = TaskInfo.read(task_info)
    task_info = task_info.restricted_to(asked) if (asked := tuple(traits)) else task_info
    pred = GuardedTree.untrusted(pred_path, max_file_mb=max_file_mb)
    ref = GuardedTree.trusted(ref_path)
    collected = collect_findings(
        pred,
        ref,
        task_info,
        synonyms=synonyms,
        jobs=jobs,
        scheduler=scheduler,
        progress=progress,
        cache=cache,
        other_rows=characteristics_rows(None if input_dir is None else Path(input_dir)),
        given_data=given_data,
    )
    if problems is not None:
        keep = set(problems)
        collected = replace(
            collected, problems=tuple(p for p in collected.problems if p.key in keep)
        )
    lost = collected.lost()
    tasks, notes, known = _plan(pred, ref, collected, lost)
    runner = functools.partial(_genes, task_info=task_info, mode=mode, cache=cache)
    answers, causes = _reanalysed(tasks, progress(
        ordered_map(runner, tasks, jobs, scheduler=scheduler), "diagnosis: re-analyses",
        len(tasks)))  # fmt: skip
    scores = _substitute_scores(tasks, answers, _reference_genes(ref, lost), notes, known)
    run = {
        "genotex_version": __version__,
        "prediction": str(pred_dir),
        "reference": str(ref_dir),
        "mode": mode,
        "re_analyses": len(tasks),
        "jobs": None if scheduler else jobs,
        "scheduler": scheduler,
        "seconds": round(time.time() - started, 3),
    } | ({"reached_pipeline": [str(s)[:200] for s in reached_pipeline]} if reached_pipeline else {})
    return finish_diagnosis(
        collected,
        scores,
        notes,
        run=run,
        regress_file=lambda p: pred.relative(
            pred.path("regress", p.trait, regress_file_name(p.condition))
        ),
        data_findings=_data_findings(pred, ref),
        bootstrap=bootstrap,
        own_answers=_own_answers(pred, tasks, answers),
        reference_causes={key: cause_findings(ref, key, found) for key, found in causes.items()},
    )

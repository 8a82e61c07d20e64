"""Score a prediction tree against a reference tree: the published GenoTEX evaluation.

`evaluate()` is the library entry point (the CLI only renders its `EvalReport`).
Tables are read one pair at a time, so memory is bounded by one or two tables,
not by the tree; file pairs may be scored in parallel processes.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence, TypeVar

from . import __version__
from .errors import PredictionTreeError, ReferenceTreeError
from .layout import ProblemId, TaskInfo, condition_from_regress_file, load_task_info
from .metrics import (
    PREPROCESSING_METRICS,
    approximate_auroc,
    confusion_scores,
    gene_selection_scores,
    gsea_enrichment_score,
    table_similarity,
)
from .parallel import ordered_map
from .report import EvalReport, FileScore, FilteringScore, Finding, ProblemScore, SelectionScore
from .selection import CohortInfoReader, CohortRecord, select_cohorts
from .tables import TableError, read_table
from .untrusted import DEFAULT_MAX_FILE_MB, MISSING, GuardedTree, RejectedFile

__all__ = [
    "SUBTASKS",
    "TASKS",
    "EvalOptions",
    "evaluate",
    "evaluate_preprocessing",
    "evaluate_analysis",
    "evaluate_selection",
    "score_gene_list",
]

TASKS: tuple[str, ...] = ("selection", "preprocessing", "analysis")
SUBTASKS: tuple[str, ...] = ("gene", "clinical", "linked")

T = TypeVar("T")
#: Wraps an iterable to show progress: `progress(items, description, total)`.
Progress = Callable[[Iterable[T], str, int], Iterable[T]]


def _no_progress(items: Iterable[T], description: str, total: int) -> Iterable[T]:
    return items


@dataclass(frozen=True)
class EvalOptions:
    """What to evaluate and how: task and subtask names, worker processes, file-size limit."""

    tasks: tuple[str, ...] = TASKS
    subtasks: tuple[str, ...] = SUBTASKS
    jobs: int = 1
    max_file_mb: float = DEFAULT_MAX_FILE_MB

    def __post_init__(self) -> None:
        for name, allowed in (("tasks", TASKS), ("subtasks", SUBTASKS)):
            unknown = [x for x in getattr(self, name) if x not in allowed]
            if unknown:
                raise ValueError(f"unknown {name} {unknown}; choose from {list(allowed)}")
        if self.jobs < 1:
            raise ValueError("jobs must be at least 1")
        if not self.max_file_mb > 0:
            raise ValueError("max_file_mb must be positive")


class _Findings:
    """Collects problems found, once each, in the order they were met."""

    def __init__(self) -> None:
        self._items: dict[tuple[str, str], None] = {}

    def add(self, file: str, reason: str) -> None:
        self._items.setdefault((file, reason), None)

    def extend(self, findings: Iterable[Finding]) -> None:
        for finding in findings:
            self.add(finding.file, finding.reason)

    def freeze(self) -> tuple[Finding, ...]:
        return tuple(Finding(file, reason) for file, reason in self._items)


def evaluate(
    pred_dir: str | Path,
    ref_dir: str | Path,
    task_info: TaskInfo | str | Path,
    *,
    options: EvalOptions = EvalOptions(),
    progress: Progress | None = None,
) -> EvalReport:
    """Evaluate a prediction `output/` folder against a reference one (evaluation.md).

    Raises `ReferenceTreeError`, `PredictionTreeError` or `TaskInfoError` when the
    evaluation cannot run; anything wrong inside the prediction is scored and
    listed in the report's `findings` instead.
    """
    progress = progress or _no_progress
    ref_path, pred_path = Path(ref_dir), Path(pred_dir)
    if not ref_path.is_dir():
        raise ReferenceTreeError("the reference folder does not exist", path=ref_path)
    if not (ref_path / "preprocess").is_dir() and not (ref_path / "regress").is_dir():
        raise ReferenceTreeError(
            "the reference folder has neither preprocess/ nor regress/ (is it an output/ folder?)",
            path=ref_path,
        )
    if not pred_path.is_dir():
        raise PredictionTreeError("the prediction folder does not exist", path=pred_path)
    task_info_source = None if isinstance(task_info, TaskInfo) else str(task_info)
    if not isinstance(task_info, TaskInfo):
        task_info = load_task_info(task_info)

    ref = GuardedTree.trusted(ref_path)
    pred = GuardedTree.untrusted(pred_path, max_file_mb=options.max_file_mb)
    findings = _Findings()
    filtering = selection = preprocessing = analysis = None
    if "selection" in options.tasks:
        filtering, selection = evaluate_selection(pred, ref, task_info, findings=findings, progress=progress)
    if "preprocessing" in options.tasks:
        preprocessing = evaluate_preprocessing(
            pred, ref, options.subtasks, jobs=options.jobs, findings=findings, progress=progress
        )
    if "analysis" in options.tasks:
        analysis = evaluate_analysis(pred, ref, findings=findings, progress=progress)
    run = {
        "genotex_version": __version__,
        "prediction": str(pred_dir),
        "reference": str(ref_dir),
        "task_info": task_info_source,
        "tasks": list(options.tasks),
        "subtasks": list(options.subtasks),
        "max_file_mb": options.max_file_mb,
    }
    return EvalReport(filtering, selection, preprocessing, analysis, findings.freeze(), run)


# ---- 1. dataset filtering and selection ------------------------------------------------------


def _filtering_score(
    trait: str, ref_records: dict[str, CohortRecord], pred_records: dict[str, CohortRecord]
) -> FilteringScore:
    tp = fp = tn = fn = 0
    for cohort_id in dict.fromkeys([*ref_records, *pred_records]):
        truth = cohort_id in ref_records and ref_records[cohort_id].is_available
        guess = cohort_id in pred_records and pred_records[cohort_id].is_available
        if truth and guess:
            tp += 1
        elif truth:
            fn += 1
        elif guess:
            fp += 1
        else:
            tn += 1
    return FilteringScore(trait, tp, fp, tn, fn, **confusion_scores(tp, fp, tn, fn))


def evaluate_selection(
    pred: GuardedTree,
    ref: GuardedTree,
    task_info: TaskInfo,
    *,
    findings: _Findings | None = None,
    progress: Progress | None = None,
) -> tuple[tuple[FilteringScore, ...], tuple[SelectionScore, ...]]:
    """DF once per trait and DS once per problem, over the problems of task_info."""
    findings = findings or _Findings()
    progress = progress or _no_progress
    ref_reader = CohortInfoReader(ref, findings.add, unreadable_as_missing=True)
    pred_reader = CohortInfoReader(pred, findings.add)
    filtering: dict[str, FilteringScore] = {}
    selection: list[SelectionScore] = []
    problems = list(task_info.problems())
    for problem in progress(problems, "dataset selection", len(problems)):
        ref_records = ref_reader.read(problem.trait)
        if ref_records is None:
            continue
        if problem.trait not in filtering:
            pred_records = pred_reader.read(problem.trait) or {}
            filtering[problem.trait] = _filtering_score(problem.trait, ref_records, pred_records)
        ref_choice = select_cohorts(ref_reader, problem, task_info, report=findings.add)
        pred_choice = select_cohorts(pred_reader, problem, task_info, report=findings.add)
        accuracy = 100.0 if ref_choice == pred_choice else 0.0
        selection.append(SelectionScore(problem, accuracy, ref_choice, pred_choice))
    return tuple(filtering.values()), tuple(selection)


# ---- 2. preprocessing: AJ, SJ, r, CSC ----------------------------------------------------------


def _subtask_parts(subtask: str, trait: str, file_name: str) -> tuple[str, ...]:
    if subtask == "linked":
        return ("preprocess", trait, file_name)
    return ("preprocess", trait, f"{subtask}_data", file_name)


def reference_csvs(ref: GuardedTree, subtask: str) -> list[tuple[str, str]]:
    """(trait, file name) of every reference CSV of a subtask, in sorted order."""
    root = ref.path("preprocess")
    if not root.is_dir():
        return []
    pairs = []
    for trait_dir in sorted(p for p in root.iterdir() if p.is_dir()):
        folder = trait_dir if subtask == "linked" else trait_dir / f"{subtask}_data"
        if not folder.is_dir():
            continue
        for file in sorted(f.name for f in folder.iterdir() if f.name.endswith(".csv") and f.is_file()):
            pairs.append((trait_dir.name, file))
    return pairs


def score_csv_pair(
    pred: GuardedTree, ref: GuardedTree, subtask: str, trait: str, file_name: str
) -> tuple[FileScore | None, list[Finding]]:
    """Score one prediction CSV against its reference; `None` if the reference is unreadable."""
    parts = _subtask_parts(subtask, trait, file_name)
    key = f"{trait}/{file_name}"
    pred_path, ref_path = pred.path(*parts), ref.path(*parts)
    zeros = dict.fromkeys(PREPROCESSING_METRICS, 0.0)
    if not pred.exists(pred_path):
        reason = "the prediction has no such file; scored 0"
        return FileScore(subtask, key, **zeros, status="missing"), [Finding(pred.relative(pred_path), reason)]
    try:
        ref_table = read_table(ref_path, features_are_rows=subtask != "linked")
    except TableError as exc:
        return None, [Finding(ref.relative(ref_path), f"{exc.reason}; the file is not scored")]
    try:
        pred_table = read_table(pred.resolve(pred_path), features_are_rows=subtask != "linked")
        scores = table_similarity(pred_table, ref_table)
    except RejectedFile as exc:
        return FileScore(subtask, key, **zeros, status="unreadable"), [
            Finding(exc.relative, f"{exc.reason}; scored 0")
        ]
    except TableError as exc:
        return FileScore(subtask, key, **zeros, status="unreadable"), [
            Finding(pred.relative(pred_path), f"{exc.reason}; scored 0")
        ]
    return FileScore(subtask, key, **scores), []


def _score_csv_task(task: tuple[GuardedTree, GuardedTree, str, str, str]) -> tuple[FileScore | None, list[Finding]]:
    return score_csv_pair(*task)


def evaluate_preprocessing(
    pred: GuardedTree,
    ref: GuardedTree,
    subtasks: Sequence[str] = SUBTASKS,
    *,
    jobs: int = 1,
    findings: _Findings | None = None,
    progress: Progress | None = None,
) -> dict[str, tuple[FileScore, ...] | None]:
    """Per subtask, the scores of every reference CSV (None when PRED has no preprocess/)."""
    findings = findings or _Findings()
    progress = progress or _no_progress
    if not os.path.isdir(pred.path("preprocess")):
        findings.add(pred.relative(pred.path("preprocess")), "the prediction has no preprocess/ folder")
        return {subtask: None for subtask in subtasks}
    tasks = [
        (pred, ref, subtask, trait, file)
        for subtask in subtasks
        for trait, file in reference_csvs(ref, subtask)
    ]
    scores: dict[str, list[FileScore]] = {subtask: [] for subtask in subtasks}
    results = ordered_map(_score_csv_task, tasks, jobs)
    for score, file_findings in progress(results, "preprocessed tables", len(tasks)):
        findings.extend(file_findings)
        if score is not None:
            scores[score.subtask].append(score)
    return {subtask: tuple(rows) for subtask, rows in scores.items()}


# ---- 3. statistical analysis: gene selection ---------------------------------------------------


class MalformedResult(ValueError):
    """A regression result JSON without a usable `significant_genes.Variable` list."""


def significant_genes(data: Any) -> list[str]:
    """The ranked gene list of a `significant_genes_condition_<C>.json`, validated."""
    if not isinstance(data, dict):
        raise MalformedResult("it is not a JSON object")
    genes = data.get("significant_genes")
    if not isinstance(genes, dict) or "Variable" not in genes:
        raise MalformedResult("it has no significant_genes.Variable")
    variable = genes["Variable"]
    if not isinstance(variable, list) or not all(isinstance(g, str) for g in variable):
        raise MalformedResult("significant_genes.Variable is not a list of gene symbols")
    return variable


def cv_prediction_number(data: dict, key: str) -> tuple[float, str | None]:
    """`cv_performance.prediction.<key>`: (value, None), or (0, reason) when it is not a number.

    A missing number is 0 silently, as in the reference.
    """
    node: Any = data
    for part in ("cv_performance", "prediction"):
        if not isinstance(node, dict) or part not in node:
            return 0.0, None if isinstance(node, dict) else f"{part} is not an object; {key} read as 0"
        node = node[part]
    if not isinstance(node, dict):
        return 0.0, f"cv_performance.prediction is not an object; {key} read as 0"
    if key not in node:
        return 0.0, None
    value = node[key]
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return 0.0, f"cv_performance.prediction.{key} is {value!r}, not a number; read as 0"
    return float(value), None


def score_gene_list(pred: Sequence[str], ref: Sequence[str]) -> dict[str, float]:
    """Precision, recall, F1, approximate AUROC and GSEA-ES of a gene list."""
    return {
        **gene_selection_scores(pred, ref),
        "auroc": approximate_auroc(pred, ref),
        "gsea_es": gsea_enrichment_score(pred, ref),
    }


def _failed(problem: ProblemId, status: str) -> ProblemScore:
    return ProblemScore(problem, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, status=status)


def score_result_file(
    pred: GuardedTree, ref: GuardedTree, trait: str, file_name: str, condition: str | None
) -> tuple[ProblemScore | None, list[Finding]]:
    """Score one problem's prediction JSON; `None` if the reference file is malformed."""
    problem = ProblemId(trait, condition)
    ref_path = ref.path("regress", trait, file_name)
    pred_path = pred.path("regress", trait, file_name)
    try:
        ref_genes = significant_genes(ref.read_json(ref_path))
    except (RejectedFile, MalformedResult) as exc:
        reason = exc.reason if isinstance(exc, RejectedFile) else str(exc)
        return None, [Finding(ref.relative(ref_path), f"{reason}; the problem is not scored")]
    try:
        data = pred.read_json(pred_path)
    except RejectedFile as exc:
        return _failed(problem, "malformed"), [Finding(exc.relative, f"{exc.reason}; the problem is failed")]
    if data is MISSING:
        return _failed(problem, "missing"), [
            Finding(pred.relative(pred_path), "the prediction has no such file; the problem is failed")
        ]
    try:
        pred_genes = significant_genes(data)
    except MalformedResult as exc:
        return _failed(problem, "malformed"), [
            Finding(pred.relative(pred_path), f"{exc}; the problem is failed")
        ]
    found = []
    numbers = {}
    for key in ("accuracy", "f1"):
        numbers[f"trait_pred_{key}"], problem_text = cv_prediction_number(data, key)
        if problem_text:
            found.append(Finding(pred.relative(pred_path), problem_text))
    score = ProblemScore(problem, 100.0, **score_gene_list(pred_genes, ref_genes), **numbers)
    return score, found


def reference_results(ref: GuardedTree) -> list[tuple[str, str, str | None]]:
    """(trait, file name, condition) of every reference result file, in sorted order."""
    root = ref.path("regress")
    if not root.is_dir():
        return []
    results = []
    for trait_dir in sorted(p for p in root.iterdir() if p.is_dir()):
        for file in sorted(f.name for f in trait_dir.iterdir() if f.is_file()):
            condition = condition_from_regress_file(file)
            if condition is not None:
                results.append((trait_dir.name, file, None if condition == "None" else condition))
    return results


def evaluate_analysis(
    pred: GuardedTree,
    ref: GuardedTree,
    *,
    findings: _Findings | None = None,
    progress: Progress | None = None,
) -> tuple[ProblemScore, ...]:
    """Scores of every reference result file (empty when PRED has no regress/ folder)."""
    findings = findings or _Findings()
    progress = progress or _no_progress
    if not os.path.isdir(pred.path("regress")):
        findings.add(pred.relative(pred.path("regress")), "the prediction has no regress/ folder")
        return ()
    scores = []
    results = reference_results(ref)
    for trait, file_name, condition in progress(results, "regression results", len(results)):
        score, found = score_result_file(pred, ref, trait, file_name, condition)
        findings.extend(found)
        if score is not None:
            scores.append(score)
    return tuple(scores)

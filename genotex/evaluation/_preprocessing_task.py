"""Task 2, preprocessing: AJ, SJ, feature correlation and CSC of every reference CSV (evaluation.md
§ 2).
"""

from __future__ import annotations

import os
from collections.abc import Sequence

import pandas as pd

from ..core import (
    PREPROCESSING_METRICS,
    GuardedTree,
    LabelledTable,
    RejectedFile,
    TableCache,
    TableError,
    feature_correlation,
    jaccard,
    ordered_map,
    read_table,
)
from ._common import Findings, Progress, no_progress
from ._scores import FileScore, Finding

__all__ = [
    "SUBTASKS",
    "SUBTASK_LABELS",
    "evaluate_preprocessing",
    "reference_csvs",
    "score_csv_pair",
    "table_similarity",
]

SUBTASKS: tuple[str, ...] = ("gene", "clinical", "linked")
#: The paper's names of the subtasks' data (its Table 5 says Gene, Trait, Linked).
SUBTASK_LABELS = {"gene": "Gene", "clinical": "Trait", "linked": "Linked"}


def table_similarity(pred: LabelledTable, ref: LabelledTable) -> dict[str, float]:
    """AJ, SJ, feature correlation and CSC of a preprocessed table against its reference.

    Raises `TableError` when the common block holds non-numeric values (the file
    then scores 0, as in evaluation.md § 2).
    """
    if pred.empty or ref.empty:
        return dict.fromkeys(PREPROCESSING_METRICS, 0.0)
    attributes = jaccard(pred.features, ref.features)
    samples = jaccard(pred.samples, ref.samples)
    # pandas' intersection: the order of the published evaluator's (the correlation's sum)
    common_features = pd.Index(pred.features).intersection(pd.Index(ref.features))
    common_samples = pd.Index(pred.samples).intersection(pd.Index(ref.samples))
    if len(common_features) == 0 or len(common_samples) == 0:
        correlation = 0.0
    else:
        correlation = feature_correlation(
            pred.block(common_features, common_samples), ref.block(common_features, common_samples)
        )
    return {
        "attributes_jaccard": attributes,
        "samples_jaccard": samples,
        "feature_correlation": correlation,
        "composite_similarity_correlation": attributes * samples * correlation,
    }


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
        for file in sorted(
            f.name for f in folder.iterdir() if f.name.endswith(".csv") and f.is_file()
        ):
            pairs.append((trait_dir.name, file))
    return pairs


def score_csv_pair(
    pred: GuardedTree,
    ref: GuardedTree,
    subtask: str,
    trait: str,
    file_name: str,
    *,
    cache: TableCache | None = None,
) -> tuple[FileScore | None, list[Finding]]:
    """Score one prediction CSV against its reference; `None` if the reference is unreadable.

    The reference table is read through `cache` (the same for every submission); the
    prediction's is parsed.
    """
    parts = _subtask_parts(subtask, trait, file_name)
    key = f"{trait}/{file_name}"
    pred_path, ref_path = pred.path(*parts), ref.path(*parts)
    if not pred.exists(pred_path):
        reason = "the prediction has no such file; scored 0"
        return FileScore.failed(subtask, key, "missing"), [
            Finding(pred.relative(pred_path), reason)
        ]
    try:
        ref_table = read_table(
            ref_path,
            features_are_rows=subtask != "linked",
            max_columns=ref.max_columns,
            cache=cache,
        )
    except TableError as exc:
        return None, [Finding(ref.relative(ref_path), f"{exc.reason}; the file is not scored")]
    try:
        pred_table = read_table(
            pred.resolve(pred_path),
            features_are_rows=subtask != "linked",
            max_columns=pred.max_columns,
        )
        scores = table_similarity(pred_table, ref_table)
    except RejectedFile as exc:
        return FileScore.failed(subtask, key, "unreadable"), [
            Finding(exc.relative, f"{exc.reason}; scored 0")
        ]
    except TableError as exc:
        return FileScore.failed(subtask, key, "unreadable"), [
            Finding(pred.relative(pred_path), f"{exc.reason}; scored 0")
        ]
    why = _why_zero(pred_table, scores)
    found = [Finding(pred.relative(pred_path), f"scored 0: {why}")] if why else []
    return FileScore.from_values(subtask, key, scores), found


def _why_zero(pred: LabelledTable, scores: dict[str, float]) -> str | None:
    """Why a file that was read scores 0 (every zero is a finding), or None when it does not."""
    if scores["composite_similarity_correlation"] != 0:
        return None
    if pred.empty:
        return "the table has no rows or no columns"
    if scores["attributes_jaccard"] == 0:
        return "no feature in common with the reference"
    if scores["samples_jaccard"] == 0:
        return "no sample in common with the reference"
    return "the common features do not correlate with the reference's"


def _score_csv_task(
    task: tuple[GuardedTree, GuardedTree, str, str, str, TableCache | None],
) -> tuple[FileScore | None, list[Finding]]:
    pred, ref, subtask, trait, file_name, cache = task
    return score_csv_pair(pred, ref, subtask, trait, file_name, cache=cache)


def evaluate_preprocessing(
    pred: GuardedTree,
    ref: GuardedTree,
    subtasks: Sequence[str] = SUBTASKS,
    *,
    jobs: int = 1,
    findings: Findings | None = None,
    progress: Progress | None = None,
    cache: TableCache | None = None,
    scheduler: str | None = None,
    traits: Sequence[str] = (),
) -> dict[str, tuple[FileScore, ...] | None]:
    """Per subtask, the scores of every reference CSV (None when PRED has no preprocess/).

    Table pairs are scored in `jobs` processes, or on the Dask `scheduler`, in order;
    reference tables are read through `cache`. With `traits`, only those traits' CSVs.
    """
    findings = findings or Findings()
    progress = progress or no_progress
    if not os.path.isdir(pred.path("preprocess")):
        findings.add(
            pred.relative(pred.path("preprocess")), "the prediction has no preprocess/ folder"
        )
        return {subtask: None for subtask in subtasks}
    tasks = [
        (pred, ref, subtask, trait, file, cache)
        for subtask in subtasks
        for trait, file in reference_csvs(ref, subtask)
        if not traits or trait in traits
    ]
    scores: dict[str, list[FileScore]] = {subtask: [] for subtask in subtasks}
    results = ordered_map(_score_csv_task, tasks, jobs, scheduler=scheduler)
    for score, file_findings in progress(results, "preprocessed tables", len(tasks)):
        findings.extend(file_findings)
        if score is not None:
            scores[score.subtask].append(score)
    return {subtask: tuple(rows) for subtask, rows in scores.items()}

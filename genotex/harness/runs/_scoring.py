"""Scoring one sample's output the way the paper scores it, item by item.

A sample's output is scored by genotex's own evaluation on the sample's slice
of the reference (its trait, and the traits it was given), and only its own
items are kept: each problem (analysis), file (preprocessing), trait
(filtering) and problem (selection). `SampleScoring.values` is what goes into
Inspect's `Score.value`: each metric's average over the sample's items, and
every item's value under its own key, so that Inspect's epoch reducer reduces
each item and the task's metrics pool them as the paper pools problems.
"""

from __future__ import annotations

import math
import os
import shutil
import tempfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ...core import (
    ANALYSIS_METRICS,
    TaskInfo,
    gate_write,
    nanmean,
    output_path,
    write_bytes_atomic,
)
from ...evaluation import EvalOptions, EvalReport, ProblemScore, evaluate
from ._bench import EVAL_TASKS, SampleSpec, TaskName

__all__ = [
    "ITEM_SEPARATOR",
    "VALUE_METRICS",
    "SampleScoring",
    "add_given",
    "item_key",
    "link_slice",
    "own_report",
    "pooled_average",
    "report_items",
    "score_files",
    "score_output",
    "write_tree",
]


def link_slice(
    reference: Path, traits: Iterable[str], into: Path, *, also_preprocess: Iterable[str] = ()
) -> Path:
    """A reference `output/` holding only `traits` (links to the real folders), and the
    preprocessed data of `also_preprocess` (the condition traits a two-step problem needs).
    """
    traits, extra = list(traits), [t for t in also_preprocess if t not in traits]
    for stage in ("preprocess", "regress"):
        (into / stage).mkdir(parents=True, exist_ok=True)
        for trait in traits + (extra if stage == "preprocess" else []):
            source = reference / stage / trait
            if source.is_dir():
                os.symlink(os.path.realpath(source), into / stage / trait)
    return into


def add_given(tree: Path, reference: Path, traits: Iterable[str]) -> None:
    """Ready an agent's output tree for scoring: its two stage folders, and the reference's
    preprocessed data of `traits` (what the agent was given) where it wrote none of its own.
    """
    for stage in ("preprocess", "regress"):
        (tree / stage).mkdir(parents=True, exist_ok=True)
    for trait in traits:
        source, target = reference / "preprocess" / trait, tree / "preprocess" / trait
        if source.is_dir() and not target.exists():
            shutil.copytree(source, gate_write(target))


_PREPROCESS_VALUES = (
    ("filtering_f1", "filtering", "f1"),
    ("selection_accuracy", "selection", "accuracy"),
    ("csc_linked", "preprocessing.linked", "composite_similarity_correlation"),
    ("csc_gene", "preprocessing.gene", "composite_similarity_correlation"),
    ("csc_clinical", "preprocessing.clinical", "composite_similarity_correlation"),
)
_ANALYSIS_VALUES = tuple((m, "analysis", m) for m in ANALYSIS_METRICS)
#: The numbers of `Score.value`, by task: (name, section, metric), each pooled over items.
VALUE_METRICS: dict[TaskName, tuple[tuple[str, str, str], ...]] = {
    "preprocess": _PREPROCESS_VALUES,
    "analysis": _ANALYSIS_VALUES,
    "e2e": _ANALYSIS_VALUES + _PREPROCESS_VALUES,
}
#: Separates a metric's name from its item in `Score.value` keys (`f1@Asthma|None`).
ITEM_SEPARATOR = "@"


def item_key(name: str, item: str) -> str:
    """The `Score.value` key of one item's value of a metric."""
    return f"{name}{ITEM_SEPARATOR}{item}"


def own_report(report: EvalReport, spec: SampleSpec) -> EvalReport:
    """The sample's own scope of a report: its trait's items, not the given traits'."""
    asked = {p.key for p in spec.problems}
    others = [f"/{t}/" for t in spec.given if t != spec.trait]
    preprocessing = None
    if report.preprocessing is not None:
        preprocessing = {
            subtask: None if scores is None else tuple(s for s in scores if s.trait == spec.trait)
            for subtask, scores in report.preprocessing.items()
        }
    return replace(
        report,
        filtering=None
        if report.filtering is None
        else tuple(s for s in report.filtering if s.trait == spec.trait),
        selection=None
        if report.selection is None
        else tuple(s for s in report.selection if s.problem.trait == spec.trait),
        preprocessing=preprocessing,
        analysis=None
        if report.analysis is None
        else tuple(s for s in report.analysis if s.problem.key in asked),
        findings=tuple(f for f in report.findings if not any(o in f"/{f.file}" for o in others)),
    )


def report_items(report: EvalReport, task: TaskName) -> dict[str, dict[str, float]]:
    """Each value metric's items in a report: name -> {item: value} (NaN where undefined)."""
    items: dict[str, dict[str, float]] = {}
    for name, section, metric in VALUE_METRICS[task]:
        rows: Iterable[Any]
        if section == "filtering":
            rows, key = report.filtering or (), lambda s: s.trait
        elif section == "selection":
            rows, key = report.selection or (), lambda s: s.problem.key
        elif section == "analysis":
            rows, key = report.analysis or (), lambda s: s.problem.key
        else:
            subtask = section.split(".", 1)[1]
            rows, key = (report.preprocessing or {}).get(subtask) or (), lambda s: s.file
        items[name] = {key(row): _row_value(row, metric) for row in rows}
    return items


def _row_value(row: object, metric: str) -> float:
    return float(row.value(metric) if isinstance(row, ProblemScore) else getattr(row, metric))


def pooled_average(values: Iterable[float]) -> float:
    """The paper's average over every item of every sample (not a mean of per-sample means)."""
    return nanmean(list(values))


@dataclass(frozen=True)
class SampleScoring:
    """A sample's output scored: its own report, its items and its `Score.value`."""

    report: EvalReport
    items: Mapping[str, Mapping[str, float]]

    def values(self) -> dict[str, float]:
        """Each metric's average over the sample's items, then every item's value.

        An undefined average (no item, or only undefined ones) is 0, as Inspect's
        displays need a number; an undefined item stays NaN, which the pooled
        metrics pass over as the paper's averages do.
        """
        values: dict[str, float] = {}
        for name, items in self.items.items():
            average = pooled_average(items.values())
            values[name] = 0.0 if math.isnan(average) else average
        for name, items in self.items.items():
            values.update({item_key(name, item): v for item, v in items.items()})
        return values


def score_output(
    reference: Path,
    task_info: TaskInfo,
    spec: SampleSpec,
    output: Path | None,
    *,
    exact: bool = False,
) -> SampleScoring:
    """Score an agent's `output/` (on the host; None: nothing) with genotex's evaluation.

    The given traits' reference data are put beside the agent's preprocessing
    (`add_given`), so that a two-step problem's selection sees its condition's
    cohorts (a condition given raw is the agent's own to preprocess: nothing is
    added for it), and only the sample's own items are kept.
    """
    with tempfile.TemporaryDirectory(prefix="genotex-score-") as scratch:
        pred = Path(scratch) / "pred"
        if output is not None and output.is_dir():
            shutil.copytree(output, gate_write(pred), symlinks=True)
        else:
            pred.mkdir()
        return _score_copy(reference, task_info, spec, pred, exact=exact)


def _score_copy(
    reference: Path, task_info: TaskInfo, spec: SampleSpec, pred: Path, *, exact: bool
) -> SampleScoring:
    """Score a scratch copy of an output tree (`pred`, which the given traits' data join)."""
    add_given(pred, reference, [t for t in spec.given if t != spec.trait])
    ref = link_slice(reference, [spec.trait], pred.parent / "ref", also_preprocess=spec.needed)
    report = evaluate(
        pred,
        ref,
        task_info.restricted_to([spec.trait]),
        options=EvalOptions(tasks=EVAL_TASKS[spec.task], exact=exact),
    )
    report = own_report(report, spec)
    return SampleScoring(report, report_items(report, spec.task))


def write_tree(files: Mapping[str, bytes], into: Path) -> Path:
    """Write an output tree's files (path under `output/` -> bytes) into a new folder."""
    into.mkdir(parents=True, exist_ok=True)
    for name, data in sorted(files.items()):
        write_bytes_atomic(output_path(into, *name.split("/")), data, durable=False)
    return into


def score_files(
    reference: Path, task_info: TaskInfo, spec: SampleSpec, files: Mapping[str, bytes] | None
) -> SampleScoring:
    """`score_output` of a tree given as its files (None: the agent failed; nothing is scored),
    written once into the scratch copy that is scored.
    """
    with tempfile.TemporaryDirectory(prefix="genotex-score-") as scratch:
        pred = write_tree(files or {}, Path(scratch) / "pred")
        return _score_copy(reference, task_info, spec, pred, exact=False)

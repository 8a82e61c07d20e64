"""The evaluation's results as frozen dataclasses, and their JSON form (evaluation.md § 5)."""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from ..core import (
    ANALYSIS_METRICS,
    CATEGORIES,
    FILTERING_METRICS,
    PREPROCESSING_METRICS,
    ProblemId,
    nanmean,
)

__all__ = [
    "EvalReport",
    "FileScore",
    "FilteringScore",
    "Finding",
    "ProblemScore",
    "SelectionScore",
    "OVERALL",
    "average",
]

OVERALL = "Overall"


@dataclass(frozen=True)
class Finding:
    """A prediction (or reference, prefixed `REF:`) file that was missing a part or malformed."""

    file: str
    reason: str


@dataclass(frozen=True)
class FilteringScore:
    """Dataset filtering (DF) of one trait: `is_available` as a binary classification."""

    trait: str
    tp: int
    fp: int
    tn: int
    fn: int
    precision: float
    recall: float
    f1: float
    accuracy: float


@dataclass(frozen=True)
class SelectionScore:
    """Dataset selection (DS) of one problem: 100 when both trees choose the same data."""

    problem: ProblemId
    accuracy: float
    reference_choice: Any
    predicted_choice: Any


@dataclass(frozen=True)
class FileScore:
    """Similarity of one preprocessed CSV to its reference (AJ, SJ, r, CSC)."""

    subtask: str
    file: str  # "<trait>/<cohort>.csv"
    attributes_jaccard: float
    samples_jaccard: float
    feature_correlation: float
    composite_similarity_correlation: float
    status: str = "ok"  # "ok" | "missing" | "unreadable"

    @property
    def trait(self) -> str:
        return self.file.split("/", 1)[0]


@dataclass(frozen=True)
class ProblemScore:
    """Gene-selection scores of one problem's `significant_genes_condition_<C>.json`."""

    problem: ProblemId
    success: float
    precision: float
    recall: float
    f1: float
    auroc: float
    gsea_es: float
    trait_pred_accuracy: float
    trait_pred_f1: float
    status: str = "ok"  # "ok" | "missing" | "malformed"

    @property
    def category(self) -> str:
        return self.problem.category


def average(rows: Sequence[object], metrics: Iterable[str]) -> dict[str, float]:
    """NaN-ignoring mean of each metric over rows; `{}` for no rows (as the reference)."""
    if not rows:
        return {}
    return {name: nanmean(getattr(row, name) for row in rows) for name in metrics}


def _metric_dict(row: object, metrics: Iterable[str]) -> dict[str, float]:
    return {name: getattr(row, name) for name in metrics}


def _choice_to_json(choice: Any) -> Any:
    return list(choice) if isinstance(choice, tuple) else choice


def _choice_from_json(value: Any) -> Any:
    return tuple(value) if isinstance(value, list) else value


@dataclass(frozen=True)
class EvalReport:
    """Everything one `genotex eval` computed; `None` sections were not requested.

    `preprocessing[subtask]` is `None` when the prediction has no `preprocess/`
    folder at all; `analysis` is empty when it has no `regress/` folder.
    """

    filtering: tuple[FilteringScore, ...] | None = None
    selection: tuple[SelectionScore, ...] | None = None
    preprocessing: Mapping[str, tuple[FileScore, ...] | None] | None = None
    analysis: tuple[ProblemScore, ...] | None = None
    findings: tuple[Finding, ...] = ()
    run: Mapping[str, Any] = field(default_factory=dict)

    # ---- aggregates -------------------------------------------------------------------
    def filtering_average(self) -> dict[str, float]:
        return average(self.filtering or (), FILTERING_METRICS)

    def selection_average(self) -> dict[str, float]:
        return average(self.selection or (), ("accuracy",))

    def preprocessing_average(self, subtask: str) -> dict[str, float]:
        return average((self.preprocessing or {}).get(subtask) or (), PREPROCESSING_METRICS)

    def analysis_by_category(self) -> dict[str, dict[str, float]]:
        """Per category and overall, the NaN-ignoring mean of each analysis number."""
        if not self.analysis:
            return {}
        groups: dict[str, list[ProblemScore]] = {name: [] for name in CATEGORIES}
        for score in self.analysis:
            groups[score.category].append(score)
        result = {name: average(rows, ANALYSIS_METRICS) for name, rows in groups.items()}
        result[OVERALL] = average(self.analysis, ANALYSIS_METRICS)
        return result

    def analysis_by_trait(self) -> dict[str, dict[str, float]]:
        traits: dict[str, list[ProblemScore]] = {}
        for score in self.analysis or ():
            traits.setdefault(score.problem.trait, []).append(score)
        return {trait: average(rows, ANALYSIS_METRICS) for trait, rows in sorted(traits.items())}

    # ---- JSON ---------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """The fixture schema with unrounded numbers, plus `problems_found` and run details."""
        out: dict[str, Any] = {}
        if self.filtering is not None or self.selection is not None:
            out["selection"] = {
                "filtering": {
                    "per_trait": {
                        s.trait: _metric_dict(s, FILTERING_METRICS) for s in self.filtering or ()
                    },
                    "average": self.filtering_average(),
                    "confusion": {
                        s.trait: {"tp": s.tp, "fp": s.fp, "tn": s.tn, "fn": s.fn}
                        for s in self.filtering or ()
                    },
                },
                "selection": {
                    "per_problem": {s.problem.key: s.accuracy for s in self.selection or ()},
                    "average": self.selection_average(),
                    "choices": {
                        s.problem.key: {
                            "reference": _choice_to_json(s.reference_choice),
                            "prediction": _choice_to_json(s.predicted_choice),
                        }
                        for s in self.selection or ()
                    },
                },
            }
        if self.preprocessing is not None:
            section: dict[str, Any] = {}
            for subtask, scores in self.preprocessing.items():
                if scores is None:
                    section[subtask] = {}
                    continue
                section[subtask] = {
                    "per_file": {s.file: _metric_dict(s, PREPROCESSING_METRICS) for s in scores},
                    "average": self.preprocessing_average(subtask),
                    "status": {s.file: s.status for s in scores},
                }
            out["preprocessing"] = section
        if self.analysis is not None:
            out["analysis"] = {
                "per_problem": {
                    s.problem.key: _metric_dict(s, ANALYSIS_METRICS) for s in self.analysis
                },
                "categorized": self.analysis_by_category(),
                "status": {s.problem.key: s.status for s in self.analysis},
            }
        out["problems_found"] = [asdict(f) for f in self.findings]
        out["run"] = dict(self.run)
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> EvalReport:
        """Rebuild a report from `to_dict()` output (or a JSON file of it)."""
        filtering = selection = preprocessing = analysis = None
        if "selection" in data:
            filt = data["selection"]["filtering"]
            confusion = filt.get("confusion", {})
            filtering = tuple(
                FilteringScore(
                    trait,
                    **{k: confusion.get(trait, {}).get(k, 0) for k in ("tp", "fp", "tn", "fn")},
                    **{k: _num(v[k]) for k in FILTERING_METRICS},
                )
                for trait, v in filt["per_trait"].items()
            )
            sel = data["selection"]["selection"]
            choices = sel.get("choices", {})
            selection = tuple(
                SelectionScore(
                    ProblemId.from_key(key),
                    _num(value),
                    _choice_from_json(choices.get(key, {}).get("reference")),
                    _choice_from_json(choices.get(key, {}).get("prediction")),
                )
                for key, value in sel["per_problem"].items()
            )
        if "preprocessing" in data:
            preprocessing = {}
            for subtask, sub in data["preprocessing"].items():
                if not sub:
                    preprocessing[subtask] = None
                    continue
                status = sub.get("status", {})
                preprocessing[subtask] = tuple(
                    FileScore(
                        subtask,
                        file,
                        **{k: _num(v[k]) for k in PREPROCESSING_METRICS},
                        status=status.get(file, "ok"),
                    )
                    for file, v in sub["per_file"].items()
                )
        if "analysis" in data:
            section = data["analysis"]
            status = section.get("status", {})
            analysis = tuple(
                ProblemScore(
                    ProblemId.from_key(key),
                    **{k: _num(v[k]) for k in ANALYSIS_METRICS},
                    status=status.get(key, "ok"),
                )
                for key, v in section["per_problem"].items()
            )
        findings = tuple(Finding(**f) for f in data.get("problems_found", ()))
        return cls(
            filtering,
            selection,
            preprocessing,
            analysis,
            findings,
            dict(data.get("run", {})),
        )

    def to_json(self) -> str:
        """Deterministic JSON text: sorted keys, NaN as null."""
        return (
            json.dumps(_nan_to_none(self.to_dict()), indent=1, sort_keys=True, allow_nan=False)
            + "\n"
        )


def _num(value: Any) -> float:
    return math.nan if value is None else float(value)


def _nan_to_none(value: Any) -> Any:
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, dict):
        return {k: _nan_to_none(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_nan_to_none(v) for v in value]
    return value

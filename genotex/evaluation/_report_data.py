"""The evaluation's results as data, their JSON form (evaluation.md § 5, plus what genotex adds).

The JSON keeps the fixture schema (`selection`, `preprocessing`, `analysis`)
with unrounded numbers. Beside it, only when computed: per-problem extra
statistics (`auroc_exact`, `average_precision`, `gsea_prerank`), and for each
average a sibling `<metric>_ci: [low, high]` (null with `<metric>_ci_note`
when undefined); `run` holds the options, the bootstrap settings and the
provenance.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any, Self, get_args

from ..core import (
    ANALYSIS_METRICS,
    CATEGORIES,
    FILTERING_METRICS,
    PREPROCESSING_METRICS,
    ProblemId,
    json_text,
)
from ._diagnosis._model import Diagnosis
from ._preprocessing_task import SUBTASKS
from ._scores import (
    EXTRA_ANALYSIS_METRICS,
    OVERALL,
    FileScore,
    FilteringScore,
    Finding,
    ProblemScore,
    ScoreStatus,
    SelectionScore,
    average,
    cv_absent_count,
    cv_absent_note,
)
from ._statistics import Interval

__all__ = ["ReportData", "group_key"]

_GSEA_KEYS = {"gsea_prerank_es": "es", "gsea_prerank_nes": "nes", "gsea_prerank_pval": "pval"}


def group_key(section: str, group: str | None = None) -> str:
    """The key of an average's intervals: "filtering", "preprocessing/gene", "analysis/Overall"."""
    return section if group is None else f"{section}/{group}"


@dataclass(frozen=True)
class ReportData:
    """Everything one `genotex eval` computed; `None` sections were not requested.

    `EvalReport` is this with its views as tables (`to_frame`); the renderers
    take a `ReportData`, so that they never import the report class that uses them.

    `preprocessing[subtask]` is `None` when the prediction has no `preprocess/`
    folder at all; `analysis` is empty when it has no `regress/` folder.
    `intervals` maps a `group_key` to each metric's bootstrap interval.
    """

    filtering: tuple[FilteringScore, ...] | None = None
    selection: tuple[SelectionScore, ...] | None = None
    preprocessing: Mapping[str, tuple[FileScore, ...] | None] | None = None
    analysis: tuple[ProblemScore, ...] | None = None
    findings: tuple[Finding, ...] = ()
    run: Mapping[str, Any] = field(default_factory=dict)
    intervals: Mapping[str, Mapping[str, Interval]] = field(default_factory=dict)
    diagnosis: Diagnosis | None = None

    def __repr__(self) -> str:
        parts = []
        if self.filtering is not None:
            parts.append(f"{len(self.filtering)} traits filtered")
        for subtask, scores in (self.preprocessing or {}).items():
            parts.append(f"{len(scores or ())} {subtask} files")
        if self.analysis is not None:
            overall = self.analysis_by_category().get(OVERALL, {})
            auroc = overall.get("auroc", float("nan"))
            parts.append(f"{len(self.analysis)} problems (AUROC {auroc:.2f})")
        parts.append(f"{len(self.findings)} findings")
        label = f"{self.run['label']}: " if self.run.get("label") else ""
        return f"EvalReport({label}{', '.join(parts)})"

    def _repr_html_(self) -> str:
        """The overall analysis averages as a table (what a notebook shows)."""
        import html

        rows = "".join(
            "<tr><th>"
            + html.escape(name)
            + "</th>"
            + "".join(f"<td>{averages.get(m, float('nan')):.2f}</td>" for m in ANALYSIS_METRICS)
            + "</tr>"
            for name, averages in self.analysis_by_category().items()
        )
        head = "".join(f"<th>{html.escape(m)}</th>" for m in ANALYSIS_METRICS)
        caption = html.escape(repr(self))
        return f"<table><caption>{caption}</caption><tr><th></th>{head}</tr>{rows}</table>"

    # ---- aggregates -------------------------------------------------------------------
    @property
    def analysis_metrics(self) -> tuple[str, ...]:
        """The parity metrics, then the extra statistics the problems hold."""
        extras = [
            m for m in EXTRA_ANALYSIS_METRICS if any(m in s.extra for s in self.analysis or ())
        ]
        return (*ANALYSIS_METRICS, *extras)

    def filtering_average(self) -> dict[str, float]:
        return average(self.filtering or (), FILTERING_METRICS)

    def selection_average(self) -> dict[str, float]:
        return average(self.selection or (), ("accuracy",))

    def preprocessing_average(self, subtask: str) -> dict[str, float]:
        return average((self.preprocessing or {}).get(subtask) or (), PREPROCESSING_METRICS)

    def analysis_groups(self) -> dict[str, list[ProblemScore]]:
        """The scored problems per category (in the paper's order), then all of them."""
        groups: dict[str, list[ProblemScore]] = {name: [] for name in CATEGORIES}
        for score in self.analysis or ():
            groups[score.category].append(score)
        groups[OVERALL] = list(self.analysis or ())
        return groups

    def analysis_by_category(self) -> dict[str, dict[str, float]]:
        """Per category and overall, the NaN-ignoring mean of each analysis number."""
        if not self.analysis:
            return {}
        metrics = self.analysis_metrics
        return {name: average(rows, metrics) for name, rows in self.analysis_groups().items()}

    def analysis_by_trait(self) -> dict[str, dict[str, float]]:
        traits: dict[str, list[ProblemScore]] = {}
        for score in self.analysis or ():
            traits.setdefault(score.problem.trait, []).append(score)
        metrics = self.analysis_metrics
        return {trait: average(rows, metrics) for trait, rows in sorted(traits.items())}

    def interval(self, key: str, metric: str) -> Interval | None:
        """The bootstrap interval of an average, or None when intervals were not computed."""
        return self.intervals.get(key, {}).get(metric)

    # ---- JSON ---------------------------------------------------------------------------
    def _with_intervals(self, averages: dict[str, float], key: str) -> dict[str, Any]:
        out: dict[str, Any] = dict(averages)
        for metric, interval in self.intervals.get(key, {}).items():
            out[f"{metric}_ci"] = [interval.low, interval.high] if interval.defined else None
            if interval.note:
                out[f"{metric}_ci_note"] = interval.note
        return out

    def _selection_dict(self) -> dict[str, Any]:
        filtering, selection = self.filtering or (), self.selection or ()
        return {
            "filtering": {
                "per_trait": {s.trait: _metric_dict(s, FILTERING_METRICS) for s in filtering},
                "average": self._with_intervals(self.filtering_average(), "filtering"),
                "confusion": {
                    s.trait: {"tp": s.tp, "fp": s.fp, "tn": s.tn, "fn": s.fn} for s in filtering
                },
            },
            "selection": {
                "per_problem": {s.problem.key: s.accuracy for s in selection},
                "average": self._with_intervals(self.selection_average(), "selection"),
                "choices": {
                    s.problem.key: {
                        "reference": _choice_to_json(s.reference_choice),
                        "prediction": _choice_to_json(s.predicted_choice),
                    }
                    for s in selection
                },
            },
        }

    def _preprocessing_dict(self) -> dict[str, Any]:
        section: dict[str, Any] = {}
        for subtask, scores in (self.preprocessing or {}).items():
            if scores is None:
                section[subtask] = {}
                continue
            averages = self.preprocessing_average(subtask)
            section[subtask] = {
                "per_file": {s.file: _metric_dict(s, PREPROCESSING_METRICS) for s in scores},
                "average": self._with_intervals(averages, group_key("preprocessing", subtask)),
                "status": {s.file: s.status for s in scores},
            }
        return section

    def _analysis_dict(self) -> dict[str, Any]:
        categorized = {
            name: self._with_intervals(averages, group_key("analysis", name))
            for name, averages in self.analysis_by_category().items()
        }
        out = {
            "per_problem": {s.problem.key: _problem_dict(s) for s in self.analysis or ()},
            "categorized": categorized,
            "status": {s.problem.key: s.status for s in self.analysis or ()},
        }
        note = cv_absent_note(self.analysis or ())
        if note is not None:  # the one rule for a missing number, in the JSON too
            out["cv_performance_absent"] = {
                "answers": cv_absent_count(self.analysis or ()),
                "of": len(self.analysis or ()),
                "counted_as": 0.0,
                "note": note,
            }
        return out

    def to_dict(self) -> dict[str, Any]:
        """The fixture schema with unrounded numbers, plus `problems_found` and run details."""
        out: dict[str, Any] = {}
        if self.filtering is not None or self.selection is not None:
            out["selection"] = self._selection_dict()
        if self.preprocessing is not None:
            out["preprocessing"] = self._preprocessing_dict()
        if self.analysis is not None:
            out["analysis"] = self._analysis_dict()
        out["problems_found"] = [asdict(f) for f in self.findings]
        out["run"] = dict(self.run)
        if self.diagnosis is not None:
            out["diagnosis"] = self.diagnosis.to_dict()
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Self:
        """Rebuild a report from `to_dict()` output (or a JSON file of it)."""
        filtering = selection = preprocessing = analysis = None
        intervals: dict[str, dict[str, Interval]] = {}
        if "selection" in data:
            filtering, selection = _selection_from(data["selection"], intervals)
        if "preprocessing" in data:
            preprocessing = _preprocessing_from(data["preprocessing"], intervals)
        if "analysis" in data:
            analysis = _analysis_from(data["analysis"], intervals)
        findings = tuple(Finding(**f) for f in data.get("problems_found", ()))
        run = dict(data.get("run", {}))
        diagnosis = Diagnosis.from_dict(data["diagnosis"]) if "diagnosis" in data else None
        return cls(
            filtering, selection, preprocessing, analysis, findings, run, intervals, diagnosis
        )

    def to_json(self) -> str:
        """Deterministic JSON text: sorted keys, NaN (and any non-finite number) as null."""
        return json_text(self.to_dict())


def _metric_dict(row: object, metrics: Iterable[str]) -> dict[str, float]:
    return {name: getattr(row, name) for name in metrics}


def _problem_dict(score: ProblemScore) -> dict[str, Any]:
    out: dict[str, Any] = _metric_dict(score, ANALYSIS_METRICS)
    extra = dict(score.extra)
    gsea = {name: extra.pop(key) for key, name in _GSEA_KEYS.items() if key in extra}
    out.update(extra)
    if gsea:
        out["gsea_prerank"] = gsea
    return out


def _choice_to_json(choice: Any) -> Any:
    return list(choice) if isinstance(choice, tuple) else choice


def _choice_from_json(value: Any) -> Any:
    return tuple(value) if isinstance(value, list) else value


def _read_intervals(averages: Mapping[str, Any], key: str, into: dict) -> None:
    for name, value in averages.items():
        if name.endswith("_ci"):
            metric = name[: -len("_ci")]
            note = averages.get(f"{name}_note", "")
            low, high = _bounds(value, f"{key} {metric}")
            into.setdefault(key, {})[metric] = Interval(low, high, str(note))


def _bounds(value: Any, what: str) -> tuple[float | None, float | None]:
    """An interval's bounds as saved: null (none), or two finite numbers, low first."""
    if value is None or value == [None, None]:
        return None, None
    numbers = isinstance(value, list) and len(value) == 2
    if not numbers or not all(_is_number(v) and math.isfinite(v) for v in value):
        raise ValueError(f"the interval of {what} is not null or two finite numbers")
    low, high = float(value[0]), float(value[1])
    if low > high:
        raise ValueError(f"the interval of {what} has its lower bound above its upper one")
    return low, high


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _selection_from(section: Mapping[str, Any], intervals: dict) -> tuple[tuple, tuple]:
    filt = section["filtering"]
    confusion = filt.get("confusion", {})
    filtering = tuple(
        FilteringScore.from_values(
            trait,
            _counts(confusion.get(trait, {})),
            {k: _num(v[k]) for k in FILTERING_METRICS},
        )
        for trait, v in filt["per_trait"].items()
    )
    sel = section["selection"]
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
    _read_intervals(filt.get("average", {}), "filtering", intervals)
    _read_intervals(sel.get("average", {}), "selection", intervals)
    return filtering, selection


def _preprocessing_from(section: Mapping[str, Any], intervals: dict) -> dict:
    preprocessing: dict[str, tuple[FileScore, ...] | None] = {}
    order = [s for s in SUBTASKS if s in section] + [s for s in section if s not in SUBTASKS]
    for subtask in order:  # the evaluation's order (the JSON's keys are sorted)
        sub = section[subtask]
        if not sub:
            preprocessing[subtask] = None
            continue
        status = sub.get("status", {})
        preprocessing[subtask] = tuple(
            FileScore.from_values(
                subtask,
                file,
                {k: _num(v[k]) for k in PREPROCESSING_METRICS},
                _status(status.get(file)),
            )
            for file, v in sub["per_file"].items()
        )
        _read_intervals(sub.get("average", {}), group_key("preprocessing", subtask), intervals)
    return preprocessing


def _analysis_from(section: Mapping[str, Any], intervals: dict) -> tuple[ProblemScore, ...]:
    status = section.get("status", {})
    scores = []
    for key, v in section["per_problem"].items():
        extra = {k: v[k] for k in v if k not in ANALYSIS_METRICS and k != "gsea_prerank"}
        for flat, name in _GSEA_KEYS.items():
            if name in (v.get("gsea_prerank") or {}):
                extra[flat] = v["gsea_prerank"][name]
        parity = {k: _num(v[k]) for k in ANALYSIS_METRICS}
        scores.append(
            ProblemScore.from_values(
                ProblemId.from_key(key), parity, _status(status.get(key)), extra
            )
        )
    for name, averages in section.get("categorized", {}).items():
        _read_intervals(averages, group_key("analysis", name), intervals)
    return tuple(scores)


def _counts(confusion: Mapping[str, Any]) -> tuple[int, int, int, int]:
    tp, fp, tn, fn = (confusion.get(k, 0) for k in ("tp", "fp", "tn", "fn"))
    return tp, fp, tn, fn


def _status(value: object) -> ScoreStatus:
    """A saved item's status; "ok" when absent."""
    for status in get_args(ScoreStatus):
        if value == status:
            return status
    if value is None:
        return "ok"
    raise ValueError(f"unknown item status {value!r}")


def _num(value: Any) -> float:
    return math.nan if value is None else float(value)

"""Two saved `eval --json` reports side by side: is run B better than run A, or is it noise.

For each metric: the per-item differences B - A over the items both runs
scored (problems, files, traits), their mean with a bootstrap interval, the
Wilcoxon signed-rank test (`zero_method="zsplit"`), wins/ties/losses and the
items with the largest differences. Two reports made against different
references or task_info are refused, as is a report without digests.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from ..core import (
    ANALYSIS_METRICS,
    PREPROCESSING_METRICS,
    GenotexError,
    get_metric,
    read_json,
)
from ._report import EvalReport
from ._scores import EXTRA_ANALYSIS_METRICS, MISSING_MARK, cv_absent_count, cv_absent_note
from ._setting import setting_difference, setting_of
from ._statistics import DEFAULT_BOOTSTRAP, BootstrapSettings, PairedComparison, paired_comparison

__all__ = [
    "Comparison",
    "ReportError",
    "SettingsDiffer",
    "check_same_reference",
    "compare_reports",
    "comparison_to_dict",
    "load_report",
    "reference_identity",
    "render_comparison",
]


class ReportError(GenotexError):
    """A saved report that cannot be read, or two reports that must not be compared."""


class SettingsDiffer(ReportError):
    """Runs of different settings asked to be ranked or compared together: `why` says what
    differs, `allow` what would allow it (the library's option; a command says its flag).
    """

    def __init__(self, why: str, allow: str) -> None:
        super().__init__(f"{why}; {allow}")
        self.why = why


def load_report(path: str | Path) -> EvalReport:
    """Read a saved `eval --json` report; any fault is a `ReportError` naming the file."""
    path = Path(path)
    if not path.exists():
        raise ReportError("the report does not exist", path=path)
    try:
        data = read_json(path, ReportError)
    except ReportError as exc:
        reason = f"is not a genotex eval --json report ({exc.reason})"
        raise ReportError(reason, path=path) from None
    try:
        if not isinstance(data, dict):
            raise ValueError("not a JSON object")
        return EvalReport.from_dict(data)
    except (ValueError, KeyError, TypeError, AttributeError, OverflowError) as exc:
        # any shape the report schema does not have: one sentence, never a traceback
        reason = f"is not a genotex eval --json report ({exc.__class__.__name__}: {exc})"
        raise ReportError(reason, path=path) from None


def _covered_folders(report: EvalReport) -> set[str]:
    folders = set()
    if report.filtering is not None or report.preprocessing is not None:
        folders.add("preprocess")
    if report.analysis is not None:
        folders.add("regress")
    return folders


def reference_identity(report: EvalReport, source: str) -> tuple[str, dict[str, str]]:
    """(task_info sha256, {reference folder: digest}) of a report; refuses one without digests."""
    block = report.run.get("provenance")
    block = block if isinstance(block, dict) else {}
    task_info = block.get("task_info_sha256")
    digests = block.get("reference_digest") or {}
    if not task_info or not isinstance(digests, dict):
        raise ReportError(
            "was made without reference digests (genotex 0.1?): re-run genotex eval to compare it",
            path=source,
        )
    folders = {k: v["sha256"] for k, v in digests.items() if isinstance(v, dict) and "sha256" in v}
    return task_info, folders


def check_same_reference(reports: Mapping[str, EvalReport]) -> None:
    """Refuse reports made against different task_info or reference trees (on what both cover)."""
    identities = {name: reference_identity(r, name) for name, r in reports.items()}
    (first, (task_info, folders)), *others = identities.items()
    for name, (other_info, other_folders) in others:
        if other_info != task_info:
            raise ReportError(f"was made against another task_info than {first}", path=name)
        shared = _covered_folders(reports[first]) & _covered_folders(reports[name])
        for folder in sorted(shared):
            if folders.get(folder) != other_folders.get(folder):
                reason = f"was made against another reference ({folder}/ differs) than {first}"
                raise ReportError(reason, path=name)


@dataclass(frozen=True)
class Comparison:
    """Every metric's paired comparison of run B against run A, by section."""

    a: str
    b: str
    sections: dict[str, tuple[PairedComparison, ...]]
    settings: BootstrapSettings
    #: the two runs' settings when they differ (compared with `across_settings`), else None
    across: str | None = None
    #: how many answers of each run hold no cv_performance (counted 0 in PredAcc, PredF1)
    cv_absent: tuple[int, int] = (0, 0)
    #: each run's line saying so (None when it holds every number)
    cv_notes: tuple[str | None, str | None] = (None, None)


def _items(report: EvalReport) -> dict[str, dict[str, dict[str, float]]]:
    """section -> metric -> item -> value, for everything a report scored per item."""
    out: dict[str, dict[str, dict[str, float]]] = {}
    if report.filtering is not None:
        out["dataset filtering (per trait)"] = {"f1": {s.trait: s.f1 for s in report.filtering}}
        out["dataset selection (per problem)"] = {
            "accuracy": {s.problem.key: s.accuracy for s in report.selection or ()}
        }
    for subtask, scores in (report.preprocessing or {}).items():
        out[f"preprocessing {subtask} (per file)"] = {
            m: {s.file: getattr(s, m) for s in scores or ()} for m in PREPROCESSING_METRICS
        }
    if report.analysis is not None:
        metrics = (*ANALYSIS_METRICS, *EXTRA_ANALYSIS_METRICS)
        out["analysis (per problem)"] = {  # a missing cv_performance number is 0, as published
            m: {s.problem.key: s.value(m) for s in report.analysis} for m in metrics
        }
    return out


def compare_reports(
    a: EvalReport,
    b: EvalReport,
    *,
    names: tuple[str, str] = ("A", "B"),
    settings: BootstrapSettings = DEFAULT_BOOTSTRAP,
    across_settings: bool = False,
) -> Comparison:
    """Paired comparison of B against A on every metric both reports scored per item.

    Raises `ReportError` when they were made against different references or
    task_info (on the tasks both cover), or when either has no digests; and when
    they ran in different settings (`setting_of`: a harness run's task arguments and
    budget, or none recorded), unless `across_settings` (then the difference measured
    is the setting's as much as the agent's, and the rendering says so).
    """
    check_same_reference({names[0]: a, names[1]: b})
    why = setting_difference({names[0]: a, names[1]: b})
    if why is not None and not across_settings:
        raise SettingsDiffer(why, "across_settings=True compares them anyway")
    items_a, items_b = _items(a), _items(b)
    sections = {}
    for section in items_a.keys() & items_b.keys():
        rows = []
        for metric, values in items_a[section].items():
            other = items_b[section].get(metric, {})
            row = paired_comparison(metric, values, other, settings)
            if row.n:
                rows.append(row)
        if rows:
            sections[section] = tuple(rows)
    ordered = dict(sorted(sections.items()))
    across = None if why is None else f"{setting_of(a).label} against {setting_of(b).label}"
    absent = (cv_absent_count(a.analysis or ()), cv_absent_count(b.analysis or ()))
    notes = (cv_absent_note(a.analysis or ()), cv_absent_note(b.analysis or ()))
    return Comparison(names[0], names[1], ordered, settings, across, absent, notes)


#: The metric whose largest differences are listed, per section (the primary metric of each).
_HEADLINE = ("auroc", "f1", "composite_similarity_correlation", "accuracy")


def _mean_text(metric: str, mean: float, absent: int) -> str:
    """A run's mean as printed, marked where it counts a missing cv_performance number as 0."""
    from ._render import format_value

    mark = MISSING_MARK if absent and metric.startswith("trait_pred_") else ""
    return format_value(metric, mean) + mark


def _interval_text(row: PairedComparison) -> str:
    if not row.interval.defined:
        return "-"
    return f"[{row.interval.low:+.3f}, {row.interval.high:+.3f}]"


def render_comparison(comparison: Comparison, *, top: int = 5) -> str:
    """The comparison as text: one table per section, then the largest differences."""
    from ._render import format_p, format_table

    settings = comparison.settings
    lines = [
        f"B = {comparison.b} against A = {comparison.a}: mean of B - A over the items both scored, "
        f"its {settings.confidence:.0%} percentile-bootstrap interval ({settings.resamples} "
        f"resamples, seed {settings.seed}), Wilcoxon signed-rank p (zsplit), wins/ties/losses of B"
    ]
    if comparison.across is not None:
        lines.append(
            f"across settings ({comparison.across}): the difference is the setting's as much "
            "as the agent's"
        )
    for side, note in zip("AB", comparison.cv_notes, strict=True):
        if note is not None:
            lines.append(f"{side}: {note} (PredAcc and PredF1 marked {MISSING_MARK})")
    if any(r.p_value is None and r.n and r.ties == r.n for rows in comparison.sections.values()
           for r in rows):  # fmt: skip
        lines.append("p is - where every pair ties: no test has anything to rank")
    headers = ["metric", "n", "A", "B", "B - A", "interval", "p", "W/T/L"]
    for section, rows in comparison.sections.items():
        table = [
            [
                get_metric(r.metric).label,
                r.n,
                _mean_text(r.metric, r.mean_a, comparison.cv_absent[0]),
                _mean_text(r.metric, r.mean_b, comparison.cv_absent[1]),
                f"{r.mean_difference:+.3f}",
                _interval_text(r),
                format_p(r.p_value),
                f"{r.wins}/{r.ties}/{r.losses}",
            ]
            for r in rows
        ]
        lines += ["", f"== {section} ==", format_table(headers, table)]
        headline = next((r for r in rows if r.metric in _HEADLINE), rows[0])
        if headline.largest:
            shown = ", ".join(f"{item} {diff:+.3f}" for item, diff in headline.largest[:top])
            label = get_metric(headline.metric).label
            lines.append(f"largest {label} differences: {shown}")
    return "\n".join(lines) + "\n"


def comparison_to_dict(comparison: Comparison) -> dict:
    """The comparison as JSON-ready data."""
    return {
        "a": comparison.a,
        "b": comparison.b,
        "bootstrap": comparison.settings.to_dict(),
        "sections": {
            section: {
                r.metric: {
                    "n": r.n,
                    "mean_a": r.mean_a,
                    "mean_b": r.mean_b,
                    "mean_difference": r.mean_difference,
                    "interval": [r.interval.low, r.interval.high] if r.interval.defined else None,
                    "interval_note": r.interval.note,
                    "wilcoxon_p": r.p_value,
                    "wins": r.wins,
                    "ties": r.ties,
                    "losses": r.losses,
                    "largest": [list(pair) for pair in r.largest],
                }
                for r in rows
            }
            for section, rows in comparison.sections.items()
        },
    }

"""Saved runs side by side in the layout of the paper's Table 2, optionally beside the paper's rows.

One row per run: Prec., Rec., F1, AUROC (with its bootstrap interval when the
run has one), GSEA, trait-prediction Acc. and F1, success, and coverage (the
problems scored over the problems of task_info: a partial run never sits
unmarked beside full ones). Rows are sorted by AUROC; the best value of each
column is marked. `paper="end-to-end"` adds the published Table 2 rows and
`paper="analysis"` Table 3's (analysis from expert-preprocessed data), with
their values exactly as printed. The published tables ship with genotex
(`genotex/evaluation/data/`, transcribed from the GenoTEX paper).
"""

from __future__ import annotations

import csv
import io
import math
from dataclasses import dataclass, replace
from importlib import resources
from pathlib import Path

from ..core import get_metric
from ._compare import SettingsDiffer, check_same_reference, load_report
from ._isolation import harness_label, not_isolated, reached_pipeline, unisolated
from ._report import EvalReport, group_key
from ._scores import MISSING_MARK, OVERALL, cv_absent_count, cv_absent_note
from ._setting import setting_difference, setting_of

__all__ = [
    "COLUMNS",
    "Leaderboard",
    "LeaderboardRow",
    "leaderboard",
    "paper_table",
    "published_rows",
    "as_printed",
]

#: (report metric, paper column, header) in Table 2's order.
COLUMNS = (
    ("precision", "precision", "Prec."),
    ("recall", "recall", "Rec."),
    ("f1", "f1", "F1"),
    ("auroc", "auroc", "AUROC"),
    ("gsea_es", "gsea", "GSEA"),
    ("trait_pred_accuracy", "trait_pred_accuracy", "Acc."),
    ("trait_pred_f1", "trait_pred_f1", "F1 (pred.)"),
    ("success", "success", "Success"),
)
#: Table 2's columns that only a run knows (`genotex harness export` records them), as printed.
RUNTIME_COLUMNS = (
    ("tokens_in_out_k", "Tk.(K)"),
    ("cost_usd", "Cost($)"),
    # the cost as billed with the providers' prompt caches (the paper's Cost($) has none)
    ("cost_cached_usd", "Cached($)"),
    ("time_s", "Time(s)"),
)
_TABLES = {"end-to-end": "paper_table2.csv", "analysis": "paper_table3.csv"}
#: The columns a missing cv_performance number is counted 0 in.
_PREDICTIONS = ("trait_pred_accuracy", "trait_pred_f1")
#: The problems of the benchmark the paper's rows were published on (Liu et al., GenoTEX).
PAPER_PROBLEMS = 1384
_SOURCE = (
    "Liu et al., GenoTEX (published; Table 2: end to end, Table 3: from expert-preprocessed data)"
)


@dataclass(frozen=True)
class LeaderboardRow:
    """One run, or one published row (its values kept as printed)."""

    name: str
    values: dict[str, float | None]
    printed: dict[str, str] | None = None  # the paper's cells, for published rows
    auroc_interval: tuple[float, float] | None = None
    coverage: tuple[int, int] | None = None  # (scored, in task_info)
    runtime: dict[str, str] | None = None  # the RUNTIME_COLUMNS' cells, when the run has them
    group: str = "run"  # a published row's section of its table (model, ablation, baseline...)
    #: the columns holding a missing number counted as 0 (`MISSING_MARK` beside the value)
    marked: frozenset[str] = frozenset()
    #: whether the row is over as many problems as the most complete rows beside it
    ranked: bool = True

    @property
    def published(self) -> bool:
        return self.printed is not None

    @property
    def complete(self) -> bool:
        """Whether the row is over every problem (a published row is): only such rows rank."""
        if self.published:
            return True
        full = self.coverage is not None and self.coverage[0] >= self.coverage[1]
        return full and self.ranked

    def cell(self, metric: str) -> str:
        if self.printed is not None:
            return self.printed.get(metric, "") or "-"
        value = self.values.get(metric)
        if value is None or math.isnan(value):
            return "-"
        text = f"{value:.2f}" + (MISSING_MARK if metric in self.marked else "")
        if metric == "auroc" and self.auroc_interval is not None:
            low, high = self.auroc_interval
            text += f" [{low:.2f}, {high:.2f}]"
        return text


@dataclass(frozen=True)
class Leaderboard:
    rows: tuple[LeaderboardRow, ...]
    best: dict[str, float]  # per column, the best value among the rows ranked together
    source: str = ""
    warnings: tuple[str, ...] = ()  # what a reader must know (a partial run beside the paper)
    #: with `by_setting`, each setting's rows are ranked apart: its best values, by group
    best_by_group: dict[str, dict[str, float]] | None = None

    @property
    def grouped(self) -> bool:
        """Whether a Group column is shown: the paper's sections, or the runs' settings."""
        return bool(self.source) or self.best_by_group is not None

    def best_of(self, row: LeaderboardRow) -> dict[str, float]:
        """The best values `row` is ranked against: its setting's, or every row's."""
        if self.best_by_group is None:
            return self.best
        return self.best_by_group.get(_rank_group(row), {})

    @property
    def runtime(self) -> bool:
        """Whether a run's row has Table 2's runtime columns (then every row shows them)."""
        return any(row.runtime is not None and not row.published for row in self.rows)


def against_paper(row: LeaderboardRow) -> tuple[LeaderboardRow, str | None]:
    """A run's row, its coverage counted against the paper's benchmark; a warning if partial.

    Beside published rows, a run's coverage is the problems it scored over the
    problems the paper's rows were computed on, not over its own task_info.
    """
    scored = row.coverage[0] if row.coverage is not None else 0
    row = replace(row, coverage=(scored, PAPER_PROBLEMS))
    if scored >= PAPER_PROBLEMS:
        return row, None
    return row, (
        f"{row.name} scored {scored:,} of the {PAPER_PROBLEMS:,} problems the published rows "
        "were computed on: its averages are not comparable with theirs"
    )


def _rank_group(row: LeaderboardRow) -> str:
    """The group a row is ranked in when runs are grouped by setting: a run's setting, and the
    paper's own rows in the paper's setting.
    """
    return "paper setting" if row.published else row.group


def _best(rows: list[LeaderboardRow]) -> dict[str, float]:
    """Each column's best value, among the rows over every problem: a partial run's averages
    are over other problems, so it is never marked best (however high they are).
    """
    best = {}
    ranked = [r for r in rows if r.complete]
    for metric, _, _ in COLUMNS:
        shown = [as_printed(v) for r in ranked if (v := r.values.get(metric)) is not None]
        found = [v for v in shown if not math.isnan(v)]
        if found:
            best[metric] = get_metric(metric).best(found)
    return best


def _row_of(name: str, report: EvalReport) -> LeaderboardRow:
    if not_isolated(report):
        name = f"{name} (not isolated)"
    overall = report.analysis_by_category().get(OVERALL, {})
    values = {metric: overall.get(metric) for metric, _, _ in COLUMNS}
    marked = frozenset(_PREDICTIONS) if cv_absent_count(report.analysis or ()) else frozenset()
    interval = report.interval(group_key("analysis", OVERALL), "auroc")
    total = report.run.get("problems_in_task_info")
    valid = isinstance(total, int) and not isinstance(total, bool) and total > 0
    coverage = (len(report.analysis or ()), int(total)) if valid and total is not None else None
    bounds = None if interval is None else interval.bounds
    epochs = report.run.get("epochs")
    if bounds is None and isinstance(epochs, dict) and len(epochs) > 1:  # the range over epochs
        aurocs = [e.get("auroc") for e in epochs.values() if isinstance(e, dict)]
        found = [float(v) for v in aurocs if isinstance(v, (int, float)) and math.isfinite(v)]
        bounds = (min(found), max(found)) if found else None
    return LeaderboardRow(
        name, values, None, bounds, coverage, _runtime_cells(report), marked=marked
    )


def _runtime_cells(report: EvalReport) -> dict[str, str] | None:
    """Tk.(K) as "in/out" thousands per problem, Cost($) (every input token at the input
    price, as the paper's), Cached($) (as billed with prompt caching, where the prices give
    it) and Time(s) per problem, as printed.
    """
    runtime = report.run.get("runtime")
    if not isinstance(runtime, dict):
        return None

    def number(key: str, digits: int) -> str:
        value = runtime.get(key)
        ok = (
            isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
        )
        return f"{value:.{digits}f}" if ok else ""

    tokens = f"{number('tokens_in_k', 1)}/{number('tokens_out_k', 1)}"
    return {
        "tokens_in_out_k": tokens if tokens != "/" else "",
        "cost_usd": number("cost_usd", 2),
        "cost_cached_usd": number("cost_cached_usd", 2),
        "time_s": number("time_s", 2),
    }


def paper_table(name: str) -> list[dict[str, str]]:
    """The records of one of the paper's tables shipped with genotex (`data/<name>`), as text."""
    text = resources.files("genotex.evaluation").joinpath("data", name).read_text("utf-8")
    return list(csv.DictReader(io.StringIO(text)))


def published_rows(which: str) -> list[LeaderboardRow]:
    """The paper's rows of Table 2 ("end-to-end") or Table 3 ("analysis"), as printed."""
    if which not in _TABLES:
        raise ValueError(f"the paper's table is end-to-end or analysis, not {which!r}")
    rows = []
    for record in paper_table(_TABLES[which]):
        printed = {metric: record[column] for metric, column, _ in COLUMNS}
        values = {m: float(v) if v else None for m, v in printed.items()}
        runtime = {key: record.get(key, "") or "" for key, _ in RUNTIME_COLUMNS}
        name = record["method"].removesuffix(" (Ours)")  # the published row, named as it is
        group = record.get("group") or "published"
        rows.append(
            LeaderboardRow(f"{name} (published)", values, printed, runtime=runtime, group=group)
        )
    return rows


def _run_name(path: Path) -> str:
    """A run's name: its file's stem, or its folder's name for `RUN/eval.json` (harness export)."""
    return path.parent.name if path.stem == "eval" and path.parent.name else path.stem


def leaderboard(
    paths: list[str | Path],
    *,
    paper: str | None = None,
    labels: list[str] | None = None,
    by_setting: bool = False,
) -> Leaderboard:
    """Rows for saved `eval --json` reports (and the paper's), sorted by AUROC, best marked.

    Each run's group is its setting (`setting_of`: "paper setting", the arguments where it
    differs from the paper's, or "setting unknown" for a report that records none). Runs
    of different settings are not ranked together: ReportError in one sentence naming
    the difference, unless `by_setting`, which sorts and marks each setting's rows apart
    (the paper's own rows ranked with the runs in its setting). Beside the paper's rows,
    a run that is not in the paper's setting is said in a warning.

    A run is named by `labels` (in the order of `paths`), else by the label its
    report records (`eval --label`), else by its file (or, for `RUN/eval.json`,
    its folder) and, for a model-driven harness run, what ran (`harness_label`).
    Runs come first, sorted by AUROC; the paper's rows follow in the paper's
    order. The best value of each column is marked, every tie of it (as printed)
    too.

    Raises `ReportError` for an unreadable report, one without digests, or
    reports made against different references.
    """
    if labels and len(labels) != len(paths):
        raise ValueError(f"{len(labels)} labels for {len(paths)} runs: give one per run")
    reports = {str(path): load_report(path) for path in paths}
    if len(reports) > 1:
        check_same_reference(reports)
    names = labels or [
        str(report.run.get("label") or " · ".join(
            n for n in (_run_name(Path(path)), harness_label(report)) if n
        ))
        for path, report in reports.items()
    ]  # fmt: skip
    named = dict(zip(names, reports.values(), strict=True))
    if len(named) > 1 and not by_setting and (why := setting_difference(named)) is not None:
        raise SettingsDiffer(why, "by_setting=True ranks each setting apart")
    rows = [replace(_row_of(n, r), group=setting_of(r).label) for n, r in named.items()]
    rows.sort(key=lambda r: -(auroc if (auroc := r.values.get("auroc")) is not None else -1))
    if by_setting:  # each setting's rows together, in the order of their best AUROC
        order = {row.group: i for i, row in reversed(list(enumerate(rows)))}
        rows.sort(key=lambda r: order[r.group])
    warnings: list[str] = []
    warnings += [w for n, r in named.items() if (w := unisolated(n, r))]
    warnings += [
        f"{n}'s agent reached for genotex's own pipeline in {len(steps)} step(s), refused by "
        f"the paper library's kernel (first: {steps[0]})"
        for n, r in named.items()
        if (steps := reached_pipeline(r))
    ]
    warnings += [
        f"{n}: {cv_absent_note(r.analysis or ())} (Acc. and F1 (pred.) marked {MISSING_MARK})"
        for n, r in named.items()
        if cv_absent_count(r.analysis or ())
    ]
    rows, fewer = _over_the_most(rows)
    warnings += fewer
    warnings += [
        f"{row.name} is partial ({row.coverage[0]:,} of {row.coverage[1]:,} problems): never "
        "marked best, its averages being over other problems"
        for row in rows
        if row.ranked and not row.complete and row.coverage is not None and not paper
    ]
    if paper:
        checked = [against_paper(row) for row in rows]
        rows = [row for row, _ in checked]
        warnings += [warning for _, warning in checked if warning]
        warnings += [
            f"{n} is not in the paper's setting ({s.label}): its row stands beside the "
            "paper's for reference, not as a rank among them"
            for n, r in named.items()
            if not (s := setting_of(r)).paper
        ]
        rows += published_rows(paper)
    best_by_group = None
    if by_setting:
        groups = {_rank_group(row) for row in rows}
        best_by_group = {g: _best([r for r in rows if _rank_group(r) == g]) for g in groups}
    source = _SOURCE if paper else ""
    return Leaderboard(tuple(rows), _best(rows), source, tuple(warnings), best_by_group)


def _over_the_most(rows: list[LeaderboardRow]) -> tuple[list[LeaderboardRow], list[str]]:
    """The runs' rows, those over fewer problems than the most any run scored set apart (never
    marked best: a one-trait run's averages are over other problems), with a line for each.
    """
    scored = [r.coverage[0] for r in rows if r.coverage is not None]
    most = max(scored, default=0)
    out, said = [], []
    for row in rows:
        if row.coverage is not None and (count := row.coverage[0]) < most:
            row = replace(row, ranked=False)
            said.append(
                f"{row.name} is over {count:,} problems where others are over {most:,}: "
                "never marked best, its averages being over other problems"
            )
        out.append(row)
    return out, said


def as_printed(value: float) -> float:
    """A value as the table prints it (2 decimals): ties are judged on what the reader sees."""
    return round(value, 2) if math.isfinite(value) else value

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
from ._compare import check_same_reference, load_report
from ._report import EvalReport, group_key
from ._scores import OVERALL

__all__ = [
    "COLUMNS",
    "Leaderboard",
    "LeaderboardRow",
    "leaderboard",
    "paper_comparison",
    "paper_table",
    "published_rows",
    "render_leaderboard",
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
    ("time_s", "Time(s)"),
)
_TABLES = {"end-to-end": "paper_table2.csv", "analysis": "paper_table3.csv"}
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

    @property
    def published(self) -> bool:
        return self.printed is not None

    def cell(self, metric: str) -> str:
        if self.printed is not None:
            return self.printed.get(metric, "") or "-"
        value = self.values.get(metric)
        if value is None or math.isnan(value):
            return "-"
        text = f"{value:.2f}"
        if metric == "auroc" and self.auroc_interval is not None:
            low, high = self.auroc_interval
            text += f" [{low:.2f}, {high:.2f}]"
        return text


@dataclass(frozen=True)
class Leaderboard:
    rows: tuple[LeaderboardRow, ...]
    best: dict[str, float]  # per column, the best value among all rows
    source: str = ""
    warnings: tuple[str, ...] = ()  # what a reader must know (a partial run beside the paper)

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


def _row_of(name: str, report: EvalReport) -> LeaderboardRow:
    overall = report.analysis_by_category().get(OVERALL, {})
    values = {metric: overall.get(metric) for metric, _, _ in COLUMNS}
    interval = report.interval(group_key("analysis", OVERALL), "auroc")
    total = report.run.get("problems_in_task_info")
    valid = isinstance(total, int) and not isinstance(total, bool) and total > 0
    coverage = (len(report.analysis or ()), total) if valid else None
    bounds = (interval.low, interval.high) if interval is not None and interval.defined else None
    epochs = report.run.get("epochs")
    if bounds is None and isinstance(epochs, dict) and len(epochs) > 1:  # the range over epochs
        found = [e.get("auroc") for e in epochs.values() if isinstance(e, dict)]
        found = [v for v in found if isinstance(v, (int, float)) and math.isfinite(v)]
        bounds = (min(found), max(found)) if found else None
    return LeaderboardRow(name, values, None, bounds, coverage, _runtime_cells(report))


def _runtime_cells(report: EvalReport) -> dict[str, str] | None:
    """Tk.(K) as "in/out" thousands per problem, Cost($) and Time(s) per problem, as printed."""
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
        "time_s": number("time_s", 2),
    }


def paper_comparison(
    report: EvalReport, name: str = "this run"
) -> tuple[list[str], list[str], list[list[str]], str | None]:
    """A run beside the paper's Table 2 rows (the HTML report's table): headers, the run's cells
    (coverage against the paper's benchmark), the published rows' cells, the partial-run warning.
    The runtime columns are there when the run has them."""
    row, warning = against_paper(_row_of(name, report))
    rows = (row, *published_rows("end-to-end"))
    board = Leaderboard(rows, {}, _SOURCE)
    runtime = [header for _, header in RUNTIME_COLUMNS] if board.runtime else []
    headers = ["run", *(header for _, _, header in COLUMNS), *runtime, "coverage"]
    cells = [_cells(board, r, lambda c: c) for r in rows]
    return headers, cells[0], cells[1:], warning


def paper_table(name: str) -> list[dict[str, str]]:
    """The records of one of the paper's tables shipped with genotex (`data/<name>`), as text."""
    text = resources.files("genotex.evaluation").joinpath("data", name).read_text("utf-8")
    return list(csv.DictReader(io.StringIO(text)))


def published_rows(which: str) -> list[LeaderboardRow]:
    """The paper's rows of Table 2 ("end-to-end") or Table 3 ("analysis"), as printed."""
    if which not in _TABLES:
        raise ValueError(f"--paper takes end-to-end or analysis, not {which!r}")
    rows = []
    for record in paper_table(_TABLES[which]):
        printed = {metric: record[column] for metric, column, _ in COLUMNS}
        values = {m: float(v) if v else None for m, v in printed.items()}
        runtime = {key: record.get(key, "") or "" for key, _ in RUNTIME_COLUMNS}
        rows.append(
            LeaderboardRow(f"{record['method']} (published)", values, printed, runtime=runtime)
        )
    return rows


def _run_name(path: Path) -> str:
    """A run's name: its file's stem, or its folder's name for `RUN/eval.json` (harness export)."""
    return path.parent.name if path.stem == "eval" and path.parent.name else path.stem


def leaderboard(paths: list[str | Path], *, paper: str | None = None) -> Leaderboard:
    """Rows for saved `eval --json` reports (and the paper's), sorted by AUROC, best marked.

    Raises `ReportError` for an unreadable report, one without digests, or
    reports made against different references.
    """
    reports = {str(path): load_report(path) for path in paths}
    if len(reports) > 1:
        check_same_reference(reports)
    rows = [_row_of(_run_name(Path(path)), report) for path, report in reports.items()]
    warnings: list[str] = []
    if paper:
        checked = [against_paper(row) for row in rows]
        rows = [row for row, _ in checked]
        warnings = [warning for _, warning in checked if warning]
        rows += published_rows(paper)
    rows.sort(key=lambda r: -(r.values.get("auroc") if r.values.get("auroc") is not None else -1))
    best = {}
    for metric, _, _ in COLUMNS:
        found = [r.values[metric] for r in rows if r.values.get(metric) is not None]
        found = [v for v in found if not math.isnan(v)]
        if found:
            best[metric] = get_metric(metric).best(found)
    return Leaderboard(tuple(rows), best, _SOURCE if paper else "", tuple(warnings))


def _coverage(row: LeaderboardRow) -> str:
    if row.published:
        return "published"
    if row.coverage is None:
        return "-"
    scored, total = row.coverage
    return f"{scored}/{total}" + ("" if scored == total else " (partial)")


def _cells(board: Leaderboard, row: LeaderboardRow, mark, escape=lambda c: c) -> list[str]:
    """A row's cells, each escaped for the format and then, if best in its column, marked."""
    cells = []
    for metric, _, _ in COLUMNS:
        value = row.values.get(metric)
        is_best = value is not None and board.best.get(metric) == value
        text = escape(row.cell(metric))
        cells.append(mark(text) if is_best else text)
    runtime = [escape((row.runtime or {}).get(key, "") or "-") for key, _ in RUNTIME_COLUMNS]
    return [escape(row.name), *cells, *(runtime if board.runtime else []), escape(_coverage(row))]


#: LaTeX's special characters and what stands for each in text mode.
_LATEX = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
}


def _latex_escape(cell: str) -> str:
    """A cell as LaTeX text: every special character escaped (one pass, so none twice)."""
    return "".join(_LATEX.get(character, character) for character in cell)


def _markdown_escape(cell: str) -> str:
    """A cell of a GitHub table: `|` would start a column, a backslash or `*` would format."""
    return cell.replace("\\", "\\\\").replace("|", "\\|").replace("*", "\\*")


def render_leaderboard(board: Leaderboard, fmt: str = "text") -> str:
    """The leaderboard as `text`, `markdown`, `latex` (booktabs) or `csv`."""
    runtime = [header for _, header in RUNTIME_COLUMNS] if board.runtime else []
    headers = ["Run", *(header for _, _, header in COLUMNS), *runtime, "Coverage"]
    if fmt == "csv":
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(headers)
        writer.writerows(_cells(board, row, lambda c: c) for row in board.rows)
        return buffer.getvalue()
    if fmt == "markdown":
        lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
        lines += [
            "| "
            + " | ".join(_cells(board, r, lambda c: f"**{c}**", escape=_markdown_escape))
            + " |"
            for r in board.rows
        ]
    elif fmt == "latex":
        lines = [r"\begin{tabular}{l" + "r" * (len(headers) - 1) + "}", r"\toprule"]
        lines.append(" & ".join(_latex_escape(h) for h in headers) + r" \\")
        lines.append(r"\midrule")
        for row in board.rows:
            cells = _cells(board, row, lambda c: rf"\textbf{{{c}}}", escape=_latex_escape)
            lines.append(" & ".join(cells) + r" \\")
        lines += [r"\bottomrule", r"\end{tabular}"]
    elif fmt == "text":
        from ._render import format_table

        lines = [format_table(headers, (_cells(board, r, lambda c: f"{c}*") for r in board.rows))]
        lines.append("* best in its column")
    else:
        raise ValueError(f"unknown format {fmt!r}; choose text, markdown, latex or csv")
    if board.source:
        lines.append(f"Published rows: {board.source}.")
    return "\n".join(lines) + "\n"

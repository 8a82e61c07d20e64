"""The leaderboard rendered: text, Markdown (GitHub), LaTeX (booktabs) and CSV, each complete
and valid on its own, every cell escaped for its format and the best of its column marked.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from ..core import csv_text
from ._leaderboard import (
    _SOURCE,
    COLUMNS,
    RUNTIME_COLUMNS,
    Leaderboard,
    LeaderboardRow,
    _row_of,
    against_paper,
    as_printed,
    published_rows,
)
from ._report import EvalReport

__all__ = ["leaderboard_notes", "paper_comparison", "render_leaderboard"]


def _coverage(row: LeaderboardRow) -> str:
    if row.published:
        return "published"
    if row.coverage is None:
        return "-"
    scored, total = row.coverage
    return f"{scored}/{total}" + ("" if scored == total else " (partial)")


def _cells(
    board: Leaderboard,
    row: LeaderboardRow,
    mark: Callable[[str], str],
    escape: Callable[[str], str] = lambda c: c,
) -> list[str]:
    """A row's cells, each escaped for the format and then, if best in its column, marked."""
    cells = []
    for metric, _, _ in COLUMNS:
        value = row.values.get(metric)
        best = board.best_of(row).get(metric)
        is_best = row.complete and value is not None and best == as_printed(value)
        text = escape(row.cell(metric))
        cells.append(mark(text) if is_best else text)
    runtime = [escape((row.runtime or {}).get(key, "") or "-") for key, _ in RUNTIME_COLUMNS]
    group = [escape(row.group)] if board.grouped else []  # the paper's sections, the settings
    coverage = escape(_coverage(row))
    return [escape(row.name), *group, *cells, *(runtime if board.runtime else []), coverage]


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


def leaderboard_notes(board: Leaderboard) -> list[str]:
    """What a table's reader must know: where the published rows come from."""
    return [f"Published rows: {board.source}."] if board.source else []


def _csv_number(text: str) -> str:
    """A printed cell as a CSV number: empty when missing."""
    return "" if text in ("", "-") else text


def _csv_rows(board: Leaderboard) -> list[list[str]]:
    """Numeric, unrounded cells; interval bounds and token counts in their own columns."""
    rows = []
    for row in board.rows:
        values = []
        for metric, _, _ in COLUMNS:
            if row.printed is not None:
                values.append(_csv_number(row.printed.get(metric, "")))
            else:
                value = row.values.get(metric)
                values.append("" if value is None or math.isnan(value) else repr(float(value)))
            if metric == "auroc":
                bounds = row.auroc_interval
                values += [repr(b) for b in bounds] if bounds else ["", ""]
        runtime = []
        if board.runtime:
            cells = row.runtime or {}
            tokens = (cells.get("tokens_in_out_k") or "").split("/")
            runtime = [_csv_number(t) for t in (tokens + ["", ""])[:2]]
            runtime += [_csv_number(cells.get(k) or "")
                        for k in ("cost_usd", "cost_cached_usd", "time_s")]  # fmt: skip
        scored, total = row.coverage if row.coverage is not None else ("", "")
        published = "true" if row.published else "false"
        group = [row.group] if board.grouped else []
        rows.append([row.name, *group, *values, *runtime, str(scored), str(total), published])
    return rows


def _csv(board: Leaderboard) -> str:
    headers = ["run", *(["group"] if board.grouped else [])]
    for metric, _, _ in COLUMNS:
        headers.append(metric)
        if metric == "auroc":
            headers += ["auroc_low", "auroc_high"]
    if board.runtime:
        headers += ["tokens_in_k", "tokens_out_k", "cost_usd", "cost_cached_usd", "time_s"]
    headers += ["problems_scored", "problems_total", "published"]
    return csv_text(headers, _csv_rows(board))


def render_leaderboard(board: Leaderboard, fmt: str = "text") -> str:
    """The leaderboard as `text`, `markdown` (GitHub), `latex` (booktabs) or `csv`.

    Each is complete and valid on its own: text and Markdown end with their
    notes (Markdown after a blank line, so they are not read as a table row);
    LaTeX and CSV hold the table only (`leaderboard_notes` gives the notes, the
    CLI prints them on stderr). CSV is numeric and unrounded, with the AUROC
    interval's bounds and the token counts in their own columns and empty cells
    for missing values.
    """
    runtime = [header for _, header in RUNTIME_COLUMNS] if board.runtime else []
    group = ["Group"] if board.grouped else []
    headers = ["Run", *group, *(header for _, _, header in COLUMNS), *runtime, "Coverage"]
    if fmt == "csv":
        return _csv(board)
    notes = leaderboard_notes(board)
    if fmt == "markdown":
        lines = ["| " + " | ".join(headers) + " |", "|:---|" + "---:|" * (len(headers) - 1)]
        lines += [
            "| "
            + " | ".join(_cells(board, r, lambda c: f"**{c}**", escape=_markdown_escape))
            + " |"
            for r in board.rows
        ]
        lines += ["", *notes] if notes else []
    elif fmt == "latex":
        lines = [r"\begin{tabular}{l" + "r" * (len(headers) - 1) + "}", r"\toprule"]
        lines.append(" & ".join(_latex_escape(h) for h in headers) + r" \\")
        lines.append(r"\midrule")
        for row in board.rows:
            cells = _cells(board, row, lambda c: rf"\textbf{{{c}}}", escape=_latex_escape)
            lines.append(" & ".join("--" if c == "-" else c for c in cells) + r" \\")
        lines += [r"\bottomrule", r"\end{tabular}"]
    elif fmt == "text":
        from ._render import format_table

        lines = [format_table(headers, (_cells(board, r, lambda c: f"{c}*") for r in board.rows))]
        lines += ["* best in its column", *notes]
    else:
        raise ValueError(f"unknown format {fmt!r}; choose text, markdown, latex or csv")
    return "\n".join(lines) + "\n"


def paper_comparison(
    report: EvalReport, name: str = "this run"
) -> tuple[list[str], list[str], list[list[str]], str | None]:
    """A run beside the paper's Table 2 rows (the HTML report's table): headers, the run's cells
    (coverage against the paper's benchmark), the published rows' cells, the partial-run warning.
    The runtime columns are there when the run has them.
    """
    row, warning = against_paper(_row_of(name, report))
    rows = (row, *published_rows("end-to-end"))
    board = Leaderboard(rows, {}, _SOURCE)
    runtime = [header for _, header in RUNTIME_COLUMNS] if board.runtime else []
    headers = ["run", "group", *(header for _, _, header in COLUMNS), *runtime, "coverage"]
    cells = [_cells(board, r, lambda c: c) for r in rows]
    return headers, cells[0], cells[1:], warning

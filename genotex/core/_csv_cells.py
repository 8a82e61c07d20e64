"""One rule for every text cell genotex writes into a report's CSV (regress, diagnose, eval,
export, leaderboard): a cell a spreadsheet would run as a formula is made inert.

A gene name, a run's label or a finding comes from files a user hands us: one that starts
with `=`, `+`, `-`, `@`, a tab or a carriage return (`=HYPERLINK("http://evil","x")`) is
written with a leading `'`, as OWASP advises, so that a spreadsheet shows it as text. A
number is never touched (`-0.5` stays `-0.5`), and text that is a number stays as it is.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Iterable, Sequence

__all__ = ["csv_text", "safe_cell"]

_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def safe_cell(value: object) -> object:
    """A CSV cell as written: NaN and None empty, floats by `repr` (unrounded), formulas inert."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, str) and value.startswith(_FORMULA_STARTS) and not _is_number(value):
        return "'" + value
    return value


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def csv_text(headers: Sequence[object], rows: Iterable[Sequence[object]]) -> str:
    """A CSV table (newline line ends) whose every cell, headers included, is `safe_cell`'s."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow([safe_cell(h) for h in headers])
    writer.writerows([safe_cell(v) for v in row] for row in rows)
    return buffer.getvalue()

"""What a notebook shows of genotex's objects: a one-line repr and a small HTML table.

Every object a user holds (a recipe, a SOFT file, a result) prints in one line
of at most `REPR_CHARS` and renders in a notebook as a table of at most
`HTML_BYTES`, every cell escaped: never the whole platform table.
"""

from __future__ import annotations

import html
from collections.abc import Sequence

__all__ = ["HTML_BYTES", "REPR_CHARS", "clipped", "notebook_table"]

REPR_CHARS = 200
HTML_BYTES = 1024


def clipped(text: str, limit: int = REPR_CHARS) -> str:
    """`text` cut to `limit` characters, an ellipsis saying it was cut."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def notebook_table(caption: str, rows: Sequence[tuple[str, str]]) -> str:
    """A two-column HTML table (field, value), escaped, rows dropped to fit in `HTML_BYTES`."""
    head = f"<table><caption>{html.escape(clipped(caption, 120))}</caption>"
    tail = "</table>"
    body = ""
    for shown, (name, value) in enumerate(rows):
        cells = html.escape(clipped(name, 40)), html.escape(clipped(value, 160))
        row = f"<tr><th>{cells[0]}</th><td>{cells[1]}</td></tr>"
        more = f"<tr><td colspan=2>… {len(rows) - shown} more</td></tr>"
        if len((head + body + row + more + tail).encode()) > HTML_BYTES:
            return head + body + more + tail
        body += row
    return head + body + tail

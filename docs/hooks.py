"""MkDocs hook: pages written from genotex's own definitions, so the site cannot drift from them.

`<!-- genotex:metrics -->` becomes the metric registry as a table, and
`<!-- genotex:fields MODULE.CLASS -->` a schema class's fields with their
types and defaults.
"""

from __future__ import annotations

import dataclasses
import html
import importlib
import re
from typing import Any

_FIELDS = re.compile(r"<!-- genotex:fields ([\w.]+) -->")


def _metrics_table() -> str:
    from genotex.core import METRICS

    rows = [
        "| name | label | section | what it is | scale | better | averaged by | defined by |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for spec in METRICS.values():
        cells = [
            f"`{spec.name}`",
            spec.label,
            spec.section,
            spec.description.replace("|", "\\|"),
            spec.scale_text,
            spec.direction,
            spec.aggregation,
            spec.origin,
        ]
        rows.append("| " + " | ".join(cells) + " |")
    return "\n".join(rows)


def _fields_table(dotted: str) -> str:
    module, name = dotted.rsplit(".", 1)
    cls = getattr(importlib.import_module(module), name)
    rows = ["| field | type | default |", "|---|---|---|"]
    for field in dataclasses.fields(cls):
        if field.default is not dataclasses.MISSING:
            default = f"`{field.default!r}`"
        elif field.default_factory is not dataclasses.MISSING:
            default = f"`{field.default_factory()!r}`"
        else:
            default = "required"
        # a code span keeps a backslash before `|`: the type is written as HTML instead
        kind = html.escape(str(field.type)).replace("|", "&#124;")
        rows.append(f"| `{field.name}` | <code>{kind}</code> | {default} |")
    return "\n".join(rows)


def on_page_markdown(markdown: str, **_: Any) -> str:
    """Fill the placeholders of a page."""
    markdown = markdown.replace("<!-- genotex:metrics -->", _metrics_table())
    return _FIELDS.sub(lambda m: _fields_table(m.group(1)), markdown)

"""MkDocs hook: pages written from genotex's own definitions, so the site cannot drift from them.

`<!-- genotex:metrics -->` becomes the metric registry as a table,
`<!-- genotex:fields MODULE.CLASS -->` a schema class's fields with their
types and defaults, and `<!-- genotex:cli -->` the command-line reference from the
Click commands: real defaults (none where a command has none), placeholders shown as
written (`GEO/<trait>/<GSE>/`), examples as code blocks.
"""

from __future__ import annotations

import dataclasses
import html
import importlib
import inspect
import re
import textwrap
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


def _text(paragraph: str) -> str:
    """Help text as Markdown: HTML's special characters and table bars escaped."""
    return html.escape(" ".join(paragraph.split()), quote=False).replace("|", "&#124;")


def _help(text: str) -> list[str]:
    """A command's help: prose paragraphs as text, Click's "backslash b" blocks (the examples) as
    code blocks, their heading ("Examples:") above them.
    """
    out = []
    for paragraph in inspect.cleandoc(text or "").split("\n\n"):
        lines = paragraph.splitlines()
        if lines and lines[0].strip() == "\b":
            body = lines[1:]
            if body and body[0].strip().endswith(":") and not body[0].startswith(" "):
                out.append(f"**{_text(body[0])}**")
                body = body[1:]
            out.append("```text\n" + textwrap.dedent("\n".join(body)).strip("\n") + "\n```")
        elif paragraph.strip():
            out.append(_text(paragraph))
    return out


def _default(option: Any) -> str:
    """An option's default as shown: none when it has none (Click's UNSET), is a flag left
    off, or is computed when the command runs.
    """
    value = option.default
    if value is None or callable(value) or type(value).__name__ == "Sentinel":
        return ""
    if option.is_flag and value is False:
        return ""
    if isinstance(value, (list, tuple)):
        return ", ".join(f"`{v}`" for v in value)
    return f"`{value}`"


def _command(command: Any, path: str) -> str:
    import click

    ctx = click.Context(command, info_name=path)
    usage = " ".join([path, *command.collect_usage_pieces(ctx)])
    parts = [f"## `{path}`", *_help(command.help or ""), f"```text\nUsage: {usage}\n```"]
    rows = []
    for param in command.get_params(ctx):
        if not isinstance(param, click.Option) or param.hidden:
            continue
        names = ", ".join(f"`{n}`" for n in [*param.opts, *param.secondary_opts])
        kind = "flag" if param.is_flag else _text(param.make_metavar(ctx))
        rows.append(f"| {names} | {kind} | {_default(param)} | {_text(param.help or '')} |")
    if rows:
        parts.append("| option | value | default | what it does |\n|---|---|---|---|\n"
                     + "\n".join(rows))  # fmt: skip
    return "\n\n".join(parts)


def _cli_reference() -> str:
    import click

    from genotex.cli import main

    sections = []

    def walk(command: Any, path: str) -> None:
        if isinstance(command, click.Group):
            if path != "genotex":
                sections.append(_command(command, path))
            for name in sorted(command.commands):
                walk(command.commands[name], f"{path} {name}")
        elif not command.hidden:
            sections.append(_command(command, path))

    walk(main, "genotex")
    return "\n\n".join(sections)


def on_page_markdown(markdown: str, **_: Any) -> str:
    """Fill the placeholders of a page."""
    if "<!-- genotex:cli -->" in markdown:
        markdown = markdown.replace("<!-- genotex:cli -->", _cli_reference())
    markdown = markdown.replace("<!-- genotex:metrics -->", _metrics_table())
    return _FIELDS.sub(lambda m: _fields_table(m.group(1)), markdown)

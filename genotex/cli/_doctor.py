"""`genotex doctor`: what works here (versions, extras, sandboxes, tools, providers, cache)."""

from __future__ import annotations

import json

import click

from ..core import printable
from ._common import common_options, handle_errors, main
from ._progress import size


@main.command("doctor")
@click.option("--json", "as_json", is_flag=True, help="Everything as one JSON object on stdout.")
@click.option("--no-sandboxes", is_flag=True,
              help="Do not try the sandboxes (each is started once to see it work).")  # fmt: skip
@common_options
@handle_errors
def doctor_command(*, as_json: bool, no_sandboxes: bool) -> None:
    """Say what works here: genotex's version and the libraries its numbers depend on; each
    extra, installed or not, and what it enables; each sandbox, tried as a task tries it
    before its first sample; the tools the report, the LaTeX tables and the sandboxes use;
    the Inspect model providers whose SDK is installed; the table cache. Changes nothing and
    exits 0.

    \b
    Examples:
      genotex doctor
      genotex doctor --json --no-sandboxes
    """
    from ..harness import checkup

    found = checkup(sandboxes=not no_sandboxes)
    if as_json:
        click.echo(json.dumps(found.to_dict(), indent=2, sort_keys=True))
        return
    lines = [f"{k}: {printable(v)}" for k, v in found.versions.items()]
    sections = (("extras", found.extras), ("sandboxes", found.sandboxes),
                ("tools", found.tools), ("model providers", found.providers))  # fmt: skip
    for title, checks in sections:
        if not checks:
            continue
        lines += ["", f"{title}:"]
        for check in checks:
            mark = "ok " if check.ok else "no "
            enables = f" — {check.enables}" if check.enables else ""
            lines.append(f"  {mark} {check.name}: {printable(check.detail)}{enables}")
    cache = found.cache
    if "error" in cache:
        lines += ["", f"cache: {printable(cache['error'])}"]
    else:
        lines += ["", f"cache: {printable(cache['folder'])}, {cache['entries']:,} entries, "
                  f"{size(cache['bytes'])} of {size(cache['max_bytes'])}"]  # fmt: skip
    click.echo("\n".join(lines))

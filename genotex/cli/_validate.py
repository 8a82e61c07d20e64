"""`genotex validate` (a submission against the output contract, before scoring) and
`genotex tasks` (a benchmark's traits, conditions and problems).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from ..core import GenotexError
from ._common import common_options, handle_errors, main


@main.command("validate")
@click.argument("pred", type=click.Path(path_type=Path))
@click.option(
    "-r",
    "--ref",
    type=click.Path(path_type=Path),
    default=None,
    help="The reference output/ folder: only the problems it answers are expected.",
)
@click.option(
    "--task-info",
    type=click.Path(path_type=Path),
    default=None,
    help="task_info.json (default: metadata/ beside the reference, or beside PRED).",
)
@click.option("--json", "as_json", is_flag=True,
              help="The verdict as one JSON object on stdout (findings, counts, ok).")  # fmt: skip
@common_options
@handle_errors
def validate_command(pred: Path, ref: Path | None, task_info: Path | None, as_json: bool) -> None:
    """Check a submission (an output/ folder) against the output contract and the task's
    problems, before scoring: each missing, misnamed (with the expected name), malformed or
    extra file in one line, then the verdict (how many files, what was found), all on
    standard output. Exits 1 when any is found.

    \b
    Examples:
      genotex validate output -r reference/output
      genotex validate runs/mine/output --task-info BENCH/metadata/task_info.json
      genotex validate output -r reference/output --json > verdict.json
    """
    from ..core import metadata_beside
    from ..evaluation import validate_submission

    if ref is not None and not ref.is_dir():  # said as what it is, not as every answer "extra"
        raise GenotexError("the reference folder does not exist", path=ref)
    info = task_info or metadata_beside(ref if ref is not None else pred, "task_info.json")
    check = validate_submission(pred, info, ref)
    if as_json:
        click.echo(json.dumps({
            "ok": check.ok, "checked": check.checked, "counts": check.counts(),
            "findings": [{"path": f.path, "kind": f.kind, "message": f.message}
                         for f in check.findings],
        }, ensure_ascii=True, indent=1))  # fmt: skip
    else:
        for finding in check.findings:
            click.echo(finding.message)
        click.echo(check.summary())
    if not check.ok:
        sys.exit(1)


@main.command("tasks")
@click.argument("bench", type=click.Path(path_type=Path), default=Path("."))
@click.option("--task-info", type=click.Path(path_type=Path), default=None,
              help="task_info.json (default: BENCH/metadata/task_info.json).")  # fmt: skip
@click.option("--all", "show_all", is_flag=True,
              help="List every problem (by default the first 12 are named).")  # fmt: skip
@click.option("--json", "as_json", is_flag=True,
              help="Every trait and problem as one JSON object on stdout.")  # fmt: skip
@common_options
@handle_errors
def tasks_command(bench: Path, task_info: Path | None, show_all: bool, as_json: bool) -> None:
    """List a benchmark's traits, their conditions and problems (from its task_info.json).

    \b
    Examples:
      genotex tasks BENCH
      genotex tasks --task-info metadata/task_info.json --all
      genotex tasks BENCH --json
    """
    from ..core import TaskInfo, printable

    info = TaskInfo.read(task_info or bench / "metadata" / "task_info.json")
    problems = list(info.problems())
    if as_json:
        click.echo(json.dumps({
            "traits": {t: {"known_genes": len(info.genes_of(t)),
                           "conditions": list(info.conditions[t])} for t in info.traits},
            "problems": [p.key for p in problems],
        }, ensure_ascii=True, indent=1))  # fmt: skip
        return
    for trait in info.traits:
        conditions = ", ".join(printable(c) for c in info.conditions[trait]) or "none"
        known = len(info.genes_of(trait))
        click.echo(f"{printable(trait)}: {known} known genes; conditions: {conditions}")
    shown = problems if show_all else problems[:12]
    listed = ", ".join(printable(p.key) for p in shown)
    more = "" if len(shown) == len(problems) else f", ... (--all lists all {len(problems)})"
    click.echo(f"{len(info.traits)} traits, {len(problems)} problems: {listed}{more}",
               err=not show_all)  # fmt: skip

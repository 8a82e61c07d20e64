"""`genotex validate` (a submission against the output contract, before scoring) and
`genotex tasks` (a benchmark's traits, conditions and problems).
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

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
@common_options
@handle_errors
def validate_command(pred: Path, ref: Path | None, task_info: Path | None) -> None:
    """Check a submission (an output/ folder) against the output contract and the task's
    problems, before scoring: each missing, misnamed (with the expected name), malformed or
    extra file in one line. Exits 1 when any is found.

    \b
    Examples:
      genotex validate output -r reference/output
      genotex validate runs/mine/output --task-info BENCH/metadata/task_info.json
    """
    from ..core import metadata_beside
    from ..evaluation import validate_submission

    info = task_info or metadata_beside(ref if ref is not None else pred, "task_info.json")
    check = validate_submission(pred, info, ref)
    for finding in check.findings:
        click.echo(finding.message)
    click.echo(check.summary(), err=True)
    if not check.ok:
        sys.exit(1)


@main.command("tasks")
@click.argument("bench", type=click.Path(path_type=Path), default=Path("."))
@click.option("--task-info", type=click.Path(path_type=Path), default=None,
              help="task_info.json (default: BENCH/metadata/task_info.json).")  # fmt: skip
@common_options
@handle_errors
def tasks_command(bench: Path, task_info: Path | None) -> None:
    """List a benchmark's traits, their conditions and problems (from its task_info.json).

    \b
    Examples:
      genotex tasks BENCH
      genotex tasks --task-info metadata/task_info.json
    """
    from ..core import TaskInfo

    info = TaskInfo.read(task_info or bench / "metadata" / "task_info.json")
    problems = list(info.problems())
    for trait in info.traits:
        conditions = ", ".join(info.conditions[trait]) or "none"
        known = len(info.genes_of(trait))
        click.echo(f"{trait}: {known} known genes; conditions: {conditions}")
    click.echo(f"{len(info.traits)} traits, {len(problems)} problems: "
               + ", ".join(p.key for p in problems[:12])
               + (", ..." if len(problems) > 12 else ""), err=True)  # fmt: skip

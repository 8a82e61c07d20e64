"""`genotex eval`: score a prediction tree against the reference."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import click

from ._common import GreedyCommand, debug_option, handle_errors, main, tqdm_progress


@main.command("eval", cls=GreedyCommand)
@click.option(
    "-p",
    "--pred",
    "pred",
    required=True,
    type=click.Path(path_type=Path),
    help="The prediction's output/ folder (holding preprocess/ and regress/).",
)
@click.option(
    "-r",
    "--ref",
    "ref",
    default=Path("output"),
    show_default=True,
    type=click.Path(path_type=Path),
    help="The reference output/ folder.",
)
@click.option(
    "-t",
    "--tasks",
    "tasks",
    multiple=True,
    type=click.Choice(["selection", "preprocessing", "analysis"]),
    help="Tasks to evaluate (several after one flag); default: all three.",
)
@click.option(
    "-s",
    "--subtasks",
    "subtasks",
    multiple=True,
    type=click.Choice(["gene", "clinical", "linked"]),
    help="Preprocessing subtasks (several after one flag); default: all three.",
)
@click.option(
    "--task-info",
    type=click.Path(path_type=Path),
    default=None,
    help="task_info.json; default: metadata/task_info.json next to REF.",
)
@click.option(
    "--json",
    "json_path",
    type=click.Path(path_type=Path),
    default=None,
    help="Write the full report (unrounded numbers, problems found) as JSON.",
)
@click.option(
    "--csv",
    "csv_dir",
    type=click.Path(path_type=Path),
    default=None,
    help="Write per-trait, per-problem and per-file tables as CSV into this folder.",
)
@click.option(
    "--details", is_flag=True, help="Also print per-trait, per-problem and per-file tables."
)
@click.option(
    "--jobs",
    "-j",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="Worker processes for scoring preprocessed tables.",
)
@click.option(
    "--max-file-mb",
    type=click.FloatRange(min=0, min_open=True),
    default=512,
    show_default=True,
    help="Prediction files larger than this are treated as unreadable.",
)
@click.option("--no-progress", is_flag=True, help="Never show progress bars.")
@debug_option
@handle_errors
def eval_command(
    pred: Path,
    ref: Path,
    tasks: tuple[str, ...],
    subtasks: tuple[str, ...],
    task_info: Path | None,
    json_path: Path | None,
    csv_dir: Path | None,
    details: bool,
    jobs: int,
    max_file_mb: float,
    no_progress: bool,
) -> None:
    """Score a prediction tree against the reference with the published GenoTEX metrics."""
    from ..evaluation import SUBTASKS, TASKS, EvalOptions, evaluate

    options = EvalOptions(
        tasks=tuple(dict.fromkeys(tasks)) or TASKS,
        subtasks=tuple(dict.fromkeys(subtasks)) or SUBTASKS,
        jobs=jobs,
        max_file_mb=max_file_mb,
    )
    task_info = task_info or ref.parent / "metadata" / "task_info.json"
    started = time.perf_counter()
    progress = tqdm_progress(not no_progress)
    report = evaluate(pred, ref, task_info, options=options, progress=progress)
    emit_report(report, details=details, json_path=json_path, csv_dir=csv_dir)
    click.echo(f"evaluated in {time.perf_counter() - started:.1f} s", err=True)


def emit_report(
    report: Any, *, details: bool, json_path: Path | None, csv_dir: Path | None
) -> None:
    """Print the report's text; write its JSON and CSV tables when asked."""
    from ..core import write_text_atomic
    from ..evaluation import render_text, write_csv_tables

    click.echo(render_text(report, details=details), nl=False)
    if json_path is not None:
        write_text_atomic(json_path, report.to_json())
        click.echo(f"JSON report: {json_path}", err=True)
    if csv_dir is not None:
        written = write_csv_tables(report, csv_dir)
        click.echo(f"CSV tables: {len(written)} files in {csv_dir}", err=True)

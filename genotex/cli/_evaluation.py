"""`genotex eval`: score a prediction tree against the reference."""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path
from typing import Any

import click

from ..core import MAX_COLUMNS
from ._common import (
    FIGURE_FORMATS,
    MEGABYTES,
    SEED,
    GreedyCommand,
    debug_option,
    figure_options,
    handle_errors,
    jobs_option,
    main,
    tqdm_progress,
)


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
@jobs_option("Worker processes for scoring preprocessed tables.")
@click.option(
    "--label",
    default=None,
    help="The run's name in leaderboards, comparisons and the report (default: the file's).",
)
@click.option(
    "--max-columns",
    type=click.IntRange(min=1),
    default=MAX_COLUMNS,
    show_default=True,
    help="Prediction tables with more columns are unreadable (scored 0, with a finding).",
)
@click.option(
    "--max-file-mb",
    type=MEGABYTES,
    default=512,
    show_default=True,
    help="Prediction files larger than this are treated as unreadable.",
)
@click.option("--no-progress", is_flag=True, help="Never show progress bars.")
@click.option(
    "--ci", is_flag=True, help="Add a seeded percentile-bootstrap 95% interval to every average."
)
@click.option(
    "--exact-stats",
    is_flag=True,
    help="Add exact AUROC, average precision and GSEA prerank per problem.",
)
@click.option(
    "--report",
    "report_dir",
    type=click.Path(path_type=Path),
    default=None,
    help="Write an HTML report (index.html and figures) here; implies --ci and --exact-stats.",
)
@figure_options
@click.option(
    "--resamples",
    type=click.IntRange(min=100),
    default=10_000,
    show_default=True,
    help="Bootstrap resamples.",
)
@click.option(
    "--seed",
    type=SEED,
    default=0,
    show_default=True,
    help="Seed of the bootstrap and of GSEA's permutations.",
)
@click.option(
    "--gsea-permutations",
    type=click.IntRange(min=1),
    default=1000,
    show_default=True,
    help="GSEA prerank permutations (with --exact-stats or --report).",
)
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
    label: str | None,
    max_columns: int,
    max_file_mb: float,
    no_progress: bool,
    ci: bool,
    exact_stats: bool,
    report_dir: Path | None,
    figure_formats: tuple[str, ...],
    dpi: int,
    resamples: int,
    seed: int,
    gsea_permutations: int,
) -> None:
    """Score a prediction tree against the reference with the published GenoTEX metrics."""
    from ..evaluation import SUBTASKS, TASKS, BootstrapSettings, EvalOptions, evaluate

    options = EvalOptions(
        tasks=tuple(dict.fromkeys(tasks)) or TASKS,
        subtasks=tuple(dict.fromkeys(subtasks)) or SUBTASKS,
        jobs=jobs,
        max_file_mb=max_file_mb,
        max_columns=max_columns,
        label=label,
        ci=ci or report_dir is not None,
        bootstrap=BootstrapSettings(resamples=resamples, seed=seed),
        exact=exact_stats or report_dir is not None,
        gsea_permutations=gsea_permutations,
        gsea_seed=seed,
    )
    task_info = task_info or ref.parent / "metadata" / "task_info.json"
    check_outputs(json_path=json_path, csv_dir=csv_dir, report_dir=report_dir)
    started = time.perf_counter()
    progress = tqdm_progress(not no_progress)
    report = evaluate(pred, ref, task_info, options=options, progress=progress)
    emit_report(report, details=details, json_path=json_path, csv_dir=csv_dir)
    if report_dir is not None:
        from ..evaluation import write_report

        page = write_report(report, report_dir, formats=figure_formats or FIGURE_FORMATS, dpi=dpi)
        click.echo(f"HTML report: {page}", err=True)
    click.echo(f"evaluated in {time.perf_counter() - started:.1f} s", err=True)


def check_outputs(
    *, json_path: Path | None, csv_dir: Path | None, report_dir: Path | None = None
) -> None:
    """Check every place the command will write, before any work: one sentence if one cannot be."""
    from ..core import GenotexError, prepare_output_folder

    if json_path is not None:
        if json_path.is_dir():
            raise GenotexError("--json names a folder, not a file", path=json_path)
        prepare_output_folder(json_path.parent, what="--json file's folder")
    if csv_dir is not None:
        prepare_output_folder(csv_dir, what="--csv folder")
    if report_dir is not None:
        prepare_output_folder(report_dir, what="--report folder")


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


@main.command("compare")
@click.argument("a", type=click.Path(path_type=Path))
@click.argument("b", type=click.Path(path_type=Path))
@click.option(
    "--label",
    "labels",
    multiple=True,
    help="The runs' names, A's then B's (default: the label eval recorded, else the file's path).",
)
@click.option(
    "--resamples",
    type=click.IntRange(min=100),
    default=10_000,
    show_default=True,
    help="Bootstrap resamples of the paired differences.",
)
@click.option(
    "--seed", type=SEED, default=0, show_default=True, help="Seed of the bootstrap resampling."
)
@click.option(
    "--top",
    type=click.IntRange(min=1),
    default=5,
    show_default=True,
    help="Items with the largest differences to list per section.",
)
@click.option(
    "--json",
    "json_path",
    type=click.Path(path_type=Path),
    default=None,
    help="Also write the comparison as JSON.",
)
@debug_option
@handle_errors
def compare_command(
    a: Path,
    b: Path,
    labels: tuple[str, ...],
    resamples: int,
    seed: int,
    top: int,
    json_path: Path | None,
) -> None:
    """Is run B better than run A? Paired differences, intervals and Wilcoxon tests.

    A and B are saved `genotex eval --json` reports made against the same
    reference and task_info (refused otherwise, exit 1).
    """

    from ..core import json_text, write_text_atomic
    from ..evaluation import (
        BootstrapSettings,
        compare_reports,
        comparison_to_dict,
        load_report,
        render_comparison,
    )

    if labels and len(labels) != 2:
        raise click.UsageError(f"{len(labels)} --label for 2 runs: give A's, then B's")
    reports = load_report(a), load_report(b)
    names = labels or (reports[0].run.get("label") or str(a), reports[1].run.get("label") or str(b))
    if names[0] == names[1]:
        names = (f"{names[0]} (A)", f"{names[1]} (B)")
    settings = BootstrapSettings(resamples=resamples, seed=seed)
    comparison = compare_reports(*reports, names=names, settings=settings)
    click.echo(render_comparison(comparison, top=top), nl=False)
    if json_path is not None:
        write_text_atomic(json_path, json_text(comparison_to_dict(comparison)))


@main.command("leaderboard")
@click.argument("runs", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option(
    "--paper",
    "paper",
    is_flag=False,
    flag_value="end-to-end",
    default=None,
    type=click.Choice(["end-to-end", "analysis"]),
    help="Add the paper's published rows: Table 2 (end-to-end, the default) or Table 3 "
    "(analysis from expert-preprocessed data).",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "markdown", "latex", "csv"]),
    default="text",
    show_default=True,
    help="text; markdown (GitHub); latex (booktabs; notes on stderr); csv (numeric, unrounded; "
    "notes on stderr).",
)
@click.option(
    "--label",
    "labels",
    multiple=True,
    help="A run's name in the table, one per run in their order (default: the label eval "
    "recorded, else the file's name).",
)
@debug_option
@handle_errors
def leaderboard_command(
    runs: tuple[Path, ...], paper: str | None, fmt: str, labels: tuple[str, ...]
) -> None:
    """Saved runs in the layout of the paper's Table 2, sorted by AUROC, best per column marked.

    Example: genotex leaderboard a.json b.json --label "GPT-4o" --label "o1" --paper --format latex
    """
    from ..evaluation import leaderboard, leaderboard_notes, render_leaderboard

    if labels and len(labels) != len(runs):
        raise click.UsageError(f"{len(labels)} --label for {len(runs)} runs: give one per run")
    board = leaderboard(list(runs), paper=paper, labels=list(labels) or None)
    for warning in board.warnings:
        click.echo(f"genotex: warning: {warning}", err=True)
    click.echo(render_leaderboard(board, fmt), nl=False)
    if fmt in ("latex", "csv"):  # the table alone on stdout: `> table.tex` takes it as is
        for note in leaderboard_notes(board):
            click.echo(note, err=True)


@main.command("report")
@click.argument("runs", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option(
    "-o",
    "--out",
    "--report",
    "out",
    type=click.Path(path_type=Path),
    required=True,
    help="The folder for index.html and figures/ (--report, as on eval, is the same option).",
)
@click.option(
    "--label",
    "labels",
    multiple=True,
    help="A run's name on the page, one per run in their order (default: the label eval "
    "recorded, else run 1, run 2...).",
)
@figure_options
@debug_option
@handle_errors
def report_command(
    runs: tuple[Path, ...],
    out: Path,
    labels: tuple[str, ...],
    figure_formats: tuple[str, ...],
    dpi: int,
) -> None:
    """Render the HTML report of saved `eval --json` reports (recomputes nothing).

    One run: its full report. Several runs: a page comparing them (their headline
    averages and intervals side by side, in a table and a figure); they must have
    been scored against the same reference.

    \b
    Examples:
      genotex report run.json --out report/
      genotex report a.json b.json --label "GPT-4o" --label "o1" --out compared/ --figure-format pdf
    """
    from ..evaluation import load_report, write_report, write_runs_report

    if labels and len(labels) != len(runs):
        raise click.UsageError(f"{len(labels)} --label for {len(runs)} runs: give one per run")
    if len(set(labels)) != len(labels):
        raise click.UsageError("two runs have the same --label: give each its own")
    formats = figure_formats or FIGURE_FORMATS
    reports = [load_report(run) for run in runs]
    if len(reports) == 1:
        report = reports[0]
        if labels:
            report = dataclasses.replace(report, run={**report.run, "label": labels[0]})
        page = write_report(report, out, formats=formats, dpi=dpi)
    else:
        page = write_runs_report(
            reports, out, labels=list(labels) or None, formats=formats, dpi=dpi
        )
    click.echo(f"HTML report: {page}")

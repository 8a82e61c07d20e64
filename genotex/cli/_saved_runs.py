"""`genotex compare`, `leaderboard` and `report`: what is done with saved `eval --json` runs."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import click

from ._common import (
    FIGURE_FORMATS,
    SEED,
    AsciiIntRange,
    check_file_target,
    common_options,
    figure_options,
    handle_errors,
    main,
    resamples_option,
)


@main.command("compare")
@click.argument("a", type=click.Path(path_type=Path))
@click.argument("b", type=click.Path(path_type=Path))
@click.option(
    "--label",
    "labels",
    multiple=True,
    help="The runs' names, A's then B's (default: the label eval recorded, else the file's path).",
)
@resamples_option("Bootstrap resamples of the paired differences.")
@click.option(
    "--seed", type=SEED, default=0, show_default=True, help="Seed of the bootstrap resampling."
)
@click.option(
    "--top",
    type=AsciiIntRange(min=1),
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
@click.option(
    "--across-settings",
    is_flag=True,
    help="Compare runs of different settings (task arguments, library, budget; or none "
    "recorded): the difference is then the setting's as much as the agent's.",
)
@common_options
@handle_errors
def compare_command(  # noqa: PLR0913 - the command's options
    *,
    a: Path,
    b: Path,
    labels: tuple[str, ...],
    resamples: int,
    seed: int,
    top: int,
    json_path: Path | None,
    across_settings: bool,
) -> None:
    """Is run B better than run A? Paired differences, intervals and Wilcoxon tests.

    A and B are saved `genotex eval --json` reports made against the same
    reference and task_info, in the same setting (refused otherwise, exit 1;
    --across-settings compares runs of different settings).

    \b
    Example:
      genotex compare gpt4o.json o1.json --label GPT-4o --label o1 --json difference.json
    """
    from ..core import json_text, write_text_atomic
    from ..evaluation import (
        BootstrapSettings,
        SettingsDiffer,
        compare_reports,
        comparison_to_dict,
        load_report,
        render_comparison,
    )

    if labels and len(labels) != 2:
        raise click.UsageError(f"{len(labels)} --label for 2 runs: give A's, then B's")
    reports = load_report(a), load_report(b)
    names: tuple[str, str] = (
        (labels[0], labels[1])
        if labels
        else (str(reports[0].run.get("label") or a), str(reports[1].run.get("label") or b))
    )
    if names[0] == names[1]:
        names = (f"{names[0]} (A)", f"{names[1]} (B)")
    check_file_target(json_path, "--json")
    settings = BootstrapSettings(resamples=resamples, seed=seed)
    try:
        comparison = compare_reports(
            *reports, names=names, settings=settings, across_settings=across_settings
        )
    except SettingsDiffer as exc:  # the library's option, as this command spells it
        raise SettingsDiffer(exc.why, "--across-settings compares them anyway") from None
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
@click.option(
    "--by-setting",
    is_flag=True,
    help="Show runs of different settings (task arguments, library, budget; or none "
    "recorded) as separate groups, each ranked apart (refused otherwise).",
)
@common_options
@handle_errors
def leaderboard_command(
    runs: tuple[Path, ...], paper: str | None, fmt: str, labels: tuple[str, ...], by_setting: bool
) -> None:
    """Saved runs in the layout of the paper's Table 2, sorted by AUROC, best per column marked.

    Runs of different settings (a harness run's task arguments and budget, as its
    export records them) are refused, or shown as groups with --by-setting; a run
    that records no setting (a plain eval) is "setting unknown".

    \b
    Example:
      genotex leaderboard a.json b.json --label "GPT-4o" --label "o1" --paper --format latex
    """
    from ..evaluation import SettingsDiffer, leaderboard, leaderboard_notes, render_leaderboard

    if labels and len(labels) != len(runs):
        raise click.UsageError(f"{len(labels)} --label for {len(runs)} runs: give one per run")
    try:
        board = leaderboard(
            list(runs), paper=paper, labels=list(labels) or None, by_setting=by_setting
        )
    except SettingsDiffer as exc:  # the library's option, as this command spells it
        raise SettingsDiffer(exc.why, "--by-setting shows them as separate groups") from None
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
@common_options
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

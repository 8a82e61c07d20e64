"""`genotex regress`: answer problems with the standardized regression pipeline."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from ..core import MODES, SELECT_BY, GenotexError, Mode, SelectBy, TableCache, printable
from ._common import (
    AsciiIntRange,
    cache_options,
    common_options,
    handle_errors,
    jobs_option,
    main,
    scheduler_option,
)
from ._progress import ItemProgress, say


@main.command("regress")
@click.option(
    "--trait",
    "traits",
    multiple=True,
    help="A trait to answer (repeatable); all its problems unless --condition.",
)
@click.option(
    "--condition",
    default=None,
    help="Answer only (trait, condition); 'None' for the unconditional problem.",
)
@click.option("--all", "all_problems", is_flag=True, help="Answer every problem of task_info.json.")
@click.option(
    "--preprocessed",
    "--data",
    "data",
    type=click.Path(path_type=Path),
    default=Path("output/preprocess"),
    show_default=True,
    help="The preprocess folder holding <trait>/cohort_info.json and linked CSVs "
    "(--data is the same option, its 0.2 name).",
)
@click.option(
    "-i",
    "--input",
    "old_input",
    type=click.Path(path_type=Path),
    default=None,
    hidden=True,
    help="Before 0.13, the preprocess folder: now --preprocessed (-i/--input names the raw "
    "input/ folder in preprocess and diagnose).",
)
@click.option(
    "--task-info",
    type=click.Path(path_type=Path),
    default=Path("metadata/task_info.json"),
    show_default=True,
    help="task_info.json (related genes and conditions).",
)
@click.option(
    "-o",
    "--out",
    type=click.Path(path_type=Path),
    default=Path("output/regress"),
    show_default=True,
    help="Where significant_genes_condition_<C>.json files are written.",
)
@jobs_option("Problems answered in parallel processes.")
@scheduler_option("Answer the problems on this Dask distributed scheduler instead of --jobs.")
@cache_options
@click.option("--force", is_flag=True, help="Redo problems whose output already exists.")
@click.option(
    "--summary",
    type=click.Path(path_type=Path),
    default=None,
    help="Run summary JSON (status.json schema); default: OUT/status.json.",
)
@click.option(
    "--mode",
    type=click.Choice(MODES),
    default="reference",
    show_default=True,
    help="reference: the published pipeline, exactly; standard: converged Lasso, "
    "sign-invariant LMM, alpha chosen by --select-by (README: when to use which).",
)
@click.option(
    "--select-by",
    type=click.Choice(SELECT_BY),
    default=None,
    help="standard mode's alpha rule: CV prediction loss (default) or the reference's "
    "selection precision against the known genes.",
)
@click.option(
    "--model",
    type=click.Choice(["auto", "lasso", "lmm"]),
    default="auto",
    show_default=True,
    help="The model: the batch-effect test's choice (auto, as published), or the plain Lasso "
    "or LMM whatever the test says (the paper's Table 3 rows).",
)
@common_options
@click.option(
    "--csv",
    "csv_dir",
    type=click.Path(path_type=Path),
    default=None,
    help="Also write every gene's statistics of each answered problem (coefficient, rank, "
    "selection frequency; marginal effect, t, p, BH FDR) as "
    "DIR/<trait>/gene_table_condition_<C>.csv.",
)
@click.option(
    "--frequency-resamples",
    type=AsciiIntRange(min=0),
    default=50,
    show_default=True,
    help="Random halves of the samples for --csv's selection frequency (standard mode; 0: none).",
)
@handle_errors
def regress_command(
    *,
    traits: tuple[str, ...],
    condition: str | None,
    all_problems: bool,
    data: Path,
    old_input: Path | None,
    task_info: Path,
    out: Path,
    jobs: int,
    scheduler: str | None,
    cache: TableCache | None,
    force: bool,
    summary: Path | None,
    mode: Mode,
    select_by: SelectBy | None,
    model: str,
    csv_dir: Path | None,
    frequency_resamples: int,
) -> None:
    """Answer problems with the standardized GenoTEX regression pipeline.

    Each problem's result is written as soon as it is known, and a problem whose
    result exists is kept unless --force; an interrupted run resumes where it stopped.

    \b
    Examples:
      genotex regress --trait Asthma --condition Age
      genotex regress --all --jobs 4 --mode standard --out output/regress_standard
      genotex regress --all --model lasso --out output/regress_lasso
    """
    from ..core import TaskInfo
    from ..regression import run_problems

    data = _preprocessed_folder(data, old_input)
    if all_problems == bool(traits):
        raise click.UsageError("give either --all or --trait (one or more)")
    if condition is not None and len(traits) != 1:
        raise click.UsageError("--condition goes with exactly one --trait")
    if select_by is not None and mode != "standard":
        raise click.UsageError(
            "--select-by goes with --mode standard (the reference mode's rule is fixed)"
        )
    if not data.is_dir():
        raise GenotexError("the data folder does not exist", path=data)
    info = TaskInfo.read(task_info)
    if (repeated := info.repeated_genes_note()) is not None:
        say(f"note: {printable(repeated)}", err=True)
    problems = info.select(traits, condition)
    with ItemProgress(len(problems), unit="problems") as progress:

        def show(outcome: Any) -> None:
            said = outcome.detail and not outcome.detail.startswith("kept:")
            detail = f" — {outcome.detail}" if said else ""
            how = f", {outcome.how.replace('(force)', '(--force)')}" if outcome.ok else ""
            line = f"{outcome.outcome}{how}{detail}"
            failed = outcome.outcome.failed
            seconds = (
                None if outcome.kept else outcome.seconds
            )  # an earlier run's time is not now's
            progress(f"{outcome.problem.key}: ", line, failed=failed, seconds=seconds)

        status = run_problems(
            problems,
            data,
            info,
            out,
            jobs=jobs,
            scheduler=scheduler,
            cache=cache,
            force=force,
            on_outcome=show,
            summary=summary or out / "status.json",
            mode=mode,
            select_by=select_by or "prediction",
            model=model,
        )
    if csv_dir is not None:
        _gene_tables(status, (data, info, out, csv_dir), cache, frequency_resamples)
    counts, kept = status.counts(), status.kept()
    click.echo(
        f"{len(status.problems)} problem{'' if len(status.problems) == 1 else 's'}: "
        f"{counts['ok'] - kept} answered, "
        f"{kept} kept from an earlier run, {counts['skipped']} skipped, "
        f"{counts['failed']} failed; results in {out}",
        err=True,
    )
    if counts["failed"]:
        sys.exit(1)


def _preprocessed_folder(data: Path, old_input: Path | None) -> Path:
    """--preprocessed, or the pre-0.13 -i/--input (which named this folder here only)."""
    if old_input is None:
        return data
    ctx = click.get_current_context()
    if ctx.get_parameter_source("data") is not click.core.ParameterSource.DEFAULT:
        raise click.UsageError("-i/--input is --preprocessed's old name: give one of them")
    say(
        "warning: regress's -i/--input is --preprocessed since 0.13 (-i names the raw input/ "
        "folder in preprocess and diagnose); the old name will be removed in 1.0"
    )
    return old_input


def _gene_tables(status: Any, where: tuple, cache: TableCache | None, resamples: int) -> None:
    """--csv: every answered problem's gene table, after the run."""
    from ..core import ProblemId
    from ..regression import write_gene_tables

    data, info, out, csv_dir = where
    answered = [ProblemId.from_key(p.key) for p in status.problems if p.outcome.kind == "ok"]
    tables = write_gene_tables(answered, data, info, out, csv_dir, cache=cache, resamples=resamples)
    click.echo(f"gene tables: {len(tables)} files in {csv_dir}", err=True)

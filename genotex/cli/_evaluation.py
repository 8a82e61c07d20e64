"""`genotex eval`: score a prediction tree against the reference."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import click

from ..core import MAX_COLUMNS, TableCache, metadata_beside
from ._common import (
    FIGURE_FORMATS,
    MEGABYTES,
    SEED,
    AsciiIntRange,
    GreedyCommand,
    cache_options,
    common_options,
    figure_options,
    handle_errors,
    jobs_option,
    main,
    resamples_option,
    scheduler_option,
    tqdm_progress,
)
from ._progress import say


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
    help="task_info.json; default: metadata/ next to REF or next to its parent.",
)
@click.option(
    "--trait",
    "traits",
    multiple=True,
    help="Score this trait only (repeatable): a subset, said as one, the others not failed.",
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
@scheduler_option("Score the table pairs on this Dask distributed scheduler instead of --jobs.")
@cache_options
@click.option(
    "--label",
    default=None,
    help="The run's name in leaderboards, comparisons and the report (default: the file's).",
)
@click.option(
    "--max-columns",
    type=AsciiIntRange(min=1),
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
@click.option(
    "--diagnose",
    "diagnose_mode",
    type=click.Choice(["standard", "reference"]),
    default=None,
    help="Also say where the points were lost (genotex diagnose), its substitutes made by "
    "this mode; in the JSON, the CSV tables and the report.",
)
@figure_options
@resamples_option("Bootstrap resamples.")
@click.option(
    "--seed",
    type=SEED,
    default=0,
    show_default=True,
    help="Seed of the bootstrap and of GSEA's permutations.",
)
@click.option(
    "--gsea-permutations",
    type=AsciiIntRange(min=1),
    default=1000,
    show_default=True,
    help="GSEA prerank permutations (with --exact-stats or --report).",
)
@common_options
@handle_errors
def eval_command(
    *,
    pred: Path,
    ref: Path,
    tasks: tuple[str, ...],
    subtasks: tuple[str, ...],
    task_info: Path | None,
    traits: tuple[str, ...],
    json_path: Path | None,
    csv_dir: Path | None,
    details: bool,
    jobs: int,
    scheduler: str | None,
    cache: TableCache | None,
    label: str | None,
    max_columns: int,
    max_file_mb: float,
    ci: bool,
    exact_stats: bool,
    report_dir: Path | None,
    figure_formats: tuple[str, ...],
    dpi: int,
    resamples: int,
    seed: int,
    gsea_permutations: int,
    diagnose_mode: str | None,
) -> None:
    """Score a prediction tree against the reference with the published GenoTEX metrics.

    \b
    Examples:
      genotex eval -p output -r reference/output --task-info metadata/task_info.json
      genotex eval -p output -r reference/output --json run.json --label "my agent" --report report/
    """
    from .._evaluate import evaluate
    from ..core import check_mode
    from ..evaluation import SUBTASKS, TASKS, BootstrapSettings, EvalOptions

    options = EvalOptions(
        tasks=tuple(dict.fromkeys(tasks)) or TASKS,
        subtasks=tuple(dict.fromkeys(subtasks)) or SUBTASKS,
        jobs=jobs,
        max_file_mb=max_file_mb,
        max_columns=max_columns,
        label=label,
        traits=tuple(dict.fromkeys(traits)),
        ci=ci or report_dir is not None,
        bootstrap=BootstrapSettings(resamples=resamples, seed=seed),
        exact=exact_stats or report_dir is not None,
        gsea_permutations=gsea_permutations,
        gsea_seed=seed,
        cache=cache,
        scheduler=scheduler,
    )
    _not_itself(pred, ref)
    task_info = task_info or metadata_beside(ref, "task_info.json")
    check_outputs(json_path=json_path, csv_dir=csv_dir, report_dir=report_dir, reference=ref)
    started = time.perf_counter()
    progress = tqdm_progress()
    report = evaluate(
        pred,
        ref,
        task_info,
        options=options,
        progress=progress,
        diagnose=diagnose_mode is not None,
        diagnose_mode=check_mode(diagnose_mode or "standard"),
    )
    emit_report(report, details=details, json_path=json_path, csv_dir=csv_dir)
    from ..evaluation import validate_submission

    check = validate_submission(pred, task_info, ref, read_tables=False)  # eval read them
    if not check.ok:  # a misnamed file scores 0 unsaid: one line, and where they are named
        say(f"validate: {check.summary()}; `genotex validate {pred} -r {ref}` names them")
    if report_dir is not None:
        from ..evaluation import write_report

        page = write_report(report, report_dir, formats=figure_formats or FIGURE_FORMATS, dpi=dpi)
        say(f"HTML report: {page}")
    say(f"evaluated in {time.perf_counter() - started:.1f} s")


def _not_itself(pred: Path, ref: Path) -> None:
    """Refuse to score a folder against itself when `-r` was left to its default
    (`eval -p output` in a demo root: a page of 100s), naming where a demo's reference is
    when it is there. Given explicitly (`-p reference/output -r reference/output`, the
    reference's own row), it is scored.
    """
    from click.core import ParameterSource

    given = click.get_current_context().get_parameter_source("ref") != ParameterSource.DEFAULT
    if given or not (pred.exists() and ref.exists() and pred.resolve() == ref.resolve()):
        return
    beside = pred.resolve().parent / "reference" / "output"
    hint = f" (here: -r {beside})" if beside.is_dir() else ""
    raise click.UsageError(
        f"the prediction is the reference ({ref}): give the reference output/ with -r{hint}"
    )


def check_outputs(
    *,
    json_path: Path | None,
    csv_dir: Path | None,
    report_dir: Path | None = None,
    reference: Path | None = None,
) -> None:
    """Check every place the command will write, before any work: one sentence if one cannot be
    (the call's own reference `-r` among the folders none may be in).
    """
    refs = [] if reference is None else [reference]
    from ..core import GenotexError, prepare_output_folder

    if json_path is not None:
        if json_path.is_dir():
            raise GenotexError("--json names a folder, not a file", path=json_path)
        prepare_output_folder(
            json_path.parent, what="--json file's folder", for_file=True, references=refs
        )
    if csv_dir is not None:
        prepare_output_folder(csv_dir, what="--csv folder", references=refs)
    if report_dir is not None:
        prepare_output_folder(report_dir, what="--report folder", references=refs)


def emit_report(
    report: Any, *, details: bool, json_path: Path | None, csv_dir: Path | None
) -> None:
    """Print the report's text; write its JSON and CSV tables when asked."""
    from ..core import write_text_atomic
    from ..evaluation import render_text, write_csv_tables

    click.echo(render_text(report, details=details), nl=False)
    if json_path is not None:
        write_text_atomic(json_path, report.to_json())
        say(f"JSON report: {json_path}")
    if csv_dir is not None:
        written = write_csv_tables(report, csv_dir)
        if report.diagnosis is not None:
            from ..evaluation import write_diagnosis_csv

            written += write_diagnosis_csv(report.diagnosis, csv_dir / "diagnosis")
        say(f"CSV tables: {len(written)} files in {csv_dir}")

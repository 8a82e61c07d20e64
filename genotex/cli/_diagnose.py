"""`genotex diagnose`: where a prediction lost its points, stage by stage, with the evidence."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from ._common import (
    MEGABYTES,
    AsciiIntRange,
    cache_options,
    common_options,
    handle_errors,
    jobs_option,
    main,
    scheduler_option,
    tqdm_progress,
)
from ._evaluation import check_outputs

if TYPE_CHECKING:
    from ..core import TableCache
    from ..evaluation import Diagnosis
from ._progress import say


def _compare(paths: tuple[Path, Path]) -> None:
    from ..evaluation import compare_diagnoses, load_diagnosis, render_diagnosis_comparison

    a, b = (load_diagnosis(p) for p in paths)
    labels = tuple(p.stem for p in paths)
    if labels[0] == labels[1]:
        labels = (str(paths[0]), str(paths[1]))
    click.echo(render_diagnosis_comparison(compare_diagnoses(a, b, labels)), nl=False)


@main.command("diagnose")
@click.option("-p", "--pred", type=click.Path(path_type=Path), default=None,
              help="The prediction's output/ folder.")  # fmt: skip
@click.option("-r", "--ref", type=click.Path(path_type=Path), default=Path("output"),
              show_default=True, help="The reference output/ folder.")  # fmt: skip
@click.option("--task-info", type=click.Path(path_type=Path), default=None,
              help="task_info.json; default: metadata/ next to REF or its parent.")  # fmt: skip
@click.option(
    "--mode",
    type=click.Choice(["standard", "reference"]),
    default="standard",
    show_default=True,
    help="The pipeline that makes the substitutes (reference: the published one, slower).",
)
@click.option("--trait", "traits", multiple=True,
              help="Diagnose this trait only (repeatable): the others not failed.")  # fmt: skip
@click.option(
    "--task",
    type=click.Choice(["e2e", "analysis"]),
    default=None,
    help="What the run was: e2e (a missing preprocess/ is its loss) or analysis (given the "
    "reference's data); default: analysis when preprocess/ is empty.",
)
@click.option("--synonyms", type=click.Path(path_type=Path), default=None,
              help="gene_synonym.json; default: metadata/ next to REF, if there.")  # fmt: skip
@click.option("-i", "--input", "input_dir", type=click.Path(path_type=Path), default=None,
              help="The benchmark's input/ folder, to name the characteristics row a wrong "
              "trait came from; default: input/ beside PRED, if there.")  # fmt: skip
@click.option("--json", "json_path", type=click.Path(path_type=Path), default=None,
              help="Write the whole diagnosis as JSON.")  # fmt: skip
@click.option("--csv", "csv_dir", type=click.Path(path_type=Path), default=None,
              help="Write problems.csv, findings.csv and stages.csv into this folder.")  # fmt: skip
@click.option("--figure", "figure_path", type=click.Path(path_type=Path), default=None,
              help="Write the histogram of error classes (.png, .svg or .pdf).")  # fmt: skip
@click.option("--against", type=click.Path(path_type=Path), default=None,
              help="Compare with another saved diagnosis (--json, or eval.json).")  # fmt: skip
@click.option("--compare", nargs=2, type=click.Path(path_type=Path), default=None,
              help="Only compare two saved diagnoses (no -p).")  # fmt: skip
@click.option("--limit", type=AsciiIntRange(min=0), default=40, show_default=True,
              help="Problems listed on screen (--csv has them all).")  # fmt: skip
@jobs_option("Worker processes for the checks and the re-analyses.")
@scheduler_option("Run the checks and the re-analyses on this Dask scheduler instead of --jobs.")
@cache_options
@click.option("--max-file-mb", type=MEGABYTES, default=512, show_default=True,
              help="Prediction files larger than this are unreadable.")  # fmt: skip
@common_options
@handle_errors
def diagnose_command(
    *,
    pred: Path | None,
    ref: Path,
    task_info: Path | None,
    mode: str,
    traits: tuple[str, ...],
    task: str | None,
    synonyms: Path | None,
    input_dir: Path | None,
    json_path: Path | None,
    csv_dir: Path | None,
    figure_path: Path | None,
    against: Path | None,
    compare: tuple[Path, Path] | None,
    limit: int,
    jobs: int,
    scheduler: str | None,
    cache: TableCache | None,
    max_file_mb: float,
) -> None:
    """Say where a prediction lost its points: each problem's F1 loss split into stages by
    re-running the standardized analysis on substituted data, and the errors found in its
    files (error classes with the numbers that show them).

    \b
    Examples:
      genotex diagnose -p output -r reference/output
      genotex diagnose -p output -r reference/output --json diagnosis.json --csv diagnosis/
      genotex diagnose --compare agentA.json agentB.json
    """
    if compare:
        _compare(compare)
        return
    if pred is None:
        raise click.UsageError("give the prediction with -p (or two saved diagnoses to --compare)")
    from ..core import GenotexError, check_mode, metadata_beside, prepare_output_folder
    from ..evaluation import load_diagnosis, render_diagnosis
    from ..preprocessing import load_synonyms
    from ..workflows import diagnose

    check_outputs(json_path=json_path, csv_dir=csv_dir, report_dir=None, reference=ref)
    if figure_path is not None:
        from ..evaluation import figure_format_of

        figure_format_of(figure_path)
        if figure_path.is_dir():
            raise GenotexError("--figure names a folder, not a file", path=figure_path)
        prepare_output_folder(figure_path.parent, what="--figure file's folder", for_file=True)
    saved = load_diagnosis(against) if against is not None else None
    task_info = task_info or metadata_beside(ref, "task_info.json")
    synonyms = synonyms or metadata_beside(ref, "gene_synonym.json")
    mapping = None
    if synonyms.exists():
        try:
            mapping = load_synonyms(synonyms)
        except GenotexError as exc:
            say(f"warning: {exc}; labels are compared without synonyms")
    diagnosis = diagnose(
        pred,
        ref,
        task_info,
        mode=check_mode(mode),
        jobs=jobs,
        scheduler=scheduler,
        synonyms=mapping,
        max_file_mb=max_file_mb,
        progress=tqdm_progress(),
        cache=cache,
        input_dir=input_dir or _beside(pred, "input"),
        traits=traits,
        given_data=None if task is None else task == "analysis",
        reached_pipeline=_reached_beside(pred),
    )
    click.echo(render_diagnosis(diagnosis, limit=limit), nl=False)
    _write(diagnosis, json_path, csv_dir, figure_path)
    if saved is not None:
        from ..evaluation import compare_diagnoses, render_diagnosis_comparison

        labels = ("this run", against.stem if against else "saved")
        click.echo(render_diagnosis_comparison(compare_diagnoses(diagnosis, saved, labels)))


def _reached_beside(pred: Path) -> list[str]:
    """An exported agent run's steps that called genotex's pipeline, from the `eval.json`
    `harness export` writes beside its `output/` (none when there is no readable one).
    """
    from ..core import GenotexError
    from ..evaluation import load_report, reached_pipeline

    saved = _beside(pred, "eval.json", folder=False)
    if saved is None:
        return []
    try:
        return reached_pipeline(load_report(saved))
    except GenotexError as exc:
        say(f"warning: {exc}; the run's record beside the prediction is not read")
        return []


def _beside(pred: Path, name: str, *, folder: bool = True) -> Path | None:
    """`name` in the folder that holds PRED (an output/ folder), if it is there."""
    found = pred.resolve().parent / name
    return found if (found.is_dir() if folder else found.is_file()) else None


def _write(
    diagnosis: Diagnosis, json_path: Path | None, csv_dir: Path | None, figure: Path | None
) -> None:
    from ..core import json_text, write_text_atomic
    from ..evaluation import write_diagnosis_csv, write_diagnosis_figure

    if json_path is not None:
        write_text_atomic(json_path, json_text(diagnosis.to_dict()))
        say(f"JSON diagnosis: {json_path}")
    if csv_dir is not None:
        written = write_diagnosis_csv(diagnosis, csv_dir)
        say(f"CSV tables: {len(written)} files in {csv_dir}")
    if figure is not None:
        say(f"figure: {write_diagnosis_figure(diagnosis, figure)}")

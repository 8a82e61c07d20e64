"""`genotex demo`: the whole pipeline on a generated benchmark, no download."""

from __future__ import annotations

import logging
import sys
import tempfile
import time
from pathlib import Path

import click

from ._common import debug_option, handle_errors, main
from ._evaluation import emit_report

_WHERE = """
Where everything is ({stages}):
  raw inputs        {folder}/input (GEO series matrices + SOFT, one Xena cohort)
  recipes           {folder}/recipes
  task_info         {folder}/metadata/task_info.json
  pipeline output   {folder}/output (preprocess/, regress/ with status.json)
  true answers      {folder}/reference/output
  scorecard JSON    {folder}/eval_report.json
Re-run a stage yourself, from {folder}:
  genotex preprocess --all --input input --out output/preprocess
  genotex regress --all --force
  genotex eval -p output -r reference/output --task-info metadata/task_info.json --details"""


@main.command("demo")
@click.option(
    "--out",
    type=click.Path(path_type=Path),
    default=None,
    help="Folder for the generated benchmark (default: a new temporary folder).",
)
@click.option("--seed", type=int, default=7, show_default=True, help="Seed of the generator.")
@click.option(
    "--eval-only",
    is_flag=True,
    help="Only the quick evaluation demo (a generated reference and prediction).",
)
@click.option("--jobs", "-j", type=click.IntRange(min=1), default=1, show_default=True)
@click.option(
    "--details", is_flag=True, help="Also print the per-trait, per-problem and per-file tables."
)
@debug_option
@handle_errors
def demo_command(out: Path | None, seed: int, eval_only: bool, jobs: int, details: bool) -> None:
    """Run the whole pipeline (preprocess -> regress -> eval) on a generated benchmark."""
    from ..workflows import run_demo, run_eval_demo

    folder = out if out is not None else Path(tempfile.mkdtemp(prefix="genotex-demo-"))
    started = time.perf_counter()
    json_path = folder / "eval_report.json"
    if eval_only:
        demo = run_eval_demo(folder, seed=seed)
        click.echo(f"example written to {folder}", err=True)
        emit_report(demo.report, details=details, json_path=json_path, csv_dir=None)
        pred, ref = demo.example.pred_output, demo.example.ref_output
        click.echo(f"\nTry it yourself:\n  genotex eval -p {pred} -r {ref} --details", err=True)
    else:
        logging.basicConfig(level=logging.INFO, format="  %(message)s", stream=sys.stderr)
        click.echo(
            f"generating a small benchmark in {folder} and running the pipeline ...", err=True
        )
        run = run_demo(folder, seed=seed, jobs=jobs)
        emit_report(run.report, details=details, json_path=json_path, csv_dir=None)
        stages = ", ".join(f"{name} {s:.1f} s" for name, s in run.seconds.items())
        click.echo(_WHERE.format(stages=stages, folder=folder), err=True)
    click.echo(f"demo finished in {time.perf_counter() - started:.1f} s", err=True)

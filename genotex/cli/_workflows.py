"""`genotex demo`: the whole pipeline on a generated benchmark, no download."""

from __future__ import annotations

import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import click

from ..core import CHANCE_ACCURACY, Mode
from ._common import SEED, common_options, handle_errors, jobs_option, main
from ._evaluation import emit_report
from ._progress import say

if TYPE_CHECKING:
    from ..workflows import KeyFit

_WHERE = """
Where everything is ({stages}):
  raw inputs        {folder}/input (GEO series matrices + SOFT, Xena cohorts)
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
    "-o",
    "--out",
    type=click.Path(path_type=Path),
    default=None,
    help="Folder for the generated benchmark (default: a new temporary folder).",
)
@click.option("--seed", type=SEED, default=7, show_default=True, help="Seed of the generator.")
@click.option(
    "--eval-only",
    is_flag=True,
    help="Only the quick evaluation demo (a generated reference and prediction).",
)
@jobs_option()
@click.option(
    "--details", is_flag=True, help="Also print the per-trait, per-problem and per-file tables."
)
@click.option(
    "--inputs-only",
    is_flag=True,
    help="Only write the raw benchmark without recipes (what `genotex baseline` starts from).",
)
@click.option(
    "--realistic",
    is_flag=True,
    help="Cohorts that vary as real GEO and TCGA cohorts do (phrasings, codes, a constant or "
    "absent trait, another annotation column, a wrong TCGA folder, batches, a two-step "
    "condition that matters), run through `genotex baseline`.",
)
@common_options
@handle_errors
def demo_command(
    *,
    out: Path | None,
    seed: int,
    eval_only: bool,
    jobs: int,
    details: bool,
    inputs_only: bool,
    realistic: bool,
) -> None:
    """Run the whole pipeline (preprocess -> regress -> eval) on a generated benchmark.

    \b
    Examples:
      genotex demo --eval-only
      genotex demo --out demo --jobs 2 --details
      genotex demo --realistic --inputs-only --out realistic
    """
    from ..workflows import (
        run_demo,
        run_eval_demo,
        write_raw_benchmark,
        write_realistic_benchmark,
    )

    if eval_only and realistic:
        raise click.UsageError("--realistic generates a benchmark; --eval-only does not")

    folder = out if out is not None else Path(tempfile.mkdtemp(prefix="genotex-demo-"))
    started = time.perf_counter()
    json_path = folder / "eval_report.json"
    if inputs_only:
        if realistic:
            bench = write_realistic_benchmark(folder, seed=seed)
        else:
            bench = write_raw_benchmark(folder, seed=seed, recipes=False)
        if bench.replaced:
            say(f"note: {bench.replaced}", err=True)
        _say_keys(bench.keys)
        say(
            f"{'realistic' if realistic else 'raw'} benchmark (no recipes) written to {folder}\n"
            f"  genotex baseline {folder}\n"
            f"  genotex eval -p {folder}/output -r {bench.reference_output} "
            f"--task-info {bench.task_info}",
            err=True,
        )
        return
    if eval_only:
        demo = run_eval_demo(folder, seed=seed)
        say(f"example written to {folder}")
        emit_report(demo.report, details=details, json_path=json_path, csv_dir=None)
        pred, ref = demo.example.pred_output, demo.example.ref_output
        say(f"\nTry it yourself:\n  genotex eval -p {pred} -r {ref} --details")
    else:
        say(f"generating a small benchmark in {folder} and running the pipeline ...")
        run = run_demo(folder, seed=seed, jobs=jobs, realistic=realistic)
        if run.replaced:
            say(f"note: {run.replaced}", err=True)
        _say_keys(run.keys)
        emit_report(run.report, details=details, json_path=json_path, csv_dir=None)
        stages = ", ".join(f"{name} {s:.1f} s" for name, s in run.seconds.items())
        say(_WHERE.format(stages=stages, folder=folder))
    say(f"demo finished in {time.perf_counter() - started:.1f} s")


def _say_keys(keys: Sequence[KeyFit]) -> None:
    """How the published pipeline reached each reference answer, a line a problem, the ones
    from a fit at chance marked and said (stderr: the report is stdout's).
    """
    if not keys:
        return
    lines = ["reference answers: the published pipeline on the true tables (its own CV numbers)"]
    for key in keys:
        accuracy = "-" if key.cv_accuracy is None else f"{key.cv_accuracy:5.1f}"
        precision = "-" if key.selection_precision is None else f"{key.selection_precision:5.1f}"
        marks = [mark for mark, on in (("AT CHANCE", key.at_chance),
                                       ("column-order dependent", key.order_dependent))
                 if on]  # fmt: skip
        lines.append(
            f"  {key.problem:<22} {key.model:<5} {key.genes:>4} genes   CV accuracy {accuracy}"
            f"   selection precision {precision}" + (f"   {', '.join(marks)}" if marks else "")
        )
    chance = [k.problem for k in keys if k.at_chance]
    if chance:
        lines.append(
            f"  {len(chance)} of {len(keys)} answers come from a fit at chance (CV accuracy under "
            f"{CHANCE_ACCURACY:g}%: {', '.join(chance)}): the published LMM rotates X but not y, "
            "so on the batched cohort its genes are no better than a draw, and only the "
            "published pipeline run exactly, on tables in its column order, gives them "
            "(guide: Reproducing Tables 2 and 3)"
        )
    say("\n".join(lines), err=True)


_BASELINE_WHERE = """
{proposed} recipes proposed, {kept} hand-written kept, {failed} not proposable ({stages}).
  recipes      {out}/recipes (review any: the evidence is in the comments)
  output       {out}/output (preprocess/, regress/ with status.json)
Score it like any agent's output:
  genotex eval -p {out}/output -r {reference} --task-info {root}/metadata/task_info.json"""


@main.command("baseline")
@click.argument("root", type=click.Path(path_type=Path))
@jobs_option()
@click.option(
    "--mode",
    type=click.Choice(["reference", "standard"]),
    default="reference",
    show_default=True,
    help="The regression mode (genotex regress --mode).",
)
@click.option(
    "-o",
    "--out",
    type=click.Path(path_type=Path),
    default=None,
    help="Write recipes/ and output/ here, not in ROOT (needed where ROOT/output is the "
    "reference, as in a downloaded benchmark).",
)
@common_options
@handle_errors
def baseline_command(root: Path, jobs: int, mode: Mode, out: Path | None) -> None:
    """The benchmark without an LLM: propose every GEO recipe, preprocess, regress.

    ROOT holds input/ (GEO/<trait>/<GSE>/, TCGA/) and metadata/ (task_info.json,
    gene_synonym.json). Proposed recipes go to ROOT/recipes (a recipe without
    genotex's first-line mark is hand-written and kept); the output to ROOT/output;
    with --out, both go there instead. A downloaded benchmark keeps its reference
    answers in ROOT/output: there --out is needed, and nothing is written without it.

    \b
    Examples:
      genotex demo --inputs-only --out bench && genotex baseline bench --jobs 2
      genotex baseline BENCH --out baseline-run      # a downloaded benchmark
    """
    from ..core import ReferenceTargetError
    from ..workflows import run_baseline

    try:
        run = run_baseline(root, jobs=jobs, mode=mode, out=out)
    except ReferenceTargetError as exc:
        if out is not None:
            raise
        raise click.UsageError(f"{exc}: genotex baseline {root} --out FOLDER") from None
    for key, reason in run.failed.items():
        click.echo(f"  {key}: no recipe proposed: {reason}", err=True)
    counts = run.regress.counts()
    click.echo(
        f"regress: {counts['ok']} answered, {counts['skipped']} skipped, {counts['failed']} failed"
    )
    stages = ", ".join(f"{name} {s:.1f} s" for name, s in run.seconds.items())
    say(
        _BASELINE_WHERE.format(
            proposed=len(run.proposed),
            kept=len(run.kept),
            failed=len(run.failed),
            stages=stages,
            root=root,
            out=run.root,
            reference=_reference_of(root, run.root),
        ),
        err=True,
    )


def _reference_of(root: Path, out: Path) -> str:
    """The benchmark's reference output/ as this root holds it: the demo's
    `reference/output`, or the published layout's `output` when the baseline wrote
    elsewhere; REFERENCE_OUTPUT when neither is there.
    """
    for candidate in (root / "reference" / "output", root / "output"):
        if candidate.is_dir() and candidate.resolve() != (out / "output").resolve():
            return str(candidate)
    return "REFERENCE_OUTPUT"

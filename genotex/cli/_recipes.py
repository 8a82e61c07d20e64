"""`genotex recipe propose`: a recipe proposed from a cohort folder, or for a file of records."""

from __future__ import annotations

from pathlib import Path

import click

from ..core import write_text_atomic
from ._common import check_file_target, common_options, handle_errors, main
from ._progress import say


@main.group("recipe")
def recipe_group() -> None:
    """Propose clinical recipes (which rows hold the trait, Age and Gender, and their values)."""


@recipe_group.command("propose")
@click.argument("cohort_dir", type=click.Path(path_type=Path), required=False)
@click.option("--trait", default=None, help="The trait the recipe is for (with COHORT_DIR).")
@click.option(
    "--records",
    type=click.Path(path_type=Path),
    default=None,
    help="A JSONL file of clinical records (trait, cohort, background, characteristics).",
)
@click.option(
    "-o",
    "--out",
    type=click.Path(path_type=Path),
    default=None,
    help="Where to write (COHORT_DIR: a TOML recipe, default standard output; "
    "--records: the JSONL answers, required).",
)
@click.option("--force", is_flag=True, help="Replace a hand-written recipe at --out.")
@common_options
@handle_errors
def propose_command(
    cohort_dir: Path | None, trait: str | None, records: Path | None, out: Path | None, force: bool
) -> None:
    """Propose the recipe of COHORT_DIR for --trait, or answer every record of --records.

    The TOML recipe carries its evidence and confidences as comments and a
    first-line mark that says genotex wrote it; review it, then give it to
    `genotex preprocess --recipe`.

    \b
    Examples:
      genotex recipe propose input/GEO/Asthma/GSE123086 --trait Asthma \\
        --out recipes/Asthma/GSE123086.toml
      genotex recipe propose --records clinical_dev.jsonl --out proposals.jsonl
    """
    from ..preprocessing import is_proposed, propose_cohort, propose_records

    if (cohort_dir is None) == (records is None):
        raise click.UsageError("give either COHORT_DIR (with --trait) or --records")
    check_file_target(out, "--out")
    if records is not None:
        if out is None:
            raise click.UsageError("--records needs --out (the JSONL file to write)")
        summary = propose_records(records, out)
        say(f"{summary.written} records proposed into {out}")
        for number, reason in summary.errors.items():
            click.echo(f"  {records}:{number}: {reason}", err=True)
        return
    if trait is None or cohort_dir is None:
        raise click.UsageError("COHORT_DIR needs --trait")
    if out is not None and out.exists() and not is_proposed(out) and not force:
        raise click.UsageError(f"{out} is a hand-written recipe: pass --force to replace it")
    text = propose_cohort(cohort_dir, trait).toml()
    if out is None:
        click.echo(text, nl=False)
    else:
        write_text_atomic(out, text)
        say(f"proposed recipe written to {out}")

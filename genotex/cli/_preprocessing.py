"""`genotex preprocess`, `inspect`, `synonyms` and `download`: raw inputs to benchmark tables."""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import click

from ..core import GenotexError, Outcome, json_line, load_task_info
from ._common import (
    AsciiIntRange,
    check_file_target,
    common_options,
    geo_limits_option,
    handle_errors,
    jobs_option,
    main,
    scheduler_option,
)
from ._progress import ItemProgress

#: The synonym table a benchmark root holds (the default of --synonyms).
_DEFAULT_SYNONYMS = Path("metadata") / "gene_synonym.json"


def _synonyms(path: Path | None) -> Mapping[str, str]:
    """The synonym table: --synonyms (JSON, gene_info or 'mygene'), else the benchmark root's."""
    from ..preprocessing import load_synonyms

    if path is None:
        if not _DEFAULT_SYNONYMS.exists():
            raise GenotexError(
                "no synonym table: give --synonyms FILE (gene_synonym.json or "
                "Homo_sapiens.gene_info.gz), or run from a benchmark root with "
                "metadata/gene_synonym.json"
            )
        path = _DEFAULT_SYNONYMS
    return load_synonyms(path)


@main.command("preprocess")
@click.argument("cohort", required=False, type=click.Path(path_type=Path))
@click.option("--trait", default=None, help="The trait (one cohort mode).")
@click.option(
    "--cohort-dir",
    type=click.Path(path_type=Path),
    default=None,
    help="The cohort folder, as COHORT (the argument, as `inspect` takes it) gives it.",
)
@click.option(
    "--recipe", type=click.Path(path_type=Path), default=None, help="The cohort's recipe (GEO)."
)
@click.option(
    "--all", "all_cohorts", is_flag=True, help="Every cohort of the layout under --input."
)
@click.option(
    "-i",
    "--input",
    "input_root",
    type=click.Path(path_type=Path),
    default=Path("input"),
    show_default=True,
    help="The benchmark's input/ folder (GEO/<trait>/<GSE>/, TCGA/<Xena folder>/), with --all.",
)
@click.option(
    "--recipes",
    type=click.Path(path_type=Path),
    default=None,
    help="Recipes as RECIPES/<trait>/<GSE>.toml|json (default: ./recipes when present).",
)
@click.option(
    "--task-info",
    type=click.Path(path_type=Path),
    default=Path("metadata/task_info.json"),
    show_default=True,
    help="task_info.json: whose traits --all preprocesses, and which --trait may name "
    "(when the file is there).",
)
@click.option(
    "--synonyms",
    type=click.Path(path_type=Path),
    default=None,
    help="gene_synonym.json, Homo_sapiens.gene_info(.gz), or 'mygene' (MyGene.info, "
    "online); default: metadata/gene_synonym.json.",
)
@click.option(
    "--gene-info",
    type=click.Path(path_type=Path),
    default=None,
    help="NCBI gene_info, for platforms keyed by Entrez GeneID.",
)
@click.option(
    "-o",
    "--out",
    type=click.Path(path_type=Path),
    default=Path("output/preprocess"),
    show_default=True,
    help="The preprocess folder to write (<trait>/<cohort>.csv and cohort_info.json).",
)
@click.option(
    "--aggregation",
    type=click.Choice(["sum", "mean"]),
    default="sum",
    show_default=True,
    help="How a GEO platform's probes become genes: sum (the benchmark's: each probe split "
    "over its symbols, then summed) or mean (the mean of a gene's probes, on the array's scale).",
)
@jobs_option("Cohorts preprocessed in parallel processes (with --all).")
@scheduler_option("Preprocess the cohorts on this Dask distributed scheduler (with --all).")
@geo_limits_option
@common_options
@handle_errors
def preprocess_command(
    *,
    cohort: Path | None,
    trait: str | None,
    cohort_dir: Path | None,
    recipe: Path | None,
    all_cohorts: bool,
    input_root: Path,
    recipes: Path | None,
    task_info: Path,
    synonyms: Path | None,
    gene_info: Path | None,
    out: Path,
    aggregation: str,
    jobs: int,
    scheduler: str | None,
) -> None:
    """Turn raw GEO / TCGA files into the benchmark's CSVs and cohort_info.json.

    One cohort: COHORT (a GEO series folder or a Xena cohort folder) with --trait,
    and --recipe for GEO. Every cohort of a benchmark: --all.

    \b
    Examples:
      genotex preprocess input/GEO/Asthma/GSE123086 --trait Asthma \\
        --recipe recipes/Asthma/GSE123086.toml
      genotex preprocess --all --input input --out output/preprocess --jobs 4
    """
    if cohort is not None and cohort_dir is not None and cohort != cohort_dir:
        raise click.UsageError("COHORT and --cohort-dir name two folders: give one")
    cohort_dir = cohort_dir or cohort
    from ..preprocessing import gene_id_symbols

    if all_cohorts and (trait or cohort_dir):
        raise click.UsageError("--all goes without --trait/COHORT")
    if not all_cohorts and (trait is None or cohort_dir is None):
        raise click.UsageError("give COHORT and --trait (one cohort), or --all")
    if scheduler is not None and not all_cohorts:
        raise click.UsageError("--scheduler goes with --all")
    table = _synonyms(synonyms)
    gene_ids = gene_id_symbols(gene_info) if gene_info else None
    if all_cohorts:
        recipes = recipes or (Path("recipes") if Path("recipes").is_dir() else None)
        debug = bool(click.get_current_context().params.get("debug"))
        _preprocess_tree(
            input_root,
            out,
            table,
            task_info,
            recipes=recipes,
            gene_ids=gene_ids,
            jobs=jobs,
            scheduler=scheduler,
            debug=debug,
            aggregation=aggregation,
        )
    elif trait is not None and cohort_dir is not None:
        if task_info.is_file():  # a misspelled trait would write a folder nothing reads
            load_task_info(task_info).restricted_to([trait])
        _preprocess_one(
            cohort_dir, trait, table, out, recipe=recipe, gene_ids=gene_ids, aggregation=aggregation
        )


def _preprocess_tree(
    input_root: Path,
    out: Path,
    table: Mapping[str, str],
    task_info: Path,
    *,
    recipes: Path | None,
    gene_ids: Mapping[str, str] | None,
    jobs: int,
    scheduler: str | None,
    debug: bool,
    aggregation: str,
) -> None:
    from ..preprocessing import check_aggregation, preprocess_tree

    with ItemProgress(unit="cohorts", err=False) as progress:

        def show(job: Any, outcome: Outcome) -> None:
            line = outcome.text
            if outcome.unexpected and not debug:
                line += " (--debug shows the traceback)"
            progress(f"{job.trait}/{job.cohort}  ", line, failed=outcome.failed)

        results = preprocess_tree(
            input_root,
            out,
            table,
            task_info,
            recipes=recipes,
            gene_ids=gene_ids,
            jobs=jobs,
            scheduler=scheduler,
            debug=debug,
            on_planned=progress.start,
            on_done=show,
            aggregation=check_aggregation(aggregation),
        )
    failed = sum(outcome.failed for _, outcome in results)
    click.echo(f"{len(results)} cohorts, {failed} failed; outputs in {out}", err=True)
    sys.exit(1 if failed else 0)


def _preprocess_one(
    cohort_dir: Path,
    trait: str,
    table: Mapping[str, str],
    out: Path,
    *,
    recipe: Path | None,
    gene_ids: Mapping[str, str] | None,
    aggregation: str,
) -> None:
    from ..preprocessing import (
        RecipeNeeded,
        TraitMismatch,
        check_aggregation,
        preprocess_cohort,
        propose_cohort,
    )

    try:
        outcome = preprocess_cohort(
            cohort_dir, trait, table, out, recipe=recipe, gene_ids=gene_ids,
            aggregation=check_aggregation(aggregation),
        )  # fmt: skip
    except RecipeNeeded as exc:
        click.echo(propose_cohort(cohort_dir, trait).toml())
        raise GenotexError(
            "a GEO cohort needs a recipe for its trait: review the proposal above and save it",
            path=exc.path,
        ) from None
    except TraitMismatch as exc:
        raise click.UsageError(f"--trait {trait!r} disagrees with {exc}") from None
    details = f" ({outcome.details})" if outcome.details else ""
    click.echo(f"{trait}/{outcome.cohort}: {outcome.outcome}{details}")


@main.command("inspect")
@click.argument("cohort_dir", type=click.Path(path_type=Path))
@click.option(
    "--values",
    "max_values",
    type=AsciiIntRange(min=1),
    default=8,
    show_default=True,
    help="Values shown per row or column.",
)
@click.option(
    "--synonyms",
    type=click.Path(path_type=Path),
    default=None,
    help='The synonym table, to show which column gene_column = "auto" reads '
    "(default: metadata/gene_synonym.json when present).",
)
@click.option("--trait", default=None, help="Also show the row proposed for this trait.")
@click.option(
    "--record",
    is_flag=True,
    help="Print the cohort as one JSON line for --trait instead (trait, cohort, background, "
    "characteristics): a line of `genotex recipe propose --records`' input.",
)
@geo_limits_option
@common_options
@handle_errors
def inspect_command(
    cohort_dir: Path, max_values: int, synonyms: Path | None, trait: str | None, record: bool
) -> None:
    """What to read before writing a recipe: background, characteristics (with the proposed
    rows), platform columns.

    \b
    Examples:
      genotex inspect input/GEO/Asthma/GSE123086 --trait Asthma
      genotex inspect input/GEO/Asthma/GSE123086 --trait Asthma --record >> records.jsonl
    """
    from ..preprocessing import cohort_record, inspect_cohort

    if record:
        if trait is None:
            raise click.UsageError("--record needs --trait: a record asks about one trait")
        click.echo(json_line(cohort_record(cohort_dir, trait)))
        return

    table = _synonyms(synonyms) if synonyms or _DEFAULT_SYNONYMS.exists() else None
    click.echo(inspect_cohort(cohort_dir, max_values=max_values, synonyms=table, trait=trait))


@main.group("synonyms")
def synonyms_group() -> None:
    """Build or query the gene synonym table."""


@synonyms_group.command("build")
@click.option(
    "--gene-info",
    type=click.Path(path_type=Path),
    required=True,
    help="NCBI Homo_sapiens.gene_info(.gz).",
)
@click.option(
    "-o",
    "--out",
    type=click.Path(path_type=Path),
    default=None,
    help="Write gene_synonym.json here too.",
)
@common_options
@handle_errors
def synonyms_build(gene_info: Path, out: Path | None) -> None:
    """Build the synonym table as the published builder does (cached in the user cache folder).

    \b
    Example:
      genotex synonyms build --gene-info Homo_sapiens.gene_info.gz --out metadata/gene_synonym.json
    """
    from ..preprocessing import cached_synonym_table, write_synonym_table

    check_file_target(out, "--out")
    table = cached_synonym_table(gene_info)
    if out is not None:
        write_synonym_table(out, table)
    symbols = len(set(table.values()))
    written = f"; written to {out}" if out else ""
    click.echo(f"{len(table)} aliases -> {symbols} official symbols{written}")


@synonyms_group.command("lookup")
@click.argument("aliases", nargs=-1, required=True)
@click.option(
    "--synonyms",
    type=click.Path(path_type=Path),
    default=None,
    help="gene_synonym.json, Homo_sapiens.gene_info(.gz), or 'mygene'; default: "
    "metadata/gene_synonym.json.",
)
@common_options
@handle_errors
def synonyms_lookup(aliases: tuple[str, ...], synonyms: Path | None) -> None:
    """Show the official symbol of each alias (or that it has none).

    \b
    Example:
      genotex synonyms lookup p53 HER2 --synonyms metadata/gene_synonym.json
    """
    table = _synonyms(synonyms)
    for alias in aliases:
        click.echo(f"{alias}\t{table.get(alias.upper(), '(not a known human gene symbol)')}")

"""`genotex preprocess`, `inspect`, `synonyms` and `download`: raw inputs to benchmark tables."""

from __future__ import annotations

import logging
import sys
from pathlib import Path

import click

from ..core import GenotexError
from ._common import debug_option, geo_limits_option, handle_errors, jobs_option, main

#: The synonym table a benchmark root holds (the default of --synonyms).
_DEFAULT_SYNONYMS = Path("metadata") / "gene_synonym.json"


def _synonyms(path: Path | None):
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
@click.option("--trait", default=None, help="The trait (one cohort mode).")
@click.option(
    "--cohort-dir",
    type=click.Path(path_type=Path),
    default=None,
    help="A GEO series folder or a Xena cohort folder, anywhere on disk.",
)
@click.option(
    "--recipe", type=click.Path(path_type=Path), default=None, help="The cohort's recipe (GEO)."
)
@click.option(
    "--all", "all_cohorts", is_flag=True, help="Every cohort of the layout under --input."
)
@click.option(
    "--input",
    "input_root",
    type=click.Path(path_type=Path),
    default=Path("input"),
    show_default=True,
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
    "--out", type=click.Path(path_type=Path), default=Path("output/preprocess"), show_default=True
)
@jobs_option()
@geo_limits_option
@debug_option
@handle_errors
def preprocess_command(
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
    jobs: int,
) -> None:
    """Turn raw GEO / TCGA files into the benchmark's CSVs and cohort_info.json."""
    from ..preprocessing import gene_id_symbols

    logging.basicConfig(level=logging.INFO, format="%(message)s", stream=sys.stderr)
    if all_cohorts and (trait or cohort_dir):
        raise click.UsageError("--all goes without --trait/--cohort-dir")
    if not all_cohorts and not (trait and cohort_dir):
        raise click.UsageError("give --trait and --cohort-dir (one cohort), or --all")
    table = _synonyms(synonyms)
    gene_ids = gene_id_symbols(gene_info) if gene_info else None
    if all_cohorts:
        recipes = recipes or (Path("recipes") if Path("recipes").is_dir() else None)
        debug = bool(click.get_current_context().params.get("debug"))
        _preprocess_tree(input_root, out, table, task_info, recipes, gene_ids, jobs, debug)
    else:
        _preprocess_one(cohort_dir, trait, table, out, recipe, gene_ids)


def _preprocess_tree(input_root, out, table, task_info, recipes, gene_ids, jobs, debug) -> None:
    from ..preprocessing import preprocess_tree

    results = preprocess_tree(
        input_root,
        out,
        table,
        task_info,
        recipes=recipes,
        gene_ids=gene_ids,
        jobs=jobs,
        debug=debug,
    )
    width = max((len(f"{j.trait}/{j.cohort}") for j, _ in results), default=10)
    for job, status in results:
        if status.startswith("failed: unexpected") and not debug:
            status += " (--debug shows the traceback)"
        click.echo(f"{f'{job.trait}/{job.cohort}':<{width}}  {status}")
    failed = sum(status.startswith("failed") for _, status in results)
    click.echo(f"{len(results)} cohorts, {failed} failed; outputs in {out}", err=True)
    sys.exit(1 if failed else 0)


def _preprocess_one(cohort_dir, trait, table, out, recipe, gene_ids) -> None:
    from ..preprocessing import RecipeNeeded, TraitMismatch, preprocess_cohort

    try:
        outcome = preprocess_cohort(cohort_dir, trait, table, out, recipe=recipe, gene_ids=gene_ids)
    except RecipeNeeded as exc:
        click.echo(exc.proposal)
        raise GenotexError(
            "a GEO cohort needs a recipe for its trait: review the proposal above and save it",
            path=exc.path,
        ) from None
    except TraitMismatch as exc:
        raise click.UsageError(f"--trait {trait!r} disagrees with {exc}") from None
    details = f" ({outcome.details})" if outcome.details else ""
    click.echo(f"{trait}/{outcome.cohort}: {outcome.summary}{details}")


@main.command("inspect")
@click.argument("cohort_dir", type=click.Path(path_type=Path))
@click.option(
    "--values",
    "max_values",
    type=click.IntRange(min=1),
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
@geo_limits_option
@debug_option
@handle_errors
def inspect_command(
    cohort_dir: Path, max_values: int, synonyms: Path | None, trait: str | None
) -> None:
    """What to read before writing a recipe: background, characteristics (with the proposed
    rows), platform columns.
    """
    from ..preprocessing import inspect_cohort

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
    "--out", type=click.Path(path_type=Path), default=None, help="Write gene_synonym.json here too."
)
@debug_option
@handle_errors
def synonyms_build(gene_info: Path, out: Path | None) -> None:
    """Build the synonym table as the published builder does (cached in the user cache folder)."""
    from ..preprocessing import cached_synonym_table, write_synonym_table

    table = cached_synonym_table(gene_info)
    if out is not None:
        write_synonym_table(out, table)
    symbols = len(set(table.values()))
    written = f"; written to {out}" if out else ""
    click.echo(f"{len(table)} aliases -> {symbols} official symbols{written}")


@synonyms_group.command("lookup")
@click.argument("aliases", nargs=-1, required=True)
@click.option("--synonyms", type=click.Path(path_type=Path), default=None)
@debug_option
@handle_errors
def synonyms_lookup(aliases: tuple[str, ...], synonyms: Path | None) -> None:
    """Show the official symbol of each alias (or that it has none)."""
    table = _synonyms(synonyms)
    for alias in aliases:
        click.echo(f"{alias}\t{table.get(alias.upper(), '(not a known human gene symbol)')}")


#: Words of the errors a machine without a network (or without DNS) gives for every file.
_OFFLINE = (
    "name or service not known",
    "temporary failure in name resolution",
    "network is unreachable",
    "nodename nor servname",
    "no address associated",
)


@main.command("download")
@click.argument("what", type=click.Choice(["geo", "tcga", "gene-info"]))
@click.option(
    "--manifest",
    type=click.Path(path_type=Path),
    default=None,
    help="The benchmark's geo_manifest.json / tcga_manifest.json (geo, tcga).",
)
@click.option(
    "--out",
    type=click.Path(path_type=Path),
    required=True,
    help="The folder (geo, tcga) or the file (gene-info) to write.",
)
@click.option(
    "--base-url",
    default=None,
    help="Where the files are (default: the public sources; a mirror, a local server).",
)
@click.option(
    "--only", multiple=True, help="Only this trait (geo) or cohort folder (tcga); repeatable."
)
@jobs_option("Parallel downloads.", default=4)
@click.option("--sha256", default=None, help="gene-info: the expected sha256, if known.")
@click.option("--no-progress", is_flag=True, help="Never show a progress bar.")
@debug_option
@handle_errors
def download_command(
    what: str,
    manifest: Path | None,
    out: Path,
    base_url: str | None,
    only: tuple[str, ...],
    jobs: int,
    sha256: str | None,
    no_progress: bool,
) -> None:
    """Download the benchmark's inputs by its manifests: resumable, verified by sha256.

    GEO files come from NCBI's GEO (over HTTPS), Xena files from the UCSC Xena
    TCGA hub, gene_info from NCBI Gene. Re-running resumes partial files and
    skips verified ones; the exit status is 1 when any file failed.
    """
    from ..preprocessing import UnknownSelection, download_inputs

    if what != "gene-info" and manifest is None:
        raise click.UsageError(f"downloading {what} needs --manifest")
    try:
        results = download_inputs(
            what,
            out,
            manifest=manifest,
            base_url=base_url,
            only=only,
            sha256=sha256,
            jobs=jobs,
            progress=not no_progress,
        )
    except UnknownSelection as exc:
        raise click.BadParameter(str(exc), param_hint="--only") from None
    counts: dict[str, int] = {}
    for result in results:
        key = "failed" if not result.ok else result.status
        counts[key] = counts.get(key, 0) + 1
    total_mb = sum(r.size for r in results if r.ok) / 1e6
    summary = ", ".join(f"{n} {k}" for k, n in sorted(counts.items()))
    click.echo(f"{len(results)} files: {summary}; {total_mb:.1f} MB in place")
    failed = [r for r in results if not r.ok]
    by_reason: dict[str, list[Path]] = {}
    for result in failed:  # "failed: <reason> for <url>": one line per reason, not per file
        reason = result.status.removeprefix("failed: ").split(f" for {result.download.url}")[0]
        by_reason.setdefault(reason, []).append(result.download.path)
    for reason, paths in by_reason.items():
        if len(paths) == 1:
            click.echo(f"  FAILED {paths[0]}: {reason}")
        elif any(word in reason.lower() for word in _OFFLINE):
            click.echo(f"  FAILED all {len(paths)} files: the network is unreachable ({reason})")
        else:
            click.echo(f"  FAILED {len(paths)} files ({paths[0].name}, ...): {reason}")
    if failed:
        click.echo(
            "Re-run the same command to retry: finished files are kept, partial ones resumed."
        )
        sys.exit(1)

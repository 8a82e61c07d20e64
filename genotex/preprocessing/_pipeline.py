"""Preprocess one cohort (GEO with a recipe, TCGA automatically) or every cohort of a layout."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path

import pandas as pd

from ..core import GenotexError, output_path, prepare_output_folder, remove_stale_temporaries
from ._clinical import clinical_table
from ._cohort import CohortOutcome, decide, write_cohort
from ._cohort_files import find_matrix, find_platform
from ._geo import read_series_matrix
from ._probes import (
    GeneAggregation,
    MappingError,
    entrez_to_symbol,
    explain_gene_column,
    extract_symbols,
    map_probes,
    probe_gene_pairs,
)
from ._recipe import Recipe, RecipeError
from ._soft import read_soft
from ._symbols import load_synonyms, normalize_gene_table
from ._tcga import clinical_features, read_xena

__all__ = [
    "RecipeNeeded",
    "TraitMismatch",
    "geo_gene_table",
    "geo_outcome",
    "is_tcga_folder",
    "preprocess_cohort",
    "preprocess_geo",
    "preprocess_tcga",
    "tcga_outcome",
]

log = logging.getLogger("genotex.preprocessing")


def _gene_column(platform: pd.DataFrame, recipe: Recipe, synonyms: Mapping[str, str]) -> str:
    """The recipe's gene column, or the one `explain_gene_column` chooses (logged with why)."""
    column = recipe.gene_column.removeprefix("entrez:")
    if column != "auto":
        return column
    choice = explain_gene_column(platform, synonyms.values(), probe_column=recipe.probe_column)
    log.info(
        "%s/%s: gene column %r (%s)", recipe.trait, recipe.cohort, choice.column, choice.reason
    )
    return choice.column


def geo_gene_table(
    cohort_dir: Path,
    recipe: Recipe,
    synonyms: Mapping[str, str],
    *,
    gene_ids: Mapping[str, str] | None = None,
    input_root: Path | None = None,
    aggregation: GeneAggregation = "sum",
) -> tuple[pd.DataFrame, pd.DataFrame, str]:
    """(normalized genes x samples, characteristics, the gene column used) of a GEO cohort.

    Files the recipe names must lie inside `input_root` (default: the cohort
    folder's grandparent); a mapping error names the platform file.
    """
    root = input_root if input_root is not None else cohort_dir.parent.parent
    matrix_path = find_matrix(cohort_dir, recipe, root=root)
    platform_path = find_platform(cohort_dir, recipe, root=root)
    matrix = read_series_matrix(matrix_path)
    platform = read_soft(platform_path).platform(recipe.platform_id)
    try:
        column = _gene_column(platform, recipe, synonyms)
        pairs = probe_gene_pairs(platform, probe_column=recipe.probe_column, gene_column=column)
    except MappingError as exc:
        raise MappingError(exc.reason, path=platform_path) from None
    if recipe.gene_column.startswith("entrez:"):
        if gene_ids is None:
            reason = "an Entrez gene column needs gene_info (--gene-info)"
            raise RecipeError(reason, path=recipe.source)
        pairs = entrez_to_symbol(pairs, gene_ids)
    if not pairs["ID"].isin(matrix.expression.index).any():
        reason = f"no probe ID of the platform's {recipe.probe_column!r} column is in the matrix"
        raise MappingError(reason, path=platform_path)
    try:
        probes = map_probes(matrix.expression, pairs, aggregation=aggregation)
    except MappingError as exc:
        raise MappingError(exc.reason, path=platform_path) from None
    genes = normalize_gene_table(probes, synonyms)
    genes.index.name = "Gene"
    present = pairs[pairs["ID"].isin(matrix.expression.index)]
    mapped = present.loc[[bool(extract_symbols(text)) for text in present["Gene"]], "ID"].nunique()
    # the QC of the mapping (`cohort_anndata`, `cohort_qc_plot`): probes, mapped ones, genes
    genes.attrs["mapping"] = {
        "probes": len(matrix.expression), "probes_mapped": int(mapped), "genes": len(genes)
    }  # fmt: skip
    return genes, matrix.characteristics, column


def geo_outcome(
    cohort_dir: str | Path,
    recipe: Recipe,
    synonyms: Mapping[str, str],
    *,
    gene_ids: Mapping[str, str] | None = None,
    input_root: str | Path | None = None,
    aggregation: GeneAggregation = "sum",
) -> CohortOutcome:
    """What preprocessing one GEO cohort as its recipe says decides, in memory: its tables
    and record, nothing written (`preprocess_geo` writes them).
    """
    cohort_dir = Path(cohort_dir)
    if recipe.cohort != cohort_dir.name:
        reason = f"is for the cohort {recipe.cohort!r}, not the folder {cohort_dir.name!r}"
        raise RecipeError(reason, path=recipe.source)
    root = Path(input_root) if input_root is not None else None
    note = f"INFO: GEO; {recipe.note}".rstrip("; ")
    if not recipe.gene_usable:
        return decide(recipe.trait, recipe.cohort, None, None, note=note)
    genes, characteristics, column = geo_gene_table(
        cohort_dir, recipe, synonyms, gene_ids=gene_ids, input_root=root, aggregation=aggregation
    )
    details = f"gene column {column!r}, {len(genes)} genes after normalization"
    log.info("%s/%s: %s", recipe.trait, recipe.cohort, details)
    trait = recipe.variables.get("trait")
    clinical = None
    if trait is not None and trait.available:
        clinical = clinical_table(characteristics, recipe)
    return replace(decide(recipe.trait, recipe.cohort, genes, clinical, note=note), details=details)


def preprocess_geo(
    cohort_dir: str | Path,
    recipe: Recipe | str | Path,
    synonyms: Mapping[str, str],
    out_root: str | Path,
    *,
    gene_ids: Mapping[str, str] | None = None,
    input_root: str | Path | None = None,
    aggregation: GeneAggregation = "sum",
) -> CohortOutcome:
    """Preprocess one GEO cohort as its recipe says, and write its outputs and record.

    The recipe must be for this cohort (its `cohort` is the folder's name), and
    the files it names must lie inside `input_root` (default: the cohort
    folder's grandparent). `aggregation` is how probes become genes (`map_probes`:
    the benchmark's "sum", or "mean").
    """
    if not isinstance(recipe, Recipe):
        recipe = Recipe.read(recipe)
    outcome = geo_outcome(cohort_dir, recipe, synonyms, gene_ids=gene_ids,
                          input_root=input_root, aggregation=aggregation)  # fmt: skip
    write_cohort(out_root, outcome)
    return outcome


def tcga_outcome(xena_dir: str | Path, trait: str, synonyms: Mapping[str, str]) -> CohortOutcome:
    """What preprocessing a Xena cohort for a trait decides, in memory (cohort ID `Xena`);
    its `details` say which clinical columns gave Age and Gender.
    """
    cohort = read_xena(xena_dir)
    clinical, columns = clinical_features(cohort.clinical, trait)
    genes = normalize_gene_table(cohort.expression, synonyms)
    sources = f"Age from {columns['Age']}, Gender from {columns['Gender']}"
    note = f"INFO: TCGA Xena {Path(xena_dir).name}; {sources}"
    outcome = decide(trait, "Xena", genes, clinical, note=note, index_name="sampleID")
    return replace(outcome, details=sources)


def preprocess_tcga(
    xena_dir: str | Path, trait: str, synonyms: Mapping[str, str], out_root: str | Path
) -> CohortOutcome:
    """Preprocess a Xena cohort for a trait (cohort ID `Xena`), and write its outputs and record.

    The outcome's `details` say which clinical columns gave Age and Gender.
    """
    outcome = tcga_outcome(xena_dir, trait, synonyms)
    write_cohort(out_root, outcome)
    return outcome


def is_tcga_folder(folder: str | Path) -> bool:
    """Whether a cohort folder is a UCSC Xena (TCGA) cohort: it holds a `*clinicalMatrix` file."""
    return any(Path(folder).glob("*clinicalMatrix"))


class RecipeNeeded(GenotexError):
    """A GEO cohort given without a recipe (`propose_cohort` makes one to review)."""


class TraitMismatch(RecipeError, ValueError):
    """The trait asked for is not the trait the recipe was written for."""


def preprocess_cohort(
    cohort_dir: str | Path,
    trait: str,
    synonyms: Mapping[str, str] | str | Path,
    out_root: str | Path,
    *,
    recipe: Recipe | str | Path | None = None,
    gene_ids: Mapping[str, str] | None = None,
    aggregation: GeneAggregation = "sum",
) -> CohortOutcome:
    """Preprocess one cohort into `out_root/<trait>/` (GEO or TCGA, decided from the folder).

    Parameters
    ----------
    cohort_dir
        A GEO series folder (series matrix and family SOFT) or a Xena cohort folder.
    trait
        The trait the outputs are for; a GEO recipe written for another trait is refused.
    synonyms
        The gene synonym table (`load_synonyms`), or its file (read with `load_synonyms`).
    out_root
        The preprocess folder; the cohort's CSVs and its `cohort_info.json` record go under it.
    recipe
        A GEO cohort's recipe (a `Recipe` or its file); not used for TCGA.
    gene_ids
        Entrez GeneID -> symbol, for platforms keyed by GeneID (`gene_id_symbols`).
    aggregation
        How a GEO platform's probes become genes: "sum" (the benchmark's, the
        default: each probe's value split over its symbols, then summed) or
        "mean" (the mean of the gene's probes: values keep the array's scale,
        usable as fold changes). A Xena cohort is already per gene.

    Returns
    -------
    CohortOutcome
        The decision (record) and the tables written.

    Raises
    ------
    RecipeNeeded
        A GEO cohort without a recipe (`propose_cohort(cohort_dir, trait)`
        proposes one, as `genotex preprocess` does when the recipe is missing).
    TraitMismatch
        The recipe's trait is not `trait`.
    GenotexError
        Any unreadable or malformed input, naming the file.
    """
    cohort_dir = Path(cohort_dir)
    remove_stale_temporaries(output_path(out_root, trait))  # refuses an unsafe trait name too
    if isinstance(synonyms, (str, Path)):  # a path, as a notebook user would pass it
        synonyms = load_synonyms(synonyms)
    if not cohort_dir.is_dir():
        raise GenotexError("the cohort folder does not exist", path=cohort_dir)
    if is_tcga_folder(cohort_dir):
        prepare_output_folder(out_root)
        return preprocess_tcga(cohort_dir, trait, synonyms, out_root)
    if recipe is None:
        raise RecipeNeeded(
            "a GEO cohort needs a recipe for its trait (propose_cohort proposes one)",
            path=cohort_dir,
        )
    if not isinstance(recipe, Recipe):
        recipe = Recipe.read(recipe)
    if recipe.trait != trait:
        raise TraitMismatch(
            f"the recipe is for the trait {recipe.trait!r}, not {trait!r}", path=recipe.source
        )
    prepare_output_folder(out_root)  # once, before any work
    return preprocess_geo(
        cohort_dir, recipe, synonyms, out_root, gene_ids=gene_ids, aggregation=aggregation
    )

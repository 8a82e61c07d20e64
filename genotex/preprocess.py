"""Preprocess one cohort (GEO with a recipe, TCGA automatically) or every cohort of a layout."""

from __future__ import annotations

import functools
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

import pandas as pd

from .clinical import Recipe, RecipeError, clinical_table, load_recipe
from .cohort import CohortOutcome, decide, write_cohort
from .errors import GenotexError
from .geo import GEOFormatError, read_series_matrix, read_soft
from .parallel import ordered_map
from .probes import MappingError, choose_gene_column, entrez_to_symbol, map_probes, probe_gene_pairs
from .symbols import normalize_gene_table
from .tcga import clinical_features, find_xena_folder, read_xena

__all__ = ["CohortJob", "find_matrix", "geo_gene_table", "plan_layout", "preprocess_geo", "preprocess_tcga", "run_job", "run_jobs"]

log = logging.getLogger("genotex.preprocess")


def _cohort_file(cohort_dir: Path, named: str | None, pattern: str, what: str, recipe: Recipe | None) -> Path:
    """The file the recipe names (relative to the cohort folder), or the folder's only `pattern` file."""
    if named:
        path = cohort_dir / named
        if not path.exists():
            raise RecipeError(f"names the {what} {named!r}, which does not exist in {cohort_dir}",
                              path=recipe.source if recipe else None)  # fmt: skip
        return path
    found = sorted(cohort_dir.glob(pattern))
    if not found:
        raise GEOFormatError(f"has no {pattern} file and the recipe names no {what}", path=cohort_dir)
    if len(found) > 1:
        names = ", ".join(p.name for p in found)
        raise GEOFormatError(f"has several {what}s ({names}): name one in the recipe", path=cohort_dir)
    return found[0]


def find_matrix(cohort_dir: Path, recipe: Recipe | None = None) -> Path:
    """The series matrix named by the recipe, or the folder's only one."""
    named = recipe.matrix if recipe is not None else None
    return _cohort_file(cohort_dir, named, "*_series_matrix.txt*", "series matrix", recipe)


def _platform_path(cohort_dir: Path, recipe: Recipe) -> Path:
    """The platform file named by the recipe (a family SOFT or a stand-alone GPL), or the family SOFT."""
    return _cohort_file(cohort_dir, recipe.platform, "*_family.soft*", "platform file", recipe)


def geo_gene_table(cohort_dir: Path, recipe: Recipe, synonyms: Mapping[str, str], *,
                   gene_ids: Mapping[str, str] | None = None) -> tuple[pd.DataFrame, pd.DataFrame, str]:  # fmt: skip
    """(normalized genes x samples, characteristics, the gene column used) of a GEO cohort."""
    matrix = read_series_matrix(find_matrix(cohort_dir, recipe))
    platform = read_soft(_platform_path(cohort_dir, recipe)).platform(recipe.platform_id)
    column = recipe.gene_column
    entrez = column.startswith("entrez:")
    if entrez:
        column = column.removeprefix("entrez:")
    elif column == "auto":
        column = choose_gene_column(platform, synonyms.values(), probe_column=recipe.probe_column)
    pairs = probe_gene_pairs(platform, probe_column=recipe.probe_column, gene_column=column)
    if entrez:
        if gene_ids is None:
            raise RecipeError("an Entrez gene column needs gene_info (--gene-info)", path=recipe.source)
        pairs = entrez_to_symbol(pairs, gene_ids)
    if not pairs["ID"].isin(matrix.expression.index).any():
        raise MappingError(f"no probe ID of the platform's {recipe.probe_column!r} column is in the matrix")
    genes = normalize_gene_table(map_probes(matrix.expression, pairs), synonyms)
    genes.index.name = "Gene"
    return genes, matrix.characteristics, column


def preprocess_geo(cohort_dir: str | Path, recipe: Recipe | str | Path, synonyms: Mapping[str, str],
                   out_root: str | Path, *, gene_ids: Mapping[str, str] | None = None) -> CohortOutcome:  # fmt: skip
    """Preprocess one GEO cohort as its recipe says, and write its outputs and record."""
    cohort_dir = Path(cohort_dir)
    if not isinstance(recipe, Recipe):
        recipe = load_recipe(recipe)
    note = f"INFO: GEO; {recipe.note}".rstrip("; ")
    if not recipe.gene_usable:
        outcome = decide(recipe.trait, recipe.cohort, None, None, note=note)
    else:
        genes, characteristics, column = geo_gene_table(cohort_dir, recipe, synonyms, gene_ids=gene_ids)
        log.info("%s/%s: gene column %r, %d genes after normalization", recipe.trait, recipe.cohort, column, len(genes))
        trait = recipe.variables.get("trait")
        clinical = None
        if trait is not None and trait.available:
            clinical = clinical_table(characteristics, recipe)
        outcome = decide(recipe.trait, recipe.cohort, genes, clinical, note=note)
    write_cohort(out_root, outcome)
    return outcome


def preprocess_tcga(xena_dir: str | Path, trait: str, synonyms: Mapping[str, str],
                    out_root: str | Path) -> tuple[CohortOutcome, dict[str, str | None]]:  # fmt: skip
    """Preprocess a Xena cohort for a trait (cohort ID `Xena`); also says which columns gave Age and Gender."""
    cohort = read_xena(xena_dir)
    clinical, columns = clinical_features(cohort.clinical, trait)
    genes = normalize_gene_table(cohort.expression, synonyms)
    note = f"INFO: TCGA Xena {Path(xena_dir).name}; Age from {columns['Age']}, Gender from {columns['Gender']}"
    outcome = decide(trait, "Xena", genes, clinical, note=note, index_name="sampleID")
    write_cohort(out_root, outcome)
    return outcome, columns


@dataclass(frozen=True)
class CohortJob:
    """One cohort to preprocess in a benchmark layout."""

    trait: str
    cohort: str
    folder: Path
    recipe: Path | None  # None: a TCGA cohort


def plan_layout(input_root: str | Path, recipes: str | Path | None, traits: list[str]) -> list[CohortJob]:
    """Every GEO cohort with a recipe (`RECIPES/<trait>/<GSE>.toml|json`) and the TCGA cohort of each trait."""
    input_root = Path(input_root)
    jobs = []
    for trait in traits:
        if recipes is not None:
            for recipe in sorted(Path(recipes, trait).glob("*.*")):
                if recipe.suffix not in {".toml", ".json"}:
                    continue
                folder = input_root / "GEO" / trait / recipe.stem
                jobs.append(CohortJob(trait, recipe.stem, folder, recipe))
        xena = find_xena_folder(input_root / "TCGA", trait)
        if xena is not None:
            jobs.append(CohortJob(trait, "Xena", xena, None))
    return jobs


def run_job(job: CohortJob, synonyms: Mapping[str, str], out_root: str | Path,
            gene_ids: Mapping[str, str] | None = None) -> tuple[CohortJob, str]:  # fmt: skip
    """Preprocess one planned cohort; every expected failure becomes a one-line status."""
    try:
        if job.recipe is None:
            outcome, _ = preprocess_tcga(job.folder, job.trait, synonyms, out_root)
        else:
            outcome = preprocess_geo(job.folder, job.recipe, synonyms, out_root, gene_ids=gene_ids)
    except GenotexError as exc:
        return job, f"failed: {exc}"
    return job, outcome.summary



def run_jobs(jobs_list: list[CohortJob], synonyms: Mapping[str, str], out_root: str | Path, *,
             gene_ids: Mapping[str, str] | None = None, jobs: int = 1) -> list[tuple[CohortJob, str]]:  # fmt: skip
    """`run_job` over planned cohorts, in `jobs` processes; (job, status) in plan order."""
    task = functools.partial(run_job, synonyms=synonyms, out_root=out_root, gene_ids=gene_ids)
    return list(ordered_map(task, jobs_list, jobs))

"""Preprocess every cohort of an input tree (`input/GEO/<trait>/<GSE>`, `input/TCGA/...`)."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from ..core import GenotexError, TaskInfo, ordered_map
from ._pipeline import preprocess_geo, preprocess_tcga
from ._tcga import find_xena_folder

__all__ = ["CohortJob", "plan_layout", "preprocess_tree", "run_job", "run_jobs"]


@dataclass(frozen=True)
class CohortJob:
    """One cohort to preprocess in a benchmark layout."""

    trait: str
    cohort: str
    folder: Path
    recipe: Path | None  # None: a TCGA cohort


def plan_layout(
    input_root: str | Path, recipes: str | Path | None, traits: list[str]
) -> list[CohortJob]:
    """Every GEO cohort with a recipe (`RECIPES/<trait>/<GSE>.toml|json`) and the TCGA cohort of
    each trait.
    """
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


def run_job(
    job: CohortJob,
    synonyms: Mapping[str, str],
    out_root: str | Path,
    gene_ids: Mapping[str, str] | None = None,
) -> tuple[CohortJob, str]:
    """Preprocess one planned cohort; every expected failure becomes a one-line status."""
    try:
        if job.recipe is None:
            outcome = preprocess_tcga(job.folder, job.trait, synonyms, out_root)
        else:
            outcome = preprocess_geo(job.folder, job.recipe, synonyms, out_root, gene_ids=gene_ids)
    except GenotexError as exc:
        return job, f"failed: {exc}"
    return job, outcome.summary


def run_jobs(
    jobs_list: list[CohortJob],
    synonyms: Mapping[str, str],
    out_root: str | Path,
    *,
    gene_ids: Mapping[str, str] | None = None,
    jobs: int = 1,
) -> list[tuple[CohortJob, str]]:
    """`run_job` over planned cohorts, in `jobs` processes; (job, status) in plan order."""
    task = functools.partial(run_job, synonyms=synonyms, out_root=out_root, gene_ids=gene_ids)
    return list(ordered_map(task, jobs_list, jobs))


def preprocess_tree(
    input_root: str | Path,
    out_root: str | Path,
    synonyms: Mapping[str, str],
    task_info: TaskInfo | str | Path,
    *,
    recipes: str | Path | None = None,
    gene_ids: Mapping[str, str] | None = None,
    jobs: int = 1,
) -> list[tuple[CohortJob, str]]:
    """Preprocess every cohort of an input tree for the traits of task_info.

    Parameters
    ----------
    input_root
        The benchmark's `input/` folder (`GEO/<trait>/<GSE>/`, `TCGA/<Xena folder>/`).
    out_root
        The preprocess folder to write.
    synonyms
        The gene synonym table.
    task_info
        Whose traits are preprocessed (a `TaskInfo` or its file).
    recipes
        `RECIPES/<trait>/<GSE>.toml|json`: a GEO cohort is preprocessed only with a recipe.
    gene_ids
        Entrez GeneID -> symbol, for platforms keyed by GeneID.
    jobs
        Worker processes.

    Returns
    -------
    list of (CohortJob, str)
        Each planned cohort with its one-line status ("usable: …", "not usable: …"
        or "failed: …"), in plan order. A failed cohort never stops the others.
    """
    input_root = Path(input_root)
    if not input_root.is_dir():
        raise GenotexError("the input folder does not exist", path=input_root)
    if not isinstance(task_info, TaskInfo):
        task_info = TaskInfo.read(task_info)
    planned = plan_layout(input_root, recipes, task_info.traits)
    return run_jobs(planned, synonyms, out_root, gene_ids=gene_ids, jobs=jobs)

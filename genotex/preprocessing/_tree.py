"""Preprocess every cohort of an input tree (`input/GEO/<trait>/<GSE>`, `input/TCGA/...`)."""

from __future__ import annotations

import contextlib
import functools
import logging
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from ..core import (
    CohortInfo,
    GenotexError,
    Outcome,
    TaskInfo,
    UnsafeNameError,
    check_safe_name,
    ordered_map,
    prepare_output_folder,
    remove_stale_temporaries,
    require_dask,
)
from ._cohort import CohortOutcome, remove_cohort
from ._pipeline import preprocess_geo, preprocess_tcga
from ._probes import GeneAggregation, check_aggregation
from ._recipe import Recipe, RecipeError
from ._tcga import find_xena_folder

__all__ = ["CohortJob", "plan_layout", "preprocess_tree", "run_job", "run_jobs"]

log = logging.getLogger("genotex.preprocessing")


@dataclass(frozen=True)
class CohortJob:
    """One cohort to preprocess in a benchmark layout."""

    trait: str
    cohort: str
    folder: Path
    recipe: Path | None  # None: a TCGA cohort
    problem: str = ""  # why the job cannot run, found while planning (an unsafe file name)


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
            found = sorted(
                p for p in Path(recipes, trait).glob("*.*") if p.suffix in {".toml", ".json"}
            )
            by_cohort: dict[str, list[Path]] = {}
            for recipe in found:
                by_cohort.setdefault(recipe.stem, []).append(recipe)
            for cohort, paths in by_cohort.items():  # one job per cohort, never two that race
                folder = input_root / "GEO" / trait / cohort
                try:
                    check_safe_name(cohort, what="cohort name")
                    problem = ""
                except UnsafeNameError as exc:
                    problem = exc.reason
                if len(paths) > 1:
                    names = " and ".join(p.name for p in paths)
                    problem = f"the cohort has two recipes ({names}): keep one"
                jobs.append(CohortJob(trait, cohort, folder, paths[0], problem))
        xena = find_xena_folder(input_root / "TCGA", trait)
        if xena is not None:
            jobs.append(CohortJob(trait, "Xena", xena, None))
    return jobs


def _run(
    job: CohortJob,
    synonyms: Mapping[str, str],
    out_root: str | Path,
    gene_ids: Mapping[str, str] | None,
    input_root: str | Path | None,
    *,
    aggregation: GeneAggregation = "sum",
) -> CohortOutcome:
    if job.problem:
        raise RecipeError(job.problem, path=job.recipe)
    if job.recipe is None:
        return preprocess_tcga(job.folder, job.trait, synonyms, out_root)
    recipe = Recipe.read(job.recipe)
    if (recipe.trait, recipe.cohort) != (job.trait, job.cohort):
        raise RecipeError(
            f"is for {recipe.trait}/{recipe.cohort} but is stored as recipes/{job.trait}/"
            f"{job.recipe.name}: its trait and cohort must match its path",
            path=job.recipe,
        )
    return preprocess_geo(
        job.folder, recipe, synonyms, out_root, gene_ids=gene_ids, input_root=input_root,
        aggregation=aggregation,
    )  # fmt: skip


def run_job(
    job: CohortJob,
    synonyms: Mapping[str, str],
    out_root: str | Path,
    *,
    gene_ids: Mapping[str, str] | None = None,
    input_root: str | Path | None = None,
    debug: bool = False,
    aggregation: GeneAggregation = "sum",
) -> tuple[CohortJob, Outcome]:
    """Preprocess one planned cohort; every failure, even a bug, becomes a failed outcome.

    A failed cohort's earlier outputs and record are removed, so that the
    output tree never holds a result this run could not reproduce. With
    `debug`, an unexpected error's traceback is logged.
    """
    try:
        done = _run(job, synonyms, out_root, gene_ids, input_root, aggregation=aggregation)
    except GenotexError as exc:
        outcome = Outcome("failed", str(exc))
    except Exception as exc:  # noqa: BLE001 - one cohort's failure must not stop the others
        if debug:
            log.exception("%s/%s", job.trait, job.cohort)
        reason = str(exc).splitlines()[0] if str(exc) else ""
        outcome = Outcome("failed", f"unexpected {exc.__class__.__name__}: {reason}", True)
    else:
        return job, done.outcome
    if not job.problem:
        with contextlib.suppress(GenotexError, OSError):
            remove_cohort(out_root, job.trait, job.cohort)
    return job, outcome


def run_jobs(
    jobs_list: list[CohortJob],
    synonyms: Mapping[str, str],
    out_root: str | Path,
    *,
    gene_ids: Mapping[str, str] | None = None,
    jobs: int = 1,
    scheduler: str | None = None,
    input_root: str | Path | None = None,
    debug: bool = False,
    on_done: Callable[[CohortJob, Outcome], None] | None = None,
    aggregation: GeneAggregation = "sum",
) -> list[tuple[CohortJob, Outcome]]:
    """`run_job` over planned cohorts, in `jobs` processes or on the Dask `scheduler`;
    (job, outcome) in plan order.

    `on_done(job, outcome)` is called as each cohort's outcome is known, in plan
    order. Each trait's `cohort_info.json` lists its records in plan order
    afterwards, whatever order the workers finished in.
    """
    task = functools.partial(
        run_job,
        synonyms=synonyms,
        out_root=out_root,
        gene_ids=gene_ids,
        input_root=input_root,
        debug=debug,
        aggregation=aggregation,
    )
    done = []
    for job, outcome in ordered_map(task, jobs_list, jobs, scheduler=scheduler):
        done.append((job, outcome))
        if on_done is not None:
            on_done(job, outcome)
    order: dict[str, list[str]] = {}
    for job in jobs_list:
        if not job.problem:
            order.setdefault(job.trait, []).append(job.cohort)
    for trait, cohorts in order.items():
        CohortInfo.reorder(Path(out_root) / trait / "cohort_info.json", cohorts)
    return done


def preprocess_tree(
    input_root: str | Path,
    out_root: str | Path,
    synonyms: Mapping[str, str],
    task_info: TaskInfo | str | Path,
    *,
    recipes: str | Path | None = None,
    gene_ids: Mapping[str, str] | None = None,
    jobs: int = 1,
    scheduler: str | None = None,
    debug: bool = False,
    on_planned: Callable[[int], None] | None = None,
    on_done: Callable[[CohortJob, Outcome], None] | None = None,
    aggregation: GeneAggregation = "sum",
) -> list[tuple[CohortJob, Outcome]]:
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
    scheduler
        The address of a Dask distributed scheduler to preprocess the cohorts on
        instead (its workers must see the input and output folders). The outputs
        are those of a local run, byte for byte.
    debug
        Log the traceback of an unexpected error (the cohort still fails alone).
    on_planned, on_done
        Called with the number of cohorts once they are planned, then with each
        cohort's job and outcome as it is known (to show progress).
    aggregation
        How GEO probes become genes: "sum" (the benchmark's, the default) or
        "mean" (`map_probes`).

    Returns
    -------
    list of (CohortJob, Outcome)
        Each planned cohort with its outcome (usable, not usable or failed, with
        the reason), in plan order. A failed cohort never stops the others.
    """
    # whole paths: a Dask worker runs in another folder than this process
    input_root = Path(os.path.abspath(input_root))
    out_root = os.path.abspath(out_root)
    recipes = os.path.abspath(recipes) if recipes is not None else None
    if not input_root.is_dir():
        raise GenotexError("the input folder does not exist", path=input_root)
    if not isinstance(task_info, TaskInfo):
        task_info = TaskInfo.read(task_info)
    require_dask(scheduler)  # before any work
    prepare_output_folder(out_root)  # once, before any work
    remove_stale_temporaries(out_root)  # what a killed run left; never a live run's files
    planned = plan_layout(input_root, recipes, task_info.traits)
    if on_planned is not None:
        on_planned(len(planned))
    return run_jobs(
        planned,
        synonyms,
        out_root,
        gene_ids=gene_ids,
        jobs=jobs,
        scheduler=scheduler,
        input_root=input_root,
        debug=debug,
        on_done=on_done,
        aggregation=check_aggregation(aggregation),
    )

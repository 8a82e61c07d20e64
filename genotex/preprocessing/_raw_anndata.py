"""A raw cohort folder as an AnnData, in memory: no benchmark layout, no CSV on disk.

`raw_cohort_anndata` reads a GEO series folder (series matrix and family SOFT, or a platform
table) or a UCSC Xena cohort folder as `genotex preprocess` reads it, decides as it decides
(missing values, bias, usability), and returns the linked table as an AnnData, with the
record and how the cohort was read in `uns["genotex"]`. Nothing is written: the folder can
be anywhere, a download's or a collaborator's.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .._version import __version__
from ..core import CLINICAL_COLUMNS, GenotexError, linked_to_anndata
from ._pipeline import geo_outcome, is_tcga_folder, tcga_outcome
from ._probes import GeneAggregation
from ._recipe import Recipe
from ._symbols import load_synonyms

__all__ = ["ProposedRecipeWarning", "raw_cohort_anndata"]


class ProposedRecipeWarning(UserWarning):
    """A GEO cohort was read with the recipe genotex proposed for it: review it."""


def _recipe(cohort_dir: Path, trait: str, recipe: Recipe | str | Path | None) -> Recipe:
    """The recipe given (a `Recipe` or its file), or the one genotex proposes, said."""
    if recipe is not None:
        return recipe if isinstance(recipe, Recipe) else Recipe.read(recipe)
    from ._proposer import propose_cohort

    proposed = propose_cohort(cohort_dir, trait).proposal.recipe()
    warnings.warn(
        f"{cohort_dir.name} was read with the recipe genotex proposed for {trait} (trait, Age "
        "and Gender rows and their values): review it in uns['genotex']['recipe'], or give "
        "recipe=",
        ProposedRecipeWarning,
        stacklevel=3,
    )
    return proposed


def raw_cohort_anndata(
    cohort_dir: str | Path,
    trait: str,
    synonyms: Mapping[str, str] | str | Path,
    *,
    recipe: Recipe | str | Path | None = None,
    gene_ids: Mapping[str, str] | None = None,
    aggregation: GeneAggregation = "sum",
) -> Any:
    """One raw cohort as an AnnData, preprocessed in memory as `preprocess_cohort` does.

    Parameters
    ----------
    cohort_dir
        A GEO series folder (`*_series_matrix.txt.gz` and `*_family.soft.gz`) or a Xena
        cohort folder (`*clinicalMatrix` and the expression table).
    trait
        The trait the cohort is read for.
    synonyms
        The gene synonym table (`load_synonyms`), or its file.
    recipe
        A GEO cohort's recipe (a `Recipe` or its file). Without one, genotex's proposal is
        used, with a `ProposedRecipeWarning` (the recipe is in `uns["genotex"]["recipe"]`).
    gene_ids, aggregation
        As `preprocess_cohort`.

    Returns
    -------
    anndata.AnnData
        The same numbers `preprocess_cohort` writes in the linked table: `X` the genes,
        `obs` the trait, Age and Gender, `uns["genotex"]` the trait, the cohort, its record
        (`cohort_info`), how it was read (`details`), the folder and, for GEO, the recipe.

    Raises
    ------
    GenotexError
        The folder is missing or unreadable, or the cohort is not usable for the trait
        (its record's reason: no gene data, the trait not available or biased).
    """
    folder = Path(cohort_dir)
    if not folder.is_dir():
        raise GenotexError("the cohort folder does not exist", path=folder)
    if isinstance(synonyms, (str, Path)):
        synonyms = load_synonyms(synonyms)
    used: Recipe | None = None
    if is_tcga_folder(folder):
        outcome = tcga_outcome(folder, trait, synonyms)
    else:
        used = _recipe(folder, trait, recipe)
        outcome = geo_outcome(folder, used, synonyms, gene_ids=gene_ids,
                              input_root=folder.parent.parent, aggregation=aggregation)  # fmt: skip
    if outcome.linked is None:
        raise GenotexError(f"is not usable for {trait}: {outcome.outcome.reason or 'no table'}",
                           path=folder)  # fmt: skip
    uns = {
        "trait": trait,
        "cohort": outcome.cohort,
        "cohort_info": outcome.record.to_dict(),
        "details": outcome.details,
        "source": str(folder),
        "genotex_version": __version__,
    }
    if used is not None:
        uns["recipe"] = used.to_dict()
    return linked_to_anndata(outcome.linked, obs_columns=(trait, *CLINICAL_COLUMNS), uns=uns)

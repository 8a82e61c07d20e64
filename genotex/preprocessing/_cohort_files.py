"""Which files of a GEO cohort folder to read: those a recipe names, or the folder's only ones."""

from __future__ import annotations

from pathlib import Path

from ._geo import GEOFormatError
from ._recipe import Recipe, RecipeError

__all__ = ["cohort_file", "find_matrix", "find_platform"]


def cohort_file(
    cohort_dir: Path, named: str | None, pattern: str, what: str, recipe: Recipe | None
) -> Path:
    """The file the recipe names (relative to the cohort folder), or the folder's only `pattern`
    file.
    """
    if named:
        path = cohort_dir / named
        if not path.exists():
            reason = f"names the {what} {named!r}, which does not exist in {cohort_dir}"
            raise RecipeError(reason, path=recipe.source if recipe else None)
        return path
    found = sorted(cohort_dir.glob(pattern))
    if not found:
        raise GEOFormatError(
            f"has no {pattern} file and the recipe names no {what}", path=cohort_dir
        )
    if len(found) > 1:
        names = ", ".join(p.name for p in found)
        raise GEOFormatError(
            f"has several {what}s ({names}): name one in the recipe", path=cohort_dir
        )
    return found[0]


def find_matrix(cohort_dir: Path, recipe: Recipe | None = None) -> Path:
    """The series matrix named by the recipe, or the folder's only one."""
    named = recipe.matrix if recipe is not None else None
    return cohort_file(cohort_dir, named, "*_series_matrix.txt*", "series matrix", recipe)


def find_platform(cohort_dir: Path, recipe: Recipe) -> Path:
    """The platform file named by the recipe (a family SOFT or a stand-alone GPL), or the family
    SOFT.
    """
    return cohort_file(cohort_dir, recipe.platform, "*_family.soft*", "platform file", recipe)

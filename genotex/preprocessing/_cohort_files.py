"""Which files of a GEO cohort folder to read: those a recipe names, or the folder's only ones.

A recipe may name a file outside the cohort folder (`platform =
"../platforms/GPL96.txt.gz"`), but never one outside the input tree: the
resolved path, links followed, must lie under `root`.
"""

from __future__ import annotations

import os
from pathlib import Path

from ._geo import GEOFormatError
from ._recipe import Recipe, RecipeError

__all__ = ["cohort_file", "find_matrix", "find_platform"]


def _inside(path: Path, root: Path) -> bool:
    real, real_root = Path(os.path.realpath(path)), Path(os.path.realpath(root))
    return real == real_root or real_root in real.parents


def cohort_file(
    cohort_dir: Path,
    named: str | None,
    pattern: str,
    what: str,
    recipe: Recipe | None,
    *,
    root: Path | None = None,
) -> Path:
    """The file the recipe names (relative to the cohort folder), or the folder's only one.

    `root` is the input tree a named file must stay in (default: the cohort
    folder's grandparent, as in one-cohort mode).
    """
    source = recipe.source if recipe else None
    if named:
        path = cohort_dir / named
        root = root if root is not None else cohort_dir.parent.parent
        if not _inside(path, root):
            reason = f"names the {what} {named!r}, which lies outside the input tree {root}"
            raise RecipeError(reason, path=source)
        if not path.is_file():
            reason = f"names the {what} {named!r}, which does not exist in {cohort_dir}"
            raise RecipeError(reason, path=source)
        return path
    found = sorted(cohort_dir.glob(pattern))
    if not found:
        reason = f"has no {pattern} file and the recipe names no {what}"
        raise GEOFormatError(reason, path=cohort_dir)
    if len(found) > 1:
        names = ", ".join(p.name for p in found)
        raise GEOFormatError(
            f"has several {what}s ({names}): name one in the recipe", path=cohort_dir
        )
    return found[0]


def find_matrix(
    cohort_dir: Path, recipe: Recipe | None = None, *, root: Path | None = None
) -> Path:
    """The series matrix named by the recipe, or the folder's only one."""
    named = recipe.matrix if recipe is not None else None
    pattern = "*_series_matrix.txt*"
    return cohort_file(cohort_dir, named, pattern, "series matrix", recipe, root=root)


def find_platform(cohort_dir: Path, recipe: Recipe, *, root: Path | None = None) -> Path:
    """The platform file the recipe names (family SOFT, stand-alone GPL), or the family SOFT."""
    pattern = "*_family.soft*"
    return cohort_file(cohort_dir, recipe.platform, pattern, "platform file", recipe, root=root)

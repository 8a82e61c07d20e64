"""What a person or an agent reads before writing a recipe (`genotex inspect COHORT_DIR`)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import pandas as pd

from ..core import GenotexError
from ._geo import characteristics_dictionary, read_series_matrix
from ._probes import MappingError, explain_gene_column
from ._proposer import propose_recipe
from ._soft import read_soft

__all__ = ["inspect_cohort"]


def _shorten(text: str, width: int = 160) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def _characteristics(
    table: pd.DataFrame, background: str, max_values: int, trait: str | None
) -> list[str]:
    """Each row with its values, and beside it the variable the proposer reads there."""
    rows = characteristics_dictionary(table, max_values=100_000)
    proposal = propose_recipe(rows, background, trait or "")
    names = ("trait", "Age", "Gender") if trait else ("Age", "Gender")
    marks = {}
    for name in names:
        choice = proposal.choices[name]
        if choice.row is not None:
            marks[choice.row] = f"  <- proposed {name} (confidence {choice.confidence:.2f})"
    lines = ["Characteristics (row: most frequent values):"]
    for row, values in rows.items():
        lines.append(_shorten(f"  {row}: {values[:max_values]}") + marks.get(row, ""))
    for name in names:
        choice = proposal.choices[name]
        lines.append(_shorten(f"  proposed {name}: " + "; ".join(choice.evidence), 400))
    if not trait:
        lines.append("  with the trait given, the proposed trait row is shown too")
    return lines


def _platform_lines(
    platform: pd.DataFrame, accession: str, max_values: int, synonyms: Mapping[str, str] | None
) -> list[str]:
    lines = [f"Platform {accession}: {len(platform)} rows; annotation columns (example values):"]
    for column in platform.columns:
        examples = [str(v) for v in platform[column].dropna().head(max_values * 4).unique()[:3]]
        lines.append(_shorten(f"  {column}: {examples}"))
    if synonyms is None:
        lines.append('  gene_column = "auto": with a synonym table, the column it reads is shown')
    else:
        try:
            choice = explain_gene_column(platform, synonyms.values())
            lines.append(
                _shorten(f'  gene_column = "auto" reads {choice.column!r}: {choice.reason}', 400)
            )
        except MappingError as exc:
            lines.append(f'  gene_column = "auto" finds no column: {exc.reason}')
    return lines


def _soft_lines(
    soft_path: Path,
    max_values: int,
    with_samples: bool,
    synonyms: Mapping[str, str] | None,
    trait: str | None,
) -> list[str]:
    soft = read_soft(soft_path)
    lines = [f"-- {soft_path.name}: {len(soft.platforms)} platform(s), {len(soft.samples)} samples"]
    if with_samples and soft.samples:
        lines += [
            "Background:",
            *(_shorten("  " + line, 400) for line in soft.background.splitlines()),
        ]
        lines += _characteristics(soft.characteristics(), soft.background, max_values, trait)
    for accession, platform in soft.platforms.items():
        lines += _platform_lines(platform, accession, max_values, synonyms)
    for accession in soft.tableless:
        lines.append(
            f"Platform {accession}: no table (declared without one; a sequencing platform?)"
        )
    return lines


def inspect_cohort(
    cohort_dir: str | Path,
    *,
    max_values: int = 8,
    synonyms: Mapping[str, str] | None = None,
    trait: str | None = None,
) -> str:
    """Background, characteristics and platform columns of a GEO folder (or a folder of GPLs).

    With `synonyms`, each platform also shows the column `gene_column = "auto"`
    would read and why; with `trait`, the characteristics show the proposed
    trait row beside the Age and Gender rows (`propose_recipe`).
    """
    folder = Path(cohort_dir)
    if not folder.is_dir():
        raise GenotexError("is not a folder", path=folder)
    lines: list[str] = [f"== {folder.name} =="]
    matrices = sorted(folder.glob("*_series_matrix.txt*"))
    softs = sorted(folder.glob("*_family.soft*"))
    others = sorted(p for p in folder.iterdir() if p.name.startswith("GPL") and p.is_file())
    if not (matrices or softs or others):
        raise GenotexError("holds no series matrix, family SOFT or GPL file", path=folder)
    for matrix_path in matrices:
        matrix = read_series_matrix(matrix_path)
        lines += [
            f"-- {matrix_path.name}: {matrix.expression.shape[0]} rows"
            f" x {len(matrix.samples)} samples",
            "Background:",
            *(_shorten("  " + line, 400) for line in matrix.background.splitlines()),
        ]
        lines += _characteristics(matrix.characteristics, matrix.background, max_values, trait)
    for soft_path in softs + others:
        lines += _soft_lines(soft_path, max_values, not matrices, synonyms, trait)
    return "\n".join(lines)

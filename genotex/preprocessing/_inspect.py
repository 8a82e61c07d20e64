"""What a person or an agent reads before writing a recipe (`genotex inspect COHORT_DIR`)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import pandas as pd

from ..core import GenotexError
from ._clinical import propose_rows
from ._cohort_files import find_matrix
from ._geo import characteristics_dictionary, read_series_matrix
from ._probes import MappingError, explain_gene_column
from ._soft import read_soft

__all__ = ["inspect_cohort", "proposal_text"]


def _shorten(text: str, width: int = 160) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def _characteristics(table: pd.DataFrame, max_values: int) -> list[str]:
    lines = ["Characteristics (row: most frequent values):"]
    for row, values in characteristics_dictionary(table).items():
        lines.append(_shorten(f"  {row}: {values[:max_values]}"))
    proposal = propose_rows(table)
    for name, variable in proposal.items():
        lines.append(f"  proposed {name}: row {variable.row}")
    if not proposal:
        lines.append("  no Age or Gender row found by key names")
    return lines


def _platform_lines(
    platform: pd.DataFrame, accession: str, max_values: int, synonyms: Mapping[str, str] | None
) -> list[str]:
    lines = [f"Platform {accession}: {len(platform)} rows; annotation columns (example values):"]
    for column in platform.columns:
        examples = [str(v) for v in platform[column].dropna().head(max_values * 4).unique()[:3]]
        lines.append(_shorten(f"  {column}: {examples}"))
    if synonyms is None:
        lines.append('  gene_column = "auto": give --synonyms to see which column it reads')
    else:
        try:
            choice = explain_gene_column(platform, synonyms.values())
            lines.append(
                _shorten(f'  gene_column = "auto" reads {choice.column!r}: {choice.reason}', 400)
            )
        except MappingError as exc:
            lines.append(f'  gene_column = "auto" finds no column: {exc.reason}')
    return lines


def _soft_lines(soft_path: Path, max_values: int, with_samples: bool, synonyms) -> list[str]:
    soft = read_soft(soft_path)
    lines = [f"-- {soft_path.name}: {len(soft.platforms)} platform(s), {len(soft.samples)} samples"]
    if with_samples and soft.samples:
        lines += [
            "Background:",
            *(_shorten("  " + line, 400) for line in soft.background.splitlines()),
        ]
        lines += _characteristics(soft.characteristics(), max_values)
    for accession, platform in soft.platforms.items():
        lines += _platform_lines(platform, accession, max_values, synonyms)
    for accession in soft.tableless:
        lines.append(
            f"Platform {accession}: no table (declared without one; a sequencing platform?)"
        )
    return lines


def inspect_cohort(
    cohort_dir: str | Path, *, max_values: int = 8, synonyms: Mapping[str, str] | None = None
) -> str:
    """Background, characteristics and platform columns of a GEO folder (or a folder of GPLs).

    With `synonyms`, each platform also shows the column `gene_column = "auto"`
    would read and why.
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
        lines += _characteristics(matrix.characteristics, max_values)
    for soft_path in softs + others:
        lines += _soft_lines(soft_path, max_values, not matrices, synonyms)
    return "\n".join(lines)


def proposal_text(cohort_dir: str | Path, trait: str) -> str:
    """A starting recipe (TOML) for a GEO cohort: the Age and Gender rows found, and every row's
    values.

    The trait's rules are left to the reader: the comment lines list each
    characteristics row with its most frequent values.
    """
    cohort_dir = Path(cohort_dir)
    matrix = read_series_matrix(find_matrix(cohort_dir))
    lines = [
        f"# proposed recipe for {trait} / {cohort_dir.name}: review it, then write the trait rules",
        f'trait = "{trait}"',
        f'cohort = "{cohort_dir.name}"',
        "",
    ]
    for name, variable in propose_rows(matrix.characteristics).items():
        lines += [f"[variables.{name.lower()}]", f"row = {variable.row}  # {variable.note}"]
        if variable.numeric:
            lines += ["numeric = true", ""]
        else:
            rules = '{ match = "female", how = "exact", value = 0 }, '
            rules += '{ match = "male", how = "exact", value = 1 }'
            lines += [f"rules = [{rules}]", ""]
    lines.append("# characteristics rows (row: most frequent values):")
    for row, values in characteristics_dictionary(matrix.characteristics).items():
        lines.append(f"#   {row}: {values[:6]}")
    return "\n".join(lines)

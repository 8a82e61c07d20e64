"""What `GeneAnalysis` fits, read from a table: the genes, the trait, the design's columns.

A linked DataFrame or an AnnData is read once into arrays for the samples that have the
trait and every covariate: the gene columns (checked by `_gene_columns`), the trait (0/1,
a contrast's levels, or a continuous value), the covariates (given by name, or coded from
a formula) and the trait's own terms (a formula's interactions). What was left out, and
why, is kept for the fit to say: samples by the first value they lack, columns for not
being genes.
"""

from __future__ import annotations

import warnings
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from ._design import refuse_infinite
from ._formula import FormulaDesign, LevelCoding, coded_design, contrast_trait
from ._gene_columns import (
    no_duplicated_samples,
    no_empty_gene_names,
    no_repeated_samples,
    non_gene_columns,
)
from ._table_columns import (
    DroppedSamplesWarning,
    annotations_and_genes,
    binary_trait,
    numeric_columns,
    text_columns,
)

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["AnalysisData", "Question", "analysis_data", "tested_contrasts"]

#: Columns of a linked table that are never genes.
_CLINICAL = ("Age", "Gender")


@dataclass(frozen=True)
class Question:
    """What is asked of a table: the trait and how it is coded, what it is adjusted for."""

    trait: str
    covariates: list[str] = field(default_factory=list)  # the condition first
    groups: str | None = None
    genes: list[str] | None = None
    case: str | None = None
    formula: FormulaDesign | None = None
    contrast: Any = None
    continuous: bool = False
    symbols: Collection[str] | None = None


@dataclass
class AnalysisData:
    """The arrays of the samples kept (`keep`), and what was left out and why."""

    x: np.ndarray
    y: np.ndarray
    z: np.ndarray | None
    z_names: list[str]
    w: np.ndarray | None
    w_names: list[str]
    genes: list[str]
    annotations: pd.DataFrame
    keep: np.ndarray
    dropped_by: dict[str, int]
    text_columns: list[str]
    levels: LevelCoding | None


def _trait(annotations: pd.DataFrame, question: Question) -> tuple[np.ndarray, LevelCoding | None]:
    """The tested column, with a contrast's level coding: 0/1, a contrast's case, a number."""
    if question.contrast is not None:
        levels = contrast_trait(annotations, question.trait, question.contrast)
        return levels.tested, levels
    if question.continuous:
        if question.trait not in annotations.columns:
            raise ValueError(f"the table has no trait column {question.trait!r}")
        values = numeric_columns(annotations, [question.trait], "trait")[:, 0]
        refuse_infinite(values, question.trait, annotations.index, what="trait")
        return values, None
    return binary_trait(annotations, question.trait, question.case), None


def _formula_columns(
    question: Question, annotations: pd.DataFrame, y: np.ndarray, missing: dict[str, np.ndarray]
) -> tuple[np.ndarray, list[str], np.ndarray, list[str], dict[str, np.ndarray]]:
    """A formula's covariates and trait terms, the samples each variable lacks added to
    `missing`, and those a transform made no value for (by the column it made none in).
    An infinite value is refused as through `covariates=`.
    """
    assert question.formula is not None
    coded = coded_design(question.formula, annotations, question.trait, y)
    missing |= {v: annotations[v].isna().to_numpy() for v in question.formula.variables}
    lacking = np.logical_or.reduce([*missing.values(), np.zeros(len(y), dtype=bool)])
    made: dict[str, np.ndarray] = {}
    for values, names in ((coded.z, coded.z_names), (coded.w, coded.w_names)):
        for index, name in enumerate(names):
            refuse_infinite(values[:, index], name, annotations.index)
            none = np.isnan(values[:, index]) & ~lacking
            if none.any():
                made[name] = none
    return coded.z, coded.z_names, coded.w, coded.w_names, made


def _said_dropped(
    dropped_by: dict[str, int], made: dict[str, np.ndarray], index: Any, n: int
) -> None:
    said = []
    for name, count in dropped_by.items():
        if name in made:
            ids = ", ".join(repr(str(s)) for s in index[made[name]][:3])
            said.append(f"{count} for no value of {name} the formula made ({ids})")
        else:
            said.append(f"{count} for a missing {name}")
    total = sum(dropped_by.values())
    warnings.warn(
        f"{total} of {n} samples were left out ({', '.join(said)})",
        DroppedSamplesWarning,
        stacklevel=4,
    )


def analysis_data(data: Any, question: Question) -> AnalysisData:
    """Read `data` (a linked DataFrame or an AnnData) for `question`: see the module."""
    formula = question.formula
    read = list(formula.variables) if formula is not None else question.covariates
    groups = [question.groups] if question.groups else []
    not_genes = {question.trait, *read, *_CLINICAL, *groups}
    not_genes |= non_gene_columns(data, not_genes, question.genes, question.symbols)
    annotations, block = annotations_and_genes(data, not_genes, question.genes)
    no_duplicated_samples(annotations.index)
    genes = [str(c) for c in block.columns]
    no_empty_gene_names(genes)
    no_repeated_samples(block)
    if question.groups is not None and question.groups not in annotations.columns:
        raise ValueError(f"the table has no groups column {question.groups!r}")
    y, levels = _trait(annotations, question)
    missing = {"trait": ~np.isfinite(y)}
    made: dict[str, np.ndarray] = {}
    w: np.ndarray | None = None
    w_names: list[str] = []
    if formula is not None:  # each variable the formula reads, then its coded columns
        coded, z_names, trait_terms, w_names, made = _formula_columns(question, annotations, y,
                                                                      missing)  # fmt: skip
        z = coded if coded.shape[1] else None
        w = trait_terms if trait_terms.shape[1] else None
        missing |= made
    else:
        z = numeric_columns(annotations, read, "covariate") if read else None
        z_names = list(read)
        for index, name in enumerate(read):
            assert z is not None
            refuse_infinite(z[:, index], name, annotations.index)
            missing[name] = np.isnan(z[:, index])
    if levels is not None and levels.others.shape[1]:  # the further levels come first in z
        z = levels.others if z is None else np.column_stack([levels.others, z])
        z_names = [*levels.names, *z_names]
    keep = ~np.logical_or.reduce(list(missing.values()))
    dropped_by: dict[str, int] = {}
    counted = np.zeros(len(y), dtype=bool)
    for name, lacking in missing.items():
        first = lacking & ~counted
        counted |= lacking
        if first.any():
            dropped_by[name] = int(first.sum())
    if dropped_by:
        _said_dropped(dropped_by, made, annotations.index, len(y))
    x = block.to_numpy(dtype=np.float64)[keep]
    bad = ~np.isfinite(x).all(axis=0)
    if bad.any():
        named = ", ".join(repr(str(g)) for g in np.asarray(genes)[bad][:3])
        raise ValueError(
            f"{int(bad.sum())} gene columns hold missing or non-numeric values ({named}"
            f"{', ...' if bad.sum() > 3 else ''}): drop or impute them first"
        )
    texts = text_columns(data, not_genes, question.genes)  # said once the table is usable
    return AnalysisData(
        x, y[keep], None if z is None else z[keep], z_names, None if w is None else w[keep],
        w_names, genes, annotations, keep, dropped_by, texts, levels,
    )  # fmt: skip


def tested_contrasts(
    columns: list[str], trait: str, levels: LevelCoding | None, coef: Any
) -> dict[str, np.ndarray]:
    """The contrasts the per-gene tests make, by name, as weights over the design's
    `columns`: each of a multi-level trait's pairs ("III - I"), then each coefficient
    `coef` names (a column: "Age", "Trait:Age", "C(stage)[T.II]"); by default the trait's.

    Raises ValueError naming the design's columns for a coefficient it lacks, or a level
    left out of the design.
    """
    tested: dict[str, np.ndarray] = {}

    def unit(name: str) -> np.ndarray:
        if name not in columns:
            shown = ", ".join(repr(c) for c in columns[:12])
            raise ValueError(f"coef {name!r} is not a column of the design ({shown}); an "
                             "interaction is written in the design formula, ~ Trait + Age + "
                             "Trait:Age")  # fmt: skip
        vector = np.zeros(len(columns))
        vector[columns.index(name)] = 1.0
        return vector

    for case, control in levels.pairs if levels is not None else []:
        vector = np.zeros(len(columns))
        for level, sign in ((case, 1.0), (control, -1.0)):
            column = levels.column_of(level) if levels is not None else None
            if column is None:
                continue
            if column not in columns:
                raise ValueError(f"the level {level!r} of {trait!r} was left out of the design, "
                                 f"so {case} - {control} cannot be tested")  # fmt: skip
            vector[columns.index(column)] += sign
        tested[f"{case} - {control}"] = vector
    asked = [coef] if isinstance(coef, str) else list(coef or [])
    for name in asked:
        tested[str(name)] = unit(str(name))
    return tested or {trait: unit(columns[1])}

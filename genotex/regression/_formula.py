"""A notebook design written as a formula (`GeneAnalysis(design="~ Trait + Age + C(stage)")`).

The formula names the trait and what it is adjusted for, as R's `lm` and PyDESeq2 write
designs. `formulaic` (the formula library PyDESeq2 uses; the `formula` extra) codes the terms
other than the trait into covariate columns: text and `C(...)` terms as treatment contrasts
against their first level, a paired design's patient as `C(patient)`, interactions as
products. The trait stays the tested column, coded 0/1 as without a formula; each gene is
then tested on ``1 + trait + covariates``, by OLS or limma alike.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["FormulaDesign", "coded_covariates", "contrast_trait", "formula_design"]


@dataclass(frozen=True)
class FormulaDesign:
    """A formula's covariates: the data columns it reads (besides the trait) and the coded
    columns they give, in the model matrix's order.
    """

    variables: tuple[str, ...]
    terms: tuple[str, ...]


def _formulaic() -> Any:
    """The formulaic module, imported when a formula is first given."""
    try:
        import formulaic
    except ImportError:
        raise ImportError(
            "a design formula needs formulaic: install genotex with the formula extra "
            "(pip install 'genotex[formula]')"
        ) from None
    return formulaic


def formula_design(design: str, trait: str) -> FormulaDesign:
    """Read `design` ("~ Trait + Age + C(stage)"): the trait must be one of its plain terms.

    Raises
    ------
    ValueError
        The formula has a left-hand side, does not hold the trait as a plain term, or cannot
        be read; in one sentence.
    """
    formulaic = _formulaic()
    text = str(design).strip()
    if not text.startswith("~"):
        raise ValueError(f"the design {design!r} must start with '~' (the genes are the "
                         "responses; write only the right-hand side)")  # fmt: skip
    try:
        terms = [str(term) for term in formulaic.Formula(text)]
    except Exception as exc:  # noqa: BLE001 - formulaic's parse errors have no common base
        raise ValueError(f"the design {design!r} cannot be read: {exc}") from None
    covariates, holds_trait = [], False
    for term in terms:
        if term == "1":
            continue
        needs = formulaic.Formula(f"~ {term}").required_variables
        if trait not in needs:
            covariates.append(term)
        elif term == trait:
            holds_trait = True
        else:
            raise ValueError(f"the trait {trait!r} enters the design as {term!r}: give it as a "
                             "plain term; it is the tested column, coded 0/1")  # fmt: skip
    if not holds_trait:
        raise ValueError(f"the design {design!r} does not hold the trait {trait!r} as a term")
    variables = formulaic.Formula("~ " + " + ".join(covariates or ["1"])).required_variables
    return FormulaDesign(tuple(sorted(variables)), tuple(covariates))


def coded_covariates(
    design: FormulaDesign, annotations: pd.DataFrame
) -> tuple[np.ndarray, list[str]]:
    """The covariate columns the formula codes, one row a sample (NaN where one of its
    variables is missing), and their names. Levels are those of the complete samples.
    """
    if not design.terms:
        return np.empty((len(annotations), 0)), []
    lacking = [v for v in design.variables if v not in annotations.columns]
    if lacking:
        raise ValueError(f"the design names {', '.join(map(repr, lacking))}, which the data "
                         "does not hold (not a sample annotation)")  # fmt: skip
    complete = annotations[list(design.variables)].notna().all(axis=1).to_numpy()
    matrix = _formulaic().model_matrix("~ " + " + ".join(design.terms), annotations[complete])
    coded = matrix.drop(columns=[c for c in matrix.columns if c == "Intercept"])
    values = np.full((len(annotations), coded.shape[1]), np.nan)
    values[complete] = coded.to_numpy(dtype=float)
    return values, [str(c) for c in coded.columns]


def contrast_trait(
    annotations: pd.DataFrame, trait: str, contrast: tuple[str, str]
) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """A trait of more than two levels, tested as one contrast: `contrast` is (the case level,
    the control level).

    Returns the tested column (1 for the case level, 0 for every other, NaN where missing)
    and an indicator column for each further level, NaN where missing: with the control
    level as the reference of the design, the tested coefficient is the case - control
    difference, estimated on every sample (as limma's and R's contrasts are).
    """
    if trait not in annotations.columns:
        raise ValueError(f"the table has no trait column {trait!r}")
    if not (isinstance(contrast, (tuple, list)) and len(contrast) == 2):
        raise ValueError(f"contrast must be (case level, control level), not {contrast!r}")
    column = annotations[trait]
    text = column.astype(object).where(column.isna(), column.astype(str))
    levels = sorted(str(v) for v in pd.unique(text.dropna()))
    case, control = (str(level) for level in contrast)
    lacking = [level for level in (case, control) if level not in levels]
    if lacking or case == control:
        raise ValueError(f"the contrast {contrast!r} names levels the trait {trait!r} does not "
                         f"hold as two ({', '.join(map(repr, levels[:8]))})")  # fmt: skip
    missing = text.isna().to_numpy()

    def indicator(level: str) -> np.ndarray:
        return np.where(missing, np.nan, (text == level).to_numpy(dtype=float))

    others = [level for level in levels if level not in (case, control)]
    columns = np.column_stack([indicator(level) for level in others]) if others else np.empty(
        (len(text), 0))  # fmt: skip
    return indicator(case), columns, [f"{trait}[{level}]" for level in others]

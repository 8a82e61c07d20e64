"""A notebook design written as a formula (`GeneAnalysis(design="~ Trait + Age + C(stage)")`).

The formula names the trait and what it is adjusted for, as R's `lm` and PyDESeq2 write
designs. `formulaic` (the formula library PyDESeq2 uses; the `formula` extra) codes the terms
other than the trait into covariate columns: text and `C(...)` terms as treatment contrasts
against their first level, a paired design's patient as `C(patient)`, interactions as
products. The trait stays the tested column, coded 0/1 as without a formula; each gene is
then tested on ``1 + trait + covariates``, by OLS or limma alike.
"""

from __future__ import annotations

import re
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

__all__ = [
    "CodedDesign",
    "FormulaDesign",
    "LevelCoding",
    "coded_design",
    "contrast_trait",
    "formula_design",
]


@dataclass(frozen=True)
class FormulaDesign:
    """A formula read for a trait: its text, the data columns it reads besides the trait, its
    covariate terms (without the trait), and the trait's own terms beyond the plain one (its
    interactions, `Trait:Age`), each as formula text.
    """

    text: str
    variables: tuple[str, ...]
    terms: tuple[str, ...]
    trait_terms: tuple[str, ...] = ()


@dataclass(frozen=True)
class CodedDesign:
    """A formula's columns, one row a sample (NaN where a variable is missing or a transform
    made none): the covariates (`z`), the trait's interactions (`w`), and their names.
    """

    z: np.ndarray
    z_names: list[str]
    w: np.ndarray
    w_names: list[str]


#: The terminal's colour codes formulaic puts in its messages (never shown raw).
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


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


def _said(exc: Exception) -> str:
    """formulaic's message on one line, without its colour codes."""
    return " ".join(_ANSI.sub("", str(exc)).split())


def _factor_text(factor: Any) -> str:
    """A factor as formula text: Python code in braces (`{Age/10}`, as formulaic writes it),
    a column name as it is (in backticks when it is no identifier).
    """
    method = getattr(factor.eval_method, "value", str(factor.eval_method))
    if method == "python":
        return f"{{{factor.expr}}}"
    if method == "lookup" and not str(factor.expr).isidentifier():
        return f"`{factor.expr}`"
    return str(factor.expr)


def formula_design(design: str, trait: str) -> FormulaDesign:
    """Read `design` ("~ Trait + Age + C(stage)"): the trait must be one of its plain terms,
    and may enter others only as itself (`Trait:Age`, an interaction).

    A formula is code: each `C(...)`, `np.log(...)` or `{...}` term runs as Python when the
    design is made, as in formulaic, patsy and R.

    Raises
    ------
    ValueError
        The formula has a left-hand side, drops the intercept (`~ 0 + ...`, `- 1`), does
        not hold the trait as a plain term, transforms it, or cannot be read; in one
        sentence.
    """
    formulaic = _formulaic()
    text = str(design).strip()
    if not text.startswith("~"):
        raise ValueError(f"the design {design!r} must start with '~' (the genes are the "
                         "responses; write only the right-hand side)")  # fmt: skip
    try:
        formula = formulaic.Formula(text)
        terms = [(str(term), ":".join(_factor_text(f) for f in term.factors)) for term in formula]
        needs = {shown: formulaic.Formula(f"~ {shown}").required_variables for _, shown in terms}
    except Exception as exc:  # noqa: BLE001 - formulaic's parse errors have no common base
        raise ValueError(f"the design {design!r} cannot be read: {_said(exc)}") from None
    if "1" not in {name for name, _ in terms}:
        raise ValueError(
            f"the design {design!r} drops the intercept (~ 0 + ..., - 1): GeneAnalysis's tests "
            "and model keep one, and the trait's coefficient is the case - control "
            "difference; write it without, and give levels to compare as contrast="
        )
    covariates, trait_terms, holds_trait = [], [], False
    for name, shown in terms:
        if name == "1":
            continue
        if trait not in needs[shown]:
            covariates.append(shown)
        elif shown in (trait, f"`{trait}`"):
            holds_trait = True
        elif _as_itself(formula, name, trait):
            trait_terms.append(shown)
        else:
            raise ValueError(f"the trait {trait!r} enters the design as {name!r}: give it as a "
                             "plain term (and in interactions as itself, Trait:Age); it is "
                             "the tested column, coded 0/1")  # fmt: skip
    if not holds_trait:
        raise ValueError(f"the design {design!r} does not hold the trait {trait!r} as a term")
    variables = set(formula.required_variables) - {trait}
    return FormulaDesign(text, tuple(sorted(variables)), tuple(covariates), tuple(trait_terms))


def _as_itself(formula: Any, name: str, trait: str) -> bool:
    """Whether the term `name` holds the trait only as a plain factor, beside other factors."""
    term = next(t for t in formula if str(t) == name)
    plain = [f for f in term.factors if str(f.expr) == trait
             and getattr(f.eval_method, "value", "") == "lookup"]  # fmt: skip
    others = [f for f in term.factors if f not in plain]
    return bool(plain) and bool(others) and not any(trait in str(f.expr) for f in others)


def coded_design(
    design: FormulaDesign, annotations: pd.DataFrame, trait: str, coded: np.ndarray
) -> CodedDesign:
    """The formula's columns on `annotations`, the trait given as `coded` (its 0/1 or numeric
    values, NaN where missing), one row a sample: NaN where one of its variables is missing,
    or where a transform made none (`np.log(Age - 60)` below 60). Levels are those of the
    samples that have every variable; an interaction is coded as R codes it beside the
    formula's other terms.
    """
    if not design.terms and not design.trait_terms:
        return CodedDesign(np.empty((len(annotations), 0)), [], np.empty((len(annotations), 0)), [])
    lacking = [v for v in design.variables if v not in annotations.columns]
    if lacking:
        raise ValueError(f"the design names {', '.join(map(repr, lacking))}, which the data "
                         "does not hold (not a sample annotation)")  # fmt: skip
    complete = annotations[list(design.variables)].notna().all(axis=1).to_numpy()
    frame = annotations.loc[complete, list(design.variables)].copy()
    frame[trait] = np.asarray(coded, dtype=np.float64)[complete]
    text = " + ".join(["1", trait, *design.terms, *design.trait_terms])
    try:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # NaN a transform makes: counted
            matrix = _formulaic().model_matrix(f"~ {text}", frame, na_action="ignore")
    except Exception as exc:  # noqa: BLE001 - formulaic's and the code's errors alike
        raise ValueError(f"the design {design.text!r} cannot be made on the data: "
                         f"{_said(exc)}") from None  # fmt: skip
    slices = matrix.model_spec.term_slices
    own = {str(term): part for term, part in slices.items()}

    def block(terms: tuple[str, ...]) -> tuple[np.ndarray, list[str]]:
        names: list[str] = []
        for term in _terms_of(terms):
            names += [str(c) for c in matrix.columns[own[term]]]
        values = np.full((len(annotations), len(names)), np.nan)
        values[complete] = matrix.loc[:, names].to_numpy(dtype=float)
        return values, names

    z, z_names = block(design.terms)
    w, w_names = block(design.trait_terms)
    return CodedDesign(z, z_names, w, w_names)


def _terms_of(shown: tuple[str, ...]) -> list[str]:
    """formulaic's names of the terms written as `shown` (`{Age/10}` is `Age / 10`)."""
    if not shown:
        return []
    formula = _formulaic().Formula("~ " + " + ".join(shown))
    return [str(term) for term in formula if str(term) != "1"]


@dataclass(frozen=True)
class LevelCoding:
    """A trait of more than two levels, coded for the contrasts asked of it.

    `tested` is 1 for the first contrast's case level and 0 for every other (NaN where
    missing), the design's column `trait[case]`; each further level but the reference (the
    first contrast's control) has an indicator column in `others`, named `names`. `pairs`
    are the contrasts (case, control); `counts` the samples of each level.
    """

    trait: str
    tested: np.ndarray
    others: np.ndarray
    names: list[str]
    pairs: list[tuple[str, str]]
    counts: dict[str, int]

    @property
    def reference(self) -> str:
        return self.pairs[0][1]

    def column_of(self, level: str) -> str | None:
        """The design column whose coefficient is `level` - reference (None: the reference)."""
        return None if level == self.reference else f"{self.trait}[{level}]"


def _pairs(contrast: Any) -> list[tuple[str, str]]:
    """`contrast` as a list of (case, control) pairs: one pair, or a list of them."""
    if (
        isinstance(contrast, (tuple, list))
        and len(contrast) == 2
        and all(isinstance(level, (str, int, float)) for level in contrast)
    ):
        return [(str(contrast[0]), str(contrast[1]))]
    if (
        isinstance(contrast, (tuple, list))
        and contrast
        and all(isinstance(pair, (tuple, list)) and len(pair) == 2 for pair in contrast)
    ):
        return [(str(a), str(b)) for a, b in contrast]
    raise ValueError(f"contrast must be (case level, control level) or a list of such pairs, "
                     f"not {contrast!r}")  # fmt: skip


def contrast_trait(annotations: pd.DataFrame, trait: str, contrast: Any) -> LevelCoding:
    """A trait of more than two levels, tested as one contrast or several: `contrast` is (the
    case level, the control level), or a list of such pairs (limma's `makeContrasts`).

    The first pair's control is the design's reference level: every other level gets a
    column (the first pair's case the tested one), so each pair's difference is estimated
    on every sample, as limma's and R's contrasts are.
    """
    if trait not in annotations.columns:
        raise ValueError(f"the table has no trait column {trait!r}")
    pairs = _pairs(contrast)
    column = annotations[trait]
    text = column.astype(object).where(column.isna(), column.astype(str))
    levels = sorted(str(v) for v in pd.unique(text.dropna()))
    for case, control in pairs:
        if case not in levels or control not in levels or case == control:
            shown = ", ".join(map(repr, levels[:8]))
            raise ValueError(f"the contrast {(case, control)!r} names levels the trait "
                             f"{trait!r} does not hold as two ({shown})")  # fmt: skip
    missing = text.isna().to_numpy()

    def indicator(level: str) -> np.ndarray:
        return np.where(missing, np.nan, (text == level).to_numpy(dtype=float))

    first, reference = pairs[0]
    others = [level for level in levels if level not in (first, reference)]
    columns = np.column_stack([indicator(level) for level in others]) if others else np.empty(
        (len(text), 0))  # fmt: skip
    counts = {level: int((text == level).sum()) for level in levels}
    names = [f"{trait}[{level}]" for level in others]
    return LevelCoding(trait, indicator(first), columns, names, pairs, counts)

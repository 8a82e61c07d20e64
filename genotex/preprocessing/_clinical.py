"""Clinical rows of a GEO cohort from its recipe.

`clinical_table` applies a recipe's variables (`_recipe.py` holds the schema)
to a characteristics table; `_proposer.py` proposes a recipe when there is none.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import pandas as pd

from ._recipe import Recipe, RecipeError, Variable

__all__ = ["apply_variable", "clinical_table", "convert_value", "parse_number"]

_UNITS = {
    "year": 1.0, "yr": 1.0, "y": 1.0,
    "month": 1 / 12, "mo": 1 / 12,
    "week": 1 / 52, "wk": 1 / 52,
    "day": 1 / 365.25, "d": 1 / 365.25,
}  # fmt: skip
_NUMBER = re.compile(r"[-+]?\d+(?:\.\d+)?")
_UNIT_AFTER = re.compile(r"^\s*(years?|yrs?|y|months?|mo|weeks?|wks?|days?|d)\b", re.IGNORECASE)
_MISSING_WORDS = {
    "",
    "na",
    "n/a",
    "n.a",
    "n.a.",
    "nan",
    "none",
    "null",
    "unknown",
    "not available",
    "--",
    "-",
}


def parse_number(text: str, *, age: bool = False) -> float:
    """The first number in the text; an age is converted to years by its unit (`6 months`: 0.5)."""
    if text.strip().lower() in _MISSING_WORDS:
        return math.nan
    found = _NUMBER.search(text)
    if found is None:
        return math.nan
    value = float(found.group())
    if age:
        unit = _UNIT_AFTER.match(text[found.end() :])
        if unit:
            word = unit.group(1).lower().rstrip("s")
            value *= _UNITS.get(word, _UNITS.get(word[:2], 1.0))
    # a number beyond float range (a 400-digit cell) is missing, never inf spread by imputation
    return value if math.isfinite(value) else math.nan


def _cell_text(cell: object, part: str) -> str | None:
    if cell is None or (isinstance(cell, float) and math.isnan(cell)):
        return None
    text = str(cell)
    if part == "after_colon" and ":" in text:
        text = text.split(":", 1)[1]
    return text.strip()


def _find_row(characteristics: pd.DataFrame, variable: Variable, source: Path | None) -> int:
    if variable.row is not None:
        if not 0 <= variable.row < len(characteristics):
            raise RecipeError(
                f"{variable.name} row {variable.row} does not exist "
                f"(the cohort has {len(characteristics)} characteristics rows)",
                path=source,
            )
        return variable.row
    if variable.key is None:
        raise RecipeError(f"{variable.name} has neither a row nor a key", path=source)
    wanted = variable.key.strip().lower()
    for position in range(len(characteristics)):
        keys = {
            str(c).split(":", 1)[0].strip().lower() for c in characteristics.iloc[position].dropna()
        }
        if wanted in keys:
            return position
    raise RecipeError(
        f"no characteristics row has the key {variable.key!r} for {variable.name}", path=source
    )


def convert_value(text: str, variable: Variable) -> float:
    """One cell's text (already cut to the recipe's `part`) as the variable's number, or NaN.

    The first rule that matches wins; else a number is parsed when the variable
    is numeric; else `unmatched` applies to a cell that is not a missing word.
    """
    for rule in variable.rules:
        if rule.matches(text, case_sensitive=variable.case_sensitive):
            return rule.value
    value = math.nan
    if variable.numeric:
        value = parse_number(text, age=variable.name == "Age")
    if math.isnan(value) and variable.unmatched is not None and text.lower() not in _MISSING_WORDS:
        value = variable.unmatched
    return value


def apply_variable(
    characteristics: pd.DataFrame, variable: Variable, *, source: Path | None = None
) -> pd.Series:
    """One clinical variable for every sample (NaN where the recipe says missing)."""
    if variable.constant is not None:
        return pd.Series(variable.constant, index=characteristics.columns, dtype=float)
    row = characteristics.iloc[_find_row(characteristics, variable, source)]
    converted: dict[str, float] = {}  # each distinct text is converted once
    values = []
    try:
        for cell in row:
            text = _cell_text(cell, variable.part)
            if text is not None and text not in converted:
                converted[text] = convert_value(text, variable)
            values.append(math.nan if text is None else converted[text])
    except RecipeError as exc:
        raise RecipeError(exc.reason, path=source) from None
    series = pd.Series(values, index=characteristics.columns, dtype=float)
    if variable.rules and series.notna().sum() == 0:
        raise RecipeError(f"the rules of {variable.name} match no value of its row", path=source)
    return series


def clinical_table(characteristics: pd.DataFrame, recipe: Recipe) -> pd.DataFrame:
    """Rows trait (named after it), Age, Gender (those the recipe makes available) x samples."""
    rows = {}
    for name in ("trait", "Age", "Gender"):
        variable = recipe.variables.get(name)
        if variable is None or not variable.available:
            continue
        label = recipe.trait if name == "trait" else name
        rows[label] = apply_variable(characteristics, variable, source=recipe.source)
    return pd.DataFrame(rows).T if rows else pd.DataFrame(columns=characteristics.columns)

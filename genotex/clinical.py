"""Clinical features of a GEO cohort from a recipe: the judgement of the paper's Appendix C as data.

A recipe (TOML or JSON) names the inputs and, for the trait, Age and Gender,
the characteristics row and the rules that turn its cells into numbers. See
the README ("Recipes") for the schema and examples. Without a recipe,
`propose_rows` finds Age and Gender rows by key names and value patterns.
"""

from __future__ import annotations

import json
import math
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

import numpy as np
import pandas as pd

from .errors import GenotexError

__all__ = [
    "Recipe",
    "RecipeError",
    "Rule",
    "Variable",
    "apply_variable",
    "clinical_table",
    "load_recipe",
    "parse_number",
    "propose_rows",
]

_UNITS = {"year": 1.0, "yr": 1.0, "y": 1.0, "month": 1 / 12, "mo": 1 / 12, "week": 1 / 52, "wk": 1 / 52,
          "day": 1 / 365.25, "d": 1 / 365.25}  # fmt: skip
_NUMBER = re.compile(r"[-+]?\d+(?:\.\d+)?")
_UNIT_AFTER = re.compile(r"^\s*(years?|yrs?|y|months?|mo|weeks?|wks?|days?|d)\b", re.IGNORECASE)
_MISSING_WORDS = {"", "na", "n/a", "n.a", "n.a.", "nan", "none", "null", "unknown", "not available", "--", "-"}


class RecipeError(GenotexError):
    """A recipe that is malformed, or that names a row or file the cohort does not have."""


@dataclass(frozen=True)
class Rule:
    """`match` (substring, exact or regex, on the whole cell or the text after the colon) -> `value`."""

    match: str
    value: float
    how: str = "substring"  # "substring" | "exact" | "regex"

    def matches(self, text: str, *, case_sensitive: bool) -> bool:
        flags = 0 if case_sensitive else re.IGNORECASE
        if self.how == "regex":
            return re.search(self.match, text, flags) is not None
        a, b = (text, self.match) if case_sensitive else (text.lower(), self.match.lower())
        return a == b if self.how == "exact" else b in a


@dataclass(frozen=True)
class Variable:
    """How one clinical variable is read: a row and rules, a constant, or numeric parsing."""

    name: str
    available: bool = True
    row: int | None = None
    key: str | None = None  # the text before the colon, instead of a row number
    part: str = "after_colon"  # or "whole"
    rules: tuple[Rule, ...] = ()
    numeric: bool = False  # parse a number, with units for Age (58y, 6 months)
    constant: float | None = None  # every sample has this value
    unmatched: float | None = None  # what a cell no rule matches becomes (None: missing)
    case_sensitive: bool = False
    note: str = ""


@dataclass(frozen=True)
class Recipe:
    """Everything needed to preprocess one GEO cohort for one trait."""

    trait: str
    cohort: str
    matrix: str | None = None  # series matrix file, relative to the cohort folder
    platform: str | None = None  # family SOFT or stand-alone GPL file (default: <cohort>_family.soft.gz)
    platform_id: str | None = None  # which platform of a multi-platform SOFT
    probe_column: str = "ID"
    gene_column: str = "auto"  # or a column name; "entrez:<column>" for GeneID columns
    gene_usable: bool = True
    note: str = ""
    variables: Mapping[str, Variable] = field(default_factory=dict)  # "trait", "Age", "Gender"
    source: Path | None = None


def _variable(name: str, data: Mapping[str, Any], source: Path) -> Variable:
    known = {"available", "row", "key", "part", "rules", "numeric", "constant", "unmatched", "case_sensitive", "note"}
    unknown = set(data) - known
    if unknown:
        raise RecipeError(f"variable {name!r} has unknown fields {sorted(unknown)}", path=source)
    rules = []
    for rule in data.get("rules", []):
        if not isinstance(rule, Mapping) or "match" not in rule or "value" not in rule:
            raise RecipeError(f"a rule of {name!r} needs 'match' and 'value'", path=source)
        how = rule.get("how", "substring")
        if how not in {"substring", "exact", "regex"}:
            raise RecipeError(f"rule 'how' of {name!r} must be substring, exact or regex", path=source)
        if how == "regex":
            try:
                re.compile(rule["match"])
            except re.error as exc:
                raise RecipeError(f"rule regex {rule['match']!r} of {name!r} is invalid ({exc})", path=source) from None
        rules.append(Rule(str(rule["match"]), float(rule["value"]), how))
    part = data.get("part", "after_colon")
    if part not in {"after_colon", "whole"}:
        raise RecipeError(f"'part' of {name!r} must be after_colon or whole", path=source)
    variable = Variable(
        name=name,
        available=bool(data.get("available", True)),
        row=data.get("row"),
        key=data.get("key"),
        part=part,
        rules=tuple(rules),
        numeric=bool(data.get("numeric", False)),
        constant=None if data.get("constant") is None else float(data["constant"]),
        unmatched=None if data.get("unmatched") in (None, "missing") else float(data["unmatched"]),
        case_sensitive=bool(data.get("case_sensitive", False)),
        note=str(data.get("note", "")),
    )
    if variable.available and variable.constant is None and variable.row is None and variable.key is None:
        raise RecipeError(f"variable {name!r} needs a row, a key or a constant (or available = false)", path=source)
    if variable.available and variable.constant is None and not variable.rules and not variable.numeric:
        raise RecipeError(f"variable {name!r} needs rules or numeric = true", path=source)
    return variable


def load_recipe(path: str | Path) -> Recipe:
    """Read a TOML or JSON recipe; every problem is a `RecipeError` naming the file."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
        data = json.loads(text) if path.suffix == ".json" else tomllib.loads(text)
    except (OSError, UnicodeDecodeError) as exc:
        raise RecipeError(f"cannot be read ({exc.__class__.__name__})", path=path) from None
    except (ValueError, tomllib.TOMLDecodeError) as exc:
        raise RecipeError(f"is not valid {'JSON' if path.suffix == '.json' else 'TOML'} ({exc})", path=path) from None
    for required in ("trait", "cohort"):
        if not isinstance(data.get(required), str):
            raise RecipeError(f"needs a '{required}' name", path=path)
    inputs = data.get("input", {})
    gene = data.get("gene", {})
    variables = {}
    for name, spec in data.get("variables", {}).items():
        canonical = {"trait": "trait", "age": "Age", "gender": "Gender"}.get(name.lower())
        if canonical is None:
            raise RecipeError(f"unknown variable {name!r} (use trait, age, gender)", path=path)
        variables[canonical] = _variable(canonical, spec, path)
    return Recipe(
        trait=data["trait"],
        cohort=data["cohort"],
        matrix=inputs.get("matrix"),
        platform=inputs.get("platform"),
        platform_id=inputs.get("platform_id"),
        probe_column=inputs.get("probe_column", "ID"),
        gene_column=inputs.get("gene_column", "auto"),
        gene_usable=bool(gene.get("usable", True)),
        note=str(data.get("note", gene.get("note", ""))),
        variables=variables,
        source=path,
    )


def parse_number(text: str, *, age: bool = False) -> float:
    """The first number in the text; for ages, converted to years by its unit (`6 months` -> 0.5)."""
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
    return value


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
            raise RecipeError(f"{variable.name} row {variable.row} does not exist "
                              f"(the cohort has {len(characteristics)} characteristics rows)", path=source)  # fmt: skip
        return variable.row
    wanted = variable.key.strip().lower()
    for position in range(len(characteristics)):
        keys = {str(c).split(":", 1)[0].strip().lower() for c in characteristics.iloc[position].dropna()}
        if wanted in keys:
            return position
    raise RecipeError(f"no characteristics row has the key {variable.key!r} for {variable.name}", path=source)


def apply_variable(characteristics: pd.DataFrame, variable: Variable, *, source: Path | None = None) -> pd.Series:
    """One clinical variable for every sample (NaN where the recipe says missing)."""
    if variable.constant is not None:
        return pd.Series(variable.constant, index=characteristics.columns, dtype=float)
    row = characteristics.iloc[_find_row(characteristics, variable, source)]
    values = []
    for cell in row:
        text = _cell_text(cell, variable.part)
        value = math.nan
        if text is not None:
            for rule in variable.rules:
                if rule.matches(text, case_sensitive=variable.case_sensitive):
                    value = rule.value
                    break
            else:
                if variable.numeric:
                    value = parse_number(text, age=variable.name == "Age")
                if math.isnan(value) and variable.unmatched is not None and text.lower() not in _MISSING_WORDS:
                    value = variable.unmatched
        values.append(value)
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


_AGE_KEYS = re.compile(r"\bage\b|age at|age_at|years old", re.IGNORECASE)
_GENDER_KEYS = re.compile(r"\b(sex|gender)\b", re.IGNORECASE)


def propose_rows(characteristics: pd.DataFrame) -> dict[str, Variable]:
    """Age and Gender rows found by key names and value patterns (a proposal to review)."""
    proposal = {}
    for position in range(len(characteristics)):
        cells = characteristics.iloc[position].dropna().astype(str)
        if cells.empty:
            continue
        keys = {c.split(":", 1)[0] for c in cells if ":" in c}
        after = [c.split(":", 1)[1].strip().lower() for c in cells if ":" in c]
        if "Age" not in proposal and any(_AGE_KEYS.search(k) for k in keys):
            numbers = [parse_number(v, age=True) for v in after]
            if np.mean([not math.isnan(n) for n in numbers]) >= 0.5:
                proposal["Age"] = Variable("Age", row=position, numeric=True, note="proposed: key names age")
        gender_words = bool(after) and set(after) <= {"male", "female", "m", "f"}
        if "Gender" not in proposal and (any(_GENDER_KEYS.search(k) for k in keys) or gender_words):
            proposal["Gender"] = Variable(
                "Gender", row=position,
                rules=(Rule("female", 0.0, "exact"), Rule("f", 0.0, "exact"),
                       Rule("male", 1.0, "exact"), Rule("m", 1.0, "exact")),
                note="proposed: key names sex/gender",
            )  # fmt: skip
    return proposal

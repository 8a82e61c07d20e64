"""Recipes: the judgement of the paper's Appendix C for one GEO cohort, as a TOML or JSON file.

A recipe names the cohort's input files and, for the trait, Age and Gender,
the characteristics row and the rules that turn its cells into numbers (the
README's "Recipes" section shows one). `Recipe.from_dict` is the one schema:
every level's keys and every field's type are checked, names pass the same
safe-name rule as `--trait`, and each fault is a `RecipeError` naming the
file and the field.
"""

from __future__ import annotations

import json
import math
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn

import regex

from ..core import (
    GenotexError,
    UnsafeNameError,
    check_safe_name,
    clipped,
    notebook_table,
    parse_json,
    read_regular_bytes,
    write_text_atomic,
)

__all__ = ["REGEX_TIMEOUT_SECONDS", "Recipe", "RecipeError", "Rule", "Variable", "load_recipe"]

_TOP_KEYS = {"trait", "cohort", "note", "input", "gene", "variables"}
_INPUT_KEYS = {"matrix", "platform", "platform_id", "probe_column", "gene_column"}
_GENE_KEYS = {"usable", "note"}
_VARIABLE_KEYS = {
    "available",
    "row",
    "key",
    "part",
    "rules",
    "numeric",
    "constant",
    "unmatched",
    "case_sensitive",
    "note",
}
_RULE_KEYS = {"match", "value", "how"}
#: How long one regex rule may run on one cell: a pattern with catastrophic backtracking
#: (`(a|aa)+$`) is refused instead of hanging the run.
REGEX_TIMEOUT_SECONDS = 1.0
_VARIABLE_NAMES = {"trait": "trait", "age": "Age", "gender": "Gender"}

#: A recipe is a few kilobytes; a larger file is not one (and is not read past this).
MAX_RECIPE_BYTES = 16 * 1024 * 1024


class RecipeError(GenotexError):
    """A recipe that is malformed, or that names a row or file the cohort does not have."""


@dataclass(frozen=True)
class Rule:
    """`match` (substring, exact or regex, on the whole cell or the text after the colon) ->
    `value`.
    """

    match: str
    value: float
    how: str = "substring"  # "substring" | "exact" | "regex"

    def matches(self, text: str, *, case_sensitive: bool) -> bool:
        """Whether the rule matches a cell's text; a regex gets `REGEX_TIMEOUT_SECONDS` per cell."""
        if self.how == "regex":
            flags = 0 if case_sensitive else regex.IGNORECASE
            try:
                return (
                    regex.search(self.match, text, flags, timeout=REGEX_TIMEOUT_SECONDS) is not None
                )
            except TimeoutError:
                raise RecipeError(
                    f"the rule regex {self.match!r} ran over {REGEX_TIMEOUT_SECONDS:g} s on "
                    f"the cell {text[:60]!r} (catastrophic backtracking?): simplify it"
                ) from None
        a, b = (text, self.match) if case_sensitive else (text.lower(), self.match.lower())
        return a == b if self.how == "exact" else b in a

    def to_dict(self) -> dict[str, Any]:
        return {"match": self.match, "value": self.value, "how": self.how}


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

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"available": self.available}
        for name in ("row", "key", "constant", "unmatched"):
            if getattr(self, name) is not None:
                out[name] = getattr(self, name)
        if self.rules:
            out["rules"] = [rule.to_dict() for rule in self.rules]
        out.update(part=self.part, numeric=self.numeric, case_sensitive=self.case_sensitive)
        if self.note:
            out["note"] = self.note
        return out


def _described(v: Variable) -> str:
    """A variable in a few words: where it is read and how."""
    if not v.available:
        return "not available"
    if v.constant is not None:
        return f"constant {v.constant:g}"
    where = f"row {v.row}" if v.row is not None else f"key {v.key!r}"
    return f"{where}, " + ("numeric" if v.numeric else f"{len(v.rules)} rules")


@dataclass(frozen=True)
class Recipe:
    """Everything needed to preprocess one GEO cohort for one trait."""

    trait: str
    cohort: str
    matrix: str | None = None  # series matrix file, relative to the cohort folder
    platform: str | None = (
        None  # family SOFT or stand-alone GPL file (default: <cohort>_family.soft.gz)
    )
    platform_id: str | None = None  # which platform of a multi-platform SOFT
    probe_column: str = "ID"
    gene_column: str = "auto"  # or a column name; "entrez:<column>" for GeneID columns
    gene_usable: bool = True
    note: str = ""
    variables: Mapping[str, Variable] = field(default_factory=dict)  # "trait", "Age", "Gender"
    source: Path | None = field(default=None, compare=False)

    def __repr__(self) -> str:
        variables = "; ".join(f"{n} {_described(v)}" for n, v in self.variables.items())
        genes = f"genes {self.gene_column!r}" if self.gene_usable else "genes unusable"
        return clipped(f"Recipe({self.trait}/{self.cohort}: {genes}; {variables})")

    def _repr_html_(self) -> str:
        genes = f"{self.gene_column} ({self.probe_column})" if self.gene_usable else "unusable"
        rows = [("genes", genes), *((n, _described(v)) for n, v in self.variables.items())]
        return notebook_table(f"Recipe {self.trait}/{self.cohort}", [*rows, ("note", self.note)])

    @classmethod
    def from_dict(cls, data: object, *, source: str | Path | None = None) -> Recipe:
        """Validate a parsed recipe; a fault is a `RecipeError` naming `source` and the field."""
        check = _Checker(source)
        data = check.table(data, "the recipe", _TOP_KEYS)
        inputs = check.table(data.get("input", {}), "[input]", _INPUT_KEYS)
        gene = check.table(data.get("gene", {}), "[gene]", _GENE_KEYS)
        variables = {}
        for name, spec in check.table(data.get("variables", {}), "[variables]", None).items():
            canonical = _VARIABLE_NAMES.get(str(name).lower())
            if canonical is None:
                check.fail(f"unknown variable {name!r} (use trait, age, gender)")
            variables[canonical] = _variable(canonical, spec, check)
        return cls(
            trait=check.name(data.get("trait"), "trait"),
            cohort=check.name(data.get("cohort"), "cohort"),
            matrix=check.optional_text(inputs.get("matrix"), "input.matrix"),
            platform=check.optional_text(inputs.get("platform"), "input.platform"),
            platform_id=check.optional_text(inputs.get("platform_id"), "input.platform_id"),
            probe_column=check.text(inputs.get("probe_column", "ID"), "input.probe_column"),
            gene_column=check.text(inputs.get("gene_column", "auto"), "input.gene_column"),
            gene_usable=check.flag(gene.get("usable", True), "gene.usable"),
            note=check.text(data.get("note", gene.get("note", "")), "note"),
            variables=variables,
            source=None if source is None else Path(source),
        )

    def to_dict(self) -> dict[str, Any]:
        """The recipe as a JSON/TOML-ready dict (what `from_dict` reads back)."""
        inputs = {"probe_column": self.probe_column, "gene_column": self.gene_column}
        for name in ("matrix", "platform", "platform_id"):
            if getattr(self, name) is not None:
                inputs[name] = getattr(self, name)
        return {
            "trait": self.trait,
            "cohort": self.cohort,
            "note": self.note,
            "input": inputs,
            "gene": {"usable": self.gene_usable},
            "variables": {name.lower(): v.to_dict() for name, v in self.variables.items()},
        }

    @classmethod
    def read(cls, path: str | Path) -> Recipe:
        """Read a TOML or JSON recipe (by its suffix); every problem is a `RecipeError` naming the
        file.
        """
        path = Path(path)
        kind = "JSON" if path.suffix == ".json" else "TOML"
        raw = read_regular_bytes(path, MAX_RECIPE_BYTES, error=RecipeError)
        if kind == "JSON":
            data = parse_json(raw, source=path, error=RecipeError)
        else:
            try:  # a byte-order mark (Windows editors write one) is not part of the TOML
                data = tomllib.loads(raw.decode("utf-8-sig"))
            except UnicodeDecodeError:
                raise RecipeError("it is not UTF-8 text", path=path) from None
            except (ValueError, RecursionError) as exc:
                raise RecipeError(f"is not valid TOML ({exc})", path=path) from None
        return cls.from_dict(data, source=path)

    def write(self, path: str | Path) -> None:
        """Write the recipe atomically, as JSON for a `.json` path and as TOML otherwise
        (what `read` expects of the same path). A recipe is frozen: change one with
        `dataclasses.replace(recipe, note="...")` and write the result.
        """
        if Path(path).suffix == ".json":
            text = json.dumps(self.to_dict(), indent=1, ensure_ascii=False) + "\n"
        else:
            import tomlkit

            text = tomlkit.dumps(self.to_dict())
        write_text_atomic(path, text)


def load_recipe(path: str | Path) -> Recipe:
    """Read a TOML or JSON recipe (the same as `Recipe.read`)."""
    return Recipe.read(path)


class _Checker:
    """Type checks of recipe fields, each failure a `RecipeError` naming the file and the field."""

    def __init__(self, source: str | Path | None) -> None:
        self.source = source

    def fail(self, message: str) -> NoReturn:
        """Refuse the recipe: one sentence naming its file."""
        raise RecipeError(message, path=self.source)

    def table(self, value: object, where: str, keys: set[str] | None) -> dict[str, Any]:
        if not isinstance(value, dict):
            self.fail(f"{where} is not a table of fields")
        if keys is not None and (unknown := sorted(set(value) - keys)):
            self.fail(f"{where} has unknown fields {unknown} (known: {sorted(keys)})")
        return value

    def name(self, value: object, where: str) -> str:
        if not isinstance(value, str):
            self.fail(f"needs a '{where}' name")
        try:
            return check_safe_name(value, what=f"recipe's {where} name")
        except UnsafeNameError as exc:
            raise RecipeError(exc.reason, path=self.source) from None

    def text(self, value: object, where: str) -> str:
        if not isinstance(value, str):
            self.fail(f"{where} must be text, not {value!r}")
        return value

    def optional_text(self, value: object, where: str) -> str | None:
        return None if value is None else self.text(value, where)

    def flag(self, value: object, where: str) -> bool:
        if not isinstance(value, bool):
            self.fail(f"{where} must be true or false, not {value!r}")
        return value

    def number(self, value: object, where: str) -> float:
        if (
            isinstance(value, bool)
            or not isinstance(value, (int, float))
            or not math.isfinite(value)
        ):
            self.fail(f"{where} must be a finite number, not {value!r}")
        return float(value)

    def row(self, value: object, where: str) -> int | None:
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
            self.fail(f"{where} must be a whole row number, not {value!r}")
        return value


def _rule(name: str, rule: object, check: _Checker) -> Rule:
    where = f"a rule of {name!r}"
    if not isinstance(rule, dict) or "match" not in rule or "value" not in rule:
        check.fail(f"{where} needs 'match' and 'value'")
    check.table(rule, where, _RULE_KEYS)
    how = rule.get("how", "substring")
    if how not in {"substring", "exact", "regex"}:
        check.fail(f"rule 'how' of {name!r} must be substring, exact or regex")
    match = check.text(rule["match"], f"{where}'s match")
    if how == "regex":
        try:
            regex.compile(match)
        except regex.error as exc:
            check.fail(f"rule regex {match!r} of {name!r} is invalid ({exc})")
    return Rule(match, check.number(rule["value"], f"{where}'s value"), how)


def _variable(name: str, data: object, check: _Checker) -> Variable:
    data = check.table(data, f"variable {name!r}", _VARIABLE_KEYS)
    rules = data.get("rules", [])
    if not isinstance(rules, list):
        check.fail(f"the rules of {name!r} must be a list")
    part = data.get("part", "after_colon")
    if part not in {"after_colon", "whole"}:
        check.fail(f"'part' of {name!r} must be after_colon or whole")
    constant, unmatched = data.get("constant"), data.get("unmatched")
    variable = Variable(
        name=name,
        available=check.flag(data.get("available", True), f"{name}.available"),
        row=check.row(data.get("row"), f"{name}.row"),
        key=check.optional_text(data.get("key"), f"{name}.key"),
        part=part,
        rules=tuple(_rule(name, rule, check) for rule in rules),
        numeric=check.flag(data.get("numeric", False), f"{name}.numeric"),
        constant=None if constant is None else check.number(constant, f"{name}.constant"),
        unmatched=None
        if unmatched in (None, "missing")
        else check.number(unmatched, f"{name}.unmatched"),
        case_sensitive=check.flag(data.get("case_sensitive", False), f"{name}.case_sensitive"),
        note=check.text(data.get("note", ""), f"{name}.note"),
    )
    has_source = (
        variable.constant is not None or variable.row is not None or variable.key is not None
    )
    if variable.available and not has_source:
        check.fail(f"variable {name!r} needs a row, a key or a constant (or available = false)")
    if (
        variable.available
        and variable.constant is None
        and not variable.rules
        and not variable.numeric
    ):
        check.fail(f"variable {name!r} needs rules or numeric = true")
    return variable

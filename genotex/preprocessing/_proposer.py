"""Propose a cohort's recipe from its characteristics and background text, with evidence.

`propose_recipe` reads a characteristics dictionary (row -> the distinct cell
texts of that `!Sample_characteristics_ch1` row), the series' background and
the trait's name, and decides what an analyst decides before preprocessing a
GEO cohort (the paper's Appendix C): whether the series holds gene expression,
which row holds the trait, Age and Gender (or none), and what number each
distinct value becomes. Each decision carries a confidence in [0, 1] and the
evidence that decided it, so a person can review it.

The rules are general (key names, value vocabularies, the trait's own words
and abbreviations); which row holds the trait is decided by a small ranker
over the rules' features whose weights were fitted on labelled records
(`_ranker.py`; `scripts/score_proposer.py` estimates it on traits left out).
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ._clinical import parse_number
from ._ranker import TraitRanker, option_features
from ._recipe import Recipe, Rule, Variable
from ._rows import AGE_KEY, GENDER_KEY, rule_score, split_cell, text_cells, trait_map
from ._vocabulary import (
    MISSING,
    NOT_EXPRESSION,
    NOT_HUMAN,
    TraitTerms,
    trait_terms,
)

__all__ = ["Choice", "Proposal", "gene_availability", "propose_recipe"]

_VARIABLES = ("trait", "Age", "Gender")
_AGE_OTHER = re.compile(r"menarche|onset|gestation|passage|stage|storage|menopause|dose", re.I)
_FEMALE = re.compile(r"^\s*(f|female|females|woman|women|girl|feminine)\b", re.I)
_MALE = re.compile(r"^\s*(m|male|males|man|men|boy|masculine)\b", re.I)
_CODE = re.compile(r"\b(female|male|f|m)\s*=\s*(\d+)", re.I)
_EXPRESSION = re.compile(r"mrna|express(?:ed|ion)|transcriptom|rna-?seq", re.I)


@dataclass(frozen=True)
class Choice:
    """One variable's decision: its row (None: not available), each value's number, why."""

    name: str
    row: int | None
    values: Mapping[str, float | None] = field(default_factory=dict)
    confidence: float = 0.0
    evidence: tuple[str, ...] = ()
    numeric: bool = False  # Age parsed as a number from every value (no per-value rules)


@dataclass(frozen=True)
class Proposal:
    """A proposed recipe for one cohort: gene availability and the three variables."""

    trait: str
    cohort: str
    gene_available: bool
    gene_confidence: float
    gene_evidence: tuple[str, ...]
    choices: Mapping[str, Choice]

    def recipe(self, **inputs: Any) -> Recipe:
        """The proposal as the `Recipe` `preprocess` reads (exact rules, one per value)."""
        variables = {}
        for name, choice in self.choices.items():
            if choice.row is None:
                variables[name] = Variable(name, available=False, note=_note(choice))
            elif choice.numeric:
                variables[name] = Variable(name, row=choice.row, numeric=True, note=_note(choice))
            else:
                rules = tuple(
                    Rule(text.strip(), float(value), "exact")
                    for text, value in choice.values.items()
                    if value is not None and text.strip()
                )
                variables[name] = Variable(
                    name, row=choice.row, part="whole", rules=rules, note=_note(choice)
                )
        return Recipe(
            trait=self.trait,
            cohort=self.cohort,
            gene_usable=self.gene_available,
            note="; ".join(self.gene_evidence),
            variables=variables,
            **inputs,
        )

    def record(self) -> dict[str, Any]:
        """The proposal in the clinical-records schema (`score_recipes.py`'s input)."""
        out: dict[str, Any] = {
            "trait": self.trait,
            "cohort": self.cohort,
            "is_gene_available": self.gene_available,
        }
        for name in _VARIABLES:
            choice = self.choices[name]
            out[f"{name.lower()}_row"] = choice.row
            out[f"{name.lower()}_map"] = None if choice.row is None else dict(choice.values)
        out["confidence"] = {n.lower(): round(self.choices[n].confidence, 3) for n in _VARIABLES}
        return out


def _note(choice: Choice) -> str:
    return f"proposed (confidence {choice.confidence:.2f}): " + "; ".join(choice.evidence)


def gene_availability(
    background: str, characteristics: Mapping[int, Sequence[object]]
) -> tuple[bool, float, tuple[str, ...]]:
    """(available, confidence, evidence) from the background and the characteristics' cues."""
    title = next(iter(re.findall(r"Series_title\W*(.*)", background)), "")
    found = NOT_EXPRESSION.search(title)
    if found and not _EXPRESSION.search(title):
        return False, 0.8, (f"the title names a non-expression assay ({found.group(0)!r})",)
    text = " ".join(" ".join(text_cells(v)) for v in characteristics.values())
    animal = NOT_HUMAN.search(text)
    if animal:
        return False, 0.6, (f"the characteristics name a non-human source ({animal.group(0)!r})",)
    return True, 0.9, ("no sign of a non-expression assay or a non-human source",)


def _gender(characteristics: Mapping[int, Sequence[object]]) -> Choice:
    best: Choice | None = None
    for row, values in characteristics.items():
        cells = text_cells(values)
        mapped: dict[str, float | None] = {}
        for cell in cells:
            key, after = split_cell(cell)
            mapped[cell] = _gender_value(key, after)
        keyed = sum(bool(GENDER_KEY.search(split_cell(c)[0])) for c in cells)
        known = {v for v in mapped.values() if v is not None}
        if len(known) < 2 or (keyed == 0 and any(split_cell(c)[0] for c in cells)):
            continue  # one sex only is no variable; unkeyed words only when no cell has a key
        share = sum(v is not None for v in mapped.values()) / len(mapped)
        confidence = round(min(1.0, 0.5 + 0.5 * share) * (1.0 if keyed else 0.7), 3)
        if best is None or confidence > best.confidence:
            evidence = (
                f"row {row} is keyed sex/gender" if keyed else f"row {row} holds male/female words",
                "female/woman/F -> 0, male/man/M -> 1 (female tested first)",
            )
            best = Choice("Gender", int(row), mapped, confidence, evidence)
    return best or Choice("Gender", None, {}, 0.8, ("no row with both sexes",))


def _gender_value(key: str, after: str) -> float | None:
    if key and not GENDER_KEY.search(key):
        return None  # a cell of another variable in a mixed row
    codes = {m.group(2): m.group(1).lower()[0] for m in _CODE.finditer(key)}
    if codes and after.strip() in codes:
        return 0.0 if codes[after.strip()] == "f" else 1.0
    if _FEMALE.search(after):
        return 0.0
    if _MALE.search(after):
        return 1.0
    return None


def _age(characteristics: Mapping[int, Sequence[object]]) -> Choice:
    candidates = []
    for row, values in characteristics.items():
        cells = text_cells(values)
        keys = [split_cell(c)[0] for c in cells]
        if not any(AGE_KEY.search(k) for k in keys):
            continue
        mapped = {c: _age_value(k, split_cell(c)[1]) for c, k in zip(cells, keys, strict=True)}
        numbers = {v for v in mapped.values() if v is not None}
        if len(numbers) < 2:
            continue  # one age for everyone (or none parsed) is no variable
        share = sum(v is not None for v in mapped.values()) / len(mapped)
        other = any(_AGE_OTHER.search(k) for k in keys if AGE_KEY.search(k))
        score = share - (0.6 if other else 0.0)
        candidates.append((score, int(row), mapped, keys, other))
    if not candidates:
        return Choice("Age", None, {}, 0.8, ("no row keyed age with two or more ages",))
    score, row, mapped, keys, other = max(candidates, key=lambda c: (c[0], -c[1]))
    numeric = len(set(keys)) == 1 and all(v is not None for v in mapped.values())
    evidence = [f"row {row} is keyed {keys[0]!r}", "the first number of each value, in years"]
    if other:
        evidence.append("the key names another age (onset, menarche...): review")
    confidence = round(max(0.3, min(1.0, 0.4 + 0.6 * score)), 3)
    return Choice("Age", row, mapped, confidence, tuple(evidence), numeric)


def _age_value(key: str, after: str) -> float | None:
    if not AGE_KEY.search(key) or MISSING.match(after):
        return None
    value = parse_number(after, age=True)
    return None if math.isnan(value) else value


@functools.cache
def _shipped_ranker() -> TraitRanker:
    return TraitRanker.shipped()


def _trait(
    rows: Mapping[int, Sequence[object]],
    terms: TraitTerms,
    taken: set[int],
    background: str,
    ranker: TraitRanker,
) -> Choice:
    """The most probable option of the ranker: a row (mapped by `trait_map`) or no row."""
    rows_with_text, features, none = option_features(rows, background, terms, taken)
    candidates = [(row, text_cells(rows[row])) for row in rows_with_text]
    p = ranker.probabilities(features, none)
    best = int(np.argmax(p))
    order = [int(i) for i in np.argsort(-p[:-1], kind="stable")]
    if best == len(candidates):
        runner = (
            f"; the likeliest row, {candidates[order[0]][0]}, {p[order[0]]:.2f}" if order else ""
        )
        return Choice("trait", None, {}, round(float(p[-1]), 3), (f"no row: {p[-1]:.2f}{runner}",))
    row, cells = candidates[best]
    mapped, how = trait_map(cells, terms)
    scored = rule_score(row, cells, terms)
    evidence = (
        f"row {row}: probability {p[best]:.2f} (no row {p[-1]:.2f})",
        *(scored.evidence if scored else ()),
        how,
    )
    return Choice("trait", row, mapped, round(float(p[best]), 3), evidence)


def propose_recipe(
    characteristics: Mapping[int | str, Sequence[object]],
    background: str,
    trait: str,
    *,
    cohort: str = "",
    ranker: TraitRanker | None = None,
) -> Proposal:
    """Propose the recipe of one GEO cohort for `trait` (see the module docstring).

    Parameters
    ----------
    characteristics : mapping
        Row index -> the distinct texts of that characteristics row
        (`characteristics_dictionary` of a series matrix, or a record's field).
    background : str
        The series title, summary and overall design.
    trait : str
        The benchmark trait (`Type_2_Diabetes`): its words and abbreviations
        are what the trait row is recognised by.
    ranker : TraitRanker, optional
        Chooses the trait row (or none); by default the weights trained on
        the development records (`TraitRanker.shipped`).
    """
    rows = {int(row): list(values) for row, values in characteristics.items()}
    available, gene_confidence, gene_evidence = gene_availability(background, rows)
    gender = _gender(rows)
    age = _age(rows)
    taken = {c.row for c in (gender, age) if c.row is not None}
    terms = trait_terms(trait, background)
    trait_choice = _trait(rows, terms, taken, background, ranker or _shipped_ranker())
    return Proposal(
        trait,
        cohort,
        available,
        gene_confidence,
        gene_evidence,
        {"trait": trait_choice, "Age": age, "Gender": gender},
    )

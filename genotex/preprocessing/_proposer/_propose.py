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
(`_ranker`, trained by `_training`; `scripts/score_proposer.py` estimates it on
traits left out).
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._clinical import parse_number
from .._recipe import Recipe, Rule, Variable
from ._features import feature_index, option_features
from ._ranker import TraitRanker
from ._rules import (
    AGE_KEY,
    GENDER_KEY,
    marked_once,
    rule_score,
    split_cell,
    text_cells,
    trait_map,
)
from ._vocabulary import (
    MISSING,
    NOT_EXPRESSION,
    NOT_HUMAN,
    STRONG_NEGATIVE_POLE,
    TraitTerms,
    trait_terms,
)

__all__ = ["Choice", "Proposal", "gene_availability", "propose_recipe"]

_VARIABLES = ("trait", "Age", "Gender")
_NAMES_TRAIT = [feature_index("value_names_trait_phrase"), feature_index("value_names_trait_word")]
_CONTROL_VALUE = feature_index("control_value")
_TAKEN = feature_index("age_or_gender_row")
_AGE_OTHER = re.compile(r"menarche|onset|gestation|passage|stage|storage|menopause|dose", re.I)
_AGE_RANGE = re.compile(r"(\d+(?:\.\d+)?)\s*(?:-|–|to)\s*(\d+(?:\.\d+)?)", re.I)
_OLDEST = 125.0  # years: no recorded human age is above it
_BELOW = r"<|under|below|less than"
_AGE_BELOW = re.compile(rf"^\s*(?:{_BELOW})", re.I)  # "<10": half the bound
_AGE_BOUND = re.compile(rf"^\s*(?:{_BELOW}|>|over)|\d\s*\+", re.I)
_YOUNG = re.compile(
    r"\b(young|younger|youth|child|children|pediatric|paediatric|infant|juvenile|adolescent|"
    r"neonat\w*|newborn|fetal|foetal|fetus)\b",
    re.I,
)
_OLD = re.compile(r"\b(old|older|elderly|aged|aging|senior|frail|adult|geriatric)\b", re.I)
_FEMALE = re.compile(r"^\s*(f|female|females|woman|women|girl|feminine)\b", re.I)
_MALE = re.compile(r"^\s*(m|male|males|man|men|boy|masculine)\b", re.I)
_CODE = re.compile(r"\b(female|male|f|m)\s*=\s*(\d+)", re.I)
_CELL_LINE_KEY = re.compile(r"cell ?lines?", re.I)
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
    line = _only_a_cell_line(characteristics)
    if line:
        return False, 0.6, (f"every sample is one cell line ({line!r}) and nothing else varies",)
    return True, 0.9, ("no sign of a non-expression assay or a non-human source",)


def _only_a_cell_line(characteristics: Mapping[int, Sequence[object]]) -> str | None:
    """The cell when every row holds one value and one row is keyed 'cell line', else None.

    Such a series records nothing that varies between its samples, not even a treatment,
    so no trait can be read from it; the benchmark's labels mark it not usable (both dev
    records of this shape), while one constant tissue or disease row is usable.
    """
    rows = [text_cells(values) for values in characteristics.values()]
    if not rows or any(len(cells) != 1 for cells in rows):
        return None
    return next((c[0] for c in rows if _CELL_LINE_KEY.fullmatch(split_cell(c[0])[0])), None)


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
        grouped = False
        if len({v for v in mapped.values() if v is not None}) < 2:
            mapped, grouped = _age_groups(cells, keys), True
        ages = {v for v in mapped.values() if v is not None}
        if len(ages) < 2:
            continue  # one age for everyone (or none parsed) is no variable
        share = sum(v is not None for v in mapped.values()) / len(mapped)
        other = any(_AGE_OTHER.search(k) for k in keys if AGE_KEY.search(k))
        penalty = (0.6 if other else 0.0) + (0.3 if grouped else 0.0)
        # the age at sampling before onset or gestational ages, then the row holding the most
        # ages: rows mix keys when samples carry different characteristics, and the row with
        # more ages covers more samples
        rank = (-penalty, len(ages), share, -int(row))
        candidates.append((rank, share - penalty, int(row), mapped, keys, other, grouped))
    if not candidates:
        return Choice("Age", None, {}, 0.8, ("no row keyed age with two or more ages",))
    _, score, row, mapped, keys, other, grouped = max(candidates, key=lambda c: c[0])
    numeric = (
        len(set(keys)) == 1
        and not grouped
        and all(v is not None for v in mapped.values())
        and not any(_is_age_bin(split_cell(c)[1]) for c in mapped)
    )
    how = (
        "age groups: the younger side (young, child...) -> 0, the older side -> 1"
        if grouped
        else "the first number of each value, in years; a range its middle, '<x' x/2"
    )
    evidence = [f"row {row} is keyed {keys[0]!r}", how]
    if other:
        evidence.append("the key names another age (onset, menarche...): review")
    confidence = round(max(0.3, min(1.0, 0.4 + 0.6 * score)), 3)
    return Choice("Age", row, mapped, confidence, tuple(evidence), numeric)


def _is_age_bin(after: str) -> bool:
    """A binned age ("40-49", "6 TO 12 months", "<10", "80+"): written as per-value rules."""
    return bool(_AGE_RANGE.search(after) or _AGE_BOUND.search(after))


def _age_value(key: str, after: str) -> float | None:
    """An age in years: a range "40-49" is its middle (44.5), "<10" half its bound (5),
    ">80" and "80+" the bound, otherwise the first number in its unit; missing when that is
    negative or above any human age.
    """
    if not AGE_KEY.search(key) or MISSING.match(after):
        return None
    found = _AGE_RANGE.search(after)
    if found:
        high = parse_number(after[found.start(2) :], age=True)
        low = float(found.group(1)) * high / float(found.group(2)) if float(found.group(2)) else 0.0
        return None if math.isnan(high) else (low + high) / 2
    value = parse_number(after, age=True)
    if math.isnan(value) or not 0 <= value <= _OLDEST:
        return None  # no number, or not an age ("SY-1365")
    return value / 2 if _AGE_BELOW.match(after) else value


def _age_groups(cells: Sequence[str], keys: Sequence[str]) -> dict[str, float | None]:
    """An age row of words: the younger groups 0, the older 1 (both sides must be there)."""
    mapped: dict[str, float | None] = {}
    for cell, key in zip(cells, keys, strict=True):
        after = split_cell(cell)[1]
        young, old = _YOUNG.search(after), _OLD.search(after)
        if not AGE_KEY.search(key) or bool(young) == bool(old):
            mapped[cell] = None  # another key's cell, or no side (or both) named
        else:
            mapped[cell] = 0.0 if young else 1.0
    return mapped


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
    ranked = best
    if len(candidates[best][1]) == 1:
        best = _contrast_instead(features, p, best, [cells for _, cells in candidates])
    row, cells = candidates[best]
    mapped, how = trait_map(cells, terms)
    scored = rule_score(row, cells, terms)
    evidence = (
        f"row {row}: probability {p[best]:.2f} (no row {p[-1]:.2f})",
        *(
            (f"row {candidates[ranked][0]} ({p[ranked]:.2f}) holds one value for every sample",)
            if ranked != best
            else ()
        ),
        *(scored.evidence if scored else ()),
        how,
    )
    return Choice("trait", row, mapped, round(float(p[best]), 3), evidence)


def _contrast_instead(
    features: np.ndarray, p: np.ndarray, best: int, cells: Sequence[Sequence[str]]
) -> int:
    """A row of one value names the trait for every sample; a row that sets the samples
    against each other is what an analysis can use: first one that sets the trait's samples
    against controls ("tumour" and "non-tumour"; read from the ranker's features: a value
    names the trait, and a control), else a pair of outcomes of which exactly one carries a
    strong negative word ("relapse-free" and "relapse", "remission" and "early failure").
    """
    names = features[:, _NAMES_TRAIT].any(axis=1)
    contrasts = [int(i) for i in np.flatnonzero(names & (features[:, _CONTROL_VALUE] > 0))]
    if not contrasts:
        contrasts = [
            i
            for i, row in enumerate(cells)
            if len(row) == 2
            and not features[i, _TAKEN]
            and marked_once(row, STRONG_NEGATIVE_POLE) is not None
        ]
    return int(max(contrasts, key=lambda i: p[i])) if len(contrasts) else best


def propose_recipe(
    characteristics: Mapping[int, Sequence[object]] | Mapping[str, Sequence[object]],
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
    if not available:  # the benchmark's convention: no clinical rows for an unusable series
        why = ("the series holds no usable gene expression",)
        choices = {n: Choice(n, None, {}, gene_confidence, why) for n in _VARIABLES}
        return Proposal(trait, cohort, False, gene_confidence, gene_evidence, choices)
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

"""Propose a cohort's recipe from its characteristics and background text, with evidence.

`propose_recipe` reads a characteristics dictionary (row -> the distinct cell
texts of that `!Sample_characteristics_ch1` row), the series' background and
the trait's name, and decides what an analyst decides before preprocessing a
GEO cohort (the paper's Appendix C): whether the series holds gene expression,
which row holds the trait, Age and Gender (or none), and what number each
distinct value becomes. Each decision carries a confidence in [0, 1] and the
evidence that decided it, so a person can review it.

The rules are general (key names, value vocabularies, the trait's own words
and abbreviations); the one tuned number, the trait-row threshold, is chosen
by cross-validation over traits (`scripts/score_proposer.py`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ._clinical import parse_number
from ._recipe import Recipe, Rule, Variable
from ._vocabulary import (
    CONTROL,
    DISEASE_KEY,
    EXPERIMENT_KEY,
    MISSING,
    NO,
    NOT_EXPRESSION,
    NOT_HUMAN,
    SKIP_KEY,
    TISSUE_KEY,
    YES,
    TraitTerms,
    trait_terms,
)

__all__ = ["TRAIT_THRESHOLD", "Choice", "Proposal", "gene_availability", "propose_recipe"]

#: The least score a row needs to be proposed as the trait's (chosen by CV over traits).
TRAIT_THRESHOLD = 3.0
_VARIABLES = ("trait", "Age", "Gender")
_AGE_KEY = re.compile(r"(^|[^a-z])age([^a-z]|$)|^age|agebaseline|years? old", re.I)
_AGE_OTHER = re.compile(r"menarche|onset|gestation|passage|stage|storage|menopause|dose", re.I)
_GENDER_KEY = re.compile(r"\b(sex|gender)\b", re.I)
_FEMALE = re.compile(r"^\s*(f|female|females|woman|women|girl|feminine)\b", re.I)
_MALE = re.compile(r"^\s*(m|male|males|man|men|boy|masculine)\b", re.I)
_CODE = re.compile(r"\b(female|male|f|m)\s*=\s*(\d+)", re.I)
_EXPRESSION = re.compile(r"mrna|express(?:ed|ion)|transcriptom|rna-?seq", re.I)
_NEGATION = r"(?:non|no|not|without|free of|absence of|negative for)"


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


def _split(cell: str) -> tuple[str, str]:
    """(key, text after the colon); a cell without a colon has an empty key."""
    if ":" in cell:
        key, after = cell.split(":", 1)
        return key.strip(), after.strip()
    return "", cell.strip()


def _cells(values: Sequence[object]) -> list[str]:
    return [v for v in values if isinstance(v, str) and v.strip()]


def gene_availability(background: str, characteristics: Mapping[int, Sequence[object]]):
    """(available, confidence, evidence) from the background and the characteristics' cues."""
    title = next(iter(re.findall(r"Series_title\W*(.*)", background)), "")
    found = NOT_EXPRESSION.search(title)
    if found and not _EXPRESSION.search(title):
        return False, 0.8, (f"the title names a non-expression assay ({found.group(0)!r})",)
    text = " ".join(" ".join(_cells(v)) for v in characteristics.values())
    animal = NOT_HUMAN.search(text)
    if animal:
        return False, 0.6, (f"the characteristics name a non-human source ({animal.group(0)!r})",)
    return True, 0.9, ("no sign of a non-expression assay or a non-human source",)


def _gender(characteristics: Mapping[int, Sequence[object]]) -> Choice:
    best: Choice | None = None
    for row, values in characteristics.items():
        cells = _cells(values)
        mapped: dict[str, float | None] = {}
        for cell in cells:
            key, after = _split(cell)
            mapped[cell] = _gender_value(key, after)
        keyed = sum(bool(_GENDER_KEY.search(_split(c)[0])) for c in cells)
        known = {v for v in mapped.values() if v is not None}
        if len(known) < 2 or (keyed == 0 and any(_split(c)[0] for c in cells)):
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
    if key and not _GENDER_KEY.search(key):
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
        cells = _cells(values)
        keys = [_split(c)[0] for c in cells]
        if not any(_AGE_KEY.search(k) for k in keys):
            continue
        mapped = {c: _age_value(k, _split(c)[1]) for c, k in zip(cells, keys, strict=True)}
        numbers = {v for v in mapped.values() if v is not None}
        if len(numbers) < 2:
            continue  # one age for everyone (or none parsed) is no variable
        share = sum(v is not None for v in mapped.values()) / len(mapped)
        other = any(_AGE_OTHER.search(k) for k in keys if _AGE_KEY.search(k))
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
    if not _AGE_KEY.search(key) or MISSING.match(after):
        return None
    value = parse_number(after, age=True)
    return None if math.isnan(value) else value


@dataclass(frozen=True)
class _Candidate:
    score: float
    row: int
    cells: tuple[str, ...]
    evidence: tuple[str, ...]


def _trait_candidate(row: int, cells: list[str], terms: TraitTerms) -> _Candidate | None:
    keys = {_split(c)[0] for c in cells}
    afters = [_split(c)[1] for c in cells]
    key_text = " ".join(keys)
    key_hit, key_word = terms.strength(key_text)
    hits = [terms.strength(a) for a in afters]
    value_hit = max((h for h, _ in hits), default=0)
    evidence = []
    disease_key = bool(DISEASE_KEY.search(key_text))
    skip = any(SKIP_KEY.search(k) for k in keys) and not disease_key
    if key_hit < 2 and (skip or _AGE_KEY.search(key_text)):
        return None
    if key_hit < 2 and _GENDER_KEY.search(key_text):
        return None
    numbers = [a for a in afters if re.fullmatch(r"[-+]?\d+(\.\d+)?\s*%?", a)]
    if len(numbers) == len(afters) and key_hit < 2:
        return None
    score = 0.0
    if key_hit >= 2:
        score += 3.0
        evidence.append(f"the key names the trait ({key_word!r})")
    if value_hit:
        word = next(w for h, w in hits if h == value_hit)
        score += (0.0, 1.0, 2.5, 3.0)[value_hit]
        evidence.append(f"values name the trait ({word!r})")
    if disease_key:
        score += 2.5
        evidence.append("a disease/status/group key")
    elif EXPERIMENT_KEY.search(key_text) or TISSUE_KEY.search(key_text):
        score += 0.5
        evidence.append("an experiment or tissue key")
    controls = [a for a in afters if CONTROL.search(a)]
    if controls and len(cells) >= 2:
        score += 1.5
        evidence.append(f"a control value ({controls[0]!r})")
    if len(cells) == 1 and value_hit < 2 and key_hit < 2:
        score -= 1.5
    if len(cells) >= 20 and value_hit < 2:
        score -= 2.0
    return _Candidate(score, row, tuple(cells), tuple(evidence))


def _trait_value(after: str, terms: TraitTerms, key_named: bool, top_hit: int) -> float | None:
    """A trait cell's number: a negation or control word 0, the trait's words 1, by the row's
    convention otherwise (yes/no under a key naming the trait; other diseases 0 when some values
    name the trait, every non-control value 1 when none does).
    """
    norm = after.lower()
    if re.fullmatch(r"\s*(none|no)\s*", norm):
        return 0.0  # "disease: none" is a sample without the disease, not a missing value
    if MISSING.match(after):
        return None
    hit, word = terms.strength(after)
    if hit >= 2 and re.search(rf"{_NEGATION}[\s-]*(?:\w+[\s-]+){{0,2}}{re.escape(word)}", norm):
        return 0.0
    if hit >= 2 and re.search(rf"{re.escape(word)}\w*[\s-]*(?:free|negative)\b", norm):
        return 0.0
    if key_named and YES.match(after):
        return 1.0
    if key_named and NO.match(after):
        return 0.0
    if CONTROL.search(after):
        return 0.0
    if top_hit >= 2:
        return 1.0 if hit == top_hit else 0.0
    return 1.0


def _trait_map(cells: Sequence[str], terms: TraitTerms) -> tuple[dict[str, float | None], str]:
    """Each cell's number and how they were decided; a numeric row keyed by the trait is kept."""
    afters = [_split(c)[1] for c in cells]
    key_named = terms.strength(" ".join(_split(c)[0] for c in cells))[0] >= 2
    numbers = [parse_number(a) for a in afters]
    if key_named and len(cells) > 2 and all(not math.isnan(x) for x in numbers):
        return {c: x for c, x in zip(cells, numbers, strict=True)}, "a continuous trait: numbers"
    top_hit = max(terms.strength(a)[0] for a in afters)
    mapped = {
        c: _trait_value(a, terms, key_named, top_hit) for c, a in zip(cells, afters, strict=True)
    }
    how = "control words -> 0, " + (
        "values naming the trait -> 1, other values -> 0"
        if top_hit >= 2
        else "every other value -> 1"
    )
    return mapped, how


def _trait(
    characteristics: Mapping[int, Sequence[object]],
    terms: TraitTerms,
    taken: set[int],
    threshold: float,
) -> Choice:
    candidates = []
    for row, values in characteristics.items():
        cells = _cells(values)
        if cells and int(row) not in taken:
            candidate = _trait_candidate(int(row), cells, terms)
            if candidate is not None:
                candidates.append(candidate)
    # a row where every sample has one value is the trait only when no row tells samples apart
    candidates.sort(key=lambda c: (len(c.cells) < 2, -c.score, c.row))
    passing = [c for c in candidates if c.score >= threshold]
    candidates = passing or sorted(candidates, key=lambda c: (-c.score, c.row))
    if not passing:
        best = f"best row {candidates[0].row} scores {candidates[0].score:g}" if candidates else ""
        reason = f"no row reaches {threshold:g}" + (f" ({best})" if best else "")
        return Choice("trait", None, {}, 0.6, (reason,))
    top = candidates[0]
    second = candidates[1].score if len(candidates) > 1 else 0.0
    mapped, how = _trait_map(top.cells, terms)
    margin = top.score - max(second, threshold - 1.0)
    confidence = round(1.0 / (1.0 + math.exp(-margin)), 3)
    evidence = (f"row {top.row} scores {top.score:g}", *top.evidence, how)
    return Choice("trait", top.row, mapped, confidence, evidence)


def propose_recipe(
    characteristics: Mapping[int | str, Sequence[object]],
    background: str,
    trait: str,
    *,
    cohort: str = "",
    threshold: float = TRAIT_THRESHOLD,
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
    threshold : float
        The least score a trait row needs; below it the trait is not available.
    """
    rows = {int(row): list(values) for row, values in characteristics.items()}
    available, gene_confidence, gene_evidence = gene_availability(background, rows)
    gender = _gender(rows)
    age = _age(rows)
    taken = {c.row for c in (gender, age) if c.row is not None}
    trait_choice = _trait(rows, trait_terms(trait, background), taken, threshold)
    return Proposal(
        trait,
        cohort,
        available,
        gene_confidence,
        gene_evidence,
        {"trait": trait_choice, "Age": age, "Gender": gender},
    )

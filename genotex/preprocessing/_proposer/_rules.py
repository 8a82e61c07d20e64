"""The rules a recipe proposer applies to one characteristics row.

`rule_score` scores a row as the trait's (its evidence in words); `trait_map`
turns the chosen row's values into numbers. Both are general: key words,
value vocabularies and the trait's own terms (`_vocabulary.py`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

from .._clinical import parse_number
from ._vocabulary import (
    CONTROL,
    DISEASE_KEY,
    EXPERIMENT_KEY,
    MEASUREMENT_KEY,
    MISSING,
    NEGATIVE_POLE,
    NO,
    SKIP_KEY,
    STRONG_NEGATIVE_POLE,
    TISSUE_KEY,
    YES,
    TraitTerms,
)

__all__ = [
    "AGE_KEY",
    "GENDER_KEY",
    "RowScore",
    "marked_once",
    "rule_score",
    "split_cell",
    "text_cells",
    "trait_map",
]

AGE_KEY = re.compile(r"(^|[^a-z])age([^a-z]|$)|^age(?!n)|years? old", re.I)
GENDER_KEY = re.compile(r"\b(sex|gender)\b", re.I)
_NEGATION = r"(?:non|no|not|without|free of|absence of|negative for)"


def split_cell(cell: str) -> tuple[str, str]:
    """(key, text after the colon); a cell without a colon has an empty key."""
    if ":" in cell:
        key, after = cell.split(":", 1)
        return key.strip(), after.strip()
    return "", cell.strip()


def text_cells(values: Sequence[object]) -> list[str]:
    """The non-empty text cells of a row (a record's row may hold nulls)."""
    return [v for v in values if isinstance(v, str) and v.strip()]


@dataclass(frozen=True)
class RowScore:
    """A row's rule score as the trait's, and the words that decided it."""

    score: float
    row: int
    cells: tuple[str, ...]
    evidence: tuple[str, ...]


def rule_score(row: int, cells: list[str], terms: TraitTerms) -> RowScore | None:
    """How much a row looks like the trait's, by rules; None for rows that never hold it.

    Points for a key naming the trait (3), values naming it (3 phrase or
    abbreviation, 2.5 a specific word, 1 a generic one), a disease/status/group
    key (2.5) or an experiment/tissue key (0.5), a control value (1.5);
    penalties for one value that names nothing (-1.5) and 20 or more values
    naming nothing (-2). Identifier, batch, age and sex rows, and rows of numbers
    only, and measurements (tumour size), are excluded unless their key names the trait.
    """
    keys = {split_cell(c)[0] for c in cells}
    afters = [split_cell(c)[1] for c in cells]
    key_text = " ".join(keys)
    key_hit, key_word = terms.strength(key_text)
    hits = [terms.strength(a) for a in afters]
    value_hit = max((h for h, _ in hits), default=0)
    evidence = []
    disease_key = bool(DISEASE_KEY.search(key_text))
    skip = any(SKIP_KEY.search(k) for k in keys) and not disease_key
    other_variable = any(p.search(key_text) for p in (AGE_KEY, GENDER_KEY, MEASUREMENT_KEY))
    numbers_only = all(re.fullmatch(r"[-+]?\d+(\.\d+)?\s*%?", a) for a in afters)
    if key_hit < 2 and (skip or other_variable or numbers_only):
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
    return RowScore(score, row, tuple(cells), tuple(evidence))


def _trait_value(
    after: str, terms: TraitTerms, key_named: bool, top_hit: int, top_coverage: int
) -> float | None:
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
        if hit == 2 == top_hit and terms.coverage(after) < top_coverage:
            return 0.0  # "renal cell carcinoma" beside "papillary renal cell carcinoma"
        return 1.0 if hit == top_hit else 0.0
    return 1.0


def marked_once(pair: Sequence[str], pattern: re.Pattern[str]) -> str | None:
    """The one cell of a pair whose value the pattern marks; None when neither or both are."""
    marked = [c for c in pair if pattern.search(split_cell(c)[1])]
    return marked[0] if len(marked) == 1 else None


def _negative_side(pair: Sequence[str]) -> str | None:
    """The 0 of a pair of values naming no trait: the one strong negative word marks
    ("relapse-free", "remission" against "early failure"), else the one milder word marks
    ("mild", "early", "pre"), else the lower of two numeric codes ("cluster: 1" and "2").
    """
    for pattern in (STRONG_NEGATIVE_POLE, NEGATIVE_POLE):
        marked = marked_once(pair, pattern)
        if marked is not None:
            return marked
    afters = [split_cell(c)[1] for c in pair]
    if all(re.fullmatch(r"\d{1,2}", a) for a in afters) and afters[0] != afters[1]:
        return min(pair, key=lambda c: int(split_cell(c)[1]))
    return None


def _main_key(cells: Sequence[str], terms: TraitTerms) -> tuple[list[str], list[str]]:
    """A row mixing keys, split into the cells of the trait's keys (those whose values name
    the trait or a control; else those whose key names it) and the cells of the other keys
    ("anxiety case/control: case" against "gad7 score: 7" and "hybridization batch: Z").
    """
    keys = [split_cell(c)[0] for c in cells]
    if len(set(keys)) < 2:
        return list(cells), []
    afters = [split_cell(c)[1] for c in cells]
    main = {
        key
        for after, key in zip(afters, keys, strict=True)
        if terms.strength(after)[0] >= 2 or CONTROL.search(after)
    } or {key for key in keys if terms.strength(key)[0] >= 2}
    if not main or main == set(keys):
        return list(cells), []
    split = [k in main for k in keys]
    return (
        [c for c, m in zip(cells, split, strict=True) if m],
        [c for c, m in zip(cells, split, strict=True) if not m],
    )


def trait_map(cells: Sequence[str], terms: TraitTerms) -> tuple[dict[str, float | None], str]:
    """Each cell's number and how they were decided; cells of keys other than the trait's are
    missing (`_main_key`).
    """
    main, others = _main_key(cells, terms)
    mapped, how = _map_cells(main, terms)
    if others:
        keys = sorted({split_cell(c)[0] for c in others})
        how += f"; values of other keys ({', '.join(map(repr, keys))}) are missing"
    return {c: mapped.get(c) for c in cells}, how


def _map_cells(cells: Sequence[str], terms: TraitTerms) -> tuple[dict[str, float | None], str]:
    """The cells of one variable: a numeric row keyed by the trait is kept as numbers."""
    afters = [split_cell(c)[1] for c in cells]
    key_named = terms.strength(" ".join(split_cell(c)[0] for c in cells))[0] >= 2
    numbers = [parse_number(a) for a in afters]
    if key_named and len(cells) > 2 and all(not math.isnan(x) for x in numbers):
        return {c: x for c, x in zip(cells, numbers, strict=True)}, "a continuous trait: numbers"
    top_hit = max(terms.strength(a)[0] for a in afters)
    top_coverage = max(terms.coverage(a) for a in afters)
    mapped = {
        c: _trait_value(a, terms, key_named, top_hit, top_coverage)
        for c, a in zip(cells, afters, strict=True)
    }
    if top_hit >= 2 or key_named:
        return mapped, "control words -> 0, values naming the trait -> 1, other values -> 0"
    known = [c for c, v in mapped.items() if v is not None]
    if any(mapped[c] == 0.0 for c in known):
        return mapped, "control words -> 0, every other value -> 1"
    if len(known) == 2:
        negative = _negative_side(known)
        if negative is not None:
            mapped[negative] = 0.0
            return mapped, f"no value names the trait: {negative!r} is the negative side -> 0"
        return mapped, "no value names the trait or a control: both -> 1 (review)"
    for c in known:
        mapped[c] = 0.0
    return mapped, "no value names the trait or a control: every value -> 0 (review)"

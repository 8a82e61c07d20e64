"""The features the trait-row ranker scores, each addressed by its name.

A characteristics row is described by general features (does its key or its
values name the trait, is its key a disease/status key, does it hold a
control value, how many values, the rule score of `_rules.rule_score`, does
its value map split the samples...), and "no row" by features of the whole
record (does the background name the trait). Each feature has a name (what
code uses) and a label (what the weights file and a person read).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ._rules import AGE_KEY, GENDER_KEY, rule_score, split_cell, text_cells, trait_map
from ._vocabulary import (
    CONTROL,
    DISEASE_KEY,
    EXPERIMENT_KEY,
    SKIP_KEY,
    TISSUE_KEY,
    TraitTerms,
)

__all__ = [
    "RECORD_FEATURES",
    "ROW_FEATURES",
    "Feature",
    "feature_index",
    "option_features",
    "record_features",
    "row_features",
]


@dataclass(frozen=True)
class Feature:
    """One feature: `name` for code, `label` for the weights file and a reader."""

    name: str
    label: str


ROW_FEATURES: tuple[Feature, ...] = (
    Feature("key_names_trait", "key names the trait"),
    Feature("value_names_trait_phrase", "a value names the trait (phrase or abbreviation)"),
    Feature("value_names_trait_word", "a value names the trait (specific word)"),
    Feature("value_names_generic_word", "a value names a generic word of the trait"),
    Feature("share_naming_trait", "share of values naming the trait"),
    Feature("status_key", "disease/status/group key"),
    Feature("experiment_key", "experiment key"),
    Feature("tissue_key", "tissue/source key"),
    Feature("cell_key", "cell line or cell type key"),
    Feature("treatment_key", "treatment or agent key"),
    Feature("technical_key", "identifier/batch/technical key"),
    Feature("age_or_sex_key", "age or sex key"),
    Feature("age_or_gender_row", "the Age or Gender row"),
    Feature("control_value", "a control value"),
    Feature("one_value", "one value"),
    Feature("two_values", "two values"),
    Feature("values_3_to_5", "3-5 values"),
    Feature("values_6_to_19", "6-19 values"),
    Feature("values_20_or_more", "20 or more values"),
    Feature("numbers_only", "numbers only"),
    Feature("several_keys", "several keys in one row"),
    Feature("rule_score", "rule score"),
    Feature("no_rule_score", "no rule score (a row the rules exclude)"),
    Feature("map_holds_0_and_1", "its map holds 0 and 1"),
    Feature("map_all_1", "its map is all 1"),
    Feature("map_all_0", "its map is all 0"),
    Feature("control_not_trait", "a control value, no word of the trait"),
)
RECORD_FEATURES: tuple[Feature, ...] = (
    Feature("bias", "no row: bias"),
    Feature("background_names_trait", "no row: the background names the trait"),
    Feature("some_row_names_trait", "no row: some row names the trait"),
    Feature("five_or_more_rows", "no row: five or more rows"),
)


def feature_index(name: str, features: Sequence[Feature] = ROW_FEATURES) -> int:
    """The column of the feature called `name` (a `KeyError` names an unknown one)."""
    for i, feature in enumerate(features):
        if feature.name == name:
            return i
    raise KeyError(f"no feature named {name!r}")


def _vector(features: Sequence[Feature], values: Mapping[str, float | bool]) -> np.ndarray:
    """`values` by feature name, in the features' order; every feature exactly once."""
    if set(values) != {f.name for f in features} or len(values) != len(features):
        raise KeyError(f"feature values do not match the features: {sorted(values)}")
    return np.asarray([float(values[f.name]) for f in features], dtype=float)


_NUMBER_CELL = re.compile(r"[-+]?\d+(\.\d+)?\s*%?")


def row_features(cells: Sequence[str], terms: TraitTerms, taken: bool) -> np.ndarray:
    """The features of one row (`ROW_FEATURES`); `taken` when it is the Age or Gender row."""
    keys = {split_cell(c)[0] for c in cells}
    key_text = " ".join(keys)
    afters = [split_cell(c)[1] for c in cells]
    hits = [terms.strength(a)[0] for a in afters]
    top = max(hits, default=0)
    n = len(cells)
    scored = rule_score(0, list(cells), terms)
    key_named = terms.strength(key_text)[0] >= 2
    control = n >= 2 and any(CONTROL.search(a) for a in afters)
    values = {
        "key_names_trait": key_named,
        "value_names_trait_phrase": top == 3,
        "value_names_trait_word": top == 2,
        "value_names_generic_word": top == 1,
        "share_naming_trait": sum(h >= 2 for h in hits) / max(n, 1),
        "status_key": bool(DISEASE_KEY.search(key_text)),
        "experiment_key": bool(EXPERIMENT_KEY.search(key_text)),
        "tissue_key": bool(TISSUE_KEY.search(key_text)),
        "cell_key": bool(re.search(r"cell line|cell type", key_text, re.I)),
        "treatment_key": bool(re.search(r"treat|agent", key_text, re.I)),
        "technical_key": any(SKIP_KEY.search(k) for k in keys),
        "age_or_sex_key": bool(AGE_KEY.search(key_text) or GENDER_KEY.search(key_text)),
        "age_or_gender_row": taken,
        "control_value": control,
        "one_value": n == 1,
        "two_values": n == 2,
        "values_3_to_5": 3 <= n <= 5,
        "values_6_to_19": 6 <= n <= 19,
        "values_20_or_more": n >= 20,
        "numbers_only": sum(bool(_NUMBER_CELL.fullmatch(a)) for a in afters) / max(n, 1) > 0.9,
        "several_keys": len(keys) > 1,
        "rule_score": scored.score if scored else -3.0,
        "no_rule_score": scored is None,
        **_map_shape(cells, terms),
        # a contrast, but of what? (another disease)
        "control_not_trait": control and top < 2 and not key_named,
    }
    return _vector(ROW_FEATURES, values)


def _map_shape(cells: Sequence[str], terms: TraitTerms) -> dict[str, bool]:
    """What the row's value map (`trait_map`) would make of it: a contrast of 0 and 1, all
    1 (every sample has the trait) or all 0. The labels choose rows by what they convert to,
    not only by their words: a row of other diseases that the map sends to 0 is seldom the
    trait's, a row that splits the samples usually is.
    """
    values = {v for v in trait_map(cells, terms)[0].values() if v is not None}
    return {
        "map_holds_0_and_1": values >= {0.0, 1.0},
        "map_all_1": values == {1.0},
        "map_all_0": values == {0.0},
    }


def record_features(
    background: str, rows: Mapping[int, Sequence[object]], terms: TraitTerms
) -> np.ndarray:
    """The features of the "no row" option (`RECORD_FEATURES`)."""
    named = any(
        terms.strength(split_cell(c)[1])[0] >= 2 or terms.strength(split_cell(c)[0])[0] >= 2
        for values in rows.values()
        for c in text_cells(values)
    )
    values = {
        "bias": 1.0,
        "background_names_trait": terms.strength(background)[0] >= 2,
        "some_row_names_trait": named,
        "five_or_more_rows": len(rows) >= 5,
    }
    return _vector(RECORD_FEATURES, values)


def option_features(
    rows: Mapping[int, Sequence[object]], background: str, terms: TraitTerms, taken: set[int]
) -> tuple[list[int], np.ndarray, np.ndarray]:
    """The candidate rows (those with text), their features, and the "no row" features."""
    candidates = [row for row, values in rows.items() if text_cells(values)]
    features = np.array([row_features(text_cells(rows[r]), terms, r in taken) for r in candidates])
    features = features.reshape(len(candidates), len(ROW_FEATURES))
    return candidates, features, record_features(background, rows, terms)

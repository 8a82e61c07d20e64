"""Which row holds the trait: a conditional logit over a record's rows and "no row".

The probability of each option (a candidate row, or no row) is a softmax over
linear scores of its features (`_features`). The weights are fitted on
labelled records by `_training` (run by `scripts/score_proposer.py`, which
also estimates the error on traits left out); the shipped weights are
package data (`data/trait_ranker.json`), keyed by the features' labels, with
the provenance of their training.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from ...core import GenotexError, read_json, write_text_atomic
from ._features import RECORD_FEATURES, ROW_FEATURES

__all__ = ["TraitRanker"]


@dataclass(frozen=True)
class TraitRanker:
    """Weights of the row and "no row" features, with the provenance of their training."""

    row_weights: np.ndarray
    none_weights: np.ndarray
    provenance: Mapping[str, Any] = field(default_factory=dict)

    def probabilities(self, features: np.ndarray, none: np.ndarray) -> np.ndarray:
        """P(each candidate row), then P(no row): a softmax of the linear scores."""
        scores = np.append(
            features @ self.row_weights if len(features) else [], none @ self.none_weights
        )
        scores = np.exp(scores - scores.max())
        return scores / scores.sum()

    def to_dict(self) -> dict[str, Any]:
        return {
            "row_weights": {
                f.label: float(w) for f, w in zip(ROW_FEATURES, self.row_weights, strict=True)
            },
            "none_weights": {
                f.label: float(w) for f, w in zip(RECORD_FEATURES, self.none_weights, strict=True)
            },
            "provenance": dict(self.provenance),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, source: str | Path | None = None) -> TraitRanker:
        try:
            rows = [float(data["row_weights"][f.label]) for f in ROW_FEATURES]
            none = [float(data["none_weights"][f.label]) for f in RECORD_FEATURES]
        except (KeyError, TypeError, ValueError) as exc:
            raise GenotexError(
                f"is not a trait ranker ({exc!r} missing or malformed)", path=source
            ) from None
        return cls(np.asarray(rows), np.asarray(none), dict(data.get("provenance", {})))

    def write(self, path: str | Path) -> None:
        write_text_atomic(path, json.dumps(self.to_dict(), indent=1, ensure_ascii=False) + "\n")

    @classmethod
    def read(cls, path: str | Path) -> TraitRanker:
        return cls.from_dict(read_json(path), source=path)

    @classmethod
    def shipped(cls) -> TraitRanker:
        """The weights trained on the development records (package data)."""
        text = resources.files("genotex.preprocessing._proposer").joinpath(
            "data", "trait_ranker.json"
        )
        return cls.from_dict(json.loads(text.read_text("utf-8")), source="trait_ranker.json")

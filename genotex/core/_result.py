"""A regression result, `significant_genes_condition_<C>.json` (layout.md), read and written here
only.

The validity rule is evaluation's (evaluation.md § 4): a JSON object whose
`significant_genes.Variable` is a list of gene symbols. Anything else is a
`MalformedResult`, which evaluation scores as a failed problem and
regression redoes rather than skipping as done.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ._atomic import write_text_atomic
from ._errors import GenotexError
from ._json import read_json
from ._method import Method, method_from_dict

__all__ = ["CHANCE_ACCURACY", "MalformedResult", "ResultFile", "accuracy_at_chance"]

#: A cross-validated prediction accuracy (percent) under this is a fit at chance: a balanced
#: binary trait's chance is 50, and the 10 points above it are the CV's own noise on the
#: benchmark's cohort sizes (a few dozen to a few hundred samples, 5 folds).
CHANCE_ACCURACY = 60.0


def accuracy_at_chance(cv_performance: object) -> float | None:
    """`cv_performance.prediction.accuracy` when it is a number under `CHANCE_ACCURACY`
    (the fit behind it is at chance), else None (over it, absent, or not a number).
    """
    prediction = cv_performance.get("prediction") if isinstance(cv_performance, Mapping) else None
    value = prediction.get("accuracy") if isinstance(prediction, Mapping) else None
    if _is_number(value) and float(value) < CHANCE_ACCURACY:  # type: ignore[arg-type]
        return float(value)  # type: ignore[arg-type]
    return None


class MalformedResult(GenotexError, ValueError):
    """A result JSON without a usable `significant_genes.Variable` list."""


@dataclass(frozen=True)
class ResultFile:
    """The ranked genes of one problem, their coefficients, and the CV numbers behind them.

    `extra` keeps any other top-level key (e.g. a `method` object) and
    `gene_extra` any other list beside `Variable` (e.g. `p_value`), so that a
    read-then-write round trip loses nothing.
    """

    genes: tuple[str, ...]
    coefficients: tuple[float, ...] | None = None
    cv_performance: Any = None  # as read: a mapping when well formed, None when absent
    extra: Mapping[str, Any] = field(default_factory=dict)
    gene_extra: Mapping[str, Any] = field(default_factory=dict)  # e.g. p_value lists (layout.md)

    @property
    def complete(self) -> bool:
        """Whether it holds what `genotex regress` writes (coefficients and CV numbers)."""
        return self.coefficients is not None and isinstance(self.cv_performance, Mapping)

    @property
    def method(self) -> Method | None:
        """How genotex reached the result (its `method` object, typed).

        None when the file has none (the reference pipeline writes none) or
        when it is not of either documented shape: it is information, never a
        reason to refuse the result.
        """
        if "method" not in self.extra:
            return None
        try:
            return method_from_dict(self.extra["method"])
        except ValueError:
            return None

    @classmethod
    def from_dict(cls, data: object) -> ResultFile:
        """Validate a parsed result; raise `MalformedResult` with one sentence when it does not
        score.
        """
        if not isinstance(data, dict):
            raise MalformedResult("it is not a JSON object")
        genes = data.get("significant_genes")
        if not isinstance(genes, dict) or "Variable" not in genes:
            raise MalformedResult("it has no significant_genes.Variable")
        variable = genes["Variable"]
        if not isinstance(variable, list) or not all(isinstance(g, str) for g in variable):
            raise MalformedResult("significant_genes.Variable is not a list of gene symbols")
        coefficients = genes.get("Coefficient")
        valid = (
            isinstance(coefficients, list)
            and len(coefficients) == len(variable)
            and all(_is_number(c) for c in coefficients)
        )
        cv = data.get("cv_performance")
        extra = {k: v for k, v in data.items() if k not in ("significant_genes", "cv_performance")}
        derived = ("Variable", "Absolute Coefficient") + (("Coefficient",) if valid else ())
        gene_extra = {k: v for k, v in genes.items() if k not in derived}
        return cls(
            tuple(variable),
            tuple(float(c) for c in coefficients) if valid and coefficients is not None else None,
            cv,
            extra,
            gene_extra,
        )

    def to_dict(self) -> dict[str, Any]:
        """The JSON object: genes, coefficients and their absolute values, CV numbers, extras."""
        significant: dict[str, Any] = {"Variable": list(self.genes)}
        if self.coefficients is not None:
            significant["Coefficient"] = list(self.coefficients)
            significant["Absolute Coefficient"] = [abs(c) for c in self.coefficients]
        significant.update(self.gene_extra)
        out: dict[str, Any] = {"significant_genes": significant}
        if self.cv_performance is not None:
            out["cv_performance"] = self.cv_performance
        out.update(self.extra)
        return out

    def to_json(self) -> str:
        """The text `genotex regress` writes (4-space indent, as the reference)."""
        return json.dumps(self.to_dict(), indent=4) + "\n"

    @classmethod
    def read(cls, path: str | Path) -> ResultFile:
        """Read and validate a result file; every fault is a `MalformedResult` naming it."""
        path = Path(path)
        data = read_json(path, MalformedResult)
        try:
            return cls.from_dict(data)
        except MalformedResult as exc:
            raise MalformedResult(exc.reason, path=path) from None

    def write(self, path: str | Path) -> None:
        """Write atomically: an interrupted run leaves the old file or the new one."""
        write_text_atomic(path, self.to_json())

    def cv_present(self, key: str) -> bool:
        """Whether `cv_performance.prediction.<key>` is there at all (a number or not)."""
        node: Any = self.cv_performance
        prediction = node.get("prediction") if isinstance(node, dict) else None
        return isinstance(prediction, dict) and key in prediction

    def cv_number(self, key: str) -> tuple[float, str | None]:
        """`cv_performance.prediction.<key>`: (value, None), or (0, reason) when not a number.

        A missing number is 0 without a reason, as in the reference evaluator.
        """
        node: Any = self.cv_performance
        if node is None:
            return 0.0, None
        if not isinstance(node, dict):
            return 0.0, f"cv_performance is not an object; {key} read as 0"
        if "prediction" not in node:
            return 0.0, None
        node = node["prediction"]
        if not isinstance(node, dict):
            return 0.0, f"cv_performance.prediction is not an object; {key} read as 0"
        if key not in node:
            return 0.0, None
        value = node[key]
        if not _is_number(value):
            return 0.0, f"cv_performance.prediction.{key} is {value!r}, not a number; read as 0"
        return float(value), None


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)

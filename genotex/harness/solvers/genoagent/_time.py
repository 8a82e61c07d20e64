"""A cohort's time budget per model: `cohort_seconds` times the model's factor from a data
table (`time_scale.toml`, aligned with the successor of the paper's code), or times the
factor the run gives (`-S time_scale=N`).
"""

from __future__ import annotations

import functools
import re
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass
from importlib import resources

__all__ = ["TimeRow", "model_factor", "reasoning_on", "scale_of", "time_factors"]


@dataclass(frozen=True)
class TimeRow:
    """One row of the table: the words a model's name must hold (all of `every`, one of
    `some`, none of `never`) for `factor`.
    """

    every: frozenset[str]
    some: frozenset[str]
    never: frozenset[str]
    factor: float

    def matches(self, words: set[str]) -> bool:
        return (
            self.every <= words
            and (not self.some or bool(self.some & words))
            and not self.never & words
        )


@functools.cache
def time_factors() -> tuple[tuple[TimeRow, ...], float]:
    """The table's rows in order, and the least factor of a model run with reasoning on."""
    text = (
        resources.files("genotex.harness.solvers.genoagent").joinpath("time_scale.toml").read_text()
    )
    table = tomllib.loads(text)
    rows = tuple(
        TimeRow(
            frozenset(str(w).lower() for w in row.get("all", ())),
            frozenset(str(w).lower() for w in row.get("any", ())),
            frozenset(str(w).lower() for w in row.get("none", ())),
            float(row["factor"]),
        )
        for row in table["model"]
    )
    return rows, float(table["reasoning_factor"])


def model_factor(model: str, *, reasoning: bool = False) -> float:
    """A model's factor: the first row its name's words match (1 when none does), at least
    the reasoning factor when reasoning is switched on for it.
    """
    words = set(re.findall(r"[a-z0-9]+", model.lower()))
    rows, reasoning_factor = time_factors()
    factor = next((row.factor for row in rows if row.matches(words)), 1.0)
    return max(factor, reasoning_factor) if reasoning else factor


def reasoning_on(config: object) -> bool:
    """Whether a model's generation settings switch reasoning on (Inspect's
    `reasoning_effort` other than none or minimal, or a `reasoning_tokens` budget).
    """
    effort = getattr(config, "reasoning_effort", None)
    tokens = getattr(config, "reasoning_tokens", None)
    return effort not in (None, "none", "minimal") or (isinstance(tokens, int) and tokens > 0)


def scale_of(
    models: Iterable[str], given: float | str = "auto", *, reasoning: Iterable[str] = ()
) -> float:
    """The budget's factor for a team played by `models`: `given` when it is a number, else
    the largest factor among the models (`reasoning`: those run with reasoning on).
    """
    if given != "auto":
        return float(given)
    thinking = set(reasoning)
    return max((model_factor(m, reasoning=m in thinking) for m in models), default=1.0)

"""A cohort's time budget per model: `cohort_seconds` times the model's factor from a data
table (`time_scale.toml`), or times the factor the run gives (`-S time_scale=N`).
"""

from __future__ import annotations

import fnmatch
import functools
import tomllib
from collections.abc import Iterable
from importlib import resources

__all__ = ["scale_of", "time_factors"]


@functools.cache
def time_factors() -> tuple[tuple[str, float], ...]:
    """(pattern, factor) of each row of `time_scale.toml`, in order."""
    text = (
        resources.files("genotex.harness.solvers.genoagent").joinpath("time_scale.toml").read_text()
    )
    return tuple(
        (str(r["pattern"]).lower(), float(r["factor"])) for r in tomllib.loads(text)["model"]
    )


def _factor(model: str) -> float:
    for pattern, factor in time_factors():
        if fnmatch.fnmatchcase(model.lower(), pattern):
            return factor
    return 1.0


def scale_of(models: Iterable[str], given: float | str = "auto") -> float:
    """The budget's factor for a team played by `models`: `given` when it is a number, else
    the largest table factor among the models (1 when none matches).
    """
    if given != "auto":
        return float(given)
    return max((_factor(m) for m in models), default=1.0)

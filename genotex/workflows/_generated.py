"""What a generated benchmark is: where it lies, and how its answer key was made."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

__all__ = ["KeyFit", "RawBenchmark"]


@dataclass(frozen=True)
class KeyFit:
    """How the published pipeline reached one reference answer of a generated benchmark: its
    model, its own cross-validated accuracy and selection precision, and whether that fit is
    at chance (`genotex.core.accuracy_at_chance`) or depends on the genes' column order.
    """

    problem: str
    model: str
    genes: int
    cv_accuracy: float | None
    selection_precision: float | None
    at_chance: bool
    order_dependent: bool


@dataclass(frozen=True)
class RawBenchmark:
    """Where the generated benchmark lies (a benchmark root) and its reference answers; for a
    benchmark whose answers the published pipeline made, how each was reached (`keys`).
    """

    root: Path
    reference_output: Path
    task_info: Path
    keys: tuple[KeyFit, ...] = ()

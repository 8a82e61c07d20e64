"""What a generated benchmark is: where it lies, and how its answer key was made."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from ..core import open_folder, remove_tree_at, write_text_atomic

__all__ = ["DEMO_RECORD", "KeyFit", "RawBenchmark", "record_demo", "replace_other_demo"]

#: A generated demo's record at its root: which generator made it, with which seed.
DEMO_RECORD = "genotex-demo.json"
#: What a demo generates at its root (and the pipeline run on it writes).
_GENERATED = ("input", "metadata", "reference", "recipes", "output", "eval_report.json")


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
    #: what was removed first, said: an earlier demo of another kind or seed in the folder
    replaced: str | None = None


def _recorded(root: Path) -> dict | None:
    try:
        found = json.loads((root / DEMO_RECORD).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return found if isinstance(found, dict) else None


def replace_other_demo(root: Path, kind: str, seed: int) -> str | None:
    """Remove, from `root`, an earlier demo of another kind or seed (or one that records
    neither: a demo of genotex before 0.15), so that none of its cohorts stays among the new
    one's (issue #72); the same demo is generated again in place. Returns what was removed,
    as a sentence, or None.
    """
    present = [name for name in _GENERATED if os.path.lexists(root / name)]
    earlier = _recorded(root)
    if not present or earlier == {"kind": kind, "seed": seed}:
        return None
    folder = open_folder(root)
    try:
        for name in present:
            if not remove_tree_at(folder, name):
                os.unlink(name, dir_fd=folder)  # a file (the scorecard), or a link
    finally:
        os.close(folder)
    said = (f"a {earlier.get('kind')} demo of seed {earlier.get('seed')}" if earlier
            else "an earlier demo")  # fmt: skip
    return f"{root} held {said}; it was removed before the {kind} demo of seed {seed} was made"


def record_demo(root: Path, kind: str, seed: int) -> None:
    """Say at `root` which demo was generated there (`replace_other_demo` reads it)."""
    write_text_atomic(root / DEMO_RECORD, json.dumps({"kind": kind, "seed": seed}) + "\n")

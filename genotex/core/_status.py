"""`status.json`: what a `genotex regress` run did with each problem (the fixtures' schema)."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ._atomic import write_text_atomic
from ._errors import GenotexError
from ._json import read_json
from ._outcome import Outcome, OutcomeKind

__all__ = ["ProblemStatus", "RunStatus", "StatusError"]


class StatusError(GenotexError):
    """A `status.json` that cannot be read or is not of the documented shape."""


@dataclass(frozen=True)
class ProblemStatus:
    """One problem's line: seconds, its outcome (ok, skipped or failed), model, detail, run.

    `run` names the run that made the line's result (its start time, UTC), so that a
    result kept from an earlier run is told apart from one made now. The file
    keeps the outcome as its text, "ok" / "skipped: …" / "failed: …".
    """

    key: str  # "<trait>|<condition>"
    seconds: float
    outcome: Outcome
    model: str | None = None
    detail: str = ""
    run: str | None = None

    @property
    def kind(self) -> OutcomeKind:
        """One of "ok", "skipped" or "failed"."""
        return self.outcome.kind

    def to_dict(self) -> dict[str, Any]:
        """The problem's entry of `status.json`."""
        return {
            "s": round(self.seconds, 4),
            "status": self.outcome.text,
            "model": self.model,
            "detail": self.detail,
            "run": self.run,
        }


@dataclass(frozen=True)
class RunStatus:
    """Every problem of a run, in run order; `run` is the run that wrote it (not in the file)."""

    problems: tuple[ProblemStatus, ...]
    run: str | None = field(default=None, compare=False)

    def kept(self) -> int:
        """How many "ok" lines hold a result kept from an earlier run (not made by `run`)."""
        return sum(p.kind == "ok" and p.run != self.run for p in self.problems)

    def counts(self) -> dict[str, int]:
        """How many problems were answered ("ok"), skipped and failed."""
        kinds = [p.kind for p in self.problems]
        return {kind: kinds.count(kind) for kind in ("ok", "skipped", "failed")}

    def to_dict(self) -> dict[str, dict[str, Any]]:
        """`status.json`'s object: problem key -> its entry, in run order."""
        return {p.key: p.to_dict() for p in self.problems}

    @classmethod
    def from_dict(cls, data: object, *, source: str | Path | None = None) -> RunStatus:
        """Validate a parsed `status.json`; `StatusError` names the first bad entry."""
        if not isinstance(data, dict):
            raise StatusError("is not a JSON object of problems", path=source)
        problems = []
        for key, entry in data.items():
            if not isinstance(entry, dict) or not isinstance(entry.get("status"), str):
                raise StatusError(f"the entry of {key!r} has no status text", path=source)
            try:
                outcome = Outcome.parse(entry["status"])
            except ValueError:
                raise StatusError(
                    f"the status of {key!r} is not a known outcome", path=source
                ) from None
            seconds = entry.get("s", 0.0)
            model, detail, run = entry.get("model"), entry.get("detail", ""), entry.get("run")
            finite = isinstance(seconds, (int, float)) and math.isfinite(seconds)
            problems.append(
                ProblemStatus(
                    key,
                    float(seconds) if finite else 0.0,
                    outcome,
                    model if isinstance(model, str) else None,
                    detail if isinstance(detail, str) else "",
                    run if isinstance(run, str) else None,
                )
            )
        return cls(tuple(problems))

    def merged_into(self, earlier: RunStatus) -> RunStatus:
        """`earlier`'s lines with this run's replacing theirs and its new ones appended.

        `status.json` is the record of an output folder, not of one run: a run of
        another trait keeps the lines of the traits it did not touch.
        """
        mine = {p.key: p for p in self.problems}
        kept = tuple(mine.pop(p.key, p) for p in earlier.problems)
        return RunStatus(kept + tuple(p for p in self.problems if p.key in mine), self.run)

    @classmethod
    def read(cls, path: str | Path) -> RunStatus:
        """Read and validate `status.json`."""
        return cls.from_dict(read_json(path, StatusError), source=path)

    def write(self, path: str | Path) -> None:
        """Write `status.json` atomically."""
        write_text_atomic(path, json.dumps(self.to_dict(), indent=1) + "\n")

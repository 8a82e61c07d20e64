"""`status.json`: what a `genotex regress` run did with each problem (the fixtures' schema)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ._atomic import write_text_atomic
from ._errors import GenotexError, read_json

__all__ = ["ProblemStatus", "RunStatus", "StatusError"]


class StatusError(GenotexError):
    """A `status.json` that cannot be read or is not of the documented shape."""


@dataclass(frozen=True)
class ProblemStatus:
    """One problem's line: seconds, "ok" / "skipped: …" / "failed: …", model, detail."""

    key: str  # "<trait>|<condition>"
    seconds: float
    status: str
    model: str | None = None
    detail: str = ""

    @property
    def kind(self) -> str:
        """ "ok", "skipped" or "failed" (the word before the reason)."""
        return self.status.split(":", 1)[0]

    def to_dict(self) -> dict[str, Any]:
        return {
            "s": round(self.seconds, 4),
            "status": self.status,
            "model": self.model,
            "detail": self.detail,
        }


@dataclass(frozen=True)
class RunStatus:
    """Every problem of a run, in run order."""

    problems: tuple[ProblemStatus, ...]

    def counts(self) -> dict[str, int]:
        """How many problems were answered ("ok"), skipped and failed."""
        kinds = [p.kind for p in self.problems]
        return {kind: kinds.count(kind) for kind in ("ok", "skipped", "failed")}

    def to_dict(self) -> dict[str, dict[str, Any]]:
        return {p.key: p.to_dict() for p in self.problems}

    @classmethod
    def from_dict(cls, data: object, *, source: str | Path | None = None) -> RunStatus:
        if not isinstance(data, dict):
            raise StatusError("is not a JSON object of problems", path=source)
        problems = []
        for key, entry in data.items():
            if not isinstance(entry, dict) or not isinstance(entry.get("status"), str):
                raise StatusError(f"the entry of {key!r} has no status text", path=source)
            seconds = entry.get("s", 0.0)
            model = entry.get("model")
            problems.append(
                ProblemStatus(
                    key,
                    float(seconds) if isinstance(seconds, (int, float)) else 0.0,
                    entry["status"],
                    model if isinstance(model, str) else None,
                    str(entry.get("detail", "")),
                )
            )
        return cls(tuple(problems))

    @classmethod
    def read(cls, path: str | Path) -> RunStatus:
        return cls.from_dict(read_json(path, StatusError), source=path)

    def write(self, path: str | Path) -> None:
        write_text_atomic(path, json.dumps(self.to_dict(), indent=1) + "\n")

"""What happened to one item of a run (a problem, a cohort, a download), as one typed value.

Every stage reports an `Outcome`: a kind from a closed vocabulary and the
reason in words. Code branches on `kind` (or `failed`); the text
`"<kind>: <reason>"` exists only where a person or a file reads it
(`status.json`, a progress line), and `Outcome.parse` turns that text back
into the value when a file is read.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

__all__ = ["OUTCOME_KINDS", "Outcome", "OutcomeKind"]

#: Regression: ok / skipped / failed; preprocessing: usable / not usable / failed;
#: downloads: downloaded / resumed / present / failed.
OutcomeKind = Literal[
    "ok", "skipped", "failed", "usable", "not usable", "downloaded", "resumed", "present"
]
OUTCOME_KINDS: tuple[OutcomeKind, ...] = get_args(OutcomeKind)


@dataclass(frozen=True)
class Outcome:
    """The kind of what happened and why.

    Parameters
    ----------
    kind
        One of `OUTCOME_KINDS`.
    reason
        Why, in one line ("" when the kind says it all, as "ok").
    unexpected
        True when the failure is a bug of genotex rather than a fault of the
        input (its traceback is worth showing with `--debug`).
    """

    kind: OutcomeKind
    reason: str = ""
    unexpected: bool = False

    def __post_init__(self) -> None:
        if self.kind not in OUTCOME_KINDS:
            raise ValueError(f"unknown outcome kind {self.kind!r}; known: {OUTCOME_KINDS}")

    @property
    def failed(self) -> bool:
        """Whether the item could not be done (the run exits non-zero)."""
        return self.kind == "failed"

    @property
    def text(self) -> str:
        """`"<kind>: <reason>"`, or the kind alone: the `status` of `status.json`."""
        return f"{self.kind}: {self.reason}" if self.reason else self.kind

    def __str__(self) -> str:
        return self.text

    @classmethod
    def parse(cls, text: str) -> Outcome:
        """The outcome a status text records; an unknown kind is refused with `ValueError`."""
        for kind in OUTCOME_KINDS:
            if text == kind:
                return cls(kind)
            if text.startswith(f"{kind}: "):
                reason = text[len(kind) + 2 :]
                return cls(kind, reason, reason.startswith("unexpected "))
        known = ", ".join(OUTCOME_KINDS)
        raise ValueError(f"{text!r} does not start with a known outcome ({known})")

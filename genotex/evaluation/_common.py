"""What every evaluation task shares: the findings collector and the progress hook."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TypeVar

from ._scores import Finding

__all__ = ["Findings", "Progress", "no_progress"]

T = TypeVar("T")
#: Wraps an iterable to show progress: `progress(items, description, total)`.
Progress = Callable[[Iterable[T], str, int], Iterable[T]]


def no_progress(items: Iterable[T], description: str, total: int) -> Iterable[T]:
    return items


class Findings:
    """Collects problems found, once each, in the order they were met."""

    def __init__(self) -> None:
        self._items: dict[tuple[str, str], None] = {}

    def add(self, file: str, reason: str) -> None:
        self._items.setdefault((file, reason), None)

    def extend(self, findings: Iterable[Finding]) -> None:
        for finding in findings:
            self.add(finding.file, finding.reason)

    def freeze(self) -> tuple[Finding, ...]:
        return tuple(Finding(file, reason) for file, reason in self._items)

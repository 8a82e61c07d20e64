"""`cohort_info.json`: one record per cohort of a trait (layout.md), read and written here only.

Preprocessing writes records with `CohortRecord.decide(...)` and
`CohortInfo.update`; evaluation and regression read them with
`CohortInfo.from_dict`, which is lenient in the way evaluation.md § 4 asks:
a flag counts only if it is JSON `true`, a `sample_size` that is not a
non-negative number counts as 0, a record that is not an object is ignored,
and each such fault is reported.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ._atomic import locked_folder, write_text_atomic
from ._errors import GenotexError
from ._json import read_json

__all__ = ["CohortInfo", "CohortRecord"]

#: The flags whose faults evaluation reports (the ones that decide filtering and selection).
_CHECKED_FLAGS = ("is_available", "is_usable", "has_age", "has_gender")
_OTHER_FLAGS = ("is_gene_available", "is_trait_available", "is_biased")


@dataclass(frozen=True)
class CohortRecord:
    """One cohort's record: availability flags, details (null when unavailable), a note.

    `sample_size` is None when the cohort is unavailable (or the file held no
    usable number); `size` is the number selection compares (None -> 0).
    """

    cohort_id: str
    is_usable: bool = False
    is_gene_available: bool | None = None
    is_trait_available: bool | None = None
    is_available: bool = False
    is_biased: bool | None = None
    has_age: bool | None = None
    has_gender: bool | None = None
    sample_size: float | None = None
    note: str | None = ""

    @property
    def size(self) -> float:
        """The sample size selection compares: a missing size counts as 0."""
        return self.sample_size if self.sample_size is not None else 0

    @classmethod
    def decide(
        cls,
        cohort_id: str,
        *,
        gene: bool,
        trait: bool,
        biased: bool | None = None,
        age: bool | None = None,
        gender: bool | None = None,
        size: int | None = None,
        note: str | None = "",
    ) -> CohortRecord:
        """The record preprocessing writes: usable = gene and trait available and not biased."""
        available = gene and trait
        return cls(
            cohort_id,
            is_usable=bool(available and biased is False),
            is_gene_available=gene,
            is_trait_available=trait,
            is_available=available,
            is_biased=biased if available else None,
            has_age=age if available else None,
            has_gender=gender if available else None,
            sample_size=size if available else None,
            note=note,
        )

    def to_dict(self) -> dict[str, Any]:
        """The JSON record (without its cohort ID, which is its key in the file)."""
        return {
            "is_usable": self.is_usable,
            "is_gene_available": self.is_gene_available,
            "is_trait_available": self.is_trait_available,
            "is_available": self.is_available,
            "is_biased": self.is_biased,
            "has_age": self.has_age,
            "has_gender": self.has_gender,
            "sample_size": self.sample_size,
            "note": self.note,
        }

    @classmethod
    def from_dict(cls, cohort_id: str, entry: Mapping[str, Any]) -> tuple[CohortRecord, list[str]]:
        """A record from its JSON object, leniently, with what was wrong with it."""
        problems: list[str] = []
        checked: dict[str, bool] = {}
        flags: dict[str, bool | None] = {}
        for flag in _CHECKED_FLAGS:
            value = entry.get(flag)
            if value is not None and not isinstance(value, bool):
                problems.append(
                    f"{flag} of cohort {cohort_id!r} is {value!r}, not true/false; read as false"
                )
            checked[flag] = value is True
        for flag in _OTHER_FLAGS:
            value = entry.get(flag)
            flags[flag] = value if isinstance(value, bool) else None
        size = entry.get("sample_size", 0)
        if not _is_size(size):
            if size is not None or checked["is_usable"]:
                problems.append(
                    f"sample_size of cohort {cohort_id!r} is {size!r}, "
                    "not a non-negative number; read as 0"
                )
            size = None
        note = entry.get("note")
        record = cls(
            cohort_id,
            is_usable=checked["is_usable"],
            is_gene_available=flags["is_gene_available"],
            is_trait_available=flags["is_trait_available"],
            is_available=checked["is_available"],
            is_biased=flags["is_biased"],
            has_age=checked["has_age"],
            has_gender=checked["has_gender"],
            sample_size=size,
            note=note if isinstance(note, str) else None,
        )
        return record, problems


def _is_size(value: object) -> bool:
    return (
        isinstance(value, (int, float))
        and not isinstance(value, bool)
        and math.isfinite(value)
        and value >= 0
    )


@dataclass(frozen=True)
class CohortInfo:
    """A trait's `cohort_info.json`: records in file order, keyed by cohort ID."""

    records: Mapping[str, CohortRecord] = field(default_factory=dict)

    @classmethod
    def from_dict(cls, data: object) -> tuple[CohortInfo, list[str]]:
        """Records of a parsed file and what was wrong with it (nothing here is fatal)."""
        if not isinstance(data, dict):
            return cls({}), ["it is not a JSON object of cohort records; read as {}"]
        records: dict[str, CohortRecord] = {}
        problems: list[str] = []
        for cohort_id, entry in data.items():
            if not isinstance(entry, dict):
                problems.append(f"the record of cohort {cohort_id!r} is not an object; ignored")
                continue
            records[cohort_id], found = CohortRecord.from_dict(cohort_id, entry)
            problems.extend(found)
        return cls(records), problems

    def to_dict(self) -> dict[str, dict[str, Any]]:
        return {cohort_id: record.to_dict() for cohort_id, record in self.records.items()}

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=1) + "\n"

    @staticmethod
    def update(path: str | Path, record: CohortRecord) -> None:
        """Replace one cohort's record in the file, keeping every other record as it was.

        A lock on its folder serializes concurrent writers; the file is
        replaced atomically. A file that is not valid JSON is kept aside as
        `cohort_info.json.corrupt` rather than silently lost.
        """
        CohortInfo._edit(path, record.cohort_id, record.to_dict())

    @staticmethod
    def reorder(path: str | Path, order: list[str]) -> None:
        """Put the records of `order` first, in that order, the others after them as they were.

        Cohort selection breaks sample-size ties by file order, so the order must
        not be the order in which parallel workers happened to finish.
        """
        path = Path(path)
        if not path.exists():
            return
        with locked_folder(path.parent):
            try:
                records = read_json(path)
            except GenotexError:
                return  # a damaged file is set aside by the next update, not reordered
            if not isinstance(records, dict):
                return
            ranked = {cohort_id: i for i, cohort_id in enumerate(order)}
            ordered = sorted(records, key=lambda k: ranked.get(k, len(ranked)))  # stable
            if ordered != list(records):
                text = json.dumps({k: records[k] for k in ordered}, indent=1) + "\n"
                write_text_atomic(path, text)

    @staticmethod
    def remove(path: str | Path, cohort_id: str) -> None:
        """Remove one cohort's record, if the file holds it (under the same lock)."""
        if Path(path).exists():
            CohortInfo._edit(path, cohort_id, None)

    @staticmethod
    def _edit(path: str | Path, cohort_id: str, entry: dict[str, Any] | None) -> None:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        with locked_folder(path.parent):
            records: object = {}
            if path.exists():
                try:
                    records = read_json(path)
                except GenotexError:
                    path.replace(path.with_suffix(".json.corrupt"))
                    records = {}
            if not isinstance(records, dict):
                records = {}
            if entry is None:
                if cohort_id not in records:
                    return
                del records[cohort_id]
            else:
                records[cohort_id] = entry
            write_text_atomic(path, json.dumps(records, indent=1) + "\n")

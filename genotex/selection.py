"""Which cohort(s) answer a problem: `cohort_info.json` records, `select`, gene regressors.

The same rules serve the evaluator's dataset-selection score (evaluation.md § 1)
and the regression pipeline's choice of data (regression.md § 1).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Callable, Iterable, Mapping, Sequence, Union

from .layout import ProblemId, TaskInfo
from .tables import TableError, read_header
from .untrusted import MISSING, GuardedTree, RejectedFile

__all__ = [
    "CohortRecord",
    "CohortInfoReader",
    "Selection",
    "gene_regressors",
    "parse_cohort_info",
    "select_cohorts",
    "usable_cohorts",
]

#: A one-step answer is a cohort ID; a two-step answer is (trait cohort, condition cohort).
Selection = Union[str, tuple[str, str], None]

_FLAGS = ("is_available", "is_usable", "has_age", "has_gender")
_NON_GENE_COLUMNS = ("Age", "Gender")


@dataclass(frozen=True)
class CohortRecord:
    """The fields of one `cohort_info.json` record that decide filtering and selection."""

    cohort_id: str
    is_available: bool = False
    is_usable: bool = False
    has_age: bool = False
    has_gender: bool = False
    sample_size: float = 0


def parse_cohort_info(data: object) -> tuple[dict[str, CohortRecord], list[str]]:
    """Records of a parsed `cohort_info.json`, in file order, and what was wrong with it.

    A flag counts only if it is JSON `true`; `sample_size` must be a non-negative
    number, else it counts as 0; a record that is not an object is ignored
    (evaluation.md § 4). Nulls in unavailable cohorts are normal and not reported.
    """
    if not isinstance(data, dict):
        return {}, ["it is not a JSON object of cohort records; read as {}"]
    records: dict[str, CohortRecord] = {}
    problems: list[str] = []
    for cohort_id, entry in data.items():
        if not isinstance(entry, dict):
            problems.append(f"the record of cohort {cohort_id!r} is not an object; ignored")
            continue
        flags = {}
        for flag in _FLAGS:
            value = entry.get(flag)
            if value is not None and not isinstance(value, bool):
                problems.append(
                    f"{flag} of cohort {cohort_id!r} is {value!r}, not true/false; read as false"
                )
            flags[flag] = value is True
        size = entry.get("sample_size", 0)
        valid_size = (
            isinstance(size, (int, float))
            and not isinstance(size, bool)
            and math.isfinite(size)
            and size >= 0
        )
        if not valid_size:
            if size is not None or flags["is_usable"]:
                problems.append(
                    f"sample_size of cohort {cohort_id!r} is {size!r}, not a non-negative number; read as 0"
                )
            size = 0
        records[cohort_id] = CohortRecord(cohort_id, sample_size=size, **flags)
    return records, problems


class CohortInfoReader:
    """Reads each trait's `cohort_info.json` of a tree once and reports its problems once.

    An unreadable file is read as `{}` (a submission's), or as missing when
    `unreadable_as_missing` (the reference's: its problems are then skipped).
    `folder` is where the trait folders are inside the tree (`preprocess` of an
    `output/` tree; "" when the tree is the preprocess folder itself).
    """

    def __init__(
        self,
        tree: GuardedTree,
        report: Callable[[str, str], None],
        *,
        unreadable_as_missing: bool = False,
        folder: str = "preprocess",
    ) -> None:
        self.tree = tree
        self.folder = folder
        self._report = report
        self._unreadable_as_missing = unreadable_as_missing
        self._cache: dict[str, dict[str, CohortRecord] | None] = {}

    def path(self, trait: str, file_name: str = "cohort_info.json") -> Path:
        return self.tree.path(self.folder, trait, file_name)

    def read(self, trait: str) -> dict[str, CohortRecord] | None:
        """The trait's records, `None` when the file is missing, `{}` when it is unusable."""
        if trait not in self._cache:
            self._cache[trait] = self._load(trait)
        return self._cache[trait]

    def _load(self, trait: str) -> dict[str, CohortRecord] | None:
        path = self.path(trait)
        try:
            data = self.tree.read_json(path)
        except RejectedFile as exc:
            if self._unreadable_as_missing:
                self._report(exc.relative, f"{exc.reason}; the trait is skipped")
                return None
            self._report(exc.relative, f"{exc.reason}; read as {{}}")
            return {}
        if data is MISSING:
            return None
        records, problems = parse_cohort_info(data)
        for problem in problems:
            self._report(self.tree.relative(path), problem)
        return records


def usable_cohorts(
    records: Mapping[str, CohortRecord], condition: str | None = None
) -> list[CohortRecord]:
    """Usable cohorts in file order; for Age/Gender (exact case) also those that have it."""
    kept = []
    for record in records.values():
        if not record.is_usable:
            continue
        if condition == "Age" and not record.has_age:
            continue
        if condition == "Gender" and not record.has_gender:
            continue
        kept.append(record)
    return kept


def gene_regressors(
    trait: str,
    condition: str,
    trait_columns: Iterable[str],
    condition_columns: Iterable[str],
    task_info: TaskInfo,
) -> list[str]:
    """Genes related to the condition but not to the trait, present in both tables.

    Ordered as in the condition's `related_genes` (first occurrence), which makes
    two-step answers reproducible (regression.md § 1).
    """
    trait_genes = set(task_info.genes_of(trait))
    in_trait = set(trait_columns) - {*_NON_GENE_COLUMNS, trait}
    in_condition = set(condition_columns) - {*_NON_GENE_COLUMNS, condition}
    regressors: list[str] = []
    seen: set[str] = set()
    for gene in task_info.genes_of(condition):
        if gene in seen or gene in trait_genes:
            continue
        seen.add(gene)
        if gene in in_trait and gene in in_condition:
            regressors.append(gene)
    return regressors


@lru_cache(maxsize=64)
def _cached_header(real_path: str, mtime_ns: int, size: int) -> tuple[str, ...]:
    return tuple(read_header(real_path))


def linked_header(reader: CohortInfoReader, trait: str, cohort_id: str) -> tuple[str, ...] | None:
    """Column labels of a linked table, `None` if it is missing; unreadable raises TableError."""
    tree = reader.tree
    path = reader.path(trait, f"{cohort_id}.csv")
    if not tree.exists(path):
        return None
    try:
        real = tree.resolve(path)
    except RejectedFile as exc:
        raise TableError(exc.reason, path=tree.relative(path)) from None
    stat = real.stat()
    try:
        return _cached_header(str(real), stat.st_mtime_ns, stat.st_size)
    except TableError as exc:
        raise TableError(exc.reason, path=tree.relative(path)) from None


def two_step_pairs(
    trait_records: Sequence[CohortRecord], condition_records: Sequence[CohortRecord]
) -> list[tuple[str, str]]:
    """Every (trait cohort, condition cohort) pair, largest product of sample sizes first.

    Trait-major file order, kept among ties (the sort is stable).
    """
    pairs = [
        (t.cohort_id, c.cohort_id, t.sample_size * c.sample_size)
        for t in trait_records
        for c in condition_records
    ]
    pairs.sort(key=lambda pair: pair[2], reverse=True)
    return [(t, c) for t, c, _ in pairs]


def select_cohorts(
    reader: CohortInfoReader,
    problem: ProblemId,
    task_info: TaskInfo,
    *,
    report: Callable[[str, str], None] | None = None,
) -> Selection:
    """The cohort (one-step) or cohort pair (two-step) that answers `problem` in a tree."""
    trait, condition = problem.trait, problem.condition
    records = reader.read(trait)
    if records is None:
        return None
    if problem.one_step:
        candidates = usable_cohorts(records, condition)
        if not candidates:
            return None
        best = candidates[0]
        for record in candidates[1:]:
            if record.sample_size > best.sample_size:
                best = record
        return best.cohort_id
    assert condition is not None
    condition_records = reader.read(condition)
    if condition_records is None:
        return None
    trait_usable = usable_cohorts(records)
    condition_usable = usable_cohorts(condition_records)
    if not trait_usable or not condition_usable:
        return None
    for trait_id, condition_id in two_step_pairs(trait_usable, condition_usable):
        try:
            trait_columns = linked_header(reader, trait, trait_id)
            condition_columns = linked_header(reader, condition, condition_id)
        except TableError as exc:
            if report is not None:
                report(str(exc.path), f"{exc.reason}; the cohort pair is passed over")
            continue
        if trait_columns is None or condition_columns is None:
            continue
        if gene_regressors(trait, condition, trait_columns, condition_columns, task_info):
            return trait_id, condition_id
    return None

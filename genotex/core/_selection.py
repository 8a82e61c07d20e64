"""Which cohort(s) answer a problem: `cohort_info.json` records, `select`, gene regressors.

The same rules serve the evaluator's dataset-selection score (evaluation.md § 1)
and the regression pipeline's choice of data (regression.md § 1).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import lru_cache
from pathlib import Path

from ._cohort_info import CohortInfo, CohortRecord
from ._layout import ProblemId
from ._tables import TableError, read_header
from ._task_info import TaskInfo
from ._untrusted import MISSING, GuardedTree, RejectedFile

__all__ = [
    "CohortInfoReader",
    "Selection",
    "selected_cohorts",
    "gene_regressors",
    "select_cohorts",
    "usable_cohorts",
]

#: A one-step answer is a cohort ID; a two-step answer is (trait cohort, condition cohort).
Selection = str | tuple[str, str] | None

_NON_GENE_COLUMNS = ("Age", "Gender")


def selected_cohorts(choice: Selection) -> tuple[str, ...]:
    """A selection as a tuple of cohort IDs: (trait cohort,) or (trait cohort, condition
    cohort), empty when nothing was selected.
    """
    if choice is None:
        return ()
    return (choice,) if isinstance(choice, str) else tuple(choice)


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
        info, problems = CohortInfo.from_dict(data)
        for problem in problems:
            self._report(self.tree.relative(path), problem)
        return dict(info.records)


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


def _with_table(
    reader: CohortInfoReader, trait: str, records: list[CohortRecord]
) -> list[CohortRecord]:
    """The records whose linked table stands in the tree (a link counts: it is judged later)."""
    return [r for r in records if reader.tree.exists(reader.path(trait, f"{r.cohort_id}.csv"))]


def two_step_pairs(
    trait_records: Sequence[CohortRecord], condition_records: Sequence[CohortRecord]
) -> list[tuple[str, str]]:
    """Every (trait cohort, condition cohort) pair, largest product of sample sizes first.

    Trait-major file order, kept among ties (the sort is stable).
    """
    pairs = [
        (t.cohort_id, c.cohort_id, t.size * c.size)
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
            if record.size > best.size:
                best = record
        return best.cohort_id
    assert condition is not None
    condition_records = reader.read(condition)
    if condition_records is None:
        return None
    # a pair with a missing linked table is passed over, so only cohorts whose table exists are
    # paired: records of cohorts that do not exist cost nothing (they made this quadratic)
    trait_usable = _with_table(reader, trait, usable_cohorts(records))
    condition_usable = _with_table(reader, condition, usable_cohorts(condition_records))
    if not trait_usable or not condition_usable:
        return None
    headers: dict[tuple[str, str], tuple[str, ...] | None | TableError] = {}

    def header(of: str, cohort_id: str) -> tuple[str, ...] | None:
        key = (of, cohort_id)
        if key not in headers:  # each table's header read once per selection
            try:
                headers[key] = linked_header(reader, of, cohort_id)
            except TableError as exc:
                headers[key] = exc
        found = headers[key]
        if isinstance(found, TableError):
            raise found
        return found

    for trait_id, condition_id in two_step_pairs(trait_usable, condition_usable):
        try:
            trait_columns = header(trait, trait_id)
            condition_columns = header(condition, condition_id)
        except TableError as exc:
            if report is not None:
                report(str(exc.path), f"{exc.reason}; the cohort pair is passed over")
            continue
        if trait_columns is None or condition_columns is None:
            continue
        if gene_regressors(trait, condition, trait_columns, condition_columns, task_info):
            return trait_id, condition_id
    return None

"""A cohort's findings: its record, then its clinical, gene and linked tables against the reference.

Files are read as the evaluator reads them: the prediction's through its
`GuardedTree` (inside the submission, under the size limits), the reference's as
trusted. A prediction table that cannot be read is a `table_unreadable` finding.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from pathlib import Path

import numpy as np

from ...core import (
    CohortRecord,
    GuardedTree,
    LabelledTable,
    RejectedFile,
    TableCache,
    TableError,
    read_table,
)
from .._preprocessing_task import _subtask_parts
from ._clinical_checks import AGREE, check_clinical, dropped_samples
from ._gene_checks import check_gene_data, check_gene_labels, check_gene_values
from ._model import DiagnosisFinding

__all__ = ["CohortTask", "check_record", "diagnose_cohort"]

#: The evaluator's subtasks, which are the three tables of a cohort, in the order checked.
_KINDS = ("clinical", "gene", "linked")


class CohortTask:
    """What one cohort's diagnosis needs (picklable: it may run in a worker or on Dask)."""

    def __init__(
        self,
        pred: GuardedTree,
        ref: GuardedTree,
        trait: str,
        cohort: str,
        *,
        other_rows: Mapping[str, Mapping[object, float]] | None = None,
        cache: TableCache | None = None,
    ) -> None:
        self.pred, self.ref = pred, ref  # the submission's guard and limits travel with it
        self.trait, self.cohort = trait, cohort
        self.other_rows = dict(other_rows or {})
        self.cache = cache  # for the reference's tables only


def _yes_no(value: object) -> str:
    return "?" if value is None else ("yes" if value else "no")


def check_record(
    trait: str, cohort: str, pred: CohortRecord | None, ref: CohortRecord | None, file: str
) -> list[DiagnosisFinding]:
    """`cohort_usability`: the cohort marked usable (or not) against the reference's record."""
    ref_usable = bool(ref is not None and ref.is_usable)
    pred_usable = bool(pred is not None and pred.is_usable)
    if ref_usable == pred_usable:
        return []
    said = "absent" if pred is None else ("usable" if pred_usable else "not usable")
    differs = []
    if ref is not None and pred is not None:
        for name, attribute in (
            ("trait", "is_trait_available"),
            ("genes", "is_gene_available"),
            ("biased", "is_biased"),
        ):
            mine, theirs = getattr(pred, attribute), getattr(ref, attribute)
            if mine != theirs:
                differs.append(f"{name} {_yes_no(mine)} vs {_yes_no(theirs)}")
        if pred.sample_size != ref.sample_size:
            differs.append(f"size {pred.sample_size} vs {ref.sample_size}")
    detail = f" ({'; '.join(differs)})" if differs else ""
    return [
        DiagnosisFinding(
            "cohort_usability",
            file,
            f"{cohort} {said}, the reference's is {'usable' if ref_usable else 'not usable'}"
            + detail,
            trait,
            cohort,
            numbers={"agent_usable": float(pred_usable), "reference_usable": float(ref_usable)},
        )
    ]


def _read(
    tree: GuardedTree, path: Path, rows_are_features: bool, cache: TableCache | None
) -> LabelledTable:
    if tree.confined:  # a submission's: resolved inside it, under its limits, never cached
        real = tree.resolve(path)
        return read_table(real, features_are_rows=rows_are_features, max_columns=tree.max_columns)
    return read_table(path, features_are_rows=rows_are_features, cache=cache)


def _tables(
    tree: GuardedTree,
    trait: str,
    cohort: str,
    unreadable: Callable[[str, str], None] | None,
    cache: TableCache | None = None,
) -> dict[str, LabelledTable]:
    out = {}
    for kind in _KINDS:
        path = tree.path(*_subtask_parts(kind, trait, f"{cohort}.csv"))
        if not tree.exists(path):
            continue
        try:
            out[kind] = _read(tree, path, kind != "linked", cache)
        except RejectedFile as exc:
            if unreadable:
                unreadable(exc.relative, exc.reason)
        except TableError as exc:
            if unreadable:
                unreadable(tree.relative(path), exc.reason)
    return out


def _maker(trait: str, cohort: str, file: str) -> Callable[..., DiagnosisFinding]:
    def make(error_class: str, message: str, **numbers: float) -> DiagnosisFinding:
        return DiagnosisFinding(error_class, file, message, trait, cohort, numbers=numbers)

    return make


def _misaligned(
    linked: LabelledTable, clinical: LabelledTable | None, gene: LabelledTable | None, trait: str
) -> tuple[int, int] | None:
    """(samples whose linked row disagrees with their clinical/gene columns, samples compared)."""
    rows = {s: i for i, s in enumerate(linked.samples.tolist())}
    columns = set(linked.features.tolist())
    sources = [t for t in (clinical, gene) if t is not None]
    for table in sources:
        features = [f for f in table.features.tolist() if f in columns]
        if table is gene:
            features = [f for f in features if f not in (trait, "Age", "Gender")][:50]
        samples = [s for s in table.samples.tolist() if s in rows]
        if len(features) == 0 or len(samples) < 3:
            continue
        try:
            theirs = table.block(features, samples)
            mine = linked.block(features, samples)
        except (KeyError, ValueError, TableError):
            continue
        both = np.isfinite(theirs) & np.isfinite(mine)
        same = np.where(both, np.isclose(mine, theirs, rtol=1e-6, atol=1e-6), True).all(axis=0)
        wrong = int(np.sum(~same))
        if wrong > (1 - AGREE) * len(samples):
            return wrong, len(samples)
    return None


def _linked_findings(
    tables: dict[str, LabelledTable], ref: dict[str, LabelledTable], trait: str, make: Callable
) -> list[DiagnosisFinding]:
    linked = tables["linked"]
    found = []
    wrong = _misaligned(linked, tables.get("clinical"), tables.get("gene"), trait)
    if wrong is not None:
        found.append(
            make(
                "samples_misaligned",
                f"{wrong[0]} of {wrong[1]} linked rows disagree with the same sample's "
                "clinical or gene columns",
                misaligned=wrong[0],
                samples=wrong[1],
            )
        )
    if "linked" in ref:
        found += dropped_samples(linked.samples, ref["linked"].samples, make, "linked ")
        if "gene" not in tables:  # the labels and values only the linked table shows
            found += _linked_genes(linked, ref["linked"], trait, make)
    return found


def _linked_genes(
    linked: LabelledTable, ref: LabelledTable, trait: str, make: Callable
) -> list[DiagnosisFinding]:
    clinical = {trait, "Age", "Gender"}
    labels = [str(f) for f in linked.features.tolist() if f not in clinical and f is not None]
    reference = [str(f) for f in ref.features.tolist() if f not in clinical and f is not None]
    return check_gene_labels(labels, reference, make) + check_gene_values(
        linked, ref, make, what="linked gene values"
    )


def diagnose_cohort(
    task: CohortTask, *, synonyms: Mapping[str, str] | None = None
) -> list[DiagnosisFinding]:
    """Every table finding of one cohort (its record is checked by the caller)."""
    pred, ref = task.pred, task.ref
    found: list[DiagnosisFinding] = []

    def unreadable(file: str, reason: str) -> None:
        error_class = "values_transformed" if "duplicated" in reason else "table_unreadable"
        what = "duplicated gene labels: " if error_class == "values_transformed" else ""
        found.append(DiagnosisFinding(error_class, file, what + reason, task.trait, task.cohort))

    mine = _tables(pred, task.trait, task.cohort, unreadable)
    theirs = _tables(ref, task.trait, task.cohort, None, task.cache)
    for kind in _KINDS:
        # the linked checks look at the agent's own tables too, so only its table is needed
        if kind not in mine or (kind not in theirs and kind != "linked"):
            continue
        parts = _subtask_parts(kind, task.trait, f"{task.cohort}.csv")
        make = _maker(task.trait, task.cohort, pred.relative(pred.path(*parts)))
        try:
            found += _check_kind(kind, mine, theirs, task, make, synonyms=synonyms)
        except TableError as exc:  # a non-numeric cell where values are compared
            found.append(make("table_unreadable", exc.reason))
    return found


def _check_kind(
    kind: str,
    mine: dict[str, LabelledTable],
    theirs: dict[str, LabelledTable],
    task: CohortTask,
    make: Callable[..., DiagnosisFinding],
    *,
    synonyms: Mapping[str, str] | None,
) -> list[DiagnosisFinding]:
    """The findings of one of the cohort's tables against the reference's."""
    if kind == "clinical":
        return check_clinical(
            mine[kind], theirs[kind], task.trait, make, other_rows=task.other_rows
        )
    if kind == "gene":
        return check_gene_data(mine[kind], theirs[kind], make, synonyms=synonyms)
    return _linked_findings(mine, theirs, task.trait, make)


def cohort_runner(synonyms: Mapping[str, str] | None) -> Callable[[CohortTask], list]:
    """`diagnose_cohort` with the synonyms bound (picklable, for worker processes)."""
    return functools.partial(diagnose_cohort, synonyms=synonyms)

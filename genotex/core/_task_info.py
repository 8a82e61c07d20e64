"""`metadata/task_info.json`: the related genes and conditions of every trait (layout.md)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import NoReturn

from ._atomic import write_text_atomic
from ._errors import TaskInfoError, UnsafeNameError
from ._json import read_json
from ._layout import ProblemId, check_safe_name

__all__ = ["TaskInfo", "closest_name", "load_task_info"]


@dataclass(frozen=True)
class TaskInfo:
    """`metadata/task_info.json`: the related genes and the conditions of every trait.

    The one reader and writer of the file: `read`/`write` on disk,
    `from_dict`/`to_dict` in memory. Every trait and condition name passes
    the safe-name rule, so no path built from them can leave its folder.
    """

    related_genes: Mapping[str, tuple[str, ...]]
    conditions: Mapping[str, tuple[str, ...]]
    source: Path | None = field(default=None, compare=False)  # the file it was read from
    scope: tuple[str, ...] | None = None  # the traits asked (`restricted_to`); None: all

    @property
    def traits(self) -> list[str]:
        """The traits asked, sorted (the benchmark's order): all of them unless restricted."""
        return sorted(self.scope if self.scope is not None else self.related_genes)

    def restricted_to(self, traits: Iterable[str]) -> TaskInfo:
        """The same file asked only about `traits` (their problems, their filtering).

        Every trait's related genes stay known, so a two-step problem whose
        condition is another trait is answered and scored as in the whole file.
        """
        scope = tuple(dict.fromkeys(traits))
        unknown = [t for t in scope if t not in self.related_genes]
        if unknown:
            self._no_trait(unknown[0])
        return TaskInfo(self.related_genes, self.conditions, self.source, scope)

    def problems(self) -> Iterator[ProblemId]:
        """Problems in benchmark order: per sorted trait, (T, None) then (T, C) as listed."""
        for trait in self.traits:
            yield ProblemId(trait, None)
            for condition in self.conditions[trait]:
                yield ProblemId(trait, condition)

    def select(self, traits: Iterable[str] = (), condition: str | None = None) -> list[ProblemId]:
        """The problems of some traits, or one (trait, condition) problem.

        Parameters
        ----------
        traits
            Traits to keep (all problems of each); empty keeps every trait.
        condition
            With exactly one trait: only that problem ("None" is the
            unconditional one, in any case). A condition task_info does not list for the
            trait is still returned, so that a user can ask for it.

        Raises
        ------
        TaskInfoError
            A trait that task_info does not have.
        UnsafeNameError
            A name that would escape its folder.
        ValueError
            A condition given with zero or several traits.
        """
        traits = [check_safe_name(t, what="trait name") for t in traits]
        for trait in traits:
            if trait not in self.related_genes:
                self._no_trait(trait)
        problems = [p for p in self.problems() if not traits or p.trait in traits]
        if condition is None:
            return problems
        if len(traits) != 1:
            raise ValueError("a condition goes with exactly one trait")
        unconditional = condition.strip().lower() == "none"  # the unconditional one, any case
        if not unconditional:
            self._not_a_variant(check_safe_name(condition, what="condition"))
        wanted = ProblemId(traits[0], None if unconditional else condition)
        return [p for p in problems if p == wanted] or [wanted]

    def _no_trait(self, trait: str) -> NoReturn:
        """Refuse a trait task_info does not have, naming the closest it has."""
        close = closest_name(trait, list(self.related_genes))
        hint = f"; did you mean {close}?" if close else ""
        raise TaskInfoError(f"task_info has no trait {trait!r}{hint}", path=self.source)

    def _not_a_variant(self, condition: str) -> None:
        """Refuse a condition that is a case or spelling variant of a known one (Age, Gender,
        a trait): a mistake. One unlike any is accepted, for problems outside task_info.
        """
        known = ["Age", "Gender", *self.related_genes]
        if condition in known:
            return
        close = closest_name(condition, known)
        if close is not None:
            raise TaskInfoError(
                f"task_info has no condition {condition!r}; did you mean {close}? (a "
                "condition unlike every known one is accepted, for a problem outside it)",
                path=self.source,
            )

    def genes_of(self, trait: str) -> tuple[str, ...]:
        """Related genes of a trait; a trait absent from task_info has none."""
        return self.related_genes.get(trait, ())

    def repeated_genes(self) -> dict[str, tuple[str, ...]]:
        """Each trait's related genes listed more than once (first occurrence order).

        They are kept as listed, as the published pipeline keeps them: its CV's selection
        recall counts a repeated gene once per listing (`gene_selection_scores`), its two-step
        regressors are a set, and the evaluator does not read related_genes.
        """
        found = {}
        for trait, genes in self.related_genes.items():
            seen: dict[str, int] = {}
            for gene in genes:
                seen[gene] = seen.get(gene, 0) + 1
            repeated = tuple(g for g, n in seen.items() if n > 1)
            if repeated:
                found[trait] = repeated
        return found

    def repeated_genes_note(self) -> str | None:
        """`repeated_genes` in one sentence naming the file (None when there are none)."""
        found = self.repeated_genes()
        if not found:
            return None
        listed = "; ".join(f"{trait}: {', '.join(genes[:5])}" + (" ..." if len(genes) > 5 else "")
                           for trait, genes in list(found.items())[:5])  # fmt: skip
        where = f"{self.source}" if self.source else "task_info"
        return (
            f"{where} lists some related genes more than once ({listed}); they are kept as "
            "listed, as the published pipeline keeps them (its cross-validation's selection "
            "recall counts each listing; the evaluator does not read related_genes)"
        )

    @classmethod
    def from_dict(cls, data: object, *, source: str | Path | None = None) -> TaskInfo:
        """Validate a parsed task_info; every fault is a `TaskInfoError` naming `source`.

        Every problem must be asked once and mean one thing: a condition listed
        twice, one naming its own trait, `None` (the unconditional problem is
        always asked), a trait that task_info does not have (other than Age and
        Gender), or a name holding `|` (which separates trait and condition in
        problem keys) is refused.
        """
        if not isinstance(data, dict):
            raise TaskInfoError("task_info is not a JSON object of traits", path=source)
        related: dict[str, tuple[str, ...]] = {}
        conditions: dict[str, tuple[str, ...]] = {}
        try:
            for trait, entry in data.items():
                related[trait], conditions[trait] = _entry(trait, entry, source)
        except UnsafeNameError as exc:
            raise TaskInfoError(str(exc), path=source) from None
        for trait, listed in conditions.items():
            _check_conditions(trait, listed, related, source)
        return cls(related, conditions, None if source is None else Path(source))

    def to_dict(self) -> dict[str, dict[str, list[str]]]:
        """The JSON object, traits in their stored order."""
        return {
            trait: {
                "related_genes": list(genes),
                "conditions": list(self.conditions.get(trait, ())),
            }
            for trait, genes in self.related_genes.items()
        }

    @classmethod
    def read(cls, path: str | Path) -> TaskInfo:
        """Read and validate a `task_info.json`; a fault is a `TaskInfoError` naming the file."""
        path = Path(path)
        return cls.from_dict(read_json(path, TaskInfoError), source=path)

    def write(self, path: str | Path) -> None:
        """Write the file atomically (indented, non-ASCII kept)."""
        text = json.dumps(self.to_dict(), indent=1, ensure_ascii=False) + "\n"
        write_text_atomic(path, text)


def _entry(
    trait: str, entry: object, source: str | Path | None
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    check_safe_name(trait, what="trait name")
    if "|" in trait:
        raise UnsafeNameError(f"the trait name {trait!r} holds '|', which separates problem keys")
    if not isinstance(entry, dict):
        raise TaskInfoError(f"the entry of trait {trait!r} is not an object", path=source)
    genes = entry.get("related_genes", [])
    conds = entry.get("conditions", [])
    if not isinstance(genes, list) or not all(isinstance(g, str) for g in genes):
        reason = f"related_genes of trait {trait!r} is not a list of gene symbols"
        raise TaskInfoError(reason, path=source)
    if not isinstance(conds, list) or not all(isinstance(c, str) for c in conds):
        raise TaskInfoError(f"conditions of trait {trait!r} is not a list of names", path=source)
    for condition in conds:
        check_safe_name(condition, what="condition name")
        if "|" in condition:
            raise UnsafeNameError(
                f"the condition {condition!r} holds '|', which separates problem keys"
            )
    return tuple(genes), tuple(conds)


def _check_conditions(
    trait: str,
    listed: tuple[str, ...],
    traits: Mapping[str, object],
    source: str | Path | None,
) -> None:
    """Refuse conditions that would make one problem two, or score a question nobody asked."""
    seen: set[str] = set()
    for condition in listed:
        if condition in seen:
            reason = f"trait {trait!r} lists the condition {condition!r} twice"
        elif condition == trait:
            reason = f"trait {trait!r} lists itself as a condition"
        elif condition.lower() == "none":
            reason = (
                f"trait {trait!r} lists {condition!r} as a condition: the unconditional "
                "problem is always asked and is not listed"
            )
        elif condition not in ("Age", "Gender") and condition not in traits:
            reason = f"trait {trait!r} has the condition {condition!r}, which is not a trait here"
        else:
            seen.add(condition)
            continue
        raise TaskInfoError(reason, path=source)


def load_task_info(path: str | Path) -> TaskInfo:
    """Read and validate a `task_info.json` (the same as `TaskInfo.read`)."""
    return TaskInfo.read(path)


def closest_name(name: str, known: list[str], *, cutoff: float = 0.8) -> str | None:
    """The known name `name` is a case or spelling variant of (difflib's ratio at least
    `cutoff`, case-folded), or None.
    """
    import difflib

    folded = {k.casefold(): k for k in known}
    if name.casefold() in folded:
        return folded[name.casefold()]
    close = difflib.get_close_matches(name.casefold(), list(folded), n=1, cutoff=cutoff)
    return folded[close[0]] if close else None

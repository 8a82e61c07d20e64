"""What the harness needs of a benchmark root, without Inspect: samples, slices, scores, export.

A benchmark root is GenoTEX's layout: `input/` (GEO and TCGA), `metadata/`
(`task_info.json`, `gene_synonym.json`) and the reference answers: a folder
given as `reference`, else the one of `ROOT/reference/output` and `ROOT/output`
that holds answers (both holding answers is ambiguous, and an error). Each
sample of a task is one slice of it: the files the agent is given, the
problems it must answer, and how its `output/` is scored (genotex's own
evaluation on the sample's slice of the reference).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from ...core import (
    GenotexError,
    ProblemId,
    TaskInfo,
    check_safe_name,
    file_sha256,
    regress_file_name,
    tree_digest_of,
)

__all__ = [
    "CONDITION_SETTINGS",
    "EVAL_TASKS",
    "TASKS",
    "TCGA_SETTINGS",
    "ConditionSetting",
    "TcgaSetting",
    "Benchmark",
    "SampleSpec",
    "find_reference",
    "plan_samples",
    "reference_manifest",
    "reference_slice",
]

TaskName = Literal["preprocess", "analysis", "e2e"]
TASKS: tuple[TaskName, ...] = ("preprocess", "analysis", "e2e")
#: `-T tcga=`: every Xena folder given, the agent chooses (the paper's), or the trait's own.
TcgaSetting = Literal["all", "matched"]
TCGA_SETTINGS: tuple[TcgaSetting, ...] = ("all", "matched")
#: `-T conditions=`: in e2e, the condition traits' raw inputs (the paper's) or their
#: reference preprocessed data.
ConditionSetting = Literal["raw", "given"]
CONDITION_SETTINGS: tuple[ConditionSetting, ...] = ("raw", "given")

#: What genotex eval scores for each task.
EVAL_TASKS: dict[TaskName, tuple[str, ...]] = {
    "preprocess": ("selection", "preprocessing"),
    "analysis": ("analysis",),
    "e2e": ("selection", "preprocessing", "analysis"),
}


@dataclass(frozen=True)
class SampleSpec:
    """One sample: an id, the trait, the problems to answer, the files the agent is given.

    `files` maps a path inside the agent's working folder to a file on the host;
    `given` names the traits whose reference preprocessed data is given
    (the analysis task's data, and the e2e task's condition traits under
    `conditions=given`); `raw` the condition traits whose raw inputs are given
    instead, for the agent to preprocess (e2e under `conditions=raw`, the paper's).
    """

    id: str
    task: TaskName
    trait: str
    problems: tuple[ProblemId, ...]
    files: Mapping[str, Path]
    given: tuple[str, ...] = ()
    task_info: Mapping[str, Any] = field(default_factory=dict)  # metadata/task_info.json
    raw: tuple[str, ...] = ()

    @property
    def needed(self) -> tuple[str, ...]:
        """The other traits whose reference data scoring needs (a two-step's conditions)."""
        return (*self.given, *self.raw)


class Benchmark:
    """A benchmark root and its reference answers.

    Parameters
    ----------
    root
        The benchmark root (`input/`, `metadata/`).
    reference
        The reference `output/` folder; by default the one of
        `ROOT/reference/output` (the demo's layout) and `ROOT/output` (the
        published layout) that holds answers (`find_reference`).
    """

    def __init__(self, root: str | Path, reference: str | Path | None = None) -> None:
        self.root = Path(root)
        if not self.root.is_dir():
            raise GenotexError("the benchmark root is not a folder", path=self.root)
        self.reference = find_reference(self.root, reference)
        self.task_info = TaskInfo.read(self.root / "metadata" / "task_info.json")

    def traits(self, wanted: Iterable[str] = ()) -> list[str]:
        """The traits to sample (all of task_info's, or those named), refusing unknown ones."""
        wanted = [w for w in wanted if w]
        for trait in wanted:
            if trait not in self.task_info.related_genes:
                raise GenotexError(f"task_info has no trait {trait!r}", path=self.task_info.source)
        return [t for t in self.task_info.traits if not wanted or t in wanted]

    # ---- what the agent is given ------------------------------------------------------
    def _inputs(self, traits: Iterable[str], tcga: TcgaSetting) -> dict[str, Path]:
        """The raw inputs of `traits`: their GEO folders, and every Xena folder (`tcga="all"`,
        the paper's: the agent chooses) or the traits' own (`"matched"`).
        """
        traits = list(traits)
        files: dict[str, Path] = {}
        for trait in traits:
            files.update(_tree_files(self.root / "input" / "GEO" / trait, f"input/GEO/{trait}"))
        root = self.root / "input" / "TCGA"
        if root.is_dir():
            from ...preprocessing import find_xena_folder

            if tcga == "all":
                folders = sorted(p for p in root.iterdir() if p.is_dir() and not p.is_symlink())
            else:
                folders = [f for f in (find_xena_folder(root, t) for t in traits) if f]
            for xena in folders:
                files.update(_tree_files(xena, f"input/TCGA/{xena.name}"))
        synonyms = self.root / "metadata" / "gene_synonym.json"
        if synonyms.is_file():
            files["metadata/gene_synonym.json"] = synonyms
        return files

    def _given(self, traits: Iterable[str]) -> dict[str, Path]:
        files: dict[str, Path] = {}
        for trait in traits:
            folder = self.reference / "preprocess" / trait
            files.update(_tree_files(folder, f"given/preprocess/{trait}"))
        return files

    def _cut_task_info(
        self, trait: str, problems: Iterable[ProblemId], others: Iterable[str]
    ) -> dict[str, Any]:
        """task_info asking only the sample's problems: the trait with the conditions asked, and
        the traits those conditions name, without theirs (a valid file, `genotex` reads it).
        """
        asked = [p.condition for p in problems if p.trait == trait and p.condition is not None]
        data = {trait: {"related_genes": list(self.task_info.genes_of(trait)), "conditions": asked}}
        for other in others:
            if other != trait:
                data[other] = {
                    "related_genes": list(self.task_info.genes_of(other)),
                    "conditions": [],
                }
        return data

    def samples(
        self,
        task: TaskName,
        traits: Iterable[str] = (),
        *,
        tcga: TcgaSetting = "all",
        conditions: ConditionSetting = "raw",
    ) -> list[SampleSpec]:
        """The samples of a task: one per trait (preprocess, e2e) or per problem (analysis).

        `tcga` and `conditions` are the task's setting (`-T`): the paper's by default.
        """
        specs = []
        for plan in plan_samples(self.task_info, task, self.traits(traits), conditions=conditions):
            if task == "analysis":
                files = self._given(plan.given)
            else:
                files = self._inputs((plan.trait, *plan.raw), tcga)
                files.update(self._given(plan.given))
            # preprocess asks no problem, but its task_info still names the trait
            asked = plan.problems if task != "preprocess" else ()
            cut = self._cut_task_info(plan.trait, asked, plan.needed)
            specs.append(replace(plan, files=files, task_info=cut))
        return specs

    # ---- the reference's answers (the gold agent) --------------------------------------
    def gold_files(self, spec: SampleSpec) -> dict[str, Path]:
        """The reference files that answer a sample, keyed by their path under `output/`."""
        files: dict[str, Path] = {}
        if spec.task in ("preprocess", "e2e"):  # and the conditions' (given, or raw)
            for trait in (spec.trait, *spec.needed):
                folder = self.reference / "preprocess" / trait
                files.update(_tree_files(folder, f"output/preprocess/{trait}"))
        for problem in spec.problems:
            name = regress_file_name(problem.condition)
            path = self.reference / "regress" / problem.trait / name
            if path.is_file():
                files[f"output/regress/{problem.trait}/{name}"] = path
        return files

    def slice_files(self, specs: Iterable[SampleSpec]) -> dict[str, Path]:
        """The reference files that score `specs` (`reference_slice`)."""
        return reference_slice(self.reference, specs)


def _tree_files(folder: Path, prefix: str) -> dict[str, Path]:
    """Every regular file under `folder`, keyed by `prefix/<relative path>`."""
    files = {}
    if folder.is_dir():
        for path in sorted(folder.rglob("*")):
            if path.is_file() and not path.is_symlink():
                files[f"{prefix}/{path.relative_to(folder).as_posix()}"] = path
    return files


def reference_slice(reference: Path, specs: Iterable[SampleSpec]) -> dict[str, Path]:
    """The reference files that score `specs`, keyed by their path under the reference.

    Each sample's trait (its preprocessed data and every answer of the trait),
    and the preprocessed data of the traits it needs (given, or given raw).
    """
    files: dict[str, Path] = {}
    for spec in specs:
        for trait in (spec.trait, *spec.needed):
            files.update(_tree_files(reference / "preprocess" / trait, f"preprocess/{trait}"))
        files.update(_tree_files(reference / "regress" / spec.trait, f"regress/{spec.trait}"))
    return files


def _condition_traits(task_info: TaskInfo, problems: Iterable[ProblemId]) -> list[str]:
    """The traits that two-step problems take as conditions (their data is given)."""
    return [
        p.condition
        for p in problems
        if p.condition is not None and not p.one_step and p.condition in task_info.related_genes
    ]


def plan_samples(
    task_info: TaskInfo,
    task: TaskName,
    traits: Iterable[str],
    *,
    conditions: ConditionSetting = "raw",
) -> list[SampleSpec]:
    """The samples of a task over `traits`, without their files: ids, problems, given traits.

    What a log's samples must be: `genotex harness export` checks every sample
    it reads against this plan of the log's own task_info (and its `conditions`,
    "given" for a log made before 0.10.0, which gave the e2e conditions' data).
    """
    if task not in TASKS:
        raise GenotexError(f"unknown task {task!r}; choose one of {', '.join(TASKS)}")
    specs = []
    for trait in traits:
        check_safe_name(trait, what="trait name")
        problems = [p for p in task_info.problems() if p.trait == trait]
        if task == "analysis":
            for problem in problems:
                needed = (trait, *_condition_traits(task_info, [problem]))
                specs.append(
                    SampleSpec(problem.key.replace("|", "__"), task, trait, (problem,), {}, needed)
                )
            continue
        needed = tuple(_condition_traits(task_info, problems)) if task == "e2e" else ()
        asked = tuple(problems) if task == "e2e" else ()
        given, raw = ((), needed) if conditions == "raw" else (needed, ())
        specs.append(SampleSpec(trait, task, trait, asked, {}, given, raw=raw))
    return specs


def find_reference(root: Path, reference: str | Path | None) -> Path:
    """The reference answers of a benchmark root: the one given, or the only one there.

    The demo's layout keeps them in `ROOT/reference/output` beside its own
    pipeline's `ROOT/output`; the published layout keeps them in `ROOT/output`.
    Where both hold answers, which one is the reference cannot be guessed (one
    may be an agent's or a pipeline's output), so it is an error naming both.
    """
    if reference is not None:
        chosen = Path(reference)
        if not (chosen / "regress").is_dir():
            raise GenotexError("the reference folder has no regress/", path=chosen)
        return chosen
    candidates = [root / "reference" / "output", root / "output"]
    found = [c for c in candidates if (c / "regress").is_dir()]
    if len(found) == 1:
        return found[0]
    if not found:
        raise GenotexError(
            f"holds no reference answers ({candidates[0]} or {candidates[1]}, each with "
            "regress/); give the reference folder (-T reference=DIR)",
            path=root,
        )
    raise GenotexError(
        f"holds two folders of answers, {found[0]} and {found[1]}, and which one is the "
        "reference cannot be guessed; give it (-T reference=DIR)",
        path=root,
    )


def reference_manifest(reference: Path, files: Mapping[str, Path]) -> dict[str, Any]:
    r"""What a run records of its reference: the folder, each file's size and sha256, the digest.

    The digest is the sha256 of the sorted `<path>\t<size>\t<sha256>` lines, so
    a reference whose scored files differ by one byte has another digest.
    """
    entries: dict[str, tuple[int, str]] = {}
    for relative, path in sorted(files.items()):
        entries[relative] = (path.stat().st_size, file_sha256(path))
    digest = tree_digest_of((p, n, h) for p, (n, h) in entries.items())
    listed = {p: list(e) for p, e in entries.items()}  # JSON's lists, as read back from a log
    return {"path": str(reference), "sha256": digest, "files": listed}

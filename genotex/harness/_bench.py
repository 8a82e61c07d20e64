"""What the harness needs of a benchmark root, without Inspect: samples, slices, scores, export.

A benchmark root is GenoTEX's layout: `input/` (GEO and TCGA), `metadata/`
(`task_info.json`, `gene_synonym.json`) and the reference `output/` (or the
demo's `reference/output/`, or a folder given as `reference`). Each sample of a
task is one slice of it: the files the agent is given, the problems it must
answer, and how its `output/` is scored (genotex's own evaluation on the
sample's slice of the reference).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from ..core import (
    ANALYSIS_METRICS,
    GenotexError,
    ProblemId,
    TaskInfo,
    check_safe_name,
    nanmean,
    output_path,
    regress_file_name,
)
from ..evaluation import EvalOptions, EvalReport, evaluate

__all__ = [
    "TASKS",
    "Benchmark",
    "SampleSpec",
    "pooled_average",
    "EVAL_TASKS",
    "add_given",
    "link_slice",
    "merge_outputs",
    "score_output",
]

TaskName = Literal["preprocess", "analysis", "e2e"]
TASKS: tuple[TaskName, ...] = ("preprocess", "analysis", "e2e")

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
    (the analysis task's data, and the e2e task's condition traits).
    """

    id: str
    task: TaskName
    trait: str
    problems: tuple[ProblemId, ...]
    files: Mapping[str, Path]
    given: tuple[str, ...] = ()
    task_info: Mapping[str, Any] = field(default_factory=dict)  # metadata/task_info.json


class Benchmark:
    """A benchmark root and its reference answers.

    Parameters
    ----------
    root
        The benchmark root (`input/`, `metadata/`).
    reference
        The reference `output/` folder; default `ROOT/output`, else the demo's
        `ROOT/reference/output`.
    """

    def __init__(self, root: str | Path, reference: str | Path | None = None) -> None:
        self.root = Path(root)
        if reference is None:
            candidates = [self.root / "output", self.root / "reference" / "output"]
            reference = next((c for c in candidates if (c / "regress").is_dir()), candidates[0])
        self.reference = Path(reference)
        self.task_info = TaskInfo.read(self.root / "metadata" / "task_info.json")
        if not (self.reference / "regress").is_dir():
            raise GenotexError("the reference folder has no regress/", path=self.reference)

    def traits(self, wanted: Iterable[str] = ()) -> list[str]:
        """The traits to sample (all of task_info's, or those named), refusing unknown ones."""
        wanted = [w for w in wanted if w]
        for trait in wanted:
            if trait not in self.task_info.related_genes:
                raise GenotexError(f"task_info has no trait {trait!r}", path=self.task_info.source)
        return [t for t in self.task_info.traits if not wanted or t in wanted]

    # ---- what the agent is given ------------------------------------------------------
    def _tree_files(self, folder: Path, prefix: str) -> dict[str, Path]:
        """Every regular file under `folder`, keyed by `prefix/<relative path>`."""
        files = {}
        if folder.is_dir():
            for path in sorted(folder.rglob("*")):
                if path.is_file() and not path.is_symlink():
                    files[f"{prefix}/{path.relative_to(folder).as_posix()}"] = path
        return files

    def _inputs(self, trait: str) -> dict[str, Path]:
        files = self._tree_files(self.root / "input" / "GEO" / trait, f"input/GEO/{trait}")
        tcga = self.root / "input" / "TCGA"
        if tcga.is_dir():
            from ..preprocessing import find_xena_folder

            xena = find_xena_folder(tcga, trait)
            if xena is not None:
                files.update(self._tree_files(xena, f"input/TCGA/{xena.name}"))
        synonyms = self.root / "metadata" / "gene_synonym.json"
        if synonyms.is_file():
            files["metadata/gene_synonym.json"] = synonyms
        return files

    def _given(self, traits: Iterable[str]) -> dict[str, Path]:
        files: dict[str, Path] = {}
        for trait in traits:
            folder = self.reference / "preprocess" / trait
            files.update(self._tree_files(folder, f"given/preprocess/{trait}"))
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

    def _condition_traits(self, problems: Iterable[ProblemId]) -> list[str]:
        return [
            p.condition
            for p in problems
            if p.condition is not None
            and not p.one_step
            and p.condition in self.task_info.related_genes
        ]

    def samples(self, task: TaskName, traits: Iterable[str] = ()) -> list[SampleSpec]:
        """The samples of a task: one per trait (preprocess, e2e) or per problem (analysis)."""
        if task not in TASKS:
            raise GenotexError(f"unknown task {task!r}; choose one of {', '.join(TASKS)}")
        specs = []
        for trait in self.traits(traits):
            check_safe_name(trait, what="trait name")
            problems = [p for p in self.task_info.problems() if p.trait == trait]
            if task == "analysis":
                for problem in problems:
                    needed = [trait, *self._condition_traits([problem])]
                    specs.append(
                        SampleSpec(
                            id=problem.key.replace("|", "__"),
                            task=task,
                            trait=trait,
                            problems=(problem,),
                            files=self._given(needed),
                            given=tuple(needed),
                            task_info=self._cut_task_info(trait, [problem], needed),
                        )
                    )
                continue
            conditions = self._condition_traits(problems) if task == "e2e" else []
            files = self._inputs(trait)
            files.update(self._given(conditions))
            specs.append(
                SampleSpec(
                    id=trait,
                    task=task,
                    trait=trait,
                    problems=tuple(problems) if task == "e2e" else (),
                    files=files,
                    given=tuple(conditions),
                    task_info=self._cut_task_info(
                        trait, problems if task == "e2e" else [], conditions
                    ),
                )
            )
        return specs

    # ---- the reference's answers (the gold agent) --------------------------------------
    def gold_files(self, spec: SampleSpec) -> dict[str, Path]:
        """The reference files that answer a sample, keyed by their path under `output/`."""
        files: dict[str, Path] = {}
        if spec.task in ("preprocess", "e2e"):
            folder = self.reference / "preprocess" / spec.trait
            files.update(self._tree_files(folder, f"output/preprocess/{spec.trait}"))
        for problem in spec.problems:
            name = regress_file_name(problem.condition)
            path = self.reference / "regress" / problem.trait / name
            if path.is_file():
                files[f"output/regress/{problem.trait}/{name}"] = path
        return files


# ---- scoring ----------------------------------------------------------------------------
def link_slice(
    reference: Path, traits: Iterable[str], into: Path, *, also_preprocess: Iterable[str] = ()
) -> Path:
    """A reference `output/` holding only `traits` (links to the real folders), and the
    preprocessed data of `also_preprocess` (the condition traits a two-step problem needs).
    """
    traits, extra = list(traits), [t for t in also_preprocess if t not in traits]
    for stage in ("preprocess", "regress"):
        (into / stage).mkdir(parents=True, exist_ok=True)
        for trait in traits + (extra if stage == "preprocess" else []):
            source = reference / stage / trait
            if source.is_dir():
                os.symlink(os.path.realpath(source), into / stage / trait)
    return into


def add_given(tree: Path, reference: Path, traits: Iterable[str]) -> None:
    """Ready an agent's output tree for scoring: its two stage folders, and the reference's
    preprocessed data of `traits` (what the agent was given) where it wrote none of its own.
    """
    for stage in ("preprocess", "regress"):
        (tree / stage).mkdir(parents=True, exist_ok=True)
    for trait in traits:
        source, target = reference / "preprocess" / trait, tree / "preprocess" / trait
        if source.is_dir() and not target.exists():
            shutil.copytree(source, target)


def _items(report: EvalReport, spec: SampleSpec) -> dict[str, Any]:
    """The per-item scores of the sample's own scope (not the given traits'), for pooling."""
    asked = {p.key for p in spec.problems}
    items: dict[str, Any] = {"filtering": {}, "selection": {}, "preprocessing": {}, "analysis": {}}
    for score in report.filtering or ():
        if score.trait == spec.trait:
            items["filtering"][score.trait] = {"f1": score.f1, "accuracy": score.accuracy}
    for chosen in report.selection or ():
        if chosen.problem.trait == spec.trait:
            items["selection"][chosen.problem.key] = chosen.accuracy
    for subtask, scores in (report.preprocessing or {}).items():
        items["preprocessing"][subtask] = {
            s.file: s.composite_similarity_correlation
            for s in scores or ()
            if s.trait == spec.trait
        }
    for answer in report.analysis or ():
        if answer.problem.key in asked:
            items["analysis"][answer.problem.key] = {m: answer.value(m) for m in ANALYSIS_METRICS}
    return items


_PREPROCESS_VALUES = (
    ("filtering_f1", "filtering", "f1"),
    ("selection_accuracy", "selection", ""),
    ("csc_linked", "preprocessing.linked", ""),
    ("csc_gene", "preprocessing.gene", ""),
    ("csc_clinical", "preprocessing.clinical", ""),
)
_ANALYSIS_VALUES = tuple((m, "analysis", m) for m in ANALYSIS_METRICS)
#: The numbers of `Score.value`, by task: (name, section, metric) pooled over items.
VALUE_METRICS: dict[TaskName, tuple[tuple[str, str, str], ...]] = {
    "preprocess": _PREPROCESS_VALUES,
    "analysis": _ANALYSIS_VALUES,
    "e2e": _ANALYSIS_VALUES + _PREPROCESS_VALUES,
}


def _values(items: Mapping[str, Any], section: str, metric: str) -> list[float]:
    node: Any = items
    for part in section.split("."):
        node = node.get(part, {}) if isinstance(node, Mapping) else {}
    values = node.values() if isinstance(node, Mapping) else []
    return [float(v[metric] if metric else v) for v in values if v is not None]


def pooled_average(all_items: Iterable[Mapping[str, Any]], section: str, metric: str) -> float:
    """The paper's average over every item of every sample (not a mean of per-sample means)."""
    pooled: list[float] = []
    for items in all_items:
        pooled.extend(_values(items, section, metric))
    return nanmean(pooled)


def score_output(
    bench: Benchmark, spec: SampleSpec, output: Path, *, exact: bool = False
) -> dict[str, Any]:
    """Score an agent's `output/` (already on the host) with genotex's evaluation.

    Returns the sample's values (`VALUE_METRICS`), its items (for pooling) and
    the findings. The given traits' reference data are put beside the agent's
    preprocessing (`add_given`), so that a two-step problem's selection sees its
    condition's cohorts.
    """
    with tempfile.TemporaryDirectory(prefix="genotex-score-") as scratch:
        pred = Path(scratch) / "pred"
        shutil.copytree(output, pred, symlinks=True) if output.is_dir() else pred.mkdir()
        add_given(pred, bench.reference, [t for t in spec.given if t != spec.trait])
        ref = link_slice(
            bench.reference, [spec.trait], Path(scratch) / "ref", also_preprocess=spec.given
        )
        report = evaluate(
            pred,
            ref,
            bench.task_info.restricted_to([spec.trait]),
            options=EvalOptions(tasks=EVAL_TASKS[spec.task], exact=exact),
        )
    items = _items(report, spec)
    values = {name: pooled_average([items], s, m) for name, s, m in VALUE_METRICS[spec.task]}
    others = [f"/{t}/" for t in spec.given if t != spec.trait]
    findings = [
        {"file": f.file, "reason": f.reason}
        for f in report.findings
        if not any(other in f"/{f.file}" for other in others)
    ]
    return {"values": values, "items": items, "findings": findings}


def merge_outputs(outputs: Iterable[Path], into: Path) -> Path:
    """Merge samples' `output/` trees into one (a later sample's file never overwrites one)."""
    into.mkdir(parents=True, exist_ok=True)
    for output in outputs:
        for path in sorted(output.rglob("*")):
            if path.is_file() and not path.is_symlink():
                relative = path.relative_to(output)
                target = output_path(into, *relative.parts)
                if not target.exists():
                    target.parent.mkdir(parents=True, exist_ok=True)
                    shutil.copyfile(path, target)
    return into

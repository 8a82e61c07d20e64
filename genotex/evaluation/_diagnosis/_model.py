"""What `genotex diagnose` found: error classes with evidence, each problem's lost points by stage.

A problem's F1 loss is split by substitution into four shares that add up to it
exactly (100 - F1 of the agent's answer):

- ``floor``: how far the pipeline that made the substitutes is from the reference
  answer on the reference's own data and cohorts (0 for the reference mode on one
  BLAS thread; the standard mode is another analysis);
- ``selection``: the reference's data of the reference's cohorts vs the
  reference's data of the agent's cohorts (cohort filtering and selection);
- ``preprocessing``: the reference's data vs the agent's data, same cohorts;
- ``analysis``: the pipeline on the agent's own data vs the agent's answer.

A share is negative when the agent's stage did better than the substitute.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ...core import GenotexError, ProblemId, read_json

__all__ = [
    "ERROR_CLASSES",
    "REFERENCE_CAUSES",
    "STAGES",
    "Diagnosis",
    "DiagnosisError",
    "DiagnosisFinding",
    "ProblemDiagnosis",
    "StageAverage",
    "load_diagnosis",
]

#: The stages a lost point is attributed to, in the order the pipeline runs them backwards.
STAGES: tuple[str, ...] = ("floor", "selection", "preprocessing", "analysis")

#: Every error class, its stage and what it means (stable names: tools count them).
ERROR_CLASSES: dict[str, tuple[str, str]] = {
    "trait_inverted": ("preprocessing", "the trait is the reference's 1 - y"),
    "trait_constant": ("preprocessing", "the trait has one value where the reference has two"),
    "trait_row_wrong": ("preprocessing", "the trait matches another characteristics row"),
    "trait_mismatch": ("preprocessing", "the trait disagrees with the reference's, unexplained"),
    "age_unit": ("preprocessing", "Age in months or days, or binarised"),
    "feature_all_missing": (
        "preprocessing",
        "the trait, Age or Gender with no value where the reference's has values (the CSC "
        "metric, as published, does not see it)",
    ),
    "feature_constant": ("preprocessing", "Age or Gender one value where the reference's vary"),
    "gender_inverted": ("preprocessing", "Gender is the reference's 1 - g"),
    "samples_misaligned": ("preprocessing", "linked rows do not match the clinical columns"),
    "samples_dropped": ("preprocessing", "samples of the reference are missing"),
    "gene_ids_not_symbols": ("preprocessing", "probe, Entrez or Ensembl IDs left as genes"),
    "symbols_not_normalized": ("preprocessing", "synonyms, case or spreadsheet dates"),
    "values_transformed": ("preprocessing", "log vs linear, z-scored, rescaled or duplicated"),
    "table_unreadable": ("preprocessing", "a table the evaluator cannot read"),
    "data_differ": ("preprocessing", "the data differ in a way no class above names"),
    "cohort_usability": ("selection", "a cohort marked usable or not against the reference"),
    "selection": ("selection", "another cohort or pair than the reference's"),
    "analysis": ("analysis", "the genes differ although the data match"),
    "floor": ("floor", "the substitutes' pipeline alone is this far from the reference"),
    "reference_at_chance": (
        "floor",
        "the reference answer's own fit is at chance (CV accuracy under 60%): its genes are no "
        "better than a draw, and only the published pipeline run exactly reproduces them",
    ),
    "reference_order_dependent": (
        "floor",
        "the reference answer's genes change with the order of its table's gene columns",
    ),
}

#: The classes that name what makes the reference's own answer a poor key: when a problem
#: has one, it is that problem's cause, whichever stage's share is largest.
REFERENCE_CAUSES: tuple[str, ...] = ("reference_at_chance", "reference_order_dependent")


class DiagnosisError(GenotexError, ValueError):
    """A saved diagnosis that cannot be read (not one `genotex diagnose` wrote)."""


@dataclass(frozen=True)
class DiagnosisFinding:
    """One error of one class at one file, with the numbers that show it.

    `cohort` is the cohort ID (None for a problem's finding), `problem` the problem
    key (None for a cohort's finding); `numbers` holds the evidence as numbers.
    """

    error_class: str
    file: str
    message: str
    trait: str
    cohort: str | None = None
    problem: str | None = None
    numbers: Mapping[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.error_class not in ERROR_CLASSES:
            raise DiagnosisError(f"unknown error class {self.error_class!r}")

    @property
    def stage(self) -> str:
        return ERROR_CLASSES[self.error_class][0]

    def text(self) -> str:
        return f"{self.file}: {self.message} [{self.error_class}]"

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["class"] = out.pop("error_class")
        out["numbers"] = dict(self.numbers)
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> DiagnosisFinding:
        numbers = data.get("numbers") or {}
        return cls(
            str(data["class"]),
            str(data["file"]),
            str(data["message"]),
            str(data["trait"]),
            None if data.get("cohort") is None else str(data["cohort"]),
            None if data.get("problem") is None else str(data["problem"]),
            {str(k): float(v) for k, v in numbers.items()},
        )


@dataclass(frozen=True)
class ProblemDiagnosis:
    """One problem's F1 under each substitution, its shares by stage and its top finding.

    `f1` maps "agent" (its answer), "own_data" (the pipeline on its data and
    cohorts), "ref_data" (on the reference's data of its cohorts) and
    "ref_cohorts" (on the reference's data and cohorts) to an F1 (0-100).
    """

    problem: ProblemId
    f1: Mapping[str, float]
    shares: Mapping[str, float]
    agent_cohorts: tuple[str, ...]
    reference_cohorts: tuple[str, ...]
    findings: tuple[int, ...] = ()  # positions in Diagnosis.findings
    top: int | None = None
    notes: tuple[str, ...] = ()

    @property
    def lost(self) -> float:
        return 100.0 - self.f1["agent"]

    @property
    def main_stage(self) -> str | None:
        """The stage with the largest share (None when nothing was lost)."""
        if self.lost <= 0:
            return None
        return max(STAGES, key=lambda stage: (self.shares[stage], -STAGES.index(stage)))

    def to_dict(self) -> dict[str, Any]:
        return {
            "problem": self.problem.key,
            "category": self.problem.category,
            "f1": dict(self.f1),
            "shares": dict(self.shares),
            "agent_cohorts": list(self.agent_cohorts),
            "reference_cohorts": list(self.reference_cohorts),
            "findings": list(self.findings),
            "top": self.top,
            "notes": list(self.notes),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ProblemDiagnosis:
        return cls(
            ProblemId.from_key(str(data["problem"])),
            {str(k): float(v) for k, v in data["f1"].items()},
            {stage: float(data["shares"][stage]) for stage in STAGES},
            tuple(str(c) for c in data["agent_cohorts"]),
            tuple(str(c) for c in data["reference_cohorts"]),
            tuple(int(i) for i in data.get("findings", ())),
            None if data.get("top") is None else int(data["top"]),
            tuple(str(n) for n in data.get("notes", ())),
        )


@dataclass(frozen=True)
class StageAverage:
    """A stage's mean share of the F1 loss over a category's problems, with its interval."""

    category: str
    stage: str
    mean: float
    low: float | None
    high: float | None
    n: int


@dataclass(frozen=True)
class Diagnosis:
    """Everything `genotex diagnose` found in one run.

    `problems` holds every scored problem (those that lost nothing have zero
    shares), `findings` every error found, `averages` each stage's mean share per
    category (and "Overall"), `run` how the substitutes were made.
    """

    problems: tuple[ProblemDiagnosis, ...]
    findings: tuple[DiagnosisFinding, ...]
    averages: tuple[StageAverage, ...] = ()
    run: Mapping[str, Any] = field(default_factory=dict)

    def __repr__(self) -> str:
        lost = sum(1 for p in self.problems if p.lost > 0)
        return (
            f"Diagnosis({len(self.problems)} problems, {lost} lost points, "
            f"{len(self.findings)} findings, mode {self.run.get('mode', '?')})"
        )

    def _repr_html_(self) -> str:
        from ...core import notebook_table

        lost = [p for p in self.problems if p.lost > 0]
        rows = [("error classes", ", ".join(f"{k} {v}" for k, v in self.class_counts().items()))]
        rows += [(p.problem.key, f"F1 {p.f1['agent']:.1f}, {p.main_stage}") for p in lost]
        return notebook_table(repr(self), rows)

    def class_counts(self) -> dict[str, int]:
        """How many findings of each class (classes found only, in `ERROR_CLASSES` order)."""
        counts = dict.fromkeys(ERROR_CLASSES, 0)
        for finding in self.findings:
            counts[finding.error_class] += 1
        return {name: n for name, n in counts.items() if n}

    def findings_of(self, problem: ProblemDiagnosis) -> list[DiagnosisFinding]:
        return [self.findings[i] for i in problem.findings]

    def to_dict(self) -> dict[str, Any]:
        return {
            "run": dict(self.run),
            "classes": self.class_counts(),
            "averages": [asdict(a) for a in self.averages],
            "problems": [p.to_dict() for p in self.problems],
            "findings": [f.to_dict() for f in self.findings],
        }

    @classmethod
    def from_dict(cls, data: object) -> Diagnosis:
        """Read a diagnosis back; `DiagnosisError` names what is wrong with it."""
        if not isinstance(data, Mapping):
            raise DiagnosisError("a diagnosis is a JSON object")
        try:
            findings = tuple(DiagnosisFinding.from_dict(f) for f in _list(data, "findings"))
            problems = tuple(ProblemDiagnosis.from_dict(p) for p in _list(data, "problems"))
            averages = tuple(StageAverage(**a) for a in _list(data, "averages"))
        except DiagnosisError:
            raise
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise DiagnosisError(f"a diagnosis entry is malformed ({exc!s:.120})") from None
        for problem in problems:
            if any(not 0 <= i < len(findings) for i in problem.findings):
                raise DiagnosisError(f"{problem.problem.key} points at a finding that is absent")
        run = data.get("run", {})
        return cls(problems, findings, averages, dict(run) if isinstance(run, Mapping) else {})


def _list(data: Mapping[str, Any], key: str) -> Sequence[Any]:
    value = data.get(key, [])
    if not isinstance(value, list):
        raise DiagnosisError(f"the diagnosis' {key!r} is not a list")
    return value


def load_diagnosis(path: str | Path) -> Diagnosis:
    """Read a saved diagnosis: `genotex diagnose --json`'s file, or an eval report holding one.

    Any fault is a `DiagnosisError` naming the file, in one sentence.
    """
    path = Path(path)
    if not path.is_file():
        raise DiagnosisError("the diagnosis does not exist or is not a file", path=path)
    try:
        data = read_json(path, DiagnosisError)
    except DiagnosisError as exc:
        raise DiagnosisError(f"is not a saved diagnosis ({exc.reason})", path=path) from None
    if isinstance(data, Mapping) and "diagnosis" in data:
        data = data["diagnosis"]
    try:
        return Diagnosis.from_dict(data)
    except DiagnosisError as exc:
        raise DiagnosisError(f"is not a saved diagnosis ({exc.reason})", path=path) from None

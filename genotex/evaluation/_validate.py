"""A submission checked against the output contract before it is scored (`genotex validate`).

A misnamed file scores 0 with no word from the evaluator: it is simply not the file the
problem asks for. `validate_submission` names each answer that is missing, misnamed (with
the expected name closest to it), malformed (why) or extra, and each preprocessing file
that cannot be read, so a researcher fixes the names before publishing a number.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..core import (
    CohortInfo,
    GenotexError,
    ProblemId,
    ResultFile,
    TaskInfo,
    closest_name,
    read_json,
    read_table,
    regress_file_name,
)

__all__ = ["SubmissionCheck", "SubmissionFinding", "validate_submission"]

#: What a finding can say of a file.
KINDS = ("missing", "misnamed", "malformed", "extra")


@dataclass(frozen=True)
class SubmissionFinding:
    """One file that does not keep the contract: its path under the output folder, what is
    wrong (`KINDS`), and the sentence that says it.
    """

    path: str
    kind: str
    message: str


@dataclass(frozen=True)
class SubmissionCheck:
    """Every finding, and how many files were checked."""

    findings: tuple[SubmissionFinding, ...]
    checked: int

    @property
    def ok(self) -> bool:
        """Whether the submission keeps the contract."""
        return not self.findings

    def counts(self) -> dict[str, int]:
        """How many findings of each kind (the kinds found, in `KINDS` order)."""
        found = {kind: sum(f.kind == kind for f in self.findings) for kind in KINDS}
        return {kind: n for kind, n in found.items() if n}

    def summary(self) -> str:
        """One line: how many files were checked and what was found."""
        if self.ok:
            return f"{self.checked} files checked: the submission keeps the output contract"
        said = ", ".join(f"{n} {kind}" for kind, n in self.counts().items())
        return f"{self.checked} files checked: {said}"


def _expected(task_info: TaskInfo, reference: Path | None) -> list[str]:
    """The answer files the problems ask for (those the reference answers, when given)."""
    paths = []
    for problem in task_info.problems():
        path = f"regress/{problem.trait}/{regress_file_name(problem.condition)}"
        if reference is None or (reference / path).is_file():
            paths.append(path)
    return paths


def _answers(pred: Path, expected: list[str]) -> tuple[list[SubmissionFinding], int]:
    findings, checked, matched = [], 0, set()
    for file in sorted((pred / "regress").rglob("*")) if (pred / "regress").is_dir() else []:
        if not file.is_file() or file.name == "status.json":
            continue
        path, checked = file.relative_to(pred).as_posix(), checked + 1
        if path not in expected:
            close = closest_name(
                path, [e for e in expected if not (pred / e).is_file()], cutoff=0.85
            )
            if close is not None:
                matched.add(close)
                findings.append(SubmissionFinding(path, "misnamed", f"{path}: misnamed; "
                                                  f"the problem's file is {close}"))  # fmt: skip
            else:
                findings.append(SubmissionFinding(path, "extra", f"{path}: no problem asks for "
                                                  "this file (extra)"))  # fmt: skip
            continue
        try:
            ResultFile.read(file)
        except GenotexError as exc:
            findings.append(SubmissionFinding(path, "malformed", f"{path}: {exc.reason}"))
    for path in expected:
        if path not in matched and not (pred / path).is_file():
            problem = ProblemId.from_key(path.split("/")[1] + "|" + path.rsplit("_", 1)[1][:-5])
            findings.append(SubmissionFinding(path, "missing", f"{path}: missing (the answer "
                                              f"to {problem.key})"))  # fmt: skip
    return findings, checked


def _preprocessed(
    pred: Path, task_info: TaskInfo, read_tables: bool
) -> tuple[list[SubmissionFinding], int]:
    findings, checked = [], 0
    root = pred / "preprocess"
    traits = list(task_info.traits)
    for folder in sorted(p for p in root.iterdir() if p.is_dir()) if root.is_dir() else []:
        if folder.name not in traits:
            close = closest_name(folder.name, traits, cutoff=0.85)
            said = f"misnamed; the trait's folder is preprocess/{close}" if close else "extra"
            kind = "misnamed" if close else "extra"
            findings.append(SubmissionFinding(f"preprocess/{folder.name}", kind,
                                              f"preprocess/{folder.name}/: {said}"))  # fmt: skip
            continue
        if not read_tables:
            continue
        for file in sorted(folder.rglob("*")):
            path = file.relative_to(pred).as_posix()
            try:
                if file.name == "cohort_info.json":
                    _, problems = CohortInfo.from_dict(read_json(file))
                    findings += [SubmissionFinding(path, "malformed", f"{path}: {reason}")
                                 for reason in problems]  # fmt: skip
                elif file.suffix == ".csv" and file.is_file():
                    read_table(file, features_are_rows="_data" in path)
                else:
                    continue
            except GenotexError as exc:
                findings.append(SubmissionFinding(path, "malformed", f"{path}: {exc.reason}"))
            checked += 1
    return findings, checked


def validate_submission(
    pred_dir: str | Path,
    task_info: TaskInfo | str | Path,
    ref_dir: str | Path | None = None,
    *,
    read_tables: bool = True,
) -> SubmissionCheck:
    """Check an output folder against the contract and the task's problems, before scoring.

    Parameters
    ----------
    pred_dir
        The prediction's `output/` folder.
    task_info
        The benchmark's `task_info.json` (or a `TaskInfo`): the problems asked.
    ref_dir
        The reference `output/` folder: then only the problems it answers are expected.
    read_tables
        Also parse every preprocessing CSV and record. `genotex eval`, which has just
        read them and said what is wrong in them, turns it off and asks only about names.

    Returns
    -------
    SubmissionCheck
        Each missing, misnamed (with the expected name), malformed (why) or extra file.
    """
    pred = Path(pred_dir)
    if not pred.is_dir():
        raise GenotexError("the prediction folder does not exist", path=pred)
    info = task_info if isinstance(task_info, TaskInfo) else TaskInfo.read(task_info)
    expected = _expected(info, None if ref_dir is None else Path(ref_dir))
    answers, answered = _answers(pred, expected)
    tables, read = _preprocessed(pred, info, read_tables)
    return SubmissionCheck(tuple(answers + tables), answered + read)

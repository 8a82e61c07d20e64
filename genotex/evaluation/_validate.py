"""A submission checked against the output contract before it is scored (`genotex validate`).

A misnamed file scores 0 with no word from the evaluator: it is simply not the file the
problem asks for. `validate_submission` names each answer that is missing, misnamed (with
the expected name closest to it), malformed (why) or extra, and each preprocessing file
that cannot be read, so a researcher fixes the names before publishing a number.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from ..core import (
    CohortInfo,
    GenotexError,
    ProblemId,
    ResultFile,
    TaskInfo,
    closest_name,
    printable,
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


def _expected(task_info: TaskInfo, reference: Path | None) -> dict[str, dict[str, ProblemId]]:
    """The answer files the problems ask for (those the reference answers, when given), by
    trait folder: file name -> its problem. Indexed once: every check after is a lookup.
    """
    answered = _listed(reference / "regress") if reference is not None else None
    expected: dict[str, dict[str, ProblemId]] = {}
    for problem in task_info.problems():
        name = regress_file_name(problem.condition)
        if answered is None or f"{problem.trait}/{name}" in answered:
            expected.setdefault(problem.trait, {})[name] = problem
    return expected


def _listed(folder: Path) -> dict[str, Path]:
    """Every entry two levels under `folder` (`<trait>/<file>` -> its path), listed once, no
    link followed; empty when there is no such folder.
    """
    found: dict[str, Path] = {}
    try:
        traits = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError:
        return found
    for trait in traits:
        if trait.is_dir(follow_symlinks=False):
            try:
                names = sorted(os.scandir(trait.path), key=lambda e: e.name)
            except OSError:
                continue
            found |= {f"{trait.name}/{entry.name}": Path(entry.path) for entry in names}
    return found


def _answers(
    pred: Path, expected: dict[str, dict[str, ProblemId]]
) -> tuple[list[SubmissionFinding], int]:
    """Each answer file checked by one lookup in the index: kept, misnamed (the closest
    expected name of its own trait folder, or of the closest trait folder), extra or
    malformed; then each expected answer no file gave, missing, named by its problem.
    """
    findings, checked, matched = [], 0, set()
    present = _listed(pred / "regress")
    traits = list(expected)
    for key, file in present.items():
        trait, name = key.split("/", 1)
        if name == "status.json" or file.is_dir():
            continue
        path, checked = f"regress/{key}", checked + 1
        if name in expected.get(trait, {}):
            findings += _malformed_answer(path, file)
            continue
        close = _closest_answer(trait, name, expected, present, traits)
        if close is not None:
            matched.add(close)
            said = f"{_shown(path)}: misnamed; the problem's file is regress/{_shown(close)}"
            findings.append(SubmissionFinding(path, "misnamed", said))
        else:
            findings.append(SubmissionFinding(path, "extra", f"{_shown(path)}: no problem asks "
                                              "for this file (extra)"))  # fmt: skip
    for trait, names in expected.items():
        for name, problem in names.items():
            key = f"{trait}/{name}"
            if key not in matched and key not in present:
                findings.append(SubmissionFinding(f"regress/{key}", "missing",
                                                  f"regress/{_shown(key)}: missing (the answer "
                                                  f"to {_shown(problem.key)})"))  # fmt: skip
    return findings, checked


def _closest_answer(
    trait: str,
    name: str,
    expected: dict[str, dict[str, ProblemId]],
    present: dict[str, Path],
    traits: list[str],
) -> str | None:
    """The expected answer (`<trait>/<file>`) a misnamed file stands for: the closest missing
    name of its trait folder, or of the trait folder closest to its own; None for neither.
    """
    folder = trait if trait in expected else closest_name(trait, traits, cutoff=0.85)
    if folder is None:
        return None
    missing = [n for n in expected[folder] if f"{folder}/{n}" not in present]
    close = closest_name(name, missing, cutoff=0.85) if folder == trait else (
        name if name in missing else closest_name(name, missing, cutoff=0.85))  # fmt: skip
    return None if close is None else f"{folder}/{close}"


def _malformed_answer(path: str, file: Path) -> list[SubmissionFinding]:
    try:
        ResultFile.read(file)
    except GenotexError as exc:
        return [SubmissionFinding(path, "malformed", f"{_shown(path)}: {exc.reason}")]
    return []


def _shown(text: str) -> str:
    """A name as a line shows it: its control, bidi and line-separator characters escaped."""
    return printable(text)


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
            shown = f"preprocess/{_shown(folder.name)}/: {said}"
            findings.append(SubmissionFinding(f"preprocess/{folder.name}", kind, shown))
            continue
        if not read_tables:
            continue
        for file in sorted(folder.rglob("*")):
            path = file.relative_to(pred).as_posix()
            try:
                if file.is_symlink() or not (file.is_file() or file.is_dir()):
                    if file.name == "cohort_info.json" or file.suffix == ".csv":
                        raise GenotexError("is not a regular file (a FIFO, a device or a link)")
                    continue
                if file.name == "cohort_info.json":
                    _, problems = CohortInfo.from_dict(read_json(file))
                    findings += [SubmissionFinding(path, "malformed", f"{_shown(path)}: {reason}")
                                 for reason in problems]  # fmt: skip
                elif file.suffix == ".csv" and file.is_file():
                    read_table(file, features_are_rows="_data" in path)
                else:
                    continue
            except GenotexError as exc:
                findings.append(SubmissionFinding(path, "malformed",
                                                  f"{_shown(path)}: {exc.reason}"))  # fmt: skip
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
    if ref_dir is not None and not Path(ref_dir).is_dir():
        raise GenotexError("the reference folder does not exist", path=Path(ref_dir))
    info = task_info if isinstance(task_info, TaskInfo) else TaskInfo.read(task_info)
    expected = _expected(info, None if ref_dir is None else Path(ref_dir))
    answers, answered = _answers(pred, expected)
    tables, read = _preprocessed(pred, info, read_tables)
    return SubmissionCheck(tuple(answers + tables), answered + read)

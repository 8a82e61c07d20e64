"""What an answer read, by digest: recorded in its result so that a re-run keeps it only while
the inputs are unchanged (`why_redo`).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path

from ..core import ProblemId, TaskInfo, file_sha256

__all__ = ["input_digests", "known_digest"]


def known_digest(task_info: TaskInfo, trait: str) -> str:
    text = json.dumps(list(task_info.genes_of(trait)), separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def input_digests(
    data_dir: str | Path, problem: ProblemId, cohorts: Sequence[str], task_info: TaskInfo
) -> dict[str, str]:
    """The sha256 of every input an answer read: each trait's `cohort_info.json` (which
    chose the cohorts), the linked tables used, and the known genes of the traits.
    """
    root = Path(data_dir)
    traits = [problem.trait]
    if problem.condition not in (None, "Age", "Gender") and len(cohorts) > 1:
        traits.append(str(problem.condition))
    digests = {}
    for index, trait in enumerate(traits):
        info = root / trait / "cohort_info.json"
        if info.is_file():
            digests[f"{trait}/cohort_info.json"] = file_sha256(info)
        if index < len(cohorts):
            table = root / trait / f"{cohorts[index]}.csv"
            if table.is_file():
                digests[f"{trait}/{cohorts[index]}.csv"] = file_sha256(table)
        digests[f"known genes of {trait}"] = known_digest(task_info, trait)
    return digests

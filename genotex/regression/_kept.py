"""When a result an earlier run wrote may be kept: only when it was made as this run would
make it.

A result records how it was made (its `method`: the mode, the model, the α rule) and from
what (its `inputs`: the sha256 of each file the answer read, the cohorts' records and linked
tables, and of the trait's known genes). A re-run keeps it only when every one of these
matches what it would use now; otherwise it computes the problem again, and says why. What
cannot change an answer (the scheduler, the cache, the number of jobs) never causes a redo.
"""

from __future__ import annotations

from pathlib import Path

from ..core import MalformedResult, Mode, ProblemId, ResultFile, SelectBy, TaskInfo, file_sha256
from ._inputs import known_digest
from ._pipeline import result_path

__all__ = ["is_done", "why_redo"]


def _changed(recorded: dict, data_dir: Path, task_info: TaskInfo) -> str | None:
    """The first recorded input that differs now (or is gone), or None."""
    for name, digest in recorded.items():
        if name.startswith("known genes of "):
            now = known_digest(task_info, name.removeprefix("known genes of "))
        else:
            path = data_dir / name
            now = file_sha256(path) if path.is_file() else "gone"
        if now != digest:
            return name
    return None


def why_redo(
    out_dir: str | Path,
    problem: ProblemId,
    *,
    mode: Mode,
    model: str = "auto",
    select_by: SelectBy | None = None,
    data_dir: str | Path | None = None,
    task_info: TaskInfo | None = None,
) -> str | None:
    """Why a problem must be computed again, in a few words; None when its result may be kept.

    `select_by`, and `data_dir` with `task_info`, are compared only when given.
    """
    try:
        result = ResultFile.read(result_path(out_dir, problem))
    except MalformedResult:
        return "no complete result"
    method = result.method
    made_in = "reference" if method is None else method.mode
    if not result.complete:
        return "no complete result"
    if made_in != mode:
        return f"made in the {made_in} mode"
    if model != "auto":
        made_with = "" if method is None else method.model
        if made_with.lower().startswith("lmm") != (model == "lmm"):
            return f"made with {made_with or 'another model'}"
    if select_by is not None and mode == "standard" and method is not None:
        if method.select_by != select_by:
            return f"made with select_by {method.select_by}"
    recorded = result.extra.get("inputs")
    if data_dir is not None and task_info is not None:
        if not isinstance(recorded, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in recorded.items()
        ):
            return "its inputs are not recorded (written before 0.12)"
        changed = _changed(recorded, Path(data_dir), task_info)
        if changed is not None:
            return f"{changed} changed since"
    return None


def is_done(
    out_dir: str | Path, problem: ProblemId, mode: Mode = "reference", model: str = "auto"
) -> bool:
    """Whether a problem's result exists, is complete and was made in `mode` with `model`
    (`why_redo` also compares the α rule and the inputs, as `run_problems` does).

    It must score in evaluation (`ResultFile`'s rule) and also hold what
    `genotex regress` writes (coefficients and `cv_performance`): regress never
    skips a file that evaluation would score as malformed.
    """
    return why_redo(out_dir, problem, mode=mode, model=model) is None

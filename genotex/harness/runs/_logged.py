"""A genotex log read as untrusted: its run, its reference, its samples and their outputs.

Every name is checked against the log's own plan (the samples its task_info
gives for its task and traits), every epoch is bounded, every stored output
tree is inflated within bounds and checked against its sha256s; a reference is
accepted only if its scored files are those the log records, byte for byte.
Nothing here reads a path the log names.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...core import GenotexError, TaskInfo, TaskInfoError, UnsafeNameError, check_safe_name
from ._bench import (
    TASKS,
    ConditionSetting,
    SampleSpec,
    plan_samples,
    reference_manifest,
    reference_slice,
)
from ._capture import STORE_KEY, CapturedOutput, unpack_output
from ._log_members import check_members

__all__ = ["MAX_EPOCHS", "LoggedRun", "LoggedSample", "check_reference", "logged_run", "read_log"]

#: Epochs a log may hold (a forged count cannot make export loop).
MAX_EPOCHS = 1000


def _refuse(reason: str, log: str | Path) -> GenotexError:
    return GenotexError(reason, path=log)


#: What a log's member (or a `.json` log) may hold beyond the output trees it carries.
LOG_OVERHEAD_BYTES = 256 * 1024 * 1024


def refuse_irregular(log_path: str | Path) -> None:
    """Refuse, without opening it, a log that is not a regular file (a FIFO was read
    forever, a device without end), links followed.
    """
    import stat

    try:
        mode = os.stat(log_path).st_mode
    except OSError as exc:
        raise _refuse(f"cannot be read ({exc.strerror})", log_path) from None
    if not stat.S_ISREG(mode):
        kind = (
            "a folder"
            if stat.S_ISDIR(mode)
            else "a FIFO"
            if stat.S_ISFIFO(mode)
            else ("not a regular file")
        )
        raise _refuse(f"is {kind}, not an Inspect log file", log_path)


def check_log_size(log_path: str | Path, max_bytes: int) -> None:
    """Refuse, before it is read, a log whose members would inflate past `max_bytes` each
    (an `.eval` is a zip, each member measured by inflating it, its declared sizes trusted
    by nothing: `check_members`), or a `.json` log larger than that.
    """
    import zipfile

    path = Path(log_path)
    refuse_irregular(path)
    try:
        if zipfile.is_zipfile(path):
            check_members(path, max_bytes)
        elif path.is_file() and path.stat().st_size > max_bytes:
            raise _refuse(
                f"holds {path.stat().st_size:,} bytes, more than the {max_bytes:,} allowed "
                "(the largest output tree allowed, and its messages)",
                log_path,
            )
    except (OSError, zipfile.BadZipFile) as exc:
        reason = getattr(exc, "strerror", None) or str(exc)[:200]
        raise _refuse(f"is not a readable Inspect log ({reason})", log_path) from None


def read_log(log_path: str | Path, max_bytes: int | None = None) -> Any:
    """An Inspect log (`.eval` or `.json`); anything unreadable is one sentence. With
    `max_bytes`, a member that would inflate past it is refused before anything is read.
    """
    from inspect_ai.log import read_eval_log

    refuse_irregular(log_path)
    if max_bytes is not None:
        check_log_size(log_path, max_bytes)
    try:
        return read_eval_log(str(log_path))
    except Exception as exc:  # noqa: BLE001 - any unreadable log is one sentence
        reason = str(exc).splitlines()[0][:200] if str(exc) else exc.__class__.__name__
        raise _refuse(f"is not a readable Inspect log ({reason})", log_path) from None


@dataclass(frozen=True)
class LoggedRun:
    """What a genotex log says of its run, checked: task, task_info, traits, reference."""

    task: str
    task_info: TaskInfo
    specs: Mapping[str, SampleSpec]
    reference: Mapping[str, Any]
    metadata: Mapping[str, Any]
    source: str | Path  # the log's path, as the user gave it (for messages)

    @property
    def benchmark(self) -> dict[str, Any] | None:
        """The benchmark marker's summary the log records (`genotex download benchmark`'s, at
        the run's root), its fields checked: text fields cut, a count a whole number.
        """
        found = self.metadata.get("benchmark")
        if not isinstance(found, dict):
            return None
        keys = ("repo", "revision", "commit", "digest")
        kept: dict[str, Any] = {k: found[k][:200] for k in keys if isinstance(found.get(k), str)}
        if isinstance(found.get("files"), int) and not isinstance(found.get("files"), bool):
            kept["files"] = found["files"]
        return kept or None


def logged_run(log: Any, log_path: str | Path) -> LoggedRun:
    """The run a genotex log records, checked: a genotex task, a valid task_info, traits it
    holds, samples it plans, and a reference manifest.
    """
    metadata = log.eval.metadata or {}
    task = metadata.get("genotex_task")
    if task not in TASKS:
        raise _refuse("is not the log of a genotex task", log_path)
    recorded = metadata.get("reference")
    if not isinstance(recorded, dict) or not isinstance(recorded.get("files"), dict):
        raise _refuse(
            "records no reference digest (it was made by genotex before 0.4, whose logs "
            "do not hold their outputs); run the task again",
            log_path,
        )
    try:
        info = TaskInfo.from_dict(metadata.get("task_info"), source=f"{log_path} (task_info)")
        traits = metadata.get("traits")
        if not isinstance(traits, list) or not all(isinstance(t, str) for t in traits):
            raise _refuse("records no list of the run's traits", log_path)
        for trait in traits:
            check_safe_name(trait, what="trait name")
            if trait not in info.related_genes:
                raise _refuse(f"names the trait {trait!r}, which its task_info lacks", log_path)
        arguments = metadata.get("arguments")
        setting = arguments.get("conditions") if isinstance(arguments, dict) else None
        # a log made before 0.10.0 records no setting: those gave the conditions' data
        conditions: ConditionSetting = "raw" if setting == "raw" else "given"
        planned = {s.id: s for s in plan_samples(info, task, traits, conditions=conditions)}
        listed = metadata.get("samples")
        if not isinstance(listed, list) or not all(isinstance(i, str) for i in listed):
            raise _refuse("records no list of the run's samples", log_path)
        unknown = [i for i in listed if i not in planned]
        if unknown:
            raise _refuse(
                f"lists a sample {unknown[0][:200]!r} its task_info does not plan", log_path
            )
        specs = {i: planned[i] for i in listed}
    except (TaskInfoError, UnsafeNameError) as exc:
        raise _refuse(f"holds a task_info genotex refuses ({exc.reason})", log_path) from None
    return LoggedRun(task, info, specs, recorded, metadata, log_path)


def check_reference(run: LoggedRun, reference: Path, log_path: str | Path) -> None:
    """Refuse a reference that is not, file for file, the one the run was scored against."""
    if not (reference / "regress").is_dir() and not (reference / "preprocess").is_dir():
        reason = "the reference folder has neither preprocess/ nor regress/"
        raise GenotexError(reason, path=reference)
    try:
        found = reference_manifest(reference, reference_slice(reference, run.specs.values()))
    except OSError as exc:
        reason = f"the reference cannot be read ({exc.strerror or exc})"
        raise GenotexError(reason, path=reference) from None
    if found["sha256"] == run.reference.get("sha256"):
        return
    recorded = run.reference["files"]
    differing = sorted(
        set(recorded) ^ set(found["files"])
        | {f for f in set(recorded) & set(found["files"]) if recorded[f] != found["files"][f]}
    )
    example = f", e.g. {differing[0]}" if differing else ""
    raise GenotexError(
        f"is not the reference the run in {log_path} was scored against "
        f"({len(differing)} of its files differ{example}; the run's was "
        f"{str(run.reference.get('path'))[:300]!r})",
        path=reference,
    )


@dataclass(frozen=True)
class LoggedSample:
    """One sample of one epoch of the log, checked, with its output (None: it failed)."""

    spec: SampleSpec
    epoch: int
    files: Mapping[str, bytes] | None
    failure: str | None


def logged_samples(
    log: Any, run: LoggedRun, log_path: str | Path, max_bytes: int
) -> Iterator[tuple[LoggedSample, Any]]:
    """Each sample of the log, checked against the run's plan, with its output unpacked."""
    seen: set[tuple[str, int]] = set()
    for sample in log.samples or []:
        name = str(sample.id)[:200]
        spec = run.specs.get(str(sample.id))
        if spec is None:
            raise _refuse(f"has a sample {name!r} that its task_info does not plan", log_path)
        if (sample.metadata or {}).get("trait") != spec.trait:
            raise _refuse(f"says sample {name!r} is of another trait than its id", log_path)
        epoch = sample.epoch
        if not isinstance(epoch, int) or isinstance(epoch, bool) or not 1 <= epoch <= MAX_EPOCHS:
            raise _refuse(f"gives sample {name!r} the epoch {str(epoch)[:20]}", log_path)
        if (spec.id, epoch) in seen:
            raise _refuse(f"holds sample {name!r} of epoch {epoch} twice", log_path)
        seen.add((spec.id, epoch))
        score = next(iter((sample.scores or {}).values()), None)
        detail = (score.metadata or {}) if score is not None else {}
        failure = _failure_of(sample, detail)
        stored = (sample.store or {}).get(STORE_KEY)
        files: Mapping[str, bytes] | None = None
        if failure is None and stored is None:
            failure = "the log holds no output for it"
        if failure is None:
            try:
                captured: CapturedOutput = unpack_output(stored, max_bytes=max_bytes)
            except ValueError as exc:
                where = f"sample {name!r} of epoch {epoch}"
                raise _refuse(f"holds a damaged output of {where}: {exc}", log_path) from None
            recorded = (detail.get("output") or {}).get("sha256")
            if recorded != captured.sha256:
                where = f"sample {name!r} of epoch {epoch}"
                raise _refuse(f"holds an output of {where} that its score did not score", log_path)
            files = captured.files
        yield LoggedSample(spec, epoch, files, failure), sample


def _failure_of(sample: Any, detail: Mapping[str, Any]) -> str | None:
    """Why a sample failed (an error, a limit, or what its scorer said), or None."""
    if sample.error is not None:
        return f"error: {str(sample.error.message)[:300]}"
    if getattr(sample, "limit", None) is not None:
        return f"{sample.limit.type} limit: {str(sample.limit.reason or sample.limit.limit)[:300]}"
    if not sample.scores:
        return "not scored"
    failure = detail.get("failure")
    return str(failure)[:300] if failure else None

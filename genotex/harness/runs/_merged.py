"""Several logs of one model and setting over disjoint traits, exported as one run.

A team run trait by trait (`-T traits=Asthma`, then `-T traits=Obesity`) leaves one log per
trait, each recording only its traits' slice of task_info; one leaderboard row needs them
together. `merge_runs` checks that the logs can be one run (the same task, solver, models
and setting, field by field; the same benchmark and epochs; no trait in two logs) and
gives the run they make together: the union of their task_info slices and samples, and the
manifest of the reference files that score them all. Each log's own samples are still
checked against its own plan and reference digest by the export.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...core import GenotexError, TaskInfo, TaskInfoError
from ...evaluation import RunSetting, canonical_value
from ...evaluation._setting import SETTING_FIELDS
from ._bench import reference_manifest, reference_slice
from ._logged import LoggedRun

__all__ = ["LogPart", "merge_runs"]


@dataclass(frozen=True)
class LogPart:
    """One log of a merged export: its path as given, the log, its checked run, what ran
    (`what_ran`) and its setting block (`setting_and_budget`).
    """

    path: str | Path
    log: Any
    run: LoggedRun
    ran: dict[str, Any]
    setting: dict[str, Any]


def _refused(first: LogPart, other: LogPart, why: str) -> GenotexError:
    return GenotexError(
        f"cannot be exported with {first.path} as one run: {why}; one row combines logs of "
        "one model and setting over disjoint traits",
        path=other.path,
    )


def _solver_and_models(first: LogPart, other: LogPart) -> list[str]:
    """Each difference in solver, solver options and models between two logs."""
    differing = []
    for key in ("solver", "model"):
        if first.ran.get(key) != other.ran.get(key):
            said = (str(first.ran.get(key))[:200], str(other.ran.get(key))[:200])
            differing.append(f"{key} {said[0]} against {said[1]}")
    for key, label in (("solver_args", "solver option"), ("model_roles", "model role")):
        mine, theirs = first.ran.get(key) or {}, other.ran.get(key) or {}
        for name in sorted(set(mine) | set(theirs)):
            a, b = canonical_value(mine.get(name))[:200], canonical_value(theirs.get(name))[:200]
            if a != b:
                differing.append(f"{label} {name}={a} against {name}={b}")
    return differing


def _differences(first: LogPart, part: LogPart) -> list[str]:
    """Everything that keeps two logs from being one run: task, setting (each field), solver
    and models, benchmark download, epochs and their reducer.
    """
    differing = []
    if part.run.task != first.run.task:
        differing.append(f"task {first.run.task} against {part.run.task}")
    differing += [f"setting {d}" for d in _setting(first).differing(_setting(part))]
    differing += _solver_and_models(first, part)
    if part.run.benchmark != first.run.benchmark:
        differing.append("another download of the benchmark")
    config = (first.log.eval.config, part.log.eval.config)
    epochs = [getattr(c, "epochs", None) or 1 for c in config]
    if epochs[0] != epochs[1]:
        differing.append(f"{epochs[0]} epochs against {epochs[1]}")
    reducers = [canonical_value(getattr(c, "epochs_reducer", None))[:100] for c in config]
    if reducers[0] != reducers[1]:
        differing.append(f"epochs reduced by {reducers[0]} against {reducers[1]}")
    return differing


def _setting(part: LogPart) -> RunSetting:
    recorded = part.setting.get("setting") or {}
    return RunSetting(tuple((k, canonical_value(recorded.get(k))) for k in SETTING_FIELDS))


def _merged_task_info(parts: Sequence[LogPart]) -> TaskInfo:
    """The union of the logs' task_info slices; a trait two slices hold must be the same."""
    merged: dict[str, Any] = {}
    owner: dict[str, LogPart] = {}
    for part in parts:
        for trait, entry in part.run.task_info.to_dict().items():
            if trait in merged and merged[trait] != entry:
                raise _refused(owner[trait], part,
                               f"their task_info differ on trait {trait!r}")  # fmt: skip
            merged.setdefault(trait, entry)
            owner.setdefault(trait, part)
    try:
        return TaskInfo.from_dict(merged, source="the logs' task_info together")
    except TaskInfoError as exc:
        raise GenotexError(f"the logs' task_info slices do not make one ({exc.reason})") from None


def merge_runs(parts: Sequence[LogPart], reference: Path) -> LoggedRun:
    """The one run several logs make (see the module's docstring); GenotexError naming the log
    and every difference when they cannot be one.
    """
    first = parts[0]
    traits: dict[str, LogPart] = {}
    for part in parts:
        differing = _differences(first, part)
        if differing:
            raise _refused(first, part, "; ".join(differing))
        for trait in sorted({spec.trait for spec in part.run.specs.values()}):
            if trait in traits and traits[trait] is not part:
                raise _refused(traits[trait], part, f"both ran trait {trait!r}")
            traits[trait] = part
    specs = {sample: spec for part in parts for sample, spec in part.run.specs.items()}
    manifest = reference_manifest(reference, reference_slice(reference, specs.values()))
    source = " + ".join(str(part.path) for part in parts)
    return LoggedRun(first.run.task, _merged_task_info(parts), specs, manifest,
                     first.run.metadata, source)  # fmt: skip

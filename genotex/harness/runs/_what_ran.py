"""What ran, read from a genotex log as untrusted: the solver, its arguments and models, and the
setting and budget of the run (what `genotex leaderboard` and `compare` require to be the
same), for an export's `run.harness` block.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterator, Mapping
from typing import Any

from ...evaluation import NOT_AN_OPTION, canonical_value

__all__ = ["setting_and_budget", "what_ran"]


def _scalar(value: object) -> object:
    """A log's value as a report may hold it: a short scalar, else its text cut."""
    if value is None or isinstance(value, (bool, int)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    return str(value)[:200]


#: A setting's value longer than this (characters, canonical) is recorded by its digest.
_SETTING_CHARS = 1000


def _setting_value(value: object) -> object:
    """A log's setting value as the report records it, whole: a short scalar as it is, a
    list or object as its canonical JSON text, and a text longer than `_SETTING_CHARS` as
    its sha256 (equal digests, equal values), so that settings are compared whole.
    """
    if value is None or isinstance(value, (bool, int)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    text = value if isinstance(value, str) else canonical_value(value)
    if len(text) <= _SETTING_CHARS:
        return text
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
    return f"sha256:{digest} ({len(text)} characters)"


def what_ran(log: Any) -> dict[str, Any]:
    """The solver, its arguments, the model and the model of each role, from a log (read as
    untrusted: scalars only, text cut, at most 50 arguments). The arguments are those the
    run used: a sample's store records GenoAgent's options, else the log's solver arguments.
    """
    spec = log.eval
    used = next((t["options"] for _, t in _teams(log) if isinstance(t.get("options"), dict)), None)
    arguments = used if isinstance(used, dict) else (spec.solver_args or {})
    passed = spec.solver_args_passed if isinstance(spec.solver_args_passed, dict) else {}
    roles = spec.model_roles if isinstance(spec.model_roles, dict) else {}
    return {
        "solver": _scalar(spec.solver) if spec.solver else None,
        "solver_args": {str(k)[:80]: _scalar(v) for k, v in list(arguments.items())[:50]},
        "solver_args_passed": {str(k)[:80]: _scalar(v) for k, v in list(passed.items())[:50]},
        "model": _scalar(spec.model),
        "model_roles": {
            str(role)[:80]: _scalar(getattr(config, "model", config))
            for role, config in list(roles.items())[:20]
        },
    }


def setting_and_budget(
    task: str, metadata: Mapping[str, Any], log: Any, solver_args: dict[str, Any]
) -> dict[str, Any]:
    """The setting the run ran in and the budget that ran, for `run.harness` (read as
    untrusted: scalars only). The setting is the task's arguments that change what the
    agent faces and the solver's options that change its budget or means (what
    `genotex leaderboard` and `compare` require to be the same); the budget what those
    came to: the resolved time-scale factor, the seconds of a workflow, each role's factor.
    """
    arguments = metadata.get("arguments")
    arguments = arguments if isinstance(arguments, dict) else {}
    setting: dict[str, object] = {"task": task}
    for key in ("tcga", "conditions", "time_limit", "message_limit", "tools"):
        setting[key] = _setting_value(arguments.get(key))
    for key in ("library", "cohort_seconds", "time_scale"):  # the baseline has none of these
        setting[key] = _setting_value(solver_args[key]) if key in solver_args else NOT_AN_OPTION
    budget: dict[str, Any] | None = None
    for _, team in _teams(log):  # the first sample's record: the budget is the run's
        roles = team.get("role_time_scale")
        budget = {
            "time_scale_factor": _scalar(team.get("time_scale")),
            "workflow_seconds": _scalar(team.get("budget_seconds")),
            "role_time_scale": {
                str(role)[:40]: _scalar(factor) for role, factor in list(roles.items())[:20]
            } if isinstance(roles, dict) else {},
        }  # fmt: skip
        break
    return {"setting": setting, "budget": budget, "reached_pipeline": _reached(log)}


def _teams(log: Any) -> Iterator[tuple[Any, dict[str, Any]]]:
    """Each sample with the record GenoAgent kept in its store (samples without one passed)."""
    for sample in log.samples or ():
        team = (getattr(sample, "store", None) or {}).get("genoagent")
        if isinstance(team, dict):
            yield sample, team


def _reached(log: Any) -> list[str]:
    """The steps whose code reached for genotex's own pipeline (refused in the paper
    library's kernel: a GenoAgent step record's `reached_pipeline`), as "sample · workflow ·
    step"; at most 100.
    """
    found = []
    for sample, team in _teams(log):
        workflows = team.get("workflows")
        for workflow in workflows if isinstance(workflows, list) else ():
            steps = workflow.get("steps") if isinstance(workflow, dict) else None
            for step in steps if isinstance(steps, list) else ():
                if isinstance(step, dict) and step.get("reached_pipeline") is True:
                    where = (sample.id, workflow.get("workflow"), step.get("step"))
                    found.append(" · ".join(str(part)[:80] for part in where))
    return found[:100]

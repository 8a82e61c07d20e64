"""Whether an agent run's report is of an isolated agent: one that could not read the answers."""

from __future__ import annotations

from ._report import EvalReport

__all__ = ["ISOLATED_SANDBOXES", "not_isolated", "unisolated"]

#: A harness run's sandboxes that isolate the agent from the host (and so from the answers).
ISOLATED_SANDBOXES = ("bwrap", "podman", "docker")


def not_isolated(report: EvalReport) -> bool:
    """Whether a report is of an agent run whose agent could have read the answers."""
    harness = report.run.get("harness")
    return isinstance(harness, dict) and harness.get("sandbox") not in ISOLATED_SANDBOXES


def unisolated(name: str, report: EvalReport) -> str | None:
    """The warning a table of runs gives for a run that was not isolated, or None."""
    if not not_isolated(report):
        return None
    sandbox = str(report.run["harness"].get("sandbox"))[:20]
    return (
        f"{name} ran its agent in the {sandbox!r} sandbox, not isolated from the host: "
        "it could have read the reference answers"
    )

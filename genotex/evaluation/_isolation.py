"""What a harness run's report says of its agent: whether it was isolated (could not read the
answers), and what ran (solver, model, arguments), for a row's name.
"""

from __future__ import annotations

from ._report import EvalReport

__all__ = ["ISOLATED_SANDBOXES", "harness_label", "not_isolated", "reached_pipeline", "unisolated"]

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


def harness_label(report: EvalReport) -> str:
    """What ran, for a row's name (a saved report is untrusted: text cut): the solver, the
    model and the arguments passed, e.g. "genoagent · openai/o1 · review_rounds=1"; empty
    for a run with no model (gold, baseline) or no harness block.
    """
    harness = report.run.get("harness")
    if not isinstance(harness, dict) or not isinstance(harness.get("solver"), str):
        return ""
    model = harness.get("model")
    if not isinstance(model, str) or model in ("", "none", "none/none"):
        return ""
    passed = harness.get("solver_args_passed")
    shown = [f"{k}={v}" for k, v in (passed.items() if isinstance(passed, dict) else ())][:4]
    return " · ".join([harness["solver"][:40], model[:60], *(s[:40] for s in shown)])


def reached_pipeline(report: EvalReport) -> list[str]:
    """The steps of an agent run whose code reached for genotex's own pipeline (refused in the
    paper library's kernel), as its export records them: "sample · workflow · step", text
    cut (a saved report is untrusted).
    """
    harness = report.run.get("harness")
    found = harness.get("reached_pipeline") if isinstance(harness, dict) else None
    return [str(step)[:200] for step in found[:100]] if isinstance(found, list) else []

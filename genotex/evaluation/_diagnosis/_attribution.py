"""Stage shares of a problem's F1 loss by substitution, their averages, each problem's top finding.

With F1 of the agent's answer (A), of the pipeline on the agent's data and
cohorts (B), on the reference's data of the agent's cohorts (C) and on the
reference's data and cohorts (D), the loss 100 - A splits into

    floor = 100 - D,  selection = D - C,  preprocessing = C - B,  analysis = B - A,

which add up to it exactly, whatever the signs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ...core import CATEGORIES, ProblemId
from .._scores import OVERALL
from .._statistics import DEFAULT_BOOTSTRAP, BootstrapSettings, bootstrap_interval
from ._model import REFERENCE_CAUSES, STAGES, DiagnosisFinding, ProblemDiagnosis, StageAverage

__all__ = ["problem_diagnosis", "stage_averages", "stage_shares"]

#: A stage whose share is below this (F1 points) is not said to have lost the problem points.
MATERIAL = 0.5


def stage_shares(f1: Mapping[str, float]) -> dict[str, float]:
    """The four shares of `100 - f1["agent"]` (see the module's docstring)."""
    a, b, c, d = (f1[k] for k in ("agent", "own_data", "ref_data", "ref_cohorts"))
    return {"floor": 100.0 - d, "selection": d - c, "preprocessing": c - b, "analysis": b - a}


def _stage_findings(
    problem: ProblemId,
    findings: Sequence[DiagnosisFinding],
    agent_cohorts: Sequence[str],
    reference_cohorts: Sequence[str],
) -> dict[str, list[int]]:
    """Positions of the findings that bear on each stage of this problem."""
    traits = {problem.trait} | ({problem.condition} if problem.condition else set())
    cohorts = set(agent_cohorts)
    considered = cohorts | set(reference_cohorts)
    out: dict[str, list[int]] = {stage: [] for stage in STAGES}
    for i, finding in enumerate(findings):
        if finding.problem is not None:
            if finding.problem == problem.key:
                out[finding.stage].append(i)
            continue
        if finding.trait not in traits:
            continue
        if finding.stage == "preprocessing" and finding.cohort in cohorts:
            out["preprocessing"].append(i)
        elif finding.stage == "selection" and finding.cohort in considered:
            out["selection"].append(i)
    return out


def problem_diagnosis(
    problem: ProblemId,
    f1: Mapping[str, float],
    agent_cohorts: Sequence[str],
    reference_cohorts: Sequence[str],
    findings: Sequence[DiagnosisFinding],
    *,
    notes: Sequence[str] = (),
) -> ProblemDiagnosis:
    """The problem's shares, the findings that bear on them, and the top one.

    The top finding belongs to the stage with the largest share; it is the first
    finding of that stage (problem findings come after the cohort ones).
    """
    shares = stage_shares(f1)
    by_stage = _stage_findings(problem, findings, agent_cohorts, reference_cohorts)
    related = {i for stage in STAGES if shares[stage] >= MATERIAL for i in by_stage[stage]}
    # an analysis finding of this problem needs no share (its loss may be preprocessing's)
    related |= {
        i
        for i, f in enumerate(findings)
        if f.problem == problem.key and f.error_class == "analysis"
    }
    diagnosis = ProblemDiagnosis(
        problem,
        dict(f1),
        shares,
        tuple(agent_cohorts),
        tuple(reference_cohorts),
        tuple(sorted(related)),
        None,
        tuple(notes),
    )
    causes = [i for i, f in enumerate(findings)
              if f.problem == problem.key and f.error_class in REFERENCE_CAUSES]  # fmt: skip
    if causes and diagnosis.main_stage is not None:  # the reference's answer is the cause
        shown = tuple(sorted({*diagnosis.findings, *causes}))
        return ProblemDiagnosis(**{**diagnosis.__dict__, "findings": shown, "top": causes[0]})
    stage = diagnosis.main_stage
    if stage is not None and by_stage[stage]:
        return ProblemDiagnosis(**{**diagnosis.__dict__, "top": by_stage[stage][0]})
    return diagnosis


def stage_averages(
    problems: Sequence[ProblemDiagnosis], settings: BootstrapSettings = DEFAULT_BOOTSTRAP
) -> tuple[StageAverage, ...]:
    """Each stage's mean share per category and overall, with a percentile bootstrap interval.

    Problems that lost nothing count with zero shares, so a category's shares add
    up to 100 minus its mean F1.
    """
    out = []
    groups = [(c, [p for p in problems if p.problem.category == c]) for c in CATEGORIES]
    for category, members in [*groups, (OVERALL, list(problems))]:
        if not members:
            continue
        for stage in STAGES:
            values = [p.shares[stage] for p in members]
            interval = bootstrap_interval(values, settings)
            out.append(
                StageAverage(
                    category,
                    stage,
                    sum(values) / len(values),
                    interval.low,
                    interval.high,
                    len(values),
                )
            )
    return tuple(out)

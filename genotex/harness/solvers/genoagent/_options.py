"""How a GenoAgent team works: the options each published ablation switches off."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["TeamOptions"]


@dataclass(frozen=True)
class TeamOptions:
    """How the team works (each published ablation is one of these switched off).

    planning
        A planner call before each step chooses it (any step not yet taken, finishing, or
        going back); off, or with one choice, the steps run in their order.
    max_retract
        How many times a workflow may go back to a step already taken (the paper's 1).
    domain_expert
        The steps that need domain knowledge go to the Domain Expert, who reviews and revises
        them itself; off, the Data Engineer writes them and the Code Reviewer reviews them.
    review_rounds
        Reviews (and so revisions) a step gets at most: 0 (no reviewer), 1, or 2 (the paper's).
    batch_effect_correction
        The Statistician's model may be an LMM when cohorts differ by batch; off ("No BEC"),
        always the Lasso.
    cohort_seconds
        A cohort's (and a problem's) time budget before `time_scale`; one out of time is
        abandoned.
    time_scale
        The budget's factor: "auto" (from `time_scale.toml`, by the models that play the
        roles) or a number.
    output_chars
        The characters of a step's output the kernel keeps.
    reuse_code
        A step's writer is shown the code approved for the same step in the sample's
        earlier cohort (the successor code's reuse); off by default, as published: each
        cohort is written afresh, so a mistake is not carried across cohorts.
    library
        The function library the kernel holds: `paper` (the paper's level, the default) or
        `genotex` (genotex's one-call pipelines: an extra row, not the paper's).
    """

    planning: bool = True
    max_retract: int = 1
    domain_expert: bool = True
    review_rounds: int = 2
    batch_effect_correction: bool = True
    cohort_seconds: float = 420.0
    time_scale: float | str = "auto"
    output_chars: int = 8000
    reuse_code: bool = False
    library: str = "paper"

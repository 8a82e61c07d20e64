"""`genotex baseline`: the whole benchmark without an LLM: propose -> preprocess -> regress.

Every GEO cohort under `ROOT/input/GEO/<trait>/` gets a proposed recipe in
`ROOT/recipes/<trait>/<GSE>.toml` (marked on its first line; a recipe
without the mark is hand-written and kept as it is), then the standard
pipeline runs: `preprocess_tree` into `ROOT/output/preprocess` (TCGA as
always) and `run_problems` over every problem into `ROOT/output/regress`.
The output is a submission like any agent's: score it with `genotex eval`.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from ..core import (
    GenotexError,
    Mode,
    Outcome,
    ReferenceTargetError,
    RunStatus,
    TaskInfo,
    check_safe_name,
    output_path,
    prepare_output_folder,
    refuse_reference_target,
    write_text_atomic,
)
from ..preprocessing import Proposal, is_proposed, load_synonyms, preprocess_tree, propose_cohort
from ..regression import run_problems

__all__ = ["BaselineRun", "preprocess_and_regress", "propose_tree", "run_baseline"]

log = logging.getLogger("genotex.baseline")


@dataclass(frozen=True)
class BaselineRun:
    """What the baseline proposed, kept, preprocessed and answered, and the time of each stage."""

    root: Path
    proposed: dict[str, str]  # "<trait>/<GSE>" -> one-line summary of the proposal
    kept: list[str]  # "<trait>/<GSE>" with a hand-written recipe
    failed: dict[str, str]  # "<trait>/<GSE>" -> why no recipe could be proposed
    preprocess_status: list[tuple[str, Outcome]]
    regress: RunStatus
    seconds: dict[str, float]


def _summary(proposal: Proposal) -> str:
    parts = [f"gene data {'yes' if proposal.gene_available else 'no'}"]
    for name, choice in proposal.choices.items():
        where = "none" if choice.row is None else f"row {choice.row}"
        parts.append(f"{name} {where} ({choice.confidence:.2f})")
    return ", ".join(parts)


def propose_tree(
    input_root: str | Path, recipes: str | Path
) -> tuple[dict[str, str], list[str], dict[str, str]]:
    """Write a proposed recipe for every GEO cohort that has no hand-written one.

    Returns (proposed, kept, failed), each keyed by `<trait>/<GSE>`.
    """
    geo, recipes = Path(input_root) / "GEO", Path(recipes)
    proposed: dict[str, str] = {}
    kept: list[str] = []
    failed: dict[str, str] = {}
    if not geo.is_dir():
        return proposed, kept, failed
    for trait_dir in sorted(p for p in geo.iterdir() if p.is_dir()):
        for cohort_dir in sorted(p for p in trait_dir.iterdir() if p.is_dir()):
            # a name of bytes that are not UTF-8 is shown with them escaped (it is printed)
            key = os.fsencode(f"{trait_dir.name}/{cohort_dir.name}").decode(
                "utf-8", "backslashreplace"
            )
            try:  # safe names, written through the one guarded path (never through a link)
                check_safe_name(trait_dir.name, what="trait")
                check_safe_name(cohort_dir.name, what="cohort")
                existing = [
                    output_path(recipes, trait_dir.name, f"{cohort_dir.name}.{ext}")
                    for ext in ("toml", "json")
                ]
            except GenotexError as exc:
                failed[key] = str(exc)
                continue
            if any(p.exists() and not is_proposed(p) for p in existing):
                kept.append(key)
                continue
            try:
                proposal = propose_cohort(cohort_dir, trait_dir.name)
            except GenotexError as exc:
                failed[key] = str(exc)
                continue
            write_text_atomic(existing[0], proposal.toml())
            proposed[key] = _summary(proposal.proposal)
            log.info("proposed %s: %s", key, proposed[key])
    return proposed, kept, failed


def preprocess_and_regress(
    root: Path,
    task_info: TaskInfo,
    synonyms: Mapping[str, str],
    seconds: dict[str, float],
    *,
    jobs: int = 1,
    mode: Mode = "reference",
    out: Path | None = None,
) -> tuple[list[tuple[str, Outcome]], RunStatus]:
    """`preprocess_tree` into OUT/output/preprocess, then every problem into OUT/output/regress
    (OUT is `root` unless given; the recipes are OUT/recipes).

    The stages' times are added to `seconds`; returns each cohort's status and the run's.
    """
    out = root if out is None else out
    started = time.perf_counter()
    done = preprocess_tree(
        root / "input",
        out / "output" / "preprocess",
        synonyms,
        task_info,
        recipes=out / "recipes",
        jobs=jobs,
    )
    statuses = [(f"{job.trait}/{job.cohort}", outcome) for job, outcome in done]
    for key, outcome in statuses:
        log.info("preprocess %s: %s", key, outcome)
    seconds["preprocess"] = time.perf_counter() - started
    started = time.perf_counter()
    regress = run_problems(
        list(task_info.problems()),
        out / "output" / "preprocess",
        task_info,
        out / "output" / "regress",
        jobs=jobs,
        force=True,
        summary=out / "output" / "regress" / "status.json",
        mode=mode,
    )
    seconds["regress"] = time.perf_counter() - started
    return statuses, regress


def run_baseline(
    root: str | Path, *, jobs: int = 1, mode: Mode = "reference", out: str | Path | None = None
) -> BaselineRun:
    """Propose every GEO recipe, preprocess every cohort, answer every problem under `root`.

    Parameters
    ----------
    root
        A benchmark root: `input/` (GEO and TCGA), `metadata/task_info.json`
        and `metadata/gene_synonym.json`.
    jobs
        Worker processes for preprocessing and regression.
    mode
        The regression mode (`"reference"` or `"standard"`).
    out
        Where `recipes/` and `output/` are written: `root` unless given. In the published
        layout (`root/output` holds the reference answers) `root` is refused, before any
        work, and a folder of its own must be given; in the demo's layout
        (`root/reference/output`) the baseline replaces its own earlier `root/output`.
    """
    root = Path(root)
    target = root if out is None else Path(out)
    task_info = TaskInfo.read(root / "metadata" / "task_info.json")
    for folder in ("recipes", "output"):  # once, before any work or any folder is made
        try:
            refuse_reference_target(target / folder, what=f"{folder} folder")
        except ReferenceTargetError as exc:
            if out is not None:
                raise
            raise ReferenceTargetError(
                f"{root / 'output'} holds the benchmark's reference answers (the published "
                "layout), so the baseline does not write there; give it a folder of its own "
                "and score that output against the reference",
                path=root,
            ) from exc
    for folder in ("recipes", "output"):
        prepare_output_folder(target / folder, what=f"{folder} folder")
    synonyms = load_synonyms(root / "metadata" / "gene_synonym.json")
    seconds: dict[str, float] = {}
    started = time.perf_counter()
    proposed, kept, failed = propose_tree(root / "input", target / "recipes")
    seconds["propose"] = time.perf_counter() - started

    statuses, regress = preprocess_and_regress(
        root, task_info, synonyms, seconds, jobs=jobs, mode=mode, out=target
    )
    return BaselineRun(target, proposed, kept, failed, statuses, regress, seconds)

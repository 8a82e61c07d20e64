"""`genotex demo`: the whole pipeline on a generated benchmark, scored against its true answers."""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from pathlib import Path

from .evaluate import evaluate
from .layout import load_task_info
from .preprocess import plan_layout, run_jobs
from .regression.run import run_problems, write_summary
from .report import EvalReport
from .symbols import load_synonyms
from .synth_inputs import write_raw_benchmark

__all__ = ["DemoRun", "run_demo"]

log = logging.getLogger("genotex.demo")


@dataclass(frozen=True)
class DemoRun:
    """Where the demo wrote everything, what it found, and how long each stage took."""

    root: Path
    report: EvalReport
    preprocess_status: list[tuple[str, str]]
    seconds: dict[str, float]


def run_demo(folder: str | Path, *, seed: int = 7, jobs: int = 1) -> DemoRun:
    """Generate raw inputs, then preprocess -> regress -> eval them like a submission."""
    seconds: dict[str, float] = {}
    started = time.perf_counter()
    bench = write_raw_benchmark(folder, seed=seed)
    root = bench.root
    seconds["generate"] = time.perf_counter() - started

    started = time.perf_counter()
    synonyms = load_synonyms(root / "metadata" / "gene_synonym.json")
    task_info = load_task_info(bench.task_info)
    planned = plan_layout(root / "input", root / "recipes", task_info.traits)
    statuses = []
    for job, status in run_jobs(planned, synonyms, root / "output" / "preprocess", jobs=jobs):
        statuses.append((f"{job.trait}/{job.cohort}", status))
        log.info("preprocess %s/%s: %s", job.trait, job.cohort, status)
    seconds["preprocess"] = time.perf_counter() - started

    started = time.perf_counter()
    outcomes = run_problems(list(task_info.problems()), root / "output" / "preprocess", task_info,
                            root / "output" / "regress", jobs=jobs, force=True)  # fmt: skip
    write_summary(root / "output" / "regress" / "status.json", outcomes)
    seconds["regress"] = time.perf_counter() - started

    started = time.perf_counter()
    report = evaluate(root / "output", bench.reference_output, bench.task_info)
    seconds["eval"] = time.perf_counter() - started
    return DemoRun(root, report, statuses, seconds)

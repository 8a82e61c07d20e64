"""`genotex demo`: the whole pipeline on a generated benchmark, scored against its true answers."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from ..core import Outcome, TaskInfo
from ..evaluation import EvalReport, evaluate
from ..preprocessing import load_synonyms
from ._baseline import preprocess_and_regress, run_baseline
from ._examples import DEMO_SPEC, Example, write_example
from ._raw_benchmark import KeyFit, write_raw_benchmark
from ._realistic import write_realistic_benchmark

__all__ = ["DemoRun", "EvalDemo", "run_demo", "run_eval_demo"]


@dataclass(frozen=True)
class DemoRun:
    """Where the demo wrote everything, what it found, and how long each stage took."""

    root: Path
    report: EvalReport
    preprocess_status: list[tuple[str, Outcome]]
    seconds: dict[str, float]
    #: how the published pipeline reached each reference answer (the realistic demo's)
    keys: tuple[KeyFit, ...] = ()
    #: an earlier demo of another kind or seed removed first, said
    replaced: str | None = None


def run_demo(
    folder: str | Path, *, seed: int = 7, jobs: int = 1, realistic: bool = False
) -> DemoRun:
    """Generate raw inputs, then preprocess -> regress -> eval them like a submission.

    The plain demo's cohorts come with hand-written recipes; `realistic` generates cohorts
    that vary as real ones do (`write_realistic_benchmark`) and runs `genotex baseline` on
    them (recipes proposed, not written by hand), which is not perfect there.
    """
    seconds: dict[str, float] = {}
    started = time.perf_counter()
    if realistic:
        bench = write_realistic_benchmark(folder, seed=seed)
        seconds["generate"] = time.perf_counter() - started
        run = run_baseline(bench.root, jobs=jobs)
        seconds.update(run.seconds)
        statuses = run.preprocess_status
    else:
        bench = write_raw_benchmark(folder, seed=seed)
        seconds["generate"] = time.perf_counter() - started
        synonyms = load_synonyms(bench.root / "metadata" / "gene_synonym.json")
        task_info = TaskInfo.read(bench.task_info)
        statuses, _ = preprocess_and_regress(bench.root, task_info, synonyms, seconds, jobs=jobs)
    root = bench.root

    started = time.perf_counter()
    report = evaluate(root / "output", bench.reference_output, bench.task_info)
    seconds["eval"] = time.perf_counter() - started
    return DemoRun(root, report, statuses, seconds, bench.keys, bench.replaced)


@dataclass(frozen=True)
class EvalDemo:
    """The quick evaluation demo: a generated example and its scorecard."""

    example: Example
    report: EvalReport


def run_eval_demo(folder: str | Path, *, seed: int = 7) -> EvalDemo:
    """Generate a small reference tree and an imperfect prediction, and evaluate them."""
    example = write_example(folder, DEMO_SPEC, seed=seed)
    return EvalDemo(example, evaluate(example.pred_output, example.ref_output, example.task_info))

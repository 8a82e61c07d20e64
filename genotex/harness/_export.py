"""`genotex harness export LOG --out RUN`: one output tree, its `genotex eval` report, and the run's
tokens, cost and time (the paper's Table 2 columns that only the run knows).
"""

from __future__ import annotations

import shutil
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from ..core import GenotexError, prepare_output_folder, write_text_atomic
from ..evaluation import EvalOptions, evaluate
from ._bench import EVAL_TASKS, Benchmark, add_given, link_slice, merge_outputs

__all__ = ["RuntimeSummary", "export_run", "runtime_summary"]


@dataclass(frozen=True)
class SampleRuntime:
    """What one sample of one epoch cost: did it finish and score, tokens, dollars, seconds."""

    sample: str
    epoch: int
    success: bool
    input_tokens: int
    output_tokens: int
    cost_usd: float | None
    seconds: float | None


@dataclass(frozen=True)
class RuntimeSummary:
    """The run's Table 2 columns, per problem as the paper reports them, with the epochs' spread.

    `success` is the percentage of samples whose agent finished without an error
    or a limit and whose output scored; tokens are thousands per problem.
    """

    samples: int
    problems: int
    epochs: int
    success: float
    tokens_in_k: float
    tokens_out_k: float
    cost_usd: float | None
    time_s: float | None
    per_epoch: tuple[dict[str, float | None], ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "per_epoch": [dict(e) for e in self.per_epoch]}


def _price(
    model_usage: Mapping[str, Any], price_in: float | None, price_out: float | None
) -> tuple[int, int, float | None]:
    tokens_in = sum(getattr(u, "input_tokens", 0) or 0 for u in model_usage.values())
    tokens_out = sum(getattr(u, "output_tokens", 0) or 0 for u in model_usage.values())
    if price_in is not None and price_out is not None:
        cost: float | None = (tokens_in * price_in + tokens_out * price_out) / 1e6
    else:
        known = [getattr(u, "total_cost", None) for u in model_usage.values()]
        costs = [float(c) for c in known if c is not None]
        cost = sum(costs) if known and len(costs) == len(known) else None
    return tokens_in, tokens_out, cost


def _sample_runtimes(
    log: Any, price_in: float | None, price_out: float | None
) -> Iterator[tuple[Any, SampleRuntime, Any]]:
    """Each sample of the log with what it cost and its score (None when it was not scored)."""
    for sample in log.samples or []:
        score = next(iter((sample.scores or {}).values()), None)
        finished = sample.error is None and getattr(sample, "limit", None) is None
        tokens_in, tokens_out, cost = _price(sample.model_usage or {}, price_in, price_out)
        yield (
            sample,
            SampleRuntime(
                str(sample.id),
                int(sample.epoch or 1),
                bool(finished and score is not None),
                tokens_in,
                tokens_out,
                cost,
                sample.working_time if sample.working_time is not None else sample.total_time,
            ),
            score,
        )


def _per_problem(values: list[float | None], problems: int) -> float | None:
    """The sum per problem, or None when any sample's value is unknown."""
    known = [v for v in values if v is not None]
    return sum(known) / problems if known and len(known) == len(values) else None


def runtime_summary(
    runtimes: Iterable[SampleRuntime], problems_per_sample: Mapping[str, int]
) -> RuntimeSummary:
    """Per-problem averages over samples (the paper's Tk., Cost, Time) and per epoch."""
    runtimes = list(runtimes)
    epochs = sorted({r.epoch for r in runtimes})

    def columns(rows: list[SampleRuntime]) -> dict[str, float | None]:
        problems = sum(max(1, problems_per_sample.get(r.sample, 1)) for r in rows) or 1
        costs = [r.cost_usd for r in rows]
        seconds = [r.seconds for r in rows]
        return {
            "success": 100.0 * sum(r.success for r in rows) / max(1, len(rows)),
            "tokens_in_k": sum(r.input_tokens for r in rows) / problems / 1000,
            "tokens_out_k": sum(r.output_tokens for r in rows) / problems / 1000,
            "cost_usd": _per_problem(costs, problems),
            "time_s": _per_problem(seconds, problems),
        }

    per_epoch = tuple(columns([r for r in runtimes if r.epoch == e]) for e in epochs)
    overall = columns(runtimes)
    return RuntimeSummary(
        samples=len({r.sample for r in runtimes}),
        problems=sum(problems_per_sample.values()),
        epochs=len(epochs),
        success=overall["success"] or 0.0,
        tokens_in_k=overall["tokens_in_k"] or 0.0,
        tokens_out_k=overall["tokens_out_k"] or 0.0,
        cost_usd=overall["cost_usd"],
        time_s=overall["time_s"],
        per_epoch=per_epoch if len(epochs) > 1 else (),
    )


def _headline(report: Any) -> dict[str, float]:
    """An epoch's overall analysis averages (what Table 2 reports)."""
    return dict(report.analysis_by_category().get("Overall", {}))


def export_run(
    log_path: str | Path,
    out: str | Path,
    *,
    root: str | Path | None = None,
    reference: str | Path | None = None,
    price_in: float | None = None,
    price_out: float | None = None,
) -> Path:
    """Merge a log's sample outputs into `OUT/output`, score them, write `OUT/eval.json`.

    Parameters
    ----------
    log_path
        An Inspect log of a genotex task (`.eval` or `.json`).
    out
        The run folder to write (`output/`, `eval.json`).
    root, reference
        The benchmark root and reference (default: the task's own, from the log).
    price_in, price_out
        Dollars per million input and output tokens, when the log has no cost.

    Returns
    -------
    Path
        `OUT/eval.json`: genotex eval's report with a `run.runtime` block.
    """
    from inspect_ai.log import read_eval_log

    try:
        log = read_eval_log(str(log_path))
    except Exception as exc:  # noqa: BLE001 - any unreadable log is one sentence
        raise GenotexError(f"is not a readable Inspect log ({exc})", path=log_path) from None
    metadata = log.eval.metadata or {}
    task_name = metadata.get("genotex_task")
    if task_name is None:
        raise GenotexError("is not the log of a genotex task", path=log_path)
    bench = Benchmark(root or metadata["root"], reference)
    out = prepare_output_folder(out)
    runs, traits, problems_per_sample = [], [], {}
    outputs: dict[int, list[Path]] = {1: []}
    for sample, runtime, score in _sample_runtimes(log, price_in, price_out):
        runs.append(runtime)
        info = (score.metadata or {}) if score is not None else {}
        if info.get("output_dir"):
            outputs.setdefault(runtime.epoch, []).append(Path(info["output_dir"]))
        traits.append((sample.metadata or {}).get("trait"))
        problems_per_sample[runtime.sample] = len((sample.metadata or {}).get("problems", [])) or 1
    asked = sorted({t for t in traits if t})
    # the condition traits outside the run: each sample was given their reference data
    given = sorted(
        ({c for t in asked for c in bench.task_info.conditions.get(t, ())} - set(asked))
        & set(bench.task_info.related_genes)
    )
    options = EvalOptions(tasks=EVAL_TASKS[task_name])
    reference = bench.reference
    if asked != bench.task_info.traits:  # a slice of the benchmark: the reference of its traits
        slice_folder = out / "reference"
        if slice_folder.exists():
            shutil.rmtree(slice_folder)
        reference = link_slice(bench.reference, asked, slice_folder, also_preprocess=given)
    reports = {}
    for epoch in sorted(outputs):  # epoch 1's tree is the run's; every epoch is scored alike
        merged = out / "output" if epoch == 1 else out / "epochs" / f"epoch-{epoch}" / "output"
        if merged.exists():
            shutil.rmtree(merged)
        add_given(merge_outputs(outputs[epoch], merged), bench.reference, given)
        reports[epoch] = evaluate(
            merged, reference, bench.task_info.restricted_to(asked), options=options
        )
    report = reports[min(reports)]
    summary = runtime_summary(runs, problems_per_sample)
    harness = {"task": task_name, "log": str(log_path)}
    run = {**report.run, "runtime": summary.to_dict(), "harness": harness}
    if len(reports) > 1:  # each epoch's headline numbers, and their range across epochs
        run["epochs"] = {str(k): _headline(r) for k, r in sorted(reports.items())}
    report = replace(report, run=run)
    path = out / "eval.json"
    write_text_atomic(path, report.to_json())
    return path

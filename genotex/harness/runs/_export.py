"""`genotex harness export LOG --reference REF --out RUN`: a run folder from its log alone.

The log holds everything the scores came from: the samples' output trees (per
epoch, in each sample's store), the task's slice of task_info and the
reference's files with their sha256. Export trusts none of it: each sample must
be one the log's task_info plans, each name a safe one, each tree intact
(sizes bounded, every file's sha256 checked), and the reference given must be
the one the run was scored against, file for file, or nothing is written.
Each sample of each epoch is scored as its scorer scored it (the same
function), then the samples are put together: `RUN/output` (epoch 1's tree),
`RUN/eval.json` (the epochs' items reduced by the log's reducer, mean by
default, with each epoch's headline numbers and their range), and per epoch
`RUN/epochs/epoch-<k>/` when there are several. No path from the log is read.
"""

from __future__ import annotations

import logging
import math
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from ..._version import __version__
from ...core import (
    GenotexError,
    Mode,
    TaskInfo,
    gate_write,
    prepare_output_folder,
    write_text_atomic,
)
from ...evaluation import ISOLATED_SANDBOXES, EvalReport, provenance
from ...workflows import diagnose as run_diagnosis
from ._epochs import merge_reports, reduce_reports
from ._export_checks import check_out_folder, check_plan
from ._logged import (
    LOG_OVERHEAD_BYTES,
    LoggedRun,
    LoggedSample,
    check_reference,
    logged_run,
    logged_samples,
    read_log,
)
from ._merged import LogPart, merge_runs
from ._runtime import Prices, RuntimeSummary, SampleRuntime, runtime_summary, sample_runtime
from ._scoring import SampleScoring, add_given, link_slice, score_files, write_tree
from ._what_ran import setting_and_budget, what_ran

__all__ = ["RuntimeSummary", "export_run", "runtime_summary"]

_logger = logging.getLogger("genotex.harness.export")

#: The largest output tree export inflates from one sample of a log, by default.
DEFAULT_MAX_OUTPUT_MB = 4096
#: Reducers export applies to items as Inspect does to scores; others are reduced by the mean.
_REDUCERS: dict[str, Callable[[list[float]], float]] = {
    "mean": statistics.fmean,
    "median": statistics.median,
    "max": max,
    "min": min,
}


def _headline(report: EvalReport) -> dict[str, float]:
    """An epoch's overall analysis averages (what Table 2 reports)."""
    return dict(report.analysis_by_category().get("Overall", {}))


def _reducer(log: Any) -> tuple[str, Callable[[list[float]], float]]:
    """The log's epoch reducer, when export can apply it to items, else the mean."""
    epochs = getattr(log.eval.config, "epochs_reducer", None) or ["mean"]
    name = str(epochs[0]) if isinstance(epochs, list) and epochs else "mean"
    return (name, _REDUCERS[name]) if name in _REDUCERS else ("mean", _REDUCERS["mean"])


def export_run(
    log_path: str | Path | Sequence[str | Path],
    out: str | Path,
    *,
    reference: str | Path,
    price_in: float | None = None,
    price_out: float | None = None,
    max_output_mb: int = DEFAULT_MAX_OUTPUT_MB,
    prices: str | Path | Prices | None = None,
    diagnose: Mode | None = None,
) -> Path:
    """Score a genotex log's samples from the log alone, write `OUT/eval.json` and the trees.

    Parameters
    ----------
    log_path
        An Inspect log of a genotex task (`.eval` or `.json`), made by genotex ≥ 0.4; or
        several, one run over disjoint traits (a team run trait by trait): the same task,
        solver, models and setting, field by field, or nothing is written
        (`genotex.harness.runs._merged`). Their samples are scored together, as one run.
    out
        The run folder to write: `output/`, `eval.json`, and `epochs/epoch-<k>/`
        (each epoch's tree and report) when the run had several epochs.
    reference
        The reference `output/` folder the run was scored against; refused
        unless its scored files are those the log records, byte for byte.
    price_in, price_out
        Dollars per million input and output tokens of every model, when the log has
        no cost.
    prices
        A price table per model (`Prices`, or its JSON file: `{"provider/model":
        {"input": dollars, "output": dollars}}` per million tokens); a model it lists
        is priced by it, the others by `price_in`/`price_out` or the log's cost.
    max_output_mb
        The largest output tree inflated from one sample (a forged log's bound).
    diagnose
        Also say where the run lost its points (`genotex.workflows.diagnose`, its
        substitutes made by this mode, "standard" or "reference"), in the report.

    Returns
    -------
    Path
        `OUT/eval.json`: genotex eval's report of the run, with its `run.harness`,
        `run.runtime` and, over several epochs, `run.epochs` blocks.
    """
    started, reference = time.time(), Path(reference)
    paths = [log_path] if isinstance(log_path, (str, Path)) else list(log_path)
    if not paths:
        raise ValueError("give at least one log")
    priced = Prices.of(prices, price_in, price_out)  # a bad table: refused before anything
    parts = [_part(p, Path(out), reference, max_output_mb) for p in paths]
    run = parts[0].run if len(parts) == 1 else merge_runs(parts, reference)
    by_epoch, runtimes, failures = _score_parts(parts, reference, max_output_mb, priced)
    out = prepare_output_folder(out)
    reports = {}
    for epoch, scored in sorted(by_epoch.items()):
        folder = out if len(by_epoch) == 1 else out / "epochs" / f"epoch-{epoch}"
        _write_outputs([s for s, _ in scored], folder / "output")
        ordered = sorted(scored, key=lambda pair: pair[0].spec.id)
        reports[epoch] = merge_reports([r.report for _, r in ordered], run.task_info)
    if len(by_epoch) > 1:  # the run's tree is epoch 1's, as a single-epoch run's
        _write_outputs([s for s, _ in by_epoch[min(by_epoch)]], out / "output")
    reducer_name, statistic = _reducer(parts[0].log)
    report = reduce_reports([reports[k] for k in sorted(reports)], statistic)
    problems = {s.spec.id: max(1, len(s.spec.problems)) for s, _ in next(iter(by_epoch.values()))}
    summary, unpriced = runtime_summary(runtimes, problems), _unpriced(priced, runtimes)
    block = _run_block(run, reference, run.source, epochs=len(by_epoch), reducer=reducer_name)
    if len(parts) > 1:
        block["logs"] = [str(part.path) for part in parts]
    block |= {"failures": failures, **parts[0].ran} | parts[0].setting
    asked = sorted({s.spec.trait for scored in by_epoch.values() for s, _ in scored})
    given = sorted({t for s in run.specs.values() if s.trait in asked for t in s.given})
    needed = sorted({t for s in run.specs.values() if s.trait in asked for t in s.needed})
    analysis_problems = {p.key for s, _ in next(iter(by_epoch.values())) for p in s.spec.problems}
    with tempfile.TemporaryDirectory(prefix="genotex-export-") as scratch:
        sliced = link_slice(reference, asked, Path(scratch) / "ref", also_preprocess=needed)
        chosen, benchmark = {"harness_task": run.task, "reducer": reducer_name}, run.benchmark
        origin = provenance(sliced, run.task_info.to_dict(), chosen, started, benchmark=benchmark)
        if diagnose is not None:  # against the slice: the problems asked, nothing else
            scope = (run.task_info.restricted_to(asked), given, analysis_problems, reference, block)
            report = _diagnosed(report, out, sliced, scope, mode=diagnose, task=run.task)
    run_block = {
        **report.run,
        "genotex_version": __version__,
        "prediction": str(out / "output"),
        "reference": str(reference),
        "task_info": None,
        "problems_in_task_info": len(analysis_problems),
        "harness": block,
        "runtime": {**summary.to_dict(), "unpriced_models": unpriced},
        "provenance": origin,
    }
    if len(reports) > 1:  # each epoch's headline numbers, and their range across epochs
        _write_epochs(out, reports, run_block)
        run_block["epochs"] = {str(k): _headline(r) for k, r in sorted(reports.items())}
        run_block["epoch_range"] = _ranges(run_block["epochs"])
    path = out / "eval.json"
    write_text_atomic(path, replace(report, run=run_block).to_json())
    return path


def _score_parts(
    parts: list[LogPart], reference: Path, max_output_mb: int, priced: Prices
) -> tuple[dict[int, list[tuple[LoggedSample, SampleScoring]]], list[SampleRuntime], list[dict]]:
    """Every log's samples of every epoch scored, each log checked against its own plan."""
    bound = max_output_mb * 1024 * 1024
    by_epoch: dict[int, list[tuple[LoggedSample, SampleScoring]]] = {}
    runtimes, failures = [], []
    for part in parts:
        logged, spent, failed = _score_samples(part.log, part.run, reference, bound,
                                               prices=priced)  # fmt: skip
        _check_epochs(part, logged)
        for epoch, items in logged.items():
            by_epoch.setdefault(epoch, []).extend(items)
        runtimes += spent
        failures += failed
    return by_epoch, runtimes, failures


def _part(path: str | Path, out: Path, reference: Path, max_output_mb: int) -> LogPart:
    """One log, checked (`_checked_log`), with what ran and its setting."""
    log, run = _checked_log(path, out, reference, max_output_mb)
    ran = what_ran(log)
    return LogPart(path, log, run, ran, setting_and_budget(run.task, run.metadata, log,
                                                           ran["solver_args"]))  # fmt: skip


def _check_epochs(
    part: LogPart, by_epoch: Mapping[int, list[tuple[LoggedSample, SampleScoring]]]
) -> None:
    """Refuse a log with no sample, one lacking a sample Inspect ran, or one holding
    different samples in different epochs.
    """
    if not by_epoch:
        raise GenotexError("holds no sample", path=part.path)
    held = {(s.spec.id, e) for e, v in by_epoch.items() for s, _ in v}
    check_plan(part.log, part.run, held, part.path)
    per_epoch = {k: sorted(s.spec.id for s, _ in v) for k, v in by_epoch.items()}
    if len({tuple(ids) for ids in per_epoch.values()}) > 1:
        raise GenotexError(
            "holds different samples in different epochs (an interrupted run?); export a "
            "complete run",
            path=part.path,
        )


def _unpriced(priced: Prices, runtimes: list[SampleRuntime]) -> list[str]:
    """The log's models no price covers; said in a warning when prices were given at all."""
    models = sorted({m for r in runtimes for m in r.by_model})
    unpriced = [m for m in models if not priced.prices(m)]
    if (priced.per_model or priced.default) and unpriced:
        _logger.warning(
            "no price is given for %s: the run's cost is left unknown (give it in the price "
            "table, or a price for every model)",
            ", ".join(unpriced),
        )
    return unpriced


def _checked_log(
    log_path: str | Path, out: Path, reference: Path, max_output_mb: int
) -> tuple[Any, LoggedRun]:
    """The log and its run, once the export folder, the log's size and the reference are
    checked (nothing is written before).
    """
    check_out_folder(out, reference, Path(log_path))
    # a member holds a sample's output trees (gzip and base64: about 4/3 of their bytes, per
    # epoch) and its messages: bounded before it is inflated
    log = read_log(log_path, max_bytes=2 * max_output_mb * 1024 * 1024 + LOG_OVERHEAD_BYTES)
    run = logged_run(log, log_path)
    check_reference(run, reference, log_path)
    return log, run


def _diagnosed(
    report: EvalReport,
    out: Path,
    sliced: Path,
    scope: tuple[TaskInfo, list[str], set[str], Path, Mapping[str, Any]],
    *,
    mode: Mode,
    task: str,
) -> EvalReport:
    """The report with the diagnosis of the exported tree: the asked problems only, against
    the reference's slice, the agent's tree holding (as the scorer's did) the reference's
    preprocessed data of `given` traits it was handed and wrote none of its own.

    `scope` is (task_info of the asked traits, the given traits, the asked problems' keys,
    the reference as the user gave it, the run's harness record: the diagnosis says its steps
    that called genotex's pipeline).
    """
    task_info, given, problems, reference, block = scope
    reached = block.get("reached_pipeline") or []
    pred = sliced.parent / "pred"
    shutil.copytree(out / "output", gate_write(pred))
    add_given(pred, sliced, given)
    found = run_diagnosis(pred, sliced, task_info, mode=mode, problems=problems,
                          given_data=task == "analysis", reached_pipeline=reached)  # fmt: skip
    as_given = {**found.run, "prediction": str(out / "output"), "reference": str(reference)}
    return replace(report, diagnosis=replace(found, run=as_given))


def _score_samples(
    log: Any,
    run: LoggedRun,
    reference: Path,
    max_bytes: int,
    *,
    prices: Prices,
) -> tuple[dict[int, list[tuple[LoggedSample, SampleScoring]]], list[SampleRuntime], list[dict]]:
    """Each sample of each epoch scored as its scorer scored it, with its cost and failure."""
    by_epoch: dict[int, list[tuple[LoggedSample, SampleScoring]]] = {}
    runtimes, failures = [], []
    for item, sample in logged_samples(log, run, run.source, max_bytes):
        scoring = score_files(reference, run.task_info, item.spec, item.files)
        by_epoch.setdefault(item.epoch, []).append((item, scoring))
        runtimes.append(sample_runtime(sample, item.failure is None, prices))
        if item.failure is not None:
            failures.append({"sample": item.spec.id, "epoch": item.epoch, "reason": item.failure})
    return by_epoch, runtimes, failures


def _write_epochs(out: Path, reports: Mapping[int, EvalReport], run: Mapping[str, Any]) -> None:
    """Each epoch's own report, beside its tree: `OUT/epochs/epoch-<k>/eval.json`."""
    for epoch, report in reports.items():
        path = out / "epochs" / f"epoch-{epoch}" / "eval.json"
        epoch_run = {**run, "prediction": str(path.parent / "output"), "epoch": epoch}
        write_text_atomic(path, replace(report, run=epoch_run).to_json())


def _ranges(epochs: Mapping[str, Mapping[str, float]]) -> dict[str, dict[str, float]]:
    """Each headline metric's mean, lowest and highest value over the epochs."""
    ranges = {}
    for metric in next(iter(epochs.values()), {}):
        found = [e[metric] for e in epochs.values() if not math.isnan(e.get(metric, math.nan))]
        if found:
            ranges[metric] = {"mean": statistics.fmean(found), "min": min(found), "max": max(found)}
    return ranges


def _run_block(
    run: LoggedRun, reference: Path, log_path: str | Path, *, epochs: int, reducer: str
) -> dict[str, Any]:
    """What export says of the run: the log, its task and version, the checks it passed."""
    return {
        "task": run.task,
        "log": str(log_path),
        "run_genotex_version": str(run.metadata.get("genotex_version"))[:40],
        "reference_sha256": run.reference.get("sha256"),
        "reference_checked": str(reference),
        "sandbox": str(run.metadata.get("sandbox"))[:40],
        "isolated": run.metadata.get("sandbox") in ISOLATED_SANDBOXES,
        "epochs": epochs,
        "reducer": reducer,
    }


def _write_outputs(samples: Iterable[LoggedSample], into: Path) -> None:
    """The samples' output trees as one, written afresh under `into` (inside OUT)."""
    if into.exists():
        shutil.rmtree(into)
    into.mkdir(parents=True)
    for stage in ("preprocess", "regress"):
        (into / stage).mkdir()
    for sample in sorted(samples, key=lambda s: s.spec.id):  # a file two wrote: the first's
        written = {n: d for n, d in (sample.files or {}).items() if not (into / n).exists()}
        write_tree(written, into)

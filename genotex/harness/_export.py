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

import math
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path
from typing import Any

from .._version import __version__
from ..core import (
    GenotexError,
    TaskInfo,
    TaskInfoError,
    UnsafeNameError,
    check_safe_name,
    prepare_output_folder,
    write_text_atomic,
)
from ..evaluation import EvalReport, Finding, provenance
from ._bench import (
    TASKS,
    SampleScoring,
    SampleSpec,
    link_slice,
    plan_samples,
    reference_manifest,
    reference_slice,
    score_files,
    write_tree,
)
from ._capture import STORE_KEY, CapturedOutput, unpack_output

__all__ = ["RuntimeSummary", "export_run", "runtime_summary"]

#: The largest output tree export inflates from one sample of a log, by default.
DEFAULT_MAX_OUTPUT_MB = 4096
#: Epochs a log may hold (a forged count cannot make export loop).
MAX_EPOCHS = 1000
#: Reducers export applies to items as Inspect does to scores; others are reduced by the mean.
_REDUCERS: dict[str, Callable[[list[float]], float]] = {
    "mean": statistics.fmean,
    "median": statistics.median,
    "max": max,
    "min": min,
}


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


def _runtime(
    sample: Any, success: bool, price_in: float | None, price_out: float | None
) -> SampleRuntime:
    """What one sample of one epoch cost, and whether the agent finished and its output scored."""
    tokens_in, tokens_out, cost = _price(sample.model_usage or {}, price_in, price_out)
    return SampleRuntime(
        str(sample.id),
        int(sample.epoch or 1),
        success,
        tokens_in,
        tokens_out,
        cost,
        sample.working_time if sample.working_time is not None else sample.total_time,
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


def _headline(report: EvalReport) -> dict[str, float]:
    """An epoch's overall analysis averages (what Table 2 reports)."""
    return dict(report.analysis_by_category().get("Overall", {}))


def _refuse(reason: str, log: str | Path) -> GenotexError:
    return GenotexError(reason, path=log)


def _read_log(log_path: str | Path) -> Any:
    from inspect_ai.log import read_eval_log

    try:
        return read_eval_log(str(log_path))
    except Exception as exc:  # noqa: BLE001 - any unreadable log is one sentence
        reason = str(exc).splitlines()[0][:200] if str(exc) else exc.__class__.__name__
        raise _refuse(f"is not a readable Inspect log ({reason})", log_path) from None


@dataclass(frozen=True)
class _LoggedRun:
    """What a genotex log says of its run, checked: task, task_info, traits, reference."""

    task: str
    task_info: TaskInfo
    specs: Mapping[str, SampleSpec]
    reference: Mapping[str, Any]
    metadata: Mapping[str, Any]


def _logged_run(log: Any, log_path: str | Path) -> _LoggedRun:
    metadata = log.eval.metadata or {}
    task = metadata.get("genotex_task")
    if task not in TASKS:
        raise _refuse("is not the log of a genotex task", log_path)
    recorded = metadata.get("reference")
    if not isinstance(recorded, dict) or not isinstance(recorded.get("files"), dict):
        raise _refuse(
            "records no reference digest (it was made by genotex before 0.4, whose logs "
            "do not hold their outputs); run the task again",
            log_path,
        )
    try:
        info = TaskInfo.from_dict(metadata.get("task_info"), source=f"{log_path} (task_info)")
        traits = metadata.get("traits")
        if not isinstance(traits, list) or not all(isinstance(t, str) for t in traits):
            raise _refuse("records no list of the run's traits", log_path)
        for trait in traits:
            check_safe_name(trait, what="trait name")
            if trait not in info.related_genes:
                raise _refuse(f"names the trait {trait!r}, which its task_info lacks", log_path)
        planned = {s.id: s for s in plan_samples(info, task, traits)}
        listed = metadata.get("samples")
        if not isinstance(listed, list) or not all(isinstance(i, str) for i in listed):
            raise _refuse("records no list of the run's samples", log_path)
        unknown = [i for i in listed if i not in planned]
        if unknown:
            raise _refuse(
                f"lists a sample {unknown[0][:200]!r} its task_info does not plan", log_path
            )
        specs = {i: planned[i] for i in listed}
    except (TaskInfoError, UnsafeNameError) as exc:
        raise _refuse(f"holds a task_info genotex refuses ({exc.reason})", log_path) from None
    return _LoggedRun(task, info, specs, recorded, metadata)


def _check_reference(run: _LoggedRun, reference: Path, log_path: str | Path) -> None:
    """Refuse a reference that is not, file for file, the one the run was scored against."""
    if not (reference / "regress").is_dir() and not (reference / "preprocess").is_dir():
        reason = "the reference folder has neither preprocess/ nor regress/"
        raise GenotexError(reason, path=reference)
    try:
        found = reference_manifest(reference, reference_slice(reference, run.specs.values()))
    except OSError as exc:
        reason = f"the reference cannot be read ({exc.strerror or exc})"
        raise GenotexError(reason, path=reference) from None
    if found["sha256"] == run.reference.get("sha256"):
        return
    recorded = run.reference["files"]
    differing = sorted(
        set(recorded) ^ set(found["files"])
        | {f for f in set(recorded) & set(found["files"]) if recorded[f] != found["files"][f]}
    )
    example = f", e.g. {differing[0]}" if differing else ""
    raise GenotexError(
        f"is not the reference the run in {log_path} was scored against "
        f"({len(differing)} of its files differ{example}; the run's was "
        f"{str(run.reference.get('path'))[:300]!r})",
        path=reference,
    )


@dataclass(frozen=True)
class _Sample:
    """One sample of one epoch of the log, checked, with its output (None: it failed)."""

    spec: SampleSpec
    epoch: int
    files: Mapping[str, bytes] | None
    failure: str | None


def _samples(
    log: Any, run: _LoggedRun, log_path: str | Path, max_bytes: int
) -> Iterator[tuple[_Sample, Any]]:
    """Each sample of the log, checked against the run's plan, with its output unpacked."""
    seen: set[tuple[str, int]] = set()
    for sample in log.samples or []:
        name = str(sample.id)[:200]
        spec = run.specs.get(str(sample.id))
        if spec is None:
            raise _refuse(f"has a sample {name!r} that its task_info does not plan", log_path)
        if (sample.metadata or {}).get("trait") != spec.trait:
            raise _refuse(f"says sample {name!r} is of another trait than its id", log_path)
        epoch = sample.epoch
        if not isinstance(epoch, int) or isinstance(epoch, bool) or not 1 <= epoch <= MAX_EPOCHS:
            raise _refuse(f"gives sample {name!r} the epoch {str(epoch)[:20]}", log_path)
        if (spec.id, epoch) in seen:
            raise _refuse(f"holds sample {name!r} of epoch {epoch} twice", log_path)
        seen.add((spec.id, epoch))
        score = next(iter((sample.scores or {}).values()), None)
        detail = (score.metadata or {}) if score is not None else {}
        failure = _failure_of(sample, detail)
        stored = (sample.store or {}).get(STORE_KEY)
        files: Mapping[str, bytes] | None = None
        if failure is None and stored is None:
            failure = "the log holds no output for it"
        if failure is None:
            try:
                captured: CapturedOutput = unpack_output(stored, max_bytes=max_bytes)
            except ValueError as exc:
                where = f"sample {name!r} of epoch {epoch}"
                raise _refuse(f"holds a damaged output of {where}: {exc}", log_path) from None
            recorded = (detail.get("output") or {}).get("sha256")
            if recorded != captured.sha256:
                where = f"sample {name!r} of epoch {epoch}"
                raise _refuse(f"holds an output of {where} that its score did not score", log_path)
            files = captured.files
        yield _Sample(spec, epoch, files, failure), sample


def _failure_of(sample: Any, detail: Mapping[str, Any]) -> str | None:
    """Why a sample failed (an error, a limit, or what its scorer said), or None."""
    if sample.error is not None:
        return f"error: {str(sample.error.message)[:300]}"
    if getattr(sample, "limit", None) is not None:
        return f"{sample.limit.type} limit: {str(sample.limit.reason or sample.limit.limit)[:300]}"
    if not sample.scores:
        return "not scored"
    failure = detail.get("failure")
    return str(failure)[:300] if failure else None


def _sort_key(task_info: TaskInfo) -> Callable[[Any], tuple]:
    order = {p.key: i for i, p in enumerate(task_info.problems())}
    return lambda p: (order.get(p.key, len(order)), p.key)


def _findings(reports: Iterable[EvalReport]) -> tuple[Finding, ...]:
    """The reports' findings, each once, by file."""
    found = {f for r in reports for f in r.findings}
    return tuple(sorted(found, key=lambda f: (f.file, f.reason)))


def merge_reports(parts: Sequence[EvalReport], task_info: TaskInfo) -> EvalReport:
    """One report of several samples' own reports: their items together, in benchmark order."""
    problem_order = _sort_key(task_info)

    def joined(name: str, key: Callable[[Any], Any]) -> tuple | None:
        present = [getattr(p, name) for p in parts if getattr(p, name) is not None]
        if not present:
            return None
        return tuple(sorted((row for rows in present for row in rows), key=key))

    preprocessing: dict[str, tuple | None] | None = None
    subtasks = [p.preprocessing for p in parts if p.preprocessing is not None]
    if subtasks:
        preprocessing = {}
        for name in subtasks[0]:
            rows = [r for sub in subtasks for r in (sub.get(name) or ())]
            have = any(sub.get(name) is not None for sub in subtasks)
            preprocessing[name] = tuple(sorted(rows, key=lambda r: r.file)) if have else None
    return EvalReport(
        filtering=joined("filtering", lambda r: r.trait),
        selection=joined("selection", lambda r: problem_order(r.problem)),
        preprocessing=preprocessing,
        analysis=joined("analysis", lambda r: problem_order(r.problem)),
        findings=_findings(parts),
        run=dict(parts[0].run) if parts else {},
    )


def _reduce_rows(rows: Sequence[Any], statistic: Callable[[list[float]], float]) -> Any:
    """One row from the same item's rows over epochs: each float field reduced (NaN ignored)."""
    first = rows[0]
    changes: dict[str, Any] = {}
    for spec in fields(first):
        value = getattr(first, spec.name)
        if isinstance(value, float):
            found = [getattr(r, spec.name) for r in rows]
            finite = [v for v in found if isinstance(v, float) and not math.isnan(v)]
            changes[spec.name] = float(statistic(finite)) if finite else math.nan
    if "status" in {f.name for f in fields(first)}:
        statuses = {r.status for r in rows}
        changes["status"] = first.status if len(statuses) == 1 else "ok"
    return replace(first, **changes)


def reduce_reports(
    reports: Sequence[EvalReport], statistic: Callable[[list[float]], float]
) -> EvalReport:
    """The epochs' reports as one: every item's numbers reduced over the epochs.

    The reports hold the same items (each epoch scores the same slice), so each
    item is matched by its position; counts (a filtering's TP...) are epoch 1's.
    """
    if len(reports) == 1:
        return reports[0]
    first = reports[0]

    def reduced(rows_by_epoch: Sequence[tuple | None]) -> tuple | None:
        if rows_by_epoch[0] is None:
            return None
        return tuple(_reduce_rows(group, statistic) for group in zip(*rows_by_epoch, strict=True))

    preprocessing = None
    if first.preprocessing is not None:
        preprocessing = {
            name: reduced([(r.preprocessing or {}).get(name) for r in reports])
            for name in first.preprocessing
        }
    return replace(
        first,
        filtering=reduced([r.filtering for r in reports]),
        selection=reduced([r.selection for r in reports]),
        preprocessing=preprocessing,
        analysis=reduced([r.analysis for r in reports]),
        findings=_findings(reports),
    )


def _reducer(log: Any) -> tuple[str, Callable[[list[float]], float]]:
    """The log's epoch reducer, when export can apply it to items, else the mean."""
    epochs = getattr(log.eval.config, "epochs_reducer", None) or ["mean"]
    name = str(epochs[0]) if isinstance(epochs, list) and epochs else "mean"
    return (name, _REDUCERS[name]) if name in _REDUCERS else ("mean", _REDUCERS["mean"])


def export_run(
    log_path: str | Path,
    out: str | Path,
    *,
    reference: str | Path,
    price_in: float | None = None,
    price_out: float | None = None,
    max_output_mb: int = DEFAULT_MAX_OUTPUT_MB,
) -> Path:
    """Score a genotex log's samples from the log alone, write `OUT/eval.json` and the trees.

    Parameters
    ----------
    log_path
        An Inspect log of a genotex task (`.eval` or `.json`), made by genotex ≥ 0.4.
    out
        The run folder to write: `output/`, `eval.json`, and `epochs/epoch-<k>/`
        (each epoch's tree and report) when the run had several epochs.
    reference
        The reference `output/` folder the run was scored against; refused
        unless its scored files are those the log records, byte for byte.
    price_in, price_out
        Dollars per million input and output tokens, when the log has no cost.
    max_output_mb
        The largest output tree inflated from one sample (a forged log's bound).

    Returns
    -------
    Path
        `OUT/eval.json`: genotex eval's report of the run, with its `run.harness`,
        `run.runtime` and, over several epochs, `run.epochs` blocks.
    """
    started = time.time()
    log = _read_log(log_path)
    run = _logged_run(log, log_path)
    reference = Path(reference)
    _check_reference(run, reference, log_path)
    max_bytes = max_output_mb * 1024 * 1024
    by_epoch: dict[int, list[tuple[_Sample, SampleScoring]]] = {}
    runtimes, failures = [], []
    for item, sample in _samples(log, run, log_path, max_bytes):
        scoring = score_files(reference, run.task_info, item.spec, item.files)
        by_epoch.setdefault(item.epoch, []).append((item, scoring))
        runtimes.append(_runtime(sample, item.failure is None, price_in, price_out))
        if item.failure is not None:
            failures.append({"sample": item.spec.id, "epoch": item.epoch, "reason": item.failure})
    if not by_epoch:
        raise _refuse("holds no sample", log_path)
    out = prepare_output_folder(out)
    reports = {}
    for epoch, scored in sorted(by_epoch.items()):
        folder = out if len(by_epoch) == 1 else out / "epochs" / f"epoch-{epoch}"
        _write_outputs([s for s, _ in scored], folder / "output")
        ordered = sorted(scored, key=lambda pair: pair[0].spec.id)
        reports[epoch] = merge_reports([r.report for _, r in ordered], run.task_info)
    if len(by_epoch) > 1:  # the run's tree is epoch 1's, as a single-epoch run's
        _write_outputs([s for s, _ in by_epoch[min(by_epoch)]], out / "output")
    reducer_name, statistic = _reducer(log)
    report = reduce_reports([reports[k] for k in sorted(reports)], statistic)
    problems = {s.spec.id: max(1, len(s.spec.problems)) for s, _ in next(iter(by_epoch.values()))}
    summary = runtime_summary(runtimes, problems)
    block = _run_block(run, reference, log_path, epochs=len(by_epoch), reducer=reducer_name)
    block["failures"] = failures
    asked = sorted({s.spec.trait for scored in by_epoch.values() for s, _ in scored})
    given = sorted({t for s in run.specs.values() if s.trait in asked for t in s.given})
    with tempfile.TemporaryDirectory(prefix="genotex-export-") as scratch:
        sliced = link_slice(reference, asked, Path(scratch) / "ref", also_preprocess=given)
        chosen = {"harness_task": run.task, "reducer": reducer_name}
        origin = provenance(sliced, run.task_info.to_dict(), chosen, started)
    analysis_problems = {p.key for s, _ in next(iter(by_epoch.values())) for p in s.spec.problems}
    run_block = {
        **report.run,
        "genotex_version": __version__,
        "prediction": str(out / "output"),
        "reference": str(reference),
        "task_info": None,
        "problems_in_task_info": len(analysis_problems),
        "harness": block,
        "runtime": summary.to_dict(),
        "provenance": origin,
    }
    if len(reports) > 1:  # each epoch's headline numbers, and their range across epochs
        run_block["epochs"] = {str(k): _headline(r) for k, r in sorted(reports.items())}
        run_block["epoch_range"] = _ranges(run_block["epochs"])
        for epoch, epoch_report in reports.items():
            path = out / "epochs" / f"epoch-{epoch}" / "eval.json"
            epoch_run = {**run_block, "prediction": str(path.parent / "output"), "epoch": epoch}
            epoch_run.pop("epochs"), epoch_run.pop("epoch_range")
            write_text_atomic(path, replace(epoch_report, run=epoch_run).to_json())
    path = out / "eval.json"
    write_text_atomic(path, replace(report, run=run_block).to_json())
    return path


def _ranges(epochs: Mapping[str, Mapping[str, float]]) -> dict[str, dict[str, float]]:
    """Each headline metric's mean, lowest and highest value over the epochs."""
    ranges = {}
    for metric in next(iter(epochs.values()), {}):
        found = [e[metric] for e in epochs.values() if not math.isnan(e.get(metric, math.nan))]
        if found:
            ranges[metric] = {"mean": statistics.fmean(found), "min": min(found), "max": max(found)}
    return ranges


def _run_block(
    run: _LoggedRun, reference: Path, log_path: str | Path, *, epochs: int, reducer: str
) -> dict[str, Any]:
    """What export says of the run: the log, its task and version, the checks it passed."""
    return {
        "task": run.task,
        "log": str(log_path),
        "run_genotex_version": str(run.metadata.get("genotex_version"))[:40],
        "reference_sha256": run.reference.get("sha256"),
        "reference_checked": str(reference),
        "sandbox": str(run.metadata.get("sandbox"))[:40],
        "epochs": epochs,
        "reducer": reducer,
    }


def _write_outputs(samples: Iterable[_Sample], into: Path) -> None:
    """The samples' output trees as one, written afresh under `into` (inside OUT)."""
    if into.exists():
        shutil.rmtree(into)
    into.mkdir(parents=True)
    for stage in ("preprocess", "regress"):
        (into / stage).mkdir()
    for sample in samples:  # in id order; a file two samples wrote is the first one's
        written = {n: d for n, d in (sample.files or {}).items() if not (into / n).exists()}
        write_tree(written, into)

"""The genotex tasks' scorer and metrics: each sample's output kept in its log, then scored.

The scorer stops what the agent left running, copies the sandbox's `output/`
(regular files only) into the sample's store (`_capture.STORE_KEY`) and scores
it with genotex's own evaluation; a sample whose agent errored or hit a limit
keeps its files in the log but is scored as an empty output, with the reason.
Its work is shielded from the agent's time limit and bounded on its own. The
metrics pool every item of every sample, after
Inspect's epoch reducer has reduced each item, and give each a standard error.
"""

from __future__ import annotations

import math

import anyio
from inspect_ai.event import ErrorEvent, SampleLimitEvent, SpanBeginEvent, SpanEndEvent
from inspect_ai.log import transcript
from inspect_ai.scorer import Metric, SampleScore, Score, Scorer, Target, metric, scorer
from inspect_ai.solver import TaskState
from inspect_ai.util import OutputLimitExceededError, sandbox

from ...core import WORKSPACE_NAME, GenotexError, check_relative
from ..sandboxes._proxy import own_sandbox
from ._bench import Benchmark, TaskName, plan_samples
from ._capture import STORE_KEY, pack_output
from ._scoring import ITEM_SEPARATOR, score_files

__all__ = [
    "CAPTURE_SECONDS",
    "DEFAULT_MAX_OUTPUT_MB",
    "PARTIAL_KEY",
    "genotex_scorer",
    "pooled",
    "stderr",
]

#: The largest output tree a sample's log keeps, by default (`-T max_output_mb`).
DEFAULT_MAX_OUTPUT_MB = 1024
#: How long the scorer may take to copy a sample's output out of its sandbox.
CAPTURE_SECONDS = 900
#: Where a solver notes the commands that failed in part (the sample went on, its files scored).
PARTIAL_KEY = "genotex:partial_failures"


def _item_values(scores: list[SampleScore], name: str) -> list[float]:
    """Every item's (epoch-reduced) value of a metric, over all samples; undefined ones left out."""
    prefix = f"{name}{ITEM_SEPARATOR}"
    values = []
    for sample in scores:
        value = sample.score.value
        if isinstance(value, dict):
            for key, item in value.items():
                if key.startswith(prefix) and isinstance(item, (int, float)):
                    if math.isfinite(float(item)):
                        values.append(float(item))
    return values


def pooled(name: str) -> Metric:
    """The paper's average of a metric over every item of every sample (not of sample means)."""

    def factory() -> Metric:
        def compute(scores: list[SampleScore]) -> float:
            values = _item_values(scores, name)
            return sum(values) / len(values) if values else 0.0

        return compute

    factory.__name__ = name
    return metric(name=name)(factory)()


def stderr(name: str) -> Metric:
    """The standard error of that average, items taken as the units (0 below two items)."""

    def factory() -> Metric:
        def compute(scores: list[SampleScore]) -> float:
            values = _item_values(scores, name)
            if len(values) < 2:
                return 0.0
            mean = sum(values) / len(values)
            variance = sum((v - mean) ** 2 for v in values) / (len(values) - 1)
            return math.sqrt(variance / len(values))

        return compute

    factory.__name__ = f"{name}_stderr"
    return metric(name=f"{name}_stderr")(factory)()


def _failure() -> str | None:
    """Why the agent stopped, when it did not finish: the sample's error or limit, else None.

    The last event of the sample before scoring (spans and log lines aside) is
    the sample-level error or limit that ended the solver, when one did.
    """
    for event in reversed(transcript().events):
        if isinstance(event, (SpanBeginEvent, SpanEndEvent)) or event.event in ("logger", "state"):
            continue
        if isinstance(event, ErrorEvent):
            return f"error: {event.error.message}"[:500]
        if isinstance(event, SampleLimitEvent):
            return f"{event.type} limit: {event.message}"[:500]
        return None
    return None


async def _listing() -> list[tuple[str, int]] | None:
    """The regular files under the sandbox's `output/` with their sizes (None: no output/).

    From the host for genotex's own sandboxes (nothing runs in the sandbox, no link is
    followed); elsewhere by `find` in the sandbox.
    """
    environment = sandbox()
    own = own_sandbox(environment)
    if own is not None:
        return await anyio.to_thread.run_sync(own.list_files, "output")
    listing = await environment.exec(
        ["find", "output", "-type", "f", "-printf", "%s\\t%P\\0"], timeout=300
    )
    if not listing.success:
        return None
    found = []
    for entry in (e for e in listing.stdout.split("\0") if e):
        size_text, _, name = entry.partition("\t")
        found.append((name, int(size_text) if (size_text.isascii() and size_text.isdigit()) else 0))
    return sorted(found)


#: What a sample's failure starts with when its folders were full: nothing is read after it.
_DISK_FAILURES = ("disk limit hit", "file count limit hit", "its folders hold")


async def _collect(max_bytes: int) -> tuple[dict[str, bytes], list[tuple[str, str]], str | None]:
    """The regular files under the sandbox's `output/` (links are not followed or collected).

    Returns the files, those skipped with why, and a failure when the tree is
    larger than the log may hold. The bound is checked on the files' apparent sizes
    before any is read (sparse files cost the agent nothing, and the host their size).
    """
    listed = await _listing()
    if not listed:
        return {}, [], None  # no output/ at all: nothing written
    files: dict[str, bytes] = {}
    skipped: list[tuple[str, str]] = []
    wanted = []
    for name, size in listed:
        if name == WORKSPACE_NAME:
            continue  # the harness's sign that output/ is the agent's own, not its answer
        try:
            check_relative(name, what="file name")
        except GenotexError as exc:
            skipped.append((name[:200].encode("unicode_escape").decode(), str(exc)[:200]))
            continue
        wanted.append((name, size))
    total = sum(size for _, size in wanted)
    if total > max_bytes:
        return (
            {},
            skipped,
            (
                f"output limit: output/ holds {total:,} bytes, more than the {max_bytes:,} allowed "
                "(nothing was read)"
            ),
        )
    for name, _ in wanted:
        try:
            files[name] = await sandbox().read_file(f"output/{name}", text=False)
        except (OutputLimitExceededError, FileNotFoundError, PermissionError, IsADirectoryError):
            skipped.append(
                (
                    name,
                    "could not be read from the sandbox (too large, not a regular file, or gone)",
                )
            )
    return files, skipped, None


def _capture_bound(max_output_mb: int) -> int:
    """The bytes of output/ a log keeps: `max_output_mb`, and in genotex's own sandboxes no
    more than the sample's folders may hold (`disk_mb`).
    """
    bound = max_output_mb * 1024 * 1024
    own = own_sandbox(sandbox())
    if own is not None:
        bound = min(bound, own.spec.limits.disk_mb * 1024 * 1024)
    return bound


@scorer(metrics=[])
def genotex_scorer(
    root: str, reference: str, task_name: TaskName, max_output_mb: int = DEFAULT_MAX_OUTPUT_MB
) -> Scorer:
    """genotex's evaluation of the sample's `output/`, which is kept in the log first."""
    bench = Benchmark(root, reference)

    async def score(state: TaskState, target: Target) -> Score:
        trait = (state.metadata or {})["trait"]
        plan = plan_samples(bench.task_info, task_name, [trait])  # its plan: no file is listed
        spec = next(s for s in plan if s.id == str(state.sample_id))
        failure = _failure()
        files: dict[str, bytes] = {}
        skipped: list[tuple[str, str]] = []
        # not under the agent's limit: Inspect gives scoring half the sample's time limit,
        # and a sample that used its time must still be kept and scored; bounded on its own
        # a failed sample's files are kept too (for a reader and the diagnosis), not scored
        with anyio.CancelScope(shield=True):
            with anyio.move_on_after(CAPTURE_SECONDS) as capture:
                own = own_sandbox(sandbox())
                if own is not None:
                    await own.quiesce()  # nothing the agent left runs on as we read
                if failure is not None and any(d in failure for d in _DISK_FAILURES):
                    skipped = [("output/", "not read: the sample's folders were full")]
                else:
                    files, skipped, too_large = await _collect(_capture_bound(max_output_mb))
                    failure = failure or too_large
            if capture.cancelled_caught:
                files = {}
                failure = failure or f"scorer: output/ not copied in {CAPTURE_SECONDS} s"
            packed = pack_output(files, skipped)
            state.store.set(STORE_KEY, packed)
            scoring = await anyio.to_thread.run_sync(
                score_files, bench.reference, bench.task_info, spec, None if failure else files
            )
        values = scoring.values()
        return Score(
            value=values,
            answer=f"{len(files)} files, {packed['bytes']:,} bytes, sha256 {packed['sha256']}",
            explanation=failure,
            metadata={
                "genotex_task": spec.task,
                "trait": spec.trait,
                "epoch": state.epoch,
                "failure": failure,
                "output": {
                    "sha256": packed["sha256"],
                    "files": len(files),
                    "bytes": packed["bytes"],
                },
                "skipped": [{"path": p, "reason": r} for p, r in skipped],
                "partial_failures": list(state.store.get(PARTIAL_KEY, []))[:100],
                "findings": [{"file": f.file, "reason": f.reason} for f in scoring.report.findings],
            },
        )

    return score

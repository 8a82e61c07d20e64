"""`genotex harness replay LOG`: a model-driven run again, with its logged replies as the model.

Each role is played by Inspect's `mockllm` answering, call after call, with the reply the
log holds for that sample and role; the task is made again over the benchmark root the
caller names, with the log's task arguments, and the solver with the options that ran (the
sample's store). The log's code runs in this machine's strongest isolated sandbox (or the
one named): where it runs, over which root and reference and in which image are never taken
from the log, and `local` (the host, as the caller) only with `trust_log`. Each message sent
is compared with the one the log holds: the first that differs is named (its sample, role,
call and span), and the run goes on with the logged replies. At the end each sample's output
tree and scores are compared with the log's. A published log becomes an artifact anyone can
run again offline; a log whose outputs were not made by its own code (an edited reply, a
tree put in by hand) shows it.
"""

from __future__ import annotations

import contextvars
import inspect
import tempfile
from collections import defaultdict, deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ....core import GenotexError, prepare_output_folder
from ...runs._capture import STORE_KEY as OUTPUT
from ...runs._capture import unpack_output

__all__ = ["ReplayLimitsError", "ReplayResult", "replay_run", "replay_sandbox"]

#: Which sample the current model call belongs to (set by the replay's solver wrapper).
_SAMPLE: contextvars.ContextVar[str] = contextvars.ContextVar("genotex_replay_sample")
#: The largest output tree compared (the log's bound applies when it was captured).
_MAX_BYTES = 10**10


class ReplayLimitsError(GenotexError):
    """A log asks a replay for more than its caps (`REPLAY_CAPS`) without leave to."""


@dataclass(frozen=True)
class _Call:
    role: str
    sent: tuple[str, ...]  # each message's text, system first
    reply: str
    where: str  # the span: "<workflow> · <step> · <role>"


@dataclass
class ReplayResult:
    """What a replay found: the samples and calls replayed and the first difference (None:
    the same outputs, the same scores, every message as logged).
    """

    samples: int = 0
    calls: int = 0
    differences: list[str] = field(default_factory=list)

    @property
    def same(self) -> bool:
        return not self.differences

    def note(self, text: str) -> None:
        self.differences.append(text)


def _text(content: object) -> str:
    return content if isinstance(content, str) else str(content)


def _logged_calls(sample: Any) -> list[_Call]:
    """The sample's model calls in order, their messages read back from the attachments."""
    from inspect_ai.event import ModelEvent, SpanBeginEvent
    from inspect_ai.log import resolve_sample_attachments

    resolved = resolve_sample_attachments(sample)
    spans = {e.id: e.name for e in resolved.events if isinstance(e, SpanBeginEvent)}
    calls = []
    for event in resolved.events:
        if isinstance(event, ModelEvent):
            sent = tuple(_text(m.content) for m in event.input)
            where = spans.get(event.span_id or "", "")
            choices = event.output.choices
            reply = choices[0].message.text if choices else event.output.completion
            calls.append(_Call(str(event.role or ""), sent, reply, where))
    return calls


def _current_span() -> str:
    """The name of the span the current model call is made in (`<workflow> · <step> ·
    <role>`), read from the sample's transcript; "" outside one.
    """
    from inspect_ai.event import SpanBeginEvent
    from inspect_ai.log._transcript import transcript
    from inspect_ai.util._span import current_span_id

    ident = current_span_id()
    for event in reversed(transcript().events):
        if isinstance(event, SpanBeginEvent) and event.id == ident:
            return event.name
    return ""


def _held(log: Any) -> tuple[list[Any], int]:
    """The sample ids and the number of epochs the log holds (not what its header claims: a
    log made with `--limit 1` or `--sample-id` holds fewer samples than its task has).
    """
    samples = log.samples or []
    ids = sorted({s.id for s in samples}, key=str)
    epochs = max((s.epoch for s in samples if isinstance(s.epoch, int)), default=1)
    return ids, max(epochs, 1)


class _Replies:
    """Each (sample, role)'s logged replies, handed out in order, the messages compared."""

    def __init__(self, logged: Mapping[str, list[_Call]], result: ReplayResult) -> None:
        self.queues: dict[tuple[str, str], deque[tuple[int, _Call]]] = defaultdict(deque)
        for sample, calls in logged.items():
            for index, call in enumerate(calls, 1):
                self.queues[(sample, call.role)].append((index, call))
        self.result = result

    def model(self, role: str) -> Callable[..., Any]:
        from inspect_ai.model import ModelOutput, ModelUsage

        def answer(messages: list[Any], tools: Any, tool_choice: Any, config: Any) -> Any:
            sample = _SAMPLE.get("")
            queue = self.queues[(sample, role)]
            self.result.calls += 1
            if not queue:
                where = _current_span() or role
                self.result.note(f"sample {sample}: a call the log does not hold ({where})")
                reply = ""
            else:
                index, call = queue.popleft()
                sent = tuple(_text(m.content) for m in messages)
                if sent != call.sent:
                    self.result.note(f"sample {sample}, call {index} ({call.where or role}): "
                                     "the message sent differs from the log's")  # fmt: skip
                reply = call.reply
            output = ModelOutput.from_content("mockllm/model", reply)
            output.usage = ModelUsage(input_tokens=0, output_tokens=0, total_tokens=0)
            return output

        return answer

    def unused(self) -> None:
        for (sample, role), queue in sorted(self.queues.items()):
            if queue:
                index, call = queue[0]
                self.result.note(f"sample {sample}, call {index} ({call.where or role}): "
                                 "the log holds a call the replay did not make")  # fmt: skip


def _solver_options(log: Any) -> dict[str, Any]:
    """The options that ran (the first sample's store), with the time scale as a number."""
    from ._solver import STORE_KEY

    for sample in log.samples or []:
        record = sample.store.get(STORE_KEY)
        if isinstance(record, dict) and isinstance(record.get("options"), dict):
            options = dict(record["options"])
            options.setdefault("library", "genotex")  # before 0.10.0, its only library
            if isinstance(record.get("time_scale"), (int, float)):
                options["time_scale"] = record["time_scale"]
            return options
    raise GenotexError("is not the log of a GenoAgent run (no sample records its team)")


def _outcome(sample: Any) -> tuple[dict[str, bytes], Any]:
    files = {}
    if OUTPUT in sample.store:
        files = dict(unpack_output(sample.store[OUTPUT], max_bytes=_MAX_BYTES).files)
    score = next(iter(sample.scores.values())).value if sample.scores else None
    return files, score


def _key(sample_id: object, epoch: object) -> str:
    """A sample of one epoch: its id, and the epoch when there are several."""
    return f"{sample_id}" if epoch in (None, 1) else f"{sample_id} (epoch {epoch})"


def _compare(logged: Any, again: Any, result: ReplayResult) -> None:
    before = {_key(s.id, s.epoch): s for s in logged.samples or []}
    after = {_key(s.id, s.epoch): s for s in again.samples or []}
    for sample_id in sorted(before):
        if sample_id not in after:
            result.note(f"sample {sample_id}: not run again")
            continue
        (files, score), (files_again, score_again) = (
            _outcome(before[sample_id]),
            _outcome(after[sample_id]),
        )
        changed = sorted(set(files) ^ set(files_again)) + sorted(
            n for n in set(files) & set(files_again) if files[n] != files_again[n]
        )
        if changed:
            result.note(f"sample {sample_id}: output/{changed[0]} differs from the log's")
        elif score != score_again:
            result.note(f"sample {sample_id}: the scores differ from the log's")


#: The task arguments a replay never takes from the log: where the benchmark is, which
#: reference scores it, where and in which image the logged code runs. A log is the work of
#: whoever made it; these are the replaying machine's to say.
_HOST_ARGUMENTS = ("root", "reference", "sandbox", "image")


#: What a replay takes from the log without the replayer's word: each value up to its cap
#: (a replay must reproduce every message, so the log's own values are used). The sandbox
#: limits' caps are the tasks' defaults (`SandboxLimits()`); a time or message limit must be
#: set (a log asking for none is asking for more than any cap).
REPLAY_CAPS: dict[str, int] = {
    "time_limit": 4 * 3600,  # seconds of a sample
    "message_limit": 1000,
    "cohort_seconds": 3600,  # a workflow's budget before its time scale
    "time_scale": 10,
    "review_rounds": 4,
    "max_retract": 4,
    "output_chars": 100_000,
}


def replay_caps_exceeded(arguments: Mapping[str, Any], options: Mapping[str, Any]) -> list[str]:
    """Each value a log asks for past its cap (`REPLAY_CAPS`, the default sandbox limits), as
    "time_limit none (cap 14,400)"; empty when the log stays within them.
    """
    from ...sandboxes._sandbox_spec import SandboxLimits

    found = []
    for name in ("time_limit", "message_limit"):
        value = arguments.get(name)
        if value is None or not isinstance(value, (int, float)) or value > REPLAY_CAPS[name]:
            found.append(f"{name} {str(value).lower():.40} (cap {REPLAY_CAPS[name]:,})")
    for name in ("cohort_seconds", "time_scale", "review_rounds", "max_retract", "output_chars"):
        value = options.get(name)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            if value > REPLAY_CAPS[name]:
                found.append(f"{name} {value:g} (cap {REPLAY_CAPS[name]:,})")
    try:
        asked = SandboxLimits.parse(arguments.get("limits"))
    except ValueError:
        return found  # the task refuses it itself, in its own sentence
    default = SandboxLimits()
    for name in SandboxLimits.__dataclass_fields__:
        value, cap = getattr(asked, name), getattr(default, name)
        if value > cap:
            found.append(f"limits {name}={value:,} (cap {cap:,})")
    return found


def _task_arguments(
    task: Callable[..., Any],
    arguments: Mapping[str, Any],
    options: Mapping[str, Any],
    allow_log_limits: bool,
    log_path: str | Path,
) -> dict[str, Any]:
    """The log's task arguments the task takes, bar the host's (`_HOST_ARGUMENTS`), once
    within a replay's caps (or allowed past them); a log made before 0.10.0 gets the setting
    it ran with.
    """
    accepted = inspect.signature(task).parameters
    given = {k: v for k, v in arguments.items() if k in accepted and k not in _HOST_ARGUMENTS}
    exceeded = replay_caps_exceeded(given, options)
    if exceeded and not allow_log_limits:
        raise ReplayLimitsError(
            f"asks for more than a replay takes from a log without your word: "
            f"{'; '.join(exceeded[:10])}; allow_log_limits=True runs it so",
            path=Path(log_path),
        )
    given.setdefault("tcga", "matched")
    given.setdefault("conditions", "given")
    return given


def replay_sandbox(sandbox: str | None, *, trust_log: bool = False) -> str:
    """The sandbox a replay runs the log's code in: the one named, else this machine's
    strongest isolated one (never the log's, which may say `local`).

    `local` (no isolation: the logged code runs as the caller, on the host) only with
    `trust_log`, the caller's word that it trusts whoever made the log; otherwise a
    GenotexError before any code runs.
    """
    from ...sandboxes._choice import choose_sandbox

    if sandbox == "local" and not trust_log:
        raise GenotexError(
            "a replay runs the log's code; in the local sandbox it would run on this machine "
            "as you, with your files: pass trust_log=True if you trust whoever made the log, "
            "or name no sandbox for an isolated one"
        )
    return choose_sandbox(sandbox)


def replay_run(  # noqa: PLR0913 - the replay's options, each the caller's to say
    log_path: str | Path,
    *,
    root: str | Path,
    reference: str | Path | None = None,
    sandbox: str | None = None,
    trust_log: bool = False,
    log_dir: str | Path | None = None,
    allow_log_limits: bool = False,
) -> ReplayResult:
    """Run a GenoAgent log again with its logged replies as the model; see the module.

    The log's own limits, time and message limits, tools and solver options are used (a
    replay must reproduce every message), up to the caps a replayer accepts without saying
    so (`REPLAY_CAPS`, and the default sandbox limits): a log asking more is refused before
    any code runs, naming each value, unless `allow_log_limits`.

    Parameters
    ----------
    log_path
        The log (an Inspect `.eval` file); every part of it is untrusted.
    root
        The benchmark root to replay over, on this machine (never the log's, whose path
        is the maker's).
    reference
        The reference to score against (default: the root's own).
    sandbox
        Where the logged code runs: a named sandbox, or (None) this machine's strongest
        isolated one. The log's own sandbox is never used: a log may say `local`.
    trust_log
        Allow `sandbox="local"`, which runs the logged code on the host as the caller.
    log_dir
        Where the replay's own log is kept (default: a temporary folder, removed).
    allow_log_limits
        Take the log's limits, time and message limits and solver options past their caps
        (still within this machine's bounds, as any task's).
    """
    from inspect_ai import eval as inspect_eval
    from inspect_ai._util.error import PrerequisiteError
    from inspect_ai.model import get_model
    from inspect_ai.solver import Generate, Solver, TaskState, solver

    from ...runs._logged import logged_run, read_log
    from ...runs._tasks import analysis, e2e, preprocess
    from ._solver import ROLES, genoagent

    if log_dir is not None:  # Inspect writes the replay's log there itself, past genotex's gate
        prepare_output_folder(log_dir, what="log folder")
    kind = replay_sandbox(sandbox, trust_log=trust_log)  # before the log is even read
    log = read_log(log_path, _MAX_BYTES)
    logged_run(log, log_path)  # a genotex task's log, its plan checked
    metadata = log.eval.metadata or {}
    tasks = {"preprocess": preprocess, "analysis": analysis, "e2e": e2e}
    task_name, arguments = str(metadata.get("genotex_task")), metadata.get("arguments")
    if not isinstance(arguments, dict):
        raise GenotexError("records no task arguments (made before 0.8.0?)", path=Path(log_path))
    try:
        options = _solver_options(log)
    except GenotexError as exc:
        raise GenotexError(exc.reason, path=Path(log_path)) from None
    result = ReplayResult(samples=len(log.samples or []))
    replies = _Replies({_key(s.id, s.epoch): _logged_calls(s) for s in log.samples or []}, result)
    roles = {r: get_model("mockllm/model", custom_outputs=replies.model(r), memoize=False)
             for r in ROLES}  # fmt: skip

    @solver(name="genotex/replayed")
    def replayed() -> Solver:
        async def solve(state: TaskState, generate: Generate) -> TaskState:
            _SAMPLE.set(_key(state.sample_id, state.epoch))
            return await team(state, generate)

        return solve

    given = _task_arguments(tasks[task_name], arguments, options, allow_log_limits, log_path)
    given["sandbox"] = kind
    if reference is not None:
        given["reference"] = str(reference)
    try:  # what the log says is checked as a command line's arguments are
        team = genoagent(**options)
        task = tasks[task_name](str(root), **given)
    except PrerequisiteError as exc:
        raise GenotexError(f"cannot be run again: {exc}", path=Path(log_path)) from None
    ids, epochs = _held(log)  # exactly the log's samples and epochs, as `--sample-id`
    with tempfile.TemporaryDirectory(prefix="genotex-replay-") as scratch:
        again = inspect_eval(
            task, model=roles["planner"], model_roles=roles, solver=replayed(),
            log_dir=str(log_dir or scratch), display="none", max_samples=1, epochs=epochs,
            sample_id=ids,
        )[0]  # fmt: skip
        replies.unused()
        _compare(log, again, result)  # inside: the replay's samples may be read from its log
    return result

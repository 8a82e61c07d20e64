"""The team at work on one workflow (a cohort's preprocessing, or one problem's statistics):
context-aware planning, code written step by step into a persistent kernel, code review.

Each model call is made under its role (`get_model(role=...)`, so that the log names who
made it) inside a span named `<cohort> · <step> · <role>`; what each step did is kept in the
workflow's record for the sample's store.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageUser,
    GenerateConfig,
    Model,
    get_model,
)
from inspect_ai.util import span

from ...sandboxes._kernel import Kernel, StepRun
from ._library import library
from ._options import TeamOptions
from ._replies import Verdict, code_of, plan_choice, verdict_of
from ._units import Unit, prompt

__all__ = ["Step", "Team", "TeamOptions", "WorkflowRecord"]

#: What a step's output and error may take of a prompt (first and last halves kept).
PROMPT_TEXT_CHARS = 4000
#: The planner's answer that ends a workflow before its last step.
FINISH = "finish"
#: What a writer is told when its reply held no code (no reviewer is asked about it).
NO_CODE = "the reply held no fenced Python block to run: answer with one"
#: The characters of an earlier step's code shown again in a later prompt (first and last
#: halves): a 2 MB step is not resent whole with every call after it.
CODE_SHOWN_CHARS = 6000


@dataclass
class Step:
    """One step as taken: its unit, the code kept, what running it gave, its reviews."""

    unit: Unit
    code: str
    run: StepRun
    reviews: int = 0
    approved: bool | None = None
    #: whether any of its drafts reached for genotex's own pipeline (refused in the kernel)
    reached_pipeline: bool = False

    def note(self, run: StepRun) -> None:
        """A draft's run: a refusal of genotex's pipeline is kept, whatever comes after."""
        from ....agentlib._guard import REFUSED  # the library (scikit-learn): when a team runs

        self.reached_pipeline |= REFUSED in (run.error or "")

    def summary(self) -> dict:
        return {"step": self.unit.name, "ok": self.run.ok, "reviews": self.reviews,
                "approved": self.approved, "seconds": self.run.seconds,
                "error": (self.run.error or "")[-500:] or None,
                "reached_pipeline": self.reached_pipeline}  # fmt: skip


@dataclass
class WorkflowRecord:
    """What happened to one workflow: its steps in order, and why it stopped early, if it did."""

    name: str
    steps: list[dict] = field(default_factory=list)
    abandoned: str | None = None
    went_back: str | None = None
    finished_early: str | None = None  # the first step not taken when the planner finished
    #: each planner answer that named no choice, and what was done: asked again, then the
    #: next step in order when the second answer named none either
    plan_corrections: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {"workflow": self.name, "steps": self.steps, "abandoned": self.abandoned,
                "went_back": self.went_back, "finished_early": self.finished_early,
                "plan_corrections": self.plan_corrections}  # fmt: skip


def _clip(text: str, chars: int = PROMPT_TEXT_CHARS) -> str:
    if len(text) <= chars:
        return text
    return f"{text[: chars // 2]}\n[... cut ...]\n{text[-chars // 2 :]}"


def _said(run: StepRun) -> tuple[str, str]:
    """A run's output and error as a prompt shows them."""
    return _clip(run.output) or "(nothing)", _clip(run.error or "") or "(none)"


def _history(steps: Sequence[Step]) -> str:
    if not steps:
        return "(none yet)"
    shown = []
    for step in steps:
        output, error = _said(step.run)
        shown.append(
            f"## {step.unit.name}\n\n{step.unit.instruction}\n\n```python\n"
            f"{_clip(step.code, CODE_SHOWN_CHARS)}```\n\n"
            f"Output:\n{output}\n\nError:\n{error}"
        )
    return "\n\n".join(shown)


def _cached(model: Model) -> GenerateConfig:
    """Prompt caching asked for (Inspect's `cache_prompt`: Anthropic's and Bedrock's caches;
    OpenAI caches a stable prefix by itself), unless the run or the model chose otherwise
    (`--cache-prompt false`). A role's system prompt is the same at every call, so each call
    after the first reads it from the cache.
    """
    chosen = model.config.cache_prompt
    try:  # the run's own generate config (`inspect eval --cache-prompt ...`)
        from inspect_ai.model._model import active_generate_config

        chosen = active_generate_config().cache_prompt if chosen is None else chosen
    except ImportError:  # pragma: no cover - an Inspect that moved it: the model's alone
        pass
    return GenerateConfig(cache_prompt=True if chosen is None else chosen)


class OutOfTime(Exception):
    """The workflow's time budget is spent."""


@dataclass
class _Work:
    """One workflow under way: its kernel, title, names as shown, deadline, kept steps."""

    kernel: Kernel
    title: str
    variables: str
    deadline: float
    kept: list[Step] = field(default_factory=list)
    retracts: int = 0  # times the planner went back

    def left(self) -> float:
        """The seconds left of the budget (OutOfTime when none)."""
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise OutOfTime
        return left


class Team:
    """The agents of one sample, with their options and the calls they made per role."""

    def __init__(self, options: TeamOptions, budget: float | None = None) -> None:
        self.options = options
        #: a workflow's seconds: `cohort_seconds` times the run's time scale
        self.budget = options.cohort_seconds if budget is None else budget
        self.calls: Counter[str] = Counter()
        #: step name -> (workflow, code) of its latest approved run, for `reuse_code`
        self.approved: dict[str, tuple[str, str]] = {}

    async def call(
        self, role: str, system: str, message: str, where: str, *, before: Sequence[str] = ()
    ) -> str:
        """One model call as `role`, in a span naming the workflow and step; `before` is the
        conversation so far (user, assistant, ...) when `message` answers a reply of its.
        """
        model = get_model(role=role, default=get_model())
        turns: list[ChatMessage] = [ChatMessageSystem(content=system)]
        for i, text in enumerate(before):
            turns.append(ChatMessageUser(content=text) if i % 2 == 0
                         else ChatMessageAssistant(content=text))  # fmt: skip
        turns.append(ChatMessageUser(content=message))
        async with span(f"{where} · {role}", type="genoagent"):
            output = await model.generate(turns, config=_cached(model))
        self.calls[role] += 1
        return output.completion

    def _writer(self, unit: Unit) -> tuple[str, str]:
        """Who writes a unit's code and who reviews it."""
        if unit.expert and self.options.domain_expert:
            return "domain_expert", "domain_expert"
        writer = "data_engineer" if unit.expert else unit.writer
        return writer, "code_reviewer"

    def _system(self, role: str) -> str:
        """A role's instructions: its one role text, the guidelines, the library's
        documentation. The same text for every call of the role (a stable prefix, which
        providers' prompt caches bill at a fraction): what a call asks for, and how to answer
        it, is in its message (the Domain Expert writes and reviews under one system prompt).
        """
        documentation = library(self.options.library).documentation(role)
        return f"{prompt(role)}\n\n{prompt('guidelines')}\n\n{documentation}"

    async def run_workflow(
        self, kernel: Kernel, workflow: Sequence[Unit], title: str, variables: str
    ) -> WorkflowRecord:
        """Take a workflow's steps, planned, written, run and reviewed, within its budget."""
        record = WorkflowRecord(title)
        work = _Work(kernel, title, variables, time.monotonic() + self.budget)
        index = 0
        try:
            await kernel.fresh()
            while index < len(workflow):
                chosen = await self._plan(work, workflow, index, record)
                if chosen < index:  # back: the later steps discarded, the state rebuilt
                    work.retracts += 1
                    record.went_back = workflow[chosen].name
                    work.kept = [s for s in work.kept if workflow.index(s.unit) < chosen]
                    await self._replay(work)
                elif chosen >= len(workflow) and index < len(workflow):
                    record.finished_early = workflow[index].name
                index = chosen
                if index >= len(workflow):
                    break
                step = await self._step(work, workflow[index])
                work.kept.append(step)
                record.steps.append(step.summary())
                if step.run.interrupted:  # the process was killed: the kept state, again
                    await self._replay(work)
                index += 1
        except OutOfTime:
            record.abandoned = f"{title} ran out of its {self.budget:g} s budget" + (
                f" at step {workflow[index].name}" if index < len(workflow) else ""
            )
        return record

    def _choices(self, workflow: Sequence[Unit], index: int, work: _Work) -> list[str]:
        """What the planner may choose: any step not yet taken, "finish" (the planner's prompt
        says when a workflow may end, which can be before its first step: a TCGA workflow
        with no folder of the trait's has nothing to save), and the steps taken while going
        back is left.
        """
        names = [u.name for u in workflow]
        choices = [*names[index:], FINISH]
        if work.retracts < self.options.max_retract:
            choices += sorted({s.unit.name for s in work.kept}, key=names.index)
        return choices

    async def _plan(
        self, work: _Work, workflow: Sequence[Unit], index: int, record: WorkflowRecord
    ) -> int:
        """The index of the step to take next (`len(workflow)`: finish): the planner's choice,
        or the next in order (without planning, or at the start of a workflow of one step,
        which finishing would leave undone: a problem's statistics). An answer that names
        no choice is answered once, saying so and listing the choices; a second such answer
        takes the next step in order. Both are kept in the workflow's record.
        """
        work.left()
        choices = self._choices(workflow, index, work)
        if not self.options.planning or (choices == [workflow[index].name, FINISH]
                                         and not work.kept):  # fmt: skip
            return index
        left = self.options.max_retract - work.retracts
        back = ""  # before any step was taken there is nothing to go back to
        if work.kept:
            back = (f"Going back is possible {left} more time(s)." if left
                    else "Going back is no longer possible.")  # fmt: skip
        message = prompt("plan").format(
            context_title=work.title, variables=work.variables, history=_history(work.kept),
            steps="\n\n".join(f"## {u.name}\n\n{u.instruction}" for u in workflow),
            next=workflow[index].name, choices=", ".join(choices), back=back,
        )  # fmt: skip
        system = f"{prompt('planner')}\n\n{prompt('guidelines')}"
        where = f"{work.title} · planning"
        reply = await self.call("planner", system, message, where)
        choice = plan_choice(reply, choices)
        if choice is None:
            again = prompt("plan_invalid").format(
                reply=_clip(reply.strip() or "(nothing)", 300), choices=", ".join(choices),
                next=workflow[index].name,
            )  # fmt: skip
            second = await self.call("planner", system, again, where, before=(message, reply))
            choice = plan_choice(second, choices)
            taken = (
                "took that choice"
                if choice is not None
                else (f"named none again: took the next step, {workflow[index].name}")
            )
            record.plan_corrections.append(
                f"before {workflow[index].name}: {_clip(reply.strip(), 200)!r} named no choice; "
                f"asked again, the planner {taken}"
            )  # fmt: skip
        if choice is None:
            return index
        return len(workflow) if choice == FINISH else [u.name for u in workflow].index(choice)

    async def _replay(self, work: _Work) -> None:
        """A fresh kernel, then the kept steps' code (a step that was interrupted is not run
        again: it would be, again).
        """
        steps = [(f"<{s.unit.name}>", s.code) for s in work.kept if not s.run.interrupted]
        await work.kernel.replay(steps, work.left())

    async def _write(
        self, work: _Work, unit: Unit, writer: str, message: str, *, rebuild: bool = False
    ) -> tuple[StepRun, str]:
        """Ask `writer` for a step's code and run it: what it did, and the code."""
        work.left()
        where = f"{work.title} · {unit.name}"
        reply = await self.call(writer, self._system(writer), message, where)
        code = code_of(reply)
        if code is None:
            return StepRun("", NO_CODE), ""
        if rebuild:  # a revision runs on the state before the step, rebuilt
            await self._replay(work)
        return await work.kernel.run(code, f"<{unit.name}>", work.left()), code

    async def _step(self, work: _Work, unit: Unit) -> Step:
        """Write a step, run it, and have it reviewed and revised up to `review_rounds` times."""
        writer, reviewer = self._writer(unit)
        request = prompt("step").format(
            context_title=work.title, variables=work.variables, history=_history(work.kept),
            step=unit.name, instruction=unit.instruction,
        )  # fmt: skip
        if self.options.reuse_code and unit.name in self.approved:
            source, earlier = self.approved[unit.name]
            shown = _clip(earlier, CODE_SHOWN_CHARS)
            request += "\n\n" + prompt("reuse").format(source=source, code=shown)
        if writer == "domain_expert":  # its system prompt is also its reviewer's: say how
            request += "\n\n" + prompt("domain_expert_answer")
        run, code = await self._write(work, unit, writer, request)
        step = Step(unit, code, run)
        step.note(run)
        for _ in range(self.options.review_rounds):
            work.left()
            if step.code:
                reply = await self.call(
                    reviewer, self._review_system(reviewer), self._review(work, step),
                    f"{work.title} · {unit.name}",
                )  # fmt: skip
                verdict = verdict_of(reply)
            else:  # no code to review: the writer is asked again, no reviewer called
                verdict = Verdict(False, NO_CODE)
            step.reviews += 1
            step.approved = verdict.approved
            if verdict.approved:
                break
            output, error = _said(step.run)
            revision = prompt("revise").format(
                request=request, code=step.code, output=output, error=error,
                feedback=verdict.feedback,
            )  # fmt: skip
            step.run, step.code = await self._write(work, unit, writer, revision, rebuild=True)
            step.note(step.run)
        if step.run.ok and step.approved is not False:  # approved, or ran with no reviewer
            self.approved[unit.name] = (work.title, step.code)
        return step

    def _review_system(self, reviewer: str) -> str:
        """A reviewer's instructions: the Code Reviewer's own, or the Domain Expert's one
        system prompt (it reviews its own steps; the review message says how to answer).
        """
        return self._system(reviewer)

    def _review(self, work: _Work, step: Step) -> str:
        """What a reviewer reads: the workflow's variables (its paths), the steps before, the
        step with its code and what running it gave.
        """
        output, error = _said(step.run)
        return prompt("review").format(
            context_title=work.title, variables=work.variables, history=_history(work.kept),
            step=step.unit.name, instruction=step.unit.instruction,
            code=_clip(step.code, CODE_SHOWN_CHARS), output=output, error=error,
        )  # fmt: skip

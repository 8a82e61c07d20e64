"""A persistent Python kernel in a sample's sandbox: the steps of one cohort share its state.

GenoAgent's agents write code step by step, as a bioinformatician fills a notebook; each
step's variables are there for the next. `Kernel` is that notebook's kernel: one long-lived
Python kernel (`_kernel_server.py`: a supervisor that holds the protocol; a template that
has run the library's imports and no step; and the worker, a fork of the template, that
holds the state and runs the steps, out of reach of each other's code) started inside
the sample's sandbox, under the same
confinement and limits as every command there (bwrap: its namespaces, cgroups and ulimits;
podman: `podman exec` into the sample's container; local: a plain process in the sample's
folder, as that sandbox gives), fed one step at a time over its standard input.

- A fresh state (`fresh`: a workflow's start, a replay) is a new fork of the template with
  every process the steps started ended: one interpreter and its imports a sample, not one
  a workflow and one a replay (1.2-1.5 s each: the paper library's imports).
- A step's output is cut at `output_chars`; its error is the trace from its own code on.
- A step that runs past its time is interrupted: the process is killed (with every process
  of the sample, under podman) and the kernel is started again; the caller rebuilds the
  state by replaying the steps it keeps (`replay`).
- A limit hit while a step runs ends the sample as a command's would (`SandboxLimitError`).
- `stop` ends the process; the kernel is the only process of the sample that outlives a
  command, and it is stopped before the sample's output is captured.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import secrets
import signal
import time
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from inspect_ai.util import ExecResult, SandboxEnvironment

from ._folder_sandbox import HostFolderSandbox
from ._proxy import unproxied

__all__ = ["Kernel", "KernelError", "StepRun", "clip_output"]

#: The bytes one protocol line may hold (a step's output is cut far below it).
_LINE_BYTES = 64 * 1024 * 1024
#: How long the kernel may take to start (an interpreter, in a fresh sandbox).
START_SECONDS = 120


class KernelError(RuntimeError):
    """The kernel could not be started, or the sandbox cannot hold one."""


@dataclass(frozen=True)
class StepRun:
    """What one step's code did in the kernel.

    `error` is the step's trace (None when it ran through); `cut` says the output was cut to
    the kernel's bound; `interrupted` that it ran past its time and the state is gone.
    """

    output: str
    error: str | None
    cut: bool = False
    seconds: float = 0.0
    interrupted: bool = False

    @property
    def ok(self) -> bool:
        return self.error is None and not self.interrupted


def clip_output(text: str, limit: int) -> tuple[str, bool]:
    """`text` cut to its first and last `limit // 2` characters when longer (host side: a
    step's answer is never trusted to be cut), and whether it was cut.
    """
    limit = max(limit, 100)
    if len(text) <= limit + 200:  # the kernel's own cut adds a marker line
        return text, False
    half = limit // 2
    return (
        f"{text[:half]}\n[... output cut: {len(text):,} characters in all ...]\n{text[-half:]}",
        True,
    )


def _server_source() -> str:
    """The kernel's program: the worker's side, then the supervisor's (which runs `_main`)."""
    files = resources.files("genotex.harness.sandboxes")
    return "\n".join(
        files.joinpath(f).read_text() for f in ("_kernel_worker.py", "_kernel_server.py")
    )


def _local_directory(env: SandboxEnvironment) -> str | None:
    """The folder of Inspect's `local` sandbox (its commands' working folder), else None."""
    directory = getattr(env, "directory", None)
    name = getattr(directory, "name", None)
    return name if isinstance(name, str) and Path(name).is_dir() else None


class Kernel:
    """One persistent Python process in a sample's sandbox (start, run steps, replay, stop).

    Parameters
    ----------
    env
        The sample's sandbox: genotex's `bwrap` or `genotex-podman`, or Inspect's `local`.
    python
        The interpreter inside the sandbox (the task's: ours under bwrap, the image's under
        podman).
    library
        Code run once a process, in its template (the library's imports): every fresh state
        is a fork of it (`fresh`, `replay`).
    preamble
        Code run first in each fresh state (the workflow's names: its paths, its trait); a
        caller may set it again before the next `fresh`.
    output_chars
        The characters of a step's output kept (its first and last halves).
    """

    def __init__(
        self,
        env: SandboxEnvironment,
        python: str,
        *,
        library: str = "",
        preamble: str = "",
        output_chars: int = 8000,
    ) -> None:
        self.env = unproxied(env)
        self.python, self.library, self.preamble = python, library, preamble
        self.output_chars = output_chars
        self.process: asyncio.subprocess.Process | None = None
        #: how many times a process was started (the first start and each restart), and how
        #: many times a running one was reset to its template (`fresh`, `replay`)
        self.starts = 0
        self.resets = 0
        #: requests sent, and frames passed over: on the channel, those carrying another
        #: request's id; in the kernel, those another process or another request wrote
        self.requests = 0
        self.passed_over = 0

    def _launch(self) -> tuple[list[str], str | None, dict[str, str] | None]:
        command = [self.python, "-c", _server_source()]
        if isinstance(self.env, HostFolderSandbox):
            return self.env.process_argv(command), str(self.env.folder), None
        directory = _local_directory(self.env)
        if directory is None:
            raise KernelError(
                f"the kernel runs in the bwrap, genotex-podman and local sandboxes, not in "
                f"{type(self.env).__name__}"
            )
        scratch = Path(directory) / ".kernel-tmp"
        scratch.mkdir(exist_ok=True)
        return command, directory, {**os.environ, "TMPDIR": str(scratch)}

    async def start(self) -> None:
        """Start the process (a running one is stopped first), run the library in its
        template, then the preamble in its first state.
        """
        await self.stop()
        argv, cwd, environment = self._launch()
        self.process = await asyncio.create_subprocess_exec(
            *argv,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            cwd=cwd,
            env=environment,
            limit=_LINE_BYTES,
            start_new_session=True,
        )
        self.starts += 1
        ready = await self._answer(START_SECONDS)
        if not isinstance(ready, dict) or not ready.get("ready"):
            said = await self._stderr()
            await self.stop()
            raise KernelError(f"the kernel did not start in the sandbox: {said or 'no answer'}")
        if self.library:
            run = await self.run(self.library, "<preamble>", START_SECONDS)
            if not run.ok:
                raise KernelError(f"the kernel's library failed: {run.error or 'interrupted'}")
        await self._names()

    async def _names(self) -> None:
        """The preamble, run in a fresh state."""
        if self.preamble:
            run = await self.run(self.preamble, "<names>", START_SECONDS)
            if not run.ok:
                raise KernelError(f"the kernel's preamble failed: {run.error or 'interrupted'}")

    async def fresh(self) -> None:
        """A fresh state: the running process reset to its template (every process the steps
        started ended), then the preamble; a new process when none runs or it cannot reset.
        """
        if await self.reset(START_SECONDS):
            await self._names()
        else:
            await self.start()

    async def run(self, code: str, name: str, timeout: float) -> StepRun:
        """Run one step's code; past `timeout` seconds the step is interrupted (state lost).

        The answer taken is the one that carries this request's id; frames with another id
        (a step writing on the kernel's channel) are passed over. A line that is no frame,
        a kernel that died, or one that does not read its input within the step's time,
        ends the step as interrupted, with what happened as its error: the caller replays.
        """
        if self.process is None:
            await self.start()
        assert self.process is not None and self.process.stdin is not None
        before = self.env.limits_before() if isinstance(self.env, HostFolderSandbox) else None
        self.requests += 1
        ident = f"{self.requests}-{secrets.token_hex(8)}"
        request = {"id": ident, "code": code, "name": name, "limit": self.output_chars}
        started = time.monotonic()
        try:
            self.process.stdin.write(json.dumps(request).encode() + b"\n")
            await asyncio.wait_for(self.process.stdin.drain(), max(timeout, 0.001))
        except (BrokenPipeError, ConnectionResetError):
            pass  # the process is gone: its answer is None below
        except TimeoutError:  # the kernel reads no input (a step holds it, or forged an answer)
            return await self._lost(name, timeout, round(time.monotonic() - started, 3), before)
        left = max(timeout - (time.monotonic() - started), 0.001)
        answer = await self._answer(left, ident)
        seconds = round(time.monotonic() - started, 3)
        if isinstance(answer, dict) and isinstance(answer.get("broken"), str):
            answer = f"it wrote {answer['broken'][:80]} where the kernel's answer goes"
        if isinstance(answer, str):
            return await self._broken(name, answer, seconds, before)
        if answer is None:
            return await self._lost(name, timeout, seconds, before)
        inner = answer.get("passed_over")
        if isinstance(inner, int) and not isinstance(inner, bool) and inner > 0:
            self.passed_over += inner  # passed over by the kernel's supervisor
        self._check_limits(0, "", before)
        output, cut = clip_output(str(answer.get("output", "")), self.output_chars)
        return StepRun(
            output=output,
            error=answer.get("error") if isinstance(answer.get("error"), str) else None,
            cut=cut or answer.get("cut") is True,
            seconds=seconds,
        )

    async def _broken(
        self, name: str, why: str, seconds: float, before: tuple[int, int] | None
    ) -> StepRun:
        """A line on the channel that is no frame: the kernel is stopped, the state is lost."""
        await self.stop(wait=0)
        self._check_limits(0, "", before)
        return StepRun("", f"{name} broke the kernel's protocol ({why}); the kernel was "
                       "restarted", False, seconds, interrupted=True)  # fmt: skip

    async def _lost(
        self, name: str, timeout: float, seconds: float, before: tuple[int, int] | None
    ) -> StepRun:
        """The step gave no answer: it ran past its time, or the process died under it."""
        process = self.process
        if process is not None and process.returncode is None and process.stdout is not None:
            if process.stdout.at_eof():  # the channel closed: give the process time to end
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(process.wait(), 2)
        alive = process is not None and process.returncode is None
        said = "" if alive else await self._stderr()
        code = -9 if alive or process is None else (process.returncode or 0)
        await self.stop(wait=0 if alive else 5)  # a step still running is killed at once
        self._check_limits(code, said, before)
        if alive:
            return StepRun("", f"{name} ran past its {timeout:g} s and was interrupted", False,
                           seconds, interrupted=True)  # fmt: skip
        return StepRun("", f"the kernel died during {name} (exit {code}): {said[-2000:]}", False,
                       seconds, interrupted=True)  # fmt: skip

    def _check_limits(self, code: int, said: str, before: tuple[int, int] | None) -> None:
        if before is not None and isinstance(self.env, HostFolderSandbox):
            result = ExecResult(success=code == 0, returncode=code, stdout="", stderr=said)
            self.env.check_limits(result, before)

    async def replay(self, steps: Sequence[tuple[str, str]], timeout: float) -> list[StepRun]:
        """A fresh state (`fresh`), then each kept step's code again (`(name, code)`), in
        order: the state those steps left, rebuilt.
        """
        await self.fresh()
        return [await self.run(code, name, timeout) for name, code in steps]

    async def reset(self, timeout: float) -> bool:
        """Back to the state the library left, in the running process: its worker and every
        process the steps started are killed, and the next step runs in a fresh fork of the
        template (`_kernel_server`). False when there is no running kernel or it could not
        reset (the caller then starts a new one).
        """
        process = self.process
        if process is None or process.returncode is not None or process.stdin is None:
            return False
        self.requests += 1
        ident = f"{self.requests}-{secrets.token_hex(8)}"
        try:
            process.stdin.write(json.dumps({"id": ident, "reset": True}).encode() + b"\n")
            await asyncio.wait_for(process.stdin.drain(), max(timeout, 0.001))
        except (BrokenPipeError, ConnectionResetError, TimeoutError):
            return False
        answer = await self._answer(timeout, ident)
        if not isinstance(answer, dict) or answer.get("reset") is not True:
            return False
        self.resets += 1
        return True

    async def stop(self, wait: float = 5) -> None:
        """End the process (end of input, then after `wait` seconds a kill), and under podman
        every process left.
        """
        process, self.process = self.process, None
        if process is None:
            return
        if process.stdin is not None:
            with contextlib.suppress(Exception):
                process.stdin.close()
        try:
            await asyncio.wait_for(process.wait(), wait)
        except TimeoutError:
            with contextlib.suppress(ProcessLookupError):
                process.kill()
            await process.wait()
        if isinstance(self.env, HostFolderSandbox):
            await self.env.quiesce()
        else:  # local: what the steps started, in the kernel's own session
            with contextlib.suppress(OSError):
                os.killpg(process.pid, signal.SIGKILL)

    async def _answer(self, timeout: float, ident: str | None = None) -> dict | str | None:
        """The next frame (with `ident`: the next that carries it), None when none came in
        time or the channel closed, or why a line was no frame (a str).
        """
        assert self.process is not None and self.process.stdout is not None
        deadline = time.monotonic() + max(timeout, 0.001)
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            try:
                line = await asyncio.wait_for(self.process.stdout.readline(), left)
            except TimeoutError:
                return None
            except ValueError:  # longer than a protocol line may be
                return f"a line longer than {_LINE_BYTES:,} bytes"
            if not line:
                return None
            try:
                answer = json.loads(line)
            except Exception:  # noqa: BLE001 - a line nested too deep raises RecursionError
                return "a line that is not a JSON frame"
            if not isinstance(answer, dict):
                return "a frame that is not an object"
            if ident is None or answer.get("id") == ident:
                return answer
            self.passed_over += 1  # a frame of another request (forged by a step): not ours

    async def _stderr(self) -> str:
        process = self.process
        if process is None or process.stderr is None:
            return ""
        with contextlib.suppress(Exception):
            data = await asyncio.wait_for(process.stderr.read(64 * 1024), 2)
            return data.decode("utf-8", "backslashreplace").strip()
        return ""

"""The two agents that need no model: the reference's answers copied in (`genotex/gold`,
every score 1.0: it checks the wiring) and genotex's non-LLM pipeline (`genotex/baseline`);
and how any solver here runs shell commands in a sample's sandbox (`run_commands`), noting
what each exit means (`note_command`).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.util import ExecResult, sandbox

from ..runs._scorer import PARTIAL_KEY
from ..sandboxes._sandbox_spec import last_line

__all__ = ["baseline", "gold", "note_command", "run_commands"]


@solver(name="gold")
def gold() -> Solver:
    """Copy the reference answers into `output/` (every score 1.0: checks the wiring)."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        for path, host in (state.metadata or {}).get("gold", {}).items():
            await sandbox().write_file(path, Path(host).read_bytes())
        return state

    return solve


@solver(name="baseline")
def baseline() -> Solver:
    """genotex's non-LLM pipeline in the sandbox: proposed recipes, preprocessing, regression."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        await run_commands(state, (state.metadata or {}).get("baseline", []))
        return state

    return solve


async def run_commands(state: TaskState, commands: Iterable[str]) -> None:
    """Run shell commands in the sample's sandbox, in order, each noted (`note_command`)."""
    for command in commands:
        result = await sandbox().exec(["sh", "-c", command], timeout=3600)
        note_command(state, command, result)


def note_command(state: TaskState, command: str, result: ExecResult[str]) -> None:
    """What a solver does with a command's exit: one that could not run (not found, not
    executable, killed by a signal) ends the sample with that as its failure reason; one that
    failed in part (exit 1 or 2: e.g. some problems not answered) is noted in the sample's
    store (the score's `partial_failures`) and the sample goes on.
    """
    code = result.returncode
    said = last_line(result.stderr or result.stdout)
    if code in (126, 127) or code < 0 or code >= 128:
        why = {126: "could not be executed", 127: "was not found"}.get(code, "was killed")
        raise RuntimeError(f"the command `{command[:200]}` {why} (exit {code}: {said})")
    if code != 0:
        noted = list(state.store.get(PARTIAL_KEY, []))
        noted.append({"command": command[:500], "exit": code, "said": said})
        state.store.set(PARTIAL_KEY, noted)

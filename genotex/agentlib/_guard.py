"""genotex's own pipelines kept out of reach of a step's code in the paper library's kernel.

GenoAgent's row measures the model: under `library=paper` its kernel holds the paper's
function library, one transformation a call. genotex's own one-call pipelines
(`genotex.preprocessing.preprocess_cohort`, `genotex.regression.answer_problem`,
`python -m genotex baseline`) are installed in the same interpreter (the library is built
on their parts), so a model that goes looking could have genotex do the analysis and be
measured for it. `guard_pipelines`, run by the kernel's preamble, refuses that at run
time, whatever the code's text:

- an import of a genotex module other than `genotex.agentlib` by step code (`import
  genotex.regression`, `from genotex.preprocessing import preprocess_cohort`) raises
  ImportError (Python's `__import__`, which every import statement calls, is wrapped; the
  library's own imports, made by genotex's files, pass);
- a process that runs genotex (`genotex ...`, `python -m genotex`), started by any means
  Python audits (`subprocess`, `os.system`, `os.exec*`, `os.posix_spawn`), is refused by
  an audit hook, which no code can remove once added.

Each refusal's message starts with `REFUSED`, which the team reads back from the step's
error to record that the agent reached for genotex's pipeline. It guards an honest
model that goes looking, not a process against itself: code set on getting round it
(through `sys.modules`, say) can, and would show as the library's own calls in no record.
"""

from __future__ import annotations

import builtins
import os
import shlex
import sys
from collections.abc import Callable, Sequence
from typing import Any

__all__ = ["KERNEL_MARK", "REFUSED", "guard_pipelines"]

#: How a refusal's message begins (the team looks for it in a step's error).
REFUSED = "genotex's own pipelines are not part of the paper's library"
_WHY = (
    f"{REFUSED} (library=paper): write the step with the library's functions; -S "
    "library=genotex runs GenoAgent over genotex's pipelines, as a row of its own"
)
_ALLOWED = ("genotex.agentlib",)
_RUN_EVENTS = ("subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.spawn")


def _from_step(depth: int) -> bool:
    """Whether the code `depth` frames up was compiled from a step (`<name>`), not a file."""
    try:
        frame = sys._getframe(depth)
    except ValueError:
        return False
    return frame.f_code.co_filename.startswith("<")


def _genotex_module(name: str, fromlist: Sequence[str] | None) -> bool:
    """Whether an import names a genotex module other than the library (a bare `genotex`
    counts unless only the library is taken from it).
    """
    if name != "genotex" and not name.startswith("genotex."):
        return False
    if name.startswith(_ALLOWED):
        return False
    if name == "genotex" and fromlist and all(f == "agentlib" for f in fromlist):
        return False
    return True


def _guarded_import(original: Callable[..., Any]) -> Callable[..., Any]:
    def guarded(name: str, globals: Any = None, locals: Any = None, fromlist: Any = (),  # noqa: A002
                level: int = 0) -> Any:  # fmt: skip
        if level == 0 and _genotex_module(name, fromlist) and _from_step(2):
            raise ImportError(f"import {name}: {_WHY}")
        return original(name, globals, locals, fromlist, level)

    return guarded


def _runs_genotex(words: Sequence[str]) -> bool:
    """Whether a command line runs genotex: its program, or `-m genotex` (a submodule too)."""
    for index, word in enumerate(words):
        if os.path.basename(word) == "genotex":
            return True
        if word == "-m" and index + 1 < len(words):
            module = words[index + 1]
            if module == "genotex" or module.startswith("genotex."):
                return True
    return False


def _words(event: str, args: tuple[Any, ...]) -> list[str]:
    """The command line an audited event starts."""
    if event == "os.system":
        try:
            return shlex.split(os.fsdecode(args[0]))
        except (ValueError, TypeError):
            return [str(args[0])]
    argv = args[1] if len(args) > 1 else ()
    if isinstance(argv, (str, bytes)):
        argv = [argv]
    words = [os.fsdecode(a) if isinstance(a, (str, bytes)) else str(a) for a in argv or ()]
    program = args[0]
    return [os.fsdecode(program) if isinstance(program, (str, bytes)) else "", *words]


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if event.startswith(_RUN_EVENTS) and _runs_genotex(_words(event, args)):
        raise PermissionError(f"running genotex: {_WHY}")


#: What GenoAgent's kernel process says of itself (its worker sets it before any step): the
#: guard is for that process alone, never for one that runs the preamble otherwise (a test).
KERNEL_MARK = "GENOTEX_KERNEL"


def guard_pipelines() -> None:
    """Refuse genotex's pipelines to step code from now on, in this process if it is
    GenoAgent's kernel (`KERNEL_MARK`); once a process. An audit hook cannot be removed, so
    nothing else is ever guarded.
    """
    if os.environ.get(KERNEL_MARK) != "1":
        return
    if getattr(builtins.__import__, "__genotex_guard__", False):
        return
    guarded = _guarded_import(builtins.__import__)
    guarded.__genotex_guard__ = True  # type: ignore[attr-defined]
    builtins.__import__ = guarded
    sys.addaudithook(_audit)

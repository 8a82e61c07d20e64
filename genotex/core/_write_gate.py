"""The gate every file genotex writes passes: never into a benchmark's reference answers.

`prepare_output_folder` checks a command's output folder once, before any work. This gate
checks each file as it is written, wherever the writer is (the library, the agent
library, a cache, a status file, a download, the demo), so a writer that never made an
output folder (`write_result`, `save_result`, `--cache-dir`, `--summary`) cannot land in
a reference either. A destination is compared by identity (`_reference_guard`): a link,
`..`, a bind mount or another case of the same folder is the same folder.

Only an operation that makes a benchmark writes its reference part, and only its own:
`download benchmark` into the folder it fetches, the demo into a folder it generates
(`making_reference(root)`). A benchmark folder made by another (a download under a
demo's `--out`) stays closed to them as to everyone.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import os
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Concatenate, ParamSpec, TypeVar

from ._descriptors import folders_at, open_folder
from ._reference_guard import (
    MARKER_NAME,
    WORKSPACE_NAME,
    WORKSPACE_NOTE,
    ReferenceTargetError,
    references_at,
    refuse_download_target,
    refuse_reference_target,
)

__all__ = [
    "filling_benchmark",
    "gate_write",
    "gated_folder",
    "generates_benchmark",
    "making_reference",
    "refuse_foreign_benchmark",
]

_LOCK = threading.Lock()
#: real paths of the benchmark folders being made in this process, each with its users
_MAKING: dict[Path, int] = {}


@contextlib.contextmanager
def making_reference(root: str | Path) -> Iterator[Path]:
    """While the block runs, files under `root` may be written even where they are a
    reference's answers: the caller makes that benchmark (a download, the demo).
    """
    real = Path(os.path.realpath(root))
    with _LOCK:
        _MAKING[real] = _MAKING.get(real, 0) + 1
    try:
        yield real
    finally:
        with _LOCK:
            _MAKING[real] -= 1
            if not _MAKING[real]:
                del _MAKING[real]


@contextlib.contextmanager
def filling_benchmark(folder: str | Path, *, what: str = "download folder") -> Iterator[None]:
    """While the block runs, a download may write under `folder`, once it is known to lie in
    no reference or in a downloaded benchmark's `input/` or `metadata/`
    (`refuse_download_target`): `download geo --out BENCH/input/GEO` completes the benchmark,
    where any other writer is refused. Only `folder`'s own real path is let through: a
    subfolder swapped for a link into the answers is still judged, and refused.
    """
    if not refuse_download_target(folder, what=what):
        yield
        return
    with making_reference(folder):
        yield


def _being_made(folder: Path) -> bool:
    with _LOCK:
        roots = list(_MAKING)
    return any(folder == root or root in folder.parents for root in roots)


def gate_write(path: str | Path, *, what: str = "file") -> Path:
    """`path`, once it is known not to land inside a benchmark's reference answers.

    Parameters
    ----------
    path
        The file about to be written (or replaced, or made a folder of files).
    what
        What the file is, for the sentence of a refusal ("result file", "cache entry").

    Raises
    ------
    ReferenceTargetError
        One sentence naming the file and the reference; nothing is written.
    """
    path = Path(path)
    folder = Path(os.path.realpath(path.parent))
    if not _being_made(folder):
        refuse_reference_target(path.parent, what=f"{what}'s folder", holding=False, below=False)
        _claim_workspace(folder)
    return path


def _walk_real(real: Path, *, make: bool) -> int:
    """A descriptor of the real (link-free) folder `real`, walked from `/` one name at a time
    without following a link (a name swapped for one since the check: OSError ELOOP or
    ENOTDIR); missing folders are made when `make`.
    """
    top = open_folder("/")
    try:
        with folders_at(top, real.parts[1:], make=make) as folder:
            return os.dup(folder)
    finally:
        os.close(top)


@contextlib.contextmanager
def gated_folder(path: str | Path, *, what: str = "file", make: bool = True) -> Iterator[int]:
    """The folder of `path`, opened once it is known to lie in no reference (`gate_write`),
    missing folders made only after that check: a descriptor to write in (`dir_fd`), so that
    a folder swapped for a link after the check cannot redirect the write (issue #72).

    The folder is opened through its real path, no link followed, then checked again by
    identity: what was checked is what is written in. A swap that lands between the two is
    refused in one sentence (`ReferenceTargetError`); nothing is written.
    """
    path = Path(path)
    gate_write(path, what=what)
    real = Path(os.path.realpath(path.parent))
    try:
        folder = _walk_real(real, make=make)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR):
            raise ReferenceTargetError(
                f"the {what}'s folder changed while it was written (a name on its way became "
                "a link); nothing was written: write it again",
                path=path,
            ) from None
        raise
    try:
        if not _being_made(real):  # the opened folder, checked by what it is
            refuse_reference_target(f"/proc/self/fd/{folder}", what=f"{what}'s folder",
                                    holding=False, below=False)  # fmt: skip
        yield folder
    finally:
        os.close(folder)


def _claim_workspace(folder: Path) -> None:
    """Leave the workspace sign in the `output/` that `folder` is or lies in, when that
    `output/` sits beside a `metadata/task_info.json` (the layout a reference shares) and
    holds no answers yet: the gate has just found it is no reference, so the answers
    genotex writes next are this analysis's own, and later writes are not taken for a
    reference's. A download, a demo's root or a clone with `code/` is never marked; a sign
    that cannot be written is left to the write itself to report.
    """
    output = next((p for p in (folder, *folder.parents) if p.name == "output"), None)
    if output is None:
        return
    root = output.parent
    if not (root / "metadata" / "task_info.json").is_file() or os.path.lexists(
        output / WORKSPACE_NAME
    ):
        return
    if any(os.path.lexists(root / name) for name in (MARKER_NAME, "reference", "code")):
        return
    try:
        output.mkdir(parents=True, exist_ok=True)
        handle = os.open(
            output / WORKSPACE_NAME, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644
        )
    except OSError:  # made by a writer beside this one, or a folder not writable
        return
    with os.fdopen(handle, "w", encoding="utf-8") as sign:
        sign.write(WORKSPACE_NOTE)


def refuse_foreign_benchmark(folder: str | Path) -> None:
    """Refuse to generate a benchmark into `folder` when it is a benchmark genotex did not
    generate, or lies in one: a download (its marker at or above it), a folder inside
    another's reference answers, or the root of one whose reference is not a demo's own
    `reference/output` (the Hub copy cloned whole: its inputs and task_info would be
    written over). A benchmark merely beside it, or the demo's own folder, is no reason.
    """
    real = Path(os.path.realpath(folder))
    own = real / "reference" / "output"
    marked = [p for p in (real, *real.parents) if (p / MARKER_NAME).exists()]
    foreign = marked or [r for r in references_at(real) if Path(os.path.realpath(r)) != own]
    if foreign:
        raise ReferenceTargetError(
            f"the folder is or lies in a benchmark genotex did not generate ({foreign[0]}): "
            "a demo would write over its files; nothing was written: give a new folder",
            path=Path(folder),
        )
    refuse_reference_target(folder, what="demo's folder", holding=False, below=False)


P = ParamSpec("P")
R = TypeVar("R")


def generates_benchmark(
    function: Callable[Concatenate[str | Path, P], R],
) -> Callable[Concatenate[str | Path, P], R]:
    """For a generator of benchmarks (the demo's): it writes the reference answers of the
    folder it is given, and is refused over one it did not make (a download's, or a folder
    inside another benchmark's answers); a demo's own folder is generated again in place.
    """

    @functools.wraps(function)
    def generate(folder: str | Path, *args: P.args, **kwargs: P.kwargs) -> R:
        refuse_foreign_benchmark(folder)
        with making_reference(folder):
            return function(folder, *args, **kwargs)

    return generate

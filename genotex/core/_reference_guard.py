"""One rule for every write: nothing genotex writes lands in a benchmark's reference answers.

A reference folder is known three ways, without the user saying so:

- a downloaded benchmark's marker (`genotex-benchmark.json`) in the target or one of its
  parents: the Hub copy keeps the reference answers under `output/` beside the marker;
- the published layout without a marker (the Hub copy cloned whole, or a copy of its parts):
  `output/` holding answers (`regress/<trait>/significant_genes_condition_*.json`) beside
  `metadata/task_info.json`, with no `reference/` beside it, when `code/` (the experts'
  notebooks) is there too or `output/` has no workspace sign. A working folder has the
  same shape (an agent's, or one `genotex regress` writes into by default), so genotex
  marks it: the first time it writes under such an `output/` holding no answers yet, and
  in each sample folder the harness lays out, it leaves `output/genotex-workspace.json`
  (`WORKSPACE_NAME`). Answers beside that sign are an analysis's own, never a reference;
- the demo's layout: `reference/output/` beside `metadata/` and `input/`;

and by the `-r`/`--reference` of the same call (`references=`). Folders are compared by
identity (device and inode), so a second name of a reference (a link, `..`, a bind mount,
another case on a case-insensitive disk) is the reference; a bind mount is also looked
through, to the benchmark around the folder it shows. A target that is, holds or lies
inside one is refused in one sentence before anything is written
(`refuse_reference_target`), by `prepare_output_folder` for every command that makes an
output folder; only the commands that make a reference (`download`, `demo`) write there.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import re
import select
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Any, BinaryIO

from ._errors import GenotexError

__all__ = [
    "MARKER_NAME",
    "WORKSPACE_NAME",
    "WORKSPACE_NOTE",
    "ReferenceTargetError",
    "known_references",
    "references_at",
    "refuse_download_target",
    "refuse_reference_target",
]

#: The marker a downloaded benchmark keeps at its root (read by `core._marker`; defined here,
#: below it, so that the write rule needs nothing of the marker's module).
MARKER_NAME = "genotex-benchmark.json"
#: The sign of a working folder, in its `output/`: the answers beside it are an analysis's
#: own (written by genotex, or in a harness sample's folder), not a benchmark's reference.
WORKSPACE_NAME = "genotex-workspace.json"
#: What the workspace sign says to whoever opens it (the same bytes every time).
WORKSPACE_NOTE = (
    '{"genotex": "workspace", "note": "the answers in this output folder are an analysis\'s '
    "own, not a benchmark's reference: genotex writes here\"}\n"
)
#: How deep below a target the rule looks for reference answers it would hold.
_DEPTH = 3
#: A target holds a reference it would write over: one at most two levels below it
#: (`BENCH/output`, `BENCH/reference/output`, where a writer's own `output/` tree goes); a
#: folder that merely contains a benchmark deeper down (a scratch folder) is not refused.
_HOLDS = 2


class ReferenceTargetError(GenotexError):
    """A write would land in (or over) a benchmark's reference answers."""


def _answer_in(folder: str, stage: str) -> bool:
    """Whether the trait folder `folder` of `stage` holds an answer of that stage: a result
    file under `regress/`, a trait's record under `preprocess/`.
    """
    try:
        with os.scandir(folder) as entries:
            for entry in entries:
                if stage == "regress" and entry.name.startswith("significant_genes_condition_"):
                    return True
                if stage == "preprocess" and entry.name == "cohort_info.json":
                    return True
    except OSError:
        return False
    return False


def _holds_answers(folder: Path) -> bool:
    """Whether `folder` holds answers of either kind: `regress/<trait>/significant_genes_
    condition_*.json` or `preprocess/<trait>/cohort_info.json`. Every trait folder is looked
    at until one holds them (no cut-off: a reference is never taken for none because empty
    folders are listed first); the time is bounded by what the folder holds.
    """
    for stage in ("regress", "preprocess"):
        try:
            with os.scandir(folder / stage) as traits:
                for trait in traits:
                    if trait.is_dir(follow_symlinks=False) and _answer_in(trait.path, stage):
                        return True
        except OSError:
            continue
    return False


def references_at(folder: Path) -> list[Path]:
    """The reference folders a benchmark root `folder` has, by the three ways above: a
    downloaded benchmark, or the published layout without a marker, is protected whole (its
    inputs, metadata, code and marker as its answers); the demo's layout, its `reference/`.
    """
    output = folder / "output"
    if (folder / MARKER_NAME).is_file():
        return [folder]  # a download: the whole of it, marker, inputs and metadata included
    is_bench = (folder / "metadata").is_dir() and (folder / "input").is_dir()
    if is_bench and (folder / "reference" / "output").is_dir():
        return [folder / "reference" / "output"]
    if output.is_dir() and _published(folder) and _holds_answers(output):
        return [folder]  # the Hub layout without a marker, whole
    return []


def _is_root(reference: Path) -> bool:
    """Whether a reference folder is a benchmark root protected whole (not an answers folder)."""
    return (reference / "metadata").is_dir() or (reference / MARKER_NAME).is_file()


def _published(folder: Path) -> bool:
    """Whether `folder` is laid out as the published benchmark without a marker: its
    `code/` (the experts' notebooks) beside `input/` and `metadata/`, or its
    `metadata/task_info.json` beside an `output/` with no workspace sign.
    """
    if all((folder / name).is_dir() for name in ("code", "input", "metadata")):
        return True
    return (folder / "metadata" / "task_info.json").is_file() and not os.path.lexists(
        folder / "output" / WORKSPACE_NAME
    )


def _unescape(field: str) -> str:
    """A mountinfo path: spaces, tabs, newlines and backslashes are written as octal."""
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), field)


def _parsed(text: str) -> list[tuple[str, Path, Path]]:
    """(device, root within its file system, mount point) of each line of a mountinfo."""
    mounts = []
    for line in text.splitlines():
        fields = line.split()
        if len(fields) > 4:
            mounts.append((fields[2], Path(_unescape(fields[3])), Path(_unescape(fields[4]))))
    return mounts


class _MountTable:
    """The mounts of this process, parsed once, and again only when the kernel says they changed.

    The gate looks at them for every file written (a bind mount is another name of a
    folder); parsing them each time was most of its cost. `/proc/self/mountinfo` is kept
    open and polled: a mount or unmount since it was read marks it with a priority event
    (proc(5)). A forked child opens its own.
    """

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.pid: int | None = None
        self.handle: BinaryIO | None = None
        self.poller: Any = None
        self.mounts: list[tuple[str, Path, Path]] = []

    def current(self) -> list[tuple[str, Path, Path]]:
        with self.lock:
            if self.pid != os.getpid() or self.handle is None:
                self._open()
            elif self.poller.poll(0):
                self._read()
            return self.mounts

    def close(self) -> None:
        """Close the kept file (at exit, and in a forked child before it opens its own)."""
        if self.handle is not None:
            with contextlib.suppress(OSError):
                self.handle.close()
            self.handle = None

    def _open(self) -> None:
        self.close()
        self.pid = os.getpid()
        try:
            self.handle = open("/proc/self/mountinfo", "rb")  # noqa: SIM115 - kept open to poll
        except OSError:
            self.handle, self.mounts = None, []
            return
        self.poller = select.poll()
        self.poller.register(self.handle, select.POLLPRI | select.POLLERR)
        self._read()

    def _read(self) -> None:
        assert self.handle is not None
        try:
            self.handle.seek(0)
            self.mounts = _parsed(self.handle.read(4 * 2**20).decode("utf-8", "replace"))
        except OSError:
            self.close()
            self.mounts = []


_MOUNT_TABLE = _MountTable()
atexit.register(_MOUNT_TABLE.close)  # no unclosed-file warning when the interpreter ends


def _mounts() -> list[tuple[str, Path, Path]]:
    """(device, root within its file system, mount point) of each mount of this process."""
    return _MOUNT_TABLE.current()


def _through_mounts(real: Path) -> Path | None:
    """`real`'s name through the mount that shows its file system whole, when `real` lies in a
    bind mount of a folder (`mount --bind BENCH/output /mnt/x`: /mnt/x/... is BENCH/output/...);
    None when that name is `real` itself or cannot be told.
    """
    mounts = _mounts()
    around = {real, *real.parents}  # a set: a gate runs this for every file written
    holding = [m for m in mounts if m[2] in around]
    if not holding:
        return None
    device, root, point = max(holding, key=lambda m: len(m[2].parts))
    if root == Path("/"):
        return None
    above = {root, *root.parents}
    wholes = [m for m in mounts if m[0] == device and m[1] in above]
    if not wholes:
        return None
    _, whole_root, whole_point = min(wholes, key=lambda m: len(m[1].parts))
    name = whole_point / root.relative_to(whole_root) / real.relative_to(point)
    return name if name != real else None


def _names(target: str | Path) -> list[Path]:
    """The names of `target` the rule looks around: its real path (links and `..` resolved)
    and, in a bind mount, its name where its file system is mounted whole.
    """
    real = Path(os.path.realpath(target))
    other = _through_mounts(real)
    return [real] if other is None else [real, Path(os.path.realpath(other))]


def _identity(path: Path) -> tuple[int, int] | None:
    """(device, inode) of an existing path: one folder has one, whatever name reaches it (a
    link, a bind mount, another case on a case-insensitive disk).
    """
    try:
        status = os.stat(path)
    except OSError:
        return None
    return (status.st_dev, status.st_ino)


def known_references(
    target: str | Path, references: Iterable[str | Path] = (), *, below: bool = True
) -> list[Path]:
    """Every reference folder the rule knows of around `target` (real paths, deduplicated):
    those given, those of each benchmark root at or above any name of it, and (`below`)
    those it holds.
    """
    found = [Path(os.path.realpath(r)) for r in references]
    for real in _names(target):
        for folder in (real, *real.parents):
            found += [Path(os.path.realpath(r)) for r in references_at(folder)]
        if below and real.is_dir():  # a benchmark root the target holds
            for current, folders, _ in os.walk(real):
                level = len(Path(current).relative_to(real).parts)
                if level >= _DEPTH:
                    folders[:] = []
                if level:
                    found += [Path(os.path.realpath(r)) for r in references_at(Path(current))]
    return list(dict.fromkeys(found))


def _relation(target: Path, reference: Path, holding: bool) -> str | None:
    """How `target` stands to `reference`, compared by identity: "is", "lies inside",
    "holds" (with `holding`), or None.
    """
    wanted = _identity(reference)
    if wanted is None:
        return None
    mine = _identity(target)
    if mine == wanted:
        return "is"
    if any(_identity(parent) == wanted for parent in target.parents):
        return "lies inside"
    if holding and mine is not None:
        # a root protected whole is held by its parent; an answers folder (`BENCH/reference/
        # output`) by the two folders above it, where a writer's own `output/` tree goes
        depth = 1 if _is_root(reference) else _HOLDS
        if any(_identity(parent) == mine for parent in reference.parents[:depth]):
            return "holds"
    return None


def refuse_reference_target(
    target: str | Path,
    *,
    references: Iterable[str | Path] = (),
    what: str = "output folder",
    holding: bool = True,
    below: bool = True,
    remakes_root: bool = False,
) -> None:
    """Raise `ReferenceTargetError` when `target` is, holds or lies inside a reference folder
    (with `holding=False`, only is or lies inside: the folder of one file written, which
    may well be a benchmark's root; with `below=False`, references below `target` are not
    looked for: a file's folder is checked against what is around it; with `remakes_root`,
    `target` may be a benchmark root protected whole: the caller makes it again, as a
    resumed download does).
    """
    names = _names(target)  # in a bind mount, the name a protected root is above of too
    for reference in known_references(target, references, below=below and holding):
        how = next(filter(None, (_relation(name, reference, holding) for name in names)), None)
        if how is None or (remakes_root and how == "is" and _is_root(reference)):
            continue
        whole = "the benchmark (its inputs, metadata and reference answers are never written)"
        named = whole if _is_root(reference) else "the benchmark's reference answers"
        raise ReferenceTargetError(
            f"the {what} {how} {named} ({reference}); nothing was written: give a folder "
            f"outside it{_unmarked_hint(reference)}",
            path=Path(target),
        )


#: The folders of a benchmark protected whole that a download fills: its raw inputs and its
#: metadata (the gene table); never its answers, its code or its marker.
FILLED_BY_DOWNLOADS = ("input", "metadata")


def refuse_download_target(target: str | Path, *, what: str = "download folder") -> bool:
    """Raise `ReferenceTargetError` unless `target`, a folder a download fills, lies in no
    reference, or in a downloaded benchmark's `input/` or `metadata/` (where `download geo`,
    `tcga` and `gene-info` put what they fetch into a benchmark they complete). Its answers
    (`output/`), its code, its marker, its root and a demo's `reference/output` are refused.
    Returns whether `target` lies in such a benchmark (its writes then need its leave).
    """
    names, inside = _names(target), False
    for reference in known_references(target, below=False):
        how = next(filter(None, (_relation(name, reference, False) for name in names)), None)
        if how is None:
            continue
        if _is_root(reference):
            filled = [reference / place for place in FILLED_BY_DOWNLOADS]
            if any(_relation(name, place, False) for name in names for place in filled):
                inside = True
                continue
            answers = any(_relation(name, reference / "output", False) for name in names)
            named = ("the benchmark's reference answers" if answers
                     else "the benchmark, outside its input/ and metadata/")  # fmt: skip
        else:
            named = "the benchmark's reference answers"
        raise ReferenceTargetError(
            f"the {what} {how} {named} ({reference}); nothing was written: download into its "
            "input/ (or metadata/ for the gene table), or a folder outside it",
            path=Path(target),
        )
    return inside


def _unmarked_hint(reference: Path) -> str:
    """For answers known only by their `task_info.json` (no marker, no `code/`): how to say
    they are a working folder's own (one genotex wrote into before it left its sign).
    """
    root = reference if _is_root(reference) else reference.parent
    if (root / MARKER_NAME).is_file() or (root / "code").is_dir() or (root / "reference").exists():
        return ""
    return (
        f" (if they are your own analysis's answers, not a reference, create "
        f"{root / 'output' / WORKSPACE_NAME} to say so)"
    )

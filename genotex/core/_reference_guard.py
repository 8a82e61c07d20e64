"""One rule for every write: nothing genotex writes lands in a benchmark's reference answers.

A reference folder is known three ways, without the user saying so:

- a downloaded benchmark's marker (`genotex-benchmark.json`) in the target or one of its
  parents: the Hub copy keeps the reference answers under `output/` beside the marker;
- the published layout without a marker (the Hub copy cloned whole): `output/` beside
  `metadata/`, `input/` and `code/` (the experts' notebooks), holding reference answers
  (`regress/<trait>/significant_genes_condition_*.json`), with no `reference/` beside it.
  An agent's working folder (`input/`, `metadata/`, its own `output/`) has no `code/`,
  so its own answers are never taken for a reference;
- the demo's layout: `reference/output/` beside `metadata/` and `input/`;

and by the `-r`/`--reference` of the same call (`references=`). A target that is, holds
or lies inside one is refused in one sentence before anything is written
(`refuse_reference_target`), by `prepare_output_folder` for every command that makes an
output folder; only the commands that make a reference (`download`, `demo`) write there.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from ._errors import GenotexError

__all__ = ["MARKER_NAME", "ReferenceTargetError", "known_references", "refuse_reference_target"]

#: The marker a downloaded benchmark keeps at its root (read by `core._marker`; defined here,
#: below it, so that the write rule needs nothing of the marker's module).
MARKER_NAME = "genotex-benchmark.json"
#: How deep below a target the rule looks for reference answers it would hold.
_DEPTH = 3
#: A target holds a reference it would write over: one at most two levels below it
#: (`BENCH/output`, `BENCH/reference/output`, where a writer's own `output/` tree goes); a
#: folder that merely contains a benchmark deeper down (a scratch folder) is not refused.
_HOLDS = 2


class ReferenceTargetError(GenotexError):
    """A write would land in (or over) a benchmark's reference answers."""


def _holds_answers(folder: Path, depth: int = 2) -> bool:
    """Whether `folder/regress/*/` holds a `significant_genes_condition_*.json` (bounded)."""
    regress = folder / "regress"
    try:
        traits = list(os.scandir(regress)) if regress.is_dir() else []
    except OSError:
        return False
    for trait in traits[:10_000]:
        if trait.is_dir(follow_symlinks=False):
            try:
                names = os.listdir(trait.path)
            except OSError:
                continue
            if any(n.startswith("significant_genes_condition_") for n in names):
                return True
    return False


def _references_at(folder: Path) -> list[Path]:
    """The reference folders a benchmark root `folder` has, by the three ways above."""
    found = []
    output = folder / "output"
    if (folder / MARKER_NAME).is_file() and output.is_dir():
        found.append(output)  # the Hub layout: the reference part is output/
    is_bench = (folder / "metadata").is_dir() and (folder / "input").is_dir()
    if is_bench and (folder / "reference" / "output").is_dir():
        found.append(folder / "reference" / "output")
    elif is_bench and (folder / "code").is_dir() and output.is_dir() and _holds_answers(output):
        found.append(output)  # the Hub copy cloned whole, no marker: code/ beside output/
    return found


def known_references(target: str | Path, references: Iterable[str | Path] = ()) -> list[Path]:
    """Every reference folder the rule knows of around `target` (real paths, deduplicated):
    those given, those of each benchmark root at or above it, and those it holds.
    """
    real = Path(os.path.realpath(target))
    found = [Path(os.path.realpath(r)) for r in references]
    for folder in (real, *real.parents):
        found += [Path(os.path.realpath(r)) for r in _references_at(folder)]
    if real.is_dir():  # below: a benchmark root the target holds
        for current, folders, _ in os.walk(real):
            level = len(Path(current).relative_to(real).parts)
            if level >= _DEPTH:
                folders[:] = []
            if level:
                found += [Path(os.path.realpath(r)) for r in _references_at(Path(current))]
    return list(dict.fromkeys(found))


def refuse_reference_target(
    target: str | Path,
    *,
    references: Iterable[str | Path] = (),
    what: str = "output folder",
    holding: bool = True,
) -> None:
    """Raise `ReferenceTargetError` when `target` is, holds or lies inside a reference folder
    (with `holding=False`, only is or lies inside: the folder of one file written, which
    may well be a benchmark's root).
    """
    real = Path(os.path.realpath(target))
    for reference in known_references(target, references):
        if real == reference:
            how = "is"
        elif reference in real.parents:
            how = "lies inside"
        elif holding and real in reference.parents[:_HOLDS]:
            how = "holds"
        else:
            continue
        raise ReferenceTargetError(
            f"the {what} {how} the benchmark's reference answers ({reference}); nothing was "
            "written: give a folder outside it",
            path=Path(target),
        )

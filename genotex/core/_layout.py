"""The GenoTEX directory contract (spec/layout.md): names, paths, problems, categories."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from ._errors import GenotexError, UnsafeNameError
from ._reference_guard import refuse_reference_target

__all__ = [
    "CATEGORIES",
    "ProblemId",
    "category_of",
    "check_relative",
    "check_safe_name",
    "is_one_step",
    "metadata_beside",
    "normalize_trait_name",
    "output_path",
    "prepare_output_folder",
    "regress_file_name",
    "condition_from_regress_file",
]

UNCONDITIONAL = "Unconditional one-step"
CONDITIONAL = "Conditional one-step"
TWO_STEP = "Two-step"
#: The analysis categories of the paper, in the order they are reported.
CATEGORIES: tuple[str, ...] = (UNCONDITIONAL, CONDITIONAL, TWO_STEP)

_REGRESS_PREFIX = "significant_genes_condition_"
#: The longest file name most file systems take, in bytes.
MAX_NAME_BYTES = 255
#: A relative path from an untrusted file (a log, a manifest, a marker, the Hub's listing):
#: at most this many characters and parts.
MAX_PATH_CHARS = 1024
MAX_PATH_PARTS = 16


def check_safe_name(name: str, *, what: str = "name") -> str:
    """Return `name` unchanged, or raise if it could escape its folder or is empty."""
    if not isinstance(name, str) or not name.strip():
        raise UnsafeNameError(f"the {what} {name!r} is empty or not text")
    if name in {".", ".."} or any(bad in name for bad in ("/", "\\", "\x00")) or ".." in name:
        raise UnsafeNameError(f"the {what} {name!r} would escape its folder")
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in name):
        # a newline or tab in a name makes a tree digest's `path\tsize\tsha256` lines
        # ambiguous (two trees, one digest), and a line of a listing or a log two
        raise UnsafeNameError(f"the {what} {name!r} holds a control character")
    try:
        size = len(name.encode("utf-8"))
    except UnicodeEncodeError:  # a file name of bytes that are not UTF-8 (surrogate escapes)
        raise UnsafeNameError(f"the {what} {name!r} is not valid UTF-8") from None
    if size > MAX_NAME_BYTES:
        raise UnsafeNameError(
            f"the {what} {name[:40]!r}... is {size} bytes long; file names hold at most "
            f"{MAX_NAME_BYTES}"
        )
    return name


def check_relative(path: object, *, what: str = "path") -> tuple[str, ...]:
    """The parts of a safe relative POSIX path (no `..`, no absolute path, no empty part),
    each part a safe name (`check_safe_name`); UnsafeNameError otherwise.
    """
    if not isinstance(path, str) or not path or len(path) > MAX_PATH_CHARS:
        raise UnsafeNameError(f"the {what} {str(path)[:60]!r} is not a relative path")
    parts = tuple(path.split("/"))
    if len(parts) > MAX_PATH_PARTS:
        raise UnsafeNameError(f"the {what} {path[:60]!r} is nested too deep")
    for part in parts:
        check_safe_name(part, what=what)
    return parts


def output_path(root: str | Path, *parts: str) -> Path:
    """`root/part/...`, refused unless it stays inside `root` once resolved (symbolic links too).

    Every file genotex writes under an output folder goes through here: each
    part must pass `check_safe_name` (so no `..`, `/` or NUL from a recipe,
    a folder name or a command-line option), and the resolved path, links
    followed, must lie under the resolved root.
    """
    root = Path(root)
    for part in parts:
        check_safe_name(part, what="output name")
    path = root.joinpath(*parts)
    real_root = Path(os.path.realpath(root))
    real = Path(os.path.realpath(path))
    if real != real_root and real_root not in real.parents:
        raise UnsafeNameError(f"{path} would be written outside the output folder {root}")
    return path


def prepare_output_folder(
    folder: str | Path,
    *,
    what: str = "output folder",
    references: Iterable[str | Path] = (),
    makes_reference: bool = False,
    for_file: bool = False,
) -> Path:
    """Create `folder` if needed and check once, before any work, that files can be written there.

    Unless the caller makes a reference itself (`makes_reference`: `download`, `demo`),
    a folder that is, holds or lies inside a benchmark's reference answers (those known
    around it, and `references`, the same call's `-r`) is refused first
    (`refuse_reference_target`): nothing a user runs writes into a reference. With
    `for_file`, the folder only receives one named file, so it may hold a reference.

    Raises
    ------
    GenotexError
        One sentence naming the folder: it is or holds a reference, a file stands there,
        it cannot be created, or it cannot be written to (read-only, no permission, a
        read-only file system).
    """
    folder = Path(folder)
    if not makes_reference:
        refuse_reference_target(folder, references=references, what=what, holding=not for_file)
    if folder.exists() and not folder.is_dir():
        raise GenotexError(f"the {what} is a file, not a folder", path=folder)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        reason = exc.strerror or exc.__class__.__name__
        raise GenotexError(f"the {what} cannot be created ({reason})", path=folder) from None
    try:
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as exc:
        reason = exc.strerror or exc.__class__.__name__
        raise GenotexError(f"the {what} cannot be written to ({reason})", path=folder) from None
    return folder


def metadata_beside(reference: str | Path, name: str) -> Path:
    """A benchmark's metadata file (`task_info.json`, `gene_synonym.json`) for its reference
    folder: `metadata/` beside it (the published layout, `BENCH/output`) or beside its parent
    (the demo's, `BENCH/reference/output`), whichever holds it; else the first, for the
    error that names it.
    """
    reference = Path(reference)
    candidates = [reference.parent / "metadata" / name, reference.parent.parent / "metadata" / name]
    return next((c for c in candidates if c.is_file()), candidates[0])


def normalize_trait_name(trait: str) -> str:
    """Folder name of a trait: spaces become `_`, apostrophes are removed.

    `Crohn's Disease` -> `Crohns_Disease`; parentheses, hyphens and non-ASCII letters stay.
    """
    name = trait.strip().replace(" ", "_").replace("'", "").replace("\u2019", "")
    return check_safe_name(name, what="trait name")


def trait_label(name: str) -> str:
    """A trait folder's name as a reader writes it: `Autism_spectrum_disorder_(ASD)` ->
    `Autism spectrum disorder (ASD)` (for figures and tables, never for paths).
    """
    return " ".join(name.replace("_", " ").split())


def is_one_step(condition: str | None) -> bool:
    """True for the problems answered from one cohort: no condition, Age or Gender."""
    return condition is None or condition.lower() in {"age", "gender", "none"}


def category_of(condition: str | None) -> str:
    """The paper's category of a problem from its condition (`None`/"None" is unconditional)."""
    if condition is None or condition.lower() == "none":
        return UNCONDITIONAL
    if condition.lower() in {"age", "gender"}:
        return CONDITIONAL
    return TWO_STEP


@dataclass(frozen=True, order=True)
class ProblemId:
    """One question of the benchmark: the genes of `trait`, conditioned on `condition`."""

    trait: str
    condition: str | None = None

    @property
    def key(self) -> str:
        """`"<trait>|<condition>"` with `None` spelled out, as in the JSON reports."""
        return f"{self.trait}|{self.condition if self.condition is not None else 'None'}"

    @property
    def category(self) -> str:
        return category_of(self.condition)

    @property
    def one_step(self) -> bool:
        return is_one_step(self.condition)

    @classmethod
    def from_key(cls, key: str) -> ProblemId:
        trait, _, condition = key.partition("|")
        return cls(trait, None if condition in {"", "None"} else condition)


def regress_file_name(condition: str | None) -> str:
    """`significant_genes_condition_<C>.json` for a problem's condition (None -> "None")."""
    return f"{_REGRESS_PREFIX}{condition if condition is not None else 'None'}.json"


def condition_from_regress_file(file_name: str) -> str | None:
    """The condition a regression result file answers, or None if the name is not one."""
    if not (file_name.startswith(_REGRESS_PREFIX) and file_name.endswith(".json")):
        return None
    condition = file_name[len(_REGRESS_PREFIX) : -len(".json")]
    return condition or None

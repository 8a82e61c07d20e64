"""Where an MCP tool may read and write: real paths under the roots, bounded arguments.

A path argument is bounded before anything touches the disk; its real path
(links followed) must lie under the root it is relative to, and so must every
link inside a folder a tool reads; a write must also lie under a folder the
user named writable. A root that holds reference answers is found by
`reference_inside`, so the server can refuse to serve it.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from mcp.server.mcpserver.exceptions import ToolError

from ..core import UnsafeNameError, check_safe_name

__all__ = [
    "MAX_GENE_CHARS",
    "MAX_GENES",
    "MAX_PATH_CHARS",
    "Roots",
    "check_name",
    "is_under",
    "reference_inside",
]

#: Bounds on arguments, checked before any work.
MAX_PATH_CHARS = 4096
MAX_PATH_PARTS = 64
MAX_GENES = 50_000
MAX_GENE_CHARS = 100
#: Entries a tool may look at inside one folder it was given (links checked, files listed).
MAX_FOLDER_ENTRIES = 200_000


def _bounded_path(relative: object) -> str:
    """A path argument, refused before any work when it is not text or is too long."""
    if not isinstance(relative, str):
        raise ToolError("a path must be text")
    if len(relative) > MAX_PATH_CHARS or relative.count("/") >= MAX_PATH_PARTS:
        raise ToolError(f"the path {relative[:60]!r}... is longer than a path can be")
    if "\x00" in relative:
        raise ToolError("a path may not hold a NUL character")
    return relative


def check_name(value: object, what: str) -> str:
    """A trait or condition name: text that names one folder, of bounded length."""
    try:
        return check_safe_name(value, what=what)  # type: ignore[arg-type]
    except UnsafeNameError as exc:
        raise ToolError(str(exc)[:300]) from None


def is_under(path: Path, base: Path) -> bool:
    return path == base or base in path.parents


class Roots:
    """The folders the server may read (and those it may write); anything else is refused."""

    def __init__(self, roots: list[Path], writable: Iterable[Path] = ()) -> None:
        self.roots = [Path(os.path.realpath(r)) for r in roots]
        self.writable = [Path(os.path.realpath(w)) for w in writable]

    def base(self, root: object) -> Path:
        if not isinstance(root, int) or isinstance(root, bool) or not 0 <= root < len(self.roots):
            raise ToolError(f"there is no root {str(root)[:20]}; the server has {len(self.roots)}")
        return self.roots[root]

    def path(self, relative: object, root: object = 0) -> Path:
        """The real path of `relative` under root `root`, refused when it leaves the root."""
        base = self.base(root)
        real = Path(os.path.realpath(base / _bounded_path(relative)))
        if not is_under(real, base):
            raise ToolError(
                f"{str(relative)[:200]!r} is outside the root the server was started with"
            )
        return real

    def folder(self, relative: object, root: object = 0) -> Path:
        """A folder to read: its real path, refused if anything inside it links out of the root."""
        real, base = self.path(relative, root), self.base(root)
        seen = 0
        for current, folders, files in os.walk(real):
            for name in folders + files:
                seen += 1
                if seen > MAX_FOLDER_ENTRIES:
                    raise ToolError(f"{str(relative)[:200]!r} holds too many files to read")
                entry = os.path.join(current, name)
                if os.path.islink(entry) and not is_under(Path(os.path.realpath(entry)), base):
                    inside = os.path.relpath(entry, real)
                    raise ToolError(f"{inside!r} in {str(relative)[:200]!r} links out of the root")
        return real

    def writable_path(self, relative: object, root: object = 0) -> Path:
        """Where a tool may write: under the root, and under a folder named writable."""
        real = self.path(relative, root)
        if not any(is_under(real, w) for w in self.writable):
            named = ", ".join(str(w) for w in self.writable) or "no folder was named writable"
            raise ToolError(f"{str(relative)[:200]!r} is not under a writable folder ({named})")
        return real


def reference_inside(root: Path, *, depth: int = 3) -> Path | None:
    """A folder of reference answers within `depth` levels of `root` (a `regress/` folder holding
    `significant_genes_condition_*.json` files), or None.
    """
    base = Path(os.path.realpath(root))
    for current, folders, _ in os.walk(base):
        level = len(Path(current).relative_to(base).parts)
        if level >= depth:
            folders[:] = []
        if Path(current).name == "regress" and any(
            f.startswith("significant_genes_condition_")
            for _, _, names in os.walk(current)
            for f in names
        ):
            return Path(current)
    return None

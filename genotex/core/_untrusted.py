"""Guarded access to a submitted tree: nothing outside it, nothing too large, nothing fatal.

Everything under a prediction folder is untrusted (evaluation.md § 4). A file
is usable only if it resolves inside the tree's real path and is no larger
than the size limit; otherwise it is treated as unreadable and reported.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ._errors import GenotexError
from ._json import parse_json
from ._tables import MAX_COLUMNS

__all__ = ["RejectedFile", "GuardedTree", "MISSING", "DEFAULT_MAX_FILE_MB"]

DEFAULT_MAX_FILE_MB = 512


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


#: Returned for a file that does not exist (as opposed to one that is rejected).
MISSING: Any = _Missing()


class RejectedFile(Exception):
    """An untrusted file that exists but may not be read; `reason` is one sentence."""

    def __init__(self, relative: str, reason: str) -> None:
        super().__init__(f"{relative}: {reason}")
        self.relative = relative
        self.reason = reason


@dataclass(frozen=True)
class GuardedTree:
    """A folder whose files are read through one guard and reported relative to it.

    An untrusted tree (a submission) is confined to its real path and has a size
    limit; a trusted one (the reference) has neither, but its unreadable files
    are still reported rather than fatal. `prefix` marks the reference's reports.
    """

    root: Path
    given_root: Path
    max_bytes: int | None
    confined: bool
    prefix: str = ""
    max_columns: int | None = None  # the widest table read from it (None: no limit)

    @classmethod
    def untrusted(
        cls,
        root: str | Path,
        *,
        max_file_mb: float = DEFAULT_MAX_FILE_MB,
        max_columns: int = MAX_COLUMNS,
    ) -> GuardedTree:
        max_bytes = int(max_file_mb * 1024 * 1024)
        given = Path(os.path.abspath(root))  # whole: a Dask worker runs in another folder
        return cls(Path(os.path.realpath(root)), given, max_bytes, True, "", max_columns)

    @classmethod
    def trusted(cls, root: str | Path, *, prefix: str = "REF:") -> GuardedTree:
        return cls(Path(os.path.realpath(root)), Path(os.path.abspath(root)), None, False, prefix)

    def path(self, *parts: str) -> Path:
        """A path inside the tree as given (links are followed only when a file is read)."""
        return self.given_root.joinpath(*parts)

    def relative(self, path: Path) -> str:
        """`path` relative to the tree, as reported in `problems_found` (with the prefix)."""
        try:
            relative = path.relative_to(self.given_root).as_posix()
        except ValueError:
            relative = path.as_posix()
        return f"{self.prefix}{relative}"

    def exists(self, path: Path) -> bool:
        """Whether anything (even a dangling or escaping link) stands at `path`."""
        return os.path.lexists(path)

    def resolve(self, path: Path) -> Path:
        """The real path of an existing file, after the containment and size checks."""
        relative = self.relative(path)
        real = Path(os.path.realpath(path))
        if self.confined and real != self.root and self.root not in real.parents:
            raise RejectedFile(relative, "it is a symbolic link leading outside the submission")
        try:
            stat = real.stat()
        except OSError as exc:
            raise RejectedFile(relative, f"it cannot be opened ({exc.strerror or exc})") from None
        if not real.is_file():
            raise RejectedFile(relative, "it is not a regular file")
        if self.max_bytes is not None and stat.st_size > self.max_bytes:
            limit = self.max_bytes / (1024 * 1024)
            raise RejectedFile(relative, f"it is larger than the size limit ({limit:g} MB)")
        return real

    def read_json(self, path: Path) -> Any:
        """Parsed JSON of a file, `MISSING` when absent; any other failure is `RejectedFile`."""
        if not self.exists(path):
            return MISSING
        real = self.resolve(path)
        try:
            return parse_json(real.read_bytes())
        except OSError as exc:
            reason = f"it cannot be read ({exc.strerror or exc.__class__.__name__})"
            raise RejectedFile(self.relative(path), reason) from None
        except GenotexError as exc:
            raise RejectedFile(self.relative(path), exc.reason) from None

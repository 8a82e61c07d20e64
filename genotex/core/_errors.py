"""Domain errors: each carries the file at fault so that the CLI can say one clear sentence."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


class GenotexError(Exception):
    """Base class of every error genotex raises on purpose."""

    def __init__(self, message: str, *, path: str | Path | None = None) -> None:
        super().__init__(message)
        self.reason = message
        self.path = None if path is None else Path(path)

    def __str__(self) -> str:
        message = super().__str__()
        if self.path is None:
            return message
        return f"{self.path}: {message}"


class UnsafeNameError(GenotexError, ValueError):
    """A trait or condition name that would escape its folder (`..`, `/`, `\\`, NUL)."""


class TaskInfoError(GenotexError):
    """`task_info.json` is missing, unreadable, or not of the documented shape."""


class ReferenceTreeError(GenotexError):
    """The reference `output/` tree is missing or has neither `preprocess/` nor `regress/`."""


class PredictionTreeError(GenotexError):
    """The prediction folder given on the command line does not exist."""


def read_json(path: str | Path, error: type[GenotexError] = GenotexError) -> Any:
    """A JSON file's content; a file that cannot be read or parsed is `error`, naming it."""
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError) as exc:
        raise error(f"cannot be read as JSON ({exc.__class__.__name__})", path=path) from None

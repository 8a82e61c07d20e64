"""Domain errors: each carries the file at fault so that the CLI can say one clear sentence."""

from __future__ import annotations

from pathlib import Path


def extra_hint(extra: str) -> str:
    """How to add one of genotex's extras, said in an error: genotex is installed from its
    clone or a wheel built from it, never from the package index (where no genotex is).
    """
    return f"install genotex's [{extra}] extra (pip install -e '.[{extra}]' in its clone)"


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
    r"""A trait or condition name that would escape its folder (`..`, `/`, `\`, NUL)."""


class TaskInfoError(GenotexError):
    """`task_info.json` is missing, unreadable, or not of the documented shape."""


class ReferenceTreeError(GenotexError):
    """The reference `output/` tree is missing or has neither `preprocess/` nor `regress/`."""


class PredictionTreeError(GenotexError):
    """The prediction folder given on the command line does not exist."""

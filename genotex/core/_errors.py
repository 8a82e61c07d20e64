"""Domain errors: each carries the file at fault so that the CLI can say one clear sentence."""

from __future__ import annotations

from pathlib import Path


def _installed_from() -> tuple[bool, str | None]:
    """(installed editable from a clone, the file or folder it was installed from), read from
    the install's `direct_url.json` (PEP 610); (True, None) when it says nothing.
    """
    import json
    from importlib import metadata

    try:
        text = metadata.distribution("genotex").read_text("direct_url.json")
        found = json.loads(text) if text else {}
    except (metadata.PackageNotFoundError, ValueError, OSError):
        return True, None
    url = found.get("url") if isinstance(found, dict) else None
    editable = (
        bool((found.get("dir_info") or {}).get("editable")) if isinstance(found, dict) else True
    )
    where = url.removeprefix("file://") if isinstance(url, str) else None
    return editable or where is None, where


def extra_hint(extra: str) -> str:
    """How to add one of genotex's extras, said in an error: genotex is installed from its
    clone or a wheel built from it, never from the package index (where no genotex is); the
    hint is the one for the way this genotex was installed.
    """
    editable, where = _installed_from()
    if editable:
        return f"install genotex's [{extra}] extra (pip install -e '.[{extra}]' in its clone)"
    wheel = f"pip install '{where}[{extra}]', the wheel it came from"
    return f"install genotex's [{extra}] extra ({wheel})"


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

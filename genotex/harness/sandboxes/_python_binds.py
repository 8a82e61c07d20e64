"""The Python that runs genotex, bound read-only into bwrap: which folders, made passable,
and the import-path folders refused because they would show the agent the reference.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

__all__ = ["import_path_problem", "passable_parents", "python_binds", "python_folders"]

#: What the sandbox mounts itself: a folder of the import path that is one of them, or holds
#: one, is not bound over it.
_SANDBOX_FOLDERS = ("/tmp", "/home/agent", "/proc", "/dev", "/etc", "/usr")


def python_folders() -> list[str]:
    """The folders of the Python that runs genotex, bound read-only into bwrap: its prefixes,
    the genotex package, and the folders on its import path outside them (a `.pth` file's,
    an editable install's).
    """
    import genotex

    paths = {os.path.realpath(sys.prefix), os.path.realpath(sys.base_prefix)}
    prefixes = set(paths)
    package = os.path.realpath(os.path.dirname(genotex.__file__))
    if not any(package.startswith(p + os.sep) for p in paths):
        paths.add(package)  # an editable install: the package alone, not its checkout
    if sys.prefix != os.path.realpath(sys.prefix):  # the venv as named on PATH, too
        paths.add(sys.prefix)
    for entry in sys.path[1:]:  # not the first: the script's folder (or the current one)
        real = os.path.realpath(entry) if entry else ""
        inside = any(real == p or real.startswith(p + os.sep) for p in prefixes)
        checkout = os.path.isdir(os.path.join(real, "genotex"))  # its package alone is bound
        covers = any(f"{s}/".startswith(f"{real.rstrip('/')}/") for s in _SANDBOX_FOLDERS)
        if real and not inside and not checkout and not covers and os.path.isdir(real):
            paths.add(real)
    return sorted(p for p in paths if not p.startswith("/usr" + os.sep) and os.path.isdir(p))


def passable_parents(destinations: list[str]) -> list[str]:
    """bwrap's arguments that make every folder on the way to `destinations` (bar `/` and
    the system's) mode 755 before anything is bound there: bwrap run as root makes them
    700, which the agent's uid could not pass through.
    """
    made: set[str] = set()
    args: list[str] = []
    for destination in sorted(destinations):
        parts = Path(destination).parts[1:-1]
        for depth in range(1, len(parts) + 1):
            folder = "/" + "/".join(parts[:depth])
            if folder not in made and folder not in _SANDBOX_FOLDERS:
                made.add(folder)
                args += ["--perms", "0755", "--dir", folder]
    return args


def python_binds() -> list[str]:
    """bwrap's read-only binds of `python_folders()`, each at its own path."""
    return [arg for path in python_folders() for arg in ("--ro-bind", path, path)]


def _within(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def import_path_problem(reference: Path, held: list[Path]) -> str | None:
    """Why the folders bound for the sandbox's Python would show the agent what it must not
    see, in one sentence, or None: a folder of the import path that is, holds or lies inside
    the reference, or that holds one of `held` (the benchmark root, the log folder).

    Checked when a task is made, before any sample runs: PYTHONPATH naming the benchmark
    root, or a `.pth` or editable install naming a folder above it, would bind the
    reference answers into every sample.
    """
    answers = os.path.realpath(reference)
    for folder in python_folders():
        if _within(folder, answers) or _within(answers, folder):
            return (
                f"the Python import path holds {folder}, which would show the agent the "
                f"reference {answers}; take it off PYTHONPATH (or its .pth file) and run again"
            )
        for other in held:
            real = os.path.realpath(other)
            if _within(real, folder):
                return (
                    f"the Python import path holds {folder}, which holds {real} and would be "
                    "bound into every sample; take it off PYTHONPATH (or its .pth file)"
                )
    return None

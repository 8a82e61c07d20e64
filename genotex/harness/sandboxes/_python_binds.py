"""The Python that runs genotex, bound read-only into bwrap: which folders, made passable,
and the import-path folders refused because they would show the agent what it must not see.

What is bound: the interpreter's prefix and base prefix (the venv and the Python it was
made from: the installed packages genotex needs), the genotex package itself when it is
an editable install (the package, not its checkout), and the other folders of the import
path (PYTHONPATH, a `.pth` file's). The last are anyone's folders, so each is checked by
what it holds before any sample runs (`held_problem`): a benchmark (a `task_info.json`,
genotex's marker, a reference's answers), an Inspect log, or a credential file
refuses the run, naming the file found, whatever the folder's name (another
environment's `site-packages` on its top level only).
"""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

from ...core import MARKER_NAME

__all__ = [
    "held_problem",
    "import_path_problem",
    "passable_parents",
    "python_binds",
    "python_folders",
]

#: What the sandbox mounts itself: a folder of the import path that is one of them, or holds
#: one, is not bound over it.
_SANDBOX_FOLDERS = ("/tmp", "/home/agent", "/proc", "/dev", "/etc", "/usr")


#: Files that say a benchmark: its task list, genotex's marker of a downloaded one.
_BENCHMARK_FILES = ("task_info.json", MARKER_NAME)
#: A reference's (or a run's) answers: `output/regress/<trait>/significant_genes_...json`.
_ANSWER_PREFIX = "significant_genes_condition_"
#: Credential files and folders by name; `.pem` and `.key` files only when they hold a key.
_CREDENTIALS = (".netrc", ".pypirc", ".git-credentials", ".aws", ".ssh", ".gnupg", ".docker")
_KEY_SUFFIXES = (".pem", ".key")
#: How many entries of one import-path folder are looked at: past it, too large to check.
MAX_CHECKED = 50_000


def _holds_private_key(path: str) -> bool:
    try:
        with open(path, "rb") as opened:
            return b"PRIVATE KEY" in opened.read(64 * 1024)
    except OSError:
        return True  # a key file that cannot be read is not bound either


def _found(current: str, name: str, is_folder: bool) -> str | None:
    """What `name` (in `current`) is, when it is something the agent must not read."""
    path = os.path.join(current, name)
    if name in _CREDENTIALS:
        return f"a credential {'folder' if is_folder else 'file'} ({path})"
    if is_folder:
        return None
    if name in _BENCHMARK_FILES or (name.startswith(_ANSWER_PREFIX) and name.endswith(".json")):
        return f"a benchmark ({path})"
    if name.endswith(".eval") or (name.endswith(".json") and name.startswith("logs")):
        return f"an Inspect log ({path})"
    if name.endswith(_KEY_SUFFIXES) and _holds_private_key(path):
        return f"a private key ({path})"
    return None


def held_problem(folder: str, most: int = MAX_CHECKED) -> str | None:
    """What `folder` holds that must not be bound into a sandbox, or None: the first of a
    benchmark, an Inspect log, a credential file or folder, found by walking it (no link
    followed); a folder of more than `most` entries is refused as too large to check.

    Another environment's installed packages (a `site-packages` or `dist-packages` on the
    path, as a `.pth` file or a venv made over another gives) are looked at on their top
    level only: what lies deeper is the packages' own files (some ship test keys).
    """
    seen = 0
    packages = os.path.basename(folder.rstrip("/")) in ("site-packages", "dist-packages")
    for current, folders, names in os.walk(folder, followlinks=False):
        if packages:
            folders_here = list(folders)
            folders.clear()  # the top level only
        else:
            folders_here = folders
        folders.sort()
        seen += len(folders) + len(names)
        if seen > most:
            return f"more than {most:,} files (too many to check before binding it)"
        for name in sorted(folders_here):
            if (found := _found(current, name, True)) is not None:
                return found
        for name in sorted(names):
            try:
                is_file = stat.S_ISREG(os.lstat(os.path.join(current, name)).st_mode)
            except OSError:
                continue
            if is_file and (found := _found(current, name, False)) is not None:
                return found
    return None


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
    the reference, that holds one of `held` (the benchmark root, the log folder), or, for
    one outside the interpreter's prefixes, that holds a benchmark, an Inspect log or a
    credential file of any name or place (`held_problem`).

    Checked when a task is made, before any sample runs: PYTHONPATH naming the benchmark
    root, a copy of a benchmark, a log folder or a home folder, or a `.pth` or editable
    install naming a folder above one, would bind it into every sample.
    """
    answers = os.path.realpath(reference)
    prefixes = {os.path.realpath(sys.prefix), os.path.realpath(sys.base_prefix), sys.prefix}
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
        found = None if folder in prefixes else held_problem(folder)
        if found is not None:
            return (
                f"the Python import path holds {folder}, which would be bound into every "
                f"sample and holds {found}; take it off PYTHONPATH (or its .pth file)"
            )
    return None

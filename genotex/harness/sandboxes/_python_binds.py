"""The Python that runs genotex, bound read-only into bwrap: which folders, made passable,
and the import-path folders refused because they would show the agent what it must not see.

What is bound: the interpreter's prefix and base prefix (the venv and the Python it was
made from: the installed packages genotex needs), the genotex package itself when it is
an editable install (the package, not its checkout), and the other folders of the import
path (PYTHONPATH, a `.pth` file's). The last are anyone's folders, so each is judged by
what it holds (`held_problem`): a benchmark (a `task_info.json`, genotex's marker, a
reference's answers, preprocessed answers: `cohort_info.json`, `gene_data/` or
`clinical_data/` tables, linked tables), an Inspect log, a credential file, or a file
that *is* one of the run's reference files (a hard link: the same inode) or a copy of one
(the same bytes: sizes compared first, then digests, cached by device, inode, size and
modification time), whatever its name, refuses the run, naming the file found. Another
environment's `site-packages` is walked whole, apart from its installed distributions'
own files as their `RECORD` lists them, which are still compared with the reference.

The folders are bound live, so they are judged again before every command of a sample
(`ImportPathGuard`): each folder is watched with inotify (every folder in it: a file made,
written, linked, moved or changed in its mode), and a folder where anything changed is
checked again, whole; where inotify cannot watch it (no instance or watch left), its
listing (names, inodes, sizes, times) is fingerprinted at every command instead. A `.netrc`
written after the task was made refuses the next command.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from ._held_files import ReferenceFiles, Watch, fingerprint, held_problem

__all__ = [
    "ImportPathGuard",
    "ReferenceFiles",
    "held_problem",
    "import_path_guard",
    "import_path_problem",
    "passable_parents",
    "python_binds",
    "python_folders",
]

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


class ImportPathGuard:
    """The import-path folders judged for one reference and the folders it must not show, at
    the task's creation and again before every command (each folder re-checked when its
    fingerprint changed since it was last found clean).
    """

    def __init__(self, reference: Path, held: list[Path]) -> None:
        self.reference = Path(reference)
        self.held = [Path(h) for h in held]
        self._reference_files: ReferenceFiles | None = None
        #: each folder found clean, with its watch (or, where inotify cannot watch it, the
        #: fingerprint it had)
        self._clean: dict[str, Watch | bytes] = {}

    def _files(self) -> ReferenceFiles:
        if self._reference_files is None:
            self._reference_files = ReferenceFiles.of(self.reference)
        return self._reference_files

    def problem(self) -> str | None:
        """Why the folders bound for the sandbox's Python would show the agent what it must
        not see, in one sentence, or None (`import_path_problem`).
        """
        answers = os.path.realpath(self.reference)
        prefixes = {os.path.realpath(sys.prefix), os.path.realpath(sys.base_prefix), sys.prefix}
        for folder in python_folders():
            if _within(folder, answers) or _within(answers, folder):
                return (
                    f"the Python import path holds {folder}, which would show the agent the "
                    f"reference {answers}; take it off PYTHONPATH (or its .pth file) and run again"
                )
            for other in self.held:
                real = os.path.realpath(other)
                if _within(real, folder):
                    return (
                        f"the Python import path holds {folder}, which holds {real} and would be "
                        "bound into every sample; take it off PYTHONPATH (or its .pth file)"
                    )
            if folder in prefixes or self._unchanged(folder):
                continue
            watch = self._watch(folder)  # before the walk: a change during it is seen next
            found = held_problem(folder, reference=self._files())
            if found is not None:
                if isinstance(watch, Watch):
                    watch.close()
                return (
                    f"the Python import path holds {folder}, which would be bound into every "
                    f"sample and holds {found}; take it off PYTHONPATH (or its .pth file)"
                )
            self._clean[folder] = watch
        return None

    def _unchanged(self, folder: str) -> bool:
        """Whether `folder` was found clean and nothing in it changed since."""
        known = self._clean.get(folder)
        if isinstance(known, Watch):
            if not known.changed():
                return True
            known.close()
        elif known is not None and known == fingerprint(folder):
            return True
        self._clean.pop(folder, None)
        return False

    @staticmethod
    def _watch(folder: str) -> Watch | bytes:
        try:
            return Watch(folder)
        except OSError:
            return fingerprint(folder)


#: One guard per (reference, folders it must not show), for the run's samples and commands.
_GUARDS: dict[tuple[str, ...], ImportPathGuard] = {}


def import_path_guard(reference: Path, held: list[Path]) -> ImportPathGuard:
    """The run's guard of the import path for this reference (one per process and reference)."""
    key = (str(reference), *(str(h) for h in held))
    if key not in _GUARDS:
        _GUARDS[key] = ImportPathGuard(reference, held)
    return _GUARDS[key]


def import_path_problem(reference: Path, held: list[Path]) -> str | None:
    """Why the folders bound for the sandbox's Python would show the agent what it must not
    see, in one sentence, or None: a folder of the import path that is, holds or lies inside
    the reference, that holds one of `held` (the benchmark root, the log folder), or, for
    one outside the interpreter's prefixes, that holds a benchmark, an Inspect log, a
    credential file, or a link to or copy of a reference file, of any name or place
    (`held_problem`).

    Checked when a task is made, before any sample runs, and again before every command
    (`ImportPathGuard`): PYTHONPATH naming the benchmark root, a copy of a benchmark or of
    its preprocessed answers, a log folder or a home folder, or a `.pth` or editable install
    naming a folder above one, would bind it into every sample.
    """
    return import_path_guard(reference, held).problem()

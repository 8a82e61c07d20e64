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

import contextlib
import hashlib
import os
import re
import stat
import sys
from dataclasses import dataclass
from pathlib import Path

from ...core import MARKER_NAME

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


#: Files that say a benchmark: its task list, genotex's marker of a downloaded one.
_BENCHMARK_FILES = ("task_info.json", MARKER_NAME)
#: A reference's (or a run's) answers: `output/regress/<trait>/significant_genes_...json`.
_ANSWER_PREFIX = "significant_genes_condition_"
#: Preprocessed answers: a trait's record, its gene and clinical tables' folders, and its
#: linked tables (`GSE<n>.csv`, `Xena.csv`).
_PREPROCESSED_RECORD = "cohort_info.json"
_PREPROCESSED_FOLDERS = ("gene_data", "clinical_data")
_LINKED = re.compile(r"^(?:GSE\d+|Xena)\.csv$")
#: Credential files and folders by name; `.pem` and `.key` files only when they hold a key.
_CREDENTIALS = (".netrc", ".pypirc", ".git-credentials", ".aws", ".ssh", ".gnupg", ".docker")
_KEY_SUFFIXES = (".pem", ".key")
#: How many entries of one import-path folder are looked at: past it, too large to check
#: (another environment's `site-packages` is walked whole: 50,000 files are common there).
MAX_CHECKED = 500_000
#: A reference file smaller than this is not looked for by content (an empty `{}` or a
#: header line would be found everywhere, and tells nothing).
_SMALLEST_COPY = 64


def _holds_private_key(path: str) -> bool:
    try:
        with open(path, "rb") as opened:
            return b"PRIVATE KEY" in opened.read(64 * 1024)
    except OSError:
        return True  # a key file that cannot be read is not bound either


def _found(current: str, name: str, is_folder: bool) -> str | None:
    """What `name` (in `current`) is, when its name says it is something the agent must not
    read.
    """
    path = os.path.join(current, name)
    if name in _CREDENTIALS:
        return f"a credential {'folder' if is_folder else 'file'} ({path})"
    if is_folder:
        return None
    if name in _BENCHMARK_FILES or (name.startswith(_ANSWER_PREFIX) and name.endswith(".json")):
        return f"a benchmark ({path})"
    if (
        name == _PREPROCESSED_RECORD
        or _LINKED.match(name)
        or (os.path.basename(current) in _PREPROCESSED_FOLDERS and name.endswith(".csv"))
    ):
        return f"a benchmark's preprocessed answers ({path})"
    if name.endswith(".eval") or (name.endswith(".json") and name.startswith("logs")):
        return f"an Inspect log ({path})"
    if name.endswith(_KEY_SUFFIXES) and _holds_private_key(path):
        return f"a private key ({path})"
    return None


#: sha256 digests of files, by (device, inode, size, modification time in ns).
_DIGESTS: dict[tuple[int, int, int, int], str] = {}


def _digest(path: str, info: os.stat_result) -> str | None:
    key = (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns)
    if key not in _DIGESTS:
        try:
            with open(path, "rb") as opened:
                _DIGESTS[key] = hashlib.file_digest(opened, "sha256").hexdigest()
        except OSError:
            return None
    return _DIGESTS[key]


@dataclass(frozen=True)
class ReferenceFiles:
    """A reference's files by identity (device and inode) and by size, to find a link to one
    of them, or a copy, under any name.
    """

    folder: str
    inodes: dict[tuple[int, int], str]
    by_size: dict[int, list[tuple[str, os.stat_result]]]

    @classmethod
    def of(cls, folder: Path) -> ReferenceFiles:
        inodes: dict[tuple[int, int], str] = {}
        by_size: dict[int, list[tuple[str, os.stat_result]]] = {}
        root = os.path.realpath(folder)
        for current, _, names in os.walk(root, followlinks=False):
            for name in names:
                path = os.path.join(current, name)
                with contextlib.suppress(OSError):
                    info = os.lstat(path)
                    if stat.S_ISREG(info.st_mode):
                        inodes[(info.st_dev, info.st_ino)] = path
                        if info.st_size >= _SMALLEST_COPY:
                            by_size.setdefault(info.st_size, []).append((path, info))
        return cls(root, inodes, by_size)

    def found(self, path: str, info: os.stat_result) -> str | None:
        """What the file at `path` is of the reference's, if anything: the same file (a hard
        link) or a copy of one (the same size, then the same sha256).
        """
        same = self.inodes.get((info.st_dev, info.st_ino))
        if same is not None:
            return f"a link to the reference's {same} ({path})"
        candidates = self.by_size.get(info.st_size)
        if not candidates:
            return None
        mine = _digest(path, info)
        for theirs, recorded in candidates:
            if mine is not None and _digest(theirs, recorded) == mine:
                return f"a copy of the reference's {theirs} ({path})"
        return None


def _installed_files(folder: str) -> set[str]:
    """The files a `site-packages` folder's distributions installed, as their RECORD lists
    them (paths relative to the folder).
    """
    listed: set[str] = set()
    with contextlib.suppress(OSError):
        for entry in os.scandir(folder):
            if not entry.name.endswith(".dist-info") or not entry.is_dir(follow_symlinks=False):
                continue
            with contextlib.suppress(OSError, UnicodeDecodeError):
                with open(os.path.join(entry.path, "RECORD"), encoding="utf-8") as record:
                    for line in record:
                        name = line.split(",", 1)[0].strip()
                        if name and not name.startswith(("/", "..")):
                            listed.add(os.path.normpath(name))
    return listed


def held_problem(
    folder: str, most: int = MAX_CHECKED, reference: ReferenceFiles | None = None
) -> str | None:
    """What `folder` holds that must not be bound into a sandbox, or None: the first of a
    benchmark (its preprocessed answers included), an Inspect log, a credential file or
    folder, or (with `reference`) a link to or a copy of one of the reference's files, found
    by walking it whole (no link followed); a folder of more than `most` entries is refused
    as too large to check.

    In another environment's installed packages (a `site-packages` or `dist-packages`), the
    files its distributions' RECORD lists are the packages' own (some ship test keys): their
    names are not judged, their bytes still are against the reference.
    """
    seen = 0
    packages = os.path.basename(folder.rstrip("/")) in ("site-packages", "dist-packages")
    installed = _installed_files(folder) if packages else set()
    for current, folders, names in os.walk(folder, followlinks=False):
        folders.sort()
        seen += len(folders) + len(names)
        if seen > most:
            return f"more than {most:,} files (too many to check before binding it)"
        relative = os.path.relpath(current, folder)
        for name in sorted(folders):
            own = os.path.normpath(os.path.join(relative, name)) in installed
            if not own and (found := _found(current, name, True)) is not None:
                return found
        for name in sorted(names):
            path = os.path.join(current, name)
            try:
                info = os.lstat(path)
            except OSError:
                continue
            if not stat.S_ISREG(info.st_mode):
                continue
            own = os.path.normpath(os.path.join(relative, name)) in installed
            if not own and (found := _found(current, name, False)) is not None:
                return found
            if reference is not None and (found := reference.found(path, info)) is not None:
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


def _fingerprint(folder: str, most: int = MAX_CHECKED) -> bytes:
    """A digest of what `folder` lists, all the way down (no link followed): each entry's path,
    kind, inode, size and times. A file added, removed, renamed, linked or written changes it.
    """
    digest = hashlib.sha256()
    seen = 0
    for current, folders, names in os.walk(folder, followlinks=False):
        folders.sort()
        seen += len(folders) + len(names)
        if seen > most:
            digest.update(b"too many")
            break
        for name in sorted(names) + sorted(folders):
            with contextlib.suppress(OSError):
                info = os.lstat(os.path.join(current, name))
                digest.update(
                    f"{current}/{name}\0{info.st_mode}\0{info.st_ino}\0{info.st_size}\0"
                    f"{info.st_mtime_ns}\0{info.st_ctime_ns}\0".encode("utf-8", "surrogatepass")
                )
    return digest.digest()


#: inotify's events that say a folder's content changed, and its flags (linux/inotify.h).
_IN_MODIFY, _IN_ATTRIB, _IN_CLOSE_WRITE = 0x002, 0x004, 0x008
_IN_MOVED_FROM, _IN_MOVED_TO, _IN_CREATE, _IN_DELETE = 0x040, 0x080, 0x100, 0x200
_IN_DELETE_SELF, _IN_MOVE_SELF, _IN_DONT_FOLLOW, _IN_ONLYDIR = 0x400, 0x800, 0x2000000, 0x1000000
_WATCHED = (_IN_MODIFY | _IN_ATTRIB | _IN_CLOSE_WRITE | _IN_MOVED_FROM | _IN_MOVED_TO
            | _IN_CREATE | _IN_DELETE | _IN_DELETE_SELF | _IN_MOVE_SELF | _IN_DONT_FOLLOW
            | _IN_ONLYDIR)  # fmt: skip
_IN_NONBLOCK, _IN_CLOEXEC = 0o4000, 0o2000000


class _Watch:
    """Every folder of an import-path folder watched with inotify: `changed()` says whether
    anything happened in any of them since the last call (or the watch was made), at the cost
    of one non-blocking read. OSError when it cannot be made (then fingerprints are used).
    """

    def __init__(self, folder: str, most: int = MAX_CHECKED) -> None:
        import ctypes

        self._libc = ctypes.CDLL(None, use_errno=True)
        handle = self._libc.inotify_init1(_IN_NONBLOCK | _IN_CLOEXEC)
        if handle < 0:
            raise OSError(ctypes.get_errno(), "no inotify instance")
        self.handle = handle
        try:
            seen = 0
            for current, folders, _ in os.walk(folder, followlinks=False):
                seen += 1
                if (
                    seen > most
                    or self._libc.inotify_add_watch(
                        handle, current.encode("utf-8", "surrogateescape"), _WATCHED
                    )
                    < 0
                ):
                    raise OSError(ctypes.get_errno(), "no inotify watch left")
                folders.sort()
        except BaseException:
            os.close(handle)
            raise

    def changed(self) -> bool:
        try:
            happened = bool(os.read(self.handle, 1 << 16))
        except BlockingIOError:
            return False
        while True:  # drained: the next call sees what happens after this one
            try:
                os.read(self.handle, 1 << 16)
            except BlockingIOError:
                return happened

    def close(self) -> None:
        with contextlib.suppress(OSError):
            os.close(self.handle)


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
        self._clean: dict[str, _Watch | bytes] = {}

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
                if isinstance(watch, _Watch):
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
        if isinstance(known, _Watch):
            if not known.changed():
                return True
            known.close()
        elif known is not None and known == _fingerprint(folder):
            return True
        self._clean.pop(folder, None)
        return False

    @staticmethod
    def _watch(folder: str) -> _Watch | bytes:
        try:
            return _Watch(folder)
        except OSError:
            return _fingerprint(folder)


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

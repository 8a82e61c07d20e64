"""What an import-path folder holds that a sandbox must not show, found by name, identity or
content (`held_problem`), and how a folder's change is noticed between two checks (`Watch`,
`fingerprint`). Used by `_python_binds`' guard of the folders bwrap binds.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path

from ...core import MARKER_NAME

__all__ = ["MAX_CHECKED", "ReferenceFiles", "Watch", "fingerprint", "held_problem"]

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


def fingerprint(folder: str, most: int = MAX_CHECKED) -> bytes:
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


class Watch:
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

"""A cache of parsed tables keyed by the CSV's content: each file is parsed once, then mapped.

Parsing a CSV costs ~130 MB/s; mapping its parsed form costs a page-cache read.
A reference tree is parsed again for every submission scored against it, and a
linked table for every problem of its cohort, so both read through this cache.

An entry is one file, `tables/<sha256 of the CSV>.v<FORMAT>.table`:

    b"GTXTABLE" | header length (8 bytes, little-endian) | HMAC-SHA256 (32 bytes) |
    header (JSON: shape, order, labels, non-numeric cells) | zero padding to 64 |
    float64 values, little-endian

Safety, in the order a reader meets it:

- **The key is the content.** The file's sha256 is the key; a changed file is a
  new key, so an entry is never trusted over its file. The sha256 is hashed (as
  a stream: a hit never holds the CSV's bytes) unless `digests/` remembers it for
  the file's very stat: device, inode, size, modification and status-change
  times, which any write changes (`DigestMemo`; a file changed in the two
  seconds before it was hashed is not remembered). On a miss the bytes parsed
  are hashed again, so a file changed in between is stored under what was parsed.
- **No half-written entry is read.** An entry is written under a temporary name
  (`.<name>.<pid>-<random>.tmp`) and renamed into place, so concurrent writers of
  one key each rename a complete file and readers see one of them.
- **Only what this user wrote is read.** An entry holds a CRC-32 and an
  HMAC-SHA256 of its header and values under the user's cache key
  (`cache_key`: a private file outside the cache), as each sha256 memo holds
  the HMAC. The user's own entry that no one else may write is checked by its
  CRC-32 (accidents); any other must carry the user's HMAC, so an entry or memo
  someone else wrote or changed (a forged memo pointing a CSV at another entry,
  values changed and a checksum recomputed) is not trusted. The size must match
  the header's shape. A mismatch removes the entry and parses the CSV.
- **Only regular files in real folders.** An entry is opened without following
  a link and without blocking (a FIFO or a link is damaged, not waited on);
  a `tables/` or `digests/` that is a link is not used, so nothing under its
  target is ever read or removed.
- **The cache is never the reason a run fails.** A full disk, a read-only folder
  or a damaged folder only costs parsing; it is said once on the log.
- **Bounded.** When this process's count of the folder's bytes (one scan, then
  each entry it writes, scanned again every `_RESCAN` writes for other
  processes') passes the bound, entries least recently used (by mtime, which a
  hit refreshes) are removed until it is under it; the temporaries of killed
  writers and the memos of changed files go too. Filling the cache is linear in
  its entries, not quadratic.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from ._atomic import remove_stale_temporaries
from ._cache_entry import FORMAT, Damaged, read_entry, write_entry
from ._digest import DigestMemo
from ._errors import GenotexError
from ._tables import ParsedRows, parse_rows

__all__ = [
    "CACHE_ENV",
    "CACHE_SIZE_ENV",
    "DEFAULT_CACHE_BYTES",
    "CacheInfo",
    "TableCache",
    "cache_folder",
    "parse_size",
]

log = logging.getLogger(__name__)

#: The environment variable naming genotex's cache folder (else `$XDG_CACHE_HOME/genotex`,
#: else `~/.cache/genotex`).
CACHE_ENV = "GENOTEX_CACHE"
#: The environment variable bounding the table cache (bytes, or with a K, M, G or T suffix).
CACHE_SIZE_ENV = "GENOTEX_CACHE_SIZE"
#: The default bound: the parsed reference tables of the whole benchmark (~450 cohorts x 3
#: tables) take ~3 GB.
DEFAULT_CACHE_BYTES = 8 * 2**30

#: A process writing entries scans the folder again after this many (others write too).
_RESCAN = 64
_ENTRY = re.compile(rf"^[0-9a-f]{{64}}\.v{FORMAT}\.table$")
_ANY_ENTRY = re.compile(r"^[0-9a-f]{64}\.v\d+\.table$")
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([KMGT]?)(?:i?B)?\s*$", re.IGNORECASE)


def cache_folder() -> Path:
    """genotex's cache folder: `$GENOTEX_CACHE`, else `$XDG_CACHE_HOME/genotex`, else
    `~/.cache/genotex`.
    """
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV]).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "genotex"


def parse_size(text: str) -> int:
    """Bytes from `"8G"`, `"500M"`, `"1.5GiB"` or `"1000000"` (powers of 1024).

    Raises `ValueError` naming the text when it is not a size.
    """
    match = _SIZE.match(text)
    if not match:
        raise ValueError(f"{text!r} is not a size (e.g. 8G, 500M or a number of bytes)")
    number, unit = float(match.group(1)), match.group(2).upper()
    return int(number * 1024 ** "_KMGT".index(unit or "_"))


@dataclass(frozen=True)
class CacheInfo:
    """What a table cache holds (`genotex cache info`)."""

    folder: Path
    entries: int
    bytes: int
    max_bytes: int
    other_versions: int  # entries of another format, never read, removed by the bound or clear


@dataclass(frozen=True)
class TableCache:
    """Parsed CSV tables kept by content under `folder/tables`, least recently used out.

    Parameters
    ----------
    folder
        genotex's cache folder (`cache_folder()`); the tables go in its `tables/`.
    max_bytes
        The bound on the entries' total size.

    Examples
    --------
    >>> cache = TableCache.default()                                  # doctest: +SKIP
    >>> table = read_table("GSE1.csv", features_are_rows=False, cache=cache)  # doctest: +SKIP
    """

    folder: Path
    max_bytes: int = DEFAULT_CACHE_BYTES
    _warned: list[str] = field(default_factory=list, compare=False, repr=False)
    #: this process's count of the folder's bytes ("bytes") and writes since its scan ("writes")
    _known: dict[str, int] = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        # a str from a notebook; whole, as a Dask worker runs in another folder
        object.__setattr__(self, "folder", Path(os.path.abspath(Path(self.folder).expanduser())))
        if self.max_bytes < 0:
            raise ValueError("max_bytes must not be negative")

    @classmethod
    def default(cls, folder: str | Path | None = None) -> TableCache:
        """The cache in `folder` (else `cache_folder()`), bounded by `$GENOTEX_CACHE_SIZE`.

        Raises `ValueError` when `$GENOTEX_CACHE_SIZE` is not a size.
        """
        size = os.environ.get(CACHE_SIZE_ENV)
        bound = parse_size(size) if size else DEFAULT_CACHE_BYTES
        return cls(Path(folder) if folder is not None else cache_folder(), bound)

    @property
    def tables(self) -> Path:
        """The folder of the entries."""
        return self.folder / "tables"

    @property
    def digests(self) -> DigestMemo:
        """The CSVs' sha256 by their stat, in `digests/` (an unchanged file is hashed once)."""
        return DigestMemo(self.folder / "digests")

    def rows(self, path: Path, header: list[str]) -> ParsedRows:
        """The parsed rows of a CSV whose header `read_table` checked: mapped from the entry of
        its content's sha256, or parsed and stored.

        Raises `OSError` when the CSV cannot be read (the cache's own faults are said
        on the log and cost only the parse).
        """
        if self._linked():
            return parse_rows(path, path.read_bytes(), header)
        key = self.digests.sha256(path)
        found = self._lookup(self._entry(key), key, header)
        if found is None:
            data = path.read_bytes()
            key = hashlib.sha256(data).hexdigest()  # what is parsed is what is stored
            found = parse_rows(path, data, header)
            self._store(self._entry(key), key, found)
        return found

    def _entry(self, key: str) -> Path:
        return self.tables / f"{key}.v{FORMAT}.table"

    def _lookup(self, entry: Path, key: str, header: list[str]) -> ParsedRows | None:
        try:
            found = read_entry(entry, key, header[1:])
        except (FileNotFoundError, NotADirectoryError):  # no entry (or no folder for one)
            return None
        except (Damaged, OSError, ValueError) as exc:
            self._say("damaged", f"the cache entry {entry} is damaged ({exc}); it is made again")
            with contextlib.suppress(OSError):
                entry.unlink()
            return None
        with contextlib.suppress(OSError):
            os.utime(entry)  # least recently used goes first
        return found

    def _store(self, entry: Path, key: str, parsed: ParsedRows) -> None:
        try:
            write_entry(entry, key, parsed)
            self._grew(entry)
        except OSError as exc:  # full disk, read-only folder: the run goes on without the cache
            reason = exc.strerror or str(exc)
            self._say("unwritable", f"the table cache {self.tables} cannot be written ({reason})")

    def _say(self, kind: str, message: str) -> None:
        """Warn once per kind of fault and cache (a full disk would say it for every table)."""
        if kind not in self._warned:
            self._warned.append(kind)
            log.warning("%s", message)

    def _linked(self) -> bool:
        """Whether `tables/` is a link: then the cache is not used, so that nothing under the
        link's target is read, written or removed (said once).
        """
        if self.tables.is_symlink():
            self._say("linked", f"the cache folder {self.tables} is a link; it is not used")
            return True
        return False

    def _grew(self, entry: Path) -> None:
        """Count an entry this process wrote; evict once the count passes the bound (a scan
        of the folder only on the first write, every `_RESCAN` writes and past the bound).
        """
        known, writes = self._known.get("bytes"), self._known.get("writes", 0) + 1
        if known is None or writes >= _RESCAN:
            self.evict(keep=entry)
            return
        with contextlib.suppress(OSError):
            known += entry.stat().st_size
        self._known.update(bytes=known, writes=writes)
        if known > self.max_bytes:
            self.evict(keep=entry)

    def evict(self, *, keep: Path | None = None) -> int:
        """Remove the least recently used entries until the total is within the bound, the
        temporaries of writers that are no longer running and the sha256 memos of files that
        changed or are gone; return how many entries went.
        """
        if self._linked():
            return 0
        remove_stale_temporaries(self.tables)
        self.digests.prune()
        entries = []
        for path in self._entries(_ANY_ENTRY):
            with contextlib.suppress(FileNotFoundError):
                stat = path.stat()
                entries.append((stat.st_mtime_ns, stat.st_size, path))
        total = sum(size for _, size, _ in entries)
        removed = 0
        for _, size, path in sorted(entries, key=lambda item: (item[0], item[2].name)):
            if total <= self.max_bytes:
                break
            if path == keep:
                continue
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
                removed += 1
            total -= size
        self._known.update(bytes=total, writes=0)
        return removed

    def info(self) -> CacheInfo:
        """The number and size of the entries."""
        current = list(self._entries(_ENTRY))
        others = [p for p in self._entries(_ANY_ENTRY) if not _ENTRY.match(p.name)]
        size = 0
        for path in current + others:
            with contextlib.suppress(FileNotFoundError):
                size += path.stat().st_size
        return CacheInfo(self.tables, len(current), size, self.max_bytes, len(others))

    def clear(self) -> int:
        """Remove every entry and sha256 memo (and dead writers' temporaries); return how many
        entries went.

        Only files named as entries and memos are removed: a cache folder pointed at a
        folder of the user's loses nothing else. Raises `GenotexError` when `tables/` is a
        link (nothing under its target is removed).
        """
        if self.tables.is_symlink():
            raise GenotexError("it is a link, so the cache is not cleared", path=self.tables)
        remove_stale_temporaries(self.tables)
        self.digests.prune(everything=True)
        removed = 0
        for path in self._entries(_ANY_ENTRY):
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
                removed += 1
        return removed

    def _entries(self, pattern: re.Pattern[str]) -> list[Path]:
        try:
            names = os.listdir(self.tables)
        except (FileNotFoundError, NotADirectoryError):
            return []
        return [self.tables / name for name in sorted(names) if pattern.match(name)]

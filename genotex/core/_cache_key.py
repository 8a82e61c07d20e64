"""The secret that signs what genotex's cache holds, kept outside the cache.

A cache folder may be shared, or writable by someone else; a cache entry or a
sha256 memo is trusted only when its HMAC-SHA256 under this key matches. The
key is 32 random bytes in `$GENOTEX_CACHE_KEY`'s file, else
`$XDG_CONFIG_HOME/genotex/cache.key`, else `~/.config/genotex/cache.key`: made on
first use with mode 0600, and used only while it is a regular file of ours that
no one else may read or write. Where it cannot be made or trusted, this process
uses a key of its own (said once on the log): nothing written before is trusted,
so the cache costs a parse, never a wrong table.
"""

from __future__ import annotations

import contextlib
import functools
import hmac
import logging
import os
import secrets
import stat
from pathlib import Path

from ._write_gate import gate_write

__all__ = ["CACHE_KEY_ENV", "cache_key", "sign"]

log = logging.getLogger(__name__)

#: The environment variable naming the key's file.
CACHE_KEY_ENV = "GENOTEX_CACHE_KEY"
_KEY_BYTES = 32


def _key_path() -> Path:
    if os.environ.get(CACHE_KEY_ENV):
        return Path(os.environ[CACHE_KEY_ENV]).expanduser()
    base = os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config"
    return Path(base) / "genotex" / "cache.key"


def _read_key(path: Path) -> bytes:
    """The key in `path`; `OSError` unless it is our own private regular file of 32 bytes."""
    handle = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_NONBLOCK", 0))
    try:
        info = os.fstat(handle)
        private = os.name == "nt" or (
            info.st_uid == os.getuid() and not info.st_mode & (stat.S_IRWXG | stat.S_IRWXO)
        )
        if not stat.S_ISREG(info.st_mode) or not private:
            raise PermissionError(f"{path} is not a private file of this user's")
        key = os.read(handle, _KEY_BYTES + 1)
    finally:
        os.close(handle)
    if len(key) != _KEY_BYTES:
        raise ValueError(f"{path} does not hold a key")
    return key


def _make_key(path: Path) -> bytes:
    """Write a new key at `path` (never over another's), or read the one a concurrent run made."""
    gate_write(path, what="cache key").parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    key = secrets.token_bytes(_KEY_BYTES)
    try:
        handle = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    except FileExistsError:
        return _read_key(path)
    try:
        os.write(handle, key)
    except BaseException:
        os.close(handle)
        with contextlib.suppress(OSError):
            path.unlink()
        raise
    os.close(handle)
    return key


@functools.cache
def cache_key() -> bytes:
    """The user's cache key (made on first use), or this process's own where it cannot be."""
    path = _key_path()
    try:
        try:
            return _read_key(path)
        except FileNotFoundError:
            return _make_key(path)
    except (OSError, ValueError) as exc:
        log.warning(
            "the cache key %s cannot be used (%s); this run trusts only the cache entries it "
            "writes itself",
            path,
            exc.strerror if isinstance(exc, OSError) and exc.strerror else exc,
        )
        return secrets.token_bytes(_KEY_BYTES)


def sign(*parts: bytes | memoryview) -> bytes:
    """HMAC-SHA256 of the parts, in order, under the cache key."""
    mac = hmac.new(cache_key(), digestmod="sha256")
    for part in parts:
        mac.update(part)
    return mac.digest()

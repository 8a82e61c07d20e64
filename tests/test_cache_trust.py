"""The table cache trusts only what this user wrote (#36 items 3, 4 and 6): a cache folder
someone else can write (a shared one) cannot make a run read a table of their choosing, block
it, or reach outside it; and filling the cache is linear in its entries.
"""

from __future__ import annotations

import os
import stat
import threading
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from genotex.core import GenotexError, TableCache, read_table
from genotex.core import _cache as cache_module
from genotex.core import _cache_key as key_module
from genotex.core import _digest as digest_module

ATTACKER_KEY = b"\x07" * 32


def _csv(path: Path, seed: int) -> Path:
    """A linked table (samples x features) whose values depend on `seed`."""
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame(
        rng.normal(size=(6, 4)).round(6),
        index=[f"S{i}" for i in range(6)],
        columns=["Trait", "G1", "G2", "G3"],
    )
    frame.to_csv(path)
    return path


def _values(path: Path, cache: TableCache | None) -> np.ndarray:
    return np.asarray(read_table(path, features_are_rows=False, cache=cache).values, dtype=float)


def _as_attacker(monkeypatch, action):
    """Run `action` signing with a key that is not the user's (one who can write the folder
    but cannot read the user's key)."""
    with monkeypatch.context() as patched:
        patched.setattr(key_module, "cache_key", lambda: ATTACKER_KEY)
        return action()


@pytest.fixture
def two_tables(tmp_path, monkeypatch):
    monkeypatch.setattr(digest_module, "RACY_SECONDS", 0.0)  # memos written at once
    mine, theirs = _csv(tmp_path / "A.csv", 1), _csv(tmp_path / "B.csv", 2)
    cache = TableCache(tmp_path / "cache")
    for path in (mine, theirs):
        _values(path, cache)
    return cache, mine, theirs


def _memo_of(cache: TableCache, path: Path) -> tuple[Path, str]:
    for memo in (cache.folder / "digests").glob("*.sha256"):
        digest, line, _ = memo.read_text().splitlines()
        if line.endswith("\t" + str(path.resolve())):
            return memo, line
    raise AssertionError(f"no memo of {path}")


@pytest.mark.parametrize("signed_by", ["no one", "another key"])
def test_a_forged_memo_pointing_a_csv_at_another_entry_is_not_trusted(
    two_tables, monkeypatch, signed_by
):
    cache, mine, theirs = two_tables
    expected = _values(mine, None)
    memo, line = _memo_of(cache, mine)
    (other,) = {e.name.split(".")[0] for e in cache.tables.iterdir()} - {memo.read_text()[:64]}
    text = f"{other}\n{line}\n"  # the other table's digest for this file's very stat line
    if signed_by == "another key":
        signature = _as_attacker(monkeypatch, lambda: key_module.sign(f"{other}\n{line}".encode()))
        text += signature.hex() + "\n"
    memo.write_text(text)
    assert np.array_equal(_values(mine, cache), expected)  # was the other table's values


def test_an_entry_with_changed_values_and_a_recomputed_checksum_is_not_trusted(
    two_tables, monkeypatch
):
    from genotex.core._cache_entry import write_entry
    from genotex.core._tables import parse_rows

    cache, mine, theirs = two_tables
    expected = _values(mine, None)
    key = cache.digests.sha256(mine)
    (entry,) = cache.tables.glob(f"{key}.*.table")
    header = mine.read_text().splitlines()[0].split(",")
    forged = parse_rows(theirs, theirs.read_bytes(), header)  # same shape, other values
    _as_attacker(monkeypatch, lambda: write_entry(entry, key, forged))
    if os.geteuid() == 0:  # written by another user, as in a shared cache folder
        os.chown(entry, 12345, 12345)
    else:  # or a file others may write
        entry.chmod(0o666)
    assert np.array_equal(_values(mine, cache), expected)


def test_the_users_own_private_entry_is_checked_by_crc_and_others_by_signature(
    two_tables, monkeypatch
):
    """The HMAC (1 GB/s) is paid only where someone else could have written the entry; the
    user's own private entries are checked for accidents by CRC-32 (7 GB/s)."""
    from genotex.core import _cache_entry

    cache, mine, _ = two_tables
    expected = _values(mine, None)
    signed = []
    real_sign = _cache_entry.sign
    monkeypatch.setattr(_cache_entry, "sign", lambda *parts: signed.append(1) or real_sign(*parts))
    assert np.array_equal(_values(mine, cache), expected) and signed == []
    (entry,) = cache.tables.glob(f"{cache.digests.sha256(mine)}.*.table")
    entry.chmod(0o666)  # others may write it now: its signature is checked
    assert np.array_equal(_values(mine, cache), expected) and signed == [1]


def test_a_fifo_in_place_of_an_entry_does_not_block(two_tables):
    cache, mine, _ = two_tables
    expected = _values(mine, None)
    (entry,) = cache.tables.glob(f"{cache.digests.sha256(mine)}.*.table")
    entry.unlink()
    os.mkfifo(entry)
    read: list[np.ndarray] = []
    reader = threading.Thread(target=lambda: read.append(_values(mine, cache)), daemon=True)
    reader.start()
    reader.join(timeout=30)
    if reader.is_alive():  # unblock the reader before failing, or pytest hangs too
        with open(entry, "wb"):
            pass
        pytest.fail("reading a cache entry that is a FIFO blocked")
    assert np.array_equal(read[0], expected)


def test_a_tables_folder_that_is_a_link_is_not_used_and_nothing_under_it_goes(tmp_path):
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "deep").mkdir(parents=True)
    dead = 2**22 + 12345  # above pid_max's default: no such process
    victims = [elsewhere / f".x.{dead}-abcd.tmp", elsewhere / "deep" / f".y.{dead}-abcd.tmp"]
    for victim in victims:
        victim.write_text("a user's file")
    (tmp_path / "cache").mkdir()
    (tmp_path / "cache" / "tables").symlink_to(elsewhere)
    cache = TableCache(tmp_path / "cache")
    mine = _csv(tmp_path / "A.csv", 1)
    assert np.array_equal(_values(mine, cache), _values(mine, None))
    cache.evict()
    with pytest.raises(GenotexError, match="is a link"):
        cache.clear()
    assert all(victim.exists() for victim in victims)
    assert sorted(p.name for p in elsewhere.rglob("*")) == sorted(
        ["deep", *(v.name for v in victims)]
    )  # nothing written there either


def test_filling_the_cache_scans_its_folder_a_bounded_number_of_times(tmp_path, monkeypatch):
    """#36 item 6: each write used to scan every entry and memo (quadratic: ~65 s at 1,350)."""
    scans = []
    original = cache_module.TableCache._entries
    monkeypatch.setattr(
        cache_module.TableCache,
        "_entries",
        lambda self, pattern: scans.append(1) or original(self, pattern),
    )
    cache = TableCache(tmp_path / "cache")
    for index in range(100):
        _values(_csv(tmp_path / f"T{index}.csv", index), cache)
    assert len(list(cache.tables.glob("*.table"))) == 100
    assert len(scans) <= 3  # the first write, then once per 64 writes


def test_the_bound_still_holds_when_counted_instead_of_scanned(tmp_path):
    cache = TableCache(tmp_path / "cache", max_bytes=0)
    for index in range(5):
        _values(_csv(tmp_path / f"T{index}.csv", index), cache)
    assert len(list(cache.tables.glob("*.table"))) == 1  # only the one just written is kept


def test_a_key_file_others_can_read_is_not_used(tmp_path, monkeypatch, caplog):
    key = tmp_path / "cache.key"
    key.write_bytes(b"\x01" * 32)
    key.chmod(0o644)
    monkeypatch.setenv(key_module.CACHE_KEY_ENV, str(key))
    key_module.cache_key.cache_clear()
    try:
        with caplog.at_level("WARNING", logger="genotex"):
            used = key_module.cache_key()
    finally:
        key_module.cache_key.cache_clear()
    assert used != b"\x01" * 32 and len(used) == 32
    assert "cannot be used" in caplog.text and str(key) in caplog.text


def test_the_key_is_made_private_on_first_use_and_kept(tmp_path, monkeypatch):
    key = tmp_path / "config" / "genotex" / "cache.key"
    monkeypatch.setenv(key_module.CACHE_KEY_ENV, str(key))
    key_module.cache_key.cache_clear()
    try:
        made = key_module.cache_key()
        key_module.cache_key.cache_clear()
        again = key_module.cache_key()
    finally:
        key_module.cache_key.cache_clear()
    assert made == again == key.read_bytes() and len(made) == 32
    assert stat.S_IMODE(key.stat().st_mode) == 0o600

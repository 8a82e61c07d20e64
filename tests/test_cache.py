"""The content-keyed table cache: same tables as a parse, and its faults (damaged entries,
concurrent writers, changed files, a full disk, the bound).

Expected tables come from pandas' `read_csv` (an independent reader), not from genotex's.
"""

from __future__ import annotations

import hashlib
import logging
import multiprocessing
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from genotex.cli import main
from genotex.core import TableCache, parse_size, read_table
from genotex.core import _cache as cache_module
from genotex.core import _digest as digest_module
from genotex.workflows import SynthSpec, write_example
from tests.conftest import example_eval_report

WIDE_COLUMNS = 1200  # past WIDE_TABLE_COLUMNS: the line-splitting reader


def _write_linked(path: Path, rows: int = 5, columns: int = 4, seed: int = 0) -> Path:
    rng = np.random.default_rng(seed)
    values = rng.normal(size=(rows, columns)).round(6)
    values[1, 2] = np.nan
    frame = pd.DataFrame(
        values, index=[f"S{i}" for i in range(rows)], columns=[f"G{j}" for j in range(columns)]
    )
    frame.to_csv(path)
    return path


def _assert_same_as_pandas(table, path: Path) -> None:
    expected = pd.read_csv(path, index_col=0)
    assert list(table.row_labels) == [str(label) for label in expected.index]
    assert list(table.column_labels) == list(expected.columns)
    np.testing.assert_array_equal(table.values, expected.to_numpy(dtype=float))


def _entries(cache: TableCache) -> list[Path]:
    return sorted(cache.tables.glob("*.table"))


@pytest.mark.parametrize("columns", [4, WIDE_COLUMNS])
def test_a_cached_table_is_the_parsed_table_cold_and_warm(tmp_path, columns):
    path = _write_linked(tmp_path / "GSE1.csv", columns=columns)
    cache = TableCache(tmp_path / "cache")
    cold = read_table(path, features_are_rows=False, cache=cache)
    warm = read_table(path, features_are_rows=False, cache=cache)
    for table in (cold, warm):
        _assert_same_as_pandas(table, path)
    assert len(_entries(cache)) == 1
    assert not warm.values.flags.writeable  # mapped from the entry, not parsed again


def test_a_hit_does_not_parse(tmp_path, monkeypatch):
    path = _write_linked(tmp_path / "GSE1.csv")
    cache = TableCache(tmp_path / "cache")
    read_table(path, features_are_rows=False, cache=cache)

    def refuse(*args, **kwargs):
        raise AssertionError("parsed although the entry exists")

    monkeypatch.setattr(cache_module, "parse_rows", refuse)
    _assert_same_as_pandas(read_table(path, features_are_rows=False, cache=cache), path)


def test_labels_missing_rows_bad_cells_and_features_as_rows_survive_the_cache(tmp_path):
    path = tmp_path / "gene.csv"
    path.write_text("ID,S1,S2,S3\nA,1.5,,x\nNA,2,3,4\nC,,,\n")
    cache = TableCache(tmp_path / "cache")
    read_table(path, features_are_rows=True, cache=cache)
    table = read_table(path, features_are_rows=True, cache=cache)
    assert list(table.row_labels) == ["A", None, "C"]  # pandas' NA spelling: a missing label
    assert table.features_are_rows
    np.testing.assert_array_equal(
        table.values, [[1.5, np.nan, np.nan], [2, 3, 4], [np.nan, np.nan, np.nan]]
    )
    assert {column: rows.tolist() for column, rows in table.bad_cells.items()} == {2: [0]}


def test_a_header_only_table_needs_no_entry(tmp_path):
    path = tmp_path / "empty.csv"
    path.write_text("ID,S1,S2\n")
    cache = TableCache(tmp_path / "cache")
    table = read_table(path, features_are_rows=True, cache=cache)
    assert table.values.shape == (0, 2) and _entries(cache) == []


def test_a_changed_file_is_a_new_key_even_with_its_old_size_and_mtime(tmp_path):
    path = _write_linked(tmp_path / "GSE1.csv")
    cache = TableCache(tmp_path / "cache")
    first = read_table(path, features_are_rows=False, cache=cache).values.copy()
    stat = path.stat()
    text = path.read_text()
    line = text.splitlines()[1]  # "S0,<value>,...": change one digit of the first value
    position = len(text.splitlines()[0]) + 1 + line.index(",") + 3
    digit = text[position]
    assert digit.isdigit()
    path.write_text(text[:position] + str((int(digit) + 1) % 10) + text[position + 1 :])
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert path.stat().st_size == stat.st_size and path.stat().st_mtime_ns == stat.st_mtime_ns
    second = read_table(path, features_are_rows=False, cache=cache)
    _assert_same_as_pandas(second, path)
    assert not np.array_equal(first, second.values, equal_nan=True)
    assert len(_entries(cache)) == 2


def test_a_file_changed_after_its_hash_is_stored_under_what_was_parsed(tmp_path, monkeypatch):
    """A hit hashes the file as a stream without keeping its bytes; on a miss the bytes parsed
    are hashed again, so an entry never holds another content than its key's."""
    path = _write_linked(tmp_path / "GSE1.csv", seed=1)
    before = hashlib.sha256(path.read_bytes()).hexdigest()
    hash_file = digest_module.file_sha256

    def hash_then_change(file):
        digest = hash_file(file)
        _write_linked(path, seed=2)  # rewritten between the hash and the parse
        return digest

    monkeypatch.setattr(digest_module, "file_sha256", hash_then_change)
    cache = TableCache(tmp_path / "cache")
    table = read_table(path, features_are_rows=False, cache=cache)
    _assert_same_as_pandas(table, path)  # the new content
    after = hashlib.sha256(path.read_bytes()).hexdigest()
    assert after != before
    assert [entry.name.split(".")[0] for entry in _entries(cache)] == [after]


@pytest.mark.parametrize("damage", ["flip a value byte", "truncate", "garbage", "wrong header"])
def test_a_damaged_entry_is_made_again(tmp_path, caplog, damage):
    path = _write_linked(tmp_path / "GSE1.csv", rows=20, columns=30)
    cache = TableCache(tmp_path / "cache")
    read_table(path, features_are_rows=False, cache=cache)
    (entry,) = _entries(cache)
    data = bytearray(entry.read_bytes())
    if damage == "flip a value byte":
        data[-3] ^= 0x40
    elif damage == "truncate":
        data = data[: len(data) // 2]
    elif damage == "garbage":
        data = bytearray(os.urandom(len(data)))
    else:
        data = bytearray(re.sub(rb'"order":"[CF]"', b'"order":"X"', bytes(data)))
        assert b'"order":"X"' in data
    entry.write_bytes(bytes(data))
    with caplog.at_level(logging.WARNING, logger="genotex"):
        table = read_table(path, features_are_rows=False, cache=cache)
    _assert_same_as_pandas(table, path)
    assert "damaged" in caplog.text and str(entry) in caplog.text
    # made again: the next read maps a whole entry without a warning
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="genotex"):
        _assert_same_as_pandas(read_table(path, features_are_rows=False, cache=cache), path)
    assert caplog.text == ""


def test_a_killed_writers_temporary_is_never_read_and_is_cleaned(tmp_path):
    path = _write_linked(tmp_path / "GSE1.csv")
    cache = TableCache(tmp_path / "cache")
    read_table(path, features_are_rows=False, cache=cache)
    (entry,) = _entries(cache)
    # a writer killed half way: a temporary of a pid that no longer runs, holding half an entry
    process = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                             capture_output=True, text=True, check=True)  # fmt: skip
    dead = int(process.stdout)
    half = entry.read_bytes()[:100]
    stale = cache.tables / f".{entry.name}.{dead}-abcd1234.tmp"
    stale.write_bytes(half)
    live = cache.tables / f".{entry.name}.{os.getpid()}-live0001.tmp"
    live.write_bytes(half)
    entry.unlink()
    cache = TableCache(tmp_path / "cache")  # the next run's first write scans the folder
    _assert_same_as_pandas(read_table(path, features_are_rows=False, cache=cache), path)
    assert not stale.exists()  # the scan removed the dead writer's file
    assert live.exists()  # a running writer's file is left alone
    assert len(_entries(cache)) == 1


def _read_in_worker(arguments: tuple[str, str, int]) -> tuple[list, bytes]:
    folder, csv_path, start = arguments
    import time

    while time.time() < start:  # all workers start reading at once
        time.sleep(0.001)
    table = read_table(csv_path, features_are_rows=False, cache=TableCache(Path(folder)))
    return list(table.row_labels), table.values.tobytes()


def test_concurrent_writers_of_one_key_leave_one_whole_entry(tmp_path):
    import time

    path = _write_linked(tmp_path / "GSE1.csv", rows=50, columns=WIDE_COLUMNS)
    folder = tmp_path / "cache"
    start = time.time() + 2.0
    context = multiprocessing.get_context("spawn")
    with context.Pool(4) as pool:
        results = pool.map(_read_in_worker, [(str(folder), str(path), start)] * 8)
    expected = pd.read_csv(path, index_col=0).to_numpy(dtype=float)
    for labels, values in results:
        assert labels == [f"S{i}" for i in range(50)]
        np.testing.assert_array_equal(np.frombuffer(values).reshape(expected.shape), expected)
    cache = TableCache(folder)
    assert len(_entries(cache)) == 1
    assert list(cache.tables.glob(".*.tmp")) == []
    _assert_same_as_pandas(read_table(path, features_are_rows=False, cache=cache), path)


def test_a_full_disk_only_costs_the_parse(tmp_path):
    """A file size limit makes the entry's write fail as a full disk does (EFBIG, not mocked)."""
    path = _write_linked(tmp_path / "GSE1.csv", rows=40, columns=300)
    folder = tmp_path / "cache"
    script = textwrap.dedent(
        f"""
        import logging, resource, signal, sys
        import pandas as pd, numpy as np
        from genotex.core import TableCache, read_table
        logging.basicConfig(level=logging.WARNING, format="%(message)s")
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (4096, resource.RLIM_INFINITY))
        cache = TableCache({str(folder)!r})
        for _ in range(2):
            table = read_table({str(path)!r}, features_are_rows=False, cache=cache)
        expected = pd.read_csv({str(path)!r}, index_col=0).to_numpy(dtype=float)
        assert np.array_equal(table.values, expected, equal_nan=True)
        print("same table")
        """
    )
    process = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
    )
    assert process.returncode == 0, process.stderr
    assert process.stdout.strip() == "same table"
    warnings = [line for line in process.stderr.splitlines() if "cannot be written" in line]
    assert len(warnings) == 1, process.stderr  # said once, not for every table
    assert "File too large" in warnings[0]
    assert not list(folder.rglob("*.table")) and not list(folder.rglob("*.tmp"))


def test_the_bound_removes_the_least_recently_used_entries(tmp_path):
    paths = [_write_linked(tmp_path / f"GSE{i}.csv", rows=30, columns=40, seed=i) for i in range(3)]
    probe = TableCache(tmp_path / "probe")
    read_table(paths[0], features_are_rows=False, cache=probe)
    entry_size = _entries(probe)[0].stat().st_size
    cache = TableCache(tmp_path / "cache", max_bytes=int(entry_size * 2.5))  # room for two
    read_table(paths[0], features_are_rows=False, cache=cache)
    read_table(paths[1], features_are_rows=False, cache=cache)
    first, second = sorted(_entries(cache), key=lambda p: p.stat().st_mtime_ns)
    # paths[0]'s entry is older; reading it again makes paths[1]'s the least recently used
    os.utime(first, ns=(1, 1_000_000_000))
    os.utime(second, ns=(1, 2_000_000_000))
    read_table(paths[0], features_are_rows=False, cache=cache)
    read_table(paths[2], features_are_rows=False, cache=cache)
    kept = {p.name.split(".")[0] for p in _entries(cache)}
    keys = [hashlib.sha256(p.read_bytes()).hexdigest() for p in paths]
    assert kept == {keys[0], keys[2]}


def test_clear_removes_only_entries(tmp_path):
    path = _write_linked(tmp_path / "GSE1.csv")
    folder = tmp_path / "mine"
    cache = TableCache(folder)
    read_table(path, features_are_rows=False, cache=cache)
    (folder / "notes.txt").write_text("mine")
    (cache.tables / "notes.table.txt").write_text("mine too")
    assert cache.clear() == 1
    assert (folder / "notes.txt").exists() and (cache.tables / "notes.table.txt").exists()
    assert _entries(cache) == []


def test_parse_size():
    assert parse_size("8G") == 8 * 2**30
    assert parse_size("500M") == 500 * 2**20
    assert parse_size("1.5GiB") == 3 * 2**29
    assert parse_size("1000") == 1000
    with pytest.raises(ValueError, match="'lots' is not a size"):
        parse_size("lots")


def test_cache_info_and_clear_commands(tmp_path):
    folder = tmp_path / "c"
    cache = TableCache(folder)
    for i in range(2):
        read_table(
            _write_linked(tmp_path / f"G{i}.csv", seed=i), features_are_rows=False, cache=cache
        )
    size = sum(p.stat().st_size for p in _entries(cache))
    runner = CliRunner()
    info = runner.invoke(main, ["cache", "info", "--cache-dir", str(folder)])
    assert info.exit_code == 0, info.output
    assert "entries: 2" in info.output and str(folder / "tables") in info.output
    assert f"{size:,} B of 8.0 GiB" in info.output
    cleared = runner.invoke(main, ["cache", "clear"], env={"GENOTEX_CACHE": str(folder)})
    assert cleared.exit_code == 0 and "removed 2 entries" in cleared.output
    bad = runner.invoke(
        main, ["cache", "info"], env={"GENOTEX_CACHE": str(folder), "GENOTEX_CACHE_SIZE": "big"}
    )
    assert bad.exit_code == 2 and "$GENOTEX_CACHE_SIZE: 'big' is not a size" in bad.output


def test_eval_is_the_same_without_the_cache_cold_warm_and_in_workers(tmp_path):
    spec = SynthSpec(n_traits=3, n_cohorts=6, samples=(10, 16), n_genes=1100, n_related=8)
    example = write_example(tmp_path / "tree", spec, seed=4)
    folder = tmp_path / "cache"
    reports = {}
    for name, extra in [
        ("no cache", ["--no-cache"]),
        ("cold", ["--cache-dir", str(folder)]),
        ("warm", ["--cache-dir", str(folder)]),
        ("warm, 2 jobs", ["--cache-dir", str(folder), "--jobs", "2"]),
    ]:
        reports[name] = example_eval_report(example, tmp_path / f"{name}.json", *extra)
    assert reports["no cache"]["preprocessing"]  # tables were scored
    for name in ("cold", "warm", "warm, 2 jobs"):
        assert reports[name] == reports["no cache"], name
    # one entry per reference table that was scored (its prediction exists), by content
    scored = {
        hashlib.sha256(path.read_bytes()).hexdigest()
        for path in example.ref_output.joinpath("preprocess").rglob("*.csv")
        if (example.pred_output / path.relative_to(example.ref_output)).exists()
    }
    assert TableCache(folder).info().entries == len(scored) > 0


def test_the_cache_folder_is_genotex_cache_then_xdg_then_home(monkeypatch, tmp_path):
    from genotex.core import cache_folder

    monkeypatch.setenv("GENOTEX_CACHE", str(tmp_path / "mine"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_folder() == tmp_path / "mine"
    monkeypatch.delenv("GENOTEX_CACHE")
    assert cache_folder() == tmp_path / "xdg" / "genotex"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert cache_folder() == tmp_path / "home" / ".cache" / "genotex"


def _counting_hashes(monkeypatch) -> list[str]:
    """Patch the digest memo's hashing to record each file it really hashes."""
    hashed: list[str] = []
    hash_file = digest_module.file_sha256

    def counted(file):
        hashed.append(str(file))
        return hash_file(file)

    monkeypatch.setattr(digest_module, "file_sha256", counted)
    return hashed


def test_an_unchanged_table_is_hashed_once_then_remembered(tmp_path, monkeypatch):
    path = _write_linked(tmp_path / "GSE1.csv")
    monkeypatch.setattr(digest_module, "RACY_SECONDS", 0.0)  # (the file was written just now)
    hashed = _counting_hashes(monkeypatch)
    cache = TableCache(tmp_path / "cache")
    for _ in range(3):
        _assert_same_as_pandas(read_table(path, features_are_rows=False, cache=cache), path)
    assert hashed == [str(path.resolve())]  # three reads, one hash of the file
    expected = hashlib.sha256(path.read_bytes()).hexdigest()
    assert [entry.name.split(".")[0] for entry in _entries(cache)] == [expected]


def test_a_table_rewritten_with_its_old_size_and_mtime_is_hashed_again(tmp_path, monkeypatch):
    """The memo's key holds the status-change time, which os.utime cannot set back: a memo
    keyed by size and modification time alone would map the new content to the old entry."""
    path = _write_linked(tmp_path / "GSE1.csv")
    monkeypatch.setattr(digest_module, "RACY_SECONDS", 0.0)
    cache = TableCache(tmp_path / "cache")
    first = read_table(path, features_are_rows=False, cache=cache).values.copy()
    assert len(list((cache.folder / "digests").glob("*.sha256"))) == 1  # remembered
    stat = path.stat()
    text = path.read_text()
    position = text.index("\n") + 1 + text.splitlines()[1].index(",") + 3
    assert text[position].isdigit()
    path.write_text(text[:position] + str((int(text[position]) + 1) % 10) + text[position + 1 :])
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert (path.stat().st_size, path.stat().st_mtime_ns) == (stat.st_size, stat.st_mtime_ns)
    second = read_table(path, features_are_rows=False, cache=cache)
    _assert_same_as_pandas(second, path)
    assert not np.array_equal(first, second.values, equal_nan=True)


def test_a_table_changed_just_before_it_was_hashed_is_not_remembered(tmp_path, monkeypatch):
    """A second write within one tick of the file system's clock could leave every stat
    field the same, so a file changed in the last RACY_SECONDS is hashed every time."""
    path = _write_linked(tmp_path / "GSE1.csv")
    hashed = _counting_hashes(monkeypatch)
    cache = TableCache(tmp_path / "cache")
    for _ in range(2):
        read_table(path, features_are_rows=False, cache=cache)
    assert len(hashed) == 2
    assert not list((cache.folder / "digests").glob("*.sha256"))


@pytest.mark.parametrize("damage", ["garbage", "another file's line", "a folder", "a fifo"])
def test_a_damaged_digest_memo_only_costs_hashing(tmp_path, monkeypatch, damage):
    path = _write_linked(tmp_path / "GSE1.csv")
    monkeypatch.setattr(digest_module, "RACY_SECONDS", 0.0)
    cache = TableCache(tmp_path / "cache")
    read_table(path, features_are_rows=False, cache=cache)
    (memo,) = (cache.folder / "digests").glob("*.sha256")
    digest, line, _ = memo.read_text().splitlines()
    memo.unlink()
    if damage == "garbage":
        memo.write_bytes(b"\xff" * 100)
    elif damage == "another file's line":  # a digest that is not this file's: never used
        memo.write_text(f"{'0' * 64}\n{line.replace(str(path.resolve()), '/elsewhere')}\n")
    elif damage == "a folder":
        memo.mkdir()
    elif not hasattr(os, "mkfifo"):
        pytest.skip("no FIFOs on this system")
    else:
        os.mkfifo(memo)  # opening it to read must not block
    hashed = _counting_hashes(monkeypatch)
    table = read_table(path, features_are_rows=False, cache=cache)
    _assert_same_as_pandas(table, path)
    assert len(hashed) == 1
    assert [entry.name.split(".")[0] for entry in _entries(cache)] == [digest]


def test_clear_and_the_bound_remove_digest_memos_but_no_other_file(tmp_path, monkeypatch):
    monkeypatch.setattr(digest_module, "RACY_SECONDS", 0.0)
    cache = TableCache(tmp_path / "cache")
    kept, gone = _write_linked(tmp_path / "A.csv"), _write_linked(tmp_path / "B.csv", seed=3)
    for path in (kept, gone):
        read_table(path, features_are_rows=False, cache=cache)
    digests = cache.folder / "digests"
    assert len(list(digests.glob("*.sha256"))) == 2
    mine = digests / "notes.sha256"
    mine.write_text("the user's own file")
    gone.unlink()
    cache.evict()  # B's memo describes a file that is gone
    assert len(list(digests.glob("[0-9a-f]*.sha256"))) == 1 and mine.exists()
    cache.clear()
    assert not list(digests.glob("[0-9a-f]*.sha256")) and mine.exists()


# ---- the reference's digests (issue #36, items 2 and 5) -----------------------------------------
def _eval_json(args: list[str], out: Path) -> dict:
    import json

    from click.testing import CliRunner

    from genotex.cli import main

    result = CliRunner().invoke(main, [*args, "--no-progress", "--json", str(out)])
    assert result.exit_code == 0, result.output
    return json.loads(out.read_text())["run"]["provenance"]


def _files(folder: Path) -> list[str]:
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())


def test_eval_writes_no_hash_memo_outside_its_cache(eval_fixtures, tmp_path, monkeypatch):
    from tests.conftest import eval_args

    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / ".cache"))
    monkeypatch.delenv("GENOTEX_CACHE", raising=False)
    case = eval_fixtures / "case1"
    _eval_json(eval_args(case, "--no-cache"), tmp_path / "a.json")
    assert _files(home) == []  # nothing at all: no tables, no digests, no sha256-cache.json
    chosen = tmp_path / "chosen"
    _eval_json(eval_args(case, "--cache-dir", str(chosen)), tmp_path / "b.json")
    assert _files(home) == [] and _files(chosen)  # everything under the folder named


def test_an_analysis_eval_digests_only_the_answers(eval_fixtures, tmp_path):
    from tests.conftest import eval_args

    case = eval_fixtures / "case1"
    digests = _eval_json(eval_args(case, "--no-cache", "-t", "analysis"), tmp_path / "a.json")
    assert digests["reference_digest"]["preprocess"] is None
    assert digests["reference_digest"]["regress"]["files"] > 0


def test_a_reference_edited_behind_its_old_size_and_mtime_gets_a_new_digest(
    eval_fixtures, tmp_path
):
    import shutil

    from tests.conftest import eval_args

    case = tmp_path / "case"
    shutil.copytree(eval_fixtures / "case1", case)
    cache = tmp_path / "cache"
    args = eval_args(case, "--cache-dir", str(cache), "-t", "analysis")
    first = _eval_json(args, tmp_path / "a.json")["reference_digest"]["regress"]["sha256"]
    answer = next((case / "ref" / "output" / "regress").rglob("*.json"))
    info = answer.stat()
    text = answer.read_text()
    digit = next(c for c in text if c.isdigit())
    answer.write_text(text.replace(digit, str((int(digit) + 1) % 10), 1))  # same size
    os.utime(answer, ns=(info.st_atime_ns, info.st_mtime_ns))  # and the old mtime (touch -r)
    assert answer.stat().st_size == info.st_size
    second = _eval_json(args, tmp_path / "b.json")["reference_digest"]["regress"]["sha256"]
    assert second != first  # the memo did not hand back the old file's digest

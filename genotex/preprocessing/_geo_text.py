"""Decompressed GEO text: the limits every GEO reader applies, and the text in whole lines.

ISA-L decompresses gzip at ~530 MB/s here where zlib does ~250 MB/s (a 79 MB gzip
of a 50,000 x 500 series matrix, scripts/bench_preprocess.py), in a thread one
chunk ahead of the parser.
"""

from __future__ import annotations

import io
import math
import os
import queue
import threading
import zlib
from collections.abc import Generator, Iterator
from pathlib import Path
from typing import Any, TypeVar, cast

from isal import igzip, isal_zlib

from ..core import GenotexError, open_regular

__all__ = [
    "GEOFormatError",
    "MAX_LINE_ENV",
    "MAX_TEXT_ENV",
    "lines_of",
    "text_chunks",
]

#: What ISA-L raises on a corrupt deflate stream (truncation is an EOFError, as with gzip).
_IsalError = cast("type[Exception]", isal_zlib.error)


class GEOFormatError(GenotexError):
    """A GEO file that is truncated, not gzip, or lacks the parts it must have."""


#: Longest line and most decompressed text a GEO file may hold, in MB; the environment
#: variables raise them (`genotex preprocess/inspect --max-line-mb/--max-text-mb` set them).
#: A series-matrix line of 2,000 samples is ~40 KB; the largest GEO matrices are a few GB.
DEFAULT_MAX_LINE_MB, DEFAULT_MAX_TEXT_MB = 64, 32 * 1024
MAX_LINE_ENV, MAX_TEXT_ENV = "GENOTEX_MAX_LINE_MB", "GENOTEX_MAX_TEXT_MB"


def _limit(variable: str, default: float) -> int:
    """A limit in bytes: the environment's value in MB if it is a positive number, else the
    default.
    """
    try:
        value = float(os.environ.get(variable, default))
    except ValueError:
        value = default
    return int((value if math.isfinite(value) and value > 0 else default) * 1024 * 1024)


def _limits() -> tuple[int, int]:
    """The longest line and the most text a GEO file may hold, in bytes."""
    return _limit(MAX_LINE_ENV, DEFAULT_MAX_LINE_MB), _limit(MAX_TEXT_ENV, DEFAULT_MAX_TEXT_MB)


def _open_binary(path: Path) -> igzip.IGzipFile | io.BufferedReader:
    """The file's bytes, through gzip when it starts with gzip's magic number.

    Only a regular file is opened (a FIFO named like a matrix would block forever).
    """
    try:
        with open_regular(path, error=GEOFormatError) as probe:
            gzipped = probe.read(2) == b"\x1f\x8b"
    except OSError as exc:
        raise GEOFormatError(f"cannot be read ({exc.strerror or exc})", path=path) from None
    return igzip.open(path, "rb") if gzipped else open(path, "rb")


def _bounded_lines(handle: Any, path: Path) -> Iterator[Any]:
    """The lines of a handle (binary or text), refusing one longer than the line limit and text
    past the size limit (a small gzip can hold one line of hundreds of MB).
    """
    max_line, max_text = _limits()
    total = 0
    number = 0
    while True:
        line = handle.readline(max_line + 1)
        if not line:
            return
        number += 1
        if len(line) > max_line:
            raise _line_too_long(number, max_line, path)
        total += len(line)
        if total > max_text:
            raise _too_much_text(max_text, path)
        yield line


def _line_too_long(number: int, max_line: int, path: Path) -> GEOFormatError:
    return GEOFormatError(
        f"line {number} is longer than {max_line // 1048576} MB "
        f"(set {MAX_LINE_ENV} to raise the limit)",
        path=path,
    )


def _too_much_text(max_text: int, path: Path) -> GEOFormatError:
    return GEOFormatError(
        f"holds more than {max_text // 1048576:,} MB of text "
        f"(set {MAX_TEXT_ENV} to raise the limit)",
        path=path,
    )


#: Decompressed bytes read at once, and table lines parsed by polars at once.
_CHUNK = 8 << 20
_Item = TypeVar("_Item")


def _ahead(items: Generator[_Item, None, None]) -> Iterator[_Item]:
    """The items of a generator, made in a thread one item ahead of the reader.

    ISA-L and polars release the GIL, so decompressing and cutting the next chunk
    into whole lines overlaps the parse of this one. An exception is raised in the
    reader; a reader that stops early stops the thread (and closes the file).
    """
    made: queue.Queue[_Item | BaseException | None] = queue.Queue(maxsize=2)
    stop = threading.Event()

    def produce() -> None:
        try:
            for item in items:
                if stop.is_set():
                    break
                _put(made, item, stop)
            _put(made, None, stop)
        except BaseException as exc:  # noqa: BLE001 - every failure is handed to the reader
            _put(made, exc, stop)
        finally:
            items.close()

    thread = threading.Thread(target=produce, name="genotex-gunzip", daemon=True)
    thread.start()
    try:
        while (item := made.get()) is not None:
            if isinstance(item, BaseException):
                raise item
            yield item
    finally:
        stop.set()
        thread.join()


def _put(made: queue.Queue[Any], item: Any, stop: threading.Event) -> None:
    while not stop.is_set():
        try:
            made.put(item, timeout=0.1)
            return
        except queue.Full:
            continue


def text_chunks(path: Path, *, chunk: int | None = None) -> Iterator[tuple[int, bytes]]:
    """(number of its first line, text of whole lines) of the decompressed file, about `chunk`
    bytes at a time, refusing a line longer than the line limit and text past the size limit
    (a small gzip can hold one line of hundreds of MB).

    Whole chunks cost a fraction of `readline` on a gzip stream, and the table's
    lines are never split into Python objects (scripts/bench_preprocess.py). The
    chunks are made in a thread one chunk ahead of the reader (`_ahead`).
    """
    return _ahead(_whole_lines(path, chunk or _CHUNK))


def _whole_lines(path: Path, chunk: int) -> Generator[tuple[int, bytes], None, None]:
    max_line, max_text = _limits()
    total = first = 0
    carry = b""
    try:
        with _open_binary(path) as handle:
            while data := handle.read(chunk):
                total += len(data)
                if total > max_text:
                    raise _too_much_text(max_text, path)
                cut = data.rfind(b"\n") + 1
                if cut:  # one copy: the carried part line, then this chunk's whole lines
                    whole, carry = b"".join((carry, memoryview(data)[:cut])), data[cut:]
                else:
                    whole, carry = b"", carry + data
                if max_line <= chunk:  # a line within a chunk may pass the limit: look at each
                    _check_lengths(whole.split(b"\n")[:-1], first, max_line, path)
                lines = whole.count(b"\n")
                _check_lengths([carry], first + lines, max_line - 1, path)
                if whole:
                    yield first, whole
                first += lines
    except (OSError, EOFError, zlib.error, _IsalError) as exc:
        raise GEOFormatError(f"is a truncated or corrupt gzip file ({exc})", path=path) from None
    if carry:
        yield first, carry + b"\n"


def _check_lengths(lines: list[bytes], first: int, longest: int, path: Path) -> None:
    """Refuse a line of `longest` bytes or more (a newline makes it one byte longer)."""
    if lines and max(map(len, lines)) >= longest:
        number = first + next(i for i, line in enumerate(lines) if len(line) >= longest) + 1
        raise _line_too_long(number, longest + 1, path)


def lines_of(path: Path) -> Iterator[str]:
    try:
        with (
            _open_binary(path) as raw,
            # utf-8-sig: a byte-order mark (Windows editors write one) is not part of the text;
            # universal newlines read CRLF line ends as LF
            io.TextIOWrapper(raw, encoding="utf-8-sig", errors="replace") as handle,
        ):
            yield from _bounded_lines(handle, path)
    except (OSError, EOFError, zlib.error, _IsalError) as exc:
        raise GEOFormatError(f"is a truncated or corrupt gzip file ({exc})", path=path) from None

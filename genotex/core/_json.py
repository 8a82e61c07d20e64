"""One guarded JSON reader for every file genotex reads.

Every JSON file a user hands us is untrusted: task_info, recipes, records,
results, saved reports, manifests, caches. `parse_json` and `read_json` accept
what an ordinary editor writes (a UTF-8 byte-order mark included) and refuse,
with one sentence naming the file, what would otherwise crash or mislead a
reader further on:

- more than `max_bytes` of text (the file is not read past the limit);
- nesting deeper than `MAX_DEPTH` (a reader walking it would recurse too deep);
- an integer of more than `MAX_DIGITS` digits or a number beyond `MAX_MAGNITUDE`
  (`1e999`, `Infinity`): sums and means of such numbers overflow to `inf`;
- anything that is not a regular file (a FIFO would block forever).
"""

from __future__ import annotations

import json
import math
import os
import stat
from pathlib import Path
from typing import Any, BinaryIO

from ._errors import GenotexError

__all__ = [
    "MAX_DEPTH",
    "MAX_DIGITS",
    "MAX_JSON_BYTES",
    "MAX_MAGNITUDE",
    "finite_or_none",
    "json_text",
    "open_regular",
    "parse_json",
    "read_json",
    "read_regular_bytes",
]

#: Deepest nesting accepted: every genotex file is at most 5 levels deep.
MAX_DEPTH = 64
#: Longest integer accepted, in digits (a 64-bit integer has 19).
MAX_DIGITS = 30
#: Largest magnitude of a number: a mean of a billion of them stays finite.
MAX_MAGNITUDE = 1e300
#: Default size limit of a JSON file (a full benchmark's eval report is ~10 MB).
MAX_JSON_BYTES = 256 * 1024 * 1024


class _Refused(ValueError):
    """Raised inside the decoder's hooks; turned into the caller's error with the file's name."""


def _integer(text: str) -> int:
    if len(text.lstrip("-")) > MAX_DIGITS:
        raise _Refused(f"it holds an integer of {len(text.lstrip('-'))} digits")
    return int(text)


def _float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value) or abs(value) > MAX_MAGNITUDE:
        raise _Refused(f"it holds the number {text[:20]}, beyond the range genotex accepts")
    return value


def _constant(text: str) -> float:
    if text == "NaN":
        return math.nan  # Python's own writer emits NaN; it means a missing value
    raise _Refused(f"it holds {text}, which is not a number JSON allows")


def _check_depth(data: Any) -> None:
    """Refuse nesting deeper than MAX_DEPTH, walking the parsed value without recursion."""
    stack = [(data, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise _Refused(f"it is nested more than {MAX_DEPTH} levels deep")
        if isinstance(node, dict):
            stack.extend((value, depth + 1) for value in node.values())
        elif isinstance(node, list):
            stack.extend((value, depth + 1) for value in node)


def parse_json(
    text: str | bytes,
    *,
    source: str | Path | None = None,
    error: type[GenotexError] = GenotexError,
) -> Any:
    """Parse JSON text under the limits above; a fault is `error` naming `source`.

    Parameters
    ----------
    text
        The JSON text; bytes are decoded as UTF-8, with or without a byte-order mark.
    source
        The file the text came from, named in the error.
    error
        The error class to raise (each file format has its own).
    """
    try:
        if isinstance(text, bytes):
            text = text.decode("utf-8-sig")
        text = text.removeprefix("\ufeff")
        data = json.loads(text, parse_int=_integer, parse_float=_float, parse_constant=_constant)
        _check_depth(data)
        return data
    except _Refused as exc:
        raise error(str(exc), path=source) from None
    except json.JSONDecodeError as exc:
        raise error(f"it is not valid JSON ({exc.msg}, line {exc.lineno})", path=source) from None
    except UnicodeDecodeError:
        raise error("it is not UTF-8 text", path=source) from None
    except RecursionError:
        raise error(f"it is nested more than {MAX_DEPTH} levels deep", path=source) from None
    except ValueError as exc:  # int() beyond Python's digit limit, and the like
        raise error(f"it cannot be read as JSON ({exc})", path=source) from None


def finite_or_none(value: Any) -> Any:
    """`value` with every NaN or infinite float replaced by None, at any depth (lists, dicts)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: finite_or_none(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite_or_none(v) for v in value]
    return value


def json_text(data: Any, *, indent: int = 1) -> str:
    """Deterministic, valid JSON text: sorted keys, a missing or non-finite number as null.

    Python's own writer emits bare `NaN` and `Infinity`, which are not JSON.
    """
    return json.dumps(finite_or_none(data), indent=indent, sort_keys=True, allow_nan=False) + "\n"


#: What Python's `str.splitlines` splits at that JSON leaves raw in a string (the C0 controls
#: it escapes itself): NEL and the Unicode line and paragraph separators.
_LINE_BREAKERS = {"\x85": "\\u0085", "\u2028": "\\u2028", "\u2029": "\\u2029"}


def json_line(data: Any) -> str:
    """One JSON object on one line, whatever its strings hold: non-ASCII kept readable, but
    every character a reader's line splitting would break at escaped (a record of a series
    holding U+2028 stays one line of a JSONL file).
    """
    text = json.dumps(data, ensure_ascii=False)
    for char, escaped in _LINE_BREAKERS.items():
        text = text.replace(char, escaped)
    return text


def open_regular(path: str | Path, *, error: type[GenotexError]) -> BinaryIO:
    """A regular file opened for reading in binary; anything else (a FIFO, a folder, a device)
    is `error` at once, never a read that waits forever.
    """
    path = Path(path)
    try:
        # O_NONBLOCK: opening a FIFO must not wait for a writer; it is refused just below
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        raise error("the file does not exist", path=path) from None
    except OSError as exc:
        raise error(f"it cannot be opened ({exc.strerror or exc})", path=path) from None
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):  # before fdopen, which refuses a folder naming the fd, not it
        os.close(fd)
        reason = "it is a folder, not a file" if stat.S_ISDIR(mode) else "it is not a regular file"
        raise error(reason, path=path)
    return os.fdopen(fd, "rb")


def read_regular_bytes(path: str | Path, max_bytes: int, *, error: type[GenotexError]) -> bytes:
    """A regular file's bytes, refused when it is anything else or larger than `max_bytes`."""
    path = Path(path)
    with open_regular(path, error=error) as handle:
        if os.fstat(handle.fileno()).st_size > max_bytes:
            limit = max_bytes / (1024 * 1024)
            raise error(f"it is larger than the size limit ({limit:g} MB)", path=path)
        try:
            data = handle.read(max_bytes + 1)
        except OSError as exc:
            raise error(f"it cannot be read ({exc.strerror or exc})", path=path) from None
    if len(data) > max_bytes:  # it grew while being read
        raise error(f"it is larger than the size limit ({max_bytes / 1048576:g} MB)", path=path)
    return data


def read_json(
    path: str | Path,
    error: type[GenotexError] = GenotexError,
    *,
    max_bytes: int = MAX_JSON_BYTES,
) -> Any:
    """Read and parse a JSON file under the limits above; a fault is `error` naming the file."""
    return parse_json(read_regular_bytes(path, max_bytes, error=error), source=path, error=error)

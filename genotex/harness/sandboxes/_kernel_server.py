"""The kernel's process inside a sample's sandbox: one Python state that the steps of a cohort
share, as a notebook's cells share a Jupyter kernel's.

This file is the process's whole program: the host runs it as `python -c <this source>` in
the sandbox (nothing to install there, no import of genotex or Inspect before the agents'
code asks for it), standard library only. The protocol is one JSON object a line:

- the host writes `{"id": str, "code": str, "name": str, "limit": int}`;
- the kernel runs the code (compiled under `name`, so its trace names the step), with its
  standard output and error, its subprocesses' included, going to a file of `/tmp`; and
  answers `{"id": str, "output": str, "error": str | null, "cut": bool, "seconds": float}`,
  the request's id echoed, the output cut to its first and last `limit // 2` characters.

The first line the kernel writes is `{"ready": true}`. End of input ends the process.

Step code runs in this process and can reach anything in it: it can write a frame of its
own on the channel. The host therefore takes only the answer that carries the current
request's id, and restarts the kernel when a line is not a frame; a step can still forge
its *own* answer, never a later step's. A child a step forks and leaves running returns
here and exits at once; a step that replaces `sys.stdout` gets it back.
"""

from __future__ import annotations

import json
import linecache
import os
import sys
import time
import traceback

# the protocol's channel is a copy of the standard output made before anything runs; the
# descriptors 1 and 2 then go to a file, so that what a step (or its subprocess) prints is
# its output and never a line of the protocol
_channel = os.fdopen(os.dup(1), "w", encoding="utf-8", buffering=1)
_requests = os.fdopen(os.dup(0), "r", encoding="utf-8")
os.dup2(os.open(os.devnull, os.O_RDONLY), 0)  # a step that reads its input reads nothing
sys.stdin = open(os.devnull, encoding="utf-8")  # noqa: SIM115 - the process's own, for good
_capture_path = os.path.join(os.environ.get("TMPDIR", "/tmp"), f".kernel-{os.getpid()}.out")
_capture = os.open(_capture_path, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o600)
os.dup2(_capture, 1)
os.dup2(_capture, 2)
sys.stdout = os.fdopen(1, "w", encoding="utf-8", errors="backslashreplace", buffering=1)
sys.stderr = os.fdopen(2, "w", encoding="utf-8", errors="backslashreplace", buffering=1)
_state = {"__name__": "__main__", "__builtins__": __builtins__}
#: What a step may replace and the kernel needs back: its streams, its pid, its encoder.
_STREAMS = (sys.stdin, sys.stdout, sys.stderr)
_PID = os.getpid()
_encode = json.JSONEncoder(ensure_ascii=True).encode
_decode = json.JSONDecoder().decode
_exit = os._exit


def _taken_output(limit: int) -> tuple[str, bool]:
    """What the step printed (then the file is emptied), cut to `limit` characters."""
    sys.stdout.flush()
    sys.stderr.flush()
    size = os.lseek(_capture, 0, os.SEEK_END)
    os.lseek(_capture, 0, os.SEEK_SET)
    head = os.read(_capture, min(size, limit * 4 + 4))
    tail = b""
    if size > len(head):
        os.lseek(_capture, max(size - limit * 4, len(head)), os.SEEK_SET)
        tail = os.read(_capture, limit * 4)
    os.ftruncate(_capture, 0)
    os.lseek(_capture, 0, os.SEEK_SET)
    text = head.decode("utf-8", "backslashreplace") + tail.decode("utf-8", "backslashreplace")
    cut = size > len(head) + len(tail) or len(text) > limit
    if len(text) > limit:
        half = max(limit // 2, 1)
        text = f"{text[:half]}\n[... output cut: {size:,} bytes in all ...]\n{text[-half:]}"
    return text, cut


def _trace(name: str) -> str:
    """The error's trace from the step's own frames on (the kernel's frames left out)."""
    kind, value, frames = sys.exc_info()
    while frames is not None and frames.tb_frame.f_code.co_filename != name:
        frames = frames.tb_next
    return "".join(traceback.format_exception(kind, value, frames))


def _run(request: dict) -> dict:
    name = str(request.get("name") or "<step>")
    limit = max(int(request.get("limit") or 10_000), 100)
    error: str | None = None
    started = time.perf_counter()
    code = str(request.get("code") or "")
    linecache.cache[name] = (len(code), None, code.splitlines(True), name)  # the trace's lines
    try:
        exec(compile(code, name, "exec"), _state)  # noqa: S102
    except BaseException as exc:  # noqa: BLE001 - the step's error is its answer, whatever it was
        if os.getpid() != _PID:  # a child the step forked, unwinding into the kernel: gone
            _exit(0)
        error = _trace(name)
        if isinstance(exc, SystemExit) and exc.code in (None, 0):
            error = None
    if os.getpid() != _PID:
        _exit(0)
    sys.stdin, sys.stdout, sys.stderr = _STREAMS
    output, cut = _taken_output(limit)
    seconds = round(time.perf_counter() - started, 3)
    return {"output": output, "error": error, "cut": cut, "seconds": seconds}


def _answer(line: str) -> dict:
    """The answer to one request line, whatever the step did (every exception caught)."""
    try:
        request = _decode(line)
    except BaseException:  # noqa: BLE001 - a line nested too deep raises RecursionError
        return {"output": "", "error": "the kernel got an unreadable request", "cut": False}
    if not isinstance(request, dict):
        request = {}
    try:
        answer = _run(request)
    except BaseException as exc:  # noqa: BLE001 - the kernel answers, whatever broke
        sys.stdin, sys.stdout, sys.stderr = _STREAMS
        answer = {"output": "", "error": f"the kernel failed: {type(exc).__name__}", "cut": False}
    answer["id"] = str(request.get("id", ""))
    return answer


def _serve() -> None:
    _channel.write(_encode({"ready": True}) + "\n")
    for line in _requests:
        answer = _answer(line)
        try:
            text = _encode(answer)
        except BaseException:  # noqa: BLE001 - a step that broke the encoder: a plain answer
            ident = "".join(c for c in str(answer["id"]) if c.isalnum() or c == "-")
            text = '{"id": "' + ident + '", "output": "", "error": "unencodable", "cut": false}'
        _channel.write(text + "\n")


if __name__ == "__main__":
    _serve()

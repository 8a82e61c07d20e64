"""The kernel's program, its first part: the template's and the worker's side (the second,
the supervisor's, is `_kernel_server.py`, whose docstring says the whole protocol).

`_kernel._server_source` joins the two files into the one program the host runs with
`python -c` in the sandbox: standard library only, nothing of genotex or Inspect imported.
"""

from __future__ import annotations

import _socket as socket  # the C module: what the kernel uses, without socket.py's imports
import json
import linecache
import os
import struct
import sys
import time
import traceback
import types
from collections.abc import Callable

#: A worker frame's header: the length of the JSON that follows.
_HEADER = struct.Struct("!Q")


def _setup() -> tuple[types.ModuleType, int, list]:
    """The worker's process made ready: the steps' `__main__` (a namespace of their own, as in
    a notebook; this program's module is not), its input emptied, its output and error going
    to a capture file. Returns the namespace, the capture's fd and the standard streams.
    """
    os.environ["GENOTEX_KERNEL"] = "1"  # a library's guard is for this process (agentlib)
    namespace = types.ModuleType("__main__")
    namespace.__dict__["__builtins__"] = __builtins__
    sys.modules["__main__"] = namespace
    os.dup2(os.open(os.devnull, os.O_RDONLY), 0)  # a step that reads its input reads nothing
    path = os.path.join(os.environ.get("TMPDIR", "/tmp"), f".kernel-{os.getpid()}.out")
    capture = os.open(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o600)
    os.dup2(capture, 1)
    os.dup2(capture, 2)
    return namespace, capture, [_stream(0, "r"), _stream(1, "w"), _stream(2, "w")]


def _stream(fd: int, mode: str) -> object:
    """A standard stream over `fd`; closefd=False: a step that closes it closes the wrapper."""
    return open(fd, mode, encoding="utf-8", errors="backslashreplace", buffering=1,  # noqa: SIM115
                closefd=False)  # fmt: skip


def _restorer(capture: list, streams: list, namespace: types.ModuleType) -> Callable[..., None]:
    """What puts back the worker's own streams, fds, builtins and `__main__`, whatever a step
    did: a step that closes `sys.stdout` or replaces `print` breaks itself, never the next
    step (which would be blamed for it). The builtins put back are those after the host's
    own `<preamble>` step (`adopt=True`), which may install guards there (agentlib's).
    """
    import builtins

    dup2, modules, stream, own = os.dup2, sys.modules, _stream, builtins.__dict__
    saved, state = dict(own), namespace.__dict__

    def restore(*, adopt: bool = False) -> None:
        if adopt:  # the host's preamble: its builtins are the kernel's from now on
            saved.clear()
            saved.update(own)
        dup2(capture[0], 1)
        dup2(capture[0], 2)
        for fd, mode in ((0, "r"), (1, "w"), (2, "w")):
            if streams[fd].closed:
                streams[fd] = stream(fd, mode)
        sys.stdin, sys.stdout, sys.stderr = streams
        modules["__main__"] = namespace
        modules["builtins"] = builtins
        for name in [n for n in own if n not in saved]:
            del own[name]
        for name, value in saved.items():
            if own.get(name, own) is not value:
                own[name] = value
        state["__builtins__"] = builtins

    return restore


def _new_capture(capture: list) -> None:
    """A capture file of its own for the next step: a child an earlier step forked and left
    running keeps writing into the earlier file, never into this step's record.
    """
    fresh = os.memfd_create("genotex-step")
    os.dup2(fresh, 1)
    os.dup2(fresh, 2)
    os.close(capture[0])
    capture[0] = fresh


def _output_taker(capture_box: list, streams: list) -> Callable[[int], tuple[str, bool]]:
    """What takes a step's output (then empties the file), cut to `limit` characters."""
    lseek, read, ftruncate, base_exception = os.lseek, os.read, os.ftruncate, BaseException

    def taken_output(limit: int) -> tuple[str, bool]:
        capture = capture_box[0]
        for written in streams[1:]:
            try:
                written.flush()
            except base_exception:  # noqa: BLE001 - a stream the step broke
                pass
        size = lseek(capture, 0, os.SEEK_END)
        lseek(capture, 0, os.SEEK_SET)
        head = read(capture, min(size, limit * 4 + 4))
        tail = b""
        if size > len(head):
            lseek(capture, max(size - limit * 4, len(head)), os.SEEK_SET)
            tail = read(capture, limit * 4)
        ftruncate(capture, 0)
        lseek(capture, 0, os.SEEK_SET)
        text = head.decode("utf-8", "backslashreplace") + tail.decode("utf-8", "backslashreplace")
        cut = size > len(head) + len(tail) or len(text) > limit
        if len(text) > limit:
            half = max(limit // 2, 1)
            text = f"{text[:half]}\n[... output cut: {size:,} bytes in all ...]\n{text[-half:]}"
        return text, cut

    return taken_output


#: The name of the host's own first step (`_kernel.Kernel.start`): what it leaves in the
#: builtins (a guard) is kept for every later step
PREAMBLE = "<preamble>"
#: The most frames of a step's trace formatted: a recursion bomb's million frames took
#: ~18 s to format, and the crash was reported as a timeout
TRACE_FRAMES = 100


def _tracer() -> Callable[[str, BaseException], str]:
    """What gives an error's trace from the step's own frames on (the kernel's left out),
    its frames counted before any is formatted and cut to `TRACE_FRAMES`.
    """
    format_exception = traceback.format_exception

    def trace(name: str, error: BaseException) -> str:
        frames = error.__traceback__
        while frames is not None and frames.tb_frame.f_code.co_filename != name:
            frames = frames.tb_next
        count, node = 0, frames
        while node is not None:
            count, node = count + 1, node.tb_next
        text = "".join(format_exception(type(error), error, frames, limit=TRACE_FRAMES))
        if count > TRACE_FRAMES:
            text += f"[... trace cut: {count:,} frames, the first {TRACE_FRAMES} shown ...]\n"
        return text

    return trace


def _worker(requests: int, results: socket.socket, orders: int) -> None:
    """The template's process, then each worker's: never returns.

    As the template it reads the supervisor's `orders`: a preamble request, run and answered
    on `results`, or `{"fork": true}`, a worker forked, its pid said, its end waited for and
    said (`{"worker": pid}`, `{"ended": exit code}`). As a worker it runs each step forwarded
    on `requests` and answers on `results`. Everything its loops call is bound here, in its
    own frame and closures, before any step runs: a step that replaces a global of this
    program or `sys.modules['__main__']` reaches none of it.
    """
    decode, encode = json.JSONDecoder().decode, json.JSONEncoder(ensure_ascii=True).encode
    pid, exit_now, me, clock = os.getpid, os._exit, [os.getpid()], time.perf_counter
    compile_, exec_, base_exception, system_exit = compile, exec, BaseException, SystemExit
    send, pack, cache = results.sendall, _HEADER.pack, linecache.cache
    namespace, first_capture, streams = _setup()
    capture = [first_capture]  # the step's own capture file (`_new_capture`)
    state, lines = namespace.__dict__, os.fdopen(requests, "r", encoding="utf-8")
    restore, taken_output = _restorer(capture, streams, namespace), _output_taker(capture, streams)
    trace, unencodable, new_capture = _tracer(), _unencodable, _new_capture

    def run(request: dict) -> dict:
        name = str(request.get("name") or "<step>")
        limit = max(int(request.get("limit") or 10_000), 100)
        error: str | None = None
        started = clock()
        code = str(request.get("code") or "")
        cache[name] = (len(code), None, code.splitlines(True), name)  # the trace's lines
        new_capture(capture)
        restore()
        try:
            exec_(compile_(code, name, "exec"), state)
        except base_exception as exc:  # noqa: BLE001 - the step's error is its answer
            if pid() != me[0]:  # a child the step forked, unwinding into the kernel: gone
                exit_now(0)
            error = trace(name, exc)
            if isinstance(exc, system_exit) and exc.code in (None, 0):
                error = None
        if pid() != me[0]:
            exit_now(0)
        restore(adopt=name == PREAMBLE)
        output, cut = taken_output(limit)
        return {"output": output, "error": error, "cut": cut,
                "seconds": round(clock() - started, 3)}  # fmt: skip

    def answer(line: str) -> bytes:
        request: dict = {}
        try:
            request = decode(line)
            request = request if isinstance(request, dict) else {}
            result = run(request)
        except base_exception as exc:  # noqa: BLE001 - the kernel answers, whatever broke
            restore()
            result = {"output": "", "error": f"the kernel failed: {type(exc).__name__}"}
        result["nonce"] = str(request.get("nonce", ""))
        try:
            return encode(result).encode()
        except base_exception:  # noqa: BLE001 - a result the encoder cannot write
            return unencodable(request)

    _template(orders, answer, results)  # returns in a worker it forked
    me[0] = pid()
    while True:  # a worker
        line = lines.readline()
        if not line:
            exit_now(0)
        body = answer(line)
        try:
            send(pack(len(body)) + body)
        except base_exception:  # noqa: BLE001 - the supervisor is gone
            exit_now(0)


def _template(orders: int, answer: Callable[[str], bytes], results: socket.socket) -> None:
    """The template's loop: no step's code ever runs here. Each of the supervisor's `orders`
    is a preamble request, run and answered, or a fork: the worker's pid said, its end
    waited for and said. Returns only in a forked worker; ends with the last worker's end
    when the orders end.
    """
    encode, decode = json.JSONEncoder(ensure_ascii=True).encode, json.JSONDecoder().decode

    def tell(body: bytes) -> None:  # the supervisor may be gone: its orders end then too
        try:
            results.sendall(_HEADER.pack(len(body)) + body)
        except BaseException:  # noqa: BLE001
            pass

    said = os.fdopen(orders, "r", encoding="utf-8")
    ended = 0
    while True:
        line = said.readline()
        if not line:  # the supervisor is done: the last worker's end is the template's
            _end_as(ended)
        if decode(line).get("fork") is not True:
            tell(answer(line))  # the host's preamble
            continue
        child = os.fork()
        if child == 0:
            said.close()
            return
        tell(encode({"worker": child}).encode())
        _, status = os.waitpid(child, 0)
        ended = os.waitstatus_to_exitcode(status)
        tell(encode({"ended": ended}).encode())


def _end_as(code: int) -> None:
    """End as a process that ended with `code` ended: killed by its signal, or exiting."""
    if code < 0:
        os.kill(os.getpid(), -code)
    os._exit(code)


def _unencodable(request: dict) -> bytes:
    """The answer of a step whose result the encoder cannot write (it broke the encoder)."""
    nonce = "".join(c for c in str(request.get("nonce", "")) if c.isalnum())
    return b'{"output": "", "error": "unencodable", "nonce": "%s"}' % nonce.encode()

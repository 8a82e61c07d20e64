"""The kernel's processes inside a sample's sandbox: one Python state that the steps of a cohort
share, as a notebook's cells share a Jupyter kernel's.

This file is the program: the host runs it as `python -c <this source>` in the sandbox
(nothing to install there, no import of genotex or Inspect before the agents' code asks
for it), standard library only. The protocol is one JSON object a line:

- the host writes `{"id": str, "code": str, "name": str, "limit": int}`;
- the kernel runs the code (compiled under `name`, so its trace names the step), with its
  standard output and error, its subprocesses' included, going to a file of `/tmp`; and
  answers `{"id": str, "output": str, "error": str | null, "cut": bool, "seconds": float}`,
  the request's id echoed, the output cut to its first and last `limit // 2` characters.

The first line the kernel writes is `{"ready": true}`. End of input ends the process.

Three processes, so that step code never reaches the protocol. The *supervisor* (the
process the host started) holds the channel to the host and nothing else: it forwards
each request's code to the *worker*, which holds the state and runs the steps, and
answers the host with the worker's result under the request's id, which the worker never
sees. The worker is forked by the *template*, the supervisor's child, which runs the
host's preamble and no step: a reset (`{"id": str, "reset": true}`, answered
`{"id": str, "reset": bool}`) kills the worker and every process the steps started (the
supervisor's descendants but the template), and the next step runs in a fresh fork of
the template, the state the preamble left, without a new interpreter and its imports
(1.2-1.5 s of the paper library's). The worker writes its results on a Unix socket that
tells the supervisor which process wrote (SO_PASSCRED): only the worker's own frames are taken, so
a child a step forked and left running cannot answer for a later step. The worker's
loop holds what it calls in its own closure, and its `__main__` is the steps' namespace:
a step that replaces `__main__._run`, `sys.modules['__main__']`, a global of this
program, its own streams or the builtins changes nothing of how a later step is run and
answered: the streams and the builtins are put back after each step, each step writes
into a capture file of its own (a child an earlier step forked and left running writes
into that step's), and a trace is cut before it is formatted. A step can still forge
its *own* answer (it runs in the worker), and one that goes further, rewriting the
interpreter through ctypes, changes what later code does, as it would in any notebook
kernel; the supervisor (not dumpable: `_undumpable`) and the host's answer of a later step
are out of its reach.
"""

from __future__ import annotations

import _socket as socket  # the C module: what the kernel uses, without socket.py's imports
import contextlib
import json
import linecache
import os
import struct
import sys
import time
import traceback
import types
import typing
from collections.abc import Callable

#: A worker frame's header: the length of the JSON that follows.
_HEADER = struct.Struct("!Q")
#: The largest worker frame taken (a step's output is cut far below it).
_FRAME_BYTES = 64 * 1024 * 1024
#: The credentials a Unix socket passes: pid, uid, gid.
_CREDENTIALS = struct.Struct("3i")


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

    def say(body: bytes) -> None:
        try:
            send(pack(len(body)) + body)
        except base_exception:  # noqa: BLE001 - the supervisor is gone
            exit_now(0)

    def tell(body: bytes) -> None:  # the template's word: the supervisor may be gone
        try:
            send(pack(len(body)) + body)
        except base_exception:  # noqa: BLE001 - its orders end then too
            pass

    said = os.fdopen(orders, "r", encoding="utf-8")
    ended = 0
    while True:  # the template: no step's code ever runs here
        line = said.readline()
        if not line:  # the supervisor is done: the last worker's end is the template's
            _end_as(ended)
        if decode(line).get("fork") is not True:
            tell(answer(line))  # the host's preamble
            continue
        child = os.fork()
        if child == 0:
            break
        tell(encode({"worker": child}).encode())
        _, status = os.waitpid(child, 0)
        ended = os.waitstatus_to_exitcode(status)
        tell(encode({"ended": ended}).encode())
    said.close()
    me[0] = pid()
    while True:  # a worker
        line = lines.readline()
        if not line:
            exit_now(0)
        say(answer(line))


def _end_as(code: int) -> None:
    """End as a process that ended with `code` ended: killed by its signal, or exiting."""
    if code < 0:
        os.kill(os.getpid(), -code)
    os._exit(code)


def _unencodable(request: dict) -> bytes:
    """The answer of a step whose result the encoder cannot write (it broke the encoder)."""
    nonce = "".join(c for c in str(request.get("nonce", "")) if c.isalnum())
    return b'{"output": "", "error": "unencodable", "nonce": "%s"}' % nonce.encode()


class _Results:
    """The result frames of the template and of its current worker, as the supervisor reads
    them off their socket (each writer's bytes apart: SO_PASSCRED names the writer).
    """

    def __init__(self, results: socket.socket, template: int) -> None:
        self.results, self.template = results, template
        #: the current worker's pid (None before the first fork and after a reset)
        self.worker: int | None = None
        self.pending: dict[int, bytearray] = {}
        #: whether a worker ended by itself (a limit, a step's exit), not by a reset
        self.lost = False
        #: whether a worker was forked: the template runs the host's preamble before only
        self.forked = False
        #: frames and bytes passed over: another process's bytes, another request's frames
        self.passed_over = 0

    def _read(self) -> bool:
        """Bytes of the template or the worker into their writer's pending bytes (what any
        other process writes, a child a step forked, is passed over); False when every
        writer is gone.
        """
        space = socket.CMSG_SPACE(_CREDENTIALS.size)
        while True:
            data, ancillary, _, _ = self.results.recvmsg(1 << 20, space)
            if not data:
                return False
            sender = None
            for level, kind, payload in ancillary:
                if level == socket.SOL_SOCKET and kind == socket.SCM_CREDENTIALS:
                    sender = _CREDENTIALS.unpack(payload[: _CREDENTIALS.size])[0]
            if sender is not None and sender in (self.template, self.worker):
                self.pending.setdefault(sender, bytearray()).extend(data)
                return True
            self.passed_over += 1

    def _frame(self) -> tuple[int, dict] | None:
        """The next whole frame, with its writer, or None when every writer is gone;
        ValueError saying why when what was written is no frame (a step wrote on the socket).
        """
        while True:
            for sender, pending in self.pending.items():
                if len(pending) < _HEADER.size:
                    continue
                size = _HEADER.unpack_from(pending)[0]
                if size > _FRAME_BYTES:
                    raise ValueError(f"a frame of {size:,} bytes")
                if len(pending) >= _HEADER.size + size:
                    body = bytes(pending[_HEADER.size : _HEADER.size + size])
                    del pending[: _HEADER.size + size]
                    try:
                        found = json.loads(body)
                    except ValueError:
                        found = None
                    return sender, found if isinstance(found, dict) else {}
            if not self._read():
                return None

    def answer(self, nonce: str) -> dict | None:
        """The result that carries `nonce` (a frame with another is passed over: a step cannot
        know a later request's), or None when the worker is gone (the template says it
        ended) or broke the framing.
        """
        while True:
            found = self._frame()
            if found is None:
                return None
            sender, frame = found
            if sender == self.template and "ended" in frame:
                self.worker, self.lost = None, True
                return None
            if frame.get("nonce") == nonce:
                return frame
            self.passed_over += 1

    def _said(self, key: str) -> object:
        """What the template says next under `key` (the worker's frames passed over)."""
        while True:
            found = self._frame()
            if found is None:
                return None
            sender, frame = found
            if sender == self.template and key in frame:
                return frame[key]
            self.passed_over += 1

    def fork(self, orders: typing.TextIO) -> bool:
        """A worker forked from the template, its pid known before any step is sent to it."""
        orders.write('{"fork": true}\n')
        orders.flush()
        worker = self._said("worker")
        if not isinstance(worker, int) or isinstance(worker, bool):
            return False
        self.worker, self.forked = worker, True
        self.pending.pop(worker, None)
        return True

    def reset(self) -> bool:
        """The worker killed with every process the steps started (the supervisor's
        descendants but the template: the supervisor is their subreaper, so a process a step
        left behind is one of them), its end waited for: the next step runs in a fresh fork.
        False when that cannot be done (the host then starts a new kernel).
        """
        worker, self.worker = self.worker, None
        if worker is None:
            return True
        try:
            killed: set[int] = set()
            for _ in range(5):  # a process forking while the others are killed: again
                for process in _descendants(os.getpid()) - {self.template}:
                    with contextlib.suppress(OSError):
                        os.kill(process, 9)
                        killed.add(process)
                time.sleep(0.01)
            for process in killed:  # the orphans the supervisor adopted, reaped
                with contextlib.suppress(OSError):
                    os.waitpid(process, os.WNOHANG)
            self.worker = worker  # the template's word on its end is taken from it
            self.results.settimeout(10)
            ended = self._said("ended")
        except (OSError, ValueError):
            return False
        finally:
            self.results.settimeout(None)
            self.worker = None
            self.pending.pop(worker, None)
        return isinstance(ended, int)


def _descendants(ancestor: int) -> set[int]:
    """The pids of `ancestor`'s descendants, from each process's parent in /proc."""
    children: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as stat:
                parent = int(stat.read().rsplit(b")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(parent, []).append(int(name))
    found, todo = set(), [ancestor]
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def _supervise(
    channel_in: int, channel_out: int, to_worker: int, orders_fd: int, results: _Results
) -> None:
    """The protocol's side: requests from the host forwarded, the worker's results answered;
    the preamble run in the template, each step in the worker (forked when the first step
    after the preamble or a reset comes).
    """
    host = os.fdopen(channel_in, "r", encoding="utf-8")
    answers = os.fdopen(channel_out, "w", encoding="utf-8", buffering=1)
    forward = os.fdopen(to_worker, "w", encoding="utf-8", buffering=1)
    orders = os.fdopen(orders_fd, "w", encoding="utf-8", buffering=1)
    answers.write(json.dumps({"ready": True}) + "\n")
    for line in host:
        try:
            request = json.loads(line)
        except Exception:  # noqa: BLE001 - a line nested too deep raises RecursionError
            request = None
        if not isinstance(request, dict):
            answers.write(json.dumps({"id": "", "output": "", "error": "the kernel got an "
                                      "unreadable request", "cut": False}) + "\n")  # fmt: skip
            continue
        if request.get("reset") is True:
            try:
                done = results.reset()
            except ValueError:
                done = False
            answers.write(json.dumps({"id": str(request.get("id", "")), "reset": done}) + "\n")
            if not done:
                return  # the host starts a new kernel
            continue
        nonce = os.urandom(16).hex()
        step = {k: request.get(k) for k in ("code", "name", "limit")}
        preamble = not results.forked and step.get("name") == PREAMBLE
        try:
            if not preamble and results.worker is None and not results.fork(orders):
                return  # the template is gone: the host sees the channel close
            (orders if preamble else forward).write(json.dumps({**step, "nonce": nonce}) + "\n")
            (orders if preamble else forward).flush()
        except OSError:
            return  # the worker is gone: the host sees the channel close
        except ValueError as broken:  # said to the host, which restarts the kernel
            answers.write(json.dumps({"id": str(request.get("id", "")), "broken": str(broken)}))
            answers.write("\n")
            return
        try:
            result = results.answer(nonce)
        except ValueError as broken:  # said to the host, which restarts the kernel
            answers.write(json.dumps({"id": str(request.get("id", "")), "broken": str(broken)}))
            answers.write("\n")
            return
        if result is None:
            return  # the worker is gone: the host sees the channel close
        seconds = result.get("seconds")
        answer = {
            "id": str(request.get("id", "")),
            "output": str(result.get("output") or ""),
            "error": result["error"] if isinstance(result.get("error"), str) else None,
            "cut": result.get("cut") is True,
            "seconds": seconds if isinstance(seconds, float) else 0.0,
            "passed_over": results.passed_over,
        }
        results.passed_over = 0
        answers.write(json.dumps(answer, ensure_ascii=True) + "\n")


def _undumpable() -> None:
    """Not dumpable, before the worker is forked: ptrace, `/proc/PID/mem` and `pidfd_getfd` of
    the supervisor are refused to every process of its uid without CAP_SYS_PTRACE (none in a
    sandbox), so no process a step forks can answer the host for later steps (issue #70).
    And the subreaper of its descendants: a process a step left behind, orphaned, becomes
    the supervisor's child, which a reset finds and kills.
    """
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE 0
        libc.prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER 1
    except (OSError, AttributeError):  # no C library to call: the pipes' design stands alone
        pass


def _main() -> None:
    _undumpable()
    channel_in, channel_out = os.dup(0), os.dup(1)
    to_worker_read, to_worker = os.pipe()
    orders_read, orders = os.pipe()
    results, worker_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    results.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)
    sys.stdout.flush()
    template = os.fork()
    if template == 0:  # nothing of the protocol's channel, nor of the supervisor's
        for fd in (channel_in, channel_out, to_worker, orders):
            os.close(fd)
        results.close()
        _worker(to_worker_read, worker_end, orders_read)
    os.close(to_worker_read)
    os.close(orders_read)
    worker_end.close()
    os.dup2(os.open(os.devnull, os.O_RDONLY), 0)  # the supervisor reads only its channel
    found = _Results(results, template)
    # its return closes the worker's input and the template's orders (both then end)
    _supervise(channel_in, channel_out, to_worker, orders, found)
    live = found.worker is not None or found.lost
    results.close()
    _, status = os.waitpid(template, 0)
    code = os.waitstatus_to_exitcode(status)
    # the worker was killed (a limit, a step's signal): the host is told so; one killed
    # by a reset, after which no step ran, ended as asked
    _end_as(code if live or code >= 0 else 0)


if __name__ == "__main__":
    _main()

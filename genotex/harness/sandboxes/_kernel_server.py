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

# no `from __future__` here: this file's source follows `_kernel_worker.py`'s in the program
import _socket as socket  # the C module: what the kernel uses, without socket.py's imports
import contextlib
import json
import os
import struct
import sys
import time
import typing

try:  # as genotex's module (its tests, the type checker): the worker's side from its file
    from ._kernel_worker import _HEADER, PREAMBLE, _end_as, _worker
except ImportError:  # as the kernel's program (`python -c`): that file's source is above
    pass

#: The largest worker frame taken (a step's output is cut far below it).
_FRAME_BYTES = 64 * 1024 * 1024
#: The credentials a Unix socket passes: pid, uid, gid.
_CREDENTIALS = struct.Struct("3i")
#: The rounds of kills a reset makes before it gives up (the host then starts a new kernel):
#: each round kills what the last one found alive, so a fork bomb ends in a few.
_KILL_ROUNDS = 500


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
        # the killed worker's bytes, left or late, are passed over: none can fail the reset
        self.pending.pop(worker, None)
        try:
            if not _end_descendants(self.template):
                return False
            self.results.settimeout(10)
            ended = self._said("ended")  # the template's word on its worker's end
        except (OSError, ValueError):
            return False
        finally:
            self.results.settimeout(None)
        return isinstance(ended, int)


def _end_descendants(spared: int) -> bool:
    """Every live descendant of the supervisor but `spared` (the template) killed, round after
    round until a round finds none (a process that forked before its kill has its child found
    in the next round); the ones the supervisor adopted reaped. False when some still live
    after `_KILL_ROUNDS` rounds.
    """
    killed: set[int] = set()
    for _ in range(_KILL_ROUNDS):
        found = _descendants(os.getpid())
        live = [pid for pid, state in found.items() if pid != spared and state not in b"ZX"]
        if not live:
            for process in killed:  # zombies now: the orphans the supervisor adopted, reaped
                with contextlib.suppress(OSError):
                    os.waitpid(process, os.WNOHANG)
            return True
        for process in live:
            with contextlib.suppress(OSError):
                os.kill(process, 9)
                killed.add(process)
        time.sleep(0.001)  # a SIGKILL takes effect when its process is next scheduled
    return False


def _descendants(ancestor: int) -> dict[int, bytes]:
    """The pids of `ancestor`'s descendants with each one's state (`Z` a zombie), from each
    process's parent in /proc.
    """
    children: dict[int, list[tuple[int, bytes]]] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as stat:
                state, parent = stat.read().rsplit(b")", 1)[1].split()[:2]
            children.setdefault(int(parent), []).append((int(name), state))
        except (OSError, ValueError):
            continue
    found: dict[int, bytes] = {}
    todo = [ancestor]
    while todo:
        for child, state in children.get(todo.pop(), []):
            if child not in found:
                found[child] = state
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
            done = results.reset()
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
            result = results.answer(nonce)
        except OSError:
            return  # the worker is gone: the host sees the channel close
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

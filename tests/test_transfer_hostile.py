"""The transfer as hostile-safe as the rest (issue #63, item 2), on loopback servers: a token
never follows a redirect to another origin, a stalled body is cut off, a malformed header or
a stale `.part` is no traceback and no lost download, a name or a revision that is no name
is refused, and a task_info nested too deep or dribbled is one sentence."""

from __future__ import annotations

import hashlib
import threading
import time
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from types import SimpleNamespace

import pytest

from genotex.preprocessing import Download, fetch
from tests.conftest import local_server

BODY = b"the file's bytes\n" * 64
_RELEASE = threading.Event()


class _Origin(BaseHTTPRequestHandler):
    """Answers by path: a redirect to another origin or to itself, the file (with ranges),
    a body that stalls after its headers, a malformed Content-Length."""

    seen: list[tuple[str, str | None]] = []
    other = ""

    def do_GET(self) -> None:  # noqa: N802 - the HTTP verb
        _Origin.seen.append((self.path, self.headers.get("Authorization")))
        if self.path == "/away":
            self._redirect(f"{_Origin.other}/file")
        elif self.path == "/home":
            self._redirect("/file")
        elif self.path == "/file":
            self._file()
        elif self.path == "/stall":
            self.send_response(200)
            self.send_header("Content-Length", str(len(BODY)))
            self.end_headers()
            self.wfile.flush()
            _RELEASE.wait(40)  # no byte of the body until the test is over
        elif self.path == "/bad-length":
            self.send_response(200)
            self.send_header("Content-Length", "²")
            self.end_headers()
            self.wfile.write(BODY)

    def _redirect(self, where: str) -> None:
        self.send_response(302)
        self.send_header("Location", where)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def _file(self) -> None:
        asked = self.headers.get("Range")
        start = int(asked.removeprefix("bytes=").rstrip("-")) if asked else 0
        if start >= len(BODY):
            self.send_response(416)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        self.send_response(206 if start else 200)
        self.send_header("Content-Length", str(len(BODY) - start))
        self.end_headers()
        self.wfile.write(BODY[start:])

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def servers():
    """Two origins: 127.0.0.1 (the Hub) and localhost (somewhere else) on other ports."""
    _Origin.seen = []
    _RELEASE.clear()
    with local_server(_Origin) as hub, local_server(_Origin) as elsewhere:
        _Origin.other = elsewhere.replace("127.0.0.1", "localhost")
        yield hub
        _RELEASE.set()


def _get(url: str, path: Path, sha256: str | None = None):
    return fetch(Download(url, path, sha256, (("Authorization", "Bearer hf_secret"),)))


def test_the_token_never_follows_a_redirect_to_another_origin(servers, tmp_path):
    done = _get(f"{servers}/away", tmp_path / "a.txt")
    assert done.ok and (tmp_path / "a.txt").read_bytes() == BODY
    assert _Origin.seen == [("/away", "Bearer hf_secret"), ("/file", None)]
    _Origin.seen = []
    done = _get(f"{servers}/home", tmp_path / "b.txt")  # the same origin keeps it
    assert done.ok and _Origin.seen == [
        ("/home", "Bearer hf_secret"),
        ("/file", "Bearer hf_secret"),
    ]


def test_a_body_that_stalls_after_its_headers_is_cut_off_in_under_30_s(servers, tmp_path):
    started = time.monotonic()
    done = _get(f"{servers}/stall", tmp_path / "s.txt")
    took = time.monotonic() - started
    assert not done.ok and took < 30, took
    assert "timed out" in done.outcome.reason
    assert not (tmp_path / "s.txt").exists()


def test_a_malformed_content_length_is_a_sentence(servers, tmp_path):
    done = _get(f"{servers}/bad-length", tmp_path / "l.txt")
    assert not done.ok
    assert done.outcome.reason == "the server sent a malformed Content-Length header ('²')"
    assert not (tmp_path / "l.txt").exists()


def test_a_part_longer_than_the_file_is_discarded_and_the_download_starts_over(servers, tmp_path):
    target = tmp_path / "f.txt"
    (tmp_path / "f.txt.part").write_bytes(b"stale bytes of an older, longer file\n" * 64)
    done = _get(f"{servers}/file", target, hashlib.sha256(BODY).hexdigest())
    assert done.ok, done.outcome.reason
    assert target.read_bytes() == BODY and not (tmp_path / "f.txt.part").exists()


def test_an_empty_revision_is_refused_not_taken_for_the_default():
    pytest.importorskip("huggingface_hub")
    from genotex.preprocessing import HubError, plan_benchmark

    with pytest.raises(HubError, match="an empty revision names nothing"):
        plan_benchmark(revision="", endpoint="http://127.0.0.1:9")


@pytest.mark.parametrize("name", ["input/a\x85b.txt", "input/a\u2028b.txt", "input/a\x07b"])
def test_a_listed_name_with_a_control_character_is_refused(name):
    from genotex.preprocessing import HubError
    from genotex.preprocessing._hub import _hub_file

    entry = SimpleNamespace(path=name, size=3, lfs=None, blob_id="0" * 40)
    with pytest.raises(HubError, match="a name holding a control character"):
        _hub_file(entry)


def test_a_task_info_nested_too_deep_is_a_sentence():
    pytest.importorskip("huggingface_hub")
    from genotex.preprocessing import HubError, plan_benchmark
    from tests.fake_hub import FakeHub

    deep = b"[" * 100_000 + b"]" * 100_000
    files = {"metadata/task_info.json": deep, "input/GEO/Asthma/GSE1/GSE1_family.soft.gz": b"x"}
    with FakeHub(files) as url, pytest.raises(HubError) as caught:
        plan_benchmark(only=["Asthma"], endpoint=url, revision="main")
    assert "task_info.json cannot be read" in str(caught.value)
    assert "nested more than 64 levels deep" in str(caught.value)


def test_a_dribbled_small_body_stops_at_the_rate_floor(monkeypatch):
    """A task_info sent a byte every 3 s (a clock that moves 3 s a read): stopped after the
    window, not read for 9 minutes."""
    from genotex.preprocessing import _transfer

    clock = iter(range(0, 10**6, 3))
    monkeypatch.setattr(_transfer.time, "monotonic", lambda: float(next(clock)))
    reads = []

    class Dribble:
        def read1(self, n: int) -> bytes:
            reads.append(1)
            return b"x"

    with pytest.raises(_transfer.TooSlow):
        _transfer.read_small(Dribble(), 178)
    assert len(reads) <= 5


def test_a_listing_dribbled_a_byte_every_3_s_stops_with_a_sentence():
    """The Hub client's own HTTP waited forever: 9 minutes for 178 bytes."""
    pytest.importorskip("huggingface_hub")
    from genotex.preprocessing import HubError, plan_benchmark
    from tests.fake_hub import FakeHub

    class DribblingHub(FakeHub):
        def _tree(self, request, rest, head):
            body = b'[{"type": "file", "path": "metadata/task_info.json"}]' * 4
            request.send_response(200)
            request.send_header("Content-Type", "application/json")
            request.send_header("Content-Length", str(len(body)))
            request.end_headers()
            for byte in body:
                if _RELEASE.wait(3):
                    return
                request.wfile.write(bytes([byte]))
                request.wfile.flush()

    _RELEASE.clear()
    started = time.monotonic()
    try:
        with DribblingHub({"metadata/task_info.json": b"{}"}) as url:
            with pytest.raises(HubError, match="slower than 1,024 bytes a second"):
                plan_benchmark(parts=["metadata"], endpoint=url, revision="main")
    finally:
        _RELEASE.set()
    assert time.monotonic() - started < 60

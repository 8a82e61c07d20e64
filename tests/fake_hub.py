"""A stand-in for the Hugging Face Hub on 127.0.0.1: the part of its HTTP API that
huggingface_hub uses to download a dataset (revision info, the recursive tree listing, file
resolution with ETag, commit header and byte ranges), serving files the tests make.

Written from the Hub's documented and observed behaviour, not from its code: what a test
can also make it do is answer 401 (gated), loop redirects or tree pages, serve wrong bytes,
cut a transfer after half its bytes once (for the resume), or list a file smaller than it
is (a transfer must stop at the listed size).
"""

from __future__ import annotations

import hashlib
import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote, urlsplit

from tests.conftest import POLL

COMMIT = "0123456789abcdef0123456789abcdef01234567"


def published_files(demo: Path) -> dict[str, bytes]:
    """A `genotex demo` root as the Hub holds a benchmark: input/, metadata/, and the
    reference answers as output/ (the published layout).
    """
    files = {}
    for path in sorted(p for p in demo.rglob("*") if p.is_file()):
        relative = path.relative_to(demo).as_posix()
        if relative.startswith(("input/", "metadata/")):
            files[relative] = path.read_bytes()
        elif relative.startswith("reference/output/"):
            files[relative.removeprefix("reference/")] = path.read_bytes()
    return files


def git_blob_id(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


@dataclass
class FakeHub:
    """The dataset `repo` at `COMMIT` (also named `main`), holding `files`; those in `lfs` are
    large files (checked by sha256), the others by git blob id.
    """

    files: dict[str, bytes]
    lfs: set[str] = field(default_factory=set)
    repo: str = "Liu-Hy/GenoTEX"
    token: str | None = None  # when set, a request without it is answered 401
    redirect_loop: bool = False
    corrupt: set[str] = field(default_factory=set)  # served with other bytes than listed
    cut_once: set[str] = field(default_factory=set)  # the first GET ends after half the bytes
    understate: set[str] = field(default_factory=set)  # listed at 10 bytes, whatever they are
    broken: set[str] = field(default_factory=set)  # answered 500 (a server error)
    overstate: set[str] = field(default_factory=set)  # listed 100 bytes longer than they are
    loop_tree: bool = False  # every page of the tree listing says the next page is itself
    requests: list[tuple[str, str, str | None]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.revisions = {"main": COMMIT, COMMIT: COMMIT}
        self._server: ThreadingHTTPServer | None = None

    # ---- the answers -----------------------------------------------------------------------
    def entry(self, path: str) -> dict:
        data = self.files[path]
        size = 10 if path in self.understate else len(data) + 100 * (path in self.overstate)
        item = {"type": "file", "path": path, "size": size, "oid": git_blob_id(data)}
        if path in self.lfs:
            sha = hashlib.sha256(data).hexdigest()
            item["lfs"] = {"oid": sha, "size": size, "pointerSize": 130}
        return item

    def etag(self, path: str) -> str:
        entry = self.entry(path)
        return entry["lfs"]["oid"] if "lfs" in entry else entry["oid"]

    def body(self, path: str) -> bytes:
        data = self.files[path]
        return data[::-1] if path in self.corrupt else data  # the listed size, other bytes

    # ---- the server ------------------------------------------------------------------------
    def __enter__(self) -> str:
        hub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:  # quiet
                pass

            def do_GET(self) -> None:
                hub.answer(self, head=False)

            def do_HEAD(self) -> None:
                hub.answer(self, head=True)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        serve = self._server.serve_forever
        threading.Thread(target=serve, args=(POLL,), daemon=True).start()
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __exit__(self, *exc) -> None:
        assert self._server is not None
        self._server.shutdown()
        self._server.server_close()

    def answer(self, request: BaseHTTPRequestHandler, *, head: bool) -> None:
        path = unquote(urlsplit(request.path).path)
        self.requests.append((request.command, path, request.headers.get("Range")))
        authorized = request.headers.get("Authorization") == f"Bearer {self.token}"
        if self.token is not None and not authorized:
            return self._send(request, 401, b'{"error": "Access to this dataset is restricted"}',
                              {"X-Error-Code": "GatedRepo",
                               "X-Error-Message": "Access restricted"}, head)  # fmt: skip
        api = f"/api/datasets/{self.repo}/"
        if path.startswith(api + "revision/"):
            return self._revision(request, path.removeprefix(api + "revision/"), head)
        if path.startswith(api + "tree/"):
            return self._tree(request, path.removeprefix(api + "tree/"), head)
        resolve = f"/datasets/{self.repo}/resolve/"
        if path.startswith(resolve):
            return self._resolve(request, path.removeprefix(resolve), head)
        self._send(request, 404, b'{"error": "Repository not found"}',
                   {"X-Error-Code": "RepoNotFound"}, head)  # fmt: skip

    def _unknown_revision(self, request, revision: str, head: bool) -> None:
        self._send(request, 404, json.dumps({"error": f"Invalid rev id: {revision}"}).encode(),
                   {"X-Error-Code": "RevisionNotFound",
                    "X-Error-Message": f"Invalid rev id: {revision}"}, head)  # fmt: skip

    def _revision(self, request, revision: str, head: bool) -> None:
        if revision not in self.revisions:
            return self._unknown_revision(request, revision, head)
        info = {"id": self.repo, "sha": self.revisions[revision], "private": False,
                "siblings": [{"rfilename": p} for p in sorted(self.files)]}  # fmt: skip
        self._send(request, 200, json.dumps(info).encode(), {}, head)

    def _tree(self, request, rest: str, head: bool) -> None:
        revision, _, folder = rest.partition("/")
        if revision not in self.revisions:
            return self._unknown_revision(request, revision, head)
        entries = [self.entry(p) for p in sorted(self.files) if p.startswith(folder)]
        host = request.headers.get("Host")
        looped = {"Link": f'<http://{host}{request.path}>; rel="next"'} if self.loop_tree else {}
        self._send(request, 200, json.dumps(entries).encode(), looped, head)

    def _resolve(self, request, rest: str, head: bool) -> None:
        revision, _, name = rest.partition("/")
        if revision not in self.revisions:
            return self._unknown_revision(request, revision, head)
        if self.redirect_loop:
            return self._send(request, 302, b"", {"Location": request.path}, head)
        if name in self.broken:
            return self._send(request, 500, b'{"error": "Internal Error"}', {}, head)
        if name not in self.files:
            return self._send(request, 404, b'{"error": "Entry not found"}',
                              {"X-Error-Code": "EntryNotFound"}, head)  # fmt: skip
        body = self.body(name)
        headers = {"X-Repo-Commit": self.revisions[revision], "ETag": f'"{self.etag(name)}"',
                   "Accept-Ranges": "bytes"}  # fmt: skip
        ranged = request.headers.get("Range")
        if ranged and not head:
            start = int(ranged.removeprefix("bytes=").split("-")[0])
            headers["Content-Range"] = f"bytes {start}-{len(body) - 1}/{len(body)}"
            return self._send(request, 206, body[start:], headers, head)
        if not head and name in self.cut_once:
            self.cut_once.discard(name)
            return self._send_cut(request, body, headers)
        self._send(request, 200, body, headers, head)

    def _send(self, request, status: int, body: bytes, headers: dict, head: bool) -> None:
        request.send_response(status)
        for key, value in {"Content-Length": str(len(body)), **headers}.items():
            request.send_header(key, value)
        request.end_headers()
        if not head:
            request.wfile.write(body)

    def _send_cut(self, request, body: bytes, headers: dict) -> None:
        """The whole length announced, half the bytes sent, then the connection closed."""
        request.send_response(200)
        for key, value in {"Content-Length": str(len(body)), **headers}.items():
            request.send_header(key, value)
        request.end_headers()
        request.wfile.write(body[: len(body) // 2])
        request.wfile.flush()
        request.close_connection = True
        request.connection.shutdown(2)

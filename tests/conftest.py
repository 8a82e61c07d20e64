"""Shared fixtures: where `../shared` is, and how its absence is handled.

The shared folder (specs, fixtures, real data) sits beside the repository;
`GENOTEX_SHARED` overrides its location. When it is absent, the tests that
need it skip with a reason, except under `CI=true`, where absence fails them.
"""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import gc
import json
import os
import shutil
import tempfile
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from hypothesis import settings

# Under CI=true the property tests draw the same examples every run (a landing is never
# decided by the draw); elsewhere they explore afresh, and a case they find becomes an
# explicit @example
settings.register_profile("ci", derandomize=True)
if os.environ.get("CI", "").lower() == "true":
    settings.load_profile("ci")

# the suite's caches (parsed tables, the provenance hashes, synonym tables) stay out of the
# user's cache folder, and go when the session ends
os.environ["XDG_CACHE_HOME"] = tempfile.mkdtemp(prefix="genotex-test-cache-")
atexit.register(shutil.rmtree, os.environ["XDG_CACHE_HOME"], ignore_errors=True)
for _variable in ("GENOTEX_CACHE", "GENOTEX_CACHE_SIZE"):
    os.environ.pop(_variable, None)


@pytest.hookimpl(tryfirst=True)  # before `-m "not slow"` deselects
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The tests `tests/quick_suite.py` leaves to the whole suite marked `slow`; then the
    `slow` tests first (each module's in their order): under `-n 2 --dist worksteal` the
    minutes-long ones start at once and the short ones fill the end, so no worker waits
    alone on a long test at the tail of the run (the whole suite's wall time, #71).
    """
    from tests.quick_suite import whole_suite_only

    for item in items:
        call = getattr(item, "callspec", None)
        name = getattr(item, "originalname", item.name)
        if whole_suite_only(item.path.name, name, call.id if call else ""):
            item.add_marker(pytest.mark.slow)
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)


# no test calls a model's API: Inspect's providers are refused, mockllm and scripted ones only
os.environ["INSPECT_DISABLE_MODEL_API"] = "1"
#: What Inspect and its dependencies leave behind (unclosed streams at exit, their own
#: deprecations), which the suite's warnings-as-errors would otherwise fail on: the harness's
#: test modules take `pytestmark = INSPECT_WARNINGS`. Each test's garbage is collected in its
#: own teardown (`collected_garbage`), so that a stream Inspect left is finalised under these
#: filters, not after the session's last test, where no test's filters apply.
INSPECT_WARNINGS = [
    pytest.mark.filterwarnings(
        "ignore::ResourceWarning",
        "ignore::pytest.PytestUnraisableExceptionWarning",
        "ignore::DeprecationWarning",
    ),
    pytest.mark.usefixtures("collected_garbage"),
]


@pytest.fixture(autouse=True)
def _alone_when_solo(request: pytest.FixtureRequest) -> Iterator[None]:
    """Under pytest-xdist (`-n 2`, as CI runs), a test marked `solo` runs while no other test
    does: it looks at the whole host (every process), where another worker's sandboxes and
    kernels would be seen. The others share one lock; a `solo` test takes it alone.
    """
    run = os.environ.get("PYTEST_XDIST_TESTRUNUID")
    if run is None:
        yield
        return
    solo = request.node.get_closest_marker("solo") is not None
    with open(Path(tempfile.gettempdir()) / f"genotex-tests-{run}.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX if solo else fcntl.LOCK_SH)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def pytest_collection_finish(session: pytest.Session) -> None:
    """What collection imported and made (Inspect's registry, the test modules, their
    parameters) lives for the session: frozen, so that each test's own collection
    (`collected_garbage`) scans the objects the test made, not the whole heap (0.3-0.9 s a
    test before, #71).
    """
    gc.collect()
    gc.freeze()


@pytest.fixture
def collected_garbage() -> Iterator[None]:
    """Collect the test's garbage as it ends (see INSPECT_WARNINGS)."""
    yield
    gc.collect()


SHARED = Path(
    os.environ.get("GENOTEX_SHARED", Path(__file__).resolve().parents[1].parent / "shared")
)


def _require(path: Path) -> Path:
    if path.exists():
        return path
    message = f"{path} is absent (set GENOTEX_SHARED to the shared folder)"
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"CI=true but {message}")
    pytest.skip(message)


@pytest.fixture(scope="session")
def shared() -> Path:
    """The shared folder (specs, fixtures, real data, comparator tools)."""
    return _require(SHARED)


@pytest.fixture(scope="session")
def eval_fixtures(shared: Path) -> Path:
    return _require(shared / "fixtures" / "eval")


def eval_case_names() -> list[str]:
    """Names of the eval fixture cases, for parametrization (a placeholder when absent)."""
    folder = SHARED / "fixtures" / "eval"
    names = (
        sorted(p.name for p in folder.iterdir() if (p / "expected.json").exists())
        if folder.exists()
        else []
    )
    return names or ["case1", "case2", "case3", "case4"]


def eval_args(case: Path, *extra: str) -> list[str]:
    """`genotex eval` arguments scoring an eval fixture case's prediction against its reference."""
    return [
        "eval",
        "-p",
        str(case / "pred" / "output"),
        "-r",
        str(case / "ref" / "output"),
        "--task-info",
        str(case / "ref" / "metadata" / "task_info.json"),
        *extra,
    ]


def example_eval_report(example, out: Path, *extra: str) -> dict:
    """`genotex eval` of a generated example (`write_example`) through the CLI, its JSON report
    without the provenance (times, and the options asked for), which runs may differ in."""
    import json

    from click.testing import CliRunner

    from genotex.cli import main

    result = CliRunner().invoke(
        main,
        ["eval", "-p", str(example.pred_output), "-r", str(example.ref_output),
         "--no-progress", "--json", str(out), *extra],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    report = json.loads(out.read_text())
    del report["run"]["provenance"]
    return report


def send_json(handler: BaseHTTPRequestHandler, data: object) -> None:
    """Answer a request of a loopback stand-in with `data` as a JSON body (200)."""
    body = json.dumps(data).encode()
    handler.send_response(200)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()
    handler.wfile.write(body)


def answer_bytes(request: BaseHTTPRequestHandler, data: bytes | None) -> None:
    """Answer a loopback server's GET with `data` (its length announced), or 404 when None."""
    if data is None:
        request.send_error(404)
        return
    request.send_response(200)
    request.send_header("Content-Length", str(len(data)))
    request.end_headers()
    request.wfile.write(data)


#: seconds a loopback server's loop waits between looks at `shutdown` (the tests' many
#: servers each paid the 0.5 s default at their end)
POLL = 0.02


@contextlib.contextmanager
def local_server(handler: type[BaseHTTPRequestHandler]) -> Iterator[str]:
    """An HTTP server on 127.0.0.1 (a free port) answering with `handler`; yields its base URL."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    # a short poll: `shutdown` waits up to one poll interval (0.5 s by default) for the loop
    thread = threading.Thread(target=server.serve_forever, args=(POLL,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def require_program(name: str, debian: str) -> str:
    """The path of a program a test drives; skip without it, fail under CI=true (.ci/run
    installs the Debian packages `debian`)."""
    import os
    import shutil

    path = shutil.which(name)
    if path:
        return path
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"CI=true but {name} is absent (.ci/run installs Debian's {debian})")
    pytest.skip(f"{name} is absent (apt-get install {debian})")


def scripted_agent(commands: list[str], *, tokens: tuple[int, int] = (1000, 200)):
    """Inspect's mockllm as an agent: a bash call per command, then submit; each output with
    its usage (offline, mockllm would otherwise load a tokenizer to count).
    """
    from inspect_ai.model import ModelOutput, ModelUsage, get_model

    outputs = [
        ModelOutput.for_tool_call("mockllm/model", "bash", {"command": command})
        for command in commands
    ]
    outputs.append(ModelOutput.for_tool_call("mockllm/model", "submit", {"answer": "done"}))
    for output in outputs:
        output.usage = ModelUsage(
            input_tokens=tokens[0], output_tokens=tokens[1], total_tokens=sum(tokens)
        )
    return get_model("mockllm/model", custom_outputs=outputs)

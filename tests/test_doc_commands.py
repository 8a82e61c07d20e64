"""Every command the README and the guides print runs as printed (issue #52, 17).

`tests/doc_commands.py` reads the commands off the pages; `PLAN` says in which scene
(`tests/doc_scenes.py`: the demo, a loopback Hub download, real GEO and Xena inputs, ...)
each block runs. A command runs in its block's order, in a fresh scene, and must exit 0
without a traceback. The only changes to a printed command are these, each
listed: `.venv/bin/` (this interpreter's), `tcp://host:8786` (a loopback Dask scheduler),
`/scratch/cache` (a folder of the scene), and the GEO and Xena downloads' `--base-url` and
`--manifest` (a loopback mirror of the demo's inputs). A shell variable a page sets
(`MODEL=...`, `LOG=$(...)`) is kept for the page's later commands, as a reader's shell
keeps it; a model the page names is answered by a loopback OpenAI. The Python examples of
a page in `PYTHON_IN_PAGE` run in its folder, after the commands above them.

A command no entry plans, or an entry no page prints any more, fails the suite; so does a
synopsis naming an option `--help` does not know. The few commands not run here say where
they run instead (`.ci/run` itself, or a named test: the Python examples run verbatim in
`tests/test_docs.py`), and that is checked too.
"""

from __future__ import annotations

import re
import subprocess

import pytest

from tests.doc_commands import PYTHON_IN_PAGE, ROOT, Command, all_commands
from tests.doc_scenes import BIN, Stage, run, stage

#: (page, a part of the command's text, folder): the first entry whose part a command holds
#: says from which folder, relative to the page's own, the page says to run it
PLAN: list[tuple[str, str, str]] = [
    ("README.md", "genotex eval -p output", "DEMO"),
    ("README.md", "genotex eval -p reference/output", "DEMO"),
    ("README.md", "genotex compare run_a.json", "DEMO"),
    ("README.md", "genotex leaderboard run_a.json", "DEMO"),
    ("README.md", "genotex diagnose", "DEMO"),
    ("README.md", "genotex", "."),
    ("README.md", "inspect eval", "."),
    ("README.md", "LOG=", "."),
    ("docs/guides/agents.md", "", "."),
    ("docs/guides/diagnose.md", "genotex diagnose -p output", "realistic"),
    ("docs/guides/diagnose.md", "", "."),
    ("docs/guides/evaluate.md", "", "."),
    ("docs/guides/paper-tables.md", "", "."),
    ("docs/guides/preprocess.md", "--jobs 2", "."),
    ("docs/guides/preprocess.md", "--scheduler", "."),
    (
        "docs/guides/preprocess.md",
        "genotex preprocess --all --input input --out output/preprocess",
        "demo",
    ),
    ("docs/guides/preprocess.md", "", "."),
    ("docs/guides/regress.md", "", "."),
    ("docs/guides/scale.md", "genotex demo --out demo", "."),
    ("docs/guides/scale.md", "", "demo"),
    ("docs/proposer.md", "", "."),
]
#: (page, a part of the command's text) -> the exit status the page says it has
EXITS: dict[tuple[str, str], int] = {
    ("docs/guides/evaluate.md", "genotex validate pred/output"): 1,  # the demo's malformed file
}
#: the loopback stand-ins each page's commands reach (tests/doc_scenes.py)
STAND_INS: dict[str, set[str]] = {
    "README.md": {"hub", "openai", "mirror"},
    "docs/guides/agents.md": {"openai"},
    "docs/guides/paper-tables.md": {"hub", "openai"},
    "docs/guides/preprocess.md": {"hub-real", "mirror-real"},
    "docs/guides/regress.md": {"hub-real", "mirror-real"},
    "docs/proposer.md": {"mirror-real"},
}

#: printed commands this suite does not run, and where they run instead (checked below)
ELSEWHERE: dict[str, str] = {
    "python3 -m venv .venv-pandas2": ".ci/run",
    ".venv-pandas2/bin/python -m pytest": ".ci/run",
    "python3 -m venv .venv": ".ci/run",
    ".venv/bin/python -m pytest": ".ci/run",
    "bash .ci/run": ".ci/run",
    "apt-get install podman runc mmdebstrap": ".ci/run",
    "mmdebstrap --variant=minbase --include=python3,python3-venv bookworm": ".ci/run",
    "podman import": ".ci/run",
    "genotex harness image --base localhost/genotex-base:bookworm": ".ci/run",
    # a bundle fetched by hand is checked against the real benchmark's manifests
    "genotex download verify BENCH": "tests/test_download.py::"
    "test_the_verify_command_says_it_in_lines_and_exits_1_when_a_file_differs",
    # the notebook guide's first example, run verbatim with its outcome checked
    'genotex.write_raw_benchmark("demo-bench")': "tests/test_demo.py::"
    "test_the_readme_notebook_example_runs_verbatim",
}
#: what `.ci/run` must hold for a command it stands in for (the words a reader types)
_CI_WORDS = {
    "python3 -m venv .venv-pandas2": [
        "python3 -m venv .venv-pandas2",
        ".venv-pandas2/bin/pip install -q -e '.[suite]' 'pandas>=2.2,<3'",
    ],
    ".venv-pandas2/bin/python -m pytest": [
        ".venv-pandas2/bin/python -m pytest -n 2 --dist worksteal -q",
        "$(cat .ci/pandas2-tests)",
    ],
    "python3 -m venv .venv": [
        "python3 -m venv .venv",
        ".venv/bin/pip install -q -e '.[test,docs]'",
    ],
    ".venv/bin/python -m pytest": [".venv/bin/python -m pytest -n 2 --dist worksteal"],
    "apt-get install podman runc mmdebstrap": ["apt_install podman runc", "apt_install mmdebstrap"],
    "mmdebstrap --variant=minbase --include=python3,python3-venv bookworm": [
        "mmdebstrap --quiet --variant=minbase --include=python3,python3-venv bookworm",
        "/etc/apt/sources.list.d/debian.sources",
    ],
    "podman import": ["podman import"],
    "genotex harness image --base localhost/genotex-base:bookworm": [
        "base=localhost/genotex-base:bookworm",
        'genotex harness image --base "$base"',
    ],  # fmt: skip
}


#: where every other Python example runs, verbatim (in-process, on the demo)
_PYTHON = "tests/test_docs.py::test_every_python_example_runs"


def _elsewhere(command: Command) -> str | None:
    where = next((where for part, where in ELSEWHERE.items() if part in command.text), None)
    in_page = command.doc in PYTHON_IN_PAGE
    return where or (_PYTHON if command.kind == "python" and not in_page else None)


def _folder_of(command: Command) -> str | None:
    for doc, part, folder in PLAN:
        if doc == command.doc and part in command.text:
            return folder
    return None


def _runnable() -> list[Command]:
    return [c for c in all_commands() if c.kind != "synopsis" and _elsewhere(c) is None]


def _pages() -> dict[str, list[Command]]:
    """The runnable commands of each page, in their printed order."""
    pages: dict[str, list[Command]] = {}
    for command in _runnable():
        pages.setdefault(command.doc, []).append(command)
    return pages


def test_every_printed_command_has_a_way_to_run_and_every_plan_a_command():
    commands = all_commands()
    unplanned = [f"{c.doc}: {c.text[:80]}" for c in _runnable() if _folder_of(c) is None]
    assert unplanned == [], "commands the docs print that no PLAN entry runs"
    used = {(c.doc, part) for c in _runnable() for doc, part, _ in PLAN
            if doc == c.doc and part in c.text}  # fmt: skip
    stale = [(doc, part) for doc, part, _ in PLAN if (doc, part) not in used]
    assert stale == [], "PLAN entries no printed command matches any more"
    gone = [part for part in ELSEWHERE if not any(part in c.text for c in commands)]
    assert gone == [], "ELSEWHERE entries no printed command matches any more"
    assert len(commands) > 90  # the reader above still finds the pages' commands


@pytest.mark.parametrize("part", [*sorted(ELSEWHERE), "python"])
def test_a_command_run_elsewhere_is_run_there(part):
    where = ELSEWHERE.get(part, _PYTHON)
    if where == ".ci/run":
        ci = (ROOT / ".ci" / "run").read_text()
        for words in _CI_WORDS.get(part, [part.split()[0]]):
            assert words in ci, f".ci/run does not run {words!r}"
        return
    path, name = where.split("::")
    assert f"def {name}(" in (ROOT / path).read_text(), where


def _help_options(words: list[str]) -> str:
    done = subprocess.run([str(BIN / "genotex"), *words[1:], "--help"], capture_output=True,
                          text=True)  # fmt: skip
    assert done.returncode == 0, f"{' '.join(words)} --help: {done.stderr}"
    return done.stdout


def _synopses() -> list[tuple[str, str]]:
    """(command, its text) of each synopsis line of the pages (continuations joined)."""
    found = []
    for command in all_commands():
        lines = command.text.splitlines() if command.kind == "synopsis" else []
        if command.kind == "shell" and " [--" in command.text:
            lines = [command.text]
        for line in lines:
            if line.startswith("genotex "):
                found.append([line])
            elif found and line.startswith(" "):
                found[-1].append(line)
    return [(" ".join(words[0].split()[:4]), " ".join(words)) for words in found]


@pytest.mark.parametrize("name,synopsis", _synopses())
def test_every_option_a_synopsis_names_is_one_the_command_takes(name, synopsis):
    words = [w for w in name.split() if re.fullmatch(r"[a-z][a-z-]*", w)]
    text = _help_options(words)
    for option in re.findall(r"(?<![\w-])(--[a-z][a-z-]+|-[a-zA-Z])\b", synopsis):
        assert re.search(rf"(?<![\w-]){re.escape(option)}\b", text), f"{name}: {option}"


#: what a transcript may print otherwise on every run: a time taken, an ETA
_TIMING = re.compile(r"\d+(?:\.\d+)? ?(?:ms|s|min)\b|ETA \S+")
_NUMBER = re.compile(r"\d+(?:\.\d+)?")


def _normal(line: str, digits: bool) -> str:
    line = " ".join(_TIMING.sub("<time>", line).split())
    return line if digits else _NUMBER.sub("<n>", line)


def _blas_here() -> str:
    """This process's BLAS library and version as a page names them: `OpenBLAS 0.3.31`."""
    import numpy  # noqa: F401 - loads the BLAS threadpoolctl reports
    from threadpoolctl import threadpool_info

    blas = [i for i in threadpool_info() if i["user_api"] == "blas"][:1]
    names = {"openblas": "OpenBLAS", "mkl": "MKL", "blis": "BLIS"}
    return " ".join([names.get(blas[0]["internal_api"], blas[0]["internal_api"]),
                     ".".join(blas[0]["version"].split(".")[:3])]) if blas else "none"  # fmt: skip


def _stale_lines(command: Command, output: str) -> list[str]:
    """The transcript's lines a run did not print, to the digit; a transcript made with
    another BLAS library or version than this machine's is checked but for its numbers
    (the kernel is the page's own: it sets `OPENBLAS_CORETYPE` in a command above)."""
    digits = not command.blas or command.blas.rsplit(" ", 1)[0] == _blas_here()
    seen = {_normal(line, digits) for line in output.splitlines()}
    return [line for line in command.printed  # `...`: the page leaves lines out there
            if line.strip() not in ("", "...") and _normal(line, digits) not in seen]  # fmt: skip


#: a shell variable the page sets (`LOG=$(ls -t logs/*.eval | head -n 1)`, `export X=...`):
#: a reader's shell keeps it for the page's later commands, so each later command starts
#: with it
_ASSIGNMENT = re.compile(r"^(export )?[A-Z][A-Z_]*=(\$\(.*\)|\S+)$")


def _prepared(command: Command, here: Stage, assignments: list[str]) -> str:
    text = command.text
    if command.kind == "python":
        text = f"python - <<'PYTHON'\n{text}PYTHON"
    text = text.replace(".venv/bin/", f"{BIN}/")
    for old, new in here.replace.items():
        text = text.replace(old, new)
    for prefix, extra in here.append.items():
        if text.startswith(prefix):
            text = f"{text} {extra}"
    if _ASSIGNMENT.match(text):
        assignments.append(text)
        return "\n".join(assignments)
    return "\n".join([*assignments, text])


@pytest.fixture(scope="module")
def scheduler():
    """A Dask scheduler on 127.0.0.1 with one worker process (the guides' tcp://host:8786)."""
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, host="127.0.0.1",
                                  dashboard_address=":0", processes=True) as cluster:  # fmt: skip
        yield cluster.scheduler_address


@pytest.mark.slow  # minutes of a worker: the whole suite's, not the quick one's
@pytest.mark.parametrize("page", sorted(_pages()))
def test_each_page_runs_as_printed_in_one_empty_folder(page, tmp_path, scheduler):
    """The page's commands in order, from an empty folder: every file a command reads is
    made by an earlier command of the page (the stand-ins write only beside it)."""
    with stage(STAND_INS.get(page, set()), tmp_path, scheduler) as here:
        assert list(here.cwd.iterdir()) == []  # nothing the page does not make
        assignments: list[str] = []
        for command in _pages()[page]:
            folder = here.cwd / str(_folder_of(command))
            assert folder.is_dir(), f"{page}: no folder {folder.name}/ for {command.text[:80]}"
            done = run(_prepared(command, here, assignments), folder, here.env)
            shown = command.text.strip().splitlines()[0][:100]
            status = next((v for (d, part), v in EXITS.items()
                           if d == page and part in command.text), 0)  # fmt: skip
            assert done.returncode == status, (
                f"{page}: {shown}\n{done.stdout[-1500:]}{done.stderr[-2500:]}"
            )
            assert "Traceback" not in done.stderr, f"{page}: {shown}\n{done.stderr[-2500:]}"
            stale = _stale_lines(command, done.stdout + done.stderr)
            assert stale == [], f"{page}: {shown}: printed, not what a run prints:\n{stale}"

"""Every command the README and the guides print, read from the Markdown as a reader sees it.

A command is a line of a `bash` block (continuation lines joined, the comment after two
spaces dropped; a here-document `<<'EOF'` ... `EOF` is part of its command), a `$ ` line
of a `text` block, a whole `python` block, or a full command in a table cell (`inspect
eval ...`, `genotex ...`; a cell starting `...` continues the row above and is not one). A
`text` block of `genotex ...` lines with `[--option]`s is a synopsis: its options are
checked against `--help`, not run. The lines a `text` block prints after a `$ ` line are
that command's transcript (`Command.printed`), checked against a run.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: pages whose Python examples use the page's own data (not the demo's): they run in the
#: page's folder, after its shell commands above them, by tests/test_doc_commands.py
PYTHON_IN_PAGE = {"docs/guides/regress.md"}
_FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)
_COMMENT = re.compile(r"\s{2,}#.*$")
_CELL = re.compile(r"`((?:inspect eval|genotex) [^`]+)`")
#: written just before a transcript whose numbers depend on the BLAS (the LMM's): the
#: setting they were made with, e.g. `<!-- transcript: BLAS OpenBLAS 0.3.31 Haswell -->`
#: (the library and version, then the kernel, which `OPENBLAS_CORETYPE` selects)
BLAS_MARK = re.compile(r"<!-- transcript: BLAS ([^>]+?) -->\s*$")
#: a command ending `<<'EOF'`: its body and terminator (what the split keeps, odd places)
_HEREDOC = re.compile(r"(?<=<<'EOF')\n(.*?\nEOF)$", re.S | re.M)


@dataclass(frozen=True)
class Command:
    """One command of a page: where it is (page, block number), its text and its kind, and
    the output the page prints for it (a transcript's lines; none elsewhere)."""

    doc: str
    block: int
    text: str
    kind: str  # "shell", "python", "synopsis"
    printed: tuple[str, ...] = field(default=(), compare=False)
    #: the BLAS setting the page says its transcript was made with (`BLAS_MARK`), or ""
    blas: str = ""


def doc_pages() -> list[Path]:
    """The README and every guide page (the changelog is history, not instructions)."""
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    return [p for p in pages if p.name != "changelog.md"]


def _shell_lines(body: str) -> list[str]:
    # a here-document is one command, its lines kept as written (a recipe's comments too)
    parts = _HEREDOC.split(body)
    commands: list[str] = []
    for index, part in enumerate(parts):
        if index % 2:
            commands[-1] = f"{commands[-1]}\n{part}"
        else:
            commands.extend(_plain_lines(part))
    return commands


def _plain_lines(body: str) -> list[str]:
    # a backslash continues a line; so does a synopsis line starting with an [--option]
    joined = re.sub(r"\\\n\s*|\n\s+(?=\[)", " ", body)
    lines = [_COMMENT.sub("", line).strip() for line in joined.splitlines()]
    return [line for line in lines if line and not line.startswith("#")]


def _block_commands(doc: str, number: int, language: str, body: str) -> list[Command]:
    if language in ("bash", "sh"):
        lines = _shell_lines(body)
        return [Command(doc, number, line, "synopsis" if " [-" in line else "shell")
                for line in lines]  # fmt: skip
    if language == "python":
        return [Command(doc, number, body, "python")]
    if language != "text":
        return []
    lines = body.splitlines()
    if lines and lines[0].startswith("genotex ") and "[" in lines[0]:
        return [Command(doc, number, body, "synopsis")]
    return _transcript(doc, number, lines)


def _transcript(doc: str, number: int, lines: list[str]) -> list[Command]:
    """A `text` block's `$ ` commands, each with the lines printed after it."""
    found: list[tuple[str, list[str]]] = []
    for line in lines:
        if line.startswith("$ "):
            found.append((line[2:], []))
        elif found and found[-1][0].endswith("\\") and not found[-1][1]:
            found[-1] = (f"{found[-1][0]}\n{line}", [])
        elif found:
            found[-1][1].append(line)
    commands = []
    for text, printed in found:
        for command in _shell_lines(text):
            commands.append(Command(doc, number, command, "shell", tuple(printed)))
    return commands


def page_commands(page: Path) -> list[Command]:
    """The commands of one page, in the order they are printed."""
    doc = page.relative_to(ROOT).as_posix()
    text = page.read_text()
    found: list[tuple[int, Command]] = []
    for number, match in enumerate(_FENCE.finditer(text)):
        mark = BLAS_MARK.search(text, 0, match.start())
        blas = mark.group(1) if mark and mark.end() == match.start() else ""
        for command in _block_commands(doc, number, match.group(1), match.group(2)):
            found.append((match.start(), replace(command, blas=blas) if blas else command))
    outside = _FENCE.sub(lambda m: " " * len(m.group(0)), text)
    for row in re.finditer(r"^\|.*$", outside, re.M):
        for cell in _CELL.finditer(row.group(0)):
            if " -" not in cell.group(1):  # a command's name, not a command
                continue
            found.append((row.start(), Command(doc, -1, cell.group(1), "shell")))
    return [command for _, command in sorted(found, key=lambda pair: pair[0])]


def all_commands() -> list[Command]:
    """Every page's commands."""
    return [command for page in doc_pages() for command in page_commands(page)]

"""The README's scoring and diagnosis commands, run as printed on a `genotex demo` root
(issue #45, 15): each exits 0, and what one writes the next reads.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"


def _block_after(heading: str) -> list[str]:
    """The commands of the first bash block under a README heading (comments taken off)."""
    text = README.read_text()
    section = text[text.index(heading) :]
    block = re.search(r"```bash\n(.*?)```", section, re.S)
    assert block is not None, heading
    lines = [line.split("  #")[0].strip() for line in block.group(1).splitlines()]
    return [line for line in lines if line and not line.startswith("#")]


@pytest.fixture(scope="module")
def demo_root(tmp_path_factory):
    root = tmp_path_factory.mktemp("readme") / "demo"
    done = subprocess.run(
        [sys.executable, "-m", "genotex", "demo", "--out", str(root)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    return root


@pytest.mark.parametrize("heading", ["## Score a run", "## Where did a run lose its points?"])
def test_the_readmes_commands_run_as_printed_on_a_demo_root(demo_root, heading):
    commands = _block_after(heading)
    assert all(c.startswith("genotex ") for c in commands), commands
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    for command in commands:
        done = subprocess.run(
            command,
            shell=True,
            cwd=demo_root,
            env={**os.environ, "PATH": path},
            capture_output=True,
            text=True,
        )
        assert done.returncode == 0, f"{command}: {done.stderr[-1000:]}"
        assert "Traceback" not in done.stderr

"""Task arguments (`-T`) checked into one sentence each before any sample runs (issue #52,
item 13): 0.8.0 ended `root=2024`, `traits=123`, `limit=x`, `max_output_mb=x` and
`tools=x` in tracebacks, dropped a trait for `limit=-1`, and exited 0 on a bad time limit.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("inspect_ai", reason="the harness extra (inspect-ai) is not installed")

from inspect_ai._util.error import PrerequisiteError  # noqa: E402

from genotex.harness.runs._tasks import e2e  # noqa: E402
from genotex.workflows import write_raw_benchmark  # noqa: E402


@pytest.fixture(scope="module")
def bench(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("arguments") / "bench"
    write_raw_benchmark(root, recipes=False)
    return root


@pytest.mark.parametrize(
    ("arguments", "said"),
    [
        ({"root": 2024}, "2024"),
        ({"traits": 123}, "123"),
        ({"traits": ""}, "traits is empty"),
        ({"limit": "x"}, "limit must be a whole number from 1"),
        ({"limit": -1}, "limit must be a whole number from 1 to 1,000,000, not -1"),
        ({"max_output_mb": "x"}, "max_output_mb must be a whole number from 1"),
        ({"tools": "x"}, "tools must be genotex or none, not 'x'"),
        ({"time_limit": "x"}, "time_limit must be a whole number from 1"),
        ({"message_limit": 0}, "message_limit must be a whole number from 1"),
        ({"sandbox": 7}, "sandbox must be one of"),
        ({"tcga": "some"}, "tcga must be all or matched, not 'some'"),
        ({"conditions": "cooked"}, "conditions must be raw or given, not 'cooked'"),
    ],
)
def test_each_bad_task_argument_is_one_sentence(bench, arguments, said):
    given = {"root": str(bench), "sandbox": "local", **arguments}
    with pytest.raises(PrerequisiteError) as raised:
        e2e(**given)
    message = str(raised.value)
    assert message.startswith("genotex/e2e: ") and said in message and "\n" not in message


def test_a_number_as_root_or_traits_is_read_as_text(bench, tmp_path, monkeypatch):
    """`-T root=2024` names a folder called 2024 (YAML made it a number)."""
    import shutil

    shutil.copytree(bench, tmp_path / "2024")
    monkeypatch.chdir(tmp_path)
    task = e2e(root=2024, traits="Asthma", sandbox="local")
    assert len(task.dataset) == 1


def test_a_bad_time_limit_from_the_command_line_fails_in_one_sentence(bench, tmp_path):
    inspect = Path(sys.executable).parent / "inspect"
    done = subprocess.run(
        [str(inspect), "eval", "genotex/e2e", "-T", f"root={bench}", "-T", "sandbox=local",
         "-T", "time_limit=x", "--model", "mockllm/model", "--log-dir", str(tmp_path)],
        capture_output=True, text=True, timeout=300, cwd=tmp_path,
        env={**os.environ, "INSPECT_DISABLE_MODEL_API": "1"},
    )  # fmt: skip
    said = done.stdout + done.stderr
    assert done.returncode != 0, said
    assert "time_limit must be a whole number from 1" in said
    assert "Traceback" not in said

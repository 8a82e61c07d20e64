"""GenoAgent's reply readers against a corpus of reply shapes real models write (issue #51):
each shape's expected reading is written by hand in `tests/data/replies.json`; the readers
run in linear time on replies built to make a backtracking reader hang.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from genotex.harness.solvers.genoagent._replies import code_of, plan_choice, verdict_of

CORPUS = json.loads((Path(__file__).parent / "data" / "replies.json").read_text())


def test_the_corpus_holds_at_least_thirty_shapes_of_each_reader_together():
    kinds = {entry["kind"] for entry in CORPUS}
    assert len(CORPUS) >= 30 and kinds == {"code", "verdict", "plan"}


@pytest.mark.parametrize("entry", CORPUS, ids=[entry["name"] for entry in CORPUS])
def test_each_reply_shape_is_read_as_expected(entry):
    expect = entry["expect"]
    if entry["kind"] == "code":
        assert code_of(entry["reply"]) == expect
    elif entry["kind"] == "plan":
        assert plan_choice(entry["reply"], entry["allowed"]) == expect
    else:
        verdict = verdict_of(entry["reply"])
        assert (verdict.approved, verdict.read) == (expect["approved"], expect["read"])
        if expect["feedback_has"]:
            assert expect["feedback_has"] in verdict.feedback
        assert verdict.feedback != "None"


@pytest.mark.parametrize(
    "reply",
    [
        "\n" * 40_000 + "maybe",
        " \n" * 40_000 + "{",
        "```python\n" + "x" * 300_000,
        "{" * 100_000,
        "[" * 100_000 + "{" + '"a":' * 1000,
        "Verdict" + ":" * 200_000,
        "step " * 80_000,
    ],
    ids=["blank-lines", "blank-brace", "unclosed-fence", "braces", "nested", "colons", "words"],
)
def test_hostile_replies_are_read_in_linear_time(reply):
    started = time.perf_counter()
    code_of(reply)
    verdict = verdict_of(reply)
    plan_choice(reply, ["dataset_analysis", "step"])
    assert time.perf_counter() - started < 2.0
    assert verdict.approved in (True, False)

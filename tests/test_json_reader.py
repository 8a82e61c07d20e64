"""The one guarded JSON reader: ordinary files read, hostile ones one sentence naming the file."""

from __future__ import annotations

import json
import math
import os

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from genotex.cli import main
from genotex.core import GenotexError, TaskInfo, parse_json, read_json
from genotex.core._json import MAX_DEPTH
from genotex.preprocessing import Recipe, propose_records


def test_a_byte_order_mark_is_read_like_any_editor_does(tmp_path):
    path = tmp_path / "task_info.json"
    path.write_bytes(b"\xef\xbb\xbf" + b'{"Asthma": {"related_genes": ["IL13"], "conditions": []}}')
    assert TaskInfo.read(path).genes_of("Asthma") == ("IL13",)


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1), "nested more than"),
        ("[" * 100_000, "nested more than"),  # the decoder's own recursion limit
        ('{"a": ' + "9" * 5000 + "}", "integer of 5000 digits"),
        ('{"a": 1e999}', "beyond the range"),
        ('{"a": -1e301}', "beyond the range"),
        ('{"a": Infinity}', "not a number JSON allows"),
        ('{"a": 1', "not valid JSON"),
        (b'{"a": "\xff"}', "not UTF-8"),
    ],
)
def test_hostile_json_is_one_sentence_naming_the_file(tmp_path, text, reason):
    path = tmp_path / "x.json"
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    with pytest.raises(GenotexError) as caught:
        read_json(path)
    assert reason in str(caught.value) and str(path) in str(caught.value)


def test_numbers_in_range_and_nan_are_kept():
    assert parse_json('{"a": 1e300, "b": -12345678901234567890, "c": NaN}')["a"] == 1e300
    assert math.isnan(parse_json('{"c": NaN}')["c"])


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this system")
def test_a_fifo_is_refused_at_once_instead_of_waiting_for_a_writer(tmp_path):
    fifo = tmp_path / "task_info.json"
    os.mkfifo(fifo)
    with pytest.raises(GenotexError, match="not a regular file"):
        read_json(fifo)


def test_a_json_recipe_with_a_byte_order_mark_is_read(tmp_path):
    recipe = {"trait": "Asthma", "cohort": "GSE1", "gene": {"usable": True}, "variables": {}}
    path = tmp_path / "GSE1.json"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps(recipe).encode())
    assert Recipe.read(path).cohort == "GSE1"
    toml = tmp_path / "GSE2.toml"
    toml.write_bytes(
        b'\xef\xbb\xbftrait = "Asthma"\r\ncohort = "GSE2"\r\n[gene]\r\nusable = true\r\n'
    )
    assert Recipe.read(toml).cohort == "GSE2"


def test_a_record_holding_a_huge_number_is_a_line_error_not_a_crash(tmp_path):
    records = tmp_path / "records.jsonl"
    good = {"trait": "Asthma", "cohort": "GSE1", "background": "", "characteristics": {}}
    records.write_text(
        json.dumps(good) + "\n" + '{"trait": ' + "9" * 5000 + "}\n" + json.dumps(good) + "\n"
    )
    summary = propose_records(records, tmp_path / "out.jsonl")
    assert summary.written == 3 and list(summary.errors) == [2]
    assert "5000 digits" in summary.errors[2]


_json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda children: st.lists(children) | st.dictionaries(st.text(), children),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(value=_json_values, cut=st.integers(min_value=0, max_value=400), junk=st.binary(max_size=8))
def test_damaged_json_is_parsed_or_refused_with_a_genotex_error(value, cut, junk):
    """Any JSON value, truncated and with junk inserted: only GenotexError may escape."""
    text = json.dumps(value).encode()
    damaged = text[:cut] + junk + text[cut:]
    try:
        parse_json(damaged)
    except GenotexError:
        pass


def _info(**entries):
    return {t: {"related_genes": ["G1"], "conditions": list(c)} for t, c in entries.items()}


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (_info(Asthma=["Age", "Age"]), "lists the condition 'Age' twice"),
        (_info(Asthma=["Asthma"]), "lists itself as a condition"),
        (_info(Asthma=["None"]), "the unconditional problem is always asked"),
        (_info(Asthma=["none"]), "the unconditional problem is always asked"),
        (_info(Asthma=["Obesity"]), "'Obesity', which is not a trait here"),
        (_info(**{"A|B": []}), "holds '|'"),
        ({"Asthma": {"related_genes": ["G1"], "conditions": ["Age|x"]}}, "holds '|'"),
    ],
)
def test_a_task_info_problem_is_asked_once_and_means_one_thing(tmp_path, data, reason):
    path = tmp_path / "task_info.json"
    path.write_text(json.dumps(data))
    with pytest.raises(GenotexError, match=reason.replace("|", r"\|")) as caught:
        TaskInfo.read(path)
    assert str(path) in str(caught.value)
    assert TaskInfo.from_dict(_info(Asthma=["Age", "Obesity"], Obesity=["Gender"]))


def test_written_json_has_no_bare_infinity_or_nan():
    from genotex.core import json_text

    text = json_text({"b": [math.inf, -math.inf], "a": math.nan, "c": 1.5})
    assert json.loads(text) == {"a": None, "b": [None, None], "c": 1.5}
    assert "Infinity" not in text and "NaN" not in text


@pytest.mark.parametrize(
    "argv",
    [
        ["eval", "-p", ".", "-r", ".", "--max-file-mb", "inf"],
        ["eval", "-p", ".", "-r", ".", "--max-file-mb", "nan"],
        ["eval", "-p", ".", "-r", ".", "--seed", "-1"],
        ["compare", "a.json", "b.json", "--seed", "-1"],
        ["demo", "--seed", "-1"],
        ["inspect", ".", "--values", "0"],
    ],
)
def test_option_values_out_of_range_are_usage_errors(argv):
    result = CliRunner().invoke(main, argv)
    assert result.exit_code == 2, result.output
    assert "unexpected" not in result.output and "Invalid value" in result.output


@pytest.mark.parametrize("suffix", ["toml", "json"])
def test_a_recipe_round_trips_in_both_formats(tmp_path, suffix):
    import dataclasses

    from genotex.preprocessing import Rule, Variable

    trait = Variable(
        "trait", row=0, rules=(Rule("asthma", 1.0), Rule("control", 0.0)), note="from row 0"
    )
    age = Variable("Age", row=2, numeric=True)
    recipe = Recipe("Asthma", "GSE1", variables={"trait": trait, "Age": age}, note="hand-checked")
    path = tmp_path / f"GSE1.{suffix}"
    recipe.write(path)
    if suffix == "toml":
        assert not path.read_text().lstrip().startswith("{")  # TOML, not JSON in a .toml file
    again = Recipe.read(path)
    assert again.to_dict() == recipe.to_dict()
    edited = dataclasses.replace(again, note="edited")  # the documented way to change one
    edited.write(path)
    assert Recipe.read(path).note == "edited"


def test_a_folder_given_as_a_file_is_named_in_one_sentence(tmp_path):
    """`genotex leaderboard RUN_FOLDER` said "3: Is a directory" (the descriptor, not the path)."""
    import subprocess
    import sys

    folder = tmp_path / "run"
    folder.mkdir()
    with pytest.raises(GenotexError, match="it is a folder, not a file") as caught:
        read_json(folder)
    assert str(folder) in str(caught.value)
    for command in (["leaderboard", str(folder)], ["compare", str(folder), str(folder)]):
        done = subprocess.run(
            [sys.executable, "-m", "genotex", *command], capture_output=True, text=True, timeout=120
        )
        assert done.returncode != 0 and f"{folder}: " in done.stderr, done.stderr
        assert "it is a folder, not a file" in done.stderr and "Traceback" not in done.stderr

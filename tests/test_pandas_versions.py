"""genotex on pandas 2 and pandas 3 (issue #62, item 6).

The `[anndata]` extra brings pandas 2.3 (anndata asks for pandas < 3), where every
GEO read printed a FutureWarning from `frame.replace("", np.nan)`. `.ci/run` runs the
readers' and the parity tests again on pandas 2 with anndata; the suite's warnings are
errors there as here, so a warning from genotex's own calls fails it.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from genotex.core import blank_as_missing


def test_blank_cells_are_missing_and_nothing_else_changes():
    index = ["s1", "s2", "s3"]
    frame = pd.DataFrame(
        {"text": pd.Series(["a", "", "c"], index=index, dtype=object), "x": [1.5, 2.0, np.nan]},
        index=index,
    )
    out = blank_as_missing(frame)
    assert out["text"].dtype == object and list(out["text"].isna()) == [False, True, False]
    assert out.loc["s1", "text"] == "a" and out.loc["s3", "text"] == "c"
    assert out["x"].dtype == np.float64 and out["x"].tolist()[:2] == [1.5, 2.0]
    assert frame.loc["s2", "text"] == ""  # a copy: the caller's frame is untouched


def test_an_all_blank_text_column_stays_text_and_is_not_made_numbers():
    """pandas 2's replace inferred float64 here (and warned it would stop doing so)."""
    frame = pd.DataFrame({"t": pd.Series(["", ""], dtype=object)})
    out = blank_as_missing(frame)
    assert out["t"].dtype == object and out["t"].isna().all()


def test_a_text_dtype_column_keeps_its_dtype():
    frame = pd.DataFrame({"t": pd.Series(["a", ""], dtype="string")})
    out = blank_as_missing(frame)
    assert out["t"].dtype == frame["t"].dtype and out["t"].isna().tolist() == [False, True]


def test_a_demo_benchmark_preprocesses_without_a_warning(tmp_path):
    """Every GEO series, platform SOFT and Xena cohort of a demo, read and preprocessed
    (the suite's warnings are errors: a FutureWarning fails this on pandas 2)."""
    from click.testing import CliRunner

    from genotex.cli import main
    from genotex.workflows import write_raw_benchmark

    root = write_raw_benchmark(tmp_path / "bench").root
    result = CliRunner().invoke(main, [
        "preprocess", "--all", "--input", str(root / "input"), "--recipes", str(root / "recipes"),
        "--task-info", str(root / "metadata/task_info.json"),
        "--synonyms", str(root / "metadata/gene_synonym.json"), "--out", str(tmp_path / "out"),
    ])  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "Warning" not in result.output
    assert len(list((tmp_path / "out").rglob("*.csv"))) > 10

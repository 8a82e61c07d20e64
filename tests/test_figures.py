"""The report's figures as a paper takes them: formats, dpi, text, scales, labels, missing values.

Each figure file is opened as a reader's tool would (Pillow for the PNG, an XML
parser for the SVG, pypdf for the PDF), and the drawn objects are read back from
matplotlib to check what the picture says, not how the code builds it.
"""

from __future__ import annotations

import io
import math
import shutil
import xml.etree.ElementTree as ET
from dataclasses import replace

import pytest
from click.testing import CliRunner

from genotex.cli import main
from genotex.evaluation import (
    FIGURE_FORMATS,
    BootstrapSettings,
    Diagnosis,
    DiagnosisFinding,
    EvalOptions,
    evaluate,
    load_report,
    write_report,
    write_runs_report,
)
from genotex.evaluation._figure_files import FIGURES
from genotex.evaluation._figures import (
    csc_per_trait,
    problem_distributions,
    runs_compared,
    scores_per_task,
    trait_category_heatmap,
)
from tests.conftest import eval_args

MISSING_TRAIT = "Obesity"  # every regress file of it is removed from the second prediction


def _evaluate(case, pred, label):
    options = EvalOptions(ci=True, bootstrap=BootstrapSettings(resamples=200, seed=0), label=label)
    return evaluate(
        pred, case / "ref/output", case / "ref/metadata/task_info.json", options=options
    )


@pytest.fixture(scope="module")
def reports(eval_fixtures, tmp_path_factory):
    """case1 as given, and case1 with one trait's result files and one trait's tables removed."""
    case = eval_fixtures / "case1"
    pred = tmp_path_factory.mktemp("pred") / "output"
    shutil.copytree(case / "pred/output", pred)
    removed = list((pred / "regress" / MISSING_TRAIT).glob("*.json"))
    for path in removed:
        path.unlink()
    shutil.rmtree(pred / "preprocess" / "Cystic_Fibrosis")
    # a diagnosis of two classes (three findings), so that every figure of the report applies
    found = [
        DiagnosisFinding("trait_inverted", "preprocess/T/clinical_data/C1.csv", "inverted", "T"),
        DiagnosisFinding("trait_inverted", "preprocess/T/clinical_data/C2.csv", "inverted", "T"),
        DiagnosisFinding("age_unit", "preprocess/T/clinical_data/C3.csv", "months", "T"),
    ]
    diagnosis = Diagnosis((), tuple(found), (), {"mode": "standard"})
    return {
        "whole": replace(_evaluate(case, case / "pred/output", "Agent A"), diagnosis=diagnosis),
        "holes": _evaluate(case, pred, "Agent B"),
        "removed": len(removed),
    }


def test_the_error_class_histogram_counts_each_class(reports):
    fig = FIGURES["error_classes"].draw(reports["whole"])
    (ax,) = fig.axes
    bars = {
        t.get_text(): p.get_width() for t, p in zip(ax.get_yticklabels(), ax.patches, strict=True)
    }
    assert bars == {"trait_inverted": 2, "age_unit": 1}


def _png(path):
    """(format, dpi, size) of a PNG file, as Pillow reads it."""
    from PIL import Image

    with Image.open(path) as image:
        return image.format, [round(v) for v in image.info["dpi"]], image.size


def _texts(fig) -> list[str]:
    return [t.get_text() for ax in fig.axes for t in ax.texts]


def test_no_figure_carries_a_title_the_caption_is_in_the_report(reports, tmp_path):
    for name, spec in FIGURES.items():
        fig = spec.draw(reports["whole"])
        assert fig._suptitle is None, name
        assert all(ax.get_title() == "" for ax in fig.axes), name
    page = write_report(reports["whole"], tmp_path / "r").read_text()
    for spec in FIGURES.values():
        assert f"<figcaption>{spec.caption}" in page.replace("&#39;", "'")


def test_each_format_is_what_it_says_png_at_the_asked_dpi_svg_and_pdf_with_text(reports, tmp_path):
    from pypdf import PdfReader

    write_report(reports["whole"], tmp_path / "r")  # default: all three, 300 dpi
    figures = tmp_path / "r" / "figures"
    for name in FIGURES:
        assert {p.suffix for p in figures.glob(f"{name}.*")} == {".png", ".svg", ".pdf"}
    width, height = scores_per_task(reports["whole"]).get_size_inches()
    size = (round(width * 300), round(height * 300))
    assert _png(figures / "scores_per_task.png") == ("PNG", [300, 300], size)
    # SVG: labels are <text> elements a reader can edit, not glyph paths
    tree = ET.parse(figures / "trait_category_f1.svg")
    texts = "".join(e.text or "" for e in tree.iter() if e.tag.endswith("text"))
    assert "Autism spectrum disorder (ASD)" in texts and "Two-step" in texts
    # PDF: a real PDF whose text can be extracted (embedded TrueType fonts)
    reader = PdfReader(figures / "trait_category_f1.pdf")
    assert len(reader.pages) == 1
    assert "Autism spectrum disorder (ASD)" in reader.pages[0].extract_text()
    fonts = reader.pages[0]["/Resources"]["/Font"]
    assert all(
        font.get_object()["/Subtype"] == "/Type0" or "/TrueType" in str(font.get_object())
        for font in fonts.values()
    )

    result = CliRunner().invoke(
        main,
        [
            "report",
            str(_saved(reports["whole"], tmp_path)),
            "--out",
            str(tmp_path / "lo"),
            "--figure-format",
            "png",
            "--dpi",
            "150",
        ],
    )
    assert result.exit_code == 0, result.output
    written = sorted(p.name for p in (tmp_path / "lo" / "figures").iterdir())
    assert written == sorted(f"{name}.png" for name in FIGURES)
    size = (round(width * 150), round(height * 150))
    assert _png(tmp_path / "lo" / "figures" / "scores_per_task.png") == ("PNG", [150, 150], size)


def test_the_cli_offers_exactly_the_library_formats():
    from genotex.cli._common import FIGURE_FORMATS as CLI_FORMATS

    assert CLI_FORMATS == FIGURE_FORMATS == ("png", "svg", "pdf")


def _saved(report, tmp_path):
    path = tmp_path / f"{report.run['label']}.json"
    path.write_text(report.to_json())
    return path


def test_each_panel_has_one_scale(reports):
    fig = scores_per_task(reports["whole"])
    assert len(fig.axes) == 2
    by_label = {}
    for ax in fig.axes:
        heights = [bar.get_height() for bar in ax.patches]
        ticks = [t.get_text() for t in ax.get_xticklabels()]
        by_label[ax.get_ylabel()] = (heights, ticks, ax.get_ylim())
    percent, unit = by_label["score (0 to 100)"], by_label["score (0 to 1)"]
    assert set(percent[1]) == {"DF F1", "DS accuracy", "Analysis F1"}
    assert set(unit[1]) == {"CSC Gene", "CSC Trait", "CSC Linked", "Analysis AUROC"}
    assert max(unit[0]) <= 1 and unit[2][1] <= 1.1
    assert max(percent[0]) > 1 and percent[2][1] >= 100
    overall = reports["whole"].analysis_by_category()["Overall"]
    assert overall["f1"] in percent[0] and overall["auroc"] in unit[0]


def test_trait_labels_are_written_as_a_reader_writes_them(reports):
    heatmap = trait_category_heatmap(reports["whole"])
    labels = [t.get_text() for t in heatmap.axes[0].get_yticklabels()]
    assert "Autism spectrum disorder (ASD)" in labels and "Cystic Fibrosis" in labels
    assert not any("_" in label for label in labels)
    bars = csc_per_trait(reports["whole"])
    assert "Esophageal Cancer" in [t.get_text() for t in bars.axes[0].get_yticklabels()]


def test_a_missing_trait_is_drawn_as_missing_never_as_zero(reports):
    report = reports["holes"]
    heatmap = trait_category_heatmap(report)
    ax = heatmap.axes[0]
    row = [t.get_text() for t in ax.get_yticklabels()].index(MISSING_TRAIT)
    cells = {
        round(t.get_position()[0]): t.get_text()
        for t in ax.texts
        if round(t.get_position()[1]) == row
    }
    assert set(cells.values()) == {"missing"}
    assert not any(t.startswith("0.0") for t in _texts(heatmap))
    # the image itself: the missing trait's cells are not painted with the colour of 0
    image = ax.images[0].get_array()
    assert image.mask[row].all()

    bars = csc_per_trait(report)
    ax = bars.axes[0]
    row = [t.get_text() for t in ax.get_yticklabels()].index("Cystic Fibrosis")
    drawn = [p for p in ax.patches if abs(p.get_y() + p.get_height() / 2 - row) < 0.5]
    assert drawn == []  # no bar of length 0 where the tables are missing
    marks = [t.get_text() for t in ax.texts if abs(t.get_position()[1] - row) < 0.5]
    assert marks == ["n/a"] * 3  # one per data kind (gene, trait, linked)

    histograms = problem_distributions(report)
    missing = sum(s.status == "missing" for s in report.analysis)
    already = sum(s.status == "missing" for s in reports["whole"].analysis)
    assert missing == reports["removed"] + already and reports["removed"] >= 3
    assert all(f"{missing} missing, not drawn" in text for text in _texts(histograms))
    counted = sum(p.get_height() for p in histograms.axes[0].patches)
    assert counted == len(report.analysis) - missing


def test_a_value_the_run_lacks_reads_na_in_the_headline_figure(reports):
    import dataclasses

    report = dataclasses.replace(reports["whole"], preprocessing={"gene": ()})
    fig = scores_per_task(report)
    unit = next(ax for ax in fig.axes if ax.get_ylabel() == "score (0 to 1)")
    ticks = [t.get_text() for t in unit.get_xticklabels()]
    assert ticks[0] == "CSC Gene" and math.isnan(
        report.preprocessing_average("gene").get("composite_similarity_correlation", math.nan)
    )
    assert [t.get_text() for t in unit.texts] == ["n/a"]
    assert all(abs(p.get_x() + p.get_width() / 2) > 0.5 for p in unit.patches)  # no bar at 0


def test_several_runs_in_one_figure_with_their_intervals(reports, eval_fixtures, tmp_path):
    a = _saved(reports["whole"], tmp_path)
    b = _saved(reports["holes"], tmp_path)
    out = tmp_path / "both"
    result = CliRunner().invoke(main, ["report", str(a), str(b), "--report", str(out)])
    assert result.exit_code == 0, result.output
    page = (out / "index.html").read_text()
    assert "Agent A, Agent B: genotex runs compared" in page
    assert {p.name for p in (out / "figures").iterdir()} == {
        f"runs_compared.{fmt}" for fmt in FIGURE_FORMATS
    }
    assert _png(out / "figures" / "runs_compared.png")[:2] == ("PNG", [300, 300])
    whole, holes = reports["whole"], reports["holes"]
    f1 = [r.analysis_by_category()["Overall"]["f1"] for r in (whole, holes)]
    assert f"{f1[0]:.2f} [" in page and f"{f1[1]:.2f} [" in page
    fig = runs_compared([whole, holes], ["Agent A", "Agent B"])
    legend = [t.get_text() for t in fig.legends[0].get_texts()]
    assert legend == ["Agent A", "Agent B"]
    percent = next(ax for ax in fig.axes if ax.get_ylabel() == "score (0 to 100)")
    heights = sorted(round(p.get_height(), 9) for p in percent.patches)
    assert round(f1[0], 9) in heights and round(f1[1], 9) in heights
    assert len(percent.lines) >= 2  # the interval whiskers of each run's F1
    # an analysis-only run: its preprocessing bars read n/a
    only = tmp_path / "only.json"
    argv = eval_args(eval_fixtures / "case1", "-t", "analysis", "--json", str(only))
    result = CliRunner().invoke(main, [*argv, "--no-progress"])
    assert result.exit_code == 0, result.output
    fig = runs_compared([whole, load_report(only)], ["A", "analysis only"])
    assert _texts(fig).count("n/a") == 5  # DF F1, DS accuracy, CSC of the three kinds


def test_runs_scored_against_different_references_are_refused(reports, eval_fixtures, tmp_path):
    other = tmp_path / "other.json"
    argv = eval_args(eval_fixtures / "case2", "--json", str(other))
    assert CliRunner().invoke(main, argv).exit_code == 0
    result = CliRunner().invoke(
        main,
        ["report", str(_saved(reports["whole"], tmp_path)), str(other), "-o", str(tmp_path / "x")],
    )
    assert result.exit_code == 1
    assert result.stderr.count("\n") == 1 and "another task_info" in result.stderr
    assert not (tmp_path / "x" / "index.html").exists()
    with pytest.raises(ValueError, match="different labels"):
        write_runs_report([reports["whole"]] * 2, tmp_path / "y", labels=["a", "a"])


def test_every_format_is_byte_for_byte_the_same_twice(reports):
    from genotex.evaluation._figure_files import figure_bytes

    for fmt in FIGURE_FORMATS:
        first = figure_bytes(scores_per_task(reports["whole"]), fmt)
        assert first == figure_bytes(scores_per_task(reports["whole"]), fmt), fmt
    assert io.BytesIO(first).read(5) == b"%PDF-"

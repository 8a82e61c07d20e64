"""Reference mode keeps the published pipeline's answers, fragile ones included, and says when
one is fragile (#36 item 10): a penalty at the α grid's edge, a fit stopped at its iteration
limit, a selection that depends on the genes' column order; `converged` is never claimed for a
fit whose duality gap is not within scikit-learn's tolerance. (With more genes than samples at
α = 1e-6 the objective is reached, so the fit has converged, but many gene sets reach it: that
is the column-order flag's business, not convergence's.)
"""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest
from click.testing import CliRunner

from genotex.cli import main
from genotex.regression import LassoModel, answer_problem, write_result
from genotex.regression import _cv as cv_module
from genotex.workflows import SynthSpec, write_example


@pytest.fixture(scope="module")
def example(tmp_path_factory):
    spec = SynthSpec(n_traits=2, n_cohorts=3, samples=(30, 40), n_genes=1500, n_related=8)
    return write_example(tmp_path_factory.mktemp("flags"), spec, seed=5)


def _gap(x: np.ndarray, y: np.ndarray, w: np.ndarray, alpha: float) -> float:
    """The Lasso's duality gap over ‖y‖²/n, written out here from its definition."""
    xc, yc = x - x.mean(axis=0), y - y.mean()
    n, r = len(yc), yc - xc @ w
    scale = min(1.0, n * alpha / np.abs(xc.T @ r).max())
    primal = r @ r / (2 * n) + alpha * np.abs(w).sum()
    dual = (yc @ yc - (yc - scale * r) @ (yc - scale * r)) / (2 * n)
    return (primal - dual) / (yc @ yc / n)


def test_converged_is_the_duality_gap_within_tolerance_not_an_early_stop():
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=(30, 400)), rng.normal(size=30)
    for alpha in (1e-6, 0.5):
        model = LassoModel(alpha=alpha).fit(x, y)
        gap = _gap(x, y, model.coef_, alpha)
        assert model.relative_gap_ == pytest.approx(gap, rel=1e-6, abs=1e-12)
        assert model.converged_ == (model.n_iter_ < 1000 and gap <= 1e-4)


def test_a_fit_at_the_grids_edge_is_flagged_in_the_file_describe_and_eval(
    example, tmp_path, monkeypatch
):
    real = cv_module.cross_validate
    monkeypatch.setattr(  # the CV's choice forced to the grid's smallest α, as on TCGA CHOL
        cv_module, "cross_validate", lambda *a, **k: dataclasses.replace(real(*a, **k), alpha=1e-6)
    )
    data = example.ref_output / "preprocess"
    result = answer_problem(data, "Asthma|None", example.task_info)
    genes = [gene for gene, _ in result.genes]
    assert "alpha_at_grid_edge" in result.method.flags
    # p > n at α = 1e-6: the objective is reached (converged), but not by one gene set
    assert "column_order_dependent" in result.method.flags
    selected, common = result.method.reversed_columns
    assert (selected, common) != (len(genes), len(genes))
    assert "WARNING: alpha 1e-06 is at the edge of the grid" in result.describe()
    out = tmp_path / "pred" / "output" / "regress"
    write_result(out, result)
    written = json.loads((out / "Asthma" / "significant_genes_condition_None.json").read_text())
    diagnostics = written["method"]["diagnostics"]
    assert diagnostics["converged"] == (diagnostics["final_relative_gap"] <= 1e-4)
    assert diagnostics["flags"][0] == "alpha_at_grid_edge"
    assert written["significant_genes"]["Variable"] == genes  # the published answer, kept
    report = tmp_path / "report.json"
    done = CliRunner().invoke(
        main,
        ["eval", "-p", str(tmp_path / "pred" / "output"), "-r", str(example.ref_output),
         "-t", "analysis", "--no-progress", "--json", str(report)],
    )  # fmt: skip
    assert done.exit_code == 0, done.output
    findings = json.loads(report.read_text())["problems_found"]
    said = [
        f["reason"]
        for f in findings
        if f["file"].endswith("Asthma/significant_genes_condition_None.json")
    ]
    assert any("its reference-mode fit: alpha 1e-06 is at the edge" in s for s in said), said


def test_the_fallback_alpha_is_a_warning_in_the_file_and_the_log(example, tmp_path):
    """Issue #45, 14: reference mode with no known gene falls back to alpha 0.1 (the published
    rule); that is said as a WARNING in describe() (the run log's line) and as a flag in the
    result file, not only in passing beside alpha.
    """
    from genotex.core import TaskInfo

    info = TaskInfo.read(example.task_info)
    unknown = TaskInfo({**info.related_genes, "Asthma": ()}, dict(info.conditions))
    result = answer_problem(example.ref_output / "preprocess", "Asthma|None", unknown)
    assert result.alpha == 0.1 and result.alpha_fallback
    assert "alpha_fallback" in result.method.flags
    line = result.describe()
    assert "WARNING: no alpha of the grid selected a known gene" in line
    assert line.count("fallback") == 1  # said once
    out = tmp_path / "regress"
    write_result(out, result)
    written = json.loads((out / "Asthma" / "significant_genes_condition_None.json").read_text())
    assert "alpha_fallback" in written["method"]["diagnostics"]["flags"]


def test_the_notebook_analysis_warns_of_the_fallback_alpha(example):
    import pandas as pd

    from genotex.regression import GeneAnalysis

    table = pd.read_csv(next((example.ref_output / "preprocess" / "Asthma").glob("*.csv")),
                        index_col=0)  # fmt: skip
    with pytest.warns(UserWarning, match="alpha is the published fallback 0.1"):
        GeneAnalysis("Asthma", mode="reference").fit(table)

"""`--mode standard`: converged, covariate-correct, sign-invariant, and recorded in `method`."""

from __future__ import annotations

import inspect
import json
import os
import platform
import subprocess
import sys

import numpy as np
import pytest
import scipy.linalg
from click.testing import CliRunner
from sklearn.linear_model import Lasso

from genotex.cli import main
from genotex.core import CohortInfo, CohortRecord, ResultFile, TaskInfo, write_table
from genotex.regression import STANDARD_TOL, fit_standard, solve_path
from genotex.regression import _folds as folds
from genotex.regression import _paths as paths
from genotex.regression import _standard as standard


def _batched(n=240, p=150, seed=0):
    """A problem with a batch effect (the eigen-gap test fires: n > 200) and 5 planted genes."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, p))
    x[: n // 2] += rng.normal(0, 3, p)  # two batches
    y = (x[:, :5] @ np.array([1.0, -1.0, 0.8, 0.6, -0.7]) + rng.normal(size=n) > 0).astype(float)
    return x, y, [f"G{i}" for i in range(p)]


def test_the_converged_lasso_matches_a_tightly_converged_scikit_learn_fit():
    rng = np.random.default_rng(3)
    x = np.asfortranarray(rng.normal(size=(80, 600)))
    y = x[:, :8] @ rng.normal(size=8) + rng.normal(size=80)
    y -= y.mean()
    alpha = 0.05
    ((coef, _, gap),) = solve_path(x, y, [alpha]).points
    tight = Lasso(alpha=alpha, fit_intercept=False, tol=1e-12, max_iter=1_000_000).fit(x, y).coef_

    def objective(w):
        r = y - x @ w
        return 0.5 * r @ r / len(y) + alpha * np.abs(w).sum()

    # the duality gap bounds the objective's excess over the optimum (stated tolerance)
    assert gap <= STANDARD_TOL
    assert objective(coef) - objective(tight) <= STANDARD_TOL * (y @ y) / len(y)
    assert set(np.flatnonzero(np.abs(tight) > 1e-2)) <= set(np.flatnonzero(coef))
    np.testing.assert_allclose(coef, tight, atol=5e-3)


def test_kkt_conditions_hold_with_unpenalized_covariates():
    rng = np.random.default_rng(4)
    n, p = 120, 300
    x = rng.normal(size=(n, p))
    z = rng.normal(size=n)
    y = 2.0 + 1.5 * z + x[:, 0] - x[:, 1] + rng.normal(scale=0.5, size=n)
    design = folds.design_of(np.asfortranarray(x), y, folds.covariate_columns(z, n), lmm=False)
    alpha = 0.05
    ((coef, _, _),) = solve_path(design.x, design.y, [alpha], tol=1e-10).points
    # stationarity: |x_j'r|/n <= alpha everywhere, = alpha with the sign of w_j where w_j != 0
    gradient = design.x.T @ (design.y - design.x @ coef) / n
    assert np.all(np.abs(gradient) <= alpha + 1e-6)
    active = coef != 0
    np.testing.assert_allclose(gradient[active], alpha * np.sign(coef[active]), atol=1e-6)
    # the covariates' coefficients are ordinary least squares given the genes
    beta = design.covariates(coef)
    ols = np.linalg.lstsq(np.column_stack([np.ones(n), z]), y - x @ coef, rcond=None)[0]
    np.testing.assert_allclose(beta, ols, atol=1e-8)


def test_the_standard_answer_does_not_depend_on_the_memory_layout_of_x():
    """NumPy sums a C-ordered table's columns row after row and a Fortran-ordered one's
    pairwise: without one canonical layout the std, and so the answer's bits, would depend
    on how the caller's array happens to be stored (a DataFrame's .values, a transpose)."""
    rng = np.random.default_rng(21)
    n, p = 60, 1_300  # from 1,024 columns the two orders are summed differently
    x = rng.normal(size=(n, p)) * rng.uniform(0.5, 30.0, p) + rng.uniform(-1e3, 1e3, p)
    y = x[:, :4] @ np.array([0.05, -0.04, 0.03, 0.02]) + rng.normal(size=n)
    genes = [f"G{i}" for i in range(p)]
    fits = [
        fit_standard(np.asarray(x, order=order), y, None, genes, [], binary=False) for order in "CF"
    ]
    assert fits[0].alpha == fits[1].alpha
    assert np.array_equal(fits[0].coefficients, fits[1].coefficients)
    assert fits[0].cv_performance == fits[1].cv_performance


def test_the_standard_lmm_does_not_depend_on_eigenvector_signs(monkeypatch):
    x, y, genes = _batched()
    first = fit_standard(x, y, None, genes, genes[:5], binary=True)
    assert first.lmm and first.method.model.startswith("LMM")
    rng = np.random.default_rng(8)
    eigh = scipy.linalg.eigh

    def flipped(matrix, *args, **kwargs):
        values, vectors = eigh(matrix, *args, **kwargs)
        return values, vectors * rng.choice([-1.0, 1.0], vectors.shape[1])

    monkeypatch.setattr(scipy.linalg, "eigh", flipped)  # _design imports it when it runs
    again = fit_standard(x, y, None, genes, genes[:5], binary=True)
    assert again.alpha == first.alpha
    assert list(np.flatnonzero(again.coefficients)) == list(np.flatnonzero(first.coefficients))
    np.testing.assert_allclose(again.coefficients, first.coefficients, atol=1e-6)


def _tree(root, x, y, genes):
    import pandas as pd

    table = pd.DataFrame(x, columns=genes)
    table.insert(0, "Trait", y)
    write_table(root / "preprocess/Trait/GSE1.csv", table)
    record = CohortRecord.decide("GSE1", gene=True, trait=True, biased=False, size=len(y))
    CohortInfo.update(root / "preprocess/Trait/cohort_info.json", record)
    TaskInfo.from_dict({"Trait": {"related_genes": genes[:5], "conditions": []}}).write(
        root / "task_info.json"
    )


def _regress(root, out, *extra, env=None):
    command = [
        sys.executable,
        "-m",
        "genotex",
        "regress",
        "--data",
        str(root / "preprocess"),
        "--task-info",
        str(root / "task_info.json"),
        "--out",
        str(out),
        "--all",
        *extra,
    ]
    done = subprocess.run(command, capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    return json.loads((out / "Trait/significant_genes_condition_None.json").read_text())


@pytest.mark.skipif(platform.machine() != "x86_64", reason="OpenBLAS core types are x86_64 ones")
def test_another_blas_kernel_gives_the_same_standard_answer(tmp_path):
    x, y, genes = _batched(seed=1)
    _tree(tmp_path, x, y, genes)
    answers = []
    for core in (None, "Sandybridge", "Nehalem"):
        env = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_CORETYPE",)}
        if core:
            env["OPENBLAS_CORETYPE"] = core
        answer = _regress(tmp_path, tmp_path / f"out-{core}", "--mode", "standard", env=env)
        answers.append(answer["significant_genes"]["Variable"])
        assert answer["method"]["model"].startswith("LMM")
    assert answers[0] == answers[1] == answers[2]


def test_both_modes_record_their_method_and_do_not_count_as_each_others_result(tmp_path):
    x, y, genes = _batched(n=90, p=60, seed=2)
    _tree(tmp_path, x, y, genes)
    out = tmp_path / "out"
    reference = _regress(tmp_path, out)
    assert (
        reference["method"]["mode"] == "reference"
        and reference["method"]["select_by"] == "precision"
    )
    assert "converged" in reference["method"]["diagnostics"]
    stamp = (out / "Trait/significant_genes_condition_None.json").stat().st_mtime_ns
    done = _regress(tmp_path, out, "--mode", "standard", "--select-by", "precision")
    assert (
        out / "Trait/significant_genes_condition_None.json"
    ).stat().st_mtime_ns != stamp  # redone
    method = done["method"]
    assert method["mode"] == "standard" and method["select_by"] == "precision"
    assert method["diagnostics"]["final_relative_gap"] <= STANDARD_TOL
    assert len(method["alpha_grid"]["values"]) == standard.N_ALPHAS
    ResultFile.from_dict(done)  # evaluation scores it like any result
    status = json.loads((out / "status.json").read_text())
    assert "standard mode, precision rule, converged" in status["Trait|None"]["detail"]


def test_select_by_goes_with_the_standard_mode(tmp_path):
    result = CliRunner().invoke(
        main, ["regress", "--all", "--select-by", "precision", "--data", str(tmp_path)]
    )
    assert result.exit_code == 2 and "--select-by goes with --mode standard" in result.output


def test_the_standard_mode_never_imports_scikit_learn(tmp_path):
    """scikit-learn's import (~1.3 s) costs more than the standard mode's solver: it must stay out
    (the reference mode, by contrast, needs it)."""
    x, y, genes = _batched(n=90, p=60, seed=3)
    _tree(tmp_path, x, y, genes)
    probe = (
        "import sys\n"
        "from genotex.cli import main\n"
        "try:\n"
        "    main(sys.argv[1:])\n"
        "except SystemExit:\n"
        "    pass\n"
        "print('scikit-learn imported' if 'sklearn' in sys.modules else 'no scikit-learn')\n"
    )
    common = ["regress", "--data", str(tmp_path / "preprocess"), "--all"]
    common += ["--task-info", str(tmp_path / "task_info.json")]
    seen = {}
    for mode in ("standard", "reference"):
        out = tmp_path / f"out-{mode}"
        done = subprocess.run(
            [sys.executable, "-c", probe, *common, "--out", str(out), "--mode", mode],
            capture_output=True,
            text=True,
        )
        assert (out / "Trait/significant_genes_condition_None.json").exists(), done.stderr
        seen[mode] = done.stdout.strip().splitlines()[-1]
    assert seen == {"standard": "no scikit-learn", "reference": "scikit-learn imported"}


def test_the_standard_model_is_a_scikit_learn_estimator_of_the_same_fit():
    from sklearn.base import clone

    from genotex.regression import StandardModel

    x, y, genes = _batched(n=120, p=60, seed=3)
    model = StandardModel(select_by="precision", known_genes=genes[:5])
    assert model.get_params() == {"select_by": "precision", "known_genes": genes[:5]}
    fitted = model.fit(x, y, genes=genes)
    assert fitted is model and not hasattr(clone(model), "coef_")  # clone: unfitted, same params
    direct = fit_standard(x, y, None, genes, genes[:5], binary=True, select_by="precision")
    np.testing.assert_array_equal(model.coef_, direct.coefficients)
    assert model.alpha_ == direct.alpha and model.method_ == direct.method
    assert model.converged_ and model.method_.select_by == "precision"
    ranked = model.selected_genes()
    assert ranked and all(g in genes for g, _ in ranked)
    with pytest.raises(ValueError, match="select_by"):
        StandardModel(select_by="loss").fit(x, y, genes=genes)


def _conditioned(n=90, p=400, seed=3):
    """A problem with a condition Z (partialled out in every fold) and 6 planted genes."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, p)) + rng.normal(size=(n, 1)) * rng.normal(size=p)
    z = rng.normal(size=n)
    y = x[:, :6] @ np.array([1.0, -0.8, 0.7, 0.6, -0.5, 0.4]) + 0.5 * z + rng.normal(size=n)
    return x, y, z, [f"G{i}" for i in range(p)]


@pytest.mark.parametrize("kind", ["lasso with a condition", "lmm"])
def test_the_answer_does_not_depend_on_how_many_threads_solve_the_folds(monkeypatch, kind):
    """The folds and the whole data's path run on a pool of threads, each fold from its own
    buffers: shared buffers, or results taken in the order they finish, would show here."""
    if kind == "lmm":
        x, y, genes = _batched()
        z, binary = None, True
    else:
        x, y, z, genes = _conditioned()
        binary = False
    fits = []
    for threads in (1, 2, 5):
        monkeypatch.setattr(standard, "FOLD_THREADS", threads)
        fits.append(fit_standard(x, y, z, genes, genes[:5], binary=binary))
    assert fits[0].lmm == (kind == "lmm")
    for fit in fits[1:]:
        assert fit.coefficients.tobytes() == fits[0].coefficients.tobytes()
        assert fit.cv_performance == fits[0].cv_performance
        assert fit.method == fits[0].method


def test_the_coordinate_descent_fallback_runs_on_the_calling_thread(monkeypatch):
    """scikit-learn's fallback loads SciPy's BLAS, whose thread count a pool thread cannot
    limit (measured: OpenBLAS 0.3.30 kept 2 threads): every fallback path, the five folds'
    and the whole data's, must be solved on the thread that called fit_standard."""
    import threading

    from genotex.regression import HomotopyFailed

    def fails(*args, **kwargs):
        raise HomotopyFailed("the active genes' Gram matrix is singular")

    threads = []
    descend = paths._coordinate_descent_path

    def recorded(*args, **kwargs):
        threads.append(threading.current_thread())
        return descend(*args, **kwargs)

    monkeypatch.setattr(paths, "lasso_path", fails)
    monkeypatch.setattr(paths, "_coordinate_descent_path", recorded)
    x, y, z, genes = _conditioned()
    fit = fit_standard(x, y, z, genes, genes[:5], binary=False)
    assert fit.method.fallback is not None and fit.method.fallback.paths == "6 of 6"
    assert threads == [threading.main_thread()] * 6


def test_an_lmm_fit_in_a_process_whose_blas_starts_threaded_equals_the_one_thread_fit(tmp_path):
    """The folds' eigh run on pool threads, where threadpoolctl's limit did not hold for
    SciPy's OpenBLAS once the main thread had used it: the caller's thread limits it for
    them. Two processes, one started on one BLAS thread, must give the same bytes."""
    script = (
        "import sys\nimport numpy as np\n"
        + inspect.getsource(_batched)
        + "from genotex.regression import fit_standard\n"
        "x, y, genes = _batched()\n"
        "fit = fit_standard(x, y, None, genes, genes[:5], binary=True)\n"
        "assert fit.lmm\n"
        "sys.stdout.write(fit.coefficients.tobytes().hex() + repr(fit.cv_performance))\n"
    )
    outputs = []
    for threads in ("1", "2"):
        env = {**os.environ, "OPENBLAS_NUM_THREADS": threads}
        done = subprocess.run(
            [sys.executable, "-c", script], capture_output=True, text=True, env=env
        )
        assert done.returncode == 0, done.stderr
        assert "BlasThreadWarning" not in done.stderr
        outputs.append(done.stdout)
    assert outputs[0] == outputs[1]


def test_no_fold_reads_its_buffers_after_handing_them_back(monkeypatch):
    """A fold's buffers go back to the pool for the next fold (on another thread) when it is
    done: its scores, which read its design (the scaled buffer itself without a batch
    effect), must be computed before. Buffers filled with NaN as they are handed back
    must change nothing."""
    import contextlib

    x, y, z, genes = _conditioned()
    expected = fit_standard(x, y, z, genes, genes[:5], binary=False)
    take = folds._FoldBuffers.take

    @contextlib.contextmanager
    def scribbled(self):
        with take(self) as pair:
            yield pair
            for buffer in pair:
                buffer.fill(np.nan)

    monkeypatch.setattr(folds._FoldBuffers, "take", scribbled)
    again = fit_standard(x, y, z, genes, genes[:5], binary=False)
    assert again.cv_performance == expected.cv_performance
    assert again.coefficients.tobytes() == expected.coefficients.tobytes()


def test_fit_standard_refuses_arrays_that_are_not_a_problem_before_any_work():
    """#36 item 11: X.T ran > 240 s, one NaN in y gave alpha 1.0 with converged=True, one NaN in
    X a LinAlgError."""
    import time

    from genotex.regression import fit_standard

    rng = np.random.default_rng(0)
    x = rng.normal(size=(43, 2000))
    y = rng.integers(0, 2, size=43).astype(float)
    genes = [f"G{i}" for i in range(2000)]
    started = time.monotonic()
    with pytest.raises(ValueError, match="x must be samples x genes \\(it looks transposed\\)"):
        fit_standard(x.T, y, None, genes, [], binary=True)
    assert time.monotonic() - started < 1
    with pytest.raises(ValueError, match="y holds 1 missing or non-finite values"):
        fit_standard(x, np.where(np.arange(43) == 5, np.nan, y), None, genes, [], binary=True)
    broken = x.copy()
    broken[3, 7] = np.inf
    with pytest.raises(ValueError, match="x holds 1 missing or non-finite values"):
        fit_standard(broken, y, None, genes, [], binary=True)
    with pytest.raises(ValueError, match="1999 gene names"):
        fit_standard(x, y, None, genes[:-1], [], binary=True)

"""Every gene's least-squares fit on one design, and the t test of any coefficient of it.

`gene ~ design` is fitted for all genes at once from one QR factorization of the design
(n samples x p columns, the intercept among them), as limma's `lmFit` and R's `lm` with a
matrix response fit it. A coefficient, or a contrast of coefficients (stage III - stage
II), is then a vector `L` over the design's columns: its estimate is `L b`, its standard
error `s sqrt(L (D'D)^-1 L')` with `s^2` the gene's residual variance on n - p degrees of
freedom, and its t test is two-sided. Checked against statsmodels' OLS gene by gene.

A gene the design fits exactly (constant, explained by the covariates, or with no
residual variance at all) has no test; `untested_reasons` says why for each.
"""

from __future__ import annotations

import contextlib
import io
import warnings
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

from ..core import extra_hint

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "coefficient_statistics",
    "exactly_fitted",
    "moderated_coefficients",
    "unit_contrast",
    "untested_reasons",
]

#: A gene whose residual sum of squares is below this share of its own sum of squares is
#: fitted exactly (rounding only is left): it has no test.
_EXACT = 1e-24


def unit_contrast(columns: int, index: int) -> np.ndarray:
    """The contrast that picks one coefficient: 1 at `index`, 0 elsewhere."""
    vector = np.zeros(columns)
    vector[index] = 1.0
    return vector


def _bh(p: np.ndarray) -> np.ndarray:
    """Benjamini-Hochberg FDR over the genes with a p-value (NaN for the others)."""
    from scipy import stats

    fdr = np.full(len(p), np.nan)
    tested = np.isfinite(p)
    if tested.any():
        fdr[tested] = stats.false_discovery_control(p[tested], method="bh")
    return fdr


def _is_unit(vector: np.ndarray) -> bool:
    """Whether a contrast picks one coefficient (a 1 and zeros)."""
    return bool(np.count_nonzero(vector) == 1 and vector[np.flatnonzero(vector)[0]] == 1)


def exactly_fitted(x: np.ndarray, design: np.ndarray) -> np.ndarray:
    """Per gene, whether `design` fits it exactly (its residuals are rounding only)."""
    q, _ = np.linalg.qr(design)
    residuals = x - q @ (q.T @ x)
    rss = np.einsum("ij,ij->j", residuals, residuals)
    return rss <= _EXACT * np.maximum(np.einsum("ij,ij->j", x, x), 1.0)


def coefficient_statistics(
    x: np.ndarray,
    design: np.ndarray,
    contrasts: Mapping[str, np.ndarray],
    genes: Sequence[str],
    *,
    absorbed: int = 0,
) -> dict[str, pd.DataFrame]:
    """Each gene's OLS fit on `design`, tested for each contrast: one table a contrast.

    Parameters
    ----------
    x
        Samples x genes, finite.
    design
        Samples x p, of full column rank (the intercept's column among them).
    contrasts
        Name -> a vector of p weights over the design's columns (`unit_contrast` for one
        coefficient; `e_a - e_b` for the difference of two).
    genes
        The column names of `x`.
    absorbed
        Degrees of freedom already spent on `x` and `design` (a paired design's group
        means taken out: the number of groups less one).

    Returns
    -------
    dict of pandas.DataFrame
        For each contrast, indexed by gene: `effect` (L b), `se`, `t`, `p_value` (two-sided,
        on n - p - absorbed degrees of freedom) and `fdr` (Benjamini-Hochberg over the genes
        with a p-value). A gene the design fits exactly has NaN statistics.
    """
    import pandas as pd
    from scipy import linalg, stats

    x = np.asarray(x, dtype=np.float64)
    design = np.asarray(design, dtype=np.float64)
    n, p = design.shape
    df = n - p - absorbed
    if df < 1:
        raise ValueError(f"{n} samples leave no degree of freedom for a design of {p} columns")
    q, r = np.linalg.qr(design)
    projected = q.T @ x
    beta = linalg.solve_triangular(r, projected)
    residuals = x - q @ projected
    rss = np.einsum("ij,ij->j", residuals, residuals)
    exact = rss <= _EXACT * np.maximum(np.einsum("ij,ij->j", x, x), 1.0)
    variance = np.where(exact, np.nan, rss / df)
    tables = {}
    index = pd.Index(list(genes), name="gene")
    for name, vector in contrasts.items():
        weights = np.asarray(vector, dtype=np.float64)
        unscaled = float(np.sum(linalg.solve_triangular(r, weights, trans="T") ** 2))
        effect = np.where(exact, np.nan, weights @ beta)
        with np.errstate(invalid="ignore", divide="ignore"):
            se = np.sqrt(variance * unscaled)
            t = effect / se
        t = np.where(np.isfinite(t), t, np.nan)
        p_value = 2 * stats.t.sf(np.abs(t), df)
        frame = pd.DataFrame(
            {"effect": effect, "se": se, "t": t, "p_value": p_value, "fdr": _bh(p_value)},
            index=index,
        )
        tables[name] = frame.where(np.isfinite(frame), np.nan)
    return tables


def untested_reasons(
    x: np.ndarray,
    design: np.ndarray,
    nuisance: Sequence[int],
    names: Sequence[str],
    untested: np.ndarray,
) -> list[str | None]:
    """Why each untested gene has no test (None for a tested one).

    "constant in the samples fitted"; "explained by '<column>' and the intercept" when one
    covariate column alone fits it (a gene expressed in one stage only); "explained by the
    covariates" when they do together; else "no residual variance: the design fits it
    exactly". `nuisance` are the design's columns other than the tested ones (the
    intercept first), `names` every column's name.
    """
    reasons: list[str | None] = [None] * x.shape[1]
    if not untested.any():
        return reasons
    columns = untested.nonzero()[0]
    values = x[:, columns]
    constant = np.ptp(values, axis=0) == 0
    covariates = design[:, list(nuisance)]
    by_covariates = exactly_fitted(values, covariates)
    alone = {j: exactly_fitted(values, design[:, [nuisance[0], j]]) for j in list(nuisance)[1:]}
    for k, gene in enumerate(columns):
        if constant[k]:
            reasons[gene] = "constant in the samples fitted"
        elif by_covariates[k]:
            single = next((j for j, fits in alone.items() if fits[k]), None)
            reasons[gene] = (
                f"explained by {names[single]!r} and the intercept" if single is not None
                else "explained by the covariates"
            )  # fmt: skip
        else:
            reasons[gene] = "no residual variance: the design fits it exactly"
    return reasons


@contextlib.contextmanager
def _inmoose_said() -> Iterator[None]:
    """What InMoose prints or logs (to stderr, by its own handler) while in the block, said as
    Python warnings instead.
    """
    import logging

    logger = logging.getLogger("inmoose")
    records: list[logging.LogRecord] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record)

    handlers, propagate = list(logger.handlers), logger.propagate
    logger.handlers, logger.propagate = [Keep()], False
    said = io.StringIO()
    try:
        with contextlib.redirect_stdout(said):
            yield
    finally:
        logger.handlers, logger.propagate = handlers, propagate
    for text in [*(r.getMessage() for r in records), said.getvalue().strip()]:
        if text:
            warnings.warn(f"InMoose: {text[:500]}", UserWarning, stacklevel=4)


def moderated_coefficients(
    x: np.ndarray,
    design: np.ndarray,
    contrasts: Mapping[str, np.ndarray],
    genes: Sequence[str],
) -> dict[str, pd.DataFrame]:
    """limma's moderated t of each contrast (empirical-Bayes variances shared across genes),
    by InMoose's `lmFit`, `contrasts_fit` and `eBayes` on `design`, with its p-value and BH
    FDR: one table a contrast, indexed by gene (`t_moderated`, `p_moderated`,
    `fdr_moderated`).

    One convention with `coefficient_statistics`: a gene the design fits exactly (a
    constant one, one the covariates explain) has no test (NaN) and is left out before
    `lmFit` (it would shrink the variance prior the tested genes share: limma's answer is on
    the genes tested). What InMoose prints or logs is turned into a warning. Needs the
    `limma` extra (InMoose).
    """
    import pandas as pd

    try:
        from inmoose.limma import contrasts_fit, eBayes, lmFit
    except ImportError:  # pragma: no cover - depends on the installation
        raise ImportError(f"moderated statistics need InMoose: {extra_hint('limma')}") from None
    values = np.asarray(x, dtype=np.float64)
    design = np.asarray(design, dtype=np.float64)
    tested = ~exactly_fitted(values, design)
    names = list(contrasts)
    t = np.full((len(genes), len(names)), np.nan)
    p = np.full((len(genes), len(names)), np.nan)
    if tested.sum() >= 2:  # limma's prior needs genes to share
        expression = pd.DataFrame(values[:, tested].T, index=np.asarray(genes)[tested].tolist())
        matrix = np.column_stack([np.asarray(contrasts[n], dtype=np.float64) for n in names])
        picked = [int(np.flatnonzero(v)[0]) for v in matrix.T if _is_unit(v)]
        with _inmoose_said():
            fit = lmFit(expression, pd.DataFrame(design))
            if len(picked) == len(names):  # coefficients: eBayes on the fit, then their columns
                fit = eBayes(fit)
            else:  # limma's contrasts.fit, then eBayes (its prior is the same either way)
                weights = pd.DataFrame(matrix, index=fit.coefficients.columns)
                fit, picked = eBayes(contrasts_fit(fit, contrasts=weights)), list(range(len(names)))
        t[tested] = np.asarray(fit.t, dtype=np.float64).reshape(int(tested.sum()), -1)[:, picked]
        p[tested] = np.asarray(fit.p_value, dtype=np.float64).reshape(int(tested.sum()), -1)[
            :, picked
        ]
    index = pd.Index(list(genes), name="gene")
    return {
        name: pd.DataFrame(
            {"t_moderated": t[:, j], "p_moderated": p[:, j], "fdr_moderated": _bh(p[:, j])},
            index=index,
        )
        for j, name in enumerate(names)
    }

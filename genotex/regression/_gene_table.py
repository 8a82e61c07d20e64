"""A statistics table for every gene: marginal tests beside the penalized selection.

The Lasso selects a few genes jointly; an analyst also wants, for every gene,
how strongly it differs with the trait on its own. Two different questions,
kept apart in the table's columns:

- **marginal** (`effect`, `se`, `t`, `p_value`, `fdr`): per gene, the ordinary
  least-squares fit `gene ~ 1 + trait + covariates` (a two-group mean difference
  for a binary trait, the log fold change on log data, adjusted for the
  covariates), its t test on n - 2 - k degrees of freedom, and Benjamini-Hochberg
  FDR over the genes tested. Computed for all genes at once by Frisch-Waugh-Lovell
  (the covariates partialled out of the trait and of every gene), as limma's
  ordinary t is; checked against statsmodels' OLS gene by gene in the tests.
- **selection** (`coefficient`, `selected`, `rank`, `frequency`): the fitted
  model's coefficient (0 for a gene it did not select), its rank among the
  selected, and how often it is selected when the same Lasso (same α) is fitted
  on seeded random halves of the samples (stability selection).
"""

from __future__ import annotations

import contextlib
import io
import warnings
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

import numpy as np

from ..core import extra_hint
from ._folds import covariate_columns, design_of
from ._numerics import normalize
from ._paths import solve_path

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "MARGINAL_COLUMNS",
    "MODERATED_COLUMNS",
    "gene_table",
    "marginal_statistics",
    "moderated_statistics",
    "selection_frequency",
]

MARGINAL_COLUMNS = ("effect", "se", "t", "p_value", "fdr")
MODERATED_COLUMNS = ("t_moderated", "p_moderated", "fdr_moderated")


def _partialled(values: np.ndarray, c: np.ndarray) -> np.ndarray:
    """`values` (n x m) with the columns of `c` partialled out (least squares residuals)."""
    q, _ = np.linalg.qr(c)
    return values - q @ (q.T @ values)


def marginal_statistics(
    x: np.ndarray,
    y: np.ndarray,
    genes: Sequence[str],
    z: np.ndarray | None = None,
    *,
    absorbed: int = 0,
) -> pd.DataFrame:
    """Each gene's `gene ~ 1 + y + z` OLS: the trait's coefficient, its t test, BH FDR.

    Parameters
    ----------
    x
        Samples x genes, finite.
    y
        The trait, one value a sample.
    genes
        The column names of `x`.
    z
        Covariates (samples, or samples x k), finite; None for none.
    absorbed
        Degrees of freedom already spent on `x`, `y` and `z` (a paired design's group
        means taken out: the number of groups less one).

    Returns
    -------
    pandas.DataFrame
        Indexed by gene: `effect` (the trait's coefficient: for a 0/1 trait, the
        covariate-adjusted mean difference), `se`, `t`, `p_value` (two-sided, on
        n - 2 - k degrees of freedom) and `fdr` (Benjamini-Hochberg over the genes
        with a p-value). A gene constant after the covariates are taken out has
        NaN statistics.
    """
    import pandas as pd
    from scipy import stats

    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if x.ndim != 2 or y.ndim != 1 or x.shape[0] != y.shape[0] or x.shape[1] != len(genes):
        raise ValueError(f"x must be samples x genes ({len(y)} x {len(genes)}), not {x.shape}")
    n = len(y)
    c = covariate_columns(None if z is None else np.asarray(z, dtype=np.float64), n)
    _full_rank(c, y)
    df = n - c.shape[1] - 1 - absorbed
    if df < 1:
        raise ValueError(f"{n} samples leave no degree of freedom for {c.shape[1]} covariates")
    ry = _partialled(y.reshape(-1, 1), c)[:, 0]
    syy = float(ry @ ry)
    if syy == 0:
        raise ValueError("the trait is constant once the covariates are taken out")
    rx = _partialled(x, c)
    effect = (ry @ rx) / syy
    rss = np.einsum("ij,ij->j", rx, rx) - effect**2 * syy
    # a gene the covariates explain (a constant one) leaves rounding only: no test
    flat = np.einsum("ij,ij->j", rx, rx) <= 1e-24 * np.maximum(np.einsum("ij,ij->j", x, x), 1.0)
    effect = np.where(flat, np.nan, effect)
    rss = np.where(flat, np.nan, rss)
    with np.errstate(divide="ignore", invalid="ignore"):
        se = np.sqrt(np.clip(rss, 0.0, None) / df / syy)
        t = effect / se
    t = np.where(np.isfinite(t), t, np.nan)
    p = 2 * stats.t.sf(np.abs(t), df)
    fdr = np.full(len(p), np.nan)
    tested = np.isfinite(p)
    if tested.any():
        fdr[tested] = stats.false_discovery_control(p[tested], method="bh")
    frame = pd.DataFrame(
        {"effect": effect, "se": se, "t": t, "p_value": p, "fdr": fdr},
        index=pd.Index(list(genes), name="gene"),
    )
    return frame.where(np.isfinite(frame), np.nan)


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


def _full_rank(c: np.ndarray, y: np.ndarray) -> None:
    """Refuse a design `[1, covariates, trait]` that is not of full column rank, in one
    sentence: its estimates would be arbitrary, and its degrees of freedom wrong.
    """
    if np.linalg.matrix_rank(np.column_stack([c, y])) < c.shape[1] + 1:
        raise ValueError(
            "the design (intercept, covariates, trait) is not of full rank: a covariate is "
            "constant, repeats another, or restates the trait (GeneAnalysis leaves such "
            "covariates out, said in a DesignWarning)"
        )


def moderated_statistics(
    x: np.ndarray, y: np.ndarray, genes: Sequence[str], z: np.ndarray | None = None
) -> pd.DataFrame:
    """limma's moderated t of the trait (empirical-Bayes variances shared across genes), by
    InMoose's `lmFit` and `eBayes` on the design [1, y, z], with its p-value and BH FDR.

    One convention with `marginal_statistics`: a gene the covariates explain (a constant
    one) has no test (NaN), and is left out before `lmFit` and `eBayes` (it would shrink
    the variance prior the tested genes share: limma's answer is on the genes tested); the
    FDR is Benjamini-Hochberg over the tested genes only. What InMoose prints or logs is
    turned into a warning, never written to standard output or error.

    Needs the `limma` extra (InMoose). Indexed by gene:
    `t_moderated`, `p_moderated`, `fdr_moderated`.
    """
    import pandas as pd
    from scipy import stats

    try:
        from inmoose.limma import eBayes, lmFit
    except ImportError:  # pragma: no cover - depends on the installation
        raise ImportError(f"moderated statistics need InMoose: {extra_hint('limma')}") from None
    n = len(y)
    c = covariate_columns(None if z is None else np.asarray(z, dtype=np.float64), n)
    _full_rank(c, np.asarray(y, dtype=np.float64))
    design = pd.DataFrame(np.column_stack([c[:, :1], y, c[:, 1:]]))
    values = np.asarray(x, dtype=np.float64)
    # one convention with the ordinary test: a gene the covariates explain (a constant one)
    # has no test; and it is left out before limma, whose variance prior it would shrink
    rx = _partialled(values, c)
    flat = np.einsum("ij,ij->j", rx, rx) <= 1e-24 * np.maximum(
        np.einsum("ij,ij->j", values, values), 1.0
    )
    t = np.full(len(genes), np.nan)
    p = np.full(len(genes), np.nan)
    tested = ~flat
    if tested.sum() >= 2:  # limma's prior needs genes to share
        expression = pd.DataFrame(values[:, tested].T, index=np.asarray(genes)[tested].tolist())
        with _inmoose_said():
            fit = eBayes(lmFit(expression, design))
        t[tested] = np.asarray(fit.t, dtype=np.float64)[:, 1]
        p[tested] = np.asarray(fit.p_value, dtype=np.float64)[:, 1]
    fdr = np.full(len(p), np.nan)
    tested = np.isfinite(p)
    if tested.any():
        fdr[tested] = stats.false_discovery_control(p[tested], method="bh")
    return pd.DataFrame(
        {"t_moderated": t, "p_moderated": p, "fdr_moderated": fdr},
        index=pd.Index(list(genes), name="gene"),
    )


def selection_frequency(
    x: np.ndarray,
    y: np.ndarray,
    z: np.ndarray | None,
    *,
    alpha: float,
    lmm: bool = False,
    resamples: int = 50,
    seed: int = 0,
) -> np.ndarray:
    """How often each gene is selected by the Lasso at `alpha` on random halves of the samples.

    Each resample draws half of the samples without replacement (a seeded
    `numpy.random.Generator`), normalizes them and fits the standard mode's Lasso
    (covariates partialled out, rotated by the LMM when `lmm`) at the same α
    (Meinshausen and Bühlmann's stability selection). Returns one share (0-1) a gene.
    """
    if resamples < 1:
        raise ValueError("resamples must be at least 1")
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    rng = np.random.default_rng(seed)
    n = len(y)
    counts = np.zeros(x.shape[1])
    for _ in range(resamples):
        rows = np.sort(rng.choice(n, size=max(n // 2, 3), replace=False))
        xs, _ = normalize(x[rows], fortran=True)
        zs = None if z is None else normalize(np.asarray(z, dtype=np.float64)[rows])[0]
        design = design_of(xs, y[rows], covariate_columns(zs, len(rows)), lmm)
        alpha_max = float(np.abs(design.x.T @ design.y).max()) / len(rows)
        if alpha >= alpha_max:
            continue  # nothing enters at this α on this half
        path = solve_path(design.x, design.y, np.array([alpha_max, alpha]))
        counts += path.points[-1][0] != 0
    return counts / resamples


def gene_table(
    x: np.ndarray,
    y: np.ndarray,
    genes: Sequence[str],
    z: np.ndarray | None,
    selected: Sequence[tuple[str, float]],
    *,
    frequency_alpha: float | None = None,
    lmm: bool = False,
    resamples: int = 50,
    seed: int = 0,
    absorbed: int = 0,
    moderated: bool = False,
) -> pd.DataFrame:
    """Every gene's row: the model's `coefficient`, `selected`, `rank` (and `frequency` when
    `frequency_alpha` is the standard mode's α and `resamples` > 0), beside the marginal
    `effect`, `se`, `t`, `p_value` and `fdr`; the selected genes first, by rank, then by p.

    `selected` is the model's ranked (gene, coefficient) list (`RegressionResult.genes`);
    with `moderated`, limma's moderated t, p and FDR join (`moderated_statistics`).
    """
    table = marginal_statistics(x, y, genes, z, absorbed=absorbed)
    if moderated:
        if absorbed:
            raise ValueError("moderated statistics go without groups")
        table = table.join(moderated_statistics(x, y, genes, z))
    coefficients = dict(selected)
    table.insert(0, "coefficient", [coefficients.get(g, 0.0) for g in genes])
    table.insert(1, "selected", [g in coefficients for g in genes])
    ranks = {g: i + 1 for i, (g, _) in enumerate(selected)}
    table.insert(2, "rank", [ranks.get(g) for g in genes])
    table["rank"] = table["rank"].astype("Int64")
    if frequency_alpha is not None and resamples:
        frequency = selection_frequency(
            x, y, z, alpha=frequency_alpha, lmm=lmm, resamples=resamples, seed=seed
        )
        table.insert(3, "frequency", frequency)
    return table.sort_values(["rank", "p_value"], na_position="last", kind="stable")

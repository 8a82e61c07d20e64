"""A statistics table for every gene: marginal tests beside the penalized selection.

The Lasso selects a few genes jointly; an analyst also wants, for every gene,
how strongly it differs with the trait on its own. Two different questions,
kept apart in the table's columns:

- **marginal** (`effect`, `se`, `t`, `p_value`, `fdr`): per gene, the ordinary
  least-squares fit `gene ~ 1 + trait + covariates` (a two-group mean difference
  for a binary trait, the log fold change on log data, adjusted for the
  covariates), its t test on n - 2 - k degrees of freedom, and Benjamini-Hochberg
  FDR over the genes tested. Computed for all genes at once from one QR factorization of
  the design (`_linear`), as limma's `lmFit` fits them; any coefficient of the design, or
  contrast of coefficients, is tested the same way (`gene_tables`); checked against
  statsmodels' OLS gene by gene in the tests.
- **selection** (`coefficient`, `selected`, `rank`, `frequency`): the fitted
  model's coefficient (0 for a gene it did not select), its rank among the
  selected, and how often it is selected when the same Lasso (same α) is fitted
  on seeded random halves of the samples (stability selection).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

from ._folds import covariate_columns, design_of
from ._linear import coefficient_statistics, moderated_coefficients, unit_contrast, untested_reasons
from ._numerics import normalize
from ._paths import solve_path

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "MARGINAL_COLUMNS",
    "MODERATED_COLUMNS",
    "gene_table",
    "gene_tables",
    "marginal_statistics",
    "moderated_statistics",
    "selection_frequency",
]

MARGINAL_COLUMNS = ("effect", "se", "t", "p_value", "fdr")
MODERATED_COLUMNS = ("t_moderated", "p_moderated", "fdr_moderated")


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
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if x.ndim != 2 or y.ndim != 1 or x.shape[0] != y.shape[0] or x.shape[1] != len(genes):
        raise ValueError(f"x must be samples x genes ({len(y)} x {len(genes)}), not {x.shape}")
    design = _design(y, z)
    if design.shape[0] - design.shape[1] - absorbed < 1:
        raise ValueError(f"{len(y)} samples leave no degree of freedom for "
                         f"{design.shape[1] - 2} covariates")  # fmt: skip
    return coefficient_statistics(x, design, {"trait": unit_contrast(design.shape[1], 1)},
                                  genes, absorbed=absorbed)["trait"]  # fmt: skip


def _design(y: np.ndarray, z: np.ndarray | None, w: np.ndarray | None = None) -> np.ndarray:
    """The per-gene design `[1, trait, covariates, trait terms]`, checked to be of full rank."""
    n = len(y)
    c = covariate_columns(None if z is None else np.asarray(z, dtype=np.float64), n)
    _full_rank(c, y)
    design = np.column_stack([c[:, :1], y, c[:, 1:]])
    if w is not None:
        design = np.column_stack([design, np.asarray(w, dtype=np.float64).reshape(n, -1)])
        if np.linalg.matrix_rank(design) < design.shape[1]:
            raise ValueError("the trait's terms make the design rank-deficient")
    return design


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
    design = _design(np.asarray(y, dtype=np.float64), z)
    contrast = {"trait": unit_contrast(design.shape[1], 1)}
    return moderated_coefficients(x, design, contrast, genes)["trait"]


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
    `effect`, `se`, `t`, `p_value` and `fdr` of the trait; the selected genes first, by
    rank, then by p.

    `selected` is the model's ranked (gene, coefficient) list (`RegressionResult.genes`);
    with `moderated`, limma's moderated t, p and FDR join (`moderated_statistics`).
    """
    return gene_tables(
        x, y, genes, z, selected, frequency_alpha=frequency_alpha, lmm=lmm,
        resamples=resamples, seed=seed, absorbed=absorbed, moderated=moderated,
    )["trait"]  # fmt: skip


def gene_tables(  # noqa: PLR0913 - the design's parts and the selection's options
    x: np.ndarray,
    y: np.ndarray,
    genes: Sequence[str],
    z: np.ndarray | None,
    selected: Sequence[tuple[str, float]],
    *,
    w: np.ndarray | None = None,
    contrasts: Mapping[str, np.ndarray] | None = None,
    names: Sequence[str] = (),
    frequency_alpha: float | None = None,
    lmm: bool = False,
    resamples: int = 50,
    seed: int = 0,
    absorbed: int = 0,
    moderated: bool = False,
) -> dict[str, pd.DataFrame]:
    """`gene_table`'s rows for each contrast of the design `[1, y, z, w]` (`w`: the trait's
    terms, such as an interaction; `contrasts`: name -> weights over those columns, by
    default the trait's coefficient as "trait"). The selection's columns are the trait's
    model's in every table. With `names` (every design column's name), an `untested`
    column says why a gene has no test (`untested_reasons`). The trait's own table is
    ordered by the model's rank, then p; any other by p.
    """
    import pandas as pd

    design = _design(np.asarray(y, dtype=np.float64), z, w)
    if contrasts is None:
        contrasts = {"trait": unit_contrast(design.shape[1], 1)}
    tables = coefficient_statistics(x, design, contrasts, genes, absorbed=absorbed)
    if moderated:
        if absorbed:
            raise ValueError("moderated statistics go without groups")
        extra = moderated_coefficients(x, design, contrasts, genes)
        tables = {name: table.join(extra[name]) for name, table in tables.items()}
    coefficients = dict(selected)
    ranks = {g: i + 1 for i, (g, _) in enumerate(selected)}
    frequency = None
    if frequency_alpha is not None and resamples:
        frequency = selection_frequency(
            x, y, z, alpha=frequency_alpha, lmm=lmm, resamples=resamples, seed=seed
        )
    reasons = None
    if names:
        untested = np.isnan(next(iter(tables.values()))["t"].to_numpy())
        nuisance = [0, *range(2, 2 + (0 if z is None else np.reshape(z, (len(y), -1)).shape[1]))]
        reasons = untested_reasons(np.asarray(x, dtype=np.float64), design, nuisance, names,
                                   untested)  # fmt: skip
    done = {}
    for index, (name, table) in enumerate(tables.items()):
        table.insert(0, "coefficient", [coefficients.get(g, 0.0) for g in genes])
        table.insert(1, "selected", [g in coefficients for g in genes])
        table.insert(2, "rank", [ranks.get(g) for g in genes])
        table["rank"] = table["rank"].astype("Int64")
        if frequency is not None:
            table.insert(3, "frequency", frequency)
        if reasons is not None:
            table["untested"] = pd.Series(reasons, index=table.index, dtype="string")
        order = ["rank", "p_value"] if index == 0 and _is_trait(contrasts[name]) else ["p_value"]
        done[name] = table.sort_values(order, na_position="last", kind="stable")
    return done


def _is_trait(weights: np.ndarray) -> bool:
    """Whether a contrast is the trait's own coefficient (column 1 of the design)."""
    vector = np.asarray(weights, dtype=np.float64)
    return bool(vector[1] == 1 and np.count_nonzero(vector) == 1)

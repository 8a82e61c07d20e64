"""Error classes of a cohort's gene data: labels that are not symbols, and transformed values.

Labels are compared with the reference's gene symbols: an agent's label the
reference lacks is a probe/Entrez/Ensembl ID, a synonym or another case of a
reference symbol, or a spreadsheet date (`1-Mar` for MARCH1). Values are compared
on the genes and samples both tables hold.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

import numpy as np

from ...core import LabelledTable, TableError
from ._clinical_checks import correlation, dropped_samples
from ._model import DiagnosisFinding

__all__ = ["check_gene_labels", "check_gene_values", "check_gene_data"]

_ID = re.compile(
    r"^(\d+(_[a-z]+)*_at|ILMN_\d+|A_\d+_P\d+|\d+|ENS[GTP]\d+(\.\d+)?|[NX][MR]_\d+(\.\d+)?"
    r"|\d+_[A-Za-z]_\d+|cg\d+)$"
)
_MONTHS = "Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec"
_DATE = re.compile(rf"^(\d{{1,2}}-({_MONTHS})|({_MONTHS})-\d{{1,2}})$", re.IGNORECASE)
#: Cells equal to the reference's within this (the tables are written with 4 decimals or more).
_TOLERANCE = 1e-3

Make = Callable[..., DiagnosisFinding]


def _examples(labels: list[str], k: int = 3) -> str:
    return ", ".join(labels[:k]) + (", ..." if len(labels) > k else "")


def check_gene_labels(
    pred_genes: list[str],
    ref_genes: list[str],
    make: Make,
    *,
    synonyms: Mapping[str, str] | None = None,
) -> list[DiagnosisFinding]:
    """`gene_ids_not_symbols` and `symbols_not_normalized` of a table's gene labels."""
    reference = set(ref_genes)
    extra = [g for g in pred_genes if g not in reference]
    if not extra:
        return []
    found = []
    ids = [g for g in extra if _ID.match(g)]
    if len(ids) >= max(3, 0.2 * len(pred_genes)):
        shared = len(pred_genes) - len(extra)
        found.append(
            make(
                "gene_ids_not_symbols",
                f"{len(ids)} of {len(pred_genes)} gene labels are IDs, not symbols "
                f"({_examples(ids)}); {shared} of the reference's {len(reference)} symbols present",
                ids=len(ids),
                labels=len(pred_genes),
                shared=shared,
            )
        )
    upper = {g.upper(): g for g in ref_genes}
    synonyms = synonyms or {}
    pairs = []
    for label in extra:
        if _DATE.match(label):
            pairs.append(f"{label} (a date)")
            continue
        official = upper.get(label.upper()) or synonyms.get(label.upper())
        if official in reference and official != label:
            pairs.append(f"{label} -> {official}")
    if len(pairs) >= max(3, 0.01 * len(reference)):
        found.append(
            make(
                "symbols_not_normalized",
                f"{len(pairs)} gene labels are synonyms, another case or dates of reference "
                f"symbols ({_examples(pairs)})",
                labels=len(pairs),
            )
        )
    return found


def _finite_pairs(p: np.ndarray, r: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    keep = np.isfinite(p) & np.isfinite(r)
    return p[keep], r[keep]


def row_correlations(p: np.ndarray, r: np.ndarray) -> np.ndarray:
    """Pearson r of each row of `p` with the same row of `r`, over the cells finite in both
    (NaN for a row with fewer than 3 such cells or no variance), all rows at once.
    """
    both = np.isfinite(p) & np.isfinite(r)
    count = both.sum(axis=1)
    with np.errstate(all="ignore"):
        a, b = np.where(both, p, 0.0), np.where(both, r, 0.0)
        a = np.where(both, a - a.sum(axis=1, keepdims=True) / count[:, None], 0.0)
        b = np.where(both, b - b.sum(axis=1, keepdims=True) / count[:, None], 0.0)
        denominator = np.sqrt((a * a).sum(axis=1) * (b * b).sum(axis=1))
        out = (a * b).sum(axis=1) / denominator
    return np.where((count >= 3) & (denominator > 0), out, np.nan)


def _zscored(p: np.ndarray) -> bool:
    """Every gene (row) centred with unit variance, as z-scoring across samples leaves it."""
    with np.errstate(all="ignore"):
        means = np.nanmean(p, axis=1)
        sds = np.nanstd(p, axis=1, ddof=1)
    ok = np.isfinite(means) & np.isfinite(sds)
    if ok.sum() < 3:
        return False
    return bool(np.median(np.abs(means[ok])) < 0.05 and np.median(np.abs(sds[ok] - 1)) < 0.05)


def _transform(p: np.ndarray, r: np.ndarray) -> tuple[str, dict[str, float]] | None:
    """Which transformation of the reference's values the agent's are, if one explains them."""
    a, b = _finite_pairs(p.ravel(), r.ravel())
    if len(a) < 3:
        return None
    if _zscored(p) and not _zscored(r):
        return "z-scored per gene where the reference is not", {}
    with np.errstate(all="ignore"):
        if (a > 0).all() and correlation(np.log2(a), b) > 0.999:
            return "linear (2^x) where the reference is log2", {"r_log": correlation(np.log2(a), b)}
        if (b > 0).all() and correlation(a, np.log2(b)) > 0.999:
            return "log2 where the reference is linear", {"r_log": correlation(a, np.log2(b))}
        if (b > -1).all() and correlation(a, np.log2(b + 1)) > 0.999:
            return "log2(x + 1) where the reference is linear", {}
    r_all = correlation(a, b)
    if r_all > 0.99:
        slope, intercept = np.polyfit(b, a, 1)
        return (
            f"rescaled: {slope:.3g} x reference {intercept:+.3g}",
            {"slope": float(slope), "intercept": float(intercept)},
        )
    return None


def check_gene_values(
    pred: LabelledTable, ref: LabelledTable, make: Make, *, what: str = "gene values"
) -> list[DiagnosisFinding]:
    """`values_transformed` (or `data_differ`) of the genes and samples both tables hold."""
    present = set(pred.features.tolist())
    genes = [g for g in ref.features.tolist() if g in present]
    mine = set(pred.samples.tolist())
    samples = [s for s in ref.samples.tolist() if s in mine]
    if len(genes) < 3 or len(samples) < 3:
        return []
    try:
        p, r = pred.block(genes, samples), ref.block(genes, samples)
    except (KeyError, ValueError, TableError):
        return []
    a, b = _finite_pairs(p.ravel(), r.ravel())
    if not len(a) or np.mean(np.abs(a - b) <= _TOLERANCE * np.maximum(1, np.abs(b))) >= 0.99:
        return []
    found = _transform(p, r)
    shape = f"{len(genes)} genes x {len(samples)} samples"
    if found is not None:
        message, numbers = found
        return [make("values_transformed", f"{what} {message} ({shape})", **numbers)]
    rows = row_correlations(p, r)
    median = float(np.nanmedian(rows)) if np.isfinite(rows).any() else float("nan")
    return [
        make(
            "data_differ",
            f"{what} differ from the reference's: median per-gene r = {median:.2f} ({shape})",
            median_r=median,
            genes=len(genes),
        )
    ]


def check_gene_data(
    pred: LabelledTable,
    ref: LabelledTable,
    make: Make,
    *,
    synonyms: Mapping[str, str] | None = None,
) -> list[DiagnosisFinding]:
    """Labels, values and samples of a gene_data table against the reference's."""
    found = check_gene_labels(
        [str(g) for g in pred.features.tolist() if g is not None],
        [str(g) for g in ref.features.tolist() if g is not None],
        make,
        synonyms=synonyms,
    )
    found += check_gene_values(pred, ref, make)
    return found + dropped_samples(pred.samples, ref.samples, make)

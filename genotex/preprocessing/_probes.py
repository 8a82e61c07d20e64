"""Probe -> gene mapping (preprocessing.md § Probe → gene).

A probe annotated with k gene symbols gives 1/k of its value to each; a gene's
value is the sum over its probes, a missing value counting as 0 (as the
reference's NaN-skipping pandas `sum`). Rows come out sorted by symbol.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Literal, cast

import numpy as np
import pandas as pd
import scipy.sparse

from ..core import GenotexError

__all__ = [
    "GENE_AGGREGATIONS",
    "GeneAggregation",
    "GeneColumnChoice",
    "check_aggregation",
    "MappingError",
    "entrez_to_symbol",
    "choose_gene_column",
    "explain_gene_column",
    "extract_symbols",
    "map_probes",
    "probe_gene_pairs",
]

SYMBOL_PATTERN = re.compile(r"\b(?!NR_|XR_|LOC\d+|LINC\d+)(?:[A-Z][A-Z0-9-]{1,9}|C\d+orf\d+)\b")
_NOT_GENES = frozenset({"DNA", "RNA", "PCR", "EST", "CHR"})


class MappingError(GenotexError):
    """The platform annotation cannot map the expression table's probes."""


def extract_symbols(text: object) -> list[str]:
    """Likely human gene symbols in annotation text, first occurrence order, no duplicates.

    `RPS27A /// UBB` -> [RPS27A, UBB]; `NM_001 // TP53 // tumor protein` -> [TP53].
    """
    if not isinstance(text, str):
        return []
    found = [token for token in SYMBOL_PATTERN.findall(text) if token not in _NOT_GENES]
    return list(dict.fromkeys(found))


def probe_gene_pairs(
    annotation: pd.DataFrame, *, probe_column: str = "ID", gene_column: str
) -> pd.DataFrame:
    """The (ID, Gene) columns of a platform table, IDs as stripped text, empty IDs dropped."""
    for column in (probe_column, gene_column):
        if column not in annotation.columns:
            known = ", ".join(map(str, annotation.columns))
            raise MappingError(f"the platform table has no column {column!r} (columns: {known})")
    pairs = annotation[[probe_column, gene_column]].copy()
    pairs.columns = ["ID", "Gene"]
    pairs["ID"] = pairs["ID"].astype(str).str.strip()
    return pairs[pairs["ID"] != ""]


#: A column whose yielded symbols are mostly one token (FEA, from GPL96's `/FEA=mRNA`) cannot win.
MAX_DOMINANT_SHARE = 0.5
#: Within this share of the best count, a column whose header names gene symbols wins.
NEAR_TIE = 0.9
_SYMBOL_HEADER = re.compile(r"symbol|^genes?$|gene[ _]?assignment", re.IGNORECASE)


@dataclass(frozen=True)
class GeneColumnChoice:
    """Which annotation column `gene_column = "auto"` reads, and why.

    `scores` maps each column considered to (rows yielding a known symbol,
    share of those rows that yield its most frequent symbol).
    """

    column: str
    reason: str
    scores: dict[str, tuple[int, float]]


def _column_score(values: Iterable[object], known: set[str]) -> tuple[int, float]:
    hits = 0
    tokens: Counter[str] = Counter()
    for value in values:
        found = {s.upper() for s in extract_symbols(value)} & known
        if found:
            hits += 1
            tokens.update(found)
    return hits, (max(tokens.values()) / hits if hits else 0.0)


def explain_gene_column(
    annotation: pd.DataFrame,
    known_symbols: Iterable[str],
    *,
    probe_column: str = "ID",
    sample: int = 2000,
) -> GeneColumnChoice:
    """The annotation column whose cells most often yield symbols the synonym table knows.

    preprocessing.md's rule, made hard to fool: a column whose yielded symbols
    are mostly one repeated token cannot win (GPL96's "Target Description"
    holds `/FEA=mRNA` in every row, and FEA is a real symbol), and within
    `NEAR_TIE` of the best count a column whose header names gene symbols
    ("Gene Symbol", "gene_assignment") is preferred. Ties keep column order.
    """
    known = {s.upper() for s in known_symbols}
    rows = annotation.head(sample)
    scores = {
        str(c): _column_score(rows[c], known) for c in annotation.columns if c != probe_column
    }
    eligible = {c: s for c, s in scores.items() if s[0] > 0 and s[1] <= MAX_DOMINANT_SHARE}
    if not eligible:
        raise MappingError(
            "no annotation column holds varied known gene symbols: name one in the recipe "
            "(input.gene_column)"
        )
    best = max(eligible, key=lambda c: eligible[c][0])  # the first of equal counts
    hits = eligible[best][0]
    named = [c for c, s in eligible.items() if _SYMBOL_HEADER.search(c) and s[0] >= NEAR_TIE * hits]
    if named and named[0] != best:
        best = named[0]
        reason = f"its header names gene symbols, within {NEAR_TIE:.0%} of the most hits"
    else:
        reason = "the most rows yielding known symbols"
    dominated = sorted(c for c, s in scores.items() if s[0] and s[1] > MAX_DOMINANT_SHARE)
    if dominated:
        reason += f"; passed over (one repeated token): {', '.join(dominated)}"
    shown = f"{eligible[best][0]} of {len(rows)} sampled rows"
    return GeneColumnChoice(best, f"{shown}; {reason}", scores)


def choose_gene_column(
    annotation: pd.DataFrame,
    known_symbols: Iterable[str],
    *,
    probe_column: str = "ID",
    sample: int = 2000,
) -> str:
    """The column `explain_gene_column` chooses."""
    return explain_gene_column(
        annotation, known_symbols, probe_column=probe_column, sample=sample
    ).column


#: How probes' values become a gene's: the benchmark's "sum" (each probe's value split over
#: its k symbols, then summed per gene) or "mean" (the mean of the gene's probes' values).
GENE_AGGREGATIONS = ("sum", "mean")
GeneAggregation = Literal["sum", "mean"]


def check_aggregation(aggregation: str) -> GeneAggregation:
    """The rule, refused in one sentence unless it is "sum" or "mean"."""
    if aggregation not in GENE_AGGREGATIONS:
        raise ValueError(f"unknown gene aggregation {aggregation!r}; choose sum or mean")
    return cast(GeneAggregation, aggregation)


def map_probes(
    expression: pd.DataFrame, pairs: pd.DataFrame, *, aggregation: GeneAggregation = "sum"
) -> pd.DataFrame:
    """Genes x samples from probes x samples, by the gene-aggregation rule.

    `"sum"` (the benchmark's, and the default for parity with the published
    pipeline): each probe's value is split over its k symbols, then summed per
    gene, a missing value counting as 0; on a log-scale array a gene measured by
    several probes then has a sum of logs (GAPDH from 6 probes: ~72), unusable
    as a fold change. `"mean"`: a gene's value is the mean of its probes' values
    (a probe of k symbols counts fully for each), missing values left out, so
    the values keep the array's scale.
    """
    aggregation = check_aggregation(aggregation)
    pairs = pairs[pairs["ID"].isin(expression.index)]
    symbols = [extract_symbols(text) for text in pairs["Gene"]]
    rows, genes, weights = [], [], []
    position = pd.Index(expression.index).get_indexer(pairs["ID"])
    for probe_row, found in zip(position, symbols, strict=True):
        for gene in found:
            rows.append(probe_row)
            genes.append(gene)
            weights.append(1.0 / len(found) if aggregation == "sum" else 1.0)
    if not genes:
        raise MappingError("no probe of the expression table maps to a gene symbol")
    gene_index = pd.Index(sorted(set(genes)), dtype=object, name="Gene")
    matrix = scipy.sparse.csr_matrix(
        (weights, (gene_index.get_indexer(pd.Index(genes, dtype=object)), rows)),
        shape=(len(gene_index), len(expression)),
    )
    values = expression.to_numpy(dtype=np.float64)
    finite = np.isfinite(values)
    values = np.where(finite, values, 0.0)  # missing counts as 0 in a gene's sum
    genes_values = matrix @ values
    if aggregation == "mean":
        with np.errstate(invalid="ignore", divide="ignore"):
            genes_values = genes_values / (matrix @ finite.astype(np.float64))
    return pd.DataFrame(genes_values, index=gene_index, columns=expression.columns)


def entrez_to_symbol(pairs: pd.DataFrame, gene_ids: Mapping[str, str]) -> pd.DataFrame:
    """Replace Entrez GeneIDs in the Gene column by official symbols (unknown IDs dropped)."""
    mapped = (
        pairs["Gene"].astype(str).str.strip().str.replace(r"\.0$", "", regex=True).map(gene_ids)
    )
    out = pairs.assign(Gene=mapped)
    return out[out["Gene"].notna()]

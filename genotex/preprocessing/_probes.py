"""Probe -> gene mapping (preprocessing.md § Probe → gene).

A probe annotated with k gene symbols gives 1/k of its value to each; a gene's
value is the sum over its probes, a missing value counting as 0 (as the
reference's NaN-skipping pandas `sum`). Rows come out sorted by symbol.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

import numpy as np
import pandas as pd
import scipy.sparse

from ..core import GenotexError

__all__ = [
    "MappingError",
    "entrez_to_symbol",
    "choose_gene_column",
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


def choose_gene_column(
    annotation: pd.DataFrame,
    known_symbols: Iterable[str],
    *,
    probe_column: str = "ID",
    sample: int = 2000,
) -> str:
    """The annotation column whose values most often yield symbols known to the synonym table."""
    known = {s.upper() for s in known_symbols}
    best, best_hits = None, 0
    rows = annotation.head(sample)
    for column in annotation.columns:
        if column == probe_column:
            continue
        hits = sum(
            1 for value in rows[column] if any(s.upper() in known for s in extract_symbols(value))
        )
        if hits > best_hits:
            best, best_hits = column, hits
    if best is None:
        raise MappingError("no annotation column holds known gene symbols")
    return best


def map_probes(expression: pd.DataFrame, pairs: pd.DataFrame) -> pd.DataFrame:
    """Genes x samples: each probe's value split over its k symbols, summed per gene."""
    pairs = pairs[pairs["ID"].isin(expression.index)]
    symbols = [extract_symbols(text) for text in pairs["Gene"]]
    rows, genes, weights = [], [], []
    position = pd.Index(expression.index).get_indexer(pairs["ID"])
    for probe_row, found in zip(position, symbols, strict=True):
        for gene in found:
            rows.append(probe_row)
            genes.append(gene)
            weights.append(1.0 / len(found))
    if not genes:
        raise MappingError("no probe of the expression table maps to a gene symbol")
    gene_index = pd.Index(sorted(set(genes)), dtype=object, name="Gene")
    matrix = scipy.sparse.csr_matrix(
        (weights, (gene_index.get_indexer(genes), rows)), shape=(len(gene_index), len(expression))
    )
    values = np.nan_to_num(expression.to_numpy(dtype=np.float64), nan=0.0)
    return pd.DataFrame(matrix @ values, index=gene_index, columns=expression.columns)


def entrez_to_symbol(pairs: pd.DataFrame, gene_ids: Mapping[str, str]) -> pd.DataFrame:
    """Replace Entrez GeneIDs in the Gene column by official symbols (unknown IDs dropped)."""
    mapped = (
        pairs["Gene"].astype(str).str.strip().str.replace(r"\.0$", "", regex=True).map(gene_ids)
    )
    out = pairs.assign(Gene=mapped)
    return out[out["Gene"].notna()]

"""Gene symbol normalization: the synonym table and its use (preprocessing.md § Gene symbol normalization)."""

from __future__ import annotations

import gzip
import hashlib
import json
import os
from pathlib import Path
from typing import Mapping

import pandas as pd

from .atomic import write_text_atomic
from .errors import GenotexError

__all__ = [
    "SynonymError",
    "build_synonym_table",
    "cached_synonym_table",
    "gene_id_symbols",
    "load_synonyms",
    "normalize_gene_table",
]


class SynonymError(GenotexError):
    """A gene_info or synonym file that cannot be read."""


def _human_rows(gene_info: Path):
    """(GeneID, Symbol, Synonyms) of every tax_id 9606 row, in file order."""
    opener = gzip.open if gene_info.name.endswith(".gz") else open
    try:
        with opener(gene_info, "rt", encoding="utf-8") as handle:
            header = handle.readline().lstrip("#").rstrip("\n").split("\t")
            try:
                tax, gid, sym, syn = (header.index(c) for c in ("tax_id", "GeneID", "Symbol", "Synonyms"))
            except ValueError:
                raise SynonymError("is not an NCBI gene_info file (no tax_id/GeneID/Symbol/Synonyms header)",
                                   path=gene_info) from None  # fmt: skip
            for line in handle:
                cells = line.rstrip("\n").split("\t")
                if len(cells) > syn and cells[tax] == "9606":
                    yield cells[gid], cells[sym], cells[syn]
    except (OSError, EOFError, UnicodeDecodeError) as exc:
        raise SynonymError(f"cannot be read ({exc})", path=gene_info) from None


def build_synonym_table(gene_info: str | Path) -> dict[str, str]:
    """ALIAS_UPPER -> official symbol, as the published builder makes it, without its `-` key.

    One pass over the human rows in file order; later rows overwrite earlier
    ones, except that a key already mapped to itself (an all-upper-case
    official symbol) is never overwritten.
    """
    table: dict[str, str] = {}
    for _, symbol, synonyms in _human_rows(Path(gene_info)):
        for alias in [symbol, *synonyms.split("|")]:
            key = alias.upper()
            if table.get(key) == key:
                continue
            table[key] = symbol
    table.pop("-", None)
    return table


def gene_id_symbols(gene_info: str | Path) -> dict[str, str]:
    """Entrez GeneID (text) -> official symbol, for platforms keyed by GeneID."""
    return {gene_id: symbol for gene_id, symbol, _ in _human_rows(Path(gene_info))}


def _cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "genotex"


def cached_synonym_table(gene_info: str | Path, *, cache_dir: str | Path | None = None) -> dict[str, str]:
    """`build_synonym_table`, cached in the user cache folder by the gene_info file's sha256."""
    gene_info = Path(gene_info)
    digest = hashlib.sha256(gene_info.read_bytes()).hexdigest()[:16]
    cache = Path(cache_dir) if cache_dir is not None else _cache_dir()
    path = cache / f"gene_synonym-{digest}.json"
    if path.exists():
        try:
            return json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            pass  # a damaged cache entry is rebuilt
    table = build_synonym_table(gene_info)
    try:
        write_text_atomic(path, json.dumps(table, sort_keys=True))
    except OSError:
        pass  # a read-only cache folder only costs a rebuild next time
    return table


def load_synonyms(path: str | Path) -> dict[str, str]:
    """A published `gene_synonym.json` (or one we built), or a gene_info(.gz) file to build from."""
    path = Path(path)
    if "gene_info" in path.name:
        return cached_synonym_table(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise SynonymError(f"is not a readable synonym JSON ({exc.__class__.__name__})", path=path) from None
    if not isinstance(data, dict):
        raise SynonymError("is not a JSON object of ALIAS: Symbol", path=path)
    return {k: v for k, v in data.items() if k != "-"}


def normalize_gene_table(genes: pd.DataFrame, synonyms: Mapping[str, str]) -> pd.DataFrame:
    """Upper-case the symbols, map them, drop what does not map, average rows of the same symbol."""
    mapped = genes.index.astype(str).str.upper().map(lambda key: synonyms.get(key))
    kept = genes[pd.notna(mapped)]
    kept.index = pd.Index(mapped[pd.notna(mapped)], dtype=object, name=genes.index.name)
    return kept.groupby(level=0, sort=True).mean()

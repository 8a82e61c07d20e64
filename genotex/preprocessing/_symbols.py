"""Gene symbol normalization: the synonym table and its use (preprocessing.md § Gene symbol
normalization).
"""

from __future__ import annotations

import contextlib
import gzip
import json
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path

import pandas as pd

from ..core import GenotexError, cache_folder, file_sha256, read_json, write_text_atomic

__all__ = [
    "MyGeneSynonyms",
    "SynonymError",
    "build_synonym_table",
    "cached_synonym_table",
    "gene_id_symbols",
    "load_synonyms",
    "normalize_gene_table",
    "write_synonym_table",
]


class SynonymError(GenotexError):
    """A gene_info or synonym file that cannot be read."""


def _human_rows(gene_info: Path) -> Iterator[tuple[str, str, str]]:
    """(GeneID, Symbol, Synonyms) of every tax_id 9606 row, in file order."""
    opener = gzip.open if gene_info.name.endswith(".gz") else open
    try:
        with opener(gene_info, "rt", encoding="utf-8") as handle:
            header = handle.readline().lstrip("#").rstrip("\n").split("\t")
            try:
                tax, gid, sym, syn = (
                    header.index(c) for c in ("tax_id", "GeneID", "Symbol", "Synonyms")
                )
            except ValueError:
                raise SynonymError(
                    "is not an NCBI gene_info file (no tax_id/GeneID/Symbol/Synonyms header)",
                    path=gene_info,
                ) from None
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


def cached_synonym_table(
    gene_info: str | Path, *, cache_dir: str | Path | None = None
) -> dict[str, str]:
    """`build_synonym_table`, cached in the user cache folder by the gene_info file's sha256."""
    gene_info = Path(gene_info)
    digest = file_sha256(gene_info)[:16]
    cache = Path(cache_dir) if cache_dir is not None else cache_folder()
    path = cache / f"gene_synonym-{digest}.json"
    if path.exists():
        with contextlib.suppress(GenotexError):  # a damaged cache entry is rebuilt
            cached = read_json(path)
            if isinstance(cached, dict) and all(
                isinstance(k, str) and isinstance(v, str) for k, v in cached.items()
            ):
                return cached
    table = build_synonym_table(gene_info)
    try:
        write_text_atomic(path, json.dumps(table, sort_keys=True))
    except OSError:
        pass  # a read-only cache folder only costs a rebuild next time
    return table


def write_synonym_table(path: str | Path, table: Mapping[str, str]) -> None:
    """Write a synonym table as `gene_synonym.json` (sorted keys), atomically."""
    write_text_atomic(path, json.dumps(dict(table), indent=1, sort_keys=True) + "\n")


def load_synonyms(path: str | Path) -> Mapping[str, str]:
    """A published `gene_synonym.json` (or one we built), a gene_info(.gz) file to build from,
    or `mygene` for MyGene.info lookups (online).
    """
    if str(path) == "mygene":
        return MyGeneSynonyms()
    path = Path(path)
    if "gene_info" in path.name:
        return cached_synonym_table(path)
    data = read_json(path, SynonymError)
    if not isinstance(data, dict):
        raise SynonymError("is not a JSON object of ALIAS: Symbol", path=path)
    return {k: v for k, v in data.items() if k != "-"}


def normalize_gene_table(genes: pd.DataFrame, synonyms: Mapping[str, str]) -> pd.DataFrame:
    """Upper-case the symbols, map them, drop what does not map, average rows of the same symbol."""
    if hasattr(synonyms, "prefetch"):
        synonyms.prefetch(genes.index)
    mapped = genes.index.astype(str).str.upper().map(lambda key: synonyms.get(key))
    if len(genes) and not pd.notna(mapped).any():  # nothing maps: are the genes the columns?
        across = genes.columns.astype(str).str.upper().map(lambda key: synonyms.get(key))
        if pd.notna(across).any():
            raise GenotexError(
                f"no row label is a gene symbol but {int(pd.notna(across).sum())} column labels "
                "are: the table looks transposed (genes must be its rows)"
            )
    kept = genes[pd.notna(mapped)]
    kept.index = pd.Index(mapped[pd.notna(mapped)], dtype=object, name=genes.index.name)
    return kept.groupby(level=0, sort=True).mean()


class MyGeneSynonyms(Mapping[str, str]):
    """A synonym table answered by MyGene.info (online), filled for the symbols a table holds.

    `prefetch(symbols)` queries the unknown ones in batches (scopes symbol and
    alias, human); a symbol MyGene does not know maps to nothing.
    """

    def __init__(self, *, url: str | None = None, batch: int = 1000) -> None:
        self.url = url
        self.batch = batch
        self._table: dict[str, str] = {}
        self._asked: set[str] = set()

    def prefetch(self, symbols: Iterable[object]) -> None:
        """Look up every symbol not asked for yet, in batches (one request per batch)."""
        wanted = sorted({str(s).upper() for s in symbols} - self._asked)
        if not wanted:
            return
        try:
            import mygene
        except ImportError:  # pragma: no cover - depends on the installation
            raise SynonymError(
                "MyGene.info lookups need the mygene package: pip install mygene"
            ) from None
        client = mygene.MyGeneInfo()
        if self.url:
            client.url = self.url
        for start in range(0, len(wanted), self.batch):
            chunk = wanted[start : start + self.batch]
            try:
                hits = client.querymany(
                    chunk, scopes="symbol,alias", fields="symbol", species="human", verbose=False
                )
            except Exception as exc:  # noqa: BLE001 - requests or httpx errors, by client version
                raise SynonymError(
                    f"MyGene.info did not answer ({exc.__class__.__name__}: {exc})"
                ) from None
            for hit in hits:
                key = str(hit.get("query", "")).strip('"').upper()  # the client quotes its terms
                if not hit.get("notfound") and hit.get("symbol") and key not in self._table:
                    self._table[key] = hit["symbol"]
            self._asked.update(chunk)

    def __getitem__(self, key: str) -> str:
        return self._table[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._table)

    def __len__(self) -> int:
        return len(self._table)

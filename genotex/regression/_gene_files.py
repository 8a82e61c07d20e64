"""Every gene's statistics for answered problems, as CSV files beside their results.

`genotex regress --csv DIR` calls `write_gene_tables` after the run: for each
problem whose result file is there, its data are loaded again (the same cohorts,
chosen by the same rule) and `gene_table` is written to
`DIR/<trait>/gene_table_condition_<C>.csv`, one row a gene.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ..core import (
    MalformedResult,
    ProblemId,
    StandardMethod,
    TableCache,
    TaskInfo,
    csv_text,
    output_path,
    write_text_atomic,
)
from ._blas import one_blas_thread
from ._data import ProblemFailed, ProblemSkipped, load_problem
from ._gene_table import gene_table
from ._pipeline import result_path

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["gene_table_path", "write_gene_tables"]


def gene_table_csv(table: pd.DataFrame) -> str:
    """A gene table as CSV: its index (the genes) first, every text cell made inert for a
    spreadsheet (`safe_cell`), numbers unrounded.
    """
    headers = [table.index.name or "", *table.columns]
    rows = (
        [gene, *values]
        for gene, values in zip(table.index, table.itertuples(index=False), strict=True)
    )
    return csv_text(headers, (_plain(row) for row in rows))


def _plain(row: list[object]) -> list[object]:
    """Cells as Python values (NumPy scalars as numbers or bools)."""
    return [v.item() if hasattr(v, "item") else v for v in row]


def gene_table_path(csv_dir: str | Path, problem: ProblemId) -> Path:
    """`csv_dir/<trait>/gene_table_condition_<C>.csv`, checked to stay inside `csv_dir`."""
    return output_path(csv_dir, problem.trait, f"gene_table_condition_{problem.condition}.csv")


def write_gene_tables(
    problems: Sequence[ProblemId],
    data_dir: str | Path,
    task_info: TaskInfo,
    out_dir: str | Path,
    csv_dir: str | Path,
    *,
    resamples: int = 50,
    seed: int = 0,
    cache: TableCache | None = None,
) -> list[Path]:
    """Write the gene table of every problem of `problems` answered in `out_dir`.

    The selection frequency is computed for results of the standard mode (at
    their α; the reference mode's α is another scale), with `resamples` seeded
    halves; 0 leaves the column out. A problem without a complete result, or
    whose data can no longer be loaded, is passed over. Returns the files written.
    """
    from ..core import ResultFile

    written = []
    for problem in problems:
        try:
            result = ResultFile.read(result_path(out_dir, problem))
        except MalformedResult:
            continue
        if result.coefficients is None:
            continue
        method = result.method
        alpha = method.alpha if isinstance(method, StandardMethod) else None
        lmm = method is not None and method.model.startswith("LMM")
        try:
            with one_blas_thread(reference=False):
                data = load_problem(data_dir, problem, task_info, cache=cache)
                table = gene_table(
                    data.x, data.y, data.genes, data.z,
                    list(zip(result.genes, result.coefficients, strict=True)),
                    frequency_alpha=alpha, lmm=lmm, resamples=resamples, seed=seed,
                )  # fmt: skip
        except (ProblemSkipped, ProblemFailed):
            continue
        path = gene_table_path(csv_dir, problem)
        write_text_atomic(path, gene_table_csv(table))
        written.append(path)
    return written

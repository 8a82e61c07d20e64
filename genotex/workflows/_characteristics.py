"""A cohort's raw characteristics rows, encoded as numbers: the rows an agent's trait may come from.

`genotex diagnose` names `trait_row_wrong` when an agent's trait equals one of
them instead of the reference's trait. A row is usable when its values (after
the `key: ` prefix) are all numbers, or take exactly two values (encoded 0 and
1 in sorted order; the match is by |r|, so either polarity is found).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path

import numpy as np

from ..core import GenotexError
from ..preprocessing import find_matrix, read_series_matrix

__all__ = ["characteristics_rows", "encode_row"]

Rows = Mapping[str, Mapping[object, float]]


def _value(cell: object) -> str | None:
    if not isinstance(cell, str) or not cell.strip():
        return None
    return cell.split(":", 1)[1].strip() if ":" in cell else cell.strip()


def encode_row(cells: list[object]) -> list[float] | None:
    """The row as numbers (NaN where empty), or None when it is neither numeric nor two-valued."""
    values = [_value(c) for c in cells]
    present = [v for v in values if v is not None]
    if not present:
        return None
    try:
        return [np.nan if v is None else float(v) for v in values]
    except ValueError:
        pass
    levels = sorted(set(present))
    if len(levels) != 2:
        return None
    return [np.nan if v is None else float(levels.index(v)) for v in values]


def _label(cells: list[object], position: int) -> str:
    first = next((c for c in cells if isinstance(c, str) and ":" in c), None)
    return f"{position} ({first.split(':', 1)[0].strip()[:40]})" if first else str(position)


def characteristics_rows(input_root: Path | None) -> Callable[[str, str], Rows] | None:
    """(trait, cohort) -> {row label: {sample: value}} of the cohort's series matrix under
    `input_root/GEO/<trait>/<cohort>/`; empty where there is none (a TCGA cohort) or it
    cannot be read (the diagnosis then compares with the reference's rows only).
    """
    if input_root is None or not (input_root / "GEO").is_dir():
        return None

    def rows(trait: str, cohort: str) -> Rows:
        folder = input_root / "GEO" / trait / cohort
        if not folder.is_dir():
            return {}
        try:
            matrix = read_series_matrix(find_matrix(folder), expression=False)
        except (GenotexError, OSError, ValueError, UnicodeDecodeError):
            return {}
        out: dict[str, dict[object, float]] = {}
        for position, (_, row) in enumerate(matrix.characteristics.iterrows()):
            cells = row.tolist()
            encoded = encode_row(cells)
            if encoded is not None:
                out[_label(cells, position)] = dict(zip(row.index, encoded, strict=True))
        return out

    return rows

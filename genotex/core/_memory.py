"""Large arrays that are filled once, allocated without transparent huge pages.

NumPy advises the kernel to back every array of 4 MB or more with transparent
huge pages (`madvise(MADV_HUGEPAGE)`). Where the kernel then compacts memory
synchronously to find them (`/sys/kernel/mm/transparent_hugepage/defrag` set to
`madvise`, a common default), the first write to a large fresh array can stall
on compaction: reading the generated 50,000 x 500 series matrix took 1.26-1.50 s
with its table allocated here against 1.55-1.92 s with NumPy's default, in
alternating runs (docs/reference/performance.md). An array that is written once
and then read gains nothing from huge pages worth that stall.
"""

from __future__ import annotations

import threading
from typing import Literal

import numpy as np

__all__ = ["empty_without_huge_pages"]

#: The switch is process-wide: two threads switching it at once could leave it off.
_SWITCH = threading.Lock()


def _toggle() -> object:
    """NumPy's switch for its huge-page advice (private; None where this NumPy lacks it)."""
    core = getattr(np, "_core", None) or getattr(np, "core", None)
    return getattr(getattr(core, "multiarray", None), "_set_madvise_hugepage", None)


def empty_without_huge_pages(
    shape: int | tuple[int, ...], *, order: Literal["C", "F"] = "C"
) -> np.ndarray:
    """`np.empty(shape)` (float64), allocated without NumPy's huge-page advice.

    The advice is switched off for this allocation only and then restored, under a
    lock (it is process-wide: an allocation by another thread meanwhile only goes
    without it too, and two of these calls never interleave their switching).
    Where NumPy has no such switch this is `np.empty`.
    """
    toggle = _toggle()
    if not callable(toggle):
        return np.empty(shape, order=order)
    with _SWITCH:
        previous = toggle(False)
        try:
            return np.empty(shape, order=order)
        finally:
            toggle(previous)

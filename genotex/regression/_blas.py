"""One BLAS thread for every answer, however it is asked for.

The reference's LMM rotates X but not y, so its answer depends on the signs of
eigenvectors, which depend on how many threads the BLAS splits its work over.
`threadpoolctl` limits only the BLAS libraries that are loaded when the limit
is entered: NumPy's OpenBLAS is loaded with genotex, but SciPy's (which
`eigh` and scikit-learn use) is loaded lazily, and a library loaded inside the
limit keeps its own thread count. So a problem asked alone (SciPy first loaded
inside the limit) and the same problem asked after another one (SciPy already
loaded and limited) got different answers.

`one_blas_thread` therefore loads every library the regression uses *before*
entering the limit, and then checks that each BLAS reports one thread. The
standard mode loads only NumPy's up front: SciPy (~0.2 s to import) serves
only a batch effect's `eigh` and a solver fallback, which load it and limit it
again in a nested block (`one_blas_thread(libraries=...)`: a nested limit
restores, on leaving, what it found on entering). Where a BLAS cannot be
limited at run time (an unknown library), it warns once and names the call
that is always exact: `run_problems`, whose worker processes start with the
thread-count variables set (`single_thread_environment`).
"""

from __future__ import annotations

import contextlib
import importlib
import os
import warnings
from collections.abc import Iterator, Sequence

from threadpoolctl import threadpool_info, threadpool_limits

from ..core import temporary_environment

__all__ = ["BlasThreadWarning", "one_blas_thread", "single_thread_environment"]

#: The variables every BLAS and OpenMP runtime reads at start-up for its thread count.
THREAD_VARIABLES = (
    "OPENBLAS_NUM_THREADS",
    "OMP_NUM_THREADS",
    "MKL_NUM_THREADS",
    "BLIS_NUM_THREADS",
    "VECLIB_MAXIMUM_THREADS",
)

#: Modules whose import loads a BLAS or OpenMP library that the regression calls: the
#: standard mode's up front (NumPy's; SciPy only where used), the reference mode's.
STANDARD_LIBRARIES = ("numpy.linalg",)
REFERENCE_LIBRARIES = ("numpy.linalg", "scipy.linalg", "sklearn.linear_model")

_warned = False


class BlasThreadWarning(RuntimeWarning):
    """A BLAS library could not be limited to one thread: answers may depend on the machine."""


def _unlimited() -> list[str]:
    return [
        f"{info.get('internal_api')} ({os.path.basename(info.get('filepath', '?'))}, "
        f"{info.get('num_threads')} threads)"
        for info in threadpool_info()
        if info.get("user_api") == "blas" and info.get("num_threads") != 1
    ]


@contextlib.contextmanager
def one_blas_thread(
    *, reference: bool = True, libraries: Sequence[str] | None = None
) -> Iterator[None]:
    """Run the block with every BLAS and OpenMP library the regression uses on one thread.

    Parameters
    ----------
    reference
        Load SciPy and scikit-learn (the reference mode's models) before
        limiting; the standard mode loads NumPy's BLAS only.
    libraries
        The modules to load before limiting, instead of the mode's: a nested
        block that is about to call SciPy, say, passes ``("scipy.linalg",)``.

    Warns
    -----
    BlasThreadWarning
        Once per process, if a BLAS still reports more than one thread inside the limit.
    """
    global _warned
    default = REFERENCE_LIBRARIES if reference else STANDARD_LIBRARIES
    for module in default if libraries is None else libraries:
        importlib.import_module(module)
    with threadpool_limits(limits=1):
        left = _unlimited()
        if left and not _warned:
            _warned = True
            warnings.warn(
                "genotex could not limit "
                + ", ".join(left)
                + " to one thread in this process, so reference-mode LMM answers may differ "
                "from the reference's; genotex.regression.run_problems(..., jobs=2) answers "
                "in worker processes started on one thread",
                BlasThreadWarning,
                stacklevel=3,
            )
        yield


@contextlib.contextmanager
def single_thread_environment() -> Iterator[None]:
    """Set the thread-count variables to 1 for processes started inside the block.

    A process started with them set loads its BLAS on one thread from the start,
    which is what "the reference run on one BLAS thread" means.
    """
    with temporary_environment(dict.fromkeys(THREAD_VARIABLES, "1")):
        yield

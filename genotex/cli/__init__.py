"""The `genotex` command line: each command parses its options, calls one library function, renders.

Defaults relative to the current folder (`-r output`, `--preprocessed output/preprocess`,
`metadata/task_info.json`, ...) live here only; the library takes explicit paths.
"""

from . import (  # noqa: F401  (each module registers its commands)
    _cache,
    _diagnose,
    _doctor,
    _download,
    _evaluation,
    _harness,
    _preprocessing,
    _recipes,
    _regression,
    _saved_runs,
    _validate,
    _workflows,
)
from ._common import main

__all__ = ["main"]

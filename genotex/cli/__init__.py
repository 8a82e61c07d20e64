"""The `genotex` command line: each command parses its options, calls one library function, renders.

Defaults relative to the current folder (`-r output`, `--data output/preprocess`,
`metadata/task_info.json`, ...) live here only; the library takes explicit paths.
"""

from . import _evaluation, _harness, _preprocessing, _recipes, _regression, _workflows  # noqa: F401
from ._common import main

__all__ = ["main"]

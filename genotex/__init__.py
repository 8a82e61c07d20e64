"""genotex: the GenoTEX benchmark toolkit (preprocessing, regression, evaluation).

One call per stage, imported lazily so that `import genotex` stays light and
`genotex eval` never loads scikit-learn or SciPy:

- `preprocess_cohort(cohort_dir, trait, synonyms, out)`: one GEO (with its recipe)
  or TCGA cohort, the kind decided from the folder;
- `preprocess_tree(input_root, out, synonyms, ...)`: every cohort of an input tree;
- `answer_problem(data_dir, problem, task_info)`: one problem's ranked genes;
- `run_problems(problems, data_dir, task_info, out)`: many problems, written as they finish;
- `evaluate(pred, ref, task_info)`: the published metrics over two trees (and, with
  `diagnose=True`, where the points were lost);
- `write_raw_benchmark(folder)`: a small generated benchmark in the real formats, to try them on.

The stage packages `genotex.preprocessing`, `genotex.regression` and
`genotex.evaluation` hold the rest of the public API; `genotex.core` the
shared schemas, tables and metrics.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ._version import __version__

if TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs only
    from ._evaluate import evaluate
    from .core import (
        GenotexError,
        PredictionTreeError,
        ProblemId,
        ReferenceTreeError,
        TaskInfo,
        TaskInfoError,
        UnsafeNameError,
        load_task_info,
        normalize_trait_name,
    )
    from .evaluation import EvalOptions, EvalReport
    from .preprocessing import preprocess_cohort, preprocess_tree
    from .regression import answer_problem, run_problems
    from .workflows import write_raw_benchmark

#: Public name -> the package that defines it (imported on first use).
_LAZY = {
    "GenotexError": "core",
    "PredictionTreeError": "core",
    "ProblemId": "core",
    "ReferenceTreeError": "core",
    "TaskInfo": "core",
    "TaskInfoError": "core",
    "UnsafeNameError": "core",
    "load_task_info": "core",
    "normalize_trait_name": "core",
    "EvalOptions": "evaluation",
    "EvalReport": "evaluation",
    "evaluate": "_evaluate",
    "preprocess_cohort": "preprocessing",
    "preprocess_tree": "preprocessing",
    "answer_problem": "regression",
    "run_problems": "regression",
    "write_raw_benchmark": "workflows",
}

__all__ = ["__version__", *sorted(_LAZY)]


def __getattr__(name: str) -> Any:
    package = _LAZY.get(name)
    if package is None:
        raise AttributeError(f"module 'genotex' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{package}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))

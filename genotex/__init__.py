"""genotex: the GenoTEX benchmark toolkit (metrics, preprocessing, regression)."""

from __future__ import annotations

__version__ = "0.1.0"

from .errors import (  # noqa: E402
    GenotexError,
    PredictionTreeError,
    ReferenceTreeError,
    TaskInfoError,
    UnsafeNameError,
)
from .evaluate import EvalOptions, evaluate  # noqa: E402
from .layout import ProblemId, TaskInfo, load_task_info, normalize_trait_name  # noqa: E402
from .report import EvalReport  # noqa: E402

__all__ = [
    "__version__",
    "EvalOptions",
    "EvalReport",
    "GenotexError",
    "PredictionTreeError",
    "ProblemId",
    "ReferenceTreeError",
    "TaskInfo",
    "TaskInfoError",
    "UnsafeNameError",
    "evaluate",
    "load_task_info",
    "normalize_trait_name",
]

"""Running agents on GenoTEX with Inspect (genotex's `[harness]` extra).

The tasks `genotex/preprocess`, `genotex/analysis` and `genotex/e2e` (one per
evaluation of the paper), the model-free agents `genotex/gold` and
`genotex/baseline`, the `bwrap` sandbox (the default where it works), and
`export_run`, which scores a run from its log alone (each sample's output tree
is in the log) against a reference it checks file for file, and adds the run's
tokens, cost and time; `replay_run`, which runs a GenoAgent log again with its
logged replies as the model and says whether everything came out the same.
Nothing imports this package but the CLI and Inspect's entry point, so
`import genotex` never imports Inspect.
"""

from typing import TYPE_CHECKING

from ..core import lazy_names
from ._doctor import Check, Checkup, checkup
from .runs._bench import TASKS, Benchmark, SampleSpec
from .runs._export import RuntimeSummary, export_run
from .runs._scoring import pooled_average, score_output

if TYPE_CHECKING:  # imported when first used (`__getattr__`): GenoAgent's package needs Inspect
    from .solvers.genoagent._replay import ReplayLimitsError, ReplayResult, replay_run

__all__ = [
    "TASKS",
    "Benchmark",
    "Check",
    "Checkup",
    "ReplayLimitsError",
    "ReplayResult",
    "RuntimeSummary",
    "SampleSpec",
    "checkup",
    "export_run",
    "pooled_average",
    "replay_run",
    "score_output",
]


#: `replay_run`, `ReplayResult` and `ReplayLimitsError` imported when first used (PEP 562):
#: GenoAgent's package imports Inspect, which `genotex mcp` (in an image without it) must not
#: need.
__getattr__ = lazy_names(
    __name__,
    {
        "ReplayLimitsError": ".solvers.genoagent._replay",
        "ReplayResult": ".solvers.genoagent._replay",
        "replay_run": ".solvers.genoagent._replay",
    },
)

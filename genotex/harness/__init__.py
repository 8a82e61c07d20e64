"""Running agents on GenoTEX with Inspect (`pip install 'genotex[harness]'`).

The tasks `genotex/preprocess`, `genotex/analysis` and `genotex/e2e` (one per
evaluation of the paper), the model-free agents `genotex/gold` and
`genotex/baseline`, and `export_run`, which merges a log's samples into one
output tree, scores it with `genotex eval` and adds the run's tokens, cost and
time. Nothing imports this package but the CLI and Inspect's entry point, so
`import genotex` never imports Inspect.
"""

from ._bench import TASKS, Benchmark, SampleSpec
from ._export import RuntimeSummary, export_run
from ._scoring import pooled_average, score_output

__all__ = [
    "TASKS",
    "Benchmark",
    "RuntimeSummary",
    "SampleSpec",
    "export_run",
    "pooled_average",
    "score_output",
]

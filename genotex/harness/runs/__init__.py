"""A run of an agent on GenoTEX: its plan of samples, the Inspect tasks, what is captured
and scored, and the log turned into a genotex run folder.

The benchmark's plan of samples (`_bench`: what each sample is given, the reference
slice that scores it), the tasks `genotex/preprocess`, `genotex/analysis` and
`genotex/e2e` with their checked arguments (`_tasks`), the capture of each sample's output
tree into its store (`_capture`), the scorer and its scoring (`_scorer`, `_scoring`), a
log read as untrusted (`_logged`), epochs, runtime and prices, and `export_run`. It imports
the sandboxes (and genotex's core, stages and workflows); the solvers import it.
"""

from typing import TYPE_CHECKING

from ...core import lazy_names

if TYPE_CHECKING:  # the names as the type checkers see them; imported lazily below
    from ._bench import TASKS, Benchmark, SampleSpec, plan_samples
    from ._export import RuntimeSummary, export_run
    from ._scoring import pooled_average, score_output
    from ._tasks import analysis, e2e, preprocess

#: Where each public name lives, imported when first used.
_LAZY = {
    "Benchmark": "._bench",
    "RuntimeSummary": "._export",
    "SampleSpec": "._bench",
    "TASKS": "._bench",
    "analysis": "._tasks",
    "e2e": "._tasks",
    "export_run": "._export",
    "plan_samples": "._bench",
    "pooled_average": "._scoring",
    "preprocess": "._tasks",
    "score_output": "._scoring",
}

__all__ = [
    "TASKS",
    "analysis",
    "e2e",
    "export_run",
    "plan_samples",
    "pooled_average",
    "preprocess",
    "score_output",
    "Benchmark",
    "RuntimeSummary",
    "SampleSpec",
]


#: Each public name imported when first used (PEP 562): importing one module of this room
#: (the MCP server's, in an image without Inspect) never imports the others.
__getattr__ = lazy_names(__name__, _LAZY)

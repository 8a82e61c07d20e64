"""Workflows that chain the stages: the demo, the LLM-free baseline and the generators.

`run_demo` generates a small raw benchmark (`write_raw_benchmark`) and runs
preprocess -> regress -> eval on it; `run_baseline` proposes every GEO recipe
and runs preprocess -> regress on any benchmark root; `write_example` generates a reference
tree and an imperfect prediction for evaluation (the benchmarks use it at
benchmark size). They sit between the CLI and the stages: a stage never
imports a workflow.
"""

from ._baseline import BaselineRun, propose_tree, run_baseline
from ._demo import DemoRun, EvalDemo, run_demo, run_eval_demo
from ._diagnose import diagnose
from ._examples import DEMO_SPEC, Example, SynthSpec, write_example
from ._faults import FAULTS, PlantedFault, make_faulty_prediction
from ._raw_benchmark import KeyFit, RawBenchmark, write_raw_benchmark
from ._realistic import write_realistic_benchmark

__all__ = [
    "DEMO_SPEC",
    "FAULTS",
    "PlantedFault",
    "make_faulty_prediction",
    "BaselineRun",
    "DemoRun",
    "EvalDemo",
    "Example",
    "KeyFit",
    "RawBenchmark",
    "SynthSpec",
    "diagnose",
    "propose_tree",
    "run_baseline",
    "run_demo",
    "run_eval_demo",
    "write_example",
    "write_raw_benchmark",
    "write_realistic_benchmark",
]

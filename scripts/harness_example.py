"""The README's worked example of the harness, and the harness's own overhead per sample.

Generates the demo benchmark, runs `genotex/e2e` with the gold agent, the
baseline agent and a scripted agent (Inspect's mockllm: it writes a wrong
answer for every problem of its trait), exports each run and prints the
leaderboard with the runtime columns. The gold run's time per sample is the
harness's overhead (sandbox set-up, copying inputs in, capturing the output into
the log, scoring): its agent does nothing but copy files. Also printed: the
scorer's share of it (capture and scoring), the log's size per sample, and the
export's time. Offline; needs `pip install 'genotex[harness]'`.

    python scripts/harness_example.py [--workdir DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("INSPECT_DISABLE_MODEL_API", "1")

from inspect_ai import eval as inspect_eval  # noqa: E402
from inspect_ai.model import ModelOutput, ModelUsage, get_model  # noqa: E402

from genotex.harness import Benchmark, export_run  # noqa: E402
from genotex.harness.runs._tasks import e2e  # noqa: E402
from genotex.harness.solvers import baseline, gold  # noqa: E402
from genotex.workflows import write_raw_benchmark  # noqa: E402


def _scripted(bench: Path) -> object:
    """An agent that writes the same two genes as every answer, then submits (usage set)."""
    wrong = json.dumps(
        {
            "significant_genes": {"Variable": ["KRT16", "GATA8"], "Coefficient": [1.0, 0.5]},
            "cv_performance": {"prediction": {"accuracy": 50.0, "f1": 50.0}},
        }
    )
    outputs = []
    for spec in Benchmark(bench).samples("e2e"):
        folder = f"output/regress/{spec.trait}"
        files = " ".join(
            f"{folder}/significant_genes_condition_{p.condition or 'None'}.json"
            for p in spec.problems
        )
        command = f"mkdir -p {folder} && for f in {files}; do echo '{wrong}' > $f; done"
        outputs.append(ModelOutput.for_tool_call("mockllm/model", "bash", {"command": command}))
        outputs.append(ModelOutput.for_tool_call("mockllm/model", "submit", {"answer": "done"}))
    for output in outputs:
        output.usage = ModelUsage(input_tokens=12_000, output_tokens=800, total_tokens=12_800)
    return get_model("mockllm/model", custom_outputs=outputs)


def _scoring_seconds(sample: object) -> float:
    """The time between the scorers' span opening and closing in a sample's events."""
    begin = end = None
    for event in getattr(sample, "events", []):
        if getattr(event, "event", "") == "span_begin" and getattr(event, "name", "") == "scorers":
            begin = event.timestamp
            span = event.id
        elif getattr(event, "event", "") == "span_end" and begin and event.id == span:
            end = event.timestamp
    return (end - begin).total_seconds() if begin and end else float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workdir", type=Path, default=None)
    args = parser.parse_args()
    work = args.workdir or Path(tempfile.mkdtemp(prefix="genotex-harness-"))
    bench = work / "bench"
    if not bench.exists():
        write_raw_benchmark(bench, recipes=False)
    runs = {}
    for name, solver, model in (
        ("gold", gold(), "none"),
        ("baseline", baseline(), "none"),
        ("scripted", None, _scripted(bench)),
    ):
        started = time.perf_counter()
        log = inspect_eval(
            e2e(root=str(bench)),
            model=model,
            solver=solver,
            log_dir=str(work / "logs" / name),
            display="none",
            # mockllm hands its scripted outputs out in order: one sample at a time, so that each
            # sample gets the commands written for its trait
            max_samples=1 if name == "scripted" else None,
        )[0]
        seconds = time.perf_counter() - started
        per_sample = [s.total_time for s in log.samples if s.total_time is not None]
        scoring = [_scoring_seconds(s) for s in log.samples]
        size = Path(log.location).stat().st_size / len(log.samples)
        started = time.perf_counter()
        runs[name] = export_run(
            log.location,
            work / "runs" / name,
            reference=bench / "reference" / "output",
            price_in=3.0,
            price_out=15.0,
        )
        exported = time.perf_counter() - started
        print(
            f"{name}: {len(log.samples)} samples in {seconds:.1f} s; median "
            f"{statistics.median(per_sample):.2f} s per sample, of which scoring (capture into "
            f"the log, genotex's evaluation) {statistics.median(scoring):.2f} s; log "
            f"{size / 1024:.0f} KB per sample; export {exported:.1f} s",
            file=sys.stderr,
        )
    board = subprocess.run(
        [sys.executable, "-m", "genotex", "leaderboard", *map(str, runs.values())],
        capture_output=True,
        text=True,
        check=True,
    )
    print(board.stdout)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""What `genotex diagnose` costs beside `genotex eval`, on the 16-trait generated tree.

Each run is a separate process (imports included), `genotex eval` and `genotex diagnose`
alternating, one worker each; the medians and their ratio are printed. The tree is
`bench_eval.py`'s `sixteen` preset (16 traits, 48 cohorts of 30-180 samples x 3,000
genes), written once into --workdir.

    python scripts/bench_diagnose.py --repeat 3
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _measure import timed  # noqa: E402
from bench_eval import PRESETS  # noqa: E402

from genotex.workflows import write_example  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/genotex-bench-diagnose"))
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--mode", choices=["standard", "reference"], default="standard")
    args = parser.parse_args()
    spec, _ = PRESETS["sixteen"]
    tree = args.workdir / "sixteen"
    if not (tree / "ref" / "output").exists():
        write_example(tree, spec, seed=1)
    example = {"pred": tree / "pred" / "output", "ref": tree / "ref" / "output"}
    task_info = tree / "ref" / "metadata" / "task_info.json"
    common = ["-p", str(example["pred"]), "-r", str(example["ref"]), "--task-info", str(task_info)]
    commands = {
        "eval": [sys.executable, "-m", "genotex", "eval", *common, "--no-progress"],
        "diagnose": [sys.executable, "-m", "genotex", "diagnose", *common, "--no-progress",
                     "--mode", args.mode, "--json", str(args.workdir / "diagnosis.json")],
    }  # fmt: skip
    runs: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
    for _ in range(args.repeat):
        for name, command in commands.items():
            runs[name].append(timed(command))
    medians = {n: statistics.median(s for s, _ in r) for n, r in runs.items()}
    saved = json.loads((args.workdir / "diagnosis.json").read_text())
    print(json.dumps({
        "seconds": runs, "median_seconds": medians,
        "ratio": medians["diagnose"] / medians["eval"],
        "peak_mb": {n: max(m for _, m in r) for n, r in runs.items()},
        "problems": len(saved["problems"]), "re_analyses": saved["run"]["re_analyses"],
        "mode": args.mode,
    }, indent=1))  # fmt: skip


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Benchmark `genotex eval` on generated benchmark-shaped trees: seconds and peak memory.

Each run is a separate `genotex eval` process, so start-up and imports are
included, as in the reference timings it is compared with. Trees are made by
`genotex.workflows.write_example` (the generator behind `genotex demo`) and kept in --workdir,
so that repeated runs do not regenerate them.

    python scripts/bench_eval.py                       # the two reference-anchored sizes
    python scripts/bench_eval.py --preset benchmark --repeat 5 --jobs 2
    python scripts/bench_eval.py --preset streaming    # a larger tree: memory must not grow

Reference anchors (the published evaluator, one core of this machine kind):
`benchmark` 693 s (4 traits, 15 reference CSVs of 170-315 samples x 18,000
genes); `sixteen` 62 s (16 traits, cohorts of 30-180 samples x 3,000 genes).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from dataclasses import asdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _measure import timed  # noqa: E402

from genotex.workflows import SynthSpec, write_example  # noqa: E402

PRESETS = {
    # 4 traits, 5 usable cohorts -> 15 reference CSVs of 170-315 x 18,000, as the 693 s anchor
    "benchmark": (
        SynthSpec(
            n_traits=4,
            n_cohorts=5,
            samples=(170, 315),
            n_genes=18_000,
            n_related=200,
            unusable_share=0.0,
            missing_share=0.0,
        ),
        693.0,
    ),
    # 16 traits, 3 cohorts each of 30-180 x 3,000, as the 62 s anchor (its cohort count is not
    # known)
    "sixteen": (
        SynthSpec(
            n_traits=16,
            n_cohorts=48,
            samples=(30, 180),
            n_genes=3_000,
            n_related=100,
            unusable_share=0.1,
            missing_share=0.02,
        ),
        62.0,
    ),
    # 2.4x the benchmark preset's tables: peak memory must stay that of one table pair
    "streaming": (
        SynthSpec(
            n_traits=6,
            n_cohorts=12,
            samples=(170, 315),
            n_genes=18_000,
            n_related=200,
            unusable_share=0.0,
            missing_share=0.0,
        ),
        None,
    ),
}


def _tree(workdir: Path, name: str, spec: SynthSpec, seed: int) -> Path:
    folder = workdir / f"{name}-seed{seed}"
    stamp = folder / "spec.json"
    wanted = json.dumps({"spec": asdict(spec), "seed": seed}, sort_keys=True)
    if not (stamp.exists() and stamp.read_text() == wanted):
        started = time.perf_counter()
        print(f"generating {name} tree in {folder} ...", file=sys.stderr)
        write_example(folder, spec, seed=seed)
        stamp.write_text(wanted)
        print(f"  generated in {time.perf_counter() - started:.0f} s", file=sys.stderr)
    return folder


def _run_once(folder: Path, jobs: int) -> tuple[float, float]:
    """Wall seconds and peak RSS (MB) of one `genotex eval` process."""
    command = [
        sys.executable,
        "-m",
        "genotex",
        "eval",
        "-p",
        str(folder / "pred" / "output"),
        "-r",
        str(folder / "ref" / "output"),
        "--jobs",
        str(jobs),
        "--no-progress",
        "--json",
        str(folder / "bench_report.json"),
    ]
    return timed(command)


def _counts(folder: Path) -> tuple[int, float]:
    ref = folder / "ref" / "output" / "preprocess"
    csvs = list(ref.rglob("*.csv"))
    return len(csvs), sum(p.stat().st_size for p in csvs) / 1e6


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--preset",
        action="append",
        choices=sorted(PRESETS),
        help="tree size (repeatable); default: benchmark and sixteen",
    )
    parser.add_argument(
        "--repeat", type=int, default=3, help="runs per tree; the median is reported"
    )
    parser.add_argument("--jobs", type=int, default=1, help="genotex eval --jobs")
    parser.add_argument("--seed", type=int, default=2024)
    parser.add_argument(
        "--workdir", type=Path, default=Path(os.environ.get("TMPDIR", "/tmp")) / "genotex-bench"
    )
    args = parser.parse_args()
    rows = []
    for name in args.preset or ["benchmark", "sixteen"]:
        spec, reference_seconds = PRESETS[name]
        folder = _tree(args.workdir, name, spec, args.seed)
        runs = [_run_once(folder, args.jobs) for _ in range(args.repeat)]
        seconds = statistics.median(r[0] for r in runs)
        peak = max(r[1] for r in runs)
        n_csv, megabytes = _counts(folder)
        ratio = f"{reference_seconds / seconds:.0f}x" if reference_seconds else "-"
        rows.append(
            (
                name,
                n_csv,
                megabytes,
                seconds,
                seconds / n_csv,
                peak,
                reference_seconds,
                ratio,
                [round(r[0], 2) for r in runs],
            )
        )
    print(f"genotex eval, --jobs {args.jobs}, median of {args.repeat} runs (start-up included)")
    headers = ["tree", "reference CSVs", "MB", "seconds", "s per file pair", "peak RSS MB"]
    print("| " + " | ".join([*headers, "reference s", "speed-up", "runs"]) + " |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---|")
    for name, n_csv, mb, seconds, per_pair, peak, ref_s, ratio, runs in rows:
        ref_text = f"{ref_s:.0f}" if ref_s else "-"
        cells = [name, n_csv, f"{mb:.0f}", f"{seconds:.2f}", f"{per_pair:.2f}", f"{peak:.0f}"]
        print("| " + " | ".join(map(str, [*cells, ref_text, ratio, runs])) + " |")


if __name__ == "__main__":
    main()

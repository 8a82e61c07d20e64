#!/usr/bin/env python3
"""Precision and recall of `genotex diagnose` on planted faults, on generated benchmarks.

For each seed, a generated benchmark (`write_raw_benchmark`) is the reference;
copies of it get faults planted by `make_faulty_prediction`: every cohort fault
alone on a GEO cohort and on the TCGA one, an analysis fault, and three seeded
combinations of four faults on different cohorts; an untouched copy is the gold.
A planted fault is found when a finding has its class at its cohort (or, for an
analysis fault, at its problem). Any other finding of a data class (not the
`selection`, `floor` or `analysis` findings that follow from a fault) is false.
The thresholds were set on seed 7 (the test suite's); the default seeds are others.

    python scripts/score_diagnose.py --seeds 11 12 13
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from genotex.workflows import (  # noqa: E402
    FAULTS,
    PlantedFault,
    diagnose,
    make_faulty_prediction,
    write_raw_benchmark,
)

PLACES = [("Asthma", "GSE100001"), ("Asthma", "GSE100002"), ("Obesity", "GSE100003"),
          ("Psoriasis", "GSE100005"), ("Psoriasis", "Xena")]  # fmt: skip
CONSEQUENCES = {"selection", "floor", "analysis"}


def _cases(rng: np.random.Generator) -> list[list[PlantedFault]]:
    cohort_faults = [f for f in FAULTS if f != "analysis"]
    cases = [[]]  # the gold copy
    cases += [[PlantedFault(f, t, c)] for f in cohort_faults for t, c in (PLACES[0], PLACES[-1])]
    cases.append([PlantedFault("analysis", "Obesity", problem="Obesity|None")])
    for _ in range(3):
        places = rng.choice(len(PLACES), 4, replace=False)
        faults = rng.choice(len(cohort_faults), 4, replace=False)
        cases.append(
            [
                PlantedFault(cohort_faults[f], *PLACES[p])
                for f, p in zip(faults, places, strict=True)
            ]
        )
    return cases


def _score(planted: list[PlantedFault], diagnosis) -> tuple[int, int, int]:
    asked = {p.problem for p in planted}
    found = {(f.error_class, f.cohort or f.problem) for f in diagnosis.findings
             if f.error_class not in CONSEQUENCES or f.problem in asked}  # fmt: skip
    wanted = {(p.error_class, p.cohort or p.problem) for p in planted}
    data = {x for x in found if x[0] not in CONSEQUENCES}
    tp = len(wanted & found)
    return tp, len(data - wanted), len(wanted - found)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[11, 12, 13])
    args = parser.parse_args()
    totals = np.zeros(3, dtype=int)
    for seed in args.seeds:
        with tempfile.TemporaryDirectory() as scratch:
            bench = write_raw_benchmark(Path(scratch) / "bench", seed=seed, recipes=False)
            for k, planted in enumerate(_cases(np.random.default_rng(seed))):
                out = make_faulty_prediction(
                    bench.reference_output, Path(scratch) / f"case{k}", planted, seed=seed
                )
                mode = (
                    "reference" if any(p.error_class == "analysis" for p in planted) else "standard"
                )
                counts = _score(
                    planted, diagnose(out, bench.reference_output, bench.task_info, mode=mode)
                )
                totals += counts
                if counts[1] or counts[2]:
                    print(f"seed {seed} case {k} {planted}: tp/fp/fn {counts}")
    tp, fp, fn = (int(x) for x in totals)
    print(f"seeds {args.seeds}: planted {tp + fn}, found {tp}, false findings {fp}; "
          f"precision {tp / max(1, tp + fp):.3f}, recall {tp / max(1, tp + fn):.3f}")  # fmt: skip


if __name__ == "__main__":
    main()

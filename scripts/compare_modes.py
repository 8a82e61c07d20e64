#!/usr/bin/env python3
"""Both regression modes side by side: agreement, α, convergence, time, and scores against truth.

    python scripts/compare_modes.py                  # the shared fixtures and generated problems
    python scripts/compare_modes.py --generated 0        # the fixtures only
    python scripts/compare_modes.py --big                # also one 250 x 18,500 generated problem
    python scripts/compare_modes.py --no-fixtures --generated 0 --big --repeat 5   # its speed

Each problem is answered by `genotex regress --mode reference` and by
`--mode standard` (default `--select-by prediction`, also `precision`), each as
a separate process (start-up and reading included; one BLAS thread). Reported
per problem: the gene-set Jaccard and the Spearman correlation of |coefficient|
ranks (over the union; a gene absent from a list ranks last) between the
modes, each mode's α, iterations and final gap, seconds, and precision /
recall / F1 / approximate AUROC of each against the truth: the fixture's
expected answer (made by the reference pipeline) or, for generated problems,
the planted genes.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from genotex.core import CohortInfo, CohortRecord, RunStatus, TaskInfo  # noqa: E402
from genotex.evaluation import score_gene_list  # noqa: E402

SHARED = Path(os.environ.get("GENOTEX_SHARED", Path(__file__).resolve().parents[2] / "shared"))
MODES = (("reference", None), ("standard", "prediction"), ("standard", "precision"))


def generated_case(root: Path, n: int, p: int, seed: int) -> tuple[Path, dict[str, list[str]]]:
    """A preprocess tree of one cohort with 20 planted genes, and its truth (by |effect|)."""
    import pandas as pd

    from genotex.core import write_table

    rng = np.random.default_rng(seed)
    genes = [f"GENE{i:05d}" for i in range(p)]
    factors = rng.normal(size=(n, 25))
    x = factors @ rng.normal(size=(25, p)) * 0.15 + rng.normal(size=(n, p)) + 6.0
    planted = rng.choice(p, 20, replace=False)
    effects = rng.choice([-1, 1], 20) * rng.uniform(0.4, 1.0, 20)
    score = (x[:, planted] - x[:, planted].mean(0)) @ effects
    y = (score + rng.normal(scale=0.5 * score.std(), size=n) > 0).astype(float)
    trait = f"Generated_{seed}"
    table = pd.DataFrame(x, columns=genes)
    table.insert(0, trait, y)
    write_table(root / "output/preprocess" / trait / "GSE1.csv", table)
    record = CohortRecord.decide("GSE1", gene=True, trait=True, biased=False, size=n)
    CohortInfo.update(root / "output/preprocess" / trait / "cohort_info.json", record)
    truth = [genes[i] for i in planted[np.argsort(-np.abs(effects))]]
    known = truth[:10] + [genes[i] for i in rng.choice(p, 30, replace=False)]
    TaskInfo.from_dict({trait: {"related_genes": known, "conditions": []}}).write(
        root / "metadata/task_info.json"
    )
    return root, {f"{trait}|None": truth}


def _run(
    case: Path, out: Path, key: str, mode: str, select_by: str | None
) -> tuple[float, dict | None]:
    trait, condition = key.split("|")
    command = [
        sys.executable,
        "-m",
        "genotex",
        "regress",
        "--data",
        str(case / "output/preprocess"),
        "--task-info",
        str(case / "metadata/task_info.json"),
        "--out",
        str(out),
        "--force",
        "--trait",
        trait,
        "--condition",
        condition,
        "--mode",
        mode,
    ]
    if select_by:
        command += ["--select-by", select_by]
    started = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    seconds = time.perf_counter() - started
    path = out / trait / f"significant_genes_condition_{condition}.json"
    return seconds, json.loads(path.read_text()) if path.exists() else None


def _ranks(result: dict | None) -> dict[str, float]:
    if result is None:
        return {}
    genes = result["significant_genes"]
    return dict(zip(genes["Variable"], genes.get("Absolute Coefficient", []), strict=False))


def _agreement(a: dict | None, b: dict | None) -> tuple[float, float]:
    from scipy.stats import spearmanr

    ra, rb = _ranks(a), _ranks(b)
    union = sorted(set(ra) | set(rb))
    if not union:
        return 1.0, float("nan")
    jaccard = len(set(ra) & set(rb)) / len(union)
    if len(union) < 3:
        return jaccard, float("nan")
    a_ranks, b_ranks = [ra.get(g, 0.0) for g in union], [rb.get(g, 0.0) for g in union]
    if len(set(a_ranks)) < 2 or len(set(b_ranks)) < 2:
        return jaccard, float("nan")  # a constant side: the correlation is undefined
    return jaccard, float(spearmanr(a_ranks, b_ranks).statistic)


def compare(
    case: Path, truths: dict[str, list[str]], out: Path, label: str, repeat: int = 1
) -> list[dict]:
    """Each mode on each problem; with `repeat` > 1 the modes take turns and the median counts."""
    rows = []
    for key, truth in truths.items():
        times: dict[str, list[float]] = {}
        results: dict[str, dict | None] = {}
        for _ in range(repeat):
            for mode, select_by in MODES:
                name = mode if select_by is None else f"{mode}/{select_by}"
                seconds, results[name] = _run(
                    case, out / name.replace("/", "-"), key, mode, select_by
                )
                times.setdefault(name, []).append(seconds)
        runs = {name: (statistics.median(times[name]), results[name]) for name in times}
        if repeat > 1:
            spread = "; ".join(
                f"{name} {', '.join(f'{t:.1f}' for t in ts)} s" for name, ts in times.items()
            )
            print(f"{label} {key}: {spread}", file=sys.stderr)
        reference = runs["reference"][1]
        for name, (seconds, result) in runs.items():
            genes = result["significant_genes"]["Variable"] if result else []
            method = (result or {}).get("method", {})
            jaccard, rho = _agreement(reference, result)
            scores = score_gene_list(genes, truth)
            rows.append(
                {
                    "case": label,
                    "problem": key,
                    "mode": name,
                    "seconds": seconds,
                    "genes": len(genes),
                    "alpha": method.get("alpha"),
                    "diagnostics": method.get("diagnostics", {}),
                    "jaccard_vs_reference": jaccard,
                    "spearman_vs_reference": rho,
                    "precision": scores["precision"],
                    "recall": scores["recall"],
                    "f1": scores["f1"],
                    "auroc": scores["auroc"],
                }
            )
    return rows


def fixture_truths(case: Path) -> dict[str, list[str]]:
    status = RunStatus.read(case / "expected" / "status.json")
    truths = {}
    for entry in status.problems:
        if entry.status == "ok":
            trait, condition = entry.key.split("|")
            path = (
                case / "expected/regress" / trait / f"significant_genes_condition_{condition}.json"
            )
            truths[entry.key] = json.loads(path.read_text())["significant_genes"]["Variable"]
    return truths


def _print(rows: list[dict]) -> None:
    print(
        "| case | problem | mode | s | genes | alpha | iterations | gap | Jaccard vs ref | "
        "Spearman vs ref | P | R | F1 | AUROC |"
    )
    print("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        d = r["diagnostics"]
        gap = d.get("final_relative_gap")
        print(
            f"| {r['case']} | {r['problem']} | {r['mode']} | {r['seconds']:.1f} | {r['genes']} | "
            f"{r['alpha'] or 0:.2g} | {d.get('final_iterations', '-')} | "
            f"{'-' if gap is None else f'{gap:.0e}'} | {r['jaccard_vs_reference']:.2f} | "
            f"{r['spearman_vs_reference']:.2f} | {r['precision']:.1f} | {r['recall']:.1f} | "
            f"{r['f1']:.1f} | {r['auroc']:.2f} |"
        )
    for mode in dict.fromkeys(r["mode"] for r in rows):
        mine = [r for r in rows if r["mode"] == mode]
        print(
            f"{mode}: median {statistics.median(r['seconds'] for r in mine):.1f} s, "
            f"mean F1 {statistics.mean(r['f1'] for r in mine):.1f}, "
            f"mean AUROC {statistics.mean(r['auroc'] for r in mine):.2f}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--generated", type=int, default=3, help="generated planted-gene problems")
    parser.add_argument("--fixtures", action=argparse.BooleanOptionalAction, default=True)
    parser.add_argument("--big", action="store_true", help="also one 250 x 18,500 problem")
    parser.add_argument(
        "--repeat", type=int, default=1, help="runs of each mode per problem (median seconds)"
    )
    parser.add_argument(
        "--work", type=Path, default=Path(os.environ.get("TMPDIR", "/tmp")) / "genotex-modes"
    )
    args = parser.parse_args()
    rows = []
    if args.fixtures:
        for name in ("real", "synthetic"):
            case = SHARED / "fixtures/regress" / name
            rows += compare(case, fixture_truths(case), args.work / name, name, args.repeat)
    for seed in range(args.generated):
        case, truths = generated_case(args.work / f"gen{seed}", 120, 2000, seed)
        rows += compare(
            case, truths, args.work / f"gen{seed}/out", "generated 120 x 2,000", args.repeat
        )
    if args.big:
        case, truths = generated_case(args.work / "big", 250, 18_500, 99)
        rows += compare(case, truths, args.work / "big/out", "generated 250 x 18,500", args.repeat)
    _print(rows)


if __name__ == "__main__":
    main()

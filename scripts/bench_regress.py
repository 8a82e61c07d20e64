#!/usr/bin/env python3
"""Benchmark `genotex regress`: seconds per problem, peak memory, solver share, --jobs scaling.

Every problem runs as its own `genotex regress --trait T --condition C --force`
process (start-up included), `--repeat` times; the median is compared with the
reference's seconds in the fixture's `status.json` (one core of this machine
kind; those timings vary by ±50% between runs on these shared machines).

    python scripts/bench_regress.py                      # fixtures (real + synthetic)
    python scripts/bench_regress.py --big                # + a generated 250 x 18,500 cohort
    python scripts/bench_regress.py --scaling            # synthetic --all with --jobs 1 and 2
    python scripts/bench_regress.py --reference-root ~/GenoTEX   # side by side with the reference

With `--reference-root` (a checkout of the published GenoTEX code, whose
`tools/statistics.py` needs sparse-lmm and statsmodels installed), each problem
is also answered by the reference's own functions in a fresh process, following
its `code/regress.py` flow, and the ratio is taken against that run on this machine.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import pstats
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

SHARED = Path(os.environ.get("GENOTEX_SHARED", Path(__file__).resolve().parents[2] / "shared"))


def _run(args: list[str]) -> tuple[float, float]:
    started = time.perf_counter()
    process = subprocess.Popen(
        [sys.executable, "-m", "genotex", "regress", *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    _, status, usage = os.wait4(process.pid, 0)
    if status not in (0, 256):  # 1: some problem failed, reported in the summary
        raise SystemExit(f"genotex regress {' '.join(args)} exited with {status}")
    return time.perf_counter() - started, usage.ru_maxrss / 1024


def _reference_answer(args: list[str]) -> None:
    """Answer one problem with the reference's functions (its code/regress.py flow).

    `args` is ROOT DATA TASK_INFO OUT TRAIT CONDITION, as `--reference-answer` takes them.
    """
    import contextlib
    import io

    root, data, task_info, out, trait, condition = args

    sys.path.insert(0, root)
    from sklearn.linear_model import Lasso, LinearRegression, LogisticRegression  # noqa: F401
    from tools import statistics as ref  # the published GenoTEX module

    cond = None if condition == "None" else condition
    with contextlib.redirect_stdout(io.StringIO()):
        if cond is None or cond in ("Age", "Gender"):
            trait_data, _, _ = ref.select_and_load_cohort(data, trait, cond, is_two_step=False)
            if trait_data is None:
                return
            drop = ["Age", "Gender"] if cond is None else ["Gender" if cond == "Age" else "Age"]
            trait_data = trait_data.drop(columns=drop, errors="ignore")
        else:
            trait_data, condition_data, regressors = ref.select_and_load_cohort(
                data, trait, cond, is_two_step=True, gene_info_path=task_info
            )
            if regressors is None:
                return
            trait_data = trait_data.drop(columns=["Age", "Gender"], errors="ignore")
            x_c, y_c = condition_data[regressors].values, condition_data[cond].values
            binary = len(ref.np.unique(y_c)) == 2
            wide = x_c.shape[1] > x_c.shape[0]
            model = (
                (
                    LogisticRegression(l1_ratio=1.0, solver="liblinear", random_state=42)
                    if wide
                    else LogisticRegression()
                )
                if binary
                else (Lasso() if wide else LinearRegression())
            )
            model.fit(ref.normalize_data(x_c)[0], y_c)
            x_t = ref.normalize_data(trait_data[regressors].values)[0]
            trait_data[cond] = model.predict_proba(x_t)[:, 1] if binary else model.predict(x_t)
        y = trait_data[trait].values
        z = None if cond is None else trait_data[cond].values
        x = trait_data.drop(columns=[trait] + ([cond] if cond else [])).values
        constructor = ref.LMM if ref.detect_batch_effect(x) else ref.Lasso
        config, performance = ref.tune_hyperparameters(
            constructor,
            [1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1],
            x,
            y,
            trait_data.columns,
            trait,
            task_info,
            cond,
            z,
        )
        model = ref.ResidualizationRegressor(constructor, config)
        model.fit(ref.normalize_data(x)[0], y, None if z is None else ref.normalize_data(z)[0])
        genes = ref.interpret_result(model, trait_data.columns.tolist(), trait, cond)
        ref.save_result(genes, performance, out, trait, cond)


def _run_reference(root: Path, case: Path, out: Path, trait: str, condition: str) -> float:
    started = time.perf_counter()
    subprocess.run(
        [
            sys.executable,
            __file__,
            "--reference-answer",
            str(root),
            str(case / "output" / "preprocess"),
            str(case / "metadata" / "task_info.json"),
            str(out),
            trait,
            condition,
        ],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    return time.perf_counter() - started


def _case_args(case: Path, out: Path) -> list[str]:
    return [
        "--data",
        str(case / "output" / "preprocess"),
        "--task-info",
        str(case / "metadata" / "task_info.json"),
        "--out",
        str(out),
        "--force",
    ]


def solver_share(case: Path, trait: str, condition: str | None) -> float:
    """Share of one problem's in-process time spent in scikit-learn's coordinate descent."""
    from genotex.core import ProblemId, load_task_info
    from genotex.regression import answer_problem

    info = load_task_info(case / "metadata" / "task_info.json")
    profile = cProfile.Profile()
    started = time.perf_counter()
    profile.runcall(
        answer_problem, case / "output" / "preprocess", ProblemId(trait, condition), info
    )
    total = time.perf_counter() - started
    stats = pstats.Stats(profile)
    solver = sum(v[2] for k, v in stats.stats.items() if k[2] in ("enet_path",))  # tottime
    return solver / total


def bench_fixtures(repeat: int, out: Path, reference_root: Path | None = None) -> list[dict]:
    rows = []
    for name in ("real", "synthetic"):
        case = SHARED / "fixtures" / "regress" / name
        status = json.loads((case / "expected" / "status.json").read_text())
        for key, entry in status.items():
            if entry["status"] != "ok":
                continue
            trait, condition = key.split("|")
            args = [*_case_args(case, out / name), "--trait", trait, "--condition", condition]
            runs, reference_runs = [], []
            for _ in range(repeat):  # interleaved, so that machine noise hits both alike
                runs.append(_run(args))
                if reference_root is not None:
                    reference_runs.append(
                        _run_reference(
                            reference_root, case, out / f"{name}-reference", trait, condition
                        )
                    )
            seconds = statistics.median(r[0] for r in runs)
            reference_s = statistics.median(reference_runs) if reference_runs else entry["s"]
            rows.append(
                {
                    "case": name,
                    "problem": key,
                    "model": entry["model"],
                    "seconds": seconds,
                    "peak_mb": max(r[1] for r in runs),
                    "reference_s": reference_s,
                    "ratio": reference_s / seconds,
                    "solver_share": solver_share(
                        case, trait, None if condition == "None" else condition
                    ),
                }
            )
    return rows


def bench_big(out: Path) -> dict:
    from genotex.workflows import SynthSpec, write_example

    spec = SynthSpec(
        n_traits=1,
        n_cohorts=1,
        samples=(250, 250),
        n_genes=18_500,
        n_related=150,
        unusable_share=0.0,
        missing_share=0.0,
        malformed_results=0,
    )
    example = write_example(out / "big-tree", spec, seed=3)
    info = json.loads(example.task_info.read_text())
    trait = next(iter(info))
    args = [
        "--data",
        str(example.ref_output / "preprocess"),
        "--task-info",
        str(example.task_info),
        "--out",
        str(out / "big"),
        "--force",
        "--trait",
        trait,
        "--condition",
        "None",
    ]
    seconds, peak = _run(args)
    return {
        "problem": f"{trait}|None (250 x 18,500, generated)",
        "seconds": seconds,
        "peak_mb": peak,
    }


def bench_scaling(out: Path) -> dict:
    case = SHARED / "fixtures" / "regress" / "synthetic"
    one, _ = _run([*_case_args(case, out / "jobs1"), "--all"])
    two, _ = _run([*_case_args(case, out / "jobs2"), "--all", "--jobs", "2"])
    return {"jobs1": one, "jobs2": two, "speedup": one / two}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--big", action="store_true", help="also a generated benchmark-size cohort")
    parser.add_argument(
        "--scaling", action="store_true", help="also --jobs 1 vs 2 on the synthetic fixture"
    )
    parser.add_argument(
        "--out", type=Path, default=Path(os.environ.get("TMPDIR", "/tmp")) / "genotex-bench-regress"
    )
    parser.add_argument(
        "--reference-root",
        type=Path,
        default=None,
        help="a GenoTEX checkout: time its own pipeline side by side on this machine",
    )
    parser.add_argument("--reference-answer", nargs=6, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.reference_answer:
        _reference_answer(args.reference_answer)
        return
    rows = bench_fixtures(args.repeat, args.out, args.reference_root)
    source = (
        "side by side on this machine"
        if args.reference_root
        else "status.json (another machine, in-process)"
    )
    print(f"reference seconds: {source}")
    print(f"genotex regress, one process per problem, median of {args.repeat} runs")
    print("(start-up included)")
    print("| case | problem | model | seconds | peak RSS MB | reference s | ratio | solver share |")
    print("|---|---|---|---:|---:|---:|---:|---:|")
    for r in rows:
        print(
            f"| {r['case']} | {r['problem']} | {r['model']} | {r['seconds']:.2f} | "
            f"{r['peak_mb']:.0f} | "
            f"{r['reference_s']:.1f} | {r['ratio']:.2f}x | {r['solver_share']:.0%} |"
        )
    for model in ("Lasso", "LMM"):
        ratios = [r["ratio"] for r in rows if r["model"] == model]
        if ratios:
            median = statistics.median(ratios)
            print(f"median ratio, {model} problems: {median:.2f}x over {len(ratios)}")
    print(f"median ratio, all problems: {statistics.median(r['ratio'] for r in rows):.2f}x")
    if args.scaling:
        s = bench_scaling(args.out)
        print(
            f"synthetic --all: --jobs 1 {s['jobs1']:.1f} s, --jobs 2 {s['jobs2']:.1f} s, "
            f"speed-up {s['speedup']:.2f}x"
        )
    if args.big:
        b = bench_big(args.out)
        print(f"{b['problem']}: {b['seconds']:.1f} s, peak RSS {b['peak_mb']:.0f} MB")


if __name__ == "__main__":
    main()

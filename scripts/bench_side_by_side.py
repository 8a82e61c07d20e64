#!/usr/bin/env python3
"""The table-cache release's speed targets, measured side by side in alternating rounds.

Each measurement is a whole process (start-up, imports and reading included), and
every contender runs once per round, in turn, so that a slow minute of this shared
machine falls on all of them; medians over the rounds are reported with the runs.

    python scripts/bench_side_by_side.py --rounds 5 \\
        --published ~/GenoMAS            # the published evaluator (its eval.py), optional
        --before ~/genotex-0.2           # a checkout of an earlier genotex, optional

Contenders:
- eval on the `bar` tree (16 traits, 96 cohorts of 90 samples x 3,000 genes; ~600 MB of
  CSV): the published evaluator, the earlier genotex, and this one with `--no-cache`,
  with an empty cache (cold) and with the cache the previous run filled (warm);
- regress on one generated 200 x 18,500 problem: reference mode, standard mode with the
  cache cold and warm, and the earlier genotex's standard mode;
- regress --all on the synthetic fixture: this genotex with the cache cold, the earlier one;
- the generated 50,000 x 500 GEO series matrix (scripts/bench_preprocess.py): MB/s of text
  and peak memory, this genotex and the earlier one.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

from _measure import timed  # noqa: E402
from bench_preprocess import generate  # noqa: E402
from compare_modes import generated_case  # noqa: E402

from genotex.workflows import SynthSpec, write_example  # noqa: E402

SHARED = Path(os.environ.get("GENOTEX_SHARED", ROOT.parent / "shared"))
BAR = SynthSpec(
    n_traits=16,
    n_cohorts=96,
    samples=(90, 90),
    n_genes=3_000,
    n_related=100,
    unusable_share=0.1,
    missing_share=0.02,
)
#: Stubs for the published evaluator's two imports that its evaluation never calls.
_PUBLISHED = """
import runpy, sys, types
for name in ["sparse_lmm", "statsmodels", "statsmodels.stats", "statsmodels.stats.multitest"]:
    module = types.ModuleType(name); module.LMM = object; module.multipletests = None
    sys.modules[name] = module
root = sys.argv[1]
sys.path.insert(0, root)
sys.argv = ["eval.py", *sys.argv[2:]]
runpy.run_path(root + "/eval.py", run_name="__main__")
"""


def checkout_env(before: Path | None) -> tuple[dict, Path]:
    """The environment and working folder that make `python -m`/`-c` import this genotex or
    the earlier checkout's: the working folder comes first on `sys.path`, before PYTHONPATH
    and the editable install, so each contender runs from its own checkout."""
    env = dict(os.environ)
    if before is not None:
        env["PYTHONPATH"] = str(before)
    return env, before if before is not None else ROOT


def genotex(*args: str, before: Path | None = None) -> Callable[[], tuple]:
    env, cwd = checkout_env(before)
    return lambda: timed([sys.executable, "-m", "genotex", *args], cwd=cwd, env=env)


def rounds(contenders: dict[str, Callable[[], tuple]], n: int, before_each=None) -> dict:
    runs: dict[str, list[tuple]] = {name: [] for name in contenders}
    for _ in range(n):
        for name, run in contenders.items():
            if before_each:
                before_each(name)
            runs[name].append(run())
    return runs


def report(title: str, runs: dict, baseline: str | None = None) -> None:
    print(f"\n{title}")
    print("| contender | median s | peak RSS MB | ratio | runs (s) |\n|---|---:|---:|---:|---|")
    base = statistics.median(s for s, _ in runs[baseline]) if baseline in runs else None
    for name, results in runs.items():
        median = statistics.median(s for s, _ in results)
        ratio = f"{base / median:.1f}x" if base else "-"
        cells = [name, f"{median:.2f}", f"{max(m for _, m in results):.0f}", ratio]
        print("| " + " | ".join([*cells, str([round(s, 2) for s, _ in results])]) + " |")


def bench_eval(work: Path, n: int, published: Path | None, before: Path | None) -> None:
    tree = work / "bar"
    if not (tree / "done").exists():
        write_example(tree, BAR, seed=2024)
        (tree / "done").write_text("")
    pred, ref = str(tree / "pred" / "output"), str(tree / "ref" / "output")
    cold, warm = work / "cache-cold", work / "cache-warm"
    common = ["eval", "-p", pred, "-r", ref, "--no-progress", "-q", "--json", str(work / "r.json")]
    contenders: dict[str, Callable[[], tuple]] = {}
    if published is not None:
        command = [sys.executable, "-c", _PUBLISHED, str(published), "-p", pred, "-r", ref]
        contenders["published evaluator"] = lambda: timed(command, cwd=tree / "ref")
    if before is not None:
        contenders["earlier genotex"] = genotex(*common, before=before)
    contenders["genotex --no-cache"] = genotex(*common, "--no-cache")
    contenders["genotex, cache cold"] = genotex(*common, "--cache-dir", str(cold))
    contenders["genotex, cache warm"] = genotex(*common, "--cache-dir", str(warm))
    genotex(*common, "--cache-dir", str(warm))()  # fill it

    def empty_cold(name: str) -> None:
        if name.endswith("cold"):
            shutil.rmtree(cold, ignore_errors=True)

    runs = rounds(contenders, n, empty_cold)
    first = "published evaluator" if published else "genotex --no-cache"
    report("eval, bar tree (16 traits, 96 cohorts, 90 x 3,000), --jobs 1", runs, first)


def bench_regress(work: Path, n: int, before: Path | None) -> None:
    case, truth = generated_case(work / "big", 200, 18_500, 7)
    (key,) = truth
    trait = key.split("|")[0]
    cold, warm = work / "regress-cold", work / "regress-warm"

    def args(mode: str, cache: Path | None, out: str) -> list[str]:
        data = ["--data", str(case / "output/preprocess"), "--task-info"]
        data += [str(case / "metadata/task_info.json"), "--out", str(work / out), "--force"]
        where = ["--cache-dir", str(cache)] if cache else []
        return ["regress", *data, "--trait", trait, "--condition", "None", "--mode", mode, *where]

    contenders = {"reference mode (cache warm)": genotex(*args("reference", warm, "r"))}
    if before is not None:
        contenders["earlier genotex, standard"] = genotex(
            *args("standard", None, "b"), before=before
        )
    contenders["standard, cache cold"] = genotex(*args("standard", cold, "c"))
    contenders["standard, cache warm"] = genotex(*args("standard", warm, "w"))
    genotex(*args("standard", warm, "w"))()

    def empty_cold(name: str) -> None:
        if name.endswith("cold"):
            shutil.rmtree(cold, ignore_errors=True)

    runs = rounds(contenders, n, empty_cold)
    report("regress, one generated 200 x 18,500 problem", runs, "reference mode (cache warm)")
    synthetic = SHARED / "fixtures" / "regress" / "synthetic"
    if not synthetic.is_dir():
        return
    all_args = ["regress", "--all", "--force", "--data", str(synthetic / "output/preprocess")]
    all_args += ["--task-info", str(synthetic / "metadata/task_info.json")]
    now = ["--out", str(work / "all-now"), "--cache-dir", str(work / "all-cold")]
    every = {"this genotex, cache cold": genotex(*all_args, *now)}
    if before is not None:
        out = ["--out", str(work / "all-b")]
        every["earlier genotex"] = genotex(*all_args, *out, before=before)
    runs = rounds(every, n, lambda name: shutil.rmtree(work / "all-cold", ignore_errors=True))
    report("regress --all, synthetic fixture (15 problems)", runs, next(iter(every)))


def bench_geo(work: Path, n: int, before: Path | None) -> None:
    matrix, _ = generate(work / "geo", 50_000, 500)
    code = (
        "import time, resource; from genotex.preprocessing import read_series_matrix as r; "
        f"t = time.perf_counter(); m = r({str(matrix)!r}); "
        "s = f'{time.perf_counter() - t} {m.expression.to_numpy().nbytes}'"
    )
    contenders = {"this genotex": None, "earlier genotex": before} if before else {"this": None}
    results: dict[str, list[tuple]] = {name: [] for name in contenders}
    out = work / "geo-seconds.txt"
    for _ in range(n):
        for name, path in contenders.items():
            env, cwd = checkout_env(path)
            command = [sys.executable, "-c", code + f"; open({str(out)!r}, 'w').write(str(s))"]
            _, peak = timed(command, cwd=cwd, env=env)
            seconds, nbytes = out.read_text().split()
            results[name].append((float(seconds), peak, int(nbytes)))
    print("\nGEO series matrix, generated 50,000 x 500 (180 MB of text), reading only")
    print(
        "| reader | median s | MB/s | peak RSS MB | peak / float table |\n|---|---:|---:|---:|---:|"
    )
    for name, rows in results.items():
        median = statistics.median(s for s, _, _ in rows)
        peak, table = max(m for _, m, _ in rows), rows[0][2] / 2**20
        print(
            f"| {name} | {median:.2f} | {180.5 / median:.0f} | {peak:.0f} | {peak / table:.2f}x |"
        )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--published", type=Path, help="a GenoMAS checkout (its eval.py)")
    parser.add_argument("--before", type=Path, help="a checkout of an earlier genotex")
    parser.add_argument("--only", choices=["eval", "regress", "geo"], action="append")
    parser.add_argument(
        "--workdir", type=Path, default=Path(os.environ.get("TMPDIR", "/tmp")) / "genotex-side"
    )
    args = parser.parse_args()
    args.workdir.mkdir(parents=True, exist_ok=True)
    only = args.only or ["eval", "regress", "geo"]
    print(f"median of {args.rounds} alternating rounds; whole processes")
    if "eval" in only:
        bench_eval(args.workdir, args.rounds, args.published, args.before)
    if "regress" in only:
        bench_regress(args.workdir, args.rounds, args.before)
    if "geo" in only:
        bench_geo(args.workdir, args.rounds, args.before)


if __name__ == "__main__":
    main()

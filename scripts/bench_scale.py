#!/usr/bin/env python3
"""How `eval` and `regress` scale with the tree: CPU seconds and peak memory by size.

Generated 64-trait trees (`write_example`, kept in --workdir) of growing cohort
counts; for each, one `genotex eval` with an empty cache (cold), one again with
that cache (warm), and `genotex regress --all --mode standard` on the
reference's preprocessed tables. Each is its own process, measured by GNU time:
user + system CPU seconds, and the peak RSS. The table is what docs/guides/scale.md
publishes (CPU seconds, as wall time on a shared machine is noise).

    python scripts/bench_scale.py                      # 64, 128 and 256 cohorts
    python scripts/bench_scale.py --cohorts 64 512
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from genotex.workflows import SynthSpec, write_example  # noqa: E402

TIME = shutil.which("time") or "/usr/bin/time"


def _spec(cohorts: int) -> SynthSpec:
    return SynthSpec(
        n_traits=64,
        n_cohorts=cohorts,
        samples=(30, 180),
        n_genes=3_000,
        n_related=100,
        unusable_share=0.1,
        missing_share=0.02,
    )


def _tree(workdir: Path, cohorts: int, seed: int) -> Path:
    folder = workdir / f"traits64-cohorts{cohorts}-seed{seed}"
    stamp = folder / "spec.json"
    wanted = json.dumps({"spec": asdict(_spec(cohorts)), "seed": seed}, sort_keys=True)
    if not (stamp.exists() and stamp.read_text() == wanted):
        shutil.rmtree(folder, ignore_errors=True)
        started = time.perf_counter()
        print(f"generating {folder.name} ...", file=sys.stderr)
        write_example(folder, _spec(cohorts), seed=seed)
        stamp.write_text(wanted)
        print(f"  generated in {time.perf_counter() - started:.0f} s", file=sys.stderr)
    return folder


def _measured(command: list[str]) -> tuple[float, float]:
    """(user + system CPU seconds, peak RSS in MB) of one process, which must succeed."""
    with tempfile.NamedTemporaryFile(suffix=".time") as out:
        done = subprocess.run(
            [TIME, "-f", "%U %S %M", "-o", out.name, *command],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        if done.returncode not in (0, 1):
            raise SystemExit(f"{' '.join(command[:4])}... failed: {done.stderr[-2000:]}")
        user, system, peak = Path(out.name).read_text().split()[-3:]
    return float(user) + float(system), float(peak) / 1024


def _bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--cohorts", type=int, nargs="+", default=[64, 128, 256])
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument(
        "--workdir", type=Path, default=Path(os.environ.get("TMPDIR", "/tmp")) / "genotex-scale"
    )
    args = parser.parse_args()
    genotex = [sys.executable, "-m", "genotex"]
    rows = []
    for cohorts in args.cohorts:
        folder = _tree(args.workdir, cohorts, args.seed)
        pred, ref = folder / "pred" / "output", folder / "ref" / "output"
        gigabytes = (_bytes(pred) + _bytes(ref)) / 1e9
        with tempfile.TemporaryDirectory(prefix="genotex-scale-cache-") as cache:
            evaluate = [*genotex, "eval", "-p", str(pred), "-r", str(ref), "--no-progress"]
            cold = _measured([*evaluate, "--cache-dir", cache])
            warm = _measured([*evaluate, "--cache-dir", cache])
        with tempfile.TemporaryDirectory(prefix="genotex-scale-regress-") as out:
            regress = _measured(
                [*genotex, "regress", "--all", "--data", str(ref / "preprocess"),
                 "--task-info", str(folder / "ref" / "metadata" / "task_info.json"),
                 "--out", out, "--mode", "standard", "-q", "--no-cache"]
            )  # fmt: skip
            problems = len(json.loads((Path(out) / "status.json").read_text()))
        rows.append((cohorts, gigabytes, cold, warm, regress, problems))
        print(f"  {cohorts} cohorts done", file=sys.stderr)
    print("| cohorts | tree (pred + ref) | eval cold: CPU-s (per GB), peak | eval warm | "
          "regress --all standard: CPU-s per problem, peak |")  # fmt: skip
    print("|---:|---:|---:|---:|---:|")
    for cohorts, gigabytes, cold, warm, regress, problems in rows:
        print(
            f"| {cohorts} | {gigabytes:.2f} GB "
            f"| {cold[0]:.1f} s ({cold[0] / gigabytes:.1f}), {cold[1]:.0f} MB "
            f"| {warm[0]:.1f} s ({warm[0] / gigabytes:.1f}), {warm[1]:.0f} MB "
            f"| {regress[0] / problems:.2f} s ({problems} problems), {regress[1]:.0f} MB |"
        )


if __name__ == "__main__":
    main()

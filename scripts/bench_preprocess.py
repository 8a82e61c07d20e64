#!/usr/bin/env python3
"""Benchmark the GEO readers: MB/s of uncompressed text and peak memory, against GEOparse.

Each measurement runs in its own process (peak RSS from wait4), on the real
files of ../shared/data/real and on a generated series matrix + GPL file
(default 50,000 probes x 500 samples).

    python scripts/bench_preprocess.py [--probes 50000 --samples 500] [--repeat 3]
"""

from __future__ import annotations

import argparse
import gzip
import os
import statistics
import subprocess
import sys
from pathlib import Path

import numpy as np

SHARED = Path(os.environ.get("GENOTEX_SHARED", Path(__file__).resolve().parents[2] / "shared"))
ROOT = Path(__file__).resolve().parents[1]

# (set-up code, timed code): imports are not timed, for either tool
_OURS = {
    "matrix": (
        "from genotex.preprocessing import read_series_matrix as r",
        "m = r(PATH); assert m.expression.size",
    ),
    "soft": ("from genotex.preprocessing import read_soft as r", "s = r(PATH); assert s.platforms"),
}
_GEOPARSE = {
    # GEOparse has no series-matrix reader; for SOFT it also parses every per-sample table
    "soft": ("import GEOparse", "g = GEOparse.get_GEO(filepath=PATH, silent=True)"),
}


def _measure(code: tuple[str, str], path: Path, repeat: int) -> tuple[float, float]:
    setup, timed = code
    seconds, peaks = [], []
    for _ in range(repeat):
        script = (
            f"import time; {setup}; PATH = {str(path)!r}; t = time.perf_counter(); {timed}; "
            "print(time.perf_counter() - t)"
        )
        process = subprocess.Popen(
            [sys.executable, "-c", script],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            cwd=ROOT,
        )
        _, status, usage = os.wait4(process.pid, 0)
        output = process.stdout.read().decode().strip() if process.stdout else ""
        if status != 0 or not output:
            raise SystemExit(f"failed on {path}: {code}")
        seconds.append(float(output))
        peaks.append(usage.ru_maxrss / 1024)
    return statistics.median(seconds), max(peaks)


def _text_mb(path: Path) -> float:
    with gzip.open(path, "rb") if path.suffix == ".gz" else open(path, "rb") as handle:
        return sum(len(chunk) for chunk in iter(lambda: handle.read(1 << 24), b"")) / 1e6


def generate(folder: Path, probes: int, samples: int, seed: int = 0) -> tuple[Path, Path]:
    """A series matrix and a GPL file of the given size (quoted probe IDs, ` /// ` symbols)."""
    folder.mkdir(parents=True, exist_ok=True)
    matrix, platform = folder / "GSE999999_series_matrix.txt.gz", folder / "GPL99999.txt.gz"
    stamp = folder / f"{probes}x{samples}.done"
    if stamp.exists():
        return matrix, platform
    rng = np.random.default_rng(seed)
    gsm = [f"GSM{9000000 + i}" for i in range(samples)]
    with gzip.open(matrix, "wt", compresslevel=3) as out:
        out.write(
            '!Series_title\t"generated"\n!Sample_geo_accession\t'
            + "\t".join(f'"{g}"' for g in gsm)
            + "\n"
        )
        out.write(
            "!Sample_characteristics_ch1\t"
            + "\t".join(f'"age: {a}"' for a in rng.integers(20, 80, samples))
            + "\n"
        )
        out.write(
            '!series_matrix_table_begin\n"ID_REF"\t' + "\t".join(f'"{g}"' for g in gsm) + "\n"
        )
        fmt = "\t".join(["%.4f"] * samples)
        for start in range(0, probes, 2000):
            block = rng.normal(8, 2, size=(min(2000, probes - start), samples))
            out.write(
                "".join(f'"P{start + i}_at"\t{fmt % tuple(row)}\n' for i, row in enumerate(block))
            )
        out.write("!series_matrix_table_end\n")
    with gzip.open(platform, "wt", compresslevel=3) as out:
        out.write(
            "^PLATFORM = GPL99999\n!Platform_title = generated\n"
            "#ID = probe\n#Gene Symbol = symbols\n"
            "#SPOT_ID = spot\n!platform_table_begin\nID\tGene Symbol\tSPOT_ID\n"
        )
        out.write(
            "".join(
                f"P{i}_at\tGENE{i % 20000} /// GENE{(i * 7) % 20000}\t\n" for i in range(probes)
            )
        )
        out.write("!platform_table_end\n")
    stamp.write_text("")
    return matrix, platform


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--probes", type=int, default=50_000)
    parser.add_argument("--samples", type=int, default=500)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--workdir",
        type=Path,
        default=Path(os.environ.get("TMPDIR", "/tmp")) / "genotex-bench-preprocess",
    )
    args = parser.parse_args()
    real = SHARED / "data" / "real" / "geo"
    files = [("matrix", p) for p in sorted(real.glob("*/*_series_matrix.txt.gz"))]
    files += [("soft", p) for p in sorted(real.glob("*/*_family.soft.gz"))] + [
        ("soft", real / "platforms" / "GPL96.txt.gz")
    ]
    big_matrix, big_platform = generate(args.workdir, args.probes, args.samples)
    files += [("matrix", big_matrix), ("soft", big_platform)]
    print(f"median of {args.repeat} runs, one process each; MB = uncompressed text")
    headers = ["file", "kind", "MB", "genotex s", "MB/s", "peak RSS MB"]
    print("| " + " | ".join([*headers, "GEOparse s", "peak RSS MB", "speed-up"]) + " |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for kind, path in files:
        megabytes = _text_mb(path)
        seconds, peak = _measure(_OURS[kind], path, args.repeat)
        geoparse = "| - | - | -"
        if kind in _GEOPARSE:
            their_s, their_peak = _measure(_GEOPARSE[kind], path, args.repeat)
            geoparse = f"| {their_s:.2f} | {their_peak:.0f} | {their_s / seconds:.1f}x"
        rate = megabytes / seconds
        cells = [
            path.name,
            kind,
            f"{megabytes:.1f}",
            f"{seconds:.2f}",
            f"{rate:.0f}",
            f"{peak:.0f}",
        ]
        print("| " + " | ".join(cells) + f" {geoparse} |")
    table_mb = args.probes * args.samples * 8 / 1e6
    print(f"generated matrix: {args.probes} x {args.samples} float64 table = {table_mb:.0f} MB")


if __name__ == "__main__":
    main()

"""What the write gate costs per file genotex writes, with the mount table kept and re-read.

Every file genotex writes passes `genotex.core.gate_write` first: the folder's real path,
the benchmarks around it, and its other names through a bind mount. 0.14 keeps the parsed
mount table until the kernel marks `/proc/self/mountinfo` changed; 0.13 parsed it for
every file, and looked its folders up in lists. Both ways are timed here in alternating
rounds (the table forgotten before each call for the second) on a folder four levels
deep in a temporary working folder, and a 100-byte atomic write beside them for scale.
Run it from a checkout of 0.13 (`PYTHONPATH=that-checkout`) for 0.13's own gate. Offline.

    python scripts/bench_write_gate.py [--rounds 7] [--calls 2000]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from genotex.core import _reference_guard, gate_write, write_text_atomic


def _per_call(folder: Path, calls: int, *, forget: bool) -> float:
    """Milliseconds per `gate_write` call (the table forgotten before each, with `forget`)."""
    started = time.perf_counter()
    for index in range(calls):
        table = getattr(_reference_guard, "_MOUNT_TABLE", None)  # None before 0.14
        if forget and table is not None:
            table.pid = None  # opened and parsed for each file, as before 0.14
        gate_write(folder / f"answer_{index}.json")
    return (time.perf_counter() - started) / calls * 1000


def _written(folder: Path, calls: int) -> float:
    """Milliseconds per 100-byte file written atomically (which passes the gate itself)."""
    started = time.perf_counter()
    for index in range(calls):
        write_text_atomic(folder / f"file_{index}.txt", "x" * 100)
    return (time.perf_counter() - started) / calls * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--calls", type=int, default=2000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="genotex-gate-") as scratch:
        folder = Path(scratch) / "work" / "output" / "regress" / "Asthma"
        folder.mkdir(parents=True)
        kept, parsed, writes = [], [], []
        for _ in range(args.rounds):
            kept.append(_per_call(folder, args.calls, forget=False))
            parsed.append(_per_call(folder, args.calls, forget=True))
            writes.append(_written(folder, args.calls // 4))
    table = {
        "gate, mount table kept": statistics.median(kept),
        "gate, mount table parsed per call": statistics.median(parsed),
        "an atomic 100-byte write, gate included": statistics.median(writes),
    }
    for name, value in table.items():
        print(f"{name:45s} {value:7.3f} ms")
    print(f"{'ratio, parsed / kept':45s} {table[list(table)[1]] / table[list(table)[0]]:7.2f}x")


if __name__ == "__main__":
    main()

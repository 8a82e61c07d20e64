"""Start-up and teardown of each sandbox per sample, and what a 1 GB trait's inputs cost.

For each sandbox (`local`, `bwrap`, `podman` where its image is built): the
time Inspect's sample life cycle takes around an agent that does nothing
(sample_init, one command, sample_cleanup), measured on the sandbox class
directly, median of N; then the same with the sample's inputs being a 1 GB
folder: bound read-only under `bwrap` and `podman` (their cost should not grow
with the inputs), copied under `local` (Inspect writes each of a sample's files
into its folder). Offline; needs `pip install 'genotex[harness]'`.

    python scripts/bench_sandbox.py [--rounds 11] [--input-gb 1]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from inspect_ai.util._sandbox.local import LocalSandboxEnvironment

from genotex.harness.sandboxes._bwrap import METADATA_KEY, BubblewrapSandbox
from genotex.harness.sandboxes._podman import PodmanSandbox, default_image, podman_problem
from genotex.harness.sandboxes._sandbox_spec import SampleSandbox


def _make_inputs(folder: Path, gigabytes: float) -> Path:
    """A GEO-like trait folder of `gigabytes` (files of 100 MB, random bytes, not sparse)."""
    folder.mkdir(parents=True, exist_ok=True)
    chunk = os.urandom(1024 * 1024)
    for index in range(max(1, int(gigabytes * 10))):
        with open(folder / f"GSE{index}_series_matrix.txt.gz", "wb") as out:
            for _ in range(100):
                out.write(chunk)
    return folder


async def _bound_sample(
    provider: type[BubblewrapSandbox | PodmanSandbox], inputs: Path | None
) -> tuple[float, float, float]:
    binds = {"input/GEO/Trait": str(inputs)} if inputs else {}
    metadata = {METADATA_KEY: SampleSandbox(binds).to_metadata()}
    started = time.perf_counter()
    environments = await provider.sample_init("bench", None, metadata)  # type: ignore[arg-type]
    ready = time.perf_counter()
    result = await environments["default"].exec(["sh", "-c", "ls input/GEO/Trait | wc -l; true"])
    assert result.success, result.stderr
    ran = time.perf_counter()
    await provider.sample_cleanup("bench", None, environments, False)
    return ready - started + (time.perf_counter() - ran), ran - ready, time.perf_counter() - started


async def _bwrap_sample(inputs: Path | None) -> tuple[float, float, float]:
    return await _bound_sample(BubblewrapSandbox, inputs)


async def _podman_sample(inputs: Path | None) -> tuple[float, float, float]:
    return await _bound_sample(PodmanSandbox, inputs)


async def _local_sample(inputs: Path | None) -> tuple[float, float, float]:
    started = time.perf_counter()
    environments = await LocalSandboxEnvironment.sample_init("bench", None, {})
    sandbox = environments["default"]
    for path in sorted(inputs.iterdir()) if inputs else []:  # what Inspect does with Sample.files
        await sandbox.write_file(f"input/GEO/Trait/{path.name}", path.read_bytes())
    ready = time.perf_counter()
    result = await sandbox.exec(["sh", "-c", "ls input/GEO/Trait 2>/dev/null | wc -l; true"])
    assert result.success, result.stderr
    ran = time.perf_counter()
    await LocalSandboxEnvironment.sample_cleanup("bench", None, environments, False)
    return ready - started + (time.perf_counter() - ran), ran - ready, time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=11)
    parser.add_argument("--input-gb", type=float, default=1.0)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="genotex-bench-sandbox-"))
    try:
        inputs = _make_inputs(work / "Trait", args.input_gb)
        size = sum(p.stat().st_size for p in inputs.iterdir()) / 1e9
        print(f"inputs: {size:.2f} GB in {len(list(inputs.iterdir()))} files; {args.rounds} rounds")
        print("sandbox  inputs   set-up+teardown  one command  whole sample (medians)")
        runners = [("local", _local_sample), ("bwrap", _bwrap_sample)]
        problem = podman_problem(default_image())
        if problem is None:
            runners.append(("podman", _podman_sample))
        else:
            print(f"podman: not measured ({problem})")
        for name, run in runners:
            for given in (None, inputs):
                rounds = [asyncio.run(run(given)) for _ in range(args.rounds)]
                setup, command, whole = (statistics.median(r[i] for r in rounds) for i in range(3))
                label = "none" if given is None else f"{size:.1f} GB"
                print(f"{name:<8} {label:<8} {setup:>14.3f} s {command:>10.3f} s {whole:>12.3f} s")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

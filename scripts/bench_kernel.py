"""What GenoAgent's persistent kernel costs per step, in each sandbox that holds one.

For `local`, `bwrap` and `podman` (where its image is built): the kernel's start with
GenoAgent's own library (the paper's, `genotex.agentlib`, imported: what a sample pays
once), one trivial step, a fresh state (what each later workflow of the sample pays: a
fork of the kernel's template, then its names), and a replay of 6 trivial steps (a fresh
state and the 6 steps: what a revision or a "go back" costs beyond its own code), each the
median of N rounds. Offline; needs `pip install 'genotex[harness]'`.

    python scripts/bench_kernel.py [--rounds 7]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time

from inspect_ai.util._sandbox.local import LocalSandboxEnvironment

from genotex.harness.sandboxes._bwrap import BubblewrapSandbox
from genotex.harness.sandboxes._kernel import Kernel
from genotex.harness.sandboxes._podman import PodmanSandbox, default_image, podman_problem
from genotex.harness.sandboxes._sandbox_spec import SampleSandbox, bwrap_problem
from genotex.harness.solvers.genoagent._library import library
from genotex.harness.solvers.genoagent._solver import _preamble
from genotex.harness.solvers.genoagent._team import TeamOptions


async def _environment(kind: str):
    if kind == "local":
        return LocalSandboxEnvironment(), sys.executable
    if kind == "bwrap":
        return BubblewrapSandbox(SampleSandbox()), sys.executable
    env = PodmanSandbox(SampleSandbox(), default_image())
    await env.start()
    return env, "python"


async def _round(kind: str) -> dict[str, float]:
    env, python = await _environment(kind)
    names = {"TRAIT": "Asthma", "COHORT_DIR": "input/GEO/Asthma/GSE1"}
    options = TeamOptions()  # the default library, the paper's
    preamble, _ = _preamble(names)
    code = library(options.library).preamble(batch_effect_correction=True)
    kernel = Kernel(env, python, library=code, preamble=preamble)
    try:
        started = time.perf_counter()
        await kernel.start()
        start = time.perf_counter() - started
        started = time.perf_counter()
        await kernel.run("x = 1", "<step>", 60)
        step = time.perf_counter() - started
        started = time.perf_counter()
        await kernel.fresh()
        fresh = time.perf_counter() - started
        started = time.perf_counter()
        await kernel.replay([(f"<s{i}>", f"x{i} = {i}") for i in range(6)], 60)
        replay = time.perf_counter() - started
    finally:
        await kernel.stop()
        if isinstance(env, LocalSandboxEnvironment):
            env.directory.cleanup()
        else:
            await env.teardown()
    return {"start": start, "step": step, "fresh": fresh, "replay of 6": replay}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    rounds = parser.parse_args().rounds
    kinds = ["local"]
    kinds += ["bwrap"] if bwrap_problem() is None else []
    kinds += ["podman"] if podman_problem(default_image()) is None else []
    print(f"{'sandbox':8} {'start (s)':>10} {'step (ms)':>10} {'fresh (s)':>10} "
          f"{'replay of 6 (s)':>16}")  # fmt: skip
    for kind in kinds:
        runs = [asyncio.run(_round(kind)) for _ in range(rounds)]
        median = {key: statistics.median(r[key] for r in runs) for key in runs[0]}
        print(f"{kind:8} {median['start']:10.2f} {median['step'] * 1000:10.1f} "
              f"{median['fresh']:10.3f} {median['replay of 6']:16.3f}")  # fmt: skip


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""The sandboxes' overhead, this genotex beside an earlier checkout, in alternating rounds.

What a sample pays for its isolation, measured on the sandbox classes directly (no model,
no Inspect task): a sample's set-up and teardown (`sample_init`, `sample_cleanup`), one
command (`true`), the persistent kernel's start (no preamble) and one trivial step, in
`local` (no isolation: the baseline) and in `bwrap` and `podman` (where its image is
built). The overhead of a sandbox is its time less `local`'s, each measured in the same
process. Each round runs one process per checkout, in turn, so that a slow minute of
this shared machine falls on both; each process takes the median of `--repeat` samples;
the table gives the medians over the rounds and the ratio of this checkout's overhead to
the earlier one's.

    git worktree add /tmp/genotex-0.10.1 v0.10.1-commit
    python scripts/bench_sandbox_side_by_side.py --before /tmp/genotex-0.10.1 --rounds 7

Offline; needs genotex's `[harness]` extra, bwrap, and for podman each checkout's image
(`genotex harness image` in each).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: What one process measures, with the checkout's own genotex (first on its import path).
_PROGRAM = r"""
import asyncio, json, statistics, sys, time
from inspect_ai.util._sandbox.local import LocalSandboxEnvironment
from genotex.harness.sandboxes._bwrap import BubblewrapSandbox
from genotex.harness.sandboxes._kernel import Kernel
from genotex.harness.sandboxes._podman import PodmanSandbox, default_image, podman_problem
from genotex.harness.sandboxes._sandbox_spec import SampleSandbox

KINDS = {"local": LocalSandboxEnvironment, "bwrap": BubblewrapSandbox, "podman": PodmanSandbox}
METADATA = {"genotex_sandbox": SampleSandbox().to_metadata()}
if "guarded" in SampleSandbox.__dataclass_fields__:  # since 0.15: the import path judged at
    # every command, as a task's bwrap samples do (a reference and folders to keep out)
    import tempfile
    from pathlib import Path as _Path
    _guard = _Path(tempfile.mkdtemp(prefix="genotex-bench-guard-"))
    (_guard / "reference" / "regress").mkdir(parents=True)
    (_guard / "reference" / "regress" / "answer.json").write_text('{"significant_genes": {}}')
    METADATA["genotex_sandbox"]["guarded"] = [str(_guard / "reference"), str(_guard / "root")]


async def one(kind):
    cls = KINDS[kind]
    python = "python" if kind == "podman" else sys.executable
    started = time.perf_counter()
    made = await cls.sample_init("bench", None, METADATA)
    ready = time.perf_counter()
    env = made["default"]
    result = await env.exec(["true"])
    assert result.success, result.stderr
    ran = time.perf_counter()
    kernel = Kernel(env, python)
    await kernel.start()
    kernel_ready = time.perf_counter()
    step = await kernel.run("x = 1", "<step>", 60)
    assert step.ok, step.error
    stepped = time.perf_counter()
    await kernel.stop()
    stopped = time.perf_counter()
    await cls.sample_cleanup("bench", None, made, False)
    done = time.perf_counter()
    return {
        "set-up and teardown": (ready - started) + (done - stopped),
        "one command": ran - ready,
        "kernel start": kernel_ready - ran,
        "kernel step": stepped - kernel_ready,
    }


kinds = ["local", "bwrap"] + (["podman"] if podman_problem(default_image()) is None else [])
found = {}
for kind in kinds:
    rounds = [asyncio.run(one(kind)) for _ in range(int(sys.argv[1]))]
    found[kind] = {k: statistics.median(r[k] for r in rounds) for k in rounds[0]}
print(json.dumps(found))
"""


def _measure(checkout: Path, repeat: int) -> dict[str, dict[str, float]]:
    """One process's medians, with `checkout`'s genotex."""
    env = {**os.environ, "PYTHONPATH": str(checkout), "PYTHONDONTWRITEBYTECODE": "1"}
    done = subprocess.run(
        [sys.executable, "-c", _PROGRAM, str(repeat)],
        cwd=checkout, env=env, capture_output=True, text=True, check=False,
    )  # fmt: skip
    if done.returncode != 0:
        raise SystemExit(f"{checkout}: the measurement failed: {done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def _version(checkout: Path) -> str:
    done = subprocess.run(
        [sys.executable, "-c", "import genotex; print(genotex.__version__)"],
        cwd=checkout, env={**os.environ, "PYTHONPATH": str(checkout)},
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    return done.stdout.strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, required=True, help="an earlier checkout")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--repeat", type=int, default=5, help="samples per process")
    args = parser.parse_args()
    checkouts = {"before": args.before.resolve(), "now": ROOT}
    versions = {name: _version(path) for name, path in checkouts.items()}
    runs: dict[str, list[dict[str, dict[str, float]]]] = {name: [] for name in checkouts}
    for number in range(args.rounds):
        for name, path in checkouts.items():
            runs[name].append(_measure(path, args.repeat))
        print(f"round {number + 1} of {args.rounds} done", file=sys.stderr)
    before, now = versions["before"], versions["now"]
    print(f"{args.rounds} rounds of {args.repeat} samples; medians; overhead = sandbox - local")
    print(f"{'sandbox':<8} {'measure':<20} {before:>10} {now:>10}   overhead {before:>8} "
          f"{now:>8}  ratio")  # fmt: skip
    kinds = [k for k in runs["now"][0] if all(k in r for r in runs["before"])]
    for kind in kinds:
        for measure in runs["now"][0][kind]:
            seconds = {
                name: statistics.median(r[kind][measure] for r in runs[name]) for name in runs
            }
            local = {
                name: statistics.median(r["local"][measure] for r in runs[name]) for name in runs
            }
            extra = {name: seconds[name] - local[name] for name in runs}
            ratio = extra["now"] / extra["before"] if kind != "local" and extra["before"] else 1
            print(f"{kind:<8} {measure:<20} {seconds['before']:>9.4f}s {seconds['now']:>9.4f}s"
                  f"   {extra['before']:>9.4f}s {extra['now']:>8.4f}s  {ratio:5.2f}")  # fmt: skip


if __name__ == "__main__":
    main()

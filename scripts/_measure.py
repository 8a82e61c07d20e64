"""Wall time and peak memory of one process, for the benchmark scripts.

Linux records a process's peak RSS as at least its parent's at the fork (the
high-water mark of the address space that exec replaced), so `os.wait4` on a
child of a benchmark script that holds generated data reports the script's own
size. The peak is therefore read from GNU time, which forks the measured
process from a small one; without it, the peak is NaN, never a wrong number.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

TIME = shutil.which("time") or ("/usr/bin/time" if Path("/usr/bin/time").exists() else None)


def timed(command: list[str], *, cwd: Path | None = None, env: dict | None = None) -> tuple:
    """(wall seconds, peak RSS in MB) of one process, which must succeed (exit 0 or 1)."""
    with tempfile.NamedTemporaryFile(suffix=".peak") as peak_file:
        wrapped = [TIME, "-f", "%M", "-o", peak_file.name, *command] if TIME else command
        started = time.perf_counter()
        process = subprocess.Popen(
            wrapped, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
        )
        _, status, _ = os.wait4(process.pid, 0)
        seconds = time.perf_counter() - started
        if status not in (0, 256):
            error = process.stderr.read().decode()[-2000:] if process.stderr else ""
            raise SystemExit(f"{' '.join(command[:4])}... failed ({status}): {error}")
        text = Path(peak_file.name).read_text().split() if TIME else []
    return seconds, float(text[-1]) / 1024 if text else float("nan")

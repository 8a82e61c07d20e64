"""Which sandbox a task's samples run in: the one asked for by name, or the strongest that
works here (bubblewrap, then Podman, then Docker); `local` only when asked for by name.
"""

from __future__ import annotations

import functools
import hashlib
import json
import shutil
import subprocess as sp
import sys
import tempfile
from pathlib import Path

from ...core import GenotexError
from ._folder_sandbox import HOME
from ._podman import default_image, podman_problem
from ._sandbox_spec import SandboxLimits, bwrap_problem

__all__ = [
    "SANDBOXES",
    "choose_sandbox",
    "docker_problem",
    "inspect_sandbox",
    "sandbox_problem",
]

#: The sandboxes a task may ask for by name, the isolated ones in the order they are tried.
SANDBOXES = ("bwrap", "podman", "docker", "local")
#: The oldest Docker Engine Inspect's Docker sandbox accepts.
DOCKER_MINIMUM = (24, 0, 6)


def _version(text: str) -> tuple[int, ...]:
    numbers = []
    for part in text.strip().split("+")[0].split("-")[0].split("."):
        if not (part.isascii() and part.isdigit()):
            break
        numbers.append(int(part))
    return tuple(numbers)


@functools.cache
def docker_problem(image: str) -> str | None:
    """Why a sample cannot run in Docker with `image` here, in one sentence, or None."""
    binary = shutil.which("docker")
    if binary is None:
        return "no docker found"
    try:
        asked = [binary, "version", "--format", "{{.Server.Version}}"]
        server = sp.run(asked, capture_output=True, text=True, timeout=30)
        if server.returncode != 0 or not server.stdout.strip():
            return "no Docker daemon answers here"
        if _version(server.stdout) < DOCKER_MINIMUM:
            return (
                f"Docker Engine {server.stdout.strip()} is older than the 24.0.6 that Inspect's "
                "Docker sandbox needs"
            )
        found = sp.run([binary, "image", "inspect", image], capture_output=True, timeout=30)
    except (OSError, sp.SubprocessError) as exc:
        return f"{binary} cannot run ({exc})"
    if found.returncode != 0:
        return f"no image {image} in Docker: build it with `genotex harness image`"
    return None


def sandbox_problem(kind: str, image: str) -> str | None:
    """Why the sandbox `kind` cannot run here, or None."""
    if kind == "bwrap":
        return bwrap_problem()
    if kind == "podman":
        return podman_problem(image)
    if kind == "docker":
        return docker_problem(image)
    return None


def choose_sandbox(kind: str | None, image: str | None = None) -> str:
    """The sandbox asked for, or the strongest that works here (`local` only when named)."""
    if kind not in (None, "", "auto"):
        if kind not in SANDBOXES:
            raise GenotexError(f"sandbox must be one of {', '.join(SANDBOXES)}, not {kind!r}")
        return str(kind)
    problems = []
    for candidate in SANDBOXES[:-1]:
        problem = sandbox_problem(candidate, image or default_image())
        if problem is None:
            print(f"genotex: each sample's agent runs in the {candidate} sandbox", file=sys.stderr)
            return candidate
        problems.append(f"{candidate}: {problem}")
    raise GenotexError(
        f"no isolated sandbox works on this machine ({'; '.join(problems)}); make one work, "
        "or ask for -T sandbox=local by name (no isolation: the agent can read any file you can)"
    )


def inspect_sandbox(kind: str, image: str, limits: SandboxLimits) -> str | tuple[str, str]:
    """What Inspect's Task takes for a sandbox: a registered provider, or Docker's compose."""
    if kind == "podman":
        return "genotex-podman"
    if kind == "docker":
        return ("docker", str(docker_compose(image, limits)))
    return kind


@functools.cache
def _compose_folder() -> Path:
    return Path(tempfile.mkdtemp(prefix="genotex-compose-"))


def docker_compose(image: str, limits: SandboxLimits) -> Path:
    """A compose file for Inspect's Docker sandbox: genotex's image (never pulled), no network,
    every capability dropped, no privilege gained, no swap, a size-bounded `/tmp`, the limits
    of `limits` (a file in a folder of this process's). The root file system stays writable:
    Inspect copies each sample's files into it, so `/home/agent` is bounded by no size.
    """
    service = {
        "image": image,
        "x-local": True,
        "init": True,
        "network_mode": "none",
        "working_dir": HOME,
        "command": "sleep infinity",
        "cap_drop": ["ALL"],
        "security_opt": ["no-new-privileges:true"],
        "read_only": False,  # Inspect writes each sample's files into the container
        "mem_limit": f"{limits.memory_mb}m",
        "memswap_limit": f"{limits.memory_mb}m",  # no swap beyond the memory bound
        "pids_limit": limits.processes,
        "environment": {"HOME": HOME, "TMPDIR": "/tmp"},  # the image's and these, no host's
        "tmpfs": [f"/tmp:size={limits.disk_mb}m,nr_inodes={limits.files},mode=1777"],
        "ulimits": {
            "nofile": {"soft": 1024, "hard": 1024},
            "core": {"soft": 0, "hard": 0},
            "cpu": {"soft": limits.cpu_seconds, "hard": limits.cpu_seconds + 5},
            "fsize": {"soft": limits.file_mb << 20, "hard": limits.file_mb << 20},
        },
    }
    text = json.dumps({"services": {"default": service}}, indent=1, sort_keys=True)  # JSON is YAML
    path = _compose_folder() / f"compose-{hashlib.sha256(text.encode()).hexdigest()[:16]}.yaml"
    path.write_text(text + "\n")
    return path

"""Build genotex's sandbox image for Podman or Docker, offline.

The build context is a fresh folder holding the image definition and `wheels/`:
genotex's wheel, built from its checkout (or the wheel given), and the wheels of
everything it needs with the `[mcp]` extra, made on this machine by pip. The
build itself runs with no network, so a machine with no image registry builds
it from a base imported locally (`mmdebstrap` + `podman import`, as CI does).
"""

from __future__ import annotations

import shutil
import subprocess as sp
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from ..._version import __version__
from ...core import GenotexError
from ._podman import default_image, podman_binary
from ._sandbox_spec import last_line

__all__ = ["ImageBuild", "build_image"]

#: The image definition and its build-context filter, shipped in the package.
IMAGE_FOLDER = Path(__file__).parent / "image"


@dataclass(frozen=True)
class ImageBuild:
    """A built image: its tag, the engine and base it was built with, what it took."""

    tag: str
    engine: str
    base: str
    wheels: int
    seconds: float


def _checkout() -> Path | None:
    """The source checkout genotex runs from (an editable install), if it does."""
    root = Path(__file__).resolve().parents[3]
    pyproject = root / "pyproject.toml"
    if pyproject.is_file() and 'name = "genotex"' in pyproject.read_text(errors="replace"):
        return root
    return None


def _engine_binary(engine: str) -> str:
    found = podman_binary() if engine == "podman" else shutil.which("docker")
    if engine not in ("podman", "docker") or found is None:
        raise GenotexError(f"cannot build the sandbox image: no {engine} found on this machine")
    return found


def _wheels(source: Path, folder: Path) -> int:
    """Build genotex's wheel and its dependencies' (with `[mcp]`) into folder; their count."""
    asked = [sys.executable, "-m", "pip", "wheel", "--quiet", "--disable-pip-version-check"]
    asked += ["--wheel-dir", str(folder), f"{source}[mcp]"]
    done = sp.run(asked, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise GenotexError(f"cannot build the wheels of {source}: {last_line(done.stderr, 300)}")
    return len(list(folder.glob("*.whl")))


def build_image(
    *,
    engine: str = "podman",
    base: str | None = None,
    tag: str | None = None,
    wheel: Path | None = None,
) -> ImageBuild:
    """Build the sandbox image with `engine` from `base`, offline; tag it `tag`.

    Parameters
    ----------
    engine
        ``"podman"`` or ``"docker"``.
    base
        An image with ``python3`` and its ``venv`` module, of the Python this
        machine runs (the wheels are built here); by default the public
        ``python:3.11-slim``, which needs a registry.
    tag
        The image's name; by default the one the sandboxes look for
        (``localhost/genotex-sandbox:<version>``).
    wheel
        genotex's wheel, where genotex is not run from a checkout.
    """
    binary = _engine_binary(engine)
    source = wheel if wheel is not None else _checkout()
    if source is None:
        raise GenotexError(
            "cannot build the sandbox image: genotex is not run from a source checkout, "
            "so give its wheel"
        )
    if not source.exists():
        raise GenotexError(f"cannot build the sandbox image: {source} does not exist")
    tag = tag or default_image()
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="genotex-image-") as folder:
        context = Path(folder)
        for name in ("Containerfile", ".dockerignore"):
            shutil.copyfile(IMAGE_FOLDER / name, context / name)
        (context / "wheels").mkdir()
        count = _wheels(source.resolve(), context / "wheels")
        asked = [binary, "build", "--network", "none", "--file", str(context / "Containerfile")]
        asked += ["--tag", tag, "--build-arg", f"GENOTEX_VERSION={__version__}"]
        asked += ["--build-arg", f"BASE={base}"] if base else []
        done = sp.run([*asked, str(context)], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        python = f"{sys.version_info.major}.{sys.version_info.minor}"
        raise GenotexError(
            f"{engine} could not build the sandbox image ({last_line(done.stderr, 300)}); the base "
            f"needs python3 {python} and its venv module, as the wheels are built for this Python"
        )
    used = base or "docker.io/library/python:3.11-slim"
    return ImageBuild(tag, engine, used, count, time.monotonic() - started)

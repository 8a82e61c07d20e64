"""What works here: `genotex doctor`, the checkup a newcomer runs first (in the harness's
package, the one library layer that may try the sandboxes; it needs no Inspect itself).

It lists genotex's version and the libraries its numbers depend on, each extra (installed or
not, and what it enables), each sandbox (working here or not, and why: by trying it, as a
task does before its first sample), the external tools the report, the LaTeX tables and the
sandboxes use, the table cache, and the Inspect model providers whose SDK is importable.
Nothing is installed or changed; every check is said, none raises.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import platform
import shutil
import subprocess
import sys
from dataclasses import asdict, dataclass, field
from typing import Any

from .._version import __version__
from ..core import TableCache, extra_hint

__all__ = ["Check", "Checkup", "checkup"]

#: (extra, the module that tells it is installed, its distribution, what it enables)
EXTRAS = (
    ("harness", "inspect_ai", "inspect-ai",
     "Inspect tasks (inspect eval genotex/e2e, genotex/analysis), GenoAgent, harness export"),
    ("hub", "huggingface_hub", "huggingface_hub", "genotex download benchmark"),
    ("mcp", "mcp", "mcp", "genotex mcp, and -T tools=genotex"),
    ("anndata", "anndata", "anndata", "cohorts as AnnData (cohort_anndata, raw_cohort_anndata)"),
    ("formula", "formulaic", "formulaic", "design formulas (GeneAnalysis(design=...))"),
    ("limma", "inmoose", "inmoose", "limma's moderated t (GeneAnalysis(moderated=True))"),
    ("dask", "distributed", "distributed", "--scheduler: regress, preprocess, diagnose on Dask"),
    ("mygene", "mygene", "mygene", "--synonyms mygene (online symbol lookup)"),
    ("docs", "mkdocs", "mkdocs", "mkdocs build of docs/"),
)  # fmt: skip
#: (tool, the commands to look for, what it is for)
TOOLS = (
    ("bwrap", ("bwrap",), "the default sandbox of the Inspect tasks"),
    ("podman", ("podman",), "the podman sandbox (and genotex harness image)"),
    ("docker", ("docker",), "the docker sandbox"),
    ("chromium", ("chromium", "chromium-browser", "google-chrome"),
     "looking at the HTML report headless (screenshots, PDF)"),
    ("pdflatex", ("pdflatex",), "compiling leaderboard --format latex tables (booktabs)"),
)  # fmt: skip
#: (Inspect's provider, the module its SDK is) for the providers a GenoTEX run names most
PROVIDERS = (
    ("openai", "openai"), ("anthropic", "anthropic"), ("google", "google.genai"),
    ("mistral", "mistralai"), ("groq", "groq"), ("grok", "xai_sdk"),
    ("azureai", "azure.ai.inference"), ("bedrock", "aioboto3"), ("together", "openai"),
    ("openrouter", "openai"), ("ollama", "openai"), ("hf", "transformers"),
)  # fmt: skip


@dataclass(frozen=True)
class Check:
    """One thing checked: whether it works here, its version or why not, and what it is for."""

    name: str
    ok: bool
    detail: str
    enables: str = ""


@dataclass(frozen=True)
class Checkup:
    """Everything `genotex doctor` says, as data (`to_dict` for `--json`)."""

    versions: dict[str, str]
    extras: tuple[Check, ...]
    sandboxes: tuple[Check, ...]
    tools: tuple[Check, ...]
    providers: tuple[Check, ...]
    cache: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a parent package missing, or a broken one
        return False


def _version(distribution: str) -> str:
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return "installed"


def _extras() -> tuple[Check, ...]:
    return tuple(
        Check(extra, True, _version(dist), enables)
        if _installed(module)
        else Check(extra, False, f"not installed: {extra_hint(extra)}", enables)
        for extra, module, dist, enables in EXTRAS
    )


def _sandboxes() -> tuple[Check, ...]:
    """Each sandbox tried here, as a task tries it before its first sample."""
    purpose = {"bwrap": "isolated, no daemon", "podman": "isolated, a container",
               "docker": "isolated, Inspect's Docker sandbox",
               "local": "no isolation: the agent runs as you"}  # fmt: skip
    if not _installed("inspect_ai"):
        why = "needs the harness extra (Inspect)"
        return tuple(Check(kind, False, why, purpose[kind]) for kind in purpose)
    from .sandboxes import SANDBOXES, default_image, sandbox_problem

    image, checks = default_image(), []
    for kind in SANDBOXES:
        problem = sandbox_problem(kind, image)
        checks.append(Check(kind, problem is None, problem or "works here", purpose[kind]))
    return tuple(checks)


def _tool_version(binary: str) -> str:
    try:
        done = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.SubprocessError) as exc:
        return f"found at {binary}, but it does not run ({exc.__class__.__name__})"
    first = (done.stdout or done.stderr).strip().splitlines()
    return first[0][:100] if first else f"found at {binary}"


def _tools() -> tuple[Check, ...]:
    checks = []
    for name, commands, enables in TOOLS:
        binary = next((found for c in commands if (found := shutil.which(c))), None)
        if binary is None:
            checks.append(Check(name, False, f"not found ({', '.join(commands)})", enables))
        else:
            checks.append(Check(name, True, _tool_version(binary), enables))
    return tuple(checks)


def _providers() -> tuple[Check, ...]:
    return tuple(
        Check(
            provider,
            _installed(module),
            f"its SDK ({module}) is " + ("installed" if _installed(module) else "not installed"),
        )  # fmt: skip
        for provider, module in PROVIDERS
    )


def _cache() -> dict[str, Any]:
    try:
        info = TableCache.default(None).info()
    except (OSError, ValueError) as exc:
        return {"error": str(exc)}
    return {"folder": str(info.folder), "entries": info.entries, "bytes": info.bytes,
            "max_bytes": info.max_bytes}  # fmt: skip


def checkup(*, sandboxes: bool = True) -> Checkup:
    """What works here: versions, extras, sandboxes (tried unless `sandboxes=False`), tools,
    model providers and the cache. Never raises for what it finds missing.
    """
    import numpy
    import pandas

    versions = {
        "genotex": __version__,
        "python": platform.python_version(),
        "pandas": pandas.__version__,
        "numpy": numpy.__version__,
        "platform": f"{platform.system()} {platform.release()} ({platform.machine()})",
        "executable": sys.executable,
    }
    return Checkup(
        versions, _extras(), _sandboxes() if sandboxes else (), _tools(), _providers(), _cache()
    )

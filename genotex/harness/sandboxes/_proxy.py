"""The sandbox behind Inspect's proxy: `sandbox()` hands out a proxy that records each call;
the scorer, the kernel and the sandboxed MCP server need the sandbox itself.
"""

from __future__ import annotations

from inspect_ai.util import SandboxEnvironment

from ._folder_sandbox import HostFolderSandbox

__all__ = ["own_sandbox", "unproxied"]


def unproxied(environment: SandboxEnvironment) -> SandboxEnvironment:
    """The sandbox behind Inspect's proxy, or the one given when it is no proxy."""
    inner = getattr(environment, "_sandbox", environment)
    return inner if isinstance(inner, SandboxEnvironment) else environment


def own_sandbox(environment: SandboxEnvironment) -> HostFolderSandbox | None:
    """genotex's own sandbox (`bwrap`, `podman`) behind Inspect's proxy, if it is one."""
    inner = unproxied(environment)
    return inner if isinstance(inner, HostFolderSandbox) else None

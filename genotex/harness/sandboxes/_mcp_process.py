"""genotex's MCP tools (`-T tools=genotex`) served from inside an isolated sandbox.

Inspect's sandboxed MCP transport needs a long-lived helper in the sandbox, which neither
`bwrap` (a fresh namespace a command) nor genotex's podman container holds. The server is
instead one long-lived process started, as GenoAgent's kernel is, inside the sample's sandbox
under its confinement and limits (`process_argv`), its standard streams the host's: Inspect's
stdio MCP client talks to it, one server a session, made when the sample's agent connects.
"""

from __future__ import annotations

from inspect_ai.tool import MCPServer
from inspect_ai.tool._mcp._context import MCPServerContext
from inspect_ai.tool._mcp._local import MCPServerLocal, _stdio_client_forwarding_stderr
from inspect_ai.util import sandbox
from mcp.client.stdio import StdioServerParameters

from ._proxy import own_sandbox

__all__ = ["sandboxed_mcp_server"]


def sandboxed_mcp_server(python_exe: str) -> MCPServer:
    """genotex's MCP server in the current sample's `bwrap` or `podman` sandbox."""

    def client() -> MCPServerContext:  # called in the sample's context, once a session
        own = own_sandbox(sandbox())
        if own is None:
            raise RuntimeError("genotex's sandboxed MCP server needs the bwrap or podman sandbox")
        command = [python_exe, "-m", "genotex", "mcp", "--root", ".", "--write", "output"]
        argv = own.process_argv(command)
        parameters = StdioServerParameters(command=argv[0], args=argv[1:], cwd=str(own.folder))
        return _stdio_client_forwarding_stderr(parameters, "genotex")

    return MCPServerLocal(client, name="genotex", events=True)

"""genotex's MCP tools (`-T tools=genotex`) served from inside an isolated sandbox.

Inspect's sandboxed MCP transport needs a long-lived helper in the sandbox, which neither
`bwrap` (a fresh namespace a command) nor genotex's podman container holds. The server is
instead one long-lived process started, as GenoAgent's kernel is, inside the sample's sandbox
under its confinement and limits (`process_argv`), its standard streams the host's: Inspect's
stdio MCP client talks to it, one server a session, made when the sample's agent connects.

Under `local` the server is the same stdio process, started on the host in the sample's
working folder. Inspect's sandboxed transport would work there too, but its helper keeps the
sample open about 35 s after the agent is done (measured: 37.9 s against 1.5 s under bwrap).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from inspect_ai.util import sandbox
from inspect_ai.util._sandbox.local import LocalSandboxEnvironment

from ._proxy import own_sandbox, unproxied

if TYPE_CHECKING:
    from inspect_ai.tool import MCPServer
    from inspect_ai.tool._mcp._context import MCPServerContext

__all__ = ["local_mcp_server", "sandboxed_mcp_server"]

#: the server's command line, run in the sample's working folder
_SERVER = ["-m", "genotex", "mcp", "--root", ".", "--write", "output"]


def sandboxed_mcp_server(python_exe: str) -> MCPServer:
    """genotex's MCP server in the current sample's `bwrap` or `podman` sandbox."""
    from inspect_ai.tool._mcp._local import MCPServerLocal, _stdio_client_forwarding_stderr
    from mcp.client.stdio import StdioServerParameters  # the MCP client: when a task asks

    def client() -> MCPServerContext:  # called in the sample's context, once a session
        own = own_sandbox(sandbox())
        if own is None:
            raise RuntimeError("genotex's sandboxed MCP server needs the bwrap or podman sandbox")
        argv = own.process_argv([python_exe, *_SERVER])
        parameters = StdioServerParameters(command=argv[0], args=argv[1:], cwd=str(own.folder))
        return _stdio_client_forwarding_stderr(parameters, "genotex")

    return MCPServerLocal(client, name="genotex", events=True)


def local_mcp_server(python_exe: str) -> MCPServer:
    """genotex's MCP server for the current sample's `local` sandbox: a host process in the
    sample's working folder (the `local` sandbox isolates nothing).
    """
    from inspect_ai.tool._mcp._local import MCPServerLocal, _stdio_client_forwarding_stderr
    from mcp.client.stdio import StdioServerParameters  # the MCP client: when a task asks

    def client() -> MCPServerContext:  # called in the sample's context, once a session
        here = unproxied(sandbox())
        if not isinstance(here, LocalSandboxEnvironment):
            raise RuntimeError("genotex's local MCP server needs the local sandbox")
        parameters = StdioServerParameters(command=python_exe, args=_SERVER,
                                           cwd=here.directory.name)  # fmt: skip
        return _stdio_client_forwarding_stderr(parameters, "genotex")

    return MCPServerLocal(client, name="genotex", events=True)

"""``multiplex mcp -p NAME``: the MCP server over stdio (docs/agents.md#mcp-over-stdio).

Newline-delimited JSON-RPC on stdin/stdout (the SDK keeps stray output of
handlers and children off the wire). One connection per process, so one
default session per process; the runs, the gate, the records are a gateway's
(without its HTTP side), and a ``cluster:`` block makes its approvals
answerable on every node.
"""

from __future__ import annotations

import asyncio
import secrets

import anyio
from mcp.server.stdio import stdio_server

from multiplex.gateway._gateway import Gateway
from multiplex.gateway.mcp._service import Fixed, McpService
from multiplex.supervision import Supervisor

__all__ = ["serve_stdio"]


def serve_stdio(
    sup: Supervisor, profile: str, *, session: str | None = None, grace: float = 10.0
) -> None:
    """Serve ``profile``'s MCP tools on stdin/stdout until the client closes stdin.

    ``session`` fixes the multiplex session of every call. At the end, pending
    approvals are withdrawn (``cancelled``) and running commands get ``grace``
    seconds; the supervisor is left to its owner.
    """
    sup.view(profile)  # unknown or broken: a one-line error before any protocol starts
    gateway = Gateway(
        sup,
        admin_token=secrets.token_urlsafe(32),  # nobody holds it: there is no HTTP side
        max_runs_per_profile=sup.config.gateway.max_runs_per_profile,
    )
    service = McpService(gateway, Fixed(profile, session))

    async def main() -> None:
        if gateway.cluster is not None:
            await gateway.cluster.start()
        try:
            async with stdio_server() as (read, write):
                server = service.server
                await server.run(read, write, server.create_initialization_options())
        finally:
            await asyncio.to_thread(gateway.drain, grace)
            if gateway.cluster is not None:
                await gateway.cluster.stop()

    anyio.run(main)

"""``multiplex mcp -p NAME``: the profile's gated tools for an MCP client over stdio (docs/agents.md#mcp-over-stdio)."""

from __future__ import annotations

from typing import Annotated

import typer

from multiplex.cli._state import state_of

__all__ = ["mcp"]


def mcp(
    ctx: typer.Context,
    profile: Annotated[
        str, typer.Option("-p", "--profile", help="Profile whose gate, sandbox and records apply.")
    ],
    session: Annotated[
        str | None,
        typer.Option(
            "--session", metavar="NAME", help="Fix the session (default: one per connection)."
        ),
    ] = None,
    grace: Annotated[
        float,
        typer.Option("--grace", min=0.0, help="Seconds running commands may finish at the end."),
    ] = 10.0,
) -> None:
    """Serve run_command, execute_code, test_command, list_approvals over stdio (MCP).

    Example: multiplex mcp -p research
    """
    from multiplex.gateway.mcp import serve_stdio  # the SDK only when serving

    sup = state_of(ctx).supervisor(profile, context="api")
    try:
        sup.start()  # a revoked rule or a new deny applies to the next call at once
        name = next(iter(sup.profiles))
        serve_stdio(sup, name, session=session, grace=grace)
    finally:
        sup.close()

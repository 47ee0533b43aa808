"""``multiplex up [--host H] [--port P]``: serve the HTTP gateway (docs/gateway.md, docs/cli.md)."""

from __future__ import annotations

import os
import secrets
import sys
from typing import Annotated

import typer

from multiplex.cli._state import state_of

__all__ = ["ADMIN_TOKEN_ENV", "up"]

ADMIN_TOKEN_ENV = "MULTIPLEX_ADMIN_TOKEN"


def up(
    ctx: typer.Context,
    host: Annotated[
        str | None,
        typer.Option("--host", help="Address to bind (default: gateway.host, 127.0.0.1)."),
    ] = None,
    port: Annotated[
        int | None,
        typer.Option(
            "--port", min=0, max=65535, help="Port (default: gateway.port, 8765; 0 = any free)."
        ),
    ] = None,
    grace: Annotated[
        float,
        typer.Option(
            "--grace", min=0.0, help="Seconds running commands may finish after SIGTERM/SIGINT."
        ),
    ] = 10.0,
) -> None:
    """Serve the HTTP gateway and dashboard until SIGTERM or Ctrl-C."""
    from multiplex.gateway import GatewayServer, serve  # uvicorn only when serving

    state = state_of(ctx)
    sup = state.supervisor(context="gateway")
    gateway = sup.config.gateway
    token = os.environ.get(ADMIN_TOKEN_ENV, "").strip()
    generated = not token
    if generated:
        token = secrets.token_urlsafe(32)

    def announce(server: GatewayServer) -> None:
        # Printed once; the token only when this process made it up.
        suffix = f" (admin token: {token})" if generated else ""
        sys.stderr.write(f"multiplex gateway on {server.url}{suffix}\n")
        sys.stderr.flush()

    serve(
        sup,
        admin_token=token,
        host=host or gateway.host,
        port=gateway.port if port is None else port,
        grace=grace,
        announce=announce,
    )

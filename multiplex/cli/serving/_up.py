"""``multiplex up [--host H] [--port P]``: serve the HTTP gateway (docs/gateway.md, docs/cli.md).

While it serves, the gateway keeps its own state entry,
``.multiplex/gateways/<port>/`` next to ``multiplex.yaml`` (``_gateways``): the
URL, its pid and a generated admin token (mode 0600, in 0700 folders), so the
CLI on the same machine can talk to it; the entry is removed when it stops, and
no other gateway's entry is touched.
"""

from __future__ import annotations

import os
import secrets
import sys
import urllib.parse
from typing import TYPE_CHECKING, Annotated

import typer

from multiplex.cli._human import local_time
from multiplex.cli._state import state_of
from multiplex.cli.remote._gateways import GatewayEntry, write_entry
from multiplex.cli.serving._init import init_if_pid1

if TYPE_CHECKING:
    from multiplex.supervision import Supervisor

__all__ = ["ADMIN_TOKEN_ENV", "up"]

ADMIN_TOKEN_ENV = "MULTIPLEX_ADMIN_TOKEN"


def _broken(sup: Supervisor) -> str:
    """Lines for the banner: each profile whose file is broken, and what is served of it."""
    lines = []
    for name, profile in list(sup.profiles.items()):
        if profile.error is None:
            continue
        since = profile.last_good_since
        what = (
            f"serving the last good config since {local_time(since)}"
            if since is not None
            else "not served"
        )
        lines.append(f"profile {name}: {what}: {sup.gate.recorder.redact(profile.error)}\n")
    return "".join(lines)


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
    """Serve the HTTP gateway and dashboard until SIGTERM or Ctrl-C (SIGHUP reloads).

    Example: multiplex up --port 0
    """
    init_if_pid1()  # a container's PID 1: reap what bubblewrap leaves (docs/operations.md)
    from multiplex.gateway import GatewayServer, serve  # uvicorn only when serving

    state = state_of(ctx)
    sup = state.supervisor(context="gateway")
    gateway = sup.config.gateway
    token = os.environ.get(ADMIN_TOKEN_ENV, "").strip()
    generated = not token
    if generated:
        token = secrets.token_urlsafe(32)
    written: list[GatewayEntry] = []

    def announce(server: GatewayServer) -> None:
        # The entry first, so whoever reads the line below finds it.
        note = ""
        port = urllib.parse.urlsplit(server.url).port or 0
        try:
            entry = write_entry(sup.config.base_dir, port, server.url, token if generated else None)
            written.append(entry)
            if generated:
                note = f"admin token file: {entry.token_file} (mode 0600)\n"
        except OSError as exc:
            note = f"state entry not written under {sup.config.base_dir / '.multiplex'}: {exc}\n"
        # Printed once; the token only when this process made it up.
        suffix = f" (admin token: {token})" if generated else ""
        sys.stderr.write(f"multiplex gateway on {server.url}{suffix}\n{note}{_broken(sup)}")
        sys.stderr.flush()

    try:
        serve(
            sup,
            admin_token=token,
            host=host or gateway.host,
            port=gateway.port if port is None else port,
            grace=grace,
            announce=announce,
        )
    finally:
        for entry in written:  # only our own: never another gateway's entry
            entry.remove()

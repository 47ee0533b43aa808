"""``multiplex up [--host H] [--port P]``: serve the HTTP gateway (docs/gateway.md, docs/cli.md).

A generated admin token is written to ``.multiplex/admin-token`` next to
``multiplex.yaml`` (mode 0600, in a 0700 folder) so the CLI on the same machine
can talk to the gateway; the file is removed when the gateway stops.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import sys
from pathlib import Path
from typing import Annotated

import typer

from multiplex.cli._init import init_if_pid1
from multiplex.cli._state import state_of

__all__ = ["ADMIN_TOKEN_ENV", "admin_token_file", "gateway_url_file", "up"]

ADMIN_TOKEN_ENV = "MULTIPLEX_ADMIN_TOKEN"


def admin_token_file(base_dir: Path) -> Path:
    """Where ``up`` writes a generated admin token (docs/operations.md#the-admin-token)."""
    return base_dir / ".multiplex" / "admin-token"


def gateway_url_file(base_dir: Path) -> Path:
    """Where ``up`` writes the URL it serves on (``--port 0`` picks one)."""
    return base_dir / ".multiplex" / "url"


def _write_private(path: Path, text: str) -> None:
    path.parent.mkdir(mode=0o700, exist_ok=True)
    os.chmod(path.parent, 0o700)
    temp = path.with_name(f".{path.name}.{os.getpid()}")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text + "\n")
    os.replace(temp, path)


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
    """Serve the HTTP gateway and dashboard until SIGTERM or Ctrl-C (SIGHUP reloads)."""
    init_if_pid1()  # a container's PID 1: reap what bubblewrap leaves (docs/operations.md)
    from multiplex.gateway import GatewayServer, serve  # uvicorn only when serving

    state = state_of(ctx)
    sup = state.supervisor(context="gateway")
    gateway = sup.config.gateway
    token = os.environ.get(ADMIN_TOKEN_ENV, "").strip()
    generated = not token
    token_file = admin_token_file(sup.config.base_dir)
    url_file = gateway_url_file(sup.config.base_dir)
    if generated:
        token = secrets.token_urlsafe(32)
    written: dict[Path, str] = {}

    def announce(server: GatewayServer) -> None:
        # The files first, so whoever reads the line below finds them.
        note = ""
        with contextlib.suppress(OSError):
            _write_private(url_file, server.url)
            written[url_file] = server.url
        if generated:
            try:
                _write_private(token_file, token)
                written[token_file] = token
                note = f"admin token file: {token_file} (mode 0600)\n"
            except OSError as exc:
                note = f"admin token file not written: {token_file}: {exc.strerror}\n"
        # Printed once; the token only when this process made it up.
        suffix = f" (admin token: {token})" if generated else ""
        sys.stderr.write(f"multiplex gateway on {server.url}{suffix}\n{note}")
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
        # Only our own files: another gateway of the same project may have replaced them.
        for path, mine in written.items():
            with contextlib.suppress(OSError):
                if path.read_text(encoding="utf-8").strip() == mine:
                    path.unlink()

"""``multiplex approvals sessions`` and ``approvals revoke``: session grants of a running gateway (docs/cli.md).

Session grants live in the gateway that granted them (or in Redis for a
cluster), never in config.yaml: these commands ask the running gateway, as
``approvals list`` does.
"""

from __future__ import annotations

from typing import Annotated
from urllib.parse import quote

import typer
from rich.console import Console
from rich.table import Table

from multiplex.cli._output import emit_json
from multiplex.cli._state import state_of
from multiplex.cli.remote._client import GatewayError, client_for

__all__ = ["list_sessions", "revoke_grant"]


def list_sessions(
    ctx: typer.Context,
    profile: Annotated[
        str | None, typer.Option("-p", "--profile", help="Only this profile's sessions.")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Each session holding grants or yolo, with every grant.

    Example: multiplex approvals sessions -p default
    """
    client = client_for(state_of(ctx))
    rows = client.get("/v1/sessions", **({"profile": profile} if profile else {}))
    if as_json:
        emit_json(rows)
        return
    if not rows:
        typer.echo("no session holds a grant or yolo")
        return
    table = Table("profile", "session", "yolo", "grants")
    for row in rows:
        grants = "\n".join(row["grants"]) or "-"
        table.add_row(row["profile"], row["session_id"], "on" if row["yolo"] else "off", grants)
    Console(soft_wrap=True).print(table)


def revoke_grant(
    ctx: typer.Context,
    profile: Annotated[str, typer.Option("-p", "--profile", help="Profile name.")],
    session: Annotated[str, typer.Option("--session", help="The session id.")],
    rule: Annotated[
        str | None,
        typer.Argument(help="The grant to take back; without it every grant and yolo."),
    ] = None,
) -> None:
    """Take back a session grant (or all of them and yolo); waiting commands keep waiting.

    Example: multiplex approvals revoke -p default --session s1 'rm -rf ./build'
    """
    client = client_for(state_of(ctx))
    body = {"rule": rule} if rule is not None else {}
    path = f"/v1/sessions/{quote(profile, safe='')}/{quote(session, safe='')}/revoke"
    answer = client.post(path, body)
    what = repr(rule) if rule is not None else "every grant and yolo"
    if not answer["revoked"]:
        raise GatewayError(f"session {session!r} of {profile!r} held no {what}")
    typer.echo(f"revoked {what} of session {session!r} ({profile})")

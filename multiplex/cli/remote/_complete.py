"""Shell completion of profile names and approval and run ids (``multiplex --install-completion``).

Profile names come from the ``multiplex.yaml`` in use (``--config``,
``$MULTIPLEX_CONFIG`` or ``./multiplex.yaml``); ids from the running gateway the
CLI would talk to. A completer never fails: anything wrong completes nothing.
"""

from __future__ import annotations

from typing import Annotated, Any

import typer

from multiplex.cli._state import CliState

__all__ = ["ProfileOpt", "complete_approval", "complete_profile", "complete_run"]


def _state(ctx: Any) -> CliState:
    root = ctx.find_root()
    params = getattr(root, "params", {}) or {}
    mine = getattr(ctx, "params", {}) or {}
    return CliState(
        params.get("config") or mine.get("_global_config"),
        None,
        params.get("url") or mine.get("_global_url"),
        params.get("token") or mine.get("_global_token"),
    )


def complete_profile(ctx: typer.Context, incomplete: str) -> list[str]:
    """The served profile names starting with ``incomplete``."""
    try:
        names = _state(ctx).config().homes()
    except Exception:  # completion must never print a traceback into the shell
        return []
    return [name for name in names if name.startswith(incomplete)]


def _ids(ctx: typer.Context, path: str, key: str, incomplete: str) -> list[str]:
    from multiplex.cli.remote._client import client_for  # the gateway only when asked for ids

    try:
        client = client_for(_state(ctx))
        client._timeout = 3.0
        rows = client.get(path)
    except Exception:
        return []
    return [str(r[key]) for r in rows if str(r.get(key, "")).startswith(incomplete)]


def complete_approval(ctx: typer.Context, incomplete: str) -> list[str]:
    """Open approval ids of the running gateway starting with ``incomplete``."""
    return _ids(ctx, "/v1/approvals", "approval_id", incomplete)


def complete_run(ctx: typer.Context, incomplete: str) -> list[str]:
    """Run ids of the running gateway starting with ``incomplete``."""
    return _ids(ctx, "/v1/runs", "run_id", incomplete)


ProfileOpt = Annotated[
    str,
    typer.Option("-p", "--profile", help="Profile name.", autocompletion=complete_profile),
]

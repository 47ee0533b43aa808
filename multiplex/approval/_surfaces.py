"""The approval layer's per-profile surfaces, registered for the audit (docs/multiplexing.md#the-model)."""

from __future__ import annotations

from typing import Any

from multiplex.approval._gate import PENDING_KEY, SESSIONS_KEY
from multiplex.approval.grants._sessions import SessionTable
from multiplex.approval.waiting._pending import PendingTable
from multiplex.scopes import register_surface, resource_of

__all__: list[str] = []


def _render_sessions(table: SessionTable | None) -> dict[str, Any]:
    if table is None:
        return {}
    return {
        name: {"grants": sorted(state.grants.texts()), "yolo": state.yolo}
        for name, state in sorted(table.sessions().items())
    }


def _render_pending(table: PendingTable | None) -> list[str]:
    return [] if table is None else sorted(r.display for r in table.list_open())


register_surface(
    "session_grants",
    resource_of(SESSIONS_KEY),
    render=_render_sessions,
    description="session grants and session yolo",
    owns=(SESSIONS_KEY,),
)
register_surface(
    "pending_approvals",
    resource_of(PENDING_KEY),
    render=_render_pending,
    description="open approval requests",
    owns=(PENDING_KEY,),
)

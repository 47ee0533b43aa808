"""``/v1/approvals`` and a session's end (docs/gateway.md#open-approvals-and-what-the-gate-would-do).

The open approval requests a token may see (as rows, and as the events replayed
on connect), what the gate would do for a command (its checks in
``_verdict``), and the session reset and delete that cancel a session's waiting
approvals and end its kernels (docs/gateway.md#cancelling-resetting-a-session).
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any, Literal

from fastapi import APIRouter, HTTPException, Query
from fastapi.responses import Response

from multiplex.gateway._gateway import Gateway
from multiplex.gateway.api._models import ApprovalOut, ResetOut, TestIn, VerdictOut
from multiplex.gateway.api._verdict import verdict_of
from multiplex.gateway.events._event import Event, make_event
from multiplex.gateway.http._auth import Caller, Principal
from multiplex.gateway.http._http import ERRORS, GatewayDep, no_profile
from multiplex.gateway.runs._run import approval_row
from multiplex.gateway.shared import _remote as remote

__all__ = ["router", "visible_approval_requests"]

router = APIRouter()


@router.get("/v1/approvals", response_model=list[ApprovalOut], responses=ERRORS)
async def list_approvals(
    caller: Caller, gw: GatewayDep, state: Literal["open"] = Query("open")
) -> list[dict[str, Any]]:
    """Every open approval request this token may see, oldest first."""
    if gw.cluster is not None:
        return await remote.open_rows(gw, caller)
    rows = [
        approval_row(request)
        for name, table in gw.sup.gate.tables().items()
        if caller.sees(name)
        for request in table.list_open()
    ]
    return sorted(rows, key=lambda r: r["created_at"])


@router.post("/v1/sessions/{profile}/{session}/reset", response_model=ResetOut, responses=ERRORS)
async def reset_session(
    profile: str, session: str, caller: Caller, gw: GatewayDep
) -> dict[str, int]:
    """``/new``: drop the session's grants; its pending approvals end "session reset"; its kernels end."""
    if not caller.sees(profile) or profile not in gw.sup.profiles:
        raise no_profile(caller, profile)
    return {"cancelled": await _reset(gw, profile, session, "session reset")}


@router.delete("/v1/sessions/{profile}/{session}", response_model=ResetOut, responses=ERRORS)
async def delete_session(
    profile: str, session: str, caller: Caller, gw: GatewayDep
) -> dict[str, int]:
    """The session is over: like reset, its approvals end "session deleted" and its kernels end."""
    if not caller.sees(profile) or profile not in gw.sup.profiles:
        raise no_profile(caller, profile)
    return {"cancelled": await _reset(gw, profile, session, "session deleted")}


async def _reset(gw: Gateway, profile: str, session: str, cause: str) -> int:
    if gw.cluster is not None:  # every node's waits and kernels
        return await remote.reset_shared(gw, profile, session, cause)
    # Ending kernels waits until their processes are proven dead: off the event loop.
    return await asyncio.to_thread(gw.sup.reset_session, profile, session, cause)


@router.post("/v1/approvals/test", response_model=VerdictOut, responses=ERRORS)
async def test_approval(body: TestIn, caller: Caller, gw: GatewayDep) -> Response:
    """What the gate would do for a command (docs/cli.md Verdict): pure, writes nothing."""
    return await verdict_of(gw, caller, body)


async def visible_approval_requests(gw: Gateway, caller: Principal) -> list[Event]:
    """Every open approval.request the caller may see, as events (replayed on connect).

    In cluster mode every node's; this node's alone if Redis cannot be read.
    """
    if gw.cluster is not None:
        with contextlib.suppress(HTTPException):
            return remote.shared_requests(await remote.open_rows(gw, caller))
    return [
        make_event("approval.request", approval_row(request), name, request.run_id)
        for name, table in gw.sup.gate.tables().items()
        if caller.sees(name)
        for request in table.list_open()
    ]

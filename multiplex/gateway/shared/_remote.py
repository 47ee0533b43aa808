"""The routes' cluster paths: runs and prompts that live on any node (docs/cluster.md#runs).

Each helper is called by a route of ``_api_runs`` only when the gateway has a
cluster; a lost Redis answers 503 (the node is not ready), never a guess from
what this node last saw.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from typing import Any

from fastapi import HTTPException

from multiplex.cluster import ClusterUnavailable
from multiplex.gateway._gateway import Gateway
from multiplex.gateway.events._event import Event, make_event, sse
from multiplex.gateway.http._auth import Principal
from multiplex.gateway.http._http import SELF_APPROVE_REFUSED, not_found
from multiplex.gateway.runs._run import FINAL, Run
from multiplex.gateway.runs._run_prompts import RUN_CANCELLED
from multiplex.gateway.shared._shared import REDIS_UNAVAILABLE, ClusterBridge

__all__ = [
    "answer_shared",
    "cancel_remote",
    "open_rows",
    "remote_run",
    "remote_run_stream",
    "reset_shared",
    "shared_requests",
    "unavailable",
]

_ROW_FIELDS = (
    "approval_id",
    "run_id",
    "profile",
    "session_id",
    "command",
    "created_at",
    "expires_at",
)


def unavailable() -> HTTPException:
    return HTTPException(status_code=503, detail=REDIS_UNAVAILABLE)


def _bridge(gw: Gateway) -> ClusterBridge:
    assert gw.cluster is not None
    return gw.cluster


async def remote_run(gw: Gateway, caller: Principal, run_id: str) -> dict[str, Any]:
    """Another node's run document; 404 if unknown, expired or not the caller's."""
    try:
        doc = await _bridge(gw).cluster.runs.get(run_id)
    except ClusterUnavailable:
        raise unavailable() from None
    if doc is None or not caller.sees(str(doc.get("profile"))):
        raise not_found(f"no run {run_id!r}")
    doc.pop("node", None)
    return doc


async def open_rows(gw: Gateway, caller: Principal) -> list[dict[str, Any]]:
    """Every node's open prompts the caller may see, oldest first."""
    try:
        rows = await _bridge(gw).cluster.approvals.list_open()
    except ClusterUnavailable:
        raise unavailable() from None
    return [{k: r.get(k) for k in _ROW_FIELDS} for r in rows if caller.sees(str(r.get("profile")))]


def _conflict(approval_id: str, why: str) -> HTTPException:
    return HTTPException(status_code=409, detail=f"approval {approval_id!r} {why}")


async def answer_shared(
    gw: Gateway,
    caller: Principal,
    run_id: str,
    approval_id: str,
    answer: dict[str, Any],
    run: Run | None,
    may_answer: Callable[[str], bool],
) -> None:
    """Answer a prompt of any node, exactly once: 409 when not open or not this run's,
    403 when ``may_answer(profile)`` is False (``approvals.self_approve``)."""
    bridge = _bridge(gw)
    try:
        if caller.admin or (caller.profile is not None and may_answer(caller.profile)):
            # The usual answer, to the run's own prompt: checked and resolved in one trip.
            own = "" if caller.admin else str(caller.profile)
            outcome = await bridge.answer(approval_id, answer, run_id=run_id, profile=own)
            if outcome.matched:
                if not outcome.won:
                    raise _conflict(approval_id, "was already resolved")
                return
        if run is not None:
            profile = run.profile
            with run.lock:
                shown = run.pending.id if run.pending is not None else None
        else:
            doc = await remote_run(gw, caller, run_id)
            profile = str(doc.get("profile"))
            pending = doc.get("pending_approval") or {}
            shown = pending.get("approval_id") if isinstance(pending, dict) else None
        row = await bridge.cluster.approvals.get(approval_id)
        if row is None or row.get("profile") != profile:
            raise _conflict(approval_id, "is not open for this run")
        if row.get("run_id") != run_id and shown != approval_id:
            raise _conflict(approval_id, "is not open for this run")
        if not caller.admin and not may_answer(profile):
            raise HTTPException(status_code=403, detail=SELF_APPROVE_REFUSED)
        if row.get("state") != "open" or not (await bridge.answer(approval_id, answer)).won:
            raise _conflict(approval_id, "was already resolved")
    except ClusterUnavailable:
        raise unavailable() from None


async def cancel_remote(gw: Gateway, caller: Principal, run_id: str) -> dict[str, Any]:
    """Cancel another node's run: its open prompt ends here, its node stops the rest."""
    bridge = _bridge(gw)
    doc = await remote_run(gw, caller, run_id)
    if doc.get("status") in FINAL:
        return {"run_id": run_id, "status": doc.get("status"), "cancelled": 0}
    cancelled = 0
    try:
        pending = doc.get("pending_approval")
        if isinstance(pending, dict) and pending.get("approval_id"):
            doc = {"cancelled": RUN_CANCELLED}
            cancelled += int((await bridge.answer(str(pending["approval_id"]), doc)).won)
        await bridge.cluster.signals.apublish("cancel", {"run_id": run_id})
        for _ in range(20):  # a parked run ends within milliseconds on its node
            doc = await remote_run(gw, caller, run_id)
            if doc.get("status") in FINAL:
                break
            await asyncio.sleep(0.05)
    except ClusterUnavailable:
        raise unavailable() from None
    return {"run_id": run_id, "status": doc.get("status"), "cancelled": cancelled}


async def reset_shared(gw: Gateway, profile: str, session: str, cause: str) -> int:
    """``/new`` on every node: every node's prompts through Redis, then the waits and kernels here and elsewhere."""
    bridge = _bridge(gw)
    cancelled = 0
    try:
        # Every node's prompts first (ours settled at once), then what only this
        # node holds; the reset's broadcast withdraws what other nodes hold alone.
        for row in await bridge.cluster.approvals.list_open():
            if row.get("profile") == profile and row.get("session_id") == session:
                doc = {"cancelled": cause}
                cancelled += int((await bridge.answer(str(row["approval_id"]), doc)).won)
        cancelled += await asyncio.to_thread(gw.sup.reset_session, profile, session, cause)
        await asyncio.to_thread(bridge.broadcast_reset, profile, session, cause)
    except ClusterUnavailable:
        raise unavailable() from None
    return cancelled


async def remote_run_stream(
    gw: Gateway, caller: Principal, run_id: str, names: frozenset[str]
) -> AsyncIterator[bytes]:
    """Another node's run as server-sent events: its open prompt re-sent, then live events."""
    sub = gw.hub.subscribe(lambda e: e.run_id == run_id and e.name in names, follow=True)
    try:
        # Read after following: nothing between the read and the first event is lost.
        await gw.hub.listening(sub)
        doc = await remote_run(gw, caller, run_id)
        head = [b": connected\n\n"]
        sent: set[str] = set()
        pending = doc.get("pending_approval")
        if isinstance(pending, dict) and pending.get("approval_id"):
            sent.add(str(pending["approval_id"]))
            row = {
                "approval_id": pending["approval_id"],
                "run_id": run_id,
                "profile": doc.get("profile"),
                "session_id": doc.get("session_id"),
                "command": pending.get("command"),
                "created_at": pending.get("created_at"),
                "expires_at": pending.get("expires_at"),
            }
            head.append(sse("approval.request", row))
        finished = doc.get("status") in FINAL
        if finished:
            head.append(sse("run.finished", doc))
        yield b"".join(head)
        if finished:
            return
        async for event in sub.events():
            if event is None:
                yield b": keepalive\n\n"
                continue
            if event.name == "approval.request" and event.data["approval_id"] in sent:
                continue
            yield event.frame()
            if event.name == "run.finished":
                return
    finally:
        gw.hub.unsubscribe(sub)


def shared_requests(rows: list[dict[str, Any]]) -> list[Event]:
    """Open prompts of every node as the approval.request events replayed on connect."""
    return [
        make_event("approval.request", row, str(row.get("profile")), row.get("run_id"))
        for row in rows
    ]

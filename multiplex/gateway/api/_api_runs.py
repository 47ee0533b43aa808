"""``/v1/runs``: a run's creation, document, approval answer, cancel and events (docs/gateway.md#runs).

Starting a run (its profile, admission and wait) is in ``_submit``; the open
approvals and the session reset in ``_api_approvals``, mounted right after.
"""

from __future__ import annotations

import asyncio
from typing import Any

from fastapi import APIRouter, HTTPException
from fastapi.responses import Response

from multiplex.approval import AnswerNotSaved
from multiplex.approval.waiting._pending import Answer, Choice, PendingApproval, Resolution
from multiplex.gateway._gateway import Gateway
from multiplex.gateway.api._api_approvals import visible_approval_requests
from multiplex.gateway.api._models import (
    AnswerIn,
    CancelOut,
    OkOut,
    RunCreated,
    RunIn,
    RunOut,
)
from multiplex.gateway.api._submit import start_run
from multiplex.gateway.events._event import Event, sse
from multiplex.gateway.events._stream import Opened, event_stream
from multiplex.gateway.http._auth import Caller, Principal
from multiplex.gateway.http._http import (
    ERRORS,
    SELF_APPROVE_REFUSED,
    STREAM_ANSWERS,
    GatewayDep,
    json_response,
    not_found,
    sse_response,
)
from multiplex.gateway.runs._run import Run, approval_row
from multiplex.gateway.shared import _remote as remote

__all__ = ["router", "run_document", "start_run", "visible_approval_requests"]

router = APIRouter()
RUN_EVENTS = frozenset(
    {
        "approval.request",
        "approval.resolved",
        "approval.cancelled",
        "command.output",
        "command.finished",
        "egress.refused",
        "cell.finished",
        "run.finished",
    }
)


def _run_for(gw: Gateway, caller: Principal, run_id: str) -> Run:
    run = gw.runs.get(run_id)
    if run is None or not caller.sees(run.profile):
        raise not_found(f"no run {run_id!r}")
    return run


def _local(gw: Gateway, caller: Principal, run_id: str) -> Run | None:
    """This node's run, or None when another node may hold it (cluster mode only)."""
    run = gw.runs.get(run_id)
    if run is None and gw.cluster is not None:
        return None
    return _run_for(gw, caller, run_id)


_RUN_ERRORS: dict[int | str, dict[str, Any]] = {
    **ERRORS,
    413: {"description": "The request body is larger than gateway.max_request_bytes."},
    429: {"description": "The profile has gateway.max_runs_per_profile runs; see Retry-After."},
}


@router.post(
    "/v1/runs",
    status_code=202,
    response_model=RunCreated,
    responses={
        **_RUN_ERRORS,
        200: {"model": RunOut, "description": 'With "wait": the run, finished in time.'},
    },
)
async def create_run(body: RunIn, caller: Caller, gw: GatewayDep) -> Response:
    """Queue a run of ``commands`` (or ``code`` cells for the session's kernel); poll it, follow its events, or ``wait``.

    With ``"wait": seconds`` the answer is the run document (``GET /v1/runs/{id}``):
    200 once it finished, or 202 with it as it stands when the time is up.
    """
    return await start_run(gw, caller, body)


@router.get("/v1/runs/{run_id}", response_model=RunOut, responses=ERRORS)
async def get_run(run_id: str, caller: Caller, gw: GatewayDep) -> Response:
    """A run's status, each gated command's result, and its open approval if any."""
    return await run_document(gw, caller, run_id)


async def run_document(gw: Gateway, caller: Principal, run_id: str) -> Response:
    """``GET /v1/runs/{id}`` (the route and the fast path share it); any node's in cluster mode."""
    run = _local(gw, caller, run_id)
    if run is None:
        return json_response(await remote.remote_run(gw, caller, run_id))
    return json_response(await gw.document(run))


@router.post(
    "/v1/runs/{run_id}/approval",
    response_model=OkOut,
    responses={
        **ERRORS,
        403: {"description": "approvals.self_approve is false: a profile token may not answer."},
        409: {"description": "That approval is not open, or not this run's."},
        500: {"description": "An always answer's record or rule could not be written."},
        507: {"description": "No room to keep an always answer; the approval is still open."},
    },
)
async def answer_approval(
    run_id: str, body: AnswerIn, caller: Caller, gw: GatewayDep
) -> dict[str, bool]:
    """Answer the run's open approval: once, session, always (saves a rule) or deny."""
    if gw.cluster is not None:
        if body.rule is not None:  # the offered rules live on the node that asked
            raise HTTPException(status_code=422, detail="rule: not taken in cluster mode")
        local = _local(gw, caller, run_id)
        answer = Answer(Choice(body.choice), reason=body.reason, by=caller.label)
        doc = gw.cluster.stored_resolution(Resolution(answer=answer))
        await remote.answer_shared(
            gw, caller, run_id, body.approval_id, doc, local, lambda name: _self_approve(gw, name)
        )
        return {"ok": True}
    run = _run_for(gw, caller, run_id)
    request = gw.sup.gate.find(body.approval_id)
    # A run whose identical prompt was coalesced shows (and may answer) its leader's.
    mine = request is not None and (request is run.pending or request.run_id == run.run_id)
    if request is None or not mine or request.profile != run.profile:
        raise HTTPException(
            status_code=409, detail=f"approval {body.approval_id!r} is not open for this run"
        )
    if not caller.admin and not _self_approve(gw, run.profile):
        raise HTTPException(status_code=403, detail=SELF_APPROVE_REFUSED)
    if body.rule is not None and not _suggested(request, body.choice, body.rule):
        raise HTTPException(
            status_code=422, detail="rule: not one of this approval's suggestions for always"
        )
    answer = Answer(
        Choice(body.choice), rule=body.rule, reason=body.reason or None, by=caller.label
    )
    try:
        # An "always" answer is recorded (fsync) and its rule written first: off the loop.
        if answer.choice is Choice.ALWAYS:
            won = await asyncio.to_thread(gw.sup.gate.answer, request, answer)
        else:
            won = gw.sup.gate.answer(request, answer)
    except AnswerNotSaved as exc:  # docs/operations.md#a-full-disk: never {"ok": true}
        raise HTTPException(
            status_code=507 if exc.disk_full else 500,
            detail=f"{exc}; the approval is still open",
        ) from None
    if not won:
        raise HTTPException(
            status_code=409, detail=f"approval {body.approval_id!r} was already resolved"
        )
    return {"ok": True}


def _suggested(request: PendingApproval, choice: str, rule: str) -> bool:
    """docs/approvals.md#suggestions: an "always" answer may save one of the rules it offered."""
    offered = {s.rule for s in request.why.suggestions if not s.redacted}
    return choice == Choice.ALWAYS.value and rule in offered


def _self_approve(gw: Gateway, name: str) -> bool:
    # The current epoch's setting; a profile without a loaded config may not self-approve.
    profile = gw.sup.profiles.get(name)
    return profile is not None and profile.loaded and profile.state.settings.approvals.self_approve


@router.post("/v1/runs/{run_id}/cancel", response_model=CancelOut, responses=ERRORS)
async def cancel_run(run_id: str, caller: Caller, gw: GatewayDep) -> dict[str, Any]:
    """Cancel the run: its pending approval ends "run cancelled"; later commands never run."""
    found = _local(gw, caller, run_id)
    if found is None:
        return await remote.cancel_remote(gw, caller, run_id)
    run = found
    # Off the loop in a cluster: withdrawing a prompt and the events it ends write to Redis.
    cancelled = (
        gw.runs.cancel(run) if gw.cluster is None else await asyncio.to_thread(gw.runs.cancel, run)
    )
    # A parked or queued run ends within milliseconds; a running command is let finish.
    await asyncio.to_thread(run.done.wait, 1.0)
    with run.lock:
        status = run.status
    return {"run_id": run.run_id, "status": status, "cancelled": cancelled}


@router.get(
    "/v1/runs/{run_id}/events",
    responses={**ERRORS, **STREAM_ANSWERS},
)
async def run_events(run_id: str, caller: Caller, gw: GatewayDep) -> Any:
    """Server-sent events of one run; the open approval.request is re-sent on connect."""
    run = _local(gw, caller, run_id)
    if run is None:
        await remote.remote_run(gw, caller, run_id)  # 404 before the stream starts
        return sse_response(gw, caller, remote.remote_run_stream(gw, caller, run_id, RUN_EVENTS))
    return event_stream(gw, caller, _open_run(gw, run, caller))


async def _open_run(gw: Gateway, run: Run, caller: Principal) -> Opened:
    sent: set[str] = set()  # the open request re-sent on connect: never twice

    def skip(e: Event) -> bool:
        return e.name == "approval.request" and e.data["approval_id"] in sent

    sub = gw.hub.subscribe(
        lambda e: e.run_id == run.run_id and e.name in RUN_EVENTS and not skip(e),
        valid=lambda: gw.auth.current(caller),
    )
    # The subscription exists from ": connected" on; the replay goes in the
    # same write (one send per connection matters at hundreds of runs/s).
    head = [b": connected\n\n"]
    with run.lock:
        pending, finished = run.pending, run.finished
    if pending is not None and pending.open:
        sent.add(pending.id)
        head.append(sse("approval.request", approval_row(pending)))
    if finished:
        head.append(sse("run.finished", run.snapshot()))
    return Opened(sub, b"".join(head), skip, _last, finished)


def _last(event: Event) -> bool:
    return event.name == "run.finished"

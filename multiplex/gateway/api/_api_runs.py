"""``/v1/runs``, approvals and sessions (docs/gateway.md)."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from typing import Any, Literal

from fastapi import APIRouter, HTTPException, Query
from fastapi.responses import Response

from multiplex._errors import RoutingError
from multiplex.approval import AnswerNotSaved
from multiplex.approval.waiting._pending import Answer, Choice, PendingApproval, Resolution
from multiplex.cluster import ClusterUnavailable
from multiplex.gateway._gateway import Gateway
from multiplex.gateway.api._models import (
    AnswerIn,
    ApprovalOut,
    CancelOut,
    OkOut,
    ResetOut,
    RunCreated,
    RunIn,
    RunOut,
    TestIn,
    VerdictOut,
)
from multiplex.gateway.api._verdict import verdict_of
from multiplex.gateway.events._events import Event, make_event, sse
from multiplex.gateway.events._stream import Opened, event_stream
from multiplex.gateway.http._auth import Caller, Principal
from multiplex.gateway.http._http import (
    ERRORS,
    SELF_APPROVE_REFUSED,
    STREAM_ANSWERS,
    GatewayDep,
    json_response,
    no_profile,
    not_found,
    sse_response,
)
from multiplex.gateway.runs._run import FINAL, Run, approval_row
from multiplex.gateway.runs._runs import ShuttingDown, TooManyRuns
from multiplex.gateway.shared import _remote as remote
from multiplex.gateway.shared._shared import REDIS_UNAVAILABLE

__all__ = ["router", "run_document", "start_run", "visible_approval_requests"]

router = APIRouter()
INTERRUPTED = "the request that created the run was interrupted before it started"
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


_NO_ROUTE = "no served profile matches this route"


def _local(gw: Gateway, caller: Principal, run_id: str) -> Run | None:
    """This node's run, or None when another node may hold it (cluster mode only)."""
    run = gw.runs.get(run_id)
    if run is None and gw.cluster is not None:
        return None
    return _run_for(gw, caller, run_id)


def _target(gw: Gateway, caller: Principal, body: RunIn) -> str:
    sup = gw.sup
    try:
        if body.profile is not None:
            name = body.profile
        elif body.route is None and caller.profile is not None:
            name = caller.profile  # a profile token's runs default to its own profile
        elif body.route is not None:
            # docs/gateway.md#runs: a route that matches nothing is a 404, not the default.
            name = sup.route(**body.route.model_dump(), fallback=False)
        else:
            name = sup.route()
    except RoutingError as exc:
        if body.route is not None and not caller.admin:
            raise not_found(_NO_ROUTE) from None
        raise not_found(str(exc)) from None
    if body.route is not None and not caller.sees(name):
        # docs/security.md#tokens-and-ids: a route to another profile reads exactly
        # like a route to nothing; the token learns no other profile's name.
        raise not_found(_NO_ROUTE)
    if not caller.sees(name):
        raise no_profile(caller, name)
    try:
        sup.view(name)  # unknown or broken: not routable
    except RoutingError as exc:
        raise no_profile(caller, name, str(exc)) from None
    return name


RETRY_AFTER_SECONDS = 1
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


def _submitter(caller: Principal) -> str:
    """Who submitted a run, as its prompts name it (docs/approvals.md#what-a-prompt-shows)."""
    return "the admin token" if caller.admin else f"the {caller.profile} profile's token"


async def start_run(gw: Gateway, caller: Principal, body: RunIn) -> Response:
    """``POST /v1/runs`` for a validated body (the route and the fast path share it)."""
    profile = _target(gw, caller, body)
    fields = (profile, body.session_id, body.context, list(body.commands or ()))
    by = _submitter(caller)
    try:
        if gw.cluster is None:
            run = gw.runs.submit(*fields, code=body.code, reset=body.reset, asked_by=by)
        else:
            gw.cluster.check_ready()  # docs/cluster.md: no new run without Redis
            run = gw.runs.admit(*fields, code=body.code, reset=body.reset, asked_by=by)
            try:  # awaited, not on the loop's time: a silent Redis stalls this request only
                await gw.runs.announce(run)
            except ClusterUnavailable:
                gw.runs.abandon(run, REDIS_UNAVAILABLE)  # Redis known away: nothing written now
                raise ShuttingDown(REDIS_UNAVAILABLE) from None
            except BaseException:
                # This request was cancelled (a stop): the run must not hold its place.
                # In a thread: Redis may still be up, and this is the event loop.
                threading.Thread(
                    target=gw.runs.abandon, args=(run, INTERRUPTED), daemon=True
                ).start()
                raise
            gw.runs.start(run)
    except ShuttingDown as exc:
        raise HTTPException(status_code=503, detail=str(exc)) from None
    except TooManyRuns as exc:
        raise HTTPException(
            status_code=429, detail=str(exc), headers={"Retry-After": str(RETRY_AFTER_SECONDS)}
        ) from None
    if gw.runs.journal is not None:
        await gw.runs.journal.synced()  # an accepted run survives a crash (docs/operations.md)
    if not body.wait:
        with run.lock:
            status = run.status
        return json_response({"run_id": run.run_id, "status": status}, 202)
    await _until_done(gw, caller, run, body.wait)
    if not gw.auth.current(caller):
        raise HTTPException(status_code=401, detail="the bearer token was rotated or removed")
    document = await gw.document(run)
    return json_response(document, 200 if document["status"] in FINAL else 202)


async def _until_done(gw: Gateway, caller: Principal, run: Run, seconds: float) -> None:
    # Woken by the worker that finishes the run: no polling, no thread waits.
    # Also woken when the caller's token is rotated or removed (the hub's revalidate).
    loop = asyncio.get_running_loop()
    done = asyncio.Event()

    def wake() -> None:
        with contextlib.suppress(RuntimeError):  # the loop is gone (shutdown)
            loop.call_soon_threadsafe(done.set)

    run.on_done(wake)
    watch = None
    if not caller.admin:
        watch = gw.hub.subscribe(
            lambda e: False, valid=lambda: gw.auth.current(caller), on_close=done.set
        )
    try:
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(seconds):
                await done.wait()
    finally:
        if watch is not None:
            gw.hub.unsubscribe(watch)


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

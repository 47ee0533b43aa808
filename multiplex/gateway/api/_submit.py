"""Submitting a run: ``POST /v1/runs`` past its body (docs/gateway.md#runs).

Which profile the run goes to (``profile``, ``route`` or the token's own), its
admission (the per-profile limit; in cluster mode Redis first), and the
optional ``wait`` for the finished run (docs/gateway.md#waiting-for-the-result).
The route and the fast path share :func:`start_run`.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading

from fastapi import HTTPException
from fastapi.responses import Response

from multiplex._errors import RoutingError
from multiplex.cluster import ClusterUnavailable
from multiplex.gateway._gateway import Gateway
from multiplex.gateway.api._models import RunIn
from multiplex.gateway.http._auth import Principal
from multiplex.gateway.http._http import json_response, no_profile, not_found
from multiplex.gateway.runs._run import FINAL, Run
from multiplex.gateway.runs._runs import ShuttingDown, TooManyRuns
from multiplex.gateway.shared._shared import REDIS_UNAVAILABLE

__all__ = ["start_run"]

INTERRUPTED = "the request that created the run was interrupted before it started"
RETRY_AFTER_SECONDS = 1
_NO_ROUTE = "no served profile matches this route"


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

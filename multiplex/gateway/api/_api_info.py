"""Profiles, identity, the live event stream, health and metrics (docs/gateway.md)."""

from __future__ import annotations

import asyncio
import re
from typing import Annotated, Any
from urllib.parse import urlencode

from fastapi import APIRouter, Header, HTTPException, Query
from fastapi.responses import JSONResponse, Response
from prometheus_client import CONTENT_TYPE_LATEST

from multiplex._errors import MultiplexError
from multiplex.cluster import ClusterUnavailable
from multiplex.gateway._gateway import Gateway
from multiplex.gateway.api._api_runs import visible_approval_requests
from multiplex.gateway.api._models import ProfileOut, ReloadOut, WhoAmI
from multiplex.gateway.events._event import Event, from_shared, stream_order
from multiplex.gateway.events._stream import Opened, event_stream
from multiplex.gateway.http._auth import Caller, Principal
from multiplex.gateway.http._http import ERRORS, STREAM_ANSWERS, GatewayDep, no_profile
from multiplex.supervision import describe_profile

__all__ = ["router"]

router = APIRouter()


def _describe(gw: Gateway, name: str) -> dict[str, Any]:
    try:
        data = describe_profile(gw.sup, name)
    except MultiplexError as exc:  # described as far as it can be, never a 500
        profile = gw.sup.profiles[name]
        data = {"name": name, "home": str(profile.home), "status": "error", "error": str(exc)}
        data.update(epoch=profile.epoch, last_reload=profile.last_reload)
    return data


PAGE_DEFAULT = 100
PAGE_MAX = 1000


@router.get("/v1/profiles", response_model=list[ProfileOut], responses=ERRORS)
async def list_profiles(
    caller: Caller,
    gw: GatewayDep,
    response: Response,
    limit: int = Query(PAGE_DEFAULT, ge=1, le=PAGE_MAX),
    offset: int = Query(0, ge=0),
    q: str = Query("", max_length=200, description="only names containing this (any case)"),
) -> list[dict[str, Any]]:
    """One page of the visible profiles, in serving order: settings (secrets masked), status, error.

    ``X-Total-Count`` says how many match; ``Link: <…>; rel="next"`` gives the
    next page while there is one (docs/gateway.md#profiles-decisions-identity).
    """
    needle = q.casefold()
    names = [
        name
        for name in gw.sup.profiles
        if caller.sees(name) and (not needle or needle in name.casefold())
    ]
    page = names[offset : offset + limit]
    response.headers["X-Total-Count"] = str(len(names))
    if offset + limit < len(names):
        query = urlencode({"limit": limit, "offset": offset + limit, **({"q": q} if q else {})})
        response.headers["Link"] = f'</v1/profiles?{query}>; rel="next"'
    return [_describe(gw, name) for name in page]


@router.get("/v1/profiles/{name}", response_model=ProfileOut, responses=ERRORS)
async def get_profile(name: str, caller: Caller, gw: GatewayDep) -> dict[str, Any]:
    """One profile's effective settings (secrets masked), epoch, last reload, error."""
    if not caller.sees(name) or name not in gw.sup.profiles:
        raise no_profile(caller, name)
    return _describe(gw, name)


@router.get("/v1/whoami", response_model=WhoAmI, responses=ERRORS)
async def whoami(caller: Caller) -> dict[str, Any]:
    """Which role the bearer token has (the dashboard's sign-in check)."""
    return {"role": caller.role, "profile": caller.profile}


@router.get(
    "/v1/events",
    responses={**ERRORS, **STREAM_ANSWERS},
)
async def all_events(
    caller: Caller,
    gw: GatewayDep,
    last_event_id: Annotated[str | None, Header(alias="Last-Event-ID")] = None,
) -> Any:
    """Every approval.*, run.*, command.*, egress.* and profile.* event this token may see and
    config.reloaded; open requests re-sent on connect, and in a cluster the events missed
    since ``Last-Event-ID``."""
    return event_stream(gw, caller, _open_live(gw, caller, last_event_id))


_KINDS = ("approval.", "run.", "command.", "egress.", "profile.")
# Events of the whole process, seen by every caller: what /readyz says of multiplex.yaml.
_EVERYONE = frozenset({"config.reloaded"})


def _sees(caller: Principal, e: Event) -> bool:
    """Whether ``caller``'s stream of every event carries ``e``."""
    return e.name in _EVERYONE or (caller.sees(e.profile) and e.name.startswith(_KINDS))


_POSITION = re.compile(r"[0-9]{1,20}-[0-9]{1,20}")


async def _missed(gw: Gateway, caller: Principal, last: str | None) -> list[Event]:
    """docs/gateway.md#server-sent-events: in a cluster, what this client's stream missed since ``last``."""
    if gw.cluster is None or last is None or not _POSITION.fullmatch(last.strip()):
        return []
    try:
        shared = await gw.cluster.cluster.events.since(last.strip())
    except ClusterUnavailable:
        return []  # the open requests below are still re-sent
    return [from_shared(e) for e in shared if caller.sees(e.profile) and e.name.startswith(_KINDS)]


async def _open_live(gw: Gateway, caller: Principal, last: str | None) -> Opened:
    sent: set[str] = set()  # approval ids re-sent on connect: their live request is skipped once
    upto: list[tuple[int, int]] = []  # the last replayed position: anything up to it is skipped

    def skip(e: Event) -> bool:
        if e.name == "approval.request" and e.data["approval_id"] in sent:
            sent.discard(e.data["approval_id"])
            return True
        return bool(upto and e.position) and stream_order(e.position or "") <= upto[0]

    sub = gw.hub.subscribe(
        lambda e: _sees(caller, e) and not skip(e),
        valid=lambda: gw.auth.current(caller),
        follow=True,
    )
    try:
        # Other nodes' events too, from here on (a cluster node reads them only
        # while a stream follows them).
        await gw.hub.listening(sub)
        head = [b": connected\n\n"]
        # Subscribed first, replayed second: an event arriving meanwhile is in the
        # queue, and skipped when the replay already carried it.
        replayed = await _missed(gw, caller, last)
        if replayed:
            upto.append(stream_order(replayed[-1].position or "0-0"))
        head.extend(event.frame() for event in replayed)
        for event in await visible_approval_requests(gw, caller):
            sent.add(event.data["approval_id"])
            head.append(event.frame())
    except BaseException:
        gw.hub.unsubscribe(sub)
        raise
    return Opened(sub, b"".join(head), skip)


@router.get("/metrics", responses={**ERRORS, 200: {"content": {"text/plain": {}}}})
async def metrics(caller: Caller, gw: GatewayDep) -> Response:
    """Prometheus text (admin token: the labels name every profile)."""
    if not caller.admin:
        raise HTTPException(status_code=404, detail="not found")
    return Response(gw.sup.metrics.render(), media_type=CONTENT_TYPE_LATEST)


@router.post("/v1/admin/reload", response_model=ReloadOut, responses=ERRORS)
async def admin_reload(caller: Caller, gw: GatewayDep) -> dict[str, Any]:
    """Re-read multiplex.yaml and every home now (admin token), as SIGHUP does."""
    if not caller.admin:
        raise HTTPException(status_code=404, detail="not found")
    return await asyncio.to_thread(gw.reload_config, "api")


@router.get("/healthz")
async def healthz() -> dict[str, str]:
    """Liveness: the process answers HTTP. No auth."""
    return {"status": "ok"}


@router.get(
    "/readyz",
    responses={503: {"description": "The watcher is not running, or a profile is degraded."}},
)
async def readyz(
    gw: GatewayDep,
    authorization: Annotated[str | None, Header(include_in_schema=False)] = None,
) -> JSONResponse:
    """Readiness: the config watcher is alive (or ``watch.mode: off``) and every profile
    records its decisions. No auth; with a token, the degraded profiles it may see are named."""
    watcher = gw.sup.watcher
    error = gw.sup.config_error
    degraded = await asyncio.to_thread(_degraded, gw)
    stale = await asyncio.to_thread(_last_good, gw)
    body: dict[str, Any] = {
        # multiplex.yaml broken: the last good one still serves (docs/operations.md).
        "config_ok": gw.sup.config_error is None,
        "config_error": None if error is None else gw.sup.gate.recorder.redact(error),
        "restart_required": list(gw.sup.restart_required),
        "ready": gw.ready and not degraded,
        "watch_mode": gw.sup.config.watch.mode,
        "watcher_alive": watcher is not None and watcher.alive,
        "shutting_down": gw.shutting_down,
        # docs/operations.md#a-full-disk: profiles whose last record failed run nothing.
        "degraded": len(degraded),
        # docs/configuration.md#validation: broken files whose last good config still serves.
        "serving_last_good": len(stale),
    }
    token = authorization.removeprefix("Bearer ").strip() if authorization else None
    caller = gw.auth.identify(token)
    if caller is not None:  # profile names are for a token that may see them
        body["degraded_profiles"] = [
            {"profile": name, "cause": cause} for name, cause in degraded if caller.sees(name)
        ]
        body["serving_last_good_profiles"] = [
            {"profile": name, "since": since} for name, since in stale if caller.sees(name)
        ]
    if gw.cluster is not None:
        body["cluster"] = {"node_id": gw.cluster.node_id, "redis": gw.cluster.up}
    return JSONResponse(body, status_code=200 if body["ready"] else 503)


def _last_good(gw: Gateway) -> list[tuple[str, float]]:
    found = []
    for name, profile in list(gw.sup.profiles.items()):
        since = profile.last_good_since
        if since is not None:
            found.append((name, since))
    return found


def _degraded(gw: Gateway) -> list[tuple[str, str]]:
    health = gw.sup.gate.recorder.health
    found = []
    for name, profile in list(gw.sup.profiles.items()):
        cause = health.failing(profile.home)
        if cause is not None:
            found.append((name, cause))
    return found

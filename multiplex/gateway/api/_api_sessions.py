"""Session grants an operator can see and take back (docs/approvals.md#sessions).

``GET /v1/sessions`` lists each session of the caller's profiles that holds
grants or yolo; ``POST /v1/sessions/{profile}/{session}/revoke`` takes back one
grant, or every grant and the yolo switch. Nothing waiting is cancelled here
(that is ``.../reset``). In cluster mode both read and write the shared table
in Redis, off the event loop; a Redis that cannot be written answers 503 and
nothing looks revoked that is not.
"""

from __future__ import annotations

from fastapi import APIRouter, HTTPException, Query

from multiplex.cluster import ClusterUnavailable
from multiplex.gateway._gateway import Gateway
from multiplex.gateway.api._models import RevokeIn, RevokeOut, SessionOut
from multiplex.gateway.http._auth import Caller
from multiplex.gateway.http._http import ERRORS, GatewayDep, no_profile

__all__ = ["router"]

router = APIRouter()


def _rows(gw: Gateway, profile: str) -> list[dict[str, object]]:
    held = gw.sup.session_grants(profile)
    return [
        {"profile": profile, "session_id": name, "grants": list(s.grants.texts()), "yolo": s.yolo}
        for name, s in sorted(held.items())
    ]


@router.get("/v1/sessions", response_model=list[SessionOut], responses=ERRORS)
async def list_sessions(
    caller: Caller, gw: GatewayDep, profile: str | None = Query(None)
) -> list[dict[str, object]]:
    """Each session holding grants or yolo, of one profile or of every profile the caller sees."""
    if profile is not None and (not caller.sees(profile) or profile not in gw.sup.profiles):
        raise no_profile(caller, profile)
    names = [profile] if profile else [n for n in gw.sup.profiles if caller.sees(n)]
    rows: list[dict[str, object]] = []
    for name in names:
        rows += await gw.off_loop(_rows, gw, name)
    return rows


@router.post("/v1/sessions/{profile}/{session}/revoke", response_model=RevokeOut, responses=ERRORS)
async def revoke_session_grant(
    profile: str, session: str, body: RevokeIn, caller: Caller, gw: GatewayDep
) -> dict[str, bool]:
    """Take back one session grant (``rule``), or all of them and yolo (no ``rule``)."""
    if not caller.sees(profile) or profile not in gw.sup.profiles:
        raise no_profile(caller, profile)
    try:
        revoked = await gw.off_loop(gw.sup.revoke_grant, profile, session, body.rule)
    except ClusterUnavailable as exc:
        raise HTTPException(503, f"the grant could not be revoked: {exc}") from None
    return {"revoked": revoked}

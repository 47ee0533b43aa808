"""Small pieces every route module shares: the gateway dependency and 404s that reveal nothing."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Annotated, Any

from fastapi import Depends, HTTPException, Request
from fastapi.responses import Response, StreamingResponse

from multiplex.gateway._auth import Principal
from multiplex.gateway._gateway import Gateway
from multiplex.gateway._json import dumps

__all__ = [
    "ERRORS",
    "SELF_APPROVE_REFUSED",
    "GatewayDep",
    "gateway_of",
    "json_response",
    "no_profile",
    "not_found",
    "sse_response",
]

ERRORS: dict[int | str, dict[str, Any]] = {
    401: {"description": "Missing or invalid bearer token."},
    404: {"description": "Unknown, or not visible to this token (never 403)."},
}


async def gateway_of(request: Request) -> Gateway:
    gateway = request.app.state.gateway
    assert isinstance(gateway, Gateway)
    return gateway


GatewayDep = Annotated[Gateway, Depends(gateway_of)]


def json_response(data: Any, status_code: int = 200) -> Response:
    """``data`` encoded once by orjson, sent as is.

    A returned ``Response`` skips FastAPI's re-validation of the document
    against the route's ``response_model`` (which stays the documented
    schema): the hot routes build their documents from typed values already.
    """
    return Response(dumps(data), status_code=status_code, media_type="application/json")


SELF_APPROVE_REFUSED = (
    "approvals.self_approve is false for this profile: the admin token or the terminal must answer"
)


def not_found(detail: str) -> HTTPException:
    return HTTPException(status_code=404, detail=" ".join(detail.split()))


def no_profile(caller: Principal, name: str, real: str | None = None) -> HTTPException:
    """404 for a profile; a profile token gets the same words whether it exists or not."""
    if caller.admin and real:
        return not_found(real)
    return not_found(f"no profile named {name!r} is served")


def sse_response(frames: AsyncIterator[bytes]) -> StreamingResponse:
    return StreamingResponse(
        frames,
        media_type="text/event-stream",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )
